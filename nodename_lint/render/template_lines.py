"""Find the line of a template that wrote a key of the rendered object.

A Helm template is text, not YAML: `{{ ... }}` actions may stand anywhere, so it cannot be parsed.
But the keys a template writes literally (`nodeName: {{ .Values.node }}` inside an `{{- if }}`
block) stand on their own lines with the indentation they render with. This module reads the
template as an outline of `key:` and `- item` lines by indentation, ignoring action-only lines,
and follows the rendered object's key path down that outline. Where the path leaves the outline
(a key written by `toYaml`, `include` or a `range` over a dynamic key), the deepest key matched
so far is the answer, and the caller says the location is approximate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import Path

# `key:` (plain or quoted), optionally after `- ` list markers; the key holds no template action.
# A plain key runs to the first `#`, `{`, `}` or `:` and is taken whole at once (`(?=(...))(?P=...)`
# is an atomic group): read lazily, each character tried its end and scanned the spaces after it
# for the colon, n squared steps on a run of spaces. The spaces before the colon are in the group
# and stripped with it.
_KEY_LINE = re.compile(
    r"""^(?P<indent>[ ]*)(?P<dashes>(?:-[ ]+)*)"""
    r"""(?P<key>"[^"{}]*"|'[^'{}]*'"""
    r"""|[^\s#"'{}:\-?](?=(?P<plain>[^#{}:]*))(?P=plain)|-[^\s#{}:](?=(?P<dashed>[^#{}:]*))(?P=dashed))"""
    r"""[ ]*:(?:[ ]|$)"""
)
_ITEM_LINE = re.compile(r"^(?P<indent>[ ]*)-(?:[ ]|$)")
_DOCUMENT_START = re.compile(r"^---(?:[ \t].*)?$")


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One structural line of a template: a key (with its column) or a bare list item."""

    line: int  # 1-based line in the template file
    indent: int  # column of the key or of the item's dash, 0-based
    key: str | None  # None for a list item without a key on its line
    column: int  # 1-based column of the key (or of the dash)
    items: tuple[int, ...] = ()  # columns of the `- ` markers before the key on this line


@dataclass(frozen=True, slots=True)
class TemplateDocument:
    """The outline of one `---`-separated part of a template."""

    entries: tuple[OutlineEntry, ...]
    kind: str | None  # the literal `kind:` value, when the template writes one


def outline(text: str) -> list[TemplateDocument]:
    """The template's documents, each as an outline of its structural lines."""
    documents: list[TemplateDocument] = []
    entries: list[OutlineEntry] = []
    kind: str | None = None
    comment_block = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if comment_block:
            comment_block = "*/}}" not in line and "*/ -}}" not in line
            continue
        if "{{/*" in line or "{{- /*" in line:
            comment_block = "*/}}" not in line and "*/ -}}" not in line
            continue
        if _DOCUMENT_START.match(line):
            if entries:
                documents.append(TemplateDocument(tuple(entries), kind))
            entries, kind = [], None
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _is_action_only(stripped):
            continue
        match = _KEY_LINE.match(line)
        if match:
            indent = len(match.group("indent"))
            dashes = match.group("dashes")
            items = tuple(indent + offset for offset, char in enumerate(dashes) if char == "-")
            key_column = indent + len(dashes)
            key = match.group("key").strip().strip("\"'")
            entries.append(OutlineEntry(number, key_column, key, key_column + 1, items))
            if key == "kind" and key_column == 0 and kind is None:
                value = line[match.end() :].split("#", 1)[0].strip().strip("\"'")
                kind = value if value and "{{" not in value else None
            continue
        item = _ITEM_LINE.match(line)
        if item:
            indent = len(item.group("indent"))
            entries.append(OutlineEntry(number, indent + 2, None, indent + 1, (indent,)))
    if entries:
        documents.append(TemplateDocument(tuple(entries), kind))
    return documents


def _is_action_only(stripped: str) -> bool:
    """Whether a line (stripped) holds only template actions: `{{ if }}`, `{{- end }} {{ x }}`.

    `{{` up to the last `}}` is one action or several: `\\s*(?:\\{\\{.*?\\}\\}\\s*)+` says no more, and
    tried every way to cut the line into actions (exponential on 205 characters).
    """
    return stripped.startswith("{{") and stripped.endswith("}}")


def pick_document(documents: list[TemplateDocument], index: int, count: int, kind: str) -> TemplateDocument | None:
    """The template part that rendered document `index` of `count`: by position when the counts
    agree, else the only part that writes this kind literally."""
    if not documents:
        return None
    if len(documents) == count and documents[index].kind in (None, kind):
        return documents[index]
    with_kind = [document for document in documents if document.kind == kind]
    if len(with_kind) == 1:
        return with_kind[0]
    return documents[0] if len(documents) == 1 else None


def find_line(document: TemplateDocument, path: Path) -> tuple[int, int, bool]:
    """(line, column, exact) of the template line for `path`; exact is False when only an
    enclosing key (or the document's first line) was found."""
    entries = document.entries
    start, end = 0, len(entries)
    parent_indent = -1
    found: OutlineEntry | None = None
    for step in path:
        # a key's list may start at the key's own column (`containers:` then `- name: x`)
        after_key = isinstance(step, int) and found is not None and found.key is not None
        floor = parent_indent - 1 if after_key else parent_indent
        match = _child(entries, start, end, floor, step)
        if match is None:
            first = found or entries[0]
            return first.line, first.column, False
        position, parent_indent = match
        found = entries[position]
        start = position + 1 if isinstance(step, str) else position
        end = _block_end(entries, position, parent_indent, isinstance(step, int))
    if found is None:
        return entries[0].line, entries[0].column, not path
    return found.line, found.column, True


def _child(
    entries: tuple[OutlineEntry, ...], start: int, end: int, parent_indent: int, step: str | int
) -> tuple[int, int] | None:
    """(entry index, indent of the child) of the direct child `step` within entries[start:end]."""
    if isinstance(step, str):
        candidates = [i for i in range(start, end) if entries[i].key == step and entries[i].indent > parent_indent]
        if not candidates:
            return None
        shallowest = min(entries[i].indent for i in candidates)
        position = next(i for i in candidates if entries[i].indent == shallowest)
        return position, entries[position].indent
    # a list item: the step-th `- ` marker at the shallowest marker column in the block
    markers = [(i, column) for i in range(start, end) for column in entries[i].items if column > parent_indent]
    if not markers:
        return None
    shallowest = min(column for _, column in markers)
    at_level = [i for i, column in markers if column == shallowest]
    if step >= len(at_level):
        return None  # more items than the template writes literally: a range or toYaml made them
    return at_level[step], shallowest


def _block_end(entries: tuple[OutlineEntry, ...], position: int, indent: int, item: bool) -> int:
    """End (exclusive) of the block of the key or list item at `position`."""
    for i in range(position + 1, len(entries)):
        entry = entries[i]
        if item:
            if indent in entry.items or min((*entry.items, entry.indent)) < indent:
                return i
        elif min((*entry.items, entry.indent)) < indent or (not entry.items and entry.indent <= indent):
            return i  # a sibling or a shallower key; `- ` at the key's own column is its compact list
    return len(entries)
