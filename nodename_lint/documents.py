"""Split a YAML stream into documents and compose each one on its own.

Each document is composed separately so that a syntax error in one of them is reported at its own
line while every other document is still checked, and so that stdin is streamed: only one document
is held in memory at a time.
"""

from __future__ import annotations

import codecs
import gc
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml
from yaml import MappingNode, Node, ScalarNode

from .yamlnodes import PLAIN_TAG, QUOTED_TAG, YAML_TAG, find_unconvertible

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

# A document starts at a `---` line (with any directives before it); a `...` line ends one.
_BOUNDARY = re.compile(r"^(?:%[^\n]*\n)*---(?=[ \t\r\n]|$)|^\.\.\.[ \t\r]*(?:#[^\n]*)?(?:\n|$)", re.M)
_HELM_SOURCE = re.compile(r"\A(?:---[^\n]*\n)?(?:[ \t]*(?:#(?! Source:)[^\n]*)?\r?\n)*[ \t]*# Source: ([^\r\n]+)")
_UNRENDERED = re.compile(r"\{\{.*\}\}")
TEMPLATE_HINT = (
    "this looks like an unrendered Helm or Go template ({{ ... }}): a chart folder (with Chart.yaml) is rendered "
    "before it is linted; anything else, lint the rendered output, e.g. `helm template . | nodename-lint -`"
)


@dataclass(slots=True)
class SyntaxProblem:
    """Why a document or a file could not be read, located in the whole stream."""

    message: str
    line: int  # 1-based
    column: int  # 1-based
    hint: str = ""


@dataclass(slots=True)
class Document:
    """One YAML document: its composed root node, or the problem that stopped it."""

    index: int  # 0-based position in the stream
    line_offset: int  # lines of the stream before this document's text
    text: str
    root: Node | None
    error: SyntaxProblem | None = None
    template: str | None = None  # the Helm template named by a `# Source:` comment
    origin: Any = None  # render.Origin of a document built from a chart or kustomization


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


def iter_documents(blocks: Iterable[str]) -> Iterator[Document]:
    """The documents of a stream given as consecutive text blocks (a file is one block)."""
    for index, (line_offset, text) in enumerate(_split(_whole_lines(blocks))):
        yield compose(text, index, line_offset)


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


def compose(text: str, index: int = 0, line_offset: int = 0) -> Document:
    """Compose one document's text; a syntax error becomes the document's `error`."""
    template = None
    if "# Source:" in text:
        match = _HELM_SOURCE.match(text)
        template = match.group(1).strip() if match else None
    beyond = _beyond_limits(text)
    if beyond is not None:
        offset, reason = beyond
        line = text.count("\n", 0, offset)
        column = offset - (text.rfind("\n", 0, offset) + 1)
        problem = SyntaxProblem(reason, line_offset + line + 1, column + 1, _hint(text))
        return Document(index, line_offset, text, None, problem, template)
    loader = _Loader(text)
    try:
        with without_cycle_collection():
            root = loader.get_single_node()
        unconvertible = find_unconvertible(text, root)
        if unconvertible is None:
            return Document(index, line_offset, text, root, None, template)
        node, reason = unconvertible
        mark = node.start_mark
        problem = SyntaxProblem(
            f"kubectl cannot convert this document to JSON: {reason}",
            line_offset + mark.line + 1, mark.column + 1, _hint(text),
        )
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line, mark.column) if mark else (0, 0)
        message = ": ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        problem = SyntaxProblem(message, line_offset + line + 1, column + 1, _hint(text))
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n")
        problem = SyntaxProblem(f"{exc.reason}: character {exc.character!r}", line_offset + line + 1, 1, _hint(text))
    except yaml.YAMLError as exc:
        problem = SyntaxProblem(str(exc).splitlines()[0], line_offset + 1, 1, _hint(text))
    finally:
        loader.dispose()
    return Document(index, line_offset, text, None, problem, template)


# Limits checked on the text, before libyaml sees it. The API server refuses request bodies over
# 3 MiB (etcd keeps objects up to 1.5 MiB), so a bigger document can never be applied; composing
# it would cost about 20 s and 700 MB per million keys.
MAX_DOCUMENT_CHARS = 3 * 1024 * 1024
# A List (`kubectl get deploy -A -o yaml`) is applied item by item, so only its items have that limit.
_LIST_KIND = re.compile(r"^kind:[ \t]*[\"']?[A-Za-z]*List[\"']?[ \t]*(?:#.*)?\r?$|\"kind\"[ \t]*:[ \t]*\"[A-Za-z]*List\"", re.M)
# Nesting limits. libyaml's composer recurses on the
# C stack (block nesting past about 25,000 levels crashes the process) and its time grows with the
# square of the flow depth (20,000 levels of [ took 8 s). Each block level takes at least one
# column of indentation or `- `, so a line indented less than MAX_BLOCK_INDENT columns bounds the
# block depth; with the flow limit, the depth stays far below the crash.
MAX_FLOW_DEPTH = 10_000  # go-yaml's own max_flow_level: kubectl refuses deeper documents too
MAX_BLOCK_INDENT = 5_000
_FLOW_BRACKET = re.compile(r"[\[\]{}]")
_DEEP_INDENT = re.compile(rf"^[ \t?:-]{{{MAX_BLOCK_INDENT}}}", re.M)


def _beyond_limits(text: str) -> tuple[int, str] | None:
    """(offset, reason) when the document is bigger or nests deeper than nodename-lint parses, else None.

    Brackets inside quoted strings are counted too: only a document with more than
    MAX_FLOW_DEPTH brackets is scanned at all, and balanced text never gets deep.
    """
    if len(text) <= MAX_BLOCK_INDENT:
        return None
    if len(text) > MAX_DOCUMENT_CHARS and not _LIST_KIND.search(text):
        return 0, (
            f"the document is {len(text) / 1024 / 1024:.1f} MiB: the API server refuses requests over 3 MiB "
            "(request entity too large) and etcd objects over 1.5 MiB, so nodename-lint does not parse it"
        )
    deep_line = _DEEP_INDENT.search(text)
    if deep_line is not None:
        return deep_line.start(), (
            f"a line is indented more than {MAX_BLOCK_INDENT:,} columns: nesting that deep crashes YAML parsers "
            "(kubectl's refuses more than 10,000 levels), so nodename-lint does not parse it"
        )
    if text.count("[") + text.count("{") <= MAX_FLOW_DEPTH:
        return None
    depth = 0
    for match in _FLOW_BRACKET.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_FLOW_DEPTH:
            return match.start(), (
                f"flow collections ([ or {{) nested more than {MAX_FLOW_DEPTH:,} levels deep: kubectl's YAML "
                "reader refuses this (go-yaml: exceeded max depth), and nodename-lint does not parse it"
            )
        depth = max(depth, 0)
    return None


def _hint(text: str) -> str:
    return TEMPLATE_HINT if "{{" in text and _UNRENDERED.search(text) else ""


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
        for match in _BOUNDARY.finditer(block):
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
