"""Where findings and the cursor are in an editor's text, in 0-based lines and code-point columns.

The engine reports a finding at the start of a key (or list item); an editor underlines a range.
The range runs to the end of the value when the value is a scalar (or flow collection) on the
key's line (`nodeName: kind-wroker`), else to the end of the key (`tolerations:`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from yaml import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

from ..documents import Document
from ..model import Path

Point = tuple[int, int]  # (line, column), both 0-based, column in code points


@dataclass(frozen=True, slots=True)
class Span:
    start: Point
    end: Point


@dataclass
class NodeEnds:
    """Where the underline of a finding ends, found from the point down: a lint of a big file has a
    finding in most of its thousands of documents, and walking them all (or reading every line
    again per finding) made the language server quadratic in the document (issue 23).

    The document holding a point is found by bisection on the documents' first lines, the node
    starting at it by bisection on the start of each mapping's keys and each sequence's items,
    depth by depth. An alias is composed as the node it names, at that node's position, so in a
    collection holding one the starts may be out of order: a point not found there falls back to
    the walk of node_ends, once per document.
    """

    documents: list[Document]
    _first_lines: list[int] = field(init=False)
    _walked: dict[int, dict[Point, Point]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.documents = [document for document in self.documents if document.root is not None]
        self._first_lines = [document.line_offset for document in self.documents]

    def get(self, point: Point) -> Point | None:
        """The end of the key or list item starting at POINT, as node_ends gives it; None when none starts there."""
        index = bisect_right(self._first_lines, point[0]) - 1  # documents start on distinct lines, in order
        if index < 0:
            return None
        document = self.documents[index]
        assert document.root is not None
        end = _end_at(document.root, point, document.line_offset)
        if end is None and "*" in document.text:  # maybe an alias out of order: walk this document once
            walked = self._walked.get(id(document))
            if walked is None:
                walked = self._walked[id(document)] = node_ends([document])
            end = walked.get(point)
        return end


def _end_at(node: Node, point: Point, offset: int) -> Point | None:
    """_collect's entry for POINT within NODE, found by descending to it (see NodeEnds)."""
    while True:
        if isinstance(node, MappingNode):
            pairs = node.value
            index = bisect_right(pairs, point, key=lambda pair: _point(pair[0].start_mark, offset)) - 1
            if index < 0:
                return None
            key, value = pairs[index]
            if _point(key.start_mark, offset) == point:
                return _key_end(key, value, offset)
            if point > _point(value.end_mark, offset):
                return None
            node = value
        elif isinstance(node, SequenceNode):
            items = node.value
            index = bisect_right(items, point, key=lambda item: _point(item.start_mark, offset)) - 1
            if index < 0:
                return None
            item = items[index]
            if point > _point(item.end_mark, offset):
                return None
            inner = _end_at(item, point, offset)  # a mapping item's first key starts where the item does
            if inner is None and _point(item.start_mark, offset) == point:
                return _point(item.end_mark, offset)
            return inner
        else:
            return None


def node_ends(documents: list[Document]) -> dict[Point, Point]:
    """Start of every key and list item -> the end of what an editor should underline for it."""
    ends: dict[Point, Point] = {}
    seen: set[int] = set()
    for document in documents:
        if document.root is not None:
            _collect(document.root, document.line_offset, ends, seen)
    return ends


def _point(mark: object, offset: int) -> Point:
    return offset + mark.line, mark.column  # type: ignore[attr-defined]


def _collect(node: Node, offset: int, ends: dict[Point, Point], seen: set[int]) -> None:
    if id(node) in seen:  # an alias: its anchor was walked already
        return
    seen.add(id(node))
    if isinstance(node, MappingNode):
        for key, value in node.value:
            ends.setdefault(_point(key.start_mark, offset), _key_end(key, value, offset))
            _collect(value, offset, ends, seen)
    elif isinstance(node, SequenceNode):
        for item in node.value:
            _collect(item, offset, ends, seen)  # a mapping item's first key starts where the item does
            ends.setdefault(_point(item.start_mark, offset), _point(item.end_mark, offset))


def _key_end(key: Node, value: Node, offset: int) -> Point:
    """The end of the value when it is a scalar or flow collection on the key's line, else of the key."""
    on_key_line = value.end_mark.line == key.start_mark.line
    whole = (isinstance(value, ScalarNode) or (isinstance(value, CollectionNode) and value.flow_style)) and on_key_line
    return _point((value if whole else key).end_mark, offset)


def finding_span(line: int, column: int, ends: NodeEnds, lines: list[str]) -> Span:
    """The range of a finding at 1-based LINE and COLUMN; a position no node starts at (a syntax
    error) gets the word there, or the rest of the line."""
    start = (max(line - 1, 0), max(column - 1, 0))
    end = ends.get(start)
    if end is not None and end > start:
        return Span(start, end)
    text = lines[start[0]].rstrip("\r\n") if start[0] < len(lines) else ""
    column = min(start[1], len(text))
    stop = column
    while stop < len(text) and not text[stop].isspace():
        stop += 1
    if stop == column:
        column, stop = len(text) - len(text.lstrip()), len(text)
    return Span((start[0], column), (start[0], stop))


def path_at(node: Node, point: Point, offset: int) -> Path:
    """The keys and indexes leading to the deepest key or item of NODE whose text holds POINT."""
    path: list[str | int] = []
    while True:
        step = _child_at(node, point, offset)
        if step is None:
            return tuple(path)
        path.append(step[0])
        node = step[1]


def _child_at(node: Node, point: Point, offset: int) -> tuple[str | int, Node] | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and _within(key.start_mark, value.end_mark, point, offset):
                return key.value, value
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            if _within(item.start_mark, item.end_mark, point, offset):
                return index, item
    return None


def _within(start: object, end: object, point: Point, offset: int) -> bool:
    return _point(start, offset) <= point <= _point(end, offset)
