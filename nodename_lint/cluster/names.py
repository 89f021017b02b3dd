"""Which existing node a mistyped node name most likely meant ("did you mean kind-worker?")."""

from __future__ import annotations

from collections.abc import Iterable

MAX_SUGGESTIONS = 3


def _normalized(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, giving up (limit + 1) once it must exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    # A common start and end never change the distance; node names share long ones (node-01234).
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a, b = a[start : len(a) - end], b[start : len(b) - end]
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


_SEPARATORS = ".-"


def _differ_by_a_segment(a: str, b: str) -> bool:
    """One name is the other plus whole dot- or dash-separated parts at either end.

    `ip-10-0-0-1` and `ip-10-0-0-1.ec2.internal`, `worker2` and `kind-worker2`; but not
    `kind-worker` and `kind-worker3`, which is a different node, not a shortened name.
    """
    short, long = sorted((a, b), key=len)
    if len(short) < 4 or short == long:
        return False
    if long.startswith(short) and long[len(short)] in _SEPARATORS:
        return True
    return long.endswith(short) and long[-len(short) - 1] in _SEPARATORS


def closest_node_names(name: str, known: Iterable[str]) -> list[str]:
    """The existing names `name` most likely meant, best first; one name when it clearly is the one.

    Tried in order: the same name in another case; the same letters and digits without the
    separators (`kind-worker-2` for `kind-worker2`); a name that differs by whole dot- or
    dash-separated parts (a missing domain or cluster prefix: `worker2` for `kind-worker2`); a few
    typos (edit distance). Returns [] when nothing is close.
    """
    known = sorted(set(known))
    lowered = name.lower()
    same_case = [node for node in known if node.lower() == lowered]
    if same_case:
        return same_case[:1]
    normalized = _normalized(name)
    same_letters = [node for node in known if _normalized(node) == normalized]
    if same_letters:
        return same_letters[:MAX_SUGGESTIONS]
    limit = max(1, min(3, len(lowered) // 4))
    scored: list[tuple[int, str]] = []
    for node in known:
        if _differ_by_a_segment(lowered, node.lower()):
            scored.append((0, node))
            continue
        distance = _distance(lowered, node.lower(), limit)
        if distance <= limit:
            scored.append((distance, node))
    if not scored:
        return []
    best = min(score for score, _ in scored)
    closest = [node for score, node in scored if score == best]
    if best == 0 and len(closest) > 1:  # several names contain it: prefer the nearest in length
        nearest = min(abs(len(node) - len(name)) for node in closest)
        closest = [node for node in closest if abs(len(node) - len(name)) == nearest]
    return closest[:MAX_SUGGESTIONS]
