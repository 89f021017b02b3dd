"""Split a YAML stream into documents and compose each one on its own.

Each document is composed separately so that a syntax error in one of them is reported at its own
line while every other document is still checked, and so that stdin is streamed: only one document
is held in memory at a time.
"""

from __future__ import annotations

import codecs
import gc
import operator
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from typing import Any, NamedTuple

import yaml
from yaml import MappingNode, Node, ScalarNode, SequenceNode

from .yamlnodes import PLAIN_TAG, QUOTED_TAG, YAML_TAG, find_unconvertible, lookup, scalar_value

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]


class _Loader(_BaseLoader):
    """libyaml's composer without PyYAML's YAML 1.1 tag resolution.

    Untagged scalars get the non-specific tags "?" (plain) and "!" (quoted, block), so that an
    explicit `!!str 123` stays distinguishable from `123`; yamlnodes resolves them the go-yaml
    way, and only where the linter reads them (which also skips PyYAML's regexes per scalar).
    """

    def resolve(self, kind: type, value: str | None, implicit: tuple[bool, bool] | bool) -> str:
        if kind is ScalarNode:
            return PLAIN_TAG if implicit[0] else QUOTED_TAG  # type: ignore[index]
        return YAML_TAG + ("map" if kind is MappingNode else "seq")

    # libyaml's composer calls these around every node for path resolvers, which this loader has none
    # of: PyYAML's versions look that up each time (a tenth of composing a List of Pods). Even an empty
    # method costs a bound method and a frame a call (5% of composing 10,000 documents); these C functions
    # take the same arguments, (current_node, current_index) and (), and the composer ignores what they return.
    descend_resolver = operator.is_  # type: ignore[assignment]
    ascend_resolver = tuple  # type: ignore[assignment]


# A document starts at a `---` line (with any directives before it); a `...` line ends one.
_BOUNDARY = re.compile(r"^(?:%[^\n]*\n)*---(?=[ \t\r\n]|$)|^\.\.\.[ \t\r]*(?:#[^\n]*)?(?:\n|$)", re.M)
# Where a line starts that may begin one. A pattern that starts with `^` is tried at every position
# of the text, one starting with a literal is searched for at C speed: 50 ms against 7 per 9 MB.
# The same holds for every pattern of this module read over a whole document: each starts with a
# literal, and a lookbehind after it says that the literal starts a line.
_BOUNDARY_LINE = re.compile(r"\n(?=---|\.\.\.|%)")
# Startup: the patterns that an ordinary small document never needs (directive lines, Helm's comment, a
# JSON stream, a large or deep document, a List split in items, a document that does not parse) are kept
# as their source here, and compiled by re (which caches them) when a function first uses one: compiled
# at import, they cost about 2 ms of a one-file lint. `(?m)` is re.M written in the pattern.
_DIRECTIVE_LINES = r"(?:%[^\n]*\n)*"
_HELM_SOURCE = r"\A(?:---[^\n]*\n)?(?:[ \t]*(?:#(?! Source:)[^\n]*)?\r?\n)*[ \t]*# Source: ([^\r\n]+)"
UNCONVERTIBLE_PREFIX = "kubectl cannot convert this document to JSON: "
TEMPLATE_HINT = (
    "this looks like an unrendered Helm or Go template ({{ ... }}): a chart folder (with Chart.yaml) is rendered "
    "before it is linted; anything else, lint the rendered output, e.g. `helm template . | nodename-lint -`"
)


class SyntaxProblem:
    """Why a document or a file could not be read, located in the whole stream (a plain class with
    __slots__: startup, CONTRIBUTING.md)."""

    __slots__ = ("column", "hint", "line", "message")

    def __init__(self, message: str, line: int, column: int, hint: str = "") -> None:
        self.message = message
        self.line = line  # 1-based
        self.column = column  # 1-based
        self.hint = hint


# The API server refuses request bodies over 3 MiB (etcd keeps objects up to 1.5 MiB), so a bigger
# document can never be applied; composing it would cost about 20 s and 700 MB per million keys.
DEFAULT_MAX_DOCUMENT_BYTES = 3 * 1024 * 1024
# Aliases can make a small file expand exponentially; a document of more nodes is not checked either.
DEFAULT_MAX_NODES = 1_000_000


class Limits(NamedTuple):
    """How big a document nodename-lint reads (`--max-document-size`, `--max-nodes`)."""

    max_document_chars: int = DEFAULT_MAX_DOCUMENT_BYTES  # a List's items each, not the List
    max_nodes: int = DEFAULT_MAX_NODES  # nodes of a document, counting what aliases expand to


DEFAULT_LIMITS = Limits()


class Document:
    """One YAML document: its composed root node, or the problem that stopped it.

    A plain class with __slots__, not a dataclass (startup: CONTRIBUTING.md).
    """

    __slots__ = (
        "directives",
        "error",
        "first_item",
        "index",
        "limits",
        "line_offset",
        "list_of",
        "origin",
        "root",
        "template",
        "text",
    )

    def __init__(
        self,
        index: int,
        line_offset: int,
        text: str,
        root: Node | None,
        error: SyntaxProblem | None = None,
        template: str | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.index = index  # 0-based position in the stream
        self.line_offset = line_offset  # lines of the stream before this document's text
        self.text = text
        self.root = root
        self.error = error
        self.template = template  # the Helm template named by a `# Source:` comment
        # (apiVersion, kind) of the List whose consecutive items this document holds (root: a sequence
        # of them), see _list_items
        self.list_of: tuple[str, str] | None = None
        # the List's items before this document's first: of a piece of a List, or of a List composed
        # whole after its first items came in pieces (whose items objects_in then skips)
        self.first_item = 0
        self.limits = limits
        # line -> rule ids of its `# nodename-lint: ignore` comment, found once (suppress.comment_directives)
        self.directives: dict[int, frozenset[str]] | None = None
        self.origin: Any = None  # render.Origin of a document built from a chart or kustomization


def decode(data: bytes) -> str:
    """Bytes of a manifest as text: UTF-8 (BOM allowed) or UTF-16/32 with a BOM.

    Raises UnicodeDecodeError for anything else, which the caller reports with its line.
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8")
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return data.decode("utf-32")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    nul = data.find(b"\0")
    if nul >= 0:  # valid UTF-8, but no YAML: UTF-16 without a BOM, or a binary file
        raise UnicodeDecodeError("utf-8", data, nul, nul + 1, "NUL byte")
    return data.decode("utf-8")


def iter_documents(
    blocks: Iterable[str], *, split_lists: bool = False, limits: Limits = DEFAULT_LIMITS
) -> Iterator[Document]:
    """The documents of a stream given as consecutive text blocks (a file is one block).

    With `split_lists`, a large block-style List (`kubectl get -A -o yaml`) comes as one document
    per item (see _list_items), so that its items are composed and linted one at a time.
    """
    index = 0
    for line_offset, text in _split(_whole_lines(blocks)):
        shape = _list_items(text) if split_lists and len(text) >= SPLIT_LIST_CHARS else None
        if shape is not None:
            yield from _compose_items(text, index, line_offset, shape, limits)
            index += 1
            continue
        document = compose(text, index, line_offset, limits)
        stream = json_stream(text) if document.error is not None else None
        if stream is None:
            yield document
            index += 1
            continue
        for line, column, piece in stream:
            yield compose(" " * column + piece, index, line_offset + line, limits)
            index += 1


# A JSON string, a bracket, or a run of anything else: the tokens json_stream counts brackets over.
_JSON_TOKEN = r'"(?:[^"\\\n]|\\.)*"|[{}\[\]]|[^"{}\[\]]+'


def json_stream(text: str) -> list[tuple[int, int, str]] | None:
    """(line, column, text) of each object of a stream of JSON objects (JSON Lines, `jq -c` output),
    or None when TEXT is not two or more of them.

    kubectl reads such a file object by object (apimachinery's YAMLOrJSONDecoder takes a stream that
    starts with `{` as JSON and decodes values until its end); as one YAML document it is a syntax
    error. Brackets are counted outside strings here, in one linear pass; each object is composed
    as YAML (JSON is YAML) afterwards, which reports what is wrong inside one.
    """
    pieces: list[tuple[int, int, str]] = []
    position, line, line_start, depth, start = 0, 0, 0, 0, -1
    token_at = re.compile(_JSON_TOKEN).match
    while position < len(text):
        token = token_at(text, position)
        if token is None:  # an unterminated string
            return None
        value = token.group()
        if depth == 0 and value != "{":
            if value.strip():
                return None
        elif value in "{[":
            if depth == 0:
                start = position
            depth += 1
        elif value in "}]":
            depth -= 1
            if depth == 0:
                pieces.append((line, start - line_start, text[start : token.end()]))
        newline = value.rfind("\n")
        if newline >= 0:
            line += value.count("\n")
            line_start = position + newline + 1
        position = token.end()
    return pieces if depth == 0 and len(pieces) > 1 else None


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while a big tree of containers is built.

    Composing a document or loading a cluster state allocates containers in bursts, and each
    burst triggered a full scan of everything already built (3x slower on big inputs). Nothing
    built there holds a reference cycle, so reference counting alone frees what is dropped.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def compose(text: str, index: int = 0, line_offset: int = 0, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Compose one document's text; a syntax error becomes the document's `error`."""
    template = None
    if "# Source:" in text:
        match = re.match(_HELM_SOURCE, text)
        template = match.group(1).strip() if match else None
    beyond = _beyond_limits(text, limits)
    if beyond is not None:
        offset, reason = beyond
        line = text.count("\n", 0, offset)
        column = offset - (text.rfind("\n", 0, offset) + 1)
        problem = SyntaxProblem(reason, line_offset + line + 1, column + 1, template_hint(text))
        return Document(index, line_offset, text, None, problem, template, limits=limits)
    loader = _Loader(text)
    try:
        with without_cycle_collection():
            root = loader.get_single_node()
        unconvertible = find_unconvertible(text, root, limits.max_nodes)
        if unconvertible is None:
            return Document(index, line_offset, text, root, None, template, limits=limits)
        node, reason = unconvertible
        mark = node.start_mark
        problem = SyntaxProblem(
            f"{UNCONVERTIBLE_PREFIX}{reason}",
            line_offset + mark.line + 1,
            mark.column + 1,
            template_hint(text),
        )
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line, mark.column) if mark else (0, 0)
        message = ": ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        problem = SyntaxProblem(message, line_offset + line + 1, column + 1, template_hint(text))
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n")
        problem = SyntaxProblem(
            f"{exc.reason}: character {exc.character!r}", line_offset + line + 1, 1, template_hint(text)
        )
    except yaml.YAMLError as exc:
        problem = SyntaxProblem(str(exc).splitlines()[0], line_offset + 1, 1, template_hint(text))
    finally:
        loader.dispose()
    return Document(index, line_offset, text, None, problem, template, limits=limits)


# Limits checked on the text, before libyaml sees it (the size: Limits.max_document_chars).
# A List (`kubectl get deploy -A -o yaml`) is applied item by item, so only its items have that limit.
# `kind:` at a line start, or JSON's `"kind":`; literal first (see _BOUNDARY_LINE): 30 ms against 0.5 per MB.
_LIST_KIND = (
    r"(?m)kind(?:(?<![^\n]kind):[ \t]*[\"']?[A-Za-z]*List[\"']?[ \t]*(?:#.*)?\r?$"
    r"|(?<=\"kind)\"[ \t]*:[ \t]*\"[A-Za-z]*List\")"
)
# Nesting limits. libyaml's composer recurses on the
# C stack (block nesting past about 25,000 levels crashes the process) and its time grows with the
# square of the flow depth (20,000 levels of [ took 8 s). Each block level takes at least one
# column of indentation or `- `, so a line indented less than MAX_BLOCK_INDENT columns bounds the
# block depth; with the flow limit, the depth stays far below the crash.
MAX_FLOW_DEPTH = 10_000  # go-yaml's own max_flow_level: kubectl refuses deeper documents too
MAX_BLOCK_INDENT = 5_000
_FLOW_BRACKET = r"[\[\]{}]"
_DEEP_INDENT = rf"[ \t?:-]{{{MAX_BLOCK_INDENT}}}"
_DEEP_INDENT_LINE = rf"\n[ \t?:-]{{{MAX_BLOCK_INDENT}}}"  # see _BOUNDARY_LINE


def _beyond_limits(text: str, limits: Limits) -> tuple[int, str] | None:
    """(offset, reason) when the document is bigger or nests deeper than nodename-lint parses, else None.

    Brackets inside quoted strings are counted too: only a document with more than
    MAX_FLOW_DEPTH brackets is scanned at all, and balanced text never gets deep.
    """
    if len(text) <= MAX_BLOCK_INDENT:
        return None
    if len(text) > limits.max_document_chars and not re.search(_LIST_KIND, text):
        return 0, (
            f"the document is too large ({len(text) / 1024 / 1024:.1f} MiB, limit "
            f"{limits.max_document_chars / 1024 / 1024:.1f} MiB: --max-document-size): the API server refuses requests "
            "over 3 MiB (request entity too large) and etcd objects over 1.5 MiB, so nodename-lint does not parse it"
        )
    deep_line = _deep_line(text)
    if deep_line is not None:
        return deep_line, (
            f"a line is indented more than {MAX_BLOCK_INDENT:,} columns: nesting that deep crashes YAML parsers "
            "(kubectl's refuses more than 10,000 levels), so nodename-lint does not parse it"
        )
    if text.count("[") + text.count("{") <= MAX_FLOW_DEPTH:
        return None
    depth = 0
    for match in re.finditer(_FLOW_BRACKET, text):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_FLOW_DEPTH:
            return match.start(), (
                f"flow collections ([ or {{) nested more than {MAX_FLOW_DEPTH:,} levels deep: kubectl's YAML "
                "reader refuses this (go-yaml: exceeded max depth), and nodename-lint does not parse it"
            )
        depth = max(depth, 0)
    return None


def _deep_line(text: str) -> int | None:
    """Where the first line indented MAX_BLOCK_INDENT columns or more starts, or None."""
    if re.match(_DEEP_INDENT, text):
        return 0
    found = re.search(_DEEP_INDENT_LINE, text)
    return None if found is None else found.start() + 1


# A `kind:` key, or an `apiVersion:` key with a Kubernetes API version (`v1`, `apps/v1`, `x.io/v1beta1`)
# (YAML, or JSON's `"kind":`), not the end of a longer word: an Azure Resource Manager template names
# `"apiVersion": "2015-06-15"` (kubespray's, Jinja: `"{{apiVersion}}"`). Literal first (see _BOUNDARY_LINE);
# read only in a document that does not parse, never on the hot path; each try scans one run of name
# characters, which stops at the next `apiVersion` (its `V`), so the search is linear.
_OBJECT_KEY = (
    r"""kind(?<![\w.-]kind)["']?[ \t]*:"""
    r"""|apiVersion(?<![\w.-]apiVersion)["']?[ \t]*:[ \t]*["']?(?:[a-z0-9][a-z0-9.-]*/)?v[0-9]"""
)


def names_object_keys(text: str) -> bool:
    """Whether TEXT writes a kind key or a Kubernetes apiVersion anywhere (comments included): a document
    that does not parse is then a broken manifest, else something else kept beside manifests (JSON with
    comments, JSON Lines, a Jinja template, an openssl dump, an Azure Resource Manager template)."""
    return re.search(_OBJECT_KEY, text) is not None


def template_hint(text: str) -> str:
    """The unrendered-template hint when a line of TEXT holds `{{ ... }}`, else "" (syntax errors, invalid names)."""
    return TEMPLATE_HINT if _has_action(text) else ""


def _has_action(text: str) -> bool:
    """Whether a `{{` has a `}}` after it on its line (what `\\{\\{.*\\}\\}` finds).

    Not that regex: on a line of n `{` it tries every `{{` and scans to the line end from each,
    n squared steps (hours for a 1 MB line, the language server stuck meanwhile). Here each line is
    read once: the first `{{` of a line is the only one that needs a `}}` after it.
    """
    opening = text.find("{{")
    while opening >= 0:
        line_end = text.find("\n", opening)
        if line_end < 0:
            line_end = len(text)
        if text.find("}}", opening + 2, line_end) >= 0:
            return True
        opening = text.find("{{", line_end)
    return False


def _whole_lines(blocks: Iterable[str]) -> Iterator[str]:
    """Re-cut blocks so that each one ends at a line end: a boundary never spans two blocks."""
    carry: list[str] = []
    for block in blocks:
        cut = block.rfind("\n") + 1
        if cut == 0:
            carry.append(block)
            continue
        carry.append(block[:cut])
        yield "".join(carry)
        carry = [block[cut:]] if cut < len(block) else []
    if carry:
        yield "".join(carry)


def _split(blocks: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line offset, text) of each document, cut at `---` and `...` lines."""
    parts: list[str] = []
    line_offset = 0
    for block in blocks:
        position = 0
        for match in _boundaries(block):
            parts.append(block[position : match.start()])
            text = "".join(parts)
            if text.strip():
                yield line_offset, text
            line_offset += text.count("\n")
            if match.group().startswith("."):
                line_offset += 1
                position = match.end()
            else:
                position = match.start()
            parts = []
        parts.append(block[position:])
    text = "".join(parts)
    if text.strip():
        yield line_offset, text


def _boundaries(block: str) -> Iterator[re.Match[str]]:
    """_BOUNDARY's matches in BLOCK, as finditer gives them, tried only where _BOUNDARY_LINE says.

    A `%` line that starts no boundary is followed by directive lines and then a line that is no
    `---`: the `%` lines after it would read the same lines to the same end, so they are skipped
    (tried one by one, a file of n `%` lines cost n squared steps).
    """
    end = 0
    for start in chain((0,), (line.end() for line in _BOUNDARY_LINE.finditer(block))):
        match = _BOUNDARY.match(block, start) if start >= end else None
        if match is not None:
            yield match
            end = match.end()
        elif block.startswith("%", start) and start >= end:
            directives = re.compile(_DIRECTIVE_LINES).match(block, start)
            assert directives is not None  # it matches the empty string
            end = directives.end()


# --- a large List, item by item -------------------------------------------------------------------
# A List smaller than this is composed whole; a bigger one (kubectl prints every item of
# `get -A -o yaml` into one document) item by item: memory stays that of one item, and each item
# has the API server's size limit, as kubectl applies a List item by item.
SPLIT_LIST_CHARS = 256 * 1024
SPLIT_CHUNK_CHARS = 32 * 1024
_ITEMS_KEY = r"items:(?<![^\n]items:)[ \t]*(?:#[^\n]*)?\r?\n"  # at a line start
# An anchor or alias (after a space, a flow indicator or the line start): items may share nodes.
_ANCHORS_OR_ALIASES = tuple(rf"{indicator}(?<![^\s\[{{,:?-]{indicator})[^\s,\[\]{{}}]" for indicator in ("&", r"\*"))
_FIRST_CONTENT = r"(?m)^( *)(?!#)\S"


class _ListShape:
    """Where the parts of a List document are (see _list_items)."""

    __slots__ = ("end", "first_item", "header", "item", "items_start")

    def __init__(self, header: str, items_start: int, item: re.Pattern[str], first_item: int, end: int) -> None:
        self.header = header  # the List without its items: apiVersion, kind, metadata
        self.items_start = items_start  # right after `items:`
        self.item = item  # a line that starts an item
        self.first_item = first_item
        self.end = end  # where the items end


def _list_items(text: str) -> _ListShape | None:
    """The parts of a List document that can be composed item by item, or None.

    Only the plain shape kubectl prints qualifies: one top-level `items:` key followed by a block
    sequence, no anchors or aliases (items could share nodes), and a List kind. Each item then
    starts at a `- ` line at the sequence's indentation (with the comment lines right above it),
    and ends where the next one starts. A cut that is wrong after all (a quoted scalar continued
    on a line that looks like an item) makes that piece fail to compose, and the List is then
    composed whole (_compose_items).
    """
    keys = re.findall(_ITEMS_KEY, text)
    if (
        len(keys) != 1
        or not re.search(_LIST_KIND, text)
        or any(re.search(pattern, text) for pattern in _ANCHORS_OR_ALIASES)
    ):
        return None
    body = re.search(_ITEMS_KEY, text)
    assert body is not None
    first = re.compile(_FIRST_CONTENT).search(text, body.end())
    if first is None:
        return None
    indent = len(first.group(1))
    dash = " " * indent + "-"
    item = re.compile(rf"{dash}(?<![^\n]{dash})(?=[ \t\r\n]|$)", re.M)  # at a line start (see _BOUNDARY_LINE)
    if not item.match(text, first.start()):
        return None
    # the first line after the items (its line break: see _BOUNDARY_LINE); the first item's is none of them
    outside = re.compile(
        rf"\n(?: {{0,{indent - 1}}}[^ \t\r\n#]|{' ' * indent}(?!-(?:[ \t\r\n]|$))[^ \t\r\n#])"
        if indent
        else r"\n(?!-(?:[ \t\r\n]|$))[^ \t\r\n#]",
        re.M,
    )
    after = outside.search(text, first.start())
    end = after.start() + 1 if after else len(text)
    return _ListShape(text[: body.start()] + text[end:], body.end(), item, first.start(), end)


def _with_comments_above(text: str, start: int, floor: int) -> int:
    """Move an item's start up over the comment lines right above it (a directive for its first line)."""
    while start > floor:
        line_start = text.rfind("\n", 0, start - 1) + 1
        if not text[line_start:start].lstrip(" \t").startswith("#"):
            break
        start = line_start
    return start


def _compose_items(text: str, index: int, line_offset: int, shape: _ListShape, limits: Limits) -> Iterator[Document]:
    """The items of a List (see _list_items) as documents of a few consecutive items each.

    Composing each item on its own would cost a parser each (10 µs: a List of two million `{}`
    would pay 20 s for that alone); SPLIT_CHUNK_CHARS at a time keep the memory of one item. If a
    piece fails to compose, the whole List is composed and says what is wrong (or, after a wrong
    cut, gives the remaining items).
    """
    head = compose(shape.header, index, line_offset, limits)
    api_version, kind = _string_at(head.root, "apiVersion"), _string_at(head.root, "kind")
    if head.error is not None or not api_version or not kind or not kind.endswith("List"):
        yield compose(text, index, line_offset, limits)
        return
    lines = line_offset + text.count("\n", 0, shape.items_start)
    done = 0  # items yielded
    start, count = shape.items_start, 0
    cuts = (
        _with_comments_above(text, match.start(), shape.items_start)
        for match in shape.item.finditer(text, shape.first_item + 1, shape.end)
    )
    for cut in chain(cuts, (shape.end,)):
        count += 1
        if cut - start < SPLIT_CHUNK_CHARS and cut != shape.end:
            continue
        piece = text[start:cut]
        chunk = compose(piece, index, lines, limits)
        root = chunk.root
        if chunk.error is not None or not (isinstance(root, SequenceNode) and len(root.value) == count):
            # what the whole List says: the same syntax error, or (a cut inside a quoted scalar) its items
            whole = compose(text, index, line_offset, limits)
            whole.first_item = done
            yield whole
            return
        chunk.list_of, chunk.template, chunk.first_item = (api_version, kind), head.template, done
        yield chunk
        done += count
        lines += piece.count("\n")
        start, count = cut, 0


def _string_at(node: Node | None, key: str) -> str | None:
    """A string scalar of a mapping, read the go-yaml way (model.scalar_at, which imports this module)."""
    pair = lookup(node, key)
    if pair is None or not isinstance(pair[1], ScalarNode):
        return None
    value = scalar_value(pair[1])
    return value if isinstance(value, str) else None
