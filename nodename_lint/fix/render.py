"""New YAML text for fixes, written in the layout of the document it goes into.

Nested block values are emitted by ruamel.yaml's round-trip dumper with the document's own
indentation (its mapping step and whether lists are indented or indentless); scalars are quoted
whenever kubectl (go-yaml) would read the plain form as something other than the same string,
e.g. a node named `yes` or `1e3`. ruamel.yaml is imported only here, so only --fix/--diff load it.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from typing import Any

from ..yamlnodes import resolve_plain

_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")


@dataclass(frozen=True, slots=True)
class Layout:
    """How a document is written: line break, indentation step, list offset, JSON or YAML."""

    newline: str = "\n"
    mapping: int = 2  # columns between a key and the keys of its nested mapping
    sequence_offset: int = 2  # columns between a key and the `-` of its list (0: indentless)
    sequence_item: int = 2  # columns between a `-` and the item after it
    json: bool = False  # a JSON document: new keys and values are JSON too


def is_plain_safe(value: str) -> bool:
    """A string that can be written unquoted and still reads back as the same string."""
    return _PLAIN_SAFE.fullmatch(value) is not None and resolve_plain(value) == value


def scalar(value: Any, style: str | None = None) -> str:
    """One scalar as YAML text; strings keep the quoting `style` of the value they replace."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if not isinstance(value, str):
        return json.dumps(value)
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == '"' or not is_plain_safe(value):
        return json.dumps(value, ensure_ascii=False)
    return value


def key(name: str, layout: Layout) -> str:
    return json.dumps(name, ensure_ascii=False) if layout.json else scalar(name)


def flow(value: Any, layout: Layout | None = None) -> str:
    """A value in flow style ({a: b}, [x]); JSON when the document is JSON."""
    layout = layout or Layout()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key(k, layout)}: {flow(v, layout)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(item, layout) for item in value) + "]"
    return scalar(value, '"' if layout.json else None)


def block_entry(key_text: str, value: Any, layout: Layout, column: int) -> str:
    """`key: value` as block lines indented to `column`, each ending with the document's line break."""
    if not isinstance(value, (dict, list)) or not value:
        return _indent([f"{key_text}: {flow(value, layout)}"], column, layout)
    lines = _dump({"k": value}, layout)
    return _indent([f"{key_text}:", *lines[1:]], column, layout)


def block_item(item: Any, layout: Layout, column: int) -> str:
    """`- item` as block lines whose dash is at `column`."""
    if not isinstance(item, (dict, list)) or not item:
        return _indent([f"- {flow(item, layout)}"], column, layout)
    lines = _dump([item], layout)
    return _indent([line[layout.sequence_offset :] for line in lines], column, layout)


def _indent(lines: list[str], column: int, layout: Layout) -> str:
    return "".join(" " * column + line + layout.newline for line in lines)


def _dump(value: Any, layout: Layout) -> list[str]:
    from ruamel.yaml import YAML  # startup: ruamel.yaml loads only when a fix writes YAML (tests/test_imports.py)

    dumper = YAML(typ="rt")
    dumper.width = 1 << 16  # never fold a long value onto a second line
    dumper.indent(
        mapping=layout.mapping, sequence=layout.sequence_offset + layout.sequence_item, offset=layout.sequence_offset
    )
    stream = io.StringIO()
    dumper.dump(_quoted(value), stream)
    return stream.getvalue().splitlines()


def _quoted(value: Any) -> Any:
    """Plain data for ruamel with every string kubectl would misread marked as double-quoted."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString  # startup: as in _dump

    if isinstance(value, dict):
        return {_quoted(k): _quoted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_quoted(item) for item in value]
    if isinstance(value, str) and not is_plain_safe(value):
        return DoubleQuotedScalarString(value)
    return value
