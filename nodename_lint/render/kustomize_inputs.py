"""What a kustomization will read, found before kustomize runs: the folders it enters, and what it
must not be allowed to reach.

kustomize fetches a remote resource or base itself (`https://...`, `git@...`, `github.com/org/repo`,
`file:///...`), and a closed proxy does not stop a request to 127.0.0.1: Go sends loopback
requests directly. So every reference of every kustomization the build would enter is read here
first, and a build that names a remote file or base, or a folder outside the repository, never
runs. With kustomize's default root-only loading, the files a kustomization reads lie in its own
folder; only the kustomization folders it names (resources, bases, components, generators) may lie
elsewhere, so the folders found here are all the build can read.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..documents import compose, iter_documents
from ..safe_text import printable_path
from ..yamlnodes import to_python
from . import KUSTOMIZATION_FILES

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
MAX_CONFIG_CHARS = 4 << 20  # a plugin configuration file read for its paths (a longer one: its start)
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
    queue = deque([start])
    seen = {start}
    while queue:
        current = queue.popleft()
        inputs.folders.append(current)
        file = kustomization_file(current)
        spec = _read(file, boundary) if file is not None else None
        if file is not None:
            inputs.files.add(os.path.realpath(file))
        if not isinstance(spec, dict):
            continue  # no kustomization, or one that does not parse: kustomize reports that itself
        if current == start:
            inputs.component = spec.get("kind") == "Component"
        where = _shown(file or current, start, shown)
        for field_name, reference, entered in _references(spec, current):
            if is_remote(reference, current if entered else None):
                inputs.refused = (
                    f"`{field_name}` in {where} names a remote location ({reference[:200]}); nodename-lint never "
                    "fetches remote resources or bases: vendor them into the repository"
                )
                return inputs
            target = os.path.realpath(os.path.join(current, reference))
            if os.path.isfile(target) and within(target, boundary):
                inputs.files.add(target)
            if not entered:
                continue  # a file: root-only loading keeps it inside its kustomization's folder
            if not within(target, boundary):
                inputs.refused = (
                    f"it reads {printable_path(target)}, outside the repository ({printable_path(boundary)})"
                )
                return inputs
            lexical = os.path.normpath(os.path.join(current, reference))
            if lexical != target and os.path.isdir(target) and within(lexical, boundary):
                inputs.links[lexical] = target  # kustomize enters it by its linked name
            if os.path.isdir(target) and target not in seen:
                if len(seen) >= MAX_FOLDERS:
                    inputs.refused = f"it enters more than {MAX_FOLDERS} kustomization folders"
                    return inputs
                seen.add(target)
                queue.append(target)
    return inputs


def _read(file: str, boundary: str) -> Any:
    """A kustomization file's value: only a regular file inside BOUNDARY (it may be a link) is read."""
    return yaml_value(_config_text(file, boundary))


def _references(spec: dict[str, Any], folder: str) -> Iterator[tuple[str, str, bool]]:
    """(field, reference, entered) of every location a kustomization in FOLDER names: ENTERED for a resource,
    base, component or plugin entry (a file, or a kustomization folder the build enters), else a file, such as
    a path in a plugin's configuration (a builtin PatchTransformer's `path:` is loaded like any other)."""
    for name in (*_FOLDER_OR_FILE_FIELDS, *_FILE_LIST_FIELDS):
        for entry in _list(spec.get(name)):
            if not isinstance(entry, str):
                continue
            inline = _inline_config(entry)
            if name in _PLUGIN_FIELDS:
                config = yaml_values(entry) if inline else _plugin_file(folder, entry)
                yield from ((name, path, False) for value in config for path in _config_paths(value))
            if not inline:
                yield name, entry, name in _FOLDER_OR_FILE_FIELDS
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


def _plugin_file(folder: str, entry: str) -> list[Any]:
    """The documents of a plugin configuration file (not a folder, nothing outside FOLDER)."""
    text = _config_text(os.path.join(folder, entry), folder)
    return yaml_values(text) if text is not None else []


def _config_text(path: str, folder: str) -> str | None:
    """The text of a regular file inside FOLDER (links resolved), at most MAX_CONFIG_CHARS; else None."""
    real = os.path.realpath(path)
    if not within(real, folder) or not os.path.isfile(real):
        return None
    try:
        with open(real, encoding="utf-8-sig") as handle:
            return handle.read(MAX_CONFIG_CHARS)
    except (OSError, UnicodeDecodeError):
        return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _inline_config(entry: str) -> bool:
    """Whether kustomize reads a list entry as YAML it holds rather than a path: it parses to a mapping."""
    return ("\n" in entry or ":" in entry) and isinstance(yaml_value(entry), dict)


def yaml_values(text: str) -> list[Any]:
    """The plain values of the documents of a YAML stream that parse."""
    values = []
    for document in iter_documents([text]):
        if document.error is None and document.root is not None:
            try:
                values.append(to_python(document.root))
            except Exception:  # as in yaml_value
                continue
    return values


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
