"""A chart's private copy, made ready for a sealed render (helm.py).

On top of sandbox.private_copy (the tracked regular files of the chart folder only):

- subcharts packaged as `charts/*.tgz` are unpacked into folders of the copy (regular files only, no
  path out of the folder, within the copy's size budget), so that the steps below see their files
  too; an untracked `charts/*.tgz` is taken as well, as `helm dependency build` writes one there
  and git usually ignores it;
- `file://` dependencies of Chart.yaml (or requirements.yaml) that lie inside the repository are copied into `charts/`
  (what `helm dependency build` would package), from their tracked files;
- every `values.schema.json` is screened: a `$ref` (or `$dynamicRef`, `$recursiveRef`) that is
  not a fragment of the same document (`#/...`), and a `$schema` other than the published JSON
  Schema drafts, is removed before Helm sees it, so Helm's schema loader never fetches a URL
  (`http://`, `https://`) nor reads a file (`file:///...`, or a relative reference, which Helm
  resolves from `/`), and a note says what was not followed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
from dataclasses import dataclass, field
from typing import Any

from ..documents import compose
from ..yamlnodes import to_python
from . import CHART_FILE
from .sandbox import COPY_MAX_BYTES, COPY_MAX_FILES, CopyRefused, TooBig, private_copy, read_regular

SCHEMA_FILE = "values.schema.json"
_REFERENCE_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
# The drafts Helm's JSON Schema library carries itself (it fetches any other meta-schema).
_KNOWN_DRAFTS = re.compile(r"^https?://json-schema\.org/(?:draft-0[3467]/schema|draft/20(?:19-09|20-12)/schema)#?$")
# Keywords whose value maps names to schemas: a key there (a value named `$schema` or `$ref`) is a name, not
# a keyword, as JSON Schema libraries read it (gojsonschema, santhosh-tekuri/jsonschema: only its values are
# schemas), so it is kept; the schemas it maps to are screened like any other.
_NAMED_SUBSCHEMAS = frozenset(
    ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies")
)
_TGZ_IN_CHARTS = re.compile(r"(?:^|/)charts/[^/]+\.tgz$")
MAX_DEPENDENCY_DEPTH = 8


@dataclass
class ChartCopy:
    """The chart's copy: the sandbox copy's sources and left-out entries, and notes of this module."""

    root: str  # the chart folder
    folder: str  # its copy
    sources: dict[str, str] = field(default_factory=dict)  # path in the copy -> real path in the repository
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (path under the chart, why)
    untracked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # (already in words: '<path>: ...')


def prepare(folder: str, destination: str, boundary: str) -> ChartCopy:
    """Copy the chart in FOLDER to DESTINATION and make it ready (see the module doc).

    BOUNDARY is the repository root `file://` dependencies must stay in. Raises CopyRefused.
    """
    copy = private_copy(folder, destination)
    chart = ChartCopy(folder, destination, dict(copy.sources), list(copy.left_out), list(copy.untracked))
    budget = _Budget(sum(os.path.getsize(os.path.join(destination, name)) for name in copy.sources), len(copy.sources))
    _take_built_dependencies(folder, chart, budget)
    _copy_file_dependencies(folder, destination, "", chart, budget, boundary, {os.path.realpath(folder)})
    _unpack_archives(destination, "", chart, budget, 0)
    _screen_schemas(chart)
    return chart


@dataclass
class _Budget:
    used_bytes: int
    used_files: int

    def take(self, size: int) -> None:
        self.used_bytes += size
        self.used_files += 1
        if self.used_bytes > COPY_MAX_BYTES:
            raise CopyRefused(f"it holds more than {COPY_MAX_BYTES >> 20} MiB of files; nothing was rendered")
        if self.used_files > COPY_MAX_FILES:
            raise CopyRefused(f"it holds more than {COPY_MAX_FILES} files; nothing was rendered")


def _take_built_dependencies(folder: str, chart: ChartCopy, budget: _Budget) -> None:
    """Untracked `charts/*.tgz` files: what `helm dependency build` fetched (regular files only)."""
    for relative in list(chart.untracked):
        if not _TGZ_IN_CHARTS.search(relative):
            continue
        source = os.path.join(os.path.realpath(folder), relative)
        if os.path.realpath(os.path.dirname(source)) != os.path.dirname(source):
            continue  # a folder on its way is a link: not what helm dependency build writes
        try:
            data = read_regular(source, COPY_MAX_BYTES)
        except (OSError, TooBig):  # a special file, or one over the budget: left out like any other
            continue
        budget.take(len(data))
        _write(os.path.join(chart.folder, relative), data)
        chart.sources[relative] = source
        chart.untracked.remove(relative)


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


REQUIREMENTS_FILE = "requirements.yaml"


def declared_dependencies(chart_folder: str) -> list[dict[str, Any]]:
    """The `dependencies:` of CHART_FOLDER/Chart.yaml, then of its requirements.yaml, as mappings.

    Helm's loader reads requirements.yaml (Helm 2's place for them, still in apiVersion v1 charts such as
    linkerd2's) into the same list as Chart.yaml's."""
    return [*_dependencies_in(chart_folder, CHART_FILE), *_dependencies_in(chart_folder, REQUIREMENTS_FILE)]


def _dependencies_in(chart_folder: str, name: str) -> list[dict[str, Any]]:
    """The `dependencies:` of CHART_FOLDER/NAME ([] when there is none or it is unreadable)."""
    try:
        text = read_regular(os.path.join(chart_folder, name), 1 << 20).decode("utf-8-sig", "replace")
    except (OSError, TooBig):  # Helm reports a missing or bad Chart.yaml itself
        return []
    document = compose(text)
    try:
        metadata = to_python(document.root) if document.root is not None else None
    except ValueError:
        return []
    dependencies = metadata.get("dependencies") if isinstance(metadata, dict) else None
    return [item for item in dependencies if isinstance(item, dict)] if isinstance(dependencies, list) else []


def declaring_file(chart_folder: str, names: list[str]) -> str:
    """The file that declares the dependencies NAMES: requirements.yaml when only it names them, else Chart.yaml."""
    in_chart_file = {item.get("name") for item in _dependencies_in(chart_folder, CHART_FILE)}
    in_requirements = {item.get("name") for item in _dependencies_in(chart_folder, REQUIREMENTS_FILE)}
    only_requirements = any(name in in_requirements and name not in in_chart_file for name in names)
    return REQUIREMENTS_FILE if only_requirements else CHART_FILE


def _copy_file_dependencies(
    real_folder: str, copy_folder: str, prefix: str, chart: ChartCopy, budget: _Budget, boundary: str, seen: set[str]
) -> None:
    """Copy the `file://` dependencies of the chart at REAL_FOLDER into COPY_FOLDER/charts/, from the repository."""
    charts = os.path.join(copy_folder, "charts")
    present = set(chart_folders(charts))
    for dependency in declared_dependencies(real_folder):
        name, repository = dependency.get("name"), dependency.get("repository")
        if not isinstance(name, str) or not isinstance(repository, str) or not repository.startswith("file://"):
            continue
        if name in present or not name or "/" in name or name.startswith("."):
            continue
        target = os.path.realpath(os.path.join(real_folder, repository[len("file://") :]))
        where = f"{prefix}{declaring_file(real_folder, [name])}: dependency {name} ({repository})"
        if not (target == boundary or target.startswith(boundary.rstrip(os.sep) + os.sep)):
            chart.notes.append(f"{where}: not copied, it lies outside the repository ({boundary})")
            continue
        if target in seen or len(seen) > MAX_DEPENDENCY_DEPTH:
            continue
        if not os.path.isfile(os.path.join(target, CHART_FILE)):
            continue  # Helm names it missing
        destination = os.path.join(charts, name)
        if os.path.lexists(destination):
            destination = os.path.join(charts, f"{name}.file-dependency")
        dependency_copy = private_copy(target, destination)
        relative = os.path.relpath(destination, chart.folder)
        for path, source in dependency_copy.sources.items():
            budget.take(os.path.getsize(os.path.join(destination, path)))
            chart.sources[os.path.join(relative, path)] = source
        chart.left_out += [(os.path.join(relative, path), why) for path, why in dependency_copy.left_out]
        _copy_file_dependencies(target, destination, relative + "/", chart, budget, boundary, seen | {target})


def chart_folders(charts_folder: str) -> dict[str, str]:
    """{chart name from Chart.yaml: folder} of the subchart folders in CHARTS_FOLDER."""
    names: dict[str, str] = {}
    try:
        entries = sorted(os.listdir(charts_folder))
    except OSError:
        return names
    for entry in entries:
        name = chart_name(os.path.join(charts_folder, entry))
        if name:
            names.setdefault(name, entry)
    return names


_NAME_LINE = re.compile(r"^name:[ \t]*['\"]?([^'\"\s#]+)", re.MULTILINE)


def chart_name(chart_folder: str) -> str:
    """The `name:` of CHART_FOLDER/Chart.yaml ('' when there is none to read)."""
    try:
        text = read_regular(os.path.join(chart_folder, CHART_FILE), 1 << 20).decode("utf-8-sig", "replace")
    except (OSError, TooBig):
        return ""
    match = _NAME_LINE.search(text)
    return match.group(1) if match else ""


def _unpack_archives(copy_folder: str, prefix: str, chart: ChartCopy, budget: _Budget, depth: int) -> None:
    """Unpack the `.tgz` subcharts in COPY_FOLDER/charts (and theirs) into folders beside them."""
    charts = os.path.join(copy_folder, "charts")
    try:
        entries = sorted(os.listdir(charts))
    except OSError:
        return
    for entry in entries:
        path = os.path.join(charts, entry)
        if os.path.isdir(path):
            _unpack_archives(path, f"{prefix}charts/{entry}/", chart, budget, depth + 1)
            continue
        if not entry.endswith(".tgz") or depth > MAX_DEPENDENCY_DEPTH:
            continue
        target = os.path.join(charts, entry[: -len(".tgz")] + ".unpacked")
        try:
            _unpack(path, target, budget)
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
            shutil.rmtree(target, ignore_errors=True)
            chart.notes.append(f"{prefix}charts/{entry}: not a chart archive Helm can read ({exc}); left to Helm")
            continue
        os.remove(path)
        _unpack_archives(target, f"{prefix}charts/{entry}/", chart, budget, depth + 1)


def _unpack(archive: str, target: str, budget: _Budget) -> None:
    """The regular files of a chart archive, below its top folder (as Helm's loader reads it), into TARGET."""
    with tarfile.open(archive, "r|gz") as stream:
        for member in stream:
            budget.take(member.size if member.isreg() else 0)
            parts = member.name.replace("\\", "/").split("/")[1:]
            if not member.isreg() or not parts or any(part in ("", ".", "..") for part in parts):
                continue
            handle = stream.extractfile(member)
            if handle is None:
                continue
            _write(os.path.join(target, *parts), handle.read(member.size))


def _screen_schemas(chart: ChartCopy) -> None:
    for folder, _, files in os.walk(chart.folder):
        if SCHEMA_FILE in files:
            path = os.path.join(folder, SCHEMA_FILE)
            relative = os.path.relpath(path, chart.folder)
            for note in screen_schema(path):
                chart.notes.append(f"{relative}: {note}")


def screen_schema(path: str) -> list[str]:
    """Remove the references of the schema at PATH that lead out of it; notes saying what was not followed."""
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8", "replace")
    try:
        schema = json.loads(text)
    except json.JSONDecodeError:
        return []  # Helm refuses it too, before following anything
    except RecursionError:  # nested deeper than Python reads: Go reads it, so it cannot be screened
        _rewrite(path, {})
        return ["nested too deeply to check its references: not applied (the values were not validated)"]
    notes: list[str] = []
    _screen(schema, notes)
    if notes:
        _rewrite(path, schema)
    return notes


def _rewrite(path: str, schema: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(schema, handle)


def _screen(node: Any, notes: list[str]) -> None:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for key in _REFERENCE_KEYS:
                value = item.get(key)
                if key in item and not (isinstance(value, str) and value.startswith("#")):
                    del item[key]
                    notes.append(
                        f"{key} {_shown(value)} not followed: nodename-lint reads nothing outside the chart "
                        "and fetches nothing, so what it names was not checked"
                    )
            schema = item.get("$schema")
            if "$schema" in item and not (isinstance(schema, str) and _KNOWN_DRAFTS.match(schema)):
                del item["$schema"]
                notes.append(f"$schema {_shown(schema)} not followed (not a published JSON Schema draft)")
            for key, value in item.items():
                if key in _NAMED_SUBSCHEMAS and isinstance(value, dict):
                    stack.extend(value.values())  # its keys name properties or definitions, not keywords
                else:
                    stack.append(value)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 200 else text[:200] + '..."'
