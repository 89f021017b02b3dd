"""Which existing node a mistyped node name most likely meant ("did you mean kind-worker?")."""

from __future__ import annotations

from typing import Iterable

MAX_SUGGESTIONS = 3


def _normalized(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, giving up (limit + 1) once it must exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def closest_node_names(name: str, known: Iterable[str]) -> list[str]:
    """The existing names `name` most likely meant, best first; one name when it clearly is the one.

    Tried in order: the same name in another case; the same letters and digits without the
    separators (`kind-worker-2` for `kind-worker2`); a name that contains the other one (a missing
    prefix or suffix: `worker2` for `kind-worker2`); a few typos (edit distance). Returns [] when
    nothing is close.
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
        other = _normalized(node)
        if len(normalized) >= 4 and len(other) >= 4 and (normalized in other or other in normalized):
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
