"""Fix files: lint, ask each finding's rule for edits, splice them in, check, repeat until stable.

Each pass lints the text, lets the fixer of every fixable finding describe its edits (one rule per
object per pass, so two fixes never fight over one field), splices them into the documents that
change and re-lints. The result of every splice is composed again and compared with the same
edits applied to the plain values: if anything else changed, that object is left as it was.
Documents without edits are never re-serialized, so their bytes stay as they were.
"""

from __future__ import annotations

import bisect
import codecs
import contextlib
import difflib
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field

from ..documents import Document, compose, decode, iter_documents
from ..engine import Linter
from ..findings import Finding
from ..model import Manifest, Path, objects_in
from ..registry import all_rules
from ..safe_text import visible_lines
from ..sources import STDIN, Source
from ..yamlnodes import ConversionError, lookup, to_python
from .edits import Edit, Unfixable, apply_to_data
from .splice import Planner, Splice, SpliceError, apply_splices, detect_layout

MAX_PASSES = 5
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass
class FileFix:
    """What fixing one source did: the text before and after, what was fixed, what was not."""

    source: Source
    original: str = ""
    fixed: str = ""
    applied: list[str] = field(default_factory=list)  # "file:line: rule-id", one per fix
    notes: list[str] = field(default_factory=list)  # why a fixable finding was left as it was

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def diff(self) -> str:
        """A unified diff from the original to the fixed text ('' when nothing changes)."""
        name = self.source.display
        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True), self.fixed.splitlines(keepends=True), name, name
        )
        # a bidi override or a line separator in the file (YAML allows them) shows as an escape, as everywhere
        return visible_lines(
            "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
        )


def fix_source(linter: Linter, source: Source, *, write: bool) -> FileFix:
    """Fix one file (or stdin, never written); with `write`, replace the file atomically."""
    result = FileFix(source)
    try:
        raw = _read_stdin() if source.path == STDIN else _read(source.path)
        result.original = decode(raw)
    except (OSError, UnicodeDecodeError):
        result.fixed = result.original
        return result  # the lint run after fixing reports why the file cannot be read
    result.fixed, result.applied, result.notes = fix_text(linter, result.original, source.display, source.is_static_pod)
    if write and result.changed:
        try:
            write_atomic(source.path, _encode_like(raw, result.fixed))
        except OSError as exc:
            result.notes.append(f"{source.display}: cannot write the fixed file: {exc.strerror or exc}")
            result.fixed, result.applied = result.original, []
    return result


def fix_text(
    linter: Linter, text: str, display: str = "<string>", is_static_pod: bool = False
) -> tuple[str, list[str], list[str]]:
    """(fixed text, fixes applied, notes on what was left) after passes until nothing changes."""
    applied: list[str] = []
    for _ in range(MAX_PASSES):
        fixed, done, notes = _fix_pass(linter, text, display, is_static_pod)
        applied += done
        if fixed == text:
            return text, applied, notes
        text = fixed
    return text, applied, [f"{display}: the fixes still changed the file after {MAX_PASSES} passes; stopped"]


@dataclass
class _DocumentEdit:
    """The splices accepted so far for one document, and the edits they stand for."""

    document: Document
    planner: Planner
    splices: list[Splice] = field(default_factory=list)
    edits: list[tuple[Path, list[Edit]]] = field(default_factory=list)

    @classmethod
    def of(cls, document: Document) -> _DocumentEdit:
        return cls(document, Planner(document.text, detect_layout(document.text, document.root)))

    def try_edits(self, obj: Manifest, edits: list[Edit]) -> None:
        """Accept the edits of one object, or raise SpliceError and keep the document as it was."""
        splices = self.splices + self.planner.plan(obj.node, edits)
        text = apply_splices(self.document.text, splices)
        edited = compose(text)
        try:
            expected = to_python(self.document.root)
            for prefix, accepted in [*self.edits, (_object_path(obj), edits)]:
                expected = apply_to_data(expected, accepted, prefix)
            matches = edited.error is None and to_python(edited.root) == expected
        except (ConversionError, KeyError, IndexError, TypeError):
            matches = False
        if not matches:
            raise SpliceError("the edited text would not read back as exactly this change")
        self.splices = splices
        self.edits.append((_object_path(obj), edits))

    @property
    def text(self) -> str:
        return apply_splices(self.document.text, self.splices)


def _fix_pass(linter: Linter, text: str, display: str, is_static_pod: bool) -> tuple[str, list[str], list[str]]:
    catalogue = all_rules()
    linted = linter.lint_text(text, display, is_static_pod)
    findings = [f for f in linted.findings if f.rule in catalogue and catalogue[f.rule].fixer_function is not None]
    if not findings:
        return text, [], linted.internal_errors
    documents = list(iter_documents([text]))
    objects = _objects(linter, documents, display, is_static_pod)
    by_object = _findings_by_object(findings, [obj for _, obj in objects])
    edited: dict[int, _DocumentEdit] = {}
    applied: list[str] = []
    notes: list[str] = list(linted.internal_errors)
    for index, object_findings in by_object.items():
        document, obj = objects[index]
        for finding in object_findings:
            where = f"{display}:{finding.line}: {finding.rule}"
            edits, reasons = _edits(linter, finding, obj)
            notes += [f"{where} not fixed: {reason}" for reason in reasons]
            if not edits:
                continue
            if document.index not in edited:
                edited[document.index] = _DocumentEdit.of(document)
            try:
                edited[document.index].try_edits(obj, edits)
            except SpliceError as exc:
                notes.append(f"{where} not fixed: {exc}; change it by hand")
                continue
            applied.append(where)
            break  # one fix per object per pass; the next pass sees the edited object
    return _replace_documents(text, documents, edited), applied, notes


@dataclass
class FindingFix:
    """What fixing one finding takes: splices (offsets in the whole text) and the edits they make,
    or, when it cannot be fixed, why not."""

    splices: list[Splice] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    reason: str = ""


def fix_finding(
    linter: Linter, text: str, finding: Finding, display: str = "<string>", is_static_pod: bool = False
) -> FindingFix:
    """Fix one finding as one --fix pass would: the same fixer, planner and read-back check.

    The editor's quick fix; nothing is written.
    """
    documents = list(iter_documents([text]))
    objects = _objects(linter, documents, display, is_static_pod)
    found = _findings_by_object([finding], [obj for _, obj in objects])
    if not found:
        return FindingFix(reason="the finding's object is no longer in the text")
    document, obj = objects[next(iter(found))]
    edits, reasons = _edits(linter, finding, obj)
    if not edits:
        return FindingFix(reason="; ".join(reasons) or "the rule has no fix for this object")
    edit = _DocumentEdit.of(document)
    try:
        edit.try_edits(obj, edits)
    except SpliceError as exc:
        return FindingFix(reason=f"{exc}; change it by hand")
    start = _line_starts(text)[document.line_offset]
    return FindingFix([Splice(start + splice.start, start + splice.end, splice.text) for splice in edit.splices], edits)


def _objects(
    linter: Linter, documents: list[Document], display: str, is_static_pod: bool
) -> list[tuple[Document, Manifest]]:
    return [
        (document, obj)
        for document in documents
        if document.error is None
        for obj in objects_in(
            display, document, default_namespace=linter.context.default_namespace, is_static_pod=is_static_pod
        )
    ]


def _edits(linter: Linter, finding: Finding, obj: Manifest) -> tuple[list[Edit], list[str]]:
    """The edits the finding's rule asks for on OBJ, and the reasons it gave for what it left."""
    fixer = all_rules()[finding.rule].fixer_function
    steps = list(fixer(obj, linter.context)) if fixer is not None else []
    return (
        [step for step in steps if not isinstance(step, Unfixable)],
        [step.reason for step in steps if isinstance(step, Unfixable)],
    )


def _line_starts(text: str) -> list[int]:
    return [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]


def _findings_by_object(findings: list[Finding], objects: list[Manifest]) -> dict[int, list[Finding]]:
    """Each finding's object: the last one starting at or before its line, if the names agree."""
    starts = [obj.locate(())[0] for obj in objects]
    grouped: dict[int, list[Finding]] = {}
    for finding in findings:
        index = bisect.bisect_right(starts, finding.line) - 1
        if index >= 0 and objects[index].ref == finding.object:
            rules = grouped.setdefault(index, [])
            if all(f.rule != finding.rule for f in rules):
                rules.append(finding)
    return grouped


def _object_path(obj: Manifest) -> Path:
    """Where the object sits in its document: the root, or an item of a List."""
    root = obj.document.root
    if obj.node is root:
        return ()
    found = lookup(root, "items")
    assert found is not None, "an object that is not its document's root is an item of a List"
    items = found[1]
    return ("items", next(i for i, item in enumerate(items.value) if item is obj.node))


def _replace_documents(text: str, documents: list[Document], edited: dict[int, _DocumentEdit]) -> str:
    """The stream with the edited documents' text swapped in and every other byte kept."""
    if not edited:
        return text
    line_starts = _line_starts(text)
    parts, position = [], 0
    for document in documents:
        if document.index not in edited:
            continue
        start = line_starts[document.line_offset]
        end = start + len(document.text)
        if text[start:end] != document.text:  # pragma: no cover - the splitter keeps text verbatim
            raise AssertionError(f"document {document.index} is not at line {document.line_offset + 1}")
        parts += [text[position:start], edited[document.index].text]
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _read_stdin() -> bytes:
    stream = sys.stdin.buffer
    if stream.seekable():  # a redirected file, or stdin a live run held (command.keep_stdin_for_diff)
        stream.seek(0)
    return stream.read()


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _encode_like(raw: bytes, text: str) -> bytes:
    """Text in the encoding of the original bytes, byte-order mark included."""
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return bom + text.encode(codec)
    return text.encode("utf-8")


def write_atomic(path: str, data: bytes) -> None:
    """Replace a file's content in one step: a temporary file in the same folder, then rename.

    The file keeps its mode (and owner, when allowed); a symlink keeps pointing at the new content.
    """
    target = os.path.realpath(path)
    info = os.stat(target)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=os.path.dirname(target)
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        with contextlib.suppress(PermissionError, AttributeError):  # keep the owner where we may (and can)
            os.chown(temporary, info.st_uid, info.st_gid)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
