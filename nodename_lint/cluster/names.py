"""Which existing node a mistyped node name most likely meant ("did you mean kind-worker?").

The node names are indexed once per cluster (NodeNameIndex), so a run with hundreds of mistyped
names against 5,000 nodes looks each one up in dicts, and runs the edit distance in rapidfuzz's C
code rather than in Python (1.2 million distance calls took 7 s there), over the few names that share
a piece of the typo (see NodeNameIndex._within) rather than over all nodes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Iterator
from itertools import islice

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

MAX_SUGGESTIONS = 3
_SEPARATORS = ".-"
_MIN_SEGMENT_NAME = 4  # `ip` is no evidence that `ip-10-0-0-1` was meant


# every ASCII character that is not a letter or a digit, deleted by bytes.translate
_NOT_ALNUM_ASCII = bytes(code for code in range(128) if not chr(code).isalnum())


def _normalized(name: str) -> str:
    """The name's letters and digits, lowered (an ASCII name's in one C call, five times faster)."""
    lowered = name.lower()
    if lowered.isascii():
        return lowered.encode("ascii").translate(None, _NOT_ALNUM_ASCII).decode("ascii")
    return "".join(ch for ch in lowered if ch.isalnum())


def _segment_cuts(name: str) -> Iterable[str]:
    """`name` without whole dot- or dash-separated parts at its start or at its end."""
    for index, char in enumerate(name):
        if char in _SEPARATORS:
            yield name[:index]
            yield name[index + 1 :]


class NodeNameIndex:
    """The node names of one cluster, indexed for closest_node_names."""

    def __init__(self, known: Iterable[str]) -> None:
        self.names = sorted(set(known))
        self.lowered = [name.lower() for name in self.names]
        self._same_case: dict[str, str] = {}
        self._same_letters: dict[str, list[str]] = {}
        self._positions: dict[str, list[int]] = {}
        for index, (name, lowered) in enumerate(zip(self.names, self.lowered, strict=True)):
            self._same_case.setdefault(lowered, name)
            self._same_letters.setdefault(_normalized(name), []).append(name)
            self._positions.setdefault(lowered, []).append(index)
        # The names that are `worker2` plus whole parts at either end (`kind-worker2`): those that start
        # with `worker2` and a separator, found by bisection in the sorted names, or end with a separator
        # and it, in the sorted reversed names. Indexing every such cut of every name took 0.1 s for
        # 5,000 cloud names of 7 separators each, for the few mistyped names a run looks up.
        self._by_start = sorted((lowered, index) for index, lowered in enumerate(self.lowered))
        self._by_end = sorted((lowered[::-1], index) for index, lowered in enumerate(self.lowered))
        # The lowered names end to end, and where each starts: a piece of a typo is looked for in all at once.
        self._joined = "\n".join(self.lowered)
        self._starts: list[int] = []
        start = 0
        for lowered in self.lowered:
            self._starts.append(start)
            start += len(lowered) + 1

    def closest(self, name: str) -> list[str]:
        """The existing names `name` most likely meant, best first; one name when it clearly is the one.

        Tried in order: the same name in another case; the same letters and digits without the
        separators (`kind-worker-2` for `kind-worker2`); a name that differs by whole dot- or
        dash-separated parts (a missing domain or cluster prefix: `worker2` for `kind-worker2`); a
        few typos (Levenshtein distance up to a quarter of the length, at most 3). Returns [] when
        nothing is close.
        """
        lowered = name.lower()
        if lowered in self._same_case:
            return [self._same_case[lowered]]
        same_letters = self._same_letters.get(_normalized(name))
        if same_letters:
            return same_letters[:MAX_SUGGESTIONS]
        limit = max(1, min(3, len(lowered) // 4))
        scores: dict[int, int] = {}  # name index -> 0 for a segment match, else the edit distance
        if len(lowered) >= _MIN_SEGMENT_NAME:
            for separator in _SEPARATORS:
                for index in _starting_with(self._by_start, lowered + separator):
                    scores[index] = 0
                for index in _starting_with(self._by_end, lowered[::-1] + separator):
                    scores[index] = 0
        for part in _segment_cuts(lowered):
            if len(part) >= _MIN_SEGMENT_NAME:
                for index in self._positions.get(part, ()):
                    scores[index] = 0
        if not scores:  # a segment match (0) is closer than any typo: only the fewest typos count
            for distance in range(1, limit + 1):  # a pass that lets fewer through is much cheaper
                found = self._within(lowered, distance)
                if found:
                    scores = dict.fromkeys(found, distance)
                    break
        if not scores:
            return []
        best = min(scores.values())
        closest = [self.names[index] for index in sorted(scores) if scores[index] == best]
        if best == 0 and len(closest) > 1:  # several names contain it: prefer the nearest in length
            nearest = min(abs(len(node) - len(name)) for node in closest)
            closest = [node for node in closest if abs(len(node) - len(name)) == nearest]
        return closest[:MAX_SUGGESTIONS]

    def _within(self, lowered: str, distance: int) -> list[int]:
        """The indexes of the names at most `distance` edits (Levenshtein) from `lowered`, in order.

        Cut into distance + 1 pieces, `lowered` keeps at least one of them whole in any name that few
        edits away (each edit breaks one piece at most), so only the names holding a piece are weighed:
        a few for most typos, where weighing all 5,000 names of a cluster took 0.4 ms a name. When the
        pieces are too short or too common to narrow the names down, every name is weighed.
        """
        candidates = self._holding_a_piece(lowered, distance + 1)
        if candidates is None:
            found = process.extract(
                lowered, self.lowered, scorer=Levenshtein.distance, score_cutoff=distance, limit=None
            )
            return sorted(index for _, _, index in found)
        return [
            index
            for index in sorted(candidates)
            if Levenshtein.distance(lowered, self.lowered[index], score_cutoff=distance) <= distance
        ]

    def _holding_a_piece(self, lowered: str, pieces: int) -> set[int] | None:
        """The indexes of the names that start with the first of `pieces` equal pieces of `lowered`, end with
        the last, or hold one between (a piece found across two names adds the first, which the edit distance
        then refuses); None when a piece is shorter than 2 or the pieces occur more than max(32, a sixteenth
        of the names) times: then weighing every name is cheaper, and a name repeating a piece (`aaaa...`,
        from a state or a manifest) costs no more.

        The first and last pieces are looked up by bisection: an insertion between two pieces counts
        against the later one (at the end, against the last), so a name whose first piece no edit
        touched starts with it, and one whose last piece none touched ends with it. A search of the
        joined names for them read all 5,000 names of a cluster for each (35 µs), and a typo in a
        cloud name's domain (`.ec3.internal`) has only those two pieces.
        """
        size = len(lowered) // pieces
        if size < 2:
            return None
        most = max(32, len(self.lowered) // 16)
        found: set[int] = set()
        occurrences = 0
        for number in range(pieces):
            piece = lowered[number * size : len(lowered) if number == pieces - 1 else (number + 1) * size]
            if number == 0:
                held = list(islice(_starting_with(self._by_start, piece), most + 1))
            elif number == pieces - 1:
                held = list(islice(_starting_with(self._by_end, piece[::-1]), most + 1))
            else:
                held = []
                position = self._joined.find(piece)
                while position != -1 and occurrences + len(held) <= most:
                    held.append(bisect_right(self._starts, position) - 1)
                    position = self._joined.find(piece, position + 1)
            occurrences += len(held)
            if occurrences > most:
                return None
            found.update(held)
        return found


def _starting_with(ordered: list[tuple[str, int]], prefix: str) -> Iterator[int]:
    """The indexes of the sorted (text, index) pairs whose text starts with `prefix`."""
    position = bisect_left(ordered, (prefix,))
    while position < len(ordered) and ordered[position][0].startswith(prefix):
        yield ordered[position][1]
        position += 1


_last_index: tuple[Collection[str], int, NodeNameIndex] | None = None


def closest_node_names(name: str, known: Collection[str]) -> list[str]:
    """NodeNameIndex(known).closest(name), indexing a cluster's names once for all the names of a run.

    The index of the last `known` collection is kept (with a reference to it, so its identity
    stays unique): a run asks about one cluster's node dict, which never changes during the run.
    """
    global _last_index
    if _last_index is None or _last_index[0] is not known or _last_index[1] != len(known):
        _last_index = (known, len(known), NodeNameIndex(known))
    return _last_index[2].closest(name)
