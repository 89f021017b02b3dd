"""What a fixer asks for: small edits addressed by paths inside one object.

A rule's fixer yields these; it never touches text. The runner turns them into minimal text
splices (fix.splice) and checks the result against `apply_to_data`, the same edits applied to the
object's plain values, so a splice that would change anything else is never written.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..model import Path


@dataclass(frozen=True, slots=True)
class SetValue:
    """Set the value at `path`, creating missing mappings on the way (new keys go at the end)."""

    path: Path
    value: Any


@dataclass(frozen=True, slots=True)
class ReplaceEntry:
    """Put `key: value` where the key at `path` was; a comment on that key's line stays."""

    path: Path
    key: str
    value: Any


@dataclass(frozen=True, slots=True)
class Delete:
    """Remove the key or list item at `path`; a mapping left empty is removed from its parent too."""

    path: Path


@dataclass(frozen=True, slots=True)
class Append:
    """Add `item` at the end of the list at `path`."""

    path: Path
    item: Any


@dataclass(frozen=True, slots=True)
class Unfixable:
    """The fixer looked and will change nothing; `reason` tells the user why (and what to do)."""

    reason: str


Edit = SetValue | ReplaceEntry | Delete | Append
FixStep = SetValue | ReplaceEntry | Delete | Append | Unfixable


def describe(edit: Edit) -> str:
    """An edit as a person says it: "set spec.nodeName to kind-worker" (quick fix titles)."""
    from ..podspec import dotted
    from .render import flow

    where = dotted(edit.path)
    if isinstance(edit, SetValue):
        return f"set {where} to {flow(edit.value)}"
    if isinstance(edit, ReplaceEntry):
        return f"replace {where} with {dotted((*edit.path[:-1], edit.key))}: {flow(edit.value)}"
    if isinstance(edit, Append):
        return f"add {flow(edit.item)} to {where}"
    return f"remove {where}"


def apply_to_data(data: Any, edits: list[Edit], prefix: Path = ()) -> Any:
    """The plain value of a document after `edits` (paths relative to the object at `prefix`)."""
    result = copy.deepcopy(data)
    for edit in edits:
        path = (*prefix, *edit.path)
        if isinstance(edit, SetValue):
            parent = result
            for step in path[:-1]:
                if isinstance(step, str) and parent.get(step) is None:
                    parent[step] = {}
                parent = parent[step]
            parent[path[-1]] = copy.deepcopy(edit.value)
        elif isinstance(edit, Append):
            _walk(result, path).append(copy.deepcopy(edit.item))
        elif isinstance(edit, ReplaceEntry):
            parent = _walk(result, path[:-1])
            del parent[path[-1]]
            parent[edit.key] = copy.deepcopy(edit.value)
        else:
            _delete(result, path, len(prefix))
    return result


def _walk(data: Any, path: Path) -> Any:
    for step in path:
        data = data[step]
    return data


def _delete(data: Any, path: Path, keep: int) -> None:
    parent = _walk(data, path[:-1])
    del parent[path[-1]]
    if isinstance(parent, dict) and not parent and len(path) - 1 > keep:
        _delete(data, path[:-1], keep)
