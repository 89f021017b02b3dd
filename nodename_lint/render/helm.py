"""Render a Helm chart folder the way `helm template` does, and place findings on template lines.

Engines, in order: the helm-python-sdk package (Helm v4 as a native library, rendered in this
process; `pip install helm-python-sdk`, or the `helm` extra), else a `helm` binary on PATH (`helm template`),
else the chart is skipped with a note. Either engine sees only a private copy of the chart made
of its regular files and of symlinks that stay inside the chart: `.Files.Get` and a symlinked
template can read nothing else. Neither engine contacts a cluster (`lookup` returns nothing,
`getHostByName` is off) or the network (subcharts come only from the chart's charts/ folder).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import stat
import subprocess
import tempfile
from typing import TYPE_CHECKING, Any

from . import CHART_FILE, Origin, Rendering, RenderOptions, RenderProblem, joined
from .template_lines import TemplateDocument, find_line, outline, pick_document

if TYPE_CHECKING:
    from ..model import Manifest, Path

RULE = "helm-render"
SDK_HINT = "install the Helm engine: pip install helm-python-sdk, or put helm on PATH"
# Helm names the template and position of a failure as `template: web/templates/x.yaml:12:20:`,
# `execution error at (web/templates/x.yaml:4:8):` or `YAML parse error on web/templates/x.yaml:`.
_HELM_POSITION = re.compile(
    r"(?:template: |error at \(|parse error on |error calling include: template: )"
    r"(?P<template>[^\s:()]+)(?::(?P<line>\d+)(?::(?P<column>\d+))?)?"
)
_SOURCE_COMMENT = re.compile(r"^# Source: (.+)$", re.MULTILINE)
HELM_TIMEOUT_SECONDS = 120
MAX_CHART_BYTES = 64 << 20  # a chart bigger than this is not a chart someone reviews


def engine() -> str:
    """'sdk', 'binary' or '' (no way to render)."""
    try:
        if importlib.util.find_spec("helm_python") is not None:
            return "sdk"
    except (ImportError, ValueError):  # blocked or half-installed: as if absent
        pass
    return "binary" if shutil.which("helm") else ""


class TemplateOrigin(Origin):
    """A rendered document of one chart template: findings go to the template's own lines."""

    def __init__(self, file: str, text: str, template: str, count: int, values_note: str, namespace: str) -> None:
        self.namespace = namespace
        self.file = file
        self.text = text
        self.template = template
        self.count = count  # documents the template rendered
        self.values_note = values_note
        self._outline: list[TemplateDocument] | None = None

    def place(self, obj: Manifest, path: Path) -> tuple[str, int, int, str]:
        if self._outline is None:
            self._outline = outline(self.text)
        document = pick_document(self._outline, obj.document.index, self.count, obj.kind)
        if document is None:
            note = f" (in template {self.template}, whose line could not be matched; {self.values_note})"
            return self.file, 1, 1, note
        line, column, exact = find_line(document, path)
        if exact:
            return self.file, line, column, ""
        note = f" (reported at the nearest enclosing key the template writes; {self.values_note})"
        return self.file, line, column, note


def render_chart(folder: str, display: str, options: RenderOptions, default_namespace: str) -> Rendering:
    """Render the chart in FOLDER; its templates are reported as DISPLAY/templates/..."""
    rendering = Rendering()
    which = engine()
    if not which:
        rendering.problems.append(
            RenderProblem(
                RULE,
                joined(display, CHART_FILE),
                1,
                1,
                "Helm chart not checked: no Helm engine to render it, so nothing it would install was linted",
                f"{SDK_HINT} (the GitHub Action and the pre-commit hook install helm-python-sdk)",
                severity="warning",
            )
        )
        return rendering
    settings = options.chart_settings(folder)
    values_files = [*options.helm_values, *settings.values]
    release = settings.release or options.helm_release
    namespace = settings.namespace or options.helm_namespace or default_namespace
    values_note = (
        "rendered with "
        + ", ".join(["values.yaml", *(os.path.relpath(path) for path in values_files)])
        + f", release {release!r}"
    )
    with tempfile.TemporaryDirectory(prefix="nodename-lint-chart-") as scratch:
        copy = os.path.join(scratch, "chart")
        try:
            left_out = _copy_inside(folder, copy)
        except _ChartTooBig as exc:
            rendering.problems.append(
                RenderProblem(
                    RULE, joined(display, CHART_FILE), 1, 1, str(exc), "move large files out of the chart folder"
                )
            )
            return rendering
        rendering.notes.extend(
            f"{display}: {os.path.relpath(path, folder)}: left out of the render: {why}" for path, why in left_out
        )
        try:
            if which == "sdk":
                rendered = _render_sdk(copy, values_files, release, namespace)
            else:
                rendered = _render_binary(copy, values_files, release, namespace)
        except _RenderFailed as failure:
            rendering.problems.append(
                _failure_problem(str(failure).replace(copy, display), folder, display, values_note)
            )
            return rendering
    for name, text in rendered.items():
        relative = name.split("/", 1)[1] if "/" in name else name
        if os.path.basename(relative) == "NOTES.txt" or os.path.basename(relative).startswith("_") or not text.strip():
            continue
        file, template_text = _template_file(folder, display, relative)
        documents = list(_documents(text))  # composed once: counted here, linted later
        rendering.add(documents, TemplateOrigin(file, template_text, name, len(documents), values_note, namespace))
    return rendering


def _documents(text: str) -> Any:
    from ..documents import iter_documents

    return iter_documents([text])


def _template_file(folder: str, display: str, relative: str) -> tuple[str, str]:
    """(reported path, text) of a template; a template inside a packaged subchart (.tgz) is
    reported at the chart's Chart.yaml, as it has no file of its own in the repository."""
    path = os.path.join(folder, relative)
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return joined(display, relative), handle.read()
    except (OSError, UnicodeDecodeError):
        return joined(display, CHART_FILE), ""


class _RenderFailed(Exception):
    """Helm refused the chart; the message is Helm's."""


class _ChartTooBig(Exception):
    pass


def _copy_inside(folder: str, destination: str) -> list[tuple[str, str]]:
    """Copy the chart's regular files, following only symlinks that stay inside the chart.

    Returns the entries left out, with the reason. Hidden entries are copied (Helm reads
    .helmignore), FIFOs and devices never opened.
    """
    root = os.path.realpath(folder)
    left_out: list[tuple[str, str]] = []
    total = 0
    visited: set[str] = set()

    def copy_folder(source: str, target: str) -> None:
        nonlocal total
        real = os.path.realpath(source)
        if real in visited:
            return
        visited.add(real)
        os.makedirs(target, exist_ok=True)
        with os.scandir(source) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                path = entry.path
                real_path = os.path.realpath(path)
                if real_path != root and not real_path.startswith(root + os.sep):
                    left_out.append((path, "a symlink to a path outside the chart"))
                    continue
                try:
                    info = os.stat(path)
                except OSError as exc:
                    left_out.append((path, exc.strerror or str(exc)))
                    continue
                if stat.S_ISDIR(info.st_mode):
                    copy_folder(path, os.path.join(target, entry.name))
                elif stat.S_ISREG(info.st_mode):
                    total += info.st_size
                    if total > MAX_CHART_BYTES:
                        raise _ChartTooBig(
                            f"the chart holds more than {MAX_CHART_BYTES >> 20} MiB of files; "
                            "nodename-lint does not render it"
                        )
                    shutil.copyfile(path, os.path.join(target, entry.name))
                else:
                    left_out.append((path, "not a regular file"))

    copy_folder(folder, destination)
    return left_out


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of -f values files (mergeMaps in helm's pkg/cli/values/options.go): maps merge
    key by key, anything else is replaced; Helm then coalesces the result over the chart's values.yaml."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _render_sdk(chart_folder: str, values_files: list[str], release: str, namespace: str) -> dict[str, str]:
    import helm_python

    helm_python.disable_logging()
    values: dict[str, Any] = {}
    try:
        for path in values_files:
            values = _merge(values, helm_python.values_from_yaml(_read_values(path)))
        with helm_python.Chart.load(chart_folder) as chart:
            return chart.render(values or None, name=release, namespace=namespace)
    except helm_python.HelmError as exc:
        raise _RenderFailed(str(exc.detail)) from None


def _read_values(path: str) -> str:
    """A values file's text: a regular file (a FIFO with no writer would hang the run) of chart size at most."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise _RenderFailed(f"values file {path}: not a regular file, not read")
            data = handle.read(MAX_CHART_BYTES + 1)
        if len(data) > MAX_CHART_BYTES:
            raise _RenderFailed(f"values file {path}: larger than {MAX_CHART_BYTES >> 20} MiB, not read")
        return data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise _RenderFailed(f"values file {path}: cannot read it: {exc}") from None


def _render_binary(chart_folder: str, values_files: list[str], release: str, namespace: str) -> dict[str, str]:
    """`helm template` with no kubeconfig, no plugins, no repositories and no network proxy."""
    helm = shutil.which("helm")
    assert helm is not None
    home = os.path.dirname(chart_folder)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "KUBECONFIG": os.devnull,
        "HELM_CACHE_HOME": home,
        "HELM_CONFIG_HOME": home,
        "HELM_DATA_HOME": home,
        "HELM_PLUGINS": home,
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
    }
    command = [helm, "template", release, chart_folder, "--namespace", namespace]
    for path in values_files:
        command += ["--values", path]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            timeout=HELM_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _RenderFailed(f"helm template did not finish: {exc}") from None
    if done.returncode != 0:
        raise _RenderFailed(done.stderr.strip().removeprefix("Error: ") or f"helm template exited {done.returncode}")
    return split_template_output(done.stdout)


def split_template_output(stream: str) -> dict[str, str]:
    """`helm template` output as {template name: rendered text}, by its `# Source:` comments."""
    rendered: dict[str, str] = {}
    parts = re.split(r"^---[ \t]*\n", stream, flags=re.MULTILINE)
    for part in parts:
        match = _SOURCE_COMMENT.search(part)
        if match is None:
            continue
        name = match.group(1).strip()
        previous = rendered.get(name)
        rendered[name] = part if previous is None else previous + "---\n" + part
    return rendered


def _failure_problem(message: str, folder: str, display: str, values_note: str) -> RenderProblem:
    """A helm-render finding at the template and line Helm names, else at Chart.yaml."""
    file, line, column = joined(display, CHART_FILE), 1, 1
    match = _HELM_POSITION.search(message)
    if match:
        relative = match.group("template").split("/", 1)[-1]
        real = os.path.realpath(os.path.join(folder, relative))  # the message may quote the chart's own text
        if real.startswith(os.path.realpath(folder) + os.sep) and os.path.isfile(real):
            file = joined(display, relative)
            line = int(match.group("line") or 1)
            column = int(match.group("column") or 1)
    return RenderProblem(
        RULE,
        file,
        line,
        column,
        f"Helm cannot render this chart ({values_note}), so none of it can be installed: {message}",
        "fix the template or the values at the position Helm names",
    )


def write_chart(folder: str, files: dict[str, str], name: str = "example") -> None:
    """Write a chart named NAME into FOLDER: Chart.yaml, an empty values.yaml unless FILES has one, and FILES."""
    files = {CHART_FILE: f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n", "values.yaml": "", **files}
    for relative, text in files.items():
        path = os.path.join(folder, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


_stream_templates: dict[str, TemplateOrigin | None] = {}


def stream_template_location(template: str, obj: Manifest, path: Path) -> tuple[str, int | None, int | None]:
    """(file, line, column) in the template a `# Source:` comment names, for a rendered stream.

    `helm template CHART` names templates as CHART-NAME/templates/x.yaml: the file is looked up
    from the current folder as named, then without the chart name (run inside the chart folder).
    When no such file exists here, the template's name and no line: the stream's lines are not its lines.
    """
    if template not in _stream_templates:
        _stream_templates[template] = None
        parts = template.split("/")
        for candidate in ("/".join(parts), "/".join(parts[1:])):
            if candidate and ".." not in parts and not os.path.isabs(template) and os.path.isfile(candidate):
                try:
                    with open(candidate, encoding="utf-8-sig") as handle:
                        text = handle.read()
                except (OSError, UnicodeDecodeError):
                    continue
                _stream_templates[template] = TemplateOrigin(
                    candidate, text, template, 0, "rendered outside nodename-lint", ""
                )
                break
    origin = _stream_templates[template]
    if origin is None:
        return template, None, None
    file, line, column, _ = origin.place(obj, path)
    return file, line, column
