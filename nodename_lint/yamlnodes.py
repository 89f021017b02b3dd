"""YAML as Kubernetes reads it, straight from libyaml's node graph.

Documents are composed with PyYAML's C loader (the parse floor) and never constructed wholesale:
the linter looks up the few keys it needs on the nodes and converts only those subtrees to plain
values. Plain scalars are resolved the way go-yaml v2 (sigs.k8s.io/yaml, used by kubectl) does,
not the way PyYAML does: `=` is a string, timestamps stay strings, `0o17` is an int.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterator

from yaml import MappingNode, Node, ScalarNode, SequenceNode

MERGE_KEY = "<<"
MAX_EXPANDED_NODES = 1_000_000  # aliases can make a small file expand exponentially


class ConversionError(ValueError):
    """A subtree cannot become a JSON value (alias bomb, unsupported structure)."""

    def __init__(self, message: str, node: Node) -> None:
        super().__init__(message)
        self.node = node


_BOOL_NULL: dict[str, Any] = {
    **{v: True for v in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{v: False for v in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{v: None for v in ("", "~", "null", "Null", "NULL")},
    **{v: math.nan for v in (".nan", ".NaN", ".NAN")},
    **{v: math.inf for v in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{v: -math.inf for v in ("-.inf", "-.Inf", "-.INF")},
}
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_INT = re.compile(
    r"[-+]?(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|0(?:_?[0-7])*|[1-9](?:_?[0-9])*)"
)
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?")


def resolve_plain(value: str) -> Any:
    """Resolve an untagged plain scalar as go-yaml v2 does when decoding into interface{}."""
    if not value:
        return None
    first = value[0]
    if first in "yYnNtTfFoO~.+-" and value in _BOOL_NULL:
        return _BOOL_NULL[value]
    if first in "0123456789+-":
        if _TIMESTAMP.fullmatch(value):
            return value  # go-yaml keeps timestamp-looking values as strings for interface{}
        plain = value.replace("_", "")
        if _GO_INT.fullmatch(value):
            number = int(plain, 0) if not _is_legacy_octal(plain) else int(plain.replace("0", "0o", 1), 0)
            if -(2**63) <= number < 2**64:
                return number
        if _GO_FLOAT.fullmatch(plain):
            number_f = float(plain)
            if not math.isinf(number_f):  # Go's ParseFloat reports overflow as an error
                return number_f
        return value
    if first == "." and _GO_FLOAT.fullmatch(value):
        return float(value)
    return value


def _is_legacy_octal(digits: str) -> bool:
    body = digits.lstrip("+-")
    return len(body) > 1 and body[0] == "0" and body[1].isdigit()


def scalar_value(node: ScalarNode) -> Any:
    """The JSON value of a scalar node: quoted and block scalars are strings, plain ones resolved.

    A plain scalar with a tag of its own (`!foo bar`) is a string, as go-yaml decodes it.
    """
    if not node.style and node.tag.startswith("tag:yaml.org,2002:"):
        return resolve_plain(node.value)
    return node.value


def key_text(node: Node) -> str | None:
    """A mapping key as the string JSON will carry; None for keys that are not scalars."""
    if not isinstance(node, ScalarNode):
        return None
    if node.style:
        return node.value
    value = resolve_plain(node.value)
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return node.value if isinstance(value, float) else str(value)


def mapping_pairs(node: MappingNode) -> Iterator[tuple[Node, Node]]:
    """Key/value node pairs of a mapping with merge keys (`<<`) expanded; explicit keys come first."""
    merged: list[Node] = []
    for key, value in node.value:
        if isinstance(key, ScalarNode) and key.value == MERGE_KEY and not key.style:
            merged.append(value)
        else:
            yield key, value
    for source in merged:
        sources = source.value if isinstance(source, SequenceNode) else [source]
        for item in sources:
            if isinstance(item, MappingNode):
                yield from mapping_pairs(item)


def lookup(node: Node | None, key: str) -> tuple[Node, Node] | None:
    """The (key node, value node) of `key` in a mapping node, the last one when duplicated."""
    if not isinstance(node, MappingNode):
        return None
    found = None
    for key_node, value_node in node.value:
        if isinstance(key_node, ScalarNode) and key_node.value == key:
            found = (key_node, value_node)
    if found is not None:
        return found
    if any(isinstance(k, ScalarNode) and k.value == MERGE_KEY for k, _ in node.value):
        for key_node, value_node in mapping_pairs(node):
            if key_text(key_node) == key:
                found = (key_node, value_node)
    return found


def child(node: Node | None, step: str | int) -> tuple[Node, Node | None] | None:
    """One step down a path: returns (node to point at, child node)."""
    if isinstance(step, int):
        if isinstance(node, SequenceNode) and 0 <= step < len(node.value):
            item = node.value[step]
            return item, item
        return None
    pair = lookup(node, step)
    return pair


def to_python(node: Node | None) -> Any:
    """Convert a node subtree to plain JSON-compatible values, bounding alias expansion."""
    if node is None:
        return None
    budget = [MAX_EXPANDED_NODES]
    return _convert(node, budget, 0)


def _convert(node: Node, budget: list[int], depth: int) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise ConversionError(
            f"document expands to more than {MAX_EXPANDED_NODES:,} nodes through aliases (alias bomb?)", node
        )
    if isinstance(node, ScalarNode):
        return scalar_value(node)
    if depth > 900:
        raise ConversionError("document is nested more than 900 levels deep", node)
    if isinstance(node, SequenceNode):
        return [_convert(item, budget, depth + 1) for item in node.value]
    result: dict[str, Any] = {}
    for key_node, value_node in mapping_pairs(node):
        key = key_text(key_node)
        if key is None:
            raise ConversionError("a mapping key is itself a mapping or a list; JSON has no such keys", key_node)
        if key not in result:  # explicit keys were yielded first and win over merged ones
            result[key] = _convert(value_node, budget, depth + 1)
        elif not _is_merged(node, key_node):
            result[key] = _convert(value_node, budget, depth + 1)  # duplicate explicit key: the last wins
    return result


def _is_merged(parent: MappingNode, key_node: Node) -> bool:
    return not any(k is key_node for k, _ in parent.value)


# Text that can hold a mapping key which is itself a collection: `{{ x }}`, `[a]: b`, `? key`.
_MAYBE_COLLECTION_KEY = re.compile(r"\{[ \t]*[\[{]|,[ \t]*[\[{]|[\]}][ \t]*:(?:[ \t\r\n]|$)|^[ \t-]*\?(?:[ \t\r\n]|$)", re.M)


def find_collection_key(text: str, root: Node | None) -> Node | None:
    """The first mapping key that is a mapping or a list: kubectl cannot turn it into JSON.

    The text is screened first so that ordinary documents are never walked node by node.
    """
    if root is None or _MAYBE_COLLECTION_KEY.search(text) is None:
        return None
    stack: list[tuple[Node, bool]] = [(root, False)]  # (node, is a key), popped in document order
    seen: set[int] = set()
    while stack:
        node, is_key = stack.pop()
        if isinstance(node, ScalarNode):
            continue
        if is_key:
            return node
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.append((value, False))
                stack.append((key, True))
        elif isinstance(node, SequenceNode):
            stack.extend((item, False) for item in reversed(node.value))
    return None
