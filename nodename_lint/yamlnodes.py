"""YAML as Kubernetes reads it, straight from libyaml's node graph.

Documents are composed with PyYAML's C loader (the parse floor) and never constructed wholesale:
the linter looks up the few keys it needs on the nodes and converts only those subtrees to plain
values. Plain scalars are resolved the way go-yaml v2 (sigs.k8s.io/yaml, used by kubectl) does,
not the way PyYAML does: `=` is a string, timestamps stay strings, `0o17` is an int.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Collection, Iterable, Iterator
from typing import Any, cast

from yaml import MappingNode, Node, ScalarNode, SequenceNode

MERGE_KEY = "<<"
MAX_EXPANDED_NODES = 1_000_000  # aliases can make a small file expand exponentially
MAX_DEPTH = 400  # deeper subtrees are reported, not converted: two Python frames per level, limit 1000
# Tags the loader (documents._Loader) gives untagged scalars, so that explicit tags stay visible:
# the YAML non-specific tags, "?" for plain scalars and "!" for quoted and block ones.
PLAIN_TAG = "?"
QUOTED_TAG = "!"
YAML_TAG = "tag:yaml.org,2002:"


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
# What strconv.ParseInt(s, 0, 64) accepts once go-yaml has removed every underscore.
_GO_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
# No int or float of go-yaml's syntax ends with a letter past f (hex digits), and a timestamp stays a string.
_NOT_NUMBER_END = frozenset("ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?")


def resolve_plain(value: str) -> Any:
    """Resolve an untagged plain scalar as go-yaml v2 does when decoding into interface{}."""
    if not value:
        return None
    first = value[0]
    if first in "yYnNtTfFoO~.+-" and value in _BOOL_NULL:
        return _BOOL_NULL[value]
    if first in "0123456789+-":
        if value[-1] in _NOT_NUMBER_END:  # a quantity (100m, 64Mi): the three patterns below would give it back
            return value
        if _TIMESTAMP.fullmatch(value):
            return value  # go-yaml keeps timestamp-looking values as strings for interface{}
        plain = value.replace("_", "")
        if _GO_INT.fullmatch(plain):
            number = _parse_go_int(plain)
            # ParseInt (int64), then ParseUint (uint64, which takes no sign at all)
            if -(2**63) <= number < 2**63 or (plain[0] != "+" and 0 <= number < 2**64):
                return number
        if _GO_FLOAT.fullmatch(plain):
            return _finite_or(plain, value)
        return value
    if first == "." and _GO_FLOAT.fullmatch(value):
        return _finite_or(value, value)
    return value


def _parse_go_int(digits: str) -> int:
    """An integer in Go's base-0 syntax, where a leading 0 alone means octal."""
    body = digits.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1].isdigit():
        number = int(body, 8)
        return -number if digits[0] == "-" else number
    return int(digits, 0)


def _finite_or(number: str, fallback: str) -> float | str:
    """A float, or the text itself when Go's ParseFloat would report overflow."""
    value = float(number)
    return fallback if math.isinf(value) else value


_TAG_TYPES: dict[str, tuple[type, ...]] = {
    YAML_TAG + "int": (int,),
    YAML_TAG + "float": (float, int),
    YAML_TAG + "bool": (bool,),
    YAML_TAG + "null": (type(None),),
}


def tagged_value(tag: str, text: str) -> tuple[Any, bool]:
    """(value, fits) of a scalar with an explicit tag (`!!int "12"`) as go-yaml decodes it.

    fits is False when the text does not fit the tag (`!!int abc`): go-yaml fails the document.
    Tags go-yaml does not resolve (`!!str`, `!!binary`, `!custom`) leave the text a string.
    """
    if tag == YAML_TAG + "timestamp":
        return text, _TIMESTAMP.fullmatch(text) is not None
    types = _TAG_TYPES.get(tag)
    if types is None:
        return text, True
    value: Any = resolve_plain(text)
    fits = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not fits:
        return text, False
    return (float(value) if tag == YAML_TAG + "float" else value), True


def scalar_value(node: ScalarNode) -> Any:
    """The JSON value of a scalar node as go-yaml decodes it into interface{}.

    Untagged plain scalars are resolved (`yes` is true, `0o17` is 15); quoted and block scalars,
    and scalars with a tag go-yaml does not resolve (`!!str 1`, `!foo 1`), are strings; `!!int "12"`
    is 12. A value that does not fit its tag is reported by the document check (`find_unconvertible`).
    """
    return scalar_of(node.tag, node.value)


def scalar_of(tag: str, text: str) -> Any:
    """scalar_value of a scalar given by its tag (PLAIN_TAG, QUOTED_TAG or explicit) and text."""
    if tag == PLAIN_TAG:
        return resolve_plain(text)
    if tag == QUOTED_TAG:
        return text
    return tagged_value(tag, text)[0]


def scalar_problem(tag: str, text: str, *, as_key: bool = False) -> str:
    """Why go-yaml and JSON cannot take this scalar ("" when they can): a value that does not fit its
    explicit tag (`!!int abc`), or, as a value, .nan/.inf (the checks find_unconvertible makes)."""
    if tag not in (PLAIN_TAG, QUOTED_TAG) and not tagged_value(tag, text)[1]:
        return f"{text!r} is not a valid {tag.replace(YAML_TAG, '!!')}"
    if as_key:
        return ""
    value = scalar_of(tag, text)
    return _NOT_FINITE if value.__class__ is float and not math.isfinite(value) else ""


def key_text(node: Node) -> str | None:
    """A mapping key as the string JSON will carry; None for keys JSON cannot hold (null, collections)."""
    if not isinstance(node, ScalarNode):
        return None
    return key_of(node.tag, node.value)


def key_of(tag: str, text: str) -> str | None:
    """key_text of a scalar key given by its tag and text."""
    value = scalar_of(tag, text)
    if isinstance(value, str):
        return value
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return _go_float_key(value) if isinstance(value, float) else str(value)


def _float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def _go_float_key(value: float) -> str:
    """A float key as sigs.k8s.io/yaml writes it: strconv.FormatFloat(v, 'g', -1, 32)."""
    if math.isnan(value):
        return ".nan"
    try:
        single = _float32(value)
    except OverflowError:  # beyond float32: Go's +Inf, which sigs.k8s.io/yaml spells .inf
        single = math.copysign(math.inf, value)
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    for precision in range(9):  # the shortest decimal that reads back as the same float32
        text = f"{single:.{precision}e}"
        if _float32(float(text)) == single:
            break
    mantissa, exponent_text = text.split("e")
    exponent = int(exponent_text)
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    if exponent < -4 or exponent >= 6:  # %e, as Go's shortest %g decides
        fraction = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{fraction}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    whole = digits.ljust(exponent + 1, "0")
    fraction = f".{whole[exponent + 1 :]}" if len(whole) > exponent + 1 else ""
    return f"{sign}{whole[: exponent + 1]}{fraction}"


def is_merge_key(node: Node) -> bool:
    """A plain, untagged `<<` key: go-yaml merges the mapping(s) it holds."""
    return isinstance(node, ScalarNode) and node.value == MERGE_KEY and node.tag == PLAIN_TAG


def mapping_pairs(node: MappingNode) -> Iterator[tuple[Node, Node]]:
    """Key/value node pairs of a mapping in go-yaml's order of assignment: the last one of a key wins.

    go-yaml applies a merge key (`<<`) where it stands: it overrides the keys before it and is
    overridden by the keys after it; of a list of merged mappings the first one wins.
    """
    for key, value in node.value:
        if not is_merge_key(key):
            yield key, value
        elif isinstance(value, MappingNode):
            yield from mapping_pairs(value)
        elif isinstance(value, SequenceNode):
            for item in reversed(value.value):
                if isinstance(item, MappingNode):
                    yield from mapping_pairs(item)


def lookup(node: Node | None, key: str) -> tuple[Node, Node] | None:
    """The (key node, value node) that gives `key` its value in a mapping node (the last one wins)."""
    if not isinstance(node, MappingNode):
        return None
    found = None
    merges = False
    for key_node, value_node in node.value:
        if key_node.value == key:
            # written as KEY: it is KEY when quoted, or plain and a word, else resolve it
            tag = key_node.tag
            if tag == QUOTED_TAG or (tag == PLAIN_TAG and _is_word(key)) or key_text(key_node) == key:
                found = (key_node, value_node)
        elif key_node.value == MERGE_KEY:
            merges = True
    if merges:
        for key_node, value_node in mapping_pairs(node):
            if key_node.value == key and key_text(key_node) == key:
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


def follow(node: Node | None, path: Iterable[str | int]) -> tuple[Node | None, Node | None]:
    """(the node to point at, the node reached) for the deepest part of `path` that exists.

    For a mapping entry the key is pointed at (`nodeName:`), for a list item the item itself. The
    one walk from a path to a line: findings, config errors and cluster state errors all use it.
    """
    mark = node
    for step in path:
        found = child(node, step)
        if found is None:
            break
        mark, node = found
    return mark, node


def to_python(node: Node | None, max_nodes: int = MAX_EXPANDED_NODES) -> Any:
    """Convert a node subtree to plain JSON-compatible values, bounding alias expansion."""
    if node is None:
        return None
    budget = [max_nodes - 1, max_nodes]  # left (the node itself counted; each collection counts its children), limit
    try:
        return _convert(node, budget, 0)
    except RecursionError:  # called from deep in a caller's stack: still a finding, never a crash
        raise ConversionError(f"document is nested too deeply to convert (over {MAX_DEPTH} levels)", node) from None


def _convert(node: Node, budget: list[int], depth: int) -> Any:
    if isinstance(node, ScalarNode):
        value = scalar_value(node)
        if value.__class__ is float and not math.isfinite(value):
            raise ConversionError(_NOT_FINITE, node)
        return value
    if depth > MAX_DEPTH:
        raise ConversionError(f"document is nested more than {MAX_DEPTH} levels deep", node)
    depth += 1
    winners: dict[str, Node] | None = None
    children: Collection[Node]
    if isinstance(node, SequenceNode):
        children = node.value
    else:  # a mapping: a later key overrides an earlier one, as in go-yaml
        winners = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if not (  # a plain word (see _SELF_FIRST), tested inline as below
                key_node.__class__ is ScalarNode
                and key_node.tag == PLAIN_TAG
                and key
                and (key[0] in _SELF_FIRST or (len(key) > 5 and key[0].isalpha()))
            ):
                if key == MERGE_KEY and is_merge_key(key_node):
                    winners = _winners(mapping_pairs(cast(MappingNode, node)))
                    break
                key = key_text(key_node)
                if key is None:
                    raise ConversionError(_key_problem(key_node), key_node)
            winners[key] = value_node
        children = winners.values()
    # Count the children the collection expands to (aliases can make a small file expand exponentially);
    # a document with aliases has been measured whole by find_unconvertible, so this one is simply too large.
    budget[0] -= len(children)
    if budget[0] < 0:
        raise ConversionError(f"the object is too large (more than {budget[1]:,} nodes, limit: --max-nodes)", node)
    # Most keys and values of a manifest are strings that stay themselves: quoted, or plain words
    # (see _SELF_FIRST). They are tested inline, without a call per node: most of converting a Pod spec.
    values = []
    for child in children:
        if child.__class__ is ScalarNode:
            tag, text = child.tag, child.value
            if tag == QUOTED_TAG or (
                tag == PLAIN_TAG and text and (text[0] in _SELF_FIRST or (len(text) > 5 and text[0].isalpha()))
            ):
                values.append(text)
                continue
        values.append(_convert(child, budget, depth))
    return values if winners is None else dict(zip(winners, values, strict=True))


_NULL_TEXTS = frozenset(text for text, value in _BOOL_NULL.items() if value is None)


def converts_whole(node: Node | None, max_nodes: int = MAX_EXPANDED_NODES) -> bool:
    """Whether to_python(node, max_nodes) is sure to succeed, walking the subtree without converting it.

    to_python fails on nesting deeper than MAX_DEPTH, on more than max_nodes nodes, on null or
    collection keys and on .nan/.inf values. Depth and size are counted over every pair and every
    merged mapping, which is never less than what to_python counts, and the walk stops as soon as one
    is over; a key that is a collection or may resolve to null is not sure either. Values are not
    read: a composed document holds no .nan or .inf that kubectl keeps (find_unconvertible makes that
    document an error, and only documents without one have objects).
    """
    if not isinstance(node, (MappingNode, SequenceNode)):
        return True
    left = max_nodes - 1
    stack: list[tuple[Node, int]] = [(node, 0)]
    push, pop = stack.append, stack.pop
    while stack:
        current, depth = pop()
        if depth > MAX_DEPTH:
            return False
        children = current.value
        left -= len(children)
        if left < 0:
            return False
        depth += 1
        if current.__class__ is MappingNode:
            for key, value in children:
                if key.__class__ is not ScalarNode or key.value in _NULL_TEXTS:
                    return False
                if value.__class__ is not ScalarNode:
                    push((value, depth))
        else:
            for item in children:
                if item.__class__ is not ScalarNode:
                    push((item, depth))
    return True


def _winners(pairs: Iterable[tuple[Node, Node]]) -> dict[str, Node]:
    """The value node of each key, the last one winning (pairs in go-yaml's order of assignment)."""
    winners: dict[str, Node] = {}
    for key_node, value_node in pairs:
        key = key_text(key_node)
        if key is None:
            raise ConversionError(_key_problem(key_node), key_node)
        winners[key] = value_node
    return winners


# Plain scalars that resolve to themselves: they start with a letter that begins no YAML 1.1
# boolean or null (y n t f o), or with one of these and are longer than any such word ("false",
# 5 letters); `.nan`, `~` and numbers never start with a letter. Most keys and words in manifests.
_SELF_FIRST = frozenset("abcdeghijklmpqrsuvwxzABCDEGHIJKLMPQRSUVWXZ_/")


def _is_word(text: str) -> bool:
    """Whether a plain scalar of this text is that very string (_convert tests it inline, per node)."""
    return bool(text) and (text[0] in _SELF_FIRST or (len(text) > 5 and text[0].isalpha()))


_NOT_FINITE = ".nan and .inf have no JSON form (json: unsupported value)"


def _key_problem(key_node: Node) -> str:
    if isinstance(key_node, ScalarNode):
        return "a mapping key is null (`~`, `null` or empty), which JSON cannot hold"
    return "a mapping key is itself a mapping or a list, which JSON cannot hold"


# The screens below say whether a document's text can hold what go-yaml or JSON cannot take, so
# that ordinary documents are never walked node by node. Each is a set of alternatives that start
# with a literal (the preceding character is checked by a lookbehind): re scans for a literal
# prefix about 15 times faster than for a character class, and the screens read every byte.
_END = r"(?:[ \t\r\n]|$)"


class _AtNodeStart:
    """A screen alternative: PATTERN where a node can start, i.e. after blanks (spaces, tabs) that
    follow the start, another line break or whitespace, a flow or block indicator or a byte-order
    mark (libyaml skips one at a line start).

    A tag, an anchor or a flow mapping anywhere else is inside a scalar (CEL's `self.a != b` and
    `a && b` in CRDs, PromQL's `x != 1`, Grafana's `"Received : {{ pod }}"`) or a syntax error that
    stops the composer first. The pattern finds the candidates in C (literal first, the character
    before checked by a lookbehind); each is then checked back over its blanks, which only reads the
    blanks between two candidates, so the whole screen stays linear.
    """

    __slots__ = ("pattern",)

    def __init__(self, literal: str, after: str = "") -> None:
        self.pattern = re.compile(rf"{literal}(?<![^\s{_NODE_START}]{literal}){after}")

    def search(self, text: str) -> bool:
        for match in self.pattern.finditer(text):
            start = match.start()
            while start and text[start - 1] in " \t":
                start -= 1
            if not start or text[start - 1].isspace() or text[start - 1] in _NODE_START_CHARACTERS:
                return True
        return False


_NODE_START = r"\[{,:?\ufeff-"
_NODE_START_CHARACTERS = "[{,:?\ufeff-"
# go-yaml cannot decode: an explicit tag (`!`), a merge key, a collection key (`{{ x }}`, `[a]: b`,
# `{a: b}: c`), an alias. An alias needs an anchor of its document (else libyaml's composer refuses
# it), so the screen looks for the anchor (`&name`, a name of libyaml's letters): a `*` is common
# in descriptions.
_MAY_NOT_DECODE: tuple[re.Pattern[str] | _AtNodeStart, ...] = (
    _AtNodeStart("!"),
    re.compile("<<"),
    _AtNodeStart(r"\{", r"[ \t]*[\[{]"),
    re.compile(r",[ \t]*[\[{]"),
    re.compile(r"\][ \t]*:" + _END),
    re.compile(r"\}[ \t]*:" + _END),
    _AtNodeStart("&", "[0-9A-Za-z_-]"),
)
# JSON cannot hold: a null key (`~: x`, `null: x`, `: x`, after a space, `{`, `,`, `?`, `-` or the
# start), .nan or .inf.
_MAY_NOT_BE_JSON = tuple(
    re.compile(pattern, re.M)
    for pattern in (
        r":(?<![^\s{,?-]:)" + _END,
        r"~(?<![^\s{,?-]~):" + _END,
        *(rf"{word}(?<![^\s{{,?-]{word}):" + _END for word in ("null", "Null", "NULL")),
        r"\.(?:nan|NaN|NAN|inf|Inf|INF)",
    )
)
_QUESTION_MARK = re.compile(r"\?" + _END)


def _may_hold(screen: tuple[re.Pattern[str] | _AtNodeStart, ...], text: str) -> bool:
    """Whether any alternative of the screen, or an explicit key (`? key` on a line of its own), occurs."""
    return any(pattern.search(text) for pattern in screen) or _has_explicit_key(text)


def _has_explicit_key(text: str) -> bool:
    """A `?` indicator: only spaces, tabs and `-` before it on its line, a space or the line end after.

    Only the first `? ` of a line can be one (anything before a later one is more than that), so
    the search goes on at the next line: looking back from each `? ` of a line was n squared steps.
    """
    match = _QUESTION_MARK.search(text)
    while match is not None:
        line_start = text.rfind("\n", 0, match.start()) + 1
        if not text[line_start : match.start()].strip(" \t-"):
            return True
        line_end = text.find("\n", match.start())
        if line_end < 0:
            return False
        match = _QUESTION_MARK.search(text, line_end + 1)
    return False


def find_unconvertible(text: str, root: Node | None, max_nodes: int = MAX_EXPANDED_NODES) -> tuple[Node, str] | None:
    """The first node that makes kubectl's YAML-to-JSON conversion fail, with the reason.

    Decoding fails (in any part, even one a later duplicate key overrides) on collection keys,
    values that do not fit their explicit tag, a merge key that holds no mapping, an alias inside
    its own anchor; the JSON step fails on null keys and .nan/.inf in the values that survive.
    A document that expands to more than `max_nodes` nodes is not checked (an alias bomb, or
    simply too large). The text is screened first so that ordinary documents are never walked
    node by node.
    """
    if root is None:
        return None
    if _may_hold(_MAY_NOT_DECODE, text):
        found = _first_undecodable(root, max_nodes)
        if found is not None:
            return found
    if _may_hold(_MAY_NOT_BE_JSON, text):
        return _first_not_json(root)
    return None


def _first_undecodable(root: Node, max_nodes: int) -> tuple[Node, str] | None:
    """Walk every node once (aliases are not re-entered), in document order."""
    sizes: dict[int, int] = {}  # expanded node count of every finished node
    open_nodes: set[int] = set()  # the path from the root: an alias to one of them is a cycle
    stack: list[tuple[Node, bool, bool]] = [(root, False, False)]  # (node, is a key, leaving it)
    while stack:
        node, is_key, leaving = stack.pop()
        ident = id(node)
        if leaving:
            open_nodes.discard(ident)
            children = [part for pair in node.value for part in pair] if isinstance(node, MappingNode) else node.value
            size = 1 + sum(sizes[id(child)] for child in children)
            if size > max_nodes:
                return node, _too_many_nodes(node, max_nodes)
            sizes[ident] = size
            continue
        if ident in sizes:
            continue
        if ident in open_nodes:
            return node, "an alias refers to the collection that contains it"
        problem = _node_problem(node, is_key)
        if problem:
            return node, problem
        if isinstance(node, ScalarNode):
            sizes[ident] = 1
            continue
        open_nodes.add(ident)
        stack.append((node, False, True))
        if isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.append((value, False, False))
                stack.append((key, True, False))
        else:
            stack.extend((item, False, False) for item in reversed(node.value))
    return None


def _too_many_nodes(node: Node, max_nodes: int) -> str:
    """Why a collection that expands past the limit is not checked: its own size, or its aliases."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) not in seen:
            seen.add(id(current))
            if isinstance(current, MappingNode):
                stack.extend(part for pair in current.value for part in pair)
            elif isinstance(current, SequenceNode):
                stack.extend(current.value)
    if len(seen) > max_nodes:
        return f"this collection is too large to check ({len(seen):,} nodes, limit {max_nodes:,}: --max-nodes)"
    return (
        f"aliases expand this to more than {max_nodes:,} nodes from {len(seen):,} written ones "
        f"(an alias bomb; limit: --max-nodes)"
    )


def _first_not_json(root: Node) -> tuple[Node, str] | None:
    """Walk what kubectl converts to JSON (the values that win), each node once, for null keys and .nan/.inf."""
    seen: set[int] = set()
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if node.tag == PLAIN_TAG and node.value[:1] in (".", "+", "-"):
                value = resolve_plain(node.value)
                if value.__class__ is float and not math.isfinite(value):
                    return node, _NOT_FINITE
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
        else:
            winners: dict[str, Node] = {}
            for key, value in mapping_pairs(cast(MappingNode, node)):
                text = key_text(key)
                if text is None:
                    return key, _key_problem(key)
                winners[text] = value
            stack.extend(reversed(winners.values()))
    return None


def _node_problem(node: Node, is_key: bool) -> str:
    """Why go-yaml cannot decode this one node ("" when it can)."""
    if isinstance(node, ScalarNode):
        if node.tag not in (PLAIN_TAG, QUOTED_TAG) and not tagged_value(node.tag, node.value)[1]:
            return f"{node.value!r} is not a valid {node.tag.replace(YAML_TAG, '!!')}"
        return ""
    if is_key:
        return _key_problem(node)
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if is_merge_key(key) and not (
                isinstance(value, MappingNode)
                or (isinstance(value, SequenceNode) and all(isinstance(item, MappingNode) for item in value.value))
            ):
                return "a merge key (<<) must hold a mapping or a list of mappings"
    return ""
