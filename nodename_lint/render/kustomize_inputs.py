"""What a kustomization will read, found before kustomize runs: the folders it enters, and what it
must not be allowed to reach.

kustomize fetches a remote resource or base itself (`https://...`, `git@...`, `github.com/org/repo`,
`file:///...`), and a closed proxy does not stop a request to 127.0.0.1: Go sends loopback
requests directly. So every reference of every kustomization the build would enter is read here
first, and a build that names a remote file or base, or a folder outside the repository, never
runs. With kustomize's default root-only loading, the files a kustomization reads lie in its own
folder; only the kustomization folders it names (resources, bases, components, generators) may lie
elsewhere, so the folders found here are all the build can read.

The reader fails closed: a kustomization or plugin configuration it cannot read whole (too large, not
UTF-8, YAML it cannot parse, a link out of the repository) refuses the build, as what kustomize would
read there is unknown. A folder is followed as kustomize follows it in the private copy, where links
are plain folders: `link/../..` climbs from the link's own place (lexically, as Go's filepath.Join),
not from where the link leads, and both must stay inside the repository.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..documents import Document, compose, iter_documents
from ..safe_text import printable_path
from ..yamlnodes import to_python
from . import KUSTOMIZATION_FILES
from .sandbox import TooBig, read_regular

# What kustomize's loaders fetch (api/internal/loader IsRemoteFile, api/internal/git/repospec.go
# NewRepoSpecFromURL): any path with a URL scheme; and, for a resource or base that is not a local file, a
# git location (`git::`, `user@host:`, GitHub's host, `gh:`). Anchored, no nested repetition: linear.
_URL = re.compile(r"(?:git::)?[a-z][a-z0-9+.-]*://", re.I)
_GIT = re.compile(r"git::|[a-z][a-z0-9-]*@|(?:www\.)?github\.com[:/]|gh:", re.I)
# Fields whose entries are kustomization folders or files; generators, transformers and validators may
# also be inline plugin configuration.
_FOLDER_OR_FILE_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")
_PLUGIN_FIELDS = ("generators", "transformers", "validators")
_FILE_LIST_FIELDS = ("crds", "configurations", "patchesStrategicMerge")
_PATH_ITEM_FIELDS = ("patches", "patchesJson6902", "replacements")
_GENERATOR_FIELDS = ("configMapGenerator", "secretGenerator")
_PATH_KEYS = frozenset(("path", "paths", "files", "envs", "env"))
MAX_CONFIG_CHARS = 4 << 20  # a kustomization or plugin configuration file (a larger one refuses the build)
MAX_FOLDERS = 10_000  # kustomization folders one build may enter


@dataclass
class Inputs:
    """What a build reads: the kustomization folders it enters (real paths, the built folder first) and
    the files its kustomizations name (resources, patches, generator sources...); or why it must not run."""

    folders: list[str] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    refused: str = ""
    component: bool = False  # the folder is a `kind: Component`: only a kustomization that lists it builds it
    links: dict[str, str] = field(default_factory=dict)  # a folder named through a symlink -> its real path


def kustomization_file(folder: str) -> str | None:
    """The kustomization file kustomize reads in FOLDER (its own order of names), None when there is none."""
    return next(
        (os.path.join(folder, name) for name in KUSTOMIZATION_FILES if os.path.isfile(os.path.join(folder, name))),
        None,
    )


def is_remote(reference: str, folder: str | None = None) -> bool:
    """Whether kustomize would fetch REFERENCE rather than read a local path: a URL always; with FOLDER (a
    resource or base of a kustomization there, which kustomize first tries as a local file), a git location."""
    text = reference.strip()
    if _URL.match(text):
        return True
    return folder is not None and _GIT.match(text) is not None and not os.path.isfile(os.path.join(folder, text))


def inputs_of(folder: str, boundary: str, shown: str) -> Inputs:
    """The folders the build of FOLDER enters, all inside BOUNDARY (a real path), else the reason it is refused.

    SHOWN is how the user named FOLDER, for the paths in the reason."""
    start = os.path.realpath(folder)
    inputs = Inputs()
    # (real path, the path kustomize reads it at in the copy: a folder entered through a link keeps its name,
    # the real folders from the built one to it)
    queue: deque[tuple[str, str, tuple[str, ...]]] = deque([(start, start, (start,))])
    seen, entered_folders = {start}, set[str]()
    try:
        while queue:
            current, place, chain = queue.popleft()
            if current not in entered_folders:
                entered_folders.add(current)
                inputs.folders.append(current)
            file = kustomization_file(current)
            if file is None:
                continue  # kustomize reports a folder without a kustomization itself
            where = _shown(file, start, shown)
            spec = _read(file, boundary, where)
            inputs.files.add(os.path.realpath(file))
            if not isinstance(spec, dict):
                continue  # empty, or a list or scalar: kustomize refuses it before it loads anything
            if current == start:
                inputs.component = spec.get("kind") == "Component"
            for field_name, reference, entered in _references(spec, current, where):
                if is_remote(reference, current if entered is not False else None):
                    inputs.refused = (
                        f"`{field_name}` in {where} names a remote location ({printable_path(reference[:200])}); "
                        "nodename-lint never fetches remote resources or bases: vendor them into the repository"
                    )
                    return inputs
                if entered is None:
                    continue  # an inline plugin configuration, not a path
                lexical = os.path.normpath(os.path.join(place, reference))
                target = os.path.realpath(lexical)
                if os.path.isfile(target) and within(target, boundary):
                    inputs.files.add(target)
                if not entered:
                    continue  # a file: root-only loading keeps it inside its kustomization's folder
                for path in (lexical, target):  # where kustomize reads it in the copy, and in the work tree
                    if not within(path, boundary):
                        inputs.refused = (
                            f"it reads {printable_path(path)}, outside the repository ({printable_path(boundary)})"
                        )
                        return inputs
                if lexical != target and any(within(folder, target) for folder in chain):
                    # kustomize refuses this loop in the work tree ("cycle detected"); in the copy, where the link
                    # is a folder, it would be entered ever deeper, each place climbing `..` from elsewhere
                    inputs.refused = (
                        f"`{field_name}` in {where} enters {printable_path(reference[:200])}, a symlink to a "
                        "folder this build is already in (a loop: kustomize refuses it too)"
                    )
                    return inputs
                if lexical != target and os.path.isdir(target):
                    inputs.links[lexical] = target  # kustomize enters it by its linked name
                if os.path.isdir(target) and lexical not in seen:
                    if len(seen) >= MAX_FOLDERS:
                        inputs.refused = f"it enters more than {MAX_FOLDERS} kustomization folders"
                        return inputs
                    seen.add(lexical)
                    queue.append((target, lexical, (*chain, target)))
    except Unreadable as exc:
        inputs.refused = str(exc)
    return inputs


class Unreadable(Exception):
    """A kustomization or plugin configuration the reader cannot read whole: what kustomize would load is unknown."""


def _read(file: str, boundary: str, where: str) -> Any:
    """A kustomization file's value: only a regular file inside BOUNDARY (it may be a link), read whole."""
    return _strict_value(_config_text(file, boundary, where), where)


def _references(spec: dict[str, Any], folder: str, where: str) -> Iterator[tuple[str, str, bool | None]]:
    """(field, reference, entered) of every location a kustomization in FOLDER names: ENTERED for a resource,
    base, component or plugin entry (a file, or a kustomization folder the build enters), False for a file, such
    as a path in a plugin's configuration (a builtin PatchTransformer's `path:` is loaded like any other), None
    for an inline plugin configuration or patch (only checked for a location: kustomize loads the entry as a
    path when it is not a configuration it can use, so `https://host/x#a: b` is a URL, not a mapping)."""
    for name in (*_FOLDER_OR_FILE_FIELDS, *_FILE_LIST_FIELDS):
        for entry in _list(spec.get(name)):
            if not isinstance(entry, str):
                continue
            inline = name in (*_PLUGIN_FIELDS, "patchesStrategicMerge") and _inline_config(entry)
            if name in _PLUGIN_FIELDS:
                config = _strict_values(entry, where) if inline else _plugin_file(folder, entry, where)
                yield from ((name, path, False) for value in config for path in _config_paths(value))
            yield name, entry, None if inline else name in _FOLDER_OR_FILE_FIELDS
    for name in _PATH_ITEM_FIELDS:
        for entry in _list(spec.get(name)):
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                yield name, entry["path"], False
    openapi = spec.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield "openapi", openapi["path"], False
    for name in _GENERATOR_FIELDS:
        for generator in _list(spec.get(name)):
            yield from ((name, path, False) for path in _config_paths(generator))


def _config_paths(value: Any) -> Iterator[str]:
    """The file paths a generator or a builtin plugin's configuration loads (`files: [key=path]`, `envs`,
    `path`, `paths`, at any depth: ReplacementTransformer nests them)."""
    if isinstance(value, list):
        for item in value:
            yield from _config_paths(item)
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key in _PATH_KEYS:
            for path in [item] if isinstance(item, str) else _list(item):
                if isinstance(path, str):
                    yield path if is_remote(path) or "=" not in path else path.partition("=")[2]  # key=path
        else:
            yield from _config_paths(item)


def _plugin_file(folder: str, entry: str, where: str) -> list[Any]:
    """The documents of a plugin configuration file in FOLDER ([] for a folder or nothing: kustomize enters a
    folder as a kustomization, and fails on a name that is neither)."""
    path = os.path.join(folder, entry)
    if not os.path.lexists(path) or os.path.isdir(path):
        return []
    shown = f"{entry!r} (named in {where})"
    return _strict_values(_config_text(path, folder, shown), shown)


def _config_text(path: str, folder: str, shown: str) -> str:
    """The whole text of a regular file inside FOLDER (links resolved), at most MAX_CONFIG_CHARS; else Unreadable."""
    real = os.path.realpath(path)
    if not within(real, folder):
        raise Unreadable(f"{shown} leads to {printable_path(real)}, outside {printable_path(folder)}")
    try:
        data = read_regular(real, MAX_CONFIG_CHARS)
        return data.decode("utf-8-sig")
    except TooBig:
        problem = f"it is larger than {MAX_CONFIG_CHARS >> 20} MiB"
    except UnicodeDecodeError:
        problem = "it is not UTF-8"
    except OSError as exc:
        problem = exc.strerror or str(exc)
    raise Unreadable(f"nodename-lint cannot read {shown} ({problem}), so what the build would load is unknown")


def _strict_values(text: str, shown: str) -> list[Any]:
    """The plain values of the documents of TEXT; Unreadable when one does not parse."""
    values = []
    for document in iter_documents([text]):
        values.append(_document_value(document, shown))
    return [value for value in values if value is not None]


def _strict_value(text: str, shown: str) -> Any:
    """The plain value of the one YAML document TEXT (None when it is empty); Unreadable when it does not parse."""
    return _document_value(compose(text), shown)


def _document_value(document: Document, shown: str) -> Any:
    if document.error is not None:
        # the line only: the file may be a link to one that is not the repository's (refused once copied)
        raise Unreadable(
            f"nodename-lint cannot parse {shown} (YAML line {document.error.line}), so what the build would "
            "load is unknown"
        )
    if document.root is None:
        return None
    try:
        return to_python(document.root)
    except Exception:  # a key kubectl cannot convert, a node too deep
        raise Unreadable(f"nodename-lint cannot read {shown}, so what the build would load is unknown") from None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _inline_config(entry: str) -> bool:
    """Whether kustomize reads a list entry as YAML it holds rather than a path: it parses to a mapping."""
    return ("\n" in entry or ":" in entry) and isinstance(yaml_value(entry), dict)


def yaml_value(text: Any) -> Any:
    """The plain value of one YAML document's text (None for anything else, or when it does not parse)."""
    if not isinstance(text, str):
        return None
    document = compose(text)
    if document.error is not None or document.root is None:
        return None
    try:
        return to_python(document.root)
    except Exception:  # a key kubectl cannot convert, a node too deep: kustomize reports it itself
        return None


def within(path: str, folder: str) -> bool:
    """Whether PATH is FOLDER or lies below it (both real paths)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _shown(path: str, start: str, shown: str) -> str:
    relative = os.path.relpath(path, start)
    return printable_path(relative if shown in (".", "") else os.path.join(shown, relative))
