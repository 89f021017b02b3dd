"""Build a kustomization folder with `kustomize build` (or `kubectl kustomize`) and place findings
in the file that wrote the value: the kustomization that sets the namespace, a patch (strategic
merge or JSON 6902, in a file or inline in kustomization.yaml), else the resource file the object
came from, else the kustomization.

A kustomization from a pull request is hostile input, so the build is sealed. kustomize_inputs.py
reads what the build would read first, and refuses remote resources and folders outside the
repository. The build then runs over a private copy (sandbox.private_copy) of the tracked files of
the folders it enters, under a random folder name, through a wrapper kustomization that asks for
`buildMetadata: [originAnnotations, transformerAnnotations]`, so kustomize names each object's
origin file and the kustomizations whose transformers ran over it; an origin that does not name a
file of the copy was planted, and is ignored. kustomize runs in a sealed child (sandbox.run): no
plugins (no --enable-alpha-plugins, --enable-exec or --enable-helm), root-only file loading, the
network closed, BUILD_BUDGET per build and RUN_SECONDS for all the builds of a run.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from yaml import Node

from ..documents import Document, iter_documents
from ..safe_text import printable_path
from ..sources import repository_root
from ..yamlnodes import child, to_python
from . import KUSTOMIZATION_FILES, Origin, joined
from .kustomize_inputs import Inputs, inputs_of, kustomization_file, within, yaml_value
from .sandbox import (
    COPY_MAX_BYTES,
    COPY_MAX_FILES,
    Budget,
    CopyRefused,
    Outcome,
    TooBig,
    private_copy,
    read_regular,
    run,
)
from .types import Rendering

if TYPE_CHECKING:
    from ..model import Manifest, Path

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
TRANSFORMATIONS_ANNOTATION = "alpha.config.kubernetes.io/transformations"
# What kustomize may cost: every build of a run together (of one process: --jobs workers build side by
# side), and each build (docs/guarantees.md).
RUN_SECONDS = 300.0
BUILD_BUDGET = Budget(wall_seconds=60.0, cpu_seconds=30, memory_bytes=1 << 30, output_bytes=32 << 20)
MAX_REASON_CHARS = 600  # of kustomize's error, quoted in the note
TOOL_HINT = "put kustomize or kubectl on PATH to lint what the kustomization builds"
NOT_BUILT = "its files were linted one by one"
_KLOG_FAILURE = '"command failed" err='  # kubectl's error line (klog): E1201 21:14:42.09 29761 run.go:72] ...
# The error of the wrapper's own resource (the folder is first tried as a file): not what failed.
_WRAPPER_PREFIX = re.compile(
    r"accumulating resources: accumulation err='accumulating resources from '[^']*': '[^']*' must resolve to a "
    r"file': (?:recursed accumulation of path '[^']*': |couldn't make target for path '[^']*': )?"
)


class _RunClock:
    """The time the builds of this process have taken, against RUN_SECONDS."""

    spent = 0.0

    @classmethod
    def remaining(cls) -> float:
        return RUN_SECONDS - cls.spent


def tool() -> list[str]:
    """The build command (without the folder): `kustomize build`, else `kubectl kustomize`, else []."""
    kustomize = shutil.which("kustomize")
    if kustomize:
        return [kustomize, "build"]
    kubectl = shutil.which("kubectl")
    return [kubectl, "kustomize"] if kubectl else []


def build_kustomization(folder: str, display: str) -> Rendering:
    """The built objects of FOLDER, each with the origin its findings are reported at.

    kustomize runs sealed (sandbox.py): over a private copy of the tracked files of the folders the build
    enters, never the work tree, in a child process with the network closed and BUILD_BUDGET's limits."""
    rendering = Rendering()
    command = tool()
    if not command:
        rendering.notes.append(f"{display}: kustomization not built ({TOOL_HINT}); {NOT_BUILT}")
        return rendering
    boundary = repository_boundary(folder)
    inputs = inputs_of(folder, boundary, display)
    entry = kustomization_file(folder)
    rendering.entry = os.path.realpath(entry) if entry is not None else ""
    if inputs.component:
        rendering.built_from = sorted(inputs.files)
        rendering.notes.append(
            f"{display}: a kustomize Component: built only inside the kustomizations that list it under "
            "`components:`, where its patches are linted; not on its own (kustomize cannot build it alone)"
        )
        return rendering
    if inputs.refused:
        rendering.notes.append(f"{display}: kustomization not built: {inputs.refused}; {NOT_BUILT}")
        return rendering
    if _RunClock.remaining() <= 0:
        rendering.notes.append(
            f"{display}: kustomization not built: the run's kustomize time ({RUN_SECONDS:g} s for every build) "
            f"is spent; {NOT_BUILT}"
        )
        return rendering
    with tempfile.TemporaryDirectory(prefix="nodename-lint-kustomize-") as scratch:
        workspace = _Workspace(scratch, boundary, folder)
        refused = workspace.copy(inputs)
        if refused:
            rendering.notes.append(f"{display}: kustomization not built: {refused}; {NOT_BUILT}")
            return rendering
        outcome = workspace.build(command)
        if outcome.limit:
            rendering.notes.append(f"{display}: kustomization not built: kustomize {outcome.limit}; {NOT_BUILT}")
            return rendering
        if outcome.returncode != 0:
            reason = workspace.shown_paths(_build_error(outcome.stderr), display)
            rendering.notes.append(
                f"{display}: kustomize build failed, so `kubectl apply -k` would fail too: "
                f"{reason or f'exit code {outcome.returncode}'}; {NOT_BUILT}"
            )
            return rendering
        files = workspace.read(inputs.files)  # the texts findings are placed in, before the copy goes
    kustomization = workspace.in_copy(entry or os.path.join(folder, KUSTOMIZATION_FILES[0]))
    for document in iter_documents([outcome.stdout.decode("utf-8", "replace")]):
        document.origin = _origin_of(document, workspace, display, kustomization, files)
        rendering.documents.append(document)
    # what the kustomizations name, never what annotations on the output say: a planted origin must
    # not take a file out of the lint
    rendering.built_from = sorted(inputs.files)
    rendering.inputs = rendering.built_from  # --changed-since: a finding changes with any file the build read
    return rendering


class _Workspace:
    """A build's scratch folder: the private copy of what it reads (under a random name: only kustomize
    can write a path into it), a wrapper kustomization asking for origin annotations, and a home."""

    def __init__(self, scratch: str, boundary: str, folder: str) -> None:
        self.scratch, self.boundary = scratch, boundary
        self.root = os.path.join(scratch, secrets.token_hex(16))  # the copy, mirroring the repository
        self.folder = os.path.realpath(folder)
        self.wrapper = os.path.join(scratch, "build")
        self.copied: dict[str, list[str]] = {}  # real path -> its paths in the copy (a linked folder: two)

    def in_copy(self, path: str) -> str:
        return self._at(os.path.realpath(path))

    def _at(self, path: str) -> str:
        """Where PATH (of the repository, links not resolved) lies in the copy."""
        return os.path.normpath(os.path.join(self.root, os.path.relpath(path, self.boundary)))

    def in_repository(self, path: str) -> str:
        """The path in the repository of a path in the copy."""
        return os.path.normpath(os.path.join(self.boundary, os.path.relpath(path, self.root)))

    def copy(self, inputs: Inputs) -> str:
        """Copy the tracked files of the folders the build enters; why it must not run, else ''."""
        folders = sorted(inputs.folders)
        tops = [folder for folder in folders if not any(within(folder, other) for other in folders if other != folder)]
        copies = [(folder, self.in_copy(folder)) for folder in tops]
        copies += [(real, self._at(linked)) for linked, real in sorted(inputs.links.items())]
        bytes_left, files_left = COPY_MAX_BYTES, COPY_MAX_FILES
        try:
            for folder, destination in copies:
                if os.path.exists(destination) and folder not in tops:
                    continue  # a linked folder inside a folder already copied: private_copy followed the link
                made = private_copy(folder, destination, max_bytes=bytes_left, max_files=files_left)
                for relative, real in made.sources.items():
                    copy_path = os.path.join(made.folder, relative)
                    self.copied.setdefault(os.path.realpath(real), []).append(os.path.normpath(copy_path))
                    bytes_left -= os.path.getsize(copy_path)
                    files_left -= 1
        except CopyRefused as exc:
            return str(exc)
        missing = sorted(path for path in inputs.files if path not in self.copied)
        if missing:
            shown = printable_path(os.path.relpath(missing[0]))
            return (
                f"it names {shown}, which is not a file the repository tracks (.git/ and files git does not "
                "track are never overlay content)"
            )
        os.makedirs(self.wrapper)
        with open(os.path.join(self.wrapper, "kustomization.yaml"), "w", encoding="utf-8") as handle:
            handle.write(
                f"resources:\n  - {_quoted(os.path.relpath(self.in_copy(self.folder), self.wrapper))}\n"
                "buildMetadata: [originAnnotations, transformerAnnotations]\n"
            )
        return ""

    def build(self, command: list[str]) -> Outcome:
        """Run kustomize sealed over the copy, within BUILD_BUDGET and what is left of RUN_SECONDS."""
        home = os.path.join(self.scratch, "home")
        os.mkdir(home)
        left = _RunClock.remaining()
        budget = replace(BUILD_BUDGET, wall_seconds=min(BUILD_BUDGET.wall_seconds, left))
        started = time.monotonic()
        outcome = run([*command, self.wrapper], budget, cwd=home)
        _RunClock.spent += time.monotonic() - started
        if outcome.limit and budget.wall_seconds < BUILD_BUDGET.wall_seconds and outcome.limit.endswith("(wall time)"):
            outcome.limit = f"ran out of the run's kustomize time ({RUN_SECONDS:g} s for every build)"
        elif outcome.limit:
            outcome.limit += f" (the budget of one build: {BUILD_BUDGET.describe()})"
        return outcome

    def read(self, files: set[str]) -> _FileCache:
        """The texts of FILES (real paths) as copied: the only files origins may name."""
        cache = _FileCache()
        for real in files:
            copies = self.copied.get(real, [])
            try:
                text = read_regular(copies[0], COPY_MAX_BYTES).decode("utf-8-sig") if copies else ""
            except (OSError, UnicodeDecodeError, TooBig):
                text = ""
            cache.texts.update(dict.fromkeys(copies, text))
        return cache

    def shown_paths(self, text: str, display: str) -> str:
        """kustomize's message with the copy's and the wrapper's paths as the user knows them."""
        text = _WRAPPER_PREFIX.sub("", text, count=1)
        folder = self.in_copy(self.folder)
        here = os.path.relpath(self.boundary)
        for path, shown in (
            (folder, display),
            (os.path.relpath(folder, self.wrapper), display),
            (self.root, here),
            (os.path.relpath(self.root, self.wrapper), here),
            (self.wrapper, "<build>"),
            (self.scratch, "<scratch>"),
        ):
            text = text.replace(path, shown)
        return text[:MAX_REASON_CHARS]


def _build_error(stderr: str) -> str:
    """The line of kustomize's stderr that says what failed: kubectl's klog error (quoted, or a `<` block
    of tab-indented lines), kustomize's `Error: `, else the last line that is not a warning."""
    lines = stderr.splitlines()
    for index, line in enumerate(lines):
        before, found, value = line.partition(_KLOG_FAILURE)
        if found and before.startswith("E"):
            if value.strip() == "<":
                block = [
                    rest.strip() for rest in itertools.takewhile(lambda rest: rest.startswith("\t"), lines[index + 1 :])
                ]
                return " ".join(part for part in block if part)
            return _go_unquoted(value.strip())
        if line.startswith(("Error: ", "error: ")):
            return line.partition(": ")[2]
    meaningful = [line.strip() for line in lines if line.strip() and "warning" not in line[:12].lower()]
    return meaningful[-1] if meaningful else ""


def _go_unquoted(value: str) -> str:
    """A Go-quoted string (klog's `err="..."`) as its text."""
    try:
        text = json.loads(value)
    except ValueError:
        return value.strip('"').replace('\\"', '"').replace("\\\\", "\\")
    return text if isinstance(text, str) else value


def repository_boundary(folder: str) -> str:
    """The folder a kustomization's bases must stay in: its git work tree (the nearest folder above
    holding `.git`), else the current folder when it lies inside that, else the kustomization's own."""
    real = os.path.realpath(folder)
    root = repository_root(real)
    if os.path.exists(os.path.join(root, ".git")):
        return root
    here = os.path.realpath(os.getcwd())
    return here if within(real, here) else real


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _FileCache:
    """The texts of the files a build read, from its private copy (keyed by their paths there), and
    their composed documents. Nothing else is ever opened: origin annotations can be planted."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def readable(self, path: str) -> bool:
        return path in self.texts

    def text(self, path: str) -> str:
        return self.texts.get(path, "")

    def documents(self, path: str) -> list[Document]:
        return [document for document in iter_documents([self.text(path)]) if document.root is not None]


def _annotations(document: Document) -> dict[str, Any]:
    found = child(document.root, "metadata")
    annotations = child(found[1], "annotations") if found else None
    value = to_python(annotations[1]) if annotations else None
    return value if isinstance(value, dict) else {}


def _origin_of(
    document: Document, workspace: _Workspace, display: str, kustomization: str, files: _FileCache
) -> BuiltOrigin:
    """Where a built object came from, from the annotations kustomize added (paths relative to the
    wrapper; one that does not name a file the build read in the copy is not kustomize's)."""
    wrapper = workspace.wrapper
    annotations = _annotations(document) if document.root is not None else {}
    origin = yaml_value(annotations.get(ORIGIN_ANNOTATION)) or {}
    resource = None
    if isinstance(origin, dict) and isinstance(origin.get("path"), str) and "repo" not in origin:
        resource = os.path.normpath(os.path.join(wrapper, origin["path"]))
        resource = resource if files.readable(resource) else None
    configured = yaml_value(annotations.get(TRANSFORMATIONS_ANNOTATION)) or []
    inner: list[str] = []  # kustomize lists the transformers in the order they ran: inner kustomizations first
    for step in configured if isinstance(configured, list) else []:
        where = step.get("configuredIn") if isinstance(step, dict) else None
        if isinstance(where, str):
            path = os.path.normpath(os.path.join(wrapper, where))
            if path != kustomization and path not in inner and files.readable(path):
                inner.append(path)
    return BuiltOrigin(workspace, display, kustomization, resource, [kustomization, *reversed(inner)], files)


class BuiltOrigin(Origin):
    """A built object: its findings go to the patch that wrote the value, else to its resource file.

    Its paths are those of the build's private copy; reports show them as paths of the repository."""

    def __init__(
        self,
        workspace: _Workspace,
        display: str,
        kustomization: str,
        resource: str | None,
        kustomizations: list[str],
        files: _FileCache,
    ) -> None:
        self.folder, self.in_repository = workspace.folder, workspace.in_repository
        self.display, self.kustomization = display, kustomization
        self.resource, self.kustomizations, self.files = resource, kustomizations, files
        self.shown: dict[str, str] = {}  # reported path -> path in the copy
        self.file = self._shown(resource or kustomization)
        self.text = files.text(resource or kustomization)

    def _shown(self, path: str) -> str:
        """A path as the user sees it: under the folder they named, or relative to the current folder."""
        real = self.in_repository(path)
        relative = os.path.relpath(real, self.folder)
        shown = (
            joined(self.display, relative) if not relative.startswith("..") else printable_path(os.path.relpath(real))
        )
        self.shown[shown] = path
        return shown

    def text_of(self, file: str) -> str:
        return self.files.text(self.shown[file]) if file in self.shown else ""

    def place(self, obj: Manifest, path: Path) -> tuple[str, int, int, str]:
        for kustomization in self.kustomizations:  # the outermost first: its transformers ran last
            # a kustomization's `namespace:` runs after its patches (and an inner one's): it sets the namespace
            found = _namespace_line(kustomization, self.files) if path[:2] == ("metadata", "namespace") else None
            found = found or _in_patches(kustomization, obj, path, self.files)
            if found is not None:
                file, line, column = found
                return self._shown(file), line, column, ""
        if self.resource is None:
            note = " (kustomize names no file this object came from: reported at the kustomization)"
            return self._shown(self.kustomization), 1, 1, note
        line, column, exact = _in_resource(self.resource, obj, path, self.files)
        note = "" if exact else " (the built object differs from its resource file here: reported at the nearest key)"
        return self._shown(self.resource), line, column, note


def _namespace_line(kustomization: str, files: _FileCache) -> tuple[str, int, int] | None:
    """(file, line, column) of a kustomization's `namespace:` key, None when it sets no namespace."""
    if "namespace" not in files.text(kustomization):
        return None
    documents = files.documents(kustomization)
    found = child(documents[0].root, "namespace") if documents else None
    value = getattr(found[1], "value", None) if found is not None else None
    if found is None or not isinstance(value, str) or not value:
        return None
    mark = found[0].start_mark
    return kustomization, documents[0].line_offset + mark.line + 1, mark.column + 1


def _steps(entry: Any) -> list[tuple[Any, Any]]:
    """(patch file or inline text, target) of each patch a kustomization lists, in order."""
    found: list[tuple[Any, Any]] = []
    if not isinstance(entry, dict):
        return found
    for patch in entry.get("patchesStrategicMerge") or []:
        found.append((patch, None))
    for patch in entry.get("patchesJson6902") or []:
        if isinstance(patch, dict):
            found.append((patch.get("path") or patch.get("patch"), patch.get("target")))
    for patch in entry.get("patches") or []:
        if isinstance(patch, dict):
            found.append((patch.get("path") or patch.get("patch"), patch.get("target")))
    return found


def _in_patches(kustomization: str, obj: Manifest, path: Path, files: _FileCache) -> tuple[str, int, int] | None:
    """(file, line, column) of the last patch of KUSTOMIZATION that writes PATH of OBJ, else None."""
    text = files.text(kustomization)
    if "patch" not in text:
        return None
    documents = files.documents(kustomization)
    if not documents:
        return None
    spec = to_python(documents[0].root)
    base = os.path.dirname(kustomization)
    hit = None
    for index, (patch, target) in enumerate(_steps(spec)):
        if not isinstance(patch, str) or not _targets(target, obj):
            continue
        if _is_inline(patch):
            where = _inline_patch_line(documents[0], spec, index, patch, obj, path)
            if where is not None:
                hit = (kustomization, *where)
            continue
        file = os.path.normpath(os.path.join(base, patch))
        for document in files.documents(file):
            found = _patch_writes(to_python(document.root), document, obj, path, target is None)
            if found is not None:
                hit = (file, *found)
    return hit


def _is_inline(patch: str) -> bool:
    """An inline patch (YAML text) rather than the path of a patch file."""
    return "\n" in patch or (":" in patch and not patch.strip().endswith((".yaml", ".yml", ".json")))


def _targets(target: Any, obj: Manifest) -> bool:
    """Whether a patch's target selector picks OBJ (no target: the patch names its object itself)."""
    if not isinstance(target, dict):
        return True
    checks = {"kind": obj.kind, "name": obj.name, "namespace": obj.namespace}
    for key, actual in checks.items():
        wanted = target.get(key)
        if not isinstance(wanted, str) or not wanted:
            continue
        # targets name objects before a namePrefix/nameSuffix; kustomize reads them as anchored regexps
        if not (_go_regexp_matches(wanted, actual or "") or (key == "name" and wanted in (actual or ""))):
            return False
    return True


_REGEXP_SYNTAX = frozenset("\\.+*?()|[]{}^$")


def _go_regexp_matches(pattern: str, text: str) -> bool:
    """Whether kustomize's anchored target regexp PATTERN matches TEXT (Go's regexp: RE2 syntax, linear time).

    Python's `re` is neither: `(a|a)*c` backtracks for ever and `\\pL` is an error. A pattern RE2 cannot
    compile (or no RE2 engine) matches nothing: the finding then stays at the object's resource file."""
    if _REGEXP_SYNTAX.isdisjoint(pattern):
        return pattern == text
    compiled = _go_regexp(pattern)
    return compiled is not None and compiled.fullmatch(text) is not None


@functools.lru_cache(maxsize=256)
def _go_regexp(pattern: str) -> Any:
    try:
        import re2  # startup: RE2 loads only for a kustomization whose patch targets are regexps
    except ImportError:
        return None
    options = re2.Options()
    options.log_errors = False  # RE2 would print its parse errors on stderr, unescaped
    try:
        return re2.compile(pattern, options)
    except re2.error:
        return None


def _patch_writes(
    patch: Any, document: Document, obj: Manifest, path: Path, names_object: bool
) -> tuple[int, int] | None:
    """(line, column) in a patch document that writes PATH: a JSON 6902 op or a strategic merge key."""
    if isinstance(patch, list):  # JSON 6902: the last op whose path is PATH or one of its parents
        hit = None
        for index, op in enumerate(patch):
            if (
                isinstance(op, dict)
                and op.get("op") in ("add", "replace", "copy", "move")
                and _pointer_covers(op.get("path"), path)
            ):
                item = child(document.root, index)
                key = child(item[1], "path") if item else None
                if key is not None:
                    hit = (document.line_offset + key[0].start_mark.line + 1, key[0].start_mark.column + 1)
        return hit
    if not isinstance(patch, dict) or document.root is None:
        return None
    if names_object and not _names(patch, obj):
        return None
    node: Node | None = document.root
    mark = document.root.start_mark
    for step in path:
        found = child(node, _smp_step(node, step))
        if found is None:
            return None
        mark, node = found[0].start_mark, found[1]
    return document.line_offset + mark.line + 1, mark.column + 1


def _names(patch: dict[str, Any], obj: Manifest) -> bool:
    """A strategic merge patch picks objects by kind and name (before a namePrefix/nameSuffix is added)."""
    metadata = patch.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return patch.get("kind") == obj.kind and (not isinstance(name, str) or name in obj.name)


def _smp_step(node: Any, step: str | int) -> str | int:
    """A strategic merge patch lists only the items it changes: a single item stands for the one patched."""
    if isinstance(step, int):
        items = getattr(node, "value", None)
        if isinstance(items, list) and len(items) == 1:
            return 0
    return step


def _pointer_covers(pointer: Any, path: Path) -> bool:
    """A JSON pointer (`/spec/template/spec/nodeName`) equal to PATH or to one of its parents."""
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        return False
    tokens = [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]
    if len(tokens) > len(path):
        return False
    return all(token in ("-", str(step)) for token, step in zip(tokens, path[: len(tokens)], strict=True))


def _inline_patch_line(
    kustomization: Document, spec: Any, index: int, patch: str, obj: Manifest, path: Path
) -> tuple[int, int] | None:
    """(line, column) in kustomization.yaml of an inline patch that writes PATH."""
    parsed = iter_documents([patch])
    for document in parsed:
        if document.root is None:
            continue
        found = _patch_writes(to_python(document.root), document, obj, path, True)
        if found is None:
            continue
        scalar = _inline_scalar(kustomization, spec, index)
        if scalar is None:
            return None
        first = scalar.start_mark.line + (1 if scalar.style in ("|", ">") else 0)
        quote = 1 if scalar.style in ("'", '"') else 0  # a flow scalar's text starts after its quote
        indent = (
            _block_indent(kustomization.text, first) if scalar.style in ("|", ">") else scalar.start_mark.column + quote
        )
        return kustomization.line_offset + first + found[0], indent + found[1]
    return None


def _inline_scalar(kustomization: Document, spec: Any, index: int) -> Any:
    """The scalar node of the INDEX-th patch (in _steps order) of a kustomization."""
    position = 0
    for key in ("patchesStrategicMerge", "patchesJson6902", "patches"):
        entries = spec.get(key) or []
        for number, _ in enumerate(entries):
            if position == index:
                entry = child(kustomization.root, key)
                item = child(entry[1], number) if entry else None
                if item is None:
                    return None
                if key == "patchesStrategicMerge":
                    return item[1]
                found = child(item[1], "patch")
                return found[1] if found else None
            position += 1
    return None


def _block_indent(text: str, line_index: int) -> int:
    lines = text.split("\n")
    if line_index >= len(lines):
        return 0
    line = lines[line_index]
    return len(line) - len(line.lstrip(" "))


def _in_resource(resource: str, obj: Manifest, path: Path, files: _FileCache) -> tuple[int, int, bool]:
    """(line, column, exact) of PATH in the resource document OBJ was built from."""
    from ..model import objects_in

    candidates = [manifest for document in files.documents(resource) for manifest in objects_in(resource, document)]
    same_kind = [manifest for manifest in candidates if manifest.kind == obj.kind]
    named = [manifest for manifest in same_kind if manifest.name == obj.name]
    chosen = named or (same_kind if len(same_kind) == 1 else []) or candidates[:1]
    if not chosen:
        return 1, 1, False
    manifest = chosen[0]
    line, column = manifest.locate(path)
    exact = manifest.get(path) is not None or not path
    return line, column, exact
