"""Which files to lint: paths, folders (recursively), stdin and static Pod folders."""

from __future__ import annotations

import codecs
import errno
import fnmatch
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from .safe_text import note, printable_path

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STATIC_POD_MARKER = "etc/kubernetes/manifests/"  # a file directly in a folder with this path is a static Pod
STDIN = "-"
STDIN_NAME = "<stdin>"
STDIN_BLOCK = 1 << 20
CHART_FILE = "Chart.yaml"
# A chart folder's own parts: Helm renders templates/ and charts/ (crds/ is applied as is, and runs no Pod),
# and these files at its top are the chart's metadata and values, not manifests. Its other YAML files are
# linted on their own: a Chart.yaml must not hide the manifests that lie beside it.
CHART_PARTS = ("templates", "charts", "crds")
CHART_OWN_FILES = (
    CHART_FILE,
    "Chart.lock",
    "values.yaml",
    "values.schema.json",
    "requirements.yaml",
    "requirements.lock",
)


class UsageError(Exception):
    """A problem with what the user asked for (exit code 2)."""


class DamagedState(UsageError):
    """Damage in a cluster state file found only once a rule read a part its reading had kept raw (a JSON
    dump's Pod specs: the List's decoding checks their syntax, not that they are UTF-8). What loaded the file
    names it (commands.options.report_usage_error; the language server's lint)."""


class Source(NamedTuple):
    """One input: a file path (as the user will read it) or stdin."""

    path: str
    is_static_pod: bool = False
    render: str = ""  # "helm" or "kustomize": a folder that is built, then linted (nodename_lint.render)
    # A file of a chart folder outside its templates/, charts/ and crds/: linted on its own, unless it holds
    # template actions (the chart reads it through .Files and tpl), which a note then names.
    in_chart: bool = False

    @property
    def display(self) -> str:
        return STDIN_NAME if self.path == STDIN else printable_path(self.path)


def is_static_pod_path(path: str, static_dirs: Iterable[str]) -> bool:
    """A file the kubelet would read as a static Pod: directly inside a static Pod folder.

    The kubelet reads the non-hidden files of its staticPodPath and does not recurse into
    subfolders ("Not recursing into manifest path", `extractFromDir` in pkg/kubelet/config/file.go),
    so etc/kubernetes/manifests/disabled/x.yaml is never run.
    """
    normalized = path.replace(os.sep, "/")
    folder = normalized.rpartition("/")[0] + "/"
    if ("/" + folder).endswith("/" + STATIC_POD_MARKER):
        return True
    static_dirs = list(static_dirs)
    if not static_dirs:
        return False
    parent = os.path.realpath(os.path.dirname(path) or ".")
    return any(parent == os.path.realpath(folder) for folder in static_dirs)


def roots_of(paths: Iterable[str]) -> list[str]:
    """The real folders a run may read and write: each folder given, and the folder of each file given."""
    roots = []
    for path in paths:
        if path != STDIN:
            roots.append(os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or "."))
    return roots


def is_inside(path: str, roots: Iterable[str]) -> bool:
    """Whether PATH, with every symlink resolved, is one of ROOTS or below one."""
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def discover(paths: Iterable[str], static_dirs: Iterable[str] = (), exclude: Iterable[str] = ()) -> Iterator[Source]:
    """Sources in a stable order; raises UsageError for a path that does not exist.

    Folders are walked recursively for *.yaml, *.yml and *.json, skipping hidden entries,
    following symlinks once (a cycle is never entered twice) and never opening FIFOs or devices.
    A symlink whose target resolves outside the folders given is not followed (a note says so):
    a repository's `rootfs -> /` must not make the run read the machine's files.
    Static Pod folders yield every non-hidden regular file directly inside, like the kubelet.
    """
    static_dirs = list(static_dirs)
    exclude = list(exclude)
    seen: set[object] = set()  # (device, inode) of each file yielded: a file reached twice is linted once
    build_folders: dict[str, tuple[str, str]] = {}  # folder -> the chart or kustomization it lies in
    requested = list(paths) + [folder for folder in static_dirs if folder not in paths]
    roots = [os.path.realpath(path) for path in requested if path != STDIN and os.path.isdir(path)]
    for path in requested:
        if path == STDIN:
            yield Source(STDIN)
            continue
        path = without_dot_prefix(path)
        if not os.path.lexists(path):
            raise UsageError(f"{printable_path(path)}: no such file or folder")
        found: Iterable[tuple[Source, object]]
        if os.path.isdir(path):
            found = _walk(path, static_dirs, exclude, set(), roots)
        elif exclude and is_excluded(path, exclude):
            continue  # a hook passes every changed file: the config's exclude applies to them too
        else:
            found = _file_sources(path, static_dirs, build_folders)
        for source, key in found:
            if key not in seen:
                seen.add(key)
                yield source


def _file_sources(
    path: str, static_dirs: list[str], build_folders: dict[str, tuple[str, str]]
) -> list[tuple[Source, object]]:
    """A file named on the command line (a hook's changed file): a chart's template or values file
    stands for its chart; a kustomization's file is linted, and so is the kustomization's build."""
    if is_static_pod_path(path, static_dirs):
        return [(Source(path, True), _identity(path))]
    from .render import HELM, enclosing_rendered_folder

    folder, kind = enclosing_rendered_folder(path, build_folders)
    found: list[tuple[Source, object]] = [(Source(_relative(folder), render=kind), _identity(folder))] if kind else []
    if kind != HELM:
        found.append((Source(path), _identity(path)))
    elif not _chart_part(os.path.relpath(os.path.abspath(path), folder)):
        found.append((Source(path, in_chart=True), _identity(path)))
    return found


def _chart_part(relative: str) -> bool:
    """Whether a path inside a chart folder is rendered by Helm or is the chart's own metadata."""
    parts = relative.split(os.sep)
    return parts[0] in CHART_PARTS or (len(parts) == 1 and parts[0] in CHART_OWN_FILES)


def _relative(folder: str) -> str:
    relative = os.path.relpath(folder)
    return folder if relative.startswith("..") else relative


def without_dot_prefix(path: str) -> str:
    """`./deploy/x.yaml` as `deploy/x.yaml`, as ruff and yamllint print paths; `.` and `./` stay `.`."""
    while path.startswith("./") and len(path) > 2:
        path = path[2:].lstrip("/") or "."
    return "." if path == "./" else path


def _identity(path: str) -> tuple[int, int] | str:
    try:
        info = os.stat(path)
    except OSError:
        return path  # reported when it is read
    return (info.st_dev, info.st_ino)


def is_excluded(path: str, patterns: list[str]) -> bool:
    """Patterns are absolute globs (config paths are anchored at the config file's folder)."""
    normalized = os.path.abspath(path).replace(os.sep, "/")
    return any(
        fnmatch.fnmatch(normalized, pattern) or fnmatch.fnmatch(normalized, pattern.rstrip("/") + "/*")
        for pattern in patterns
    )


def _walk(
    folder: str,
    static_dirs: list[str],
    exclude: list[str],
    visited: set[tuple[int, int]],
    roots: list[str],
    in_chart: bool = False,
) -> Iterator[tuple[Source, tuple[int, int] | str]]:
    try:
        info = os.stat(folder)
    except OSError:
        return
    identity = (info.st_dev, info.st_ino)
    if identity in visited:
        return
    visited.add(identity)
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        note(f"{printable_path(folder)}: cannot list folder: {exc.strerror}", informational=True)
        return
    static_folder = is_static_pod_path(os.path.join(folder, "x"), static_dirs)
    chart = False
    if not static_folder:
        yield from _build_source(folder, [entry.name for entry in entries], identity)
        chart = any(entry.name == CHART_FILE for entry in entries)  # the render stands for its parts
    for entry in entries:
        if entry.name.startswith(".") or (chart and _chart_part(entry.name)):
            continue
        path = entry.name if folder == "." else entry.path
        if exclude and is_excluded(path, exclude):
            continue
        wanted = static_folder or entry.name.endswith(MANIFEST_SUFFIXES)
        if entry.is_symlink() and not is_inside(path, roots):
            if wanted or os.path.isdir(path):
                _skipped(path, f"a symlink to {os.path.realpath(path)}, outside the folders given; not followed")
            continue
        try:
            info = os.stat(path)
        except OSError as exc:  # a dangling symlink, a symlink loop, a file that vanished, a path too long
            if wanted or exc.errno == errno.ENAMETOOLONG:
                _skipped(path, exc.strerror or str(exc))
            continue
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            if static_folder:
                _skipped(
                    path,
                    'the kubelet does not recurse into subfolders of its staticPodPath ("Not recursing '
                    'into manifest path"): nothing in it runs as a static Pod; its files are linted as ordinary '
                    "manifests",
                    as_note=True,
                )
            yield from _walk(path, static_dirs, exclude, visited, roots, in_chart or chart)
        elif stat.S_ISREG(mode):
            if wanted:
                yield Source(path, static_folder, in_chart=in_chart or chart), (info.st_dev, info.st_ino)
        elif wanted:
            from .render.sandbox import file_kind  # startup: only a special file needs the words for it

            _skipped(path, f"not a regular file ({file_kind(mode)}), not opened")


def _build_source(folder: str, names: list[str], identity: tuple[int, int]) -> Iterator[tuple[Source, tuple[int, int]]]:
    """The chart or kustomization of a folder, as one Source that is built before it is linted."""
    from .render import folder_render_kind

    kind = folder_render_kind(names)
    if kind:
        yield Source(folder, render=kind), identity


def _skipped(path: str, reason: str, as_note: bool = False) -> None:
    note(f"{printable_path(path)}: {'note' if as_note else 'skipped'}: {reason}", informational=True)


def read_blocks(source: Source) -> Iterator[str]:
    """The text of a source, in blocks; stdin is streamed. Raises OSError or UnicodeDecodeError."""
    from .documents import decode  # startup: the CLI imports this module for UsageError; YAML loads on a lint

    if source.path == STDIN:
        yield from _stdin_blocks()
        return
    # O_NONBLOCK: opening a FIFO that has no writer must not hang the run
    with open(os.open(source.path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISFIFO(mode):
            os.set_blocking(handle.fileno(), True)  # a pipe named on purpose, e.g. <(helm template .)
        elif not stat.S_ISREG(mode):
            from .render.sandbox import file_kind  # startup: only a special file needs the words for it

            raise OSError(errno.EINVAL, f"not a regular file ({file_kind(mode)}), not read")
        data = handle.read()
    try:
        text = decode(data)
    except UnicodeDecodeError as exc:
        exc.line = data.count(b"\n", 0, exc.start) + 1  # type: ignore[attr-defined]
        raise
    yield text


def _stdin_blocks() -> Iterator[str]:
    stream = sys.stdin.buffer
    first = stream.read(STDIN_BLOCK)
    if first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        decoder = codecs.getincrementaldecoder("utf-16")()
    else:
        decoder = codecs.getincrementaldecoder("utf-8-sig")()
    block = first
    while block:
        yield decoder.decode(block)
        block = stream.read(STDIN_BLOCK)
    yield decoder.decode(b"", final=True)


def repository_root(start: str | None = None) -> str:
    """The nearest folder at or above START (default: the current one) holding `.git`, else START."""
    start = os.path.abspath(start or os.getcwd())
    folder = start
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return start
        folder = parent


def link_out_of_repository(path: str) -> tuple[str, str] | None:
    """(real path, repository) when a symlink on PATH's way leads out of the repository holding it, else None.

    The repository is the git work tree around PATH (the nearest folder above holding `.git`), else
    the current folder when PATH lies inside it. Links there are the repository's, as untrusted as
    its files (`.nodename-lint.yaml -> ~/.git-credentials`); a path in no repository was named by
    the user, who may link where they like.
    """
    absolute = os.path.abspath(path)
    root = repository_root(os.path.dirname(absolute))
    if not os.path.exists(os.path.join(root, ".git")):
        root = os.getcwd()
        if not absolute.startswith(root.rstrip(os.sep) + os.sep):
            return None
    real = os.path.realpath(absolute)
    return None if is_inside(real, [os.path.realpath(root)]) else (real, root)


def refuse_link_out_of_repository(path: str, flag: str) -> None:
    """UsageError when PATH, a file named with FLAG, is reached through a symlink out of its repository."""
    outside = link_out_of_repository(path)
    if outside is not None:
        raise UsageError(
            f"{flag} {printable_path(path)}: a symlink to {printable_path(outside[0])}, outside the repository "
            f"({printable_path(outside[1])}); nodename-lint does not read it (a repository's links are as untrusted "
            "as its files): give the file's own path"
        )
