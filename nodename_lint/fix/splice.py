"""Turn edits into minimal text splices at the positions libyaml reports.

Only the characters of the keys and values an edit names are replaced; every other byte of the
document (comments, quoting, key order, indentation, line endings) stays as it was. New YAML is
written in the document's own layout (its indentation step, indented or indentless lists, block
or flow/JSON style) by fix.render. Layouts this module cannot edit safely raise SpliceError, and
the runner leaves that object unchanged.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, cast

from yaml import MappingNode, Node, ScalarNode, SequenceNode
from yaml.nodes import CollectionNode

from ..model import Path
from ..podspec import dotted
from ..yamlnodes import key_text, resolve_plain
from . import render
from .edits import Append, Delete, Edit, ReplaceEntry, SetValue


class SpliceError(Exception):
    """An edit the layout of this document does not allow without touching other text."""


@dataclass(frozen=True, slots=True)
class Splice:
    """Replace text[start:end] with `text`."""

    start: int
    end: int
    text: str


def apply_splices(text: str, splices: list[Splice]) -> str:
    """The text with non-overlapping splices applied (insertions at one point keep their order)."""
    ordered = sorted(splices, key=lambda s: (s.start, s.end))
    for before, after in itertools.pairwise(ordered):
        if after.start < before.end:
            raise SpliceError("two edits touch the same text")
    parts, position = [], 0
    for splice in ordered:
        parts += [text[position : splice.start], splice.text]
        position = splice.end
    parts.append(text[position:])
    return "".join(parts)


def detect_layout(text: str, root: Node | None) -> render.Layout:
    """How this document indents: the first nested block mapping and block list decide."""
    mapping_step = sequence_offset = None
    sequence_item = 2
    stack = [root] if isinstance(root, MappingNode) else []
    while stack and (mapping_step is None or sequence_offset is None):
        node = stack.pop(0)
        for key, value in node.value if isinstance(node, MappingNode) else ():
            if node.flow_style or value.start_mark.index < key.end_mark.index:
                continue  # flow style, or an alias pointing back to its anchor
            if (
                isinstance(value, MappingNode)
                and not value.flow_style
                and mapping_step is None
                and value.start_mark.line > key.start_mark.line
            ):
                mapping_step = value.start_mark.column - key.start_mark.column
            if isinstance(value, SequenceNode) and not value.flow_style and sequence_offset is None:
                sequence_offset = value.start_mark.column - key.start_mark.column
                if value.value and value.value[0].start_mark.line == value.start_mark.line:
                    sequence_item = max(2, value.value[0].start_mark.column - value.start_mark.column)
            stack.append(value)
        if isinstance(node, SequenceNode):
            stack.extend(node.value)
    step = mapping_step if mapping_step and mapping_step > 0 else 2
    offset = sequence_offset if sequence_offset is not None and sequence_offset >= 0 else step
    newline = "\r\n" if "\r\n" in text else "\n"
    json_keys = isinstance(root, MappingNode) and bool(root.flow_style) and _double_quoted_keys(root)
    return render.Layout(
        newline=newline, mapping=step, sequence_offset=offset, sequence_item=sequence_item, json=json_keys
    )


def _double_quoted_keys(mapping: MappingNode) -> bool:
    return bool(mapping.value) and all(isinstance(k, ScalarNode) and k.style == '"' for k, _ in mapping.value)


class Planner:
    """Plans the splices for the edits of one object inside one document's text."""

    def __init__(self, text: str, layout: render.Layout) -> None:
        self.text = text
        self.layout = layout

    def plan(self, obj_node: MappingNode, edits: list[Edit]) -> list[Splice]:
        splices: list[Splice] = []
        for edit in edits:
            if isinstance(edit, SetValue):
                splices.append(self._set(obj_node, edit))
            elif isinstance(edit, Append):
                splices.append(self._append(_node_at(obj_node, edit.path), edit.item))
            elif isinstance(edit, ReplaceEntry):
                splices += self._replace_key(obj_node, edit)
        splices += self._deletes(obj_node, [edit.path for edit in edits if isinstance(edit, Delete)])
        return splices

    # --- setting a value ----------------------------------------------------------------------
    def _set(self, obj_node: MappingNode, edit: SetValue) -> Splice:
        node: Node = obj_node
        for depth, step in enumerate(edit.path):
            if isinstance(step, int) and depth + 1 < len(edit.path):
                node = _node_at(node, (step,))
                continue
            if not isinstance(node, MappingNode) or not isinstance(step, str):
                raise SpliceError(f"cannot set {_dotted(edit.path)}: {_dotted(edit.path[:depth])} is not a mapping")
            found = _entry(node, step)
            rest = edit.path[depth + 1 :]
            if found is None:
                return self._insert_entry(node, step, _nest(rest, edit.value))
            index, value = found, node.value[found][1]
            if not rest:
                if isinstance(value, ScalarNode) and not isinstance(edit.value, (dict, list)):
                    return self._replace_scalar(value, edit.value)
                return self._replace_entry(node, index, _nest(rest, edit.value))
            if isinstance(value, ScalarNode) and not value.style and resolve_plain(value.value) is None:
                return self._replace_entry(node, index, _nest(rest, edit.value))  # `nodeSelector:` with no value
            node = value
        raise SpliceError("empty path")

    def _replace_scalar(self, node: ScalarNode, value: Any) -> Splice:
        if node.style in ("|", ">"):
            raise SpliceError("the value is a block scalar")
        return Splice(node.start_mark.index, node.end_mark.index, render.scalar(value, node.style))

    def _replace_entry(self, mapping: MappingNode, index: int, value: Any) -> Splice:
        key, old = mapping.value[index]
        key_source = self.text[key.start_mark.index : key.end_mark.index]
        if mapping.flow_style:
            entry = f"{key_source}: {render.flow(value, self.layout)}"
            return Splice(key.start_mark.index, _content_end(key, old), entry)
        lines = render.block_entry(key_source, value, self.layout, key.start_mark.column)
        return Splice(key.start_mark.index, self._line_end(_content_end(key, old)), lines[key.start_mark.column :])

    def _replace_key(self, obj_node: MappingNode, edit: ReplaceEntry) -> list[Splice]:
        mapping, name = _node_at(obj_node, edit.path[:-1]), edit.path[-1]
        index = _entry(mapping, name) if isinstance(mapping, MappingNode) and isinstance(name, str) else None
        if index is None or not isinstance(mapping, MappingNode):
            raise SpliceError(f"{_dotted(edit.path)} is not written in this object")
        key, value = mapping.value[index]
        end = _content_end(key, value)
        if mapping.flow_style:
            entry = f"{render.key(edit.key, self.layout)}: {render.flow(edit.value, self.layout)}"
            return [Splice(key.start_mark.index, end, entry)]
        column = key.start_mark.column
        first, _, rest = render.block_entry(
            render.key(edit.key, self.layout), edit.value, self.layout, column
        ).partition(self.layout.newline)
        line_end = self._line_end(end)  # the first line keeps what followed the old value (a comment)
        if not self.text[:line_end].endswith("\n"):
            rest = self.layout.newline + rest if rest else rest
        return [Splice(key.start_mark.index, end, first[column:]), Splice(line_end, line_end, rest)]

    def _insert_entry(self, mapping: MappingNode, key: str, value: Any) -> Splice:
        if mapping.flow_style:
            return self._insert_flow_entry(mapping, key, value)
        if not mapping.value:
            raise SpliceError("an empty block mapping")
        column = mapping.value[0][0].start_mark.column
        text = render.block_entry(render.key(key, self.layout), value, self.layout, column)
        last_key, last_value = mapping.value[-1]
        position = self._line_end(_content_end(last_key, last_value))
        if not self.text[:position].endswith("\n"):
            text = self.layout.newline + text
        return Splice(position, position, text)

    def _insert_flow_entry(self, mapping: MappingNode, key: str, value: Any) -> Splice:
        entry = f"{render.key(key, self.layout)}: {render.flow(value, self.layout)}"
        if not mapping.value:
            opening = mapping.start_mark.index + 1
            return Splice(opening, opening, entry)
        return self._after_flow_items([pair[0] for pair in mapping.value], _content_end(*mapping.value[-1]), entry)

    def _after_flow_items(self, starts: list[Node], end: int, entry: str) -> Splice:
        """Insert `, entry` after the last item; on its own line when the items are one per line."""
        if len(starts) > 1 and starts[-1].start_mark.line > starts[-2].start_mark.line:
            separator = "," + self.layout.newline + " " * starts[-1].start_mark.column
        else:
            separator = ", "
        return Splice(end, end, separator + entry)

    # --- appending to a list ------------------------------------------------------------------
    def _append(self, sequence: Node, item: Any) -> Splice:
        if not isinstance(sequence, SequenceNode):
            raise SpliceError("not a list")
        if sequence.flow_style:
            if not sequence.value:
                opening = sequence.start_mark.index + 1
                return Splice(opening, opening, render.flow(item, self.layout))
            last = sequence.value[-1]
            return self._after_flow_items(sequence.value, _content_end(last, last), render.flow(item, self.layout))
        last = sequence.value[-1]
        position = self._line_end(_content_end(last, last))
        text = render.block_item(item, self.layout, sequence.start_mark.column)
        if not self.text[:position].endswith("\n"):
            text = self.layout.newline + text
        return Splice(position, position, text)

    # --- deleting -----------------------------------------------------------------------------
    def _deletes(self, obj_node: MappingNode, paths: list[Path]) -> list[Splice]:
        """Delete keys, grouped by mapping; a mapping that loses every key goes from its parent."""
        groups: dict[Path, set[int]] = {}
        for path in paths:
            parent = _node_at(obj_node, path[:-1])
            if not isinstance(parent, MappingNode) or not isinstance(path[-1], str):
                raise SpliceError(f"cannot delete {_dotted(path)}: only mapping keys can be deleted")
            index = _entry(parent, path[-1])
            if index is None:
                raise SpliceError(f"{_dotted(path)} is not written in this object (a merge key?)")
            groups.setdefault(path[:-1], set()).add(index)
        for parent_path in sorted(groups, key=len, reverse=True):
            parent = _node_at(obj_node, parent_path)
            if parent_path and len(groups[parent_path]) == len(parent.value):
                grandparent = _node_at(obj_node, parent_path[:-1])
                entry = (
                    _entry(grandparent, parent_path[-1])
                    if isinstance(grandparent, MappingNode) and isinstance(parent_path[-1], str)
                    else None
                )
                if entry is not None:
                    groups.setdefault(parent_path[:-1], set()).add(entry)
                    del groups[parent_path]
        splices = []
        for parent_path, indexes in groups.items():
            mapping = cast(MappingNode, _node_at(obj_node, parent_path))  # every group is a mapping, checked above
            for first, last in _runs(sorted(indexes)):
                splices.append(self._delete_run(mapping, first, last))
        return splices

    def _delete_run(self, mapping: MappingNode, first: int, last: int) -> Splice:
        pairs = mapping.value
        key = pairs[first][0]
        following = pairs[last + 1][0].start_mark.index if last + 1 < len(pairs) else None
        if mapping.flow_style:
            if following is not None:
                return Splice(key.start_mark.index, following, "")
            if first > 0:
                return Splice(_content_end(*pairs[first - 1]), _content_end(*pairs[last]), "")
            raise SpliceError("cannot empty a flow mapping")
        if self._starts_line(key.start_mark.index):
            return Splice(self._line_start(key.start_mark.index), self._line_end(_content_end(*pairs[last])), "")
        if following is not None:
            return Splice(key.start_mark.index, following, "")
        raise SpliceError("cannot empty a mapping that starts a list item")

    # --- positions ----------------------------------------------------------------------------
    def _line_start(self, position: int) -> int:
        return self.text.rfind("\n", 0, position) + 1

    def _line_end(self, position: int) -> int:
        """Just past the line break of the line holding the character before `position`."""
        if position > 0 and self.text[position - 1] == "\n":
            return position
        newline = self.text.find("\n", position)
        return len(self.text) if newline < 0 else newline + 1

    def _starts_line(self, position: int) -> bool:
        return self.text[self._line_start(position) : position].strip(" \t") == ""


def _entry(mapping: MappingNode, key: str) -> int | None:
    """Index of the explicit entry for `key` (the last one when duplicated), ignoring merge keys."""
    found = None
    for index, (key_node, _) in enumerate(mapping.value):
        if key_text(key_node) == key:
            found = index
    return found


def _node_at(node: Node, path: Path) -> Node:
    for step in path:
        if isinstance(step, int) and isinstance(node, SequenceNode) and 0 <= step < len(node.value):
            node = node.value[step]
        elif isinstance(step, str) and isinstance(node, MappingNode) and (index := _entry(node, step)) is not None:
            node = node.value[index][1]
        else:
            raise SpliceError(f"{_dotted(path)} is not written in this object")
    return node


def _content_end(key: Node, value: Node) -> int:
    """Where the text of a key/value pair (or a list item, key is value) ends, trailing lines excluded."""
    if value.start_mark.index < key.end_mark.index and value is not key:
        raise SpliceError("the value is an alias of an anchor elsewhere")
    if isinstance(value, ScalarNode) or (isinstance(value, CollectionNode) and value.flow_style):
        return max(key.end_mark.index, value.end_mark.index)
    if not value.value:
        return value.end_mark.index
    if isinstance(value, MappingNode):
        return _content_end(*value.value[-1])
    last = value.value[-1]
    return _content_end(last, last)


def _runs(indexes: list[int]) -> list[tuple[int, int]]:
    """Consecutive stretches of sorted indexes: [1, 2, 4] -> [(1, 2), (4, 4)]."""
    runs: list[tuple[int, int]] = []
    for index in indexes:
        if runs and runs[-1][1] == index - 1:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    return runs


def _nest(path: Path, value: Any) -> Any:
    for step in reversed(path):
        value = {step: value}
    return value


def _dotted(path: Path) -> str:
    return dotted(path) or "the object"
