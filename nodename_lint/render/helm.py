"""Render a Helm chart folder the way `helm template` does, and place findings on template lines.

Engines, in order: the helm-python-sdk package (Helm v4 as a native library, rendered in this
process; `pip install helm-python-sdk`, or the `helm` extra), else a `helm` binary on PATH (`helm template`),
else the chart is skipped with a note. Either engine sees only a private copy of the chart made
of its regular files and of symlinks that stay inside the chart: `.Files.Get` and a symlinked
template can read nothing else. Neither engine contacts a cluster (`lookup` returns nothing,
`getHostByName` is off) or the network (subcharts come only from the chart's charts/ folder).
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from multiprocessing.util import Finalize
from typing import TYPE_CHECKING, Any

from ..safe_text import printable_path
from . import CHART_FILE, Origin, helm_child, joined
from .chart_copy import ChartCopy, chart_folders, declaring_file, prepare
from .kustomize import repository_boundary
from .sandbox import COPY_MAX_BYTES, Budget, CopyRefused, Outcome, TooBig, Worker, read_regular, run
from .template_lines import TemplateDocument, find_line, outline, pick_document
from .types import Rendering, RenderOptions, RenderProblem

if TYPE_CHECKING:
    from ..model import Manifest, Path

RULE = "helm-render"
SDK_HINT = "install the Helm engine: pip install helm-python-sdk, or put helm on PATH"
# Helm names the template and position of a failure as `template: web/templates/x.yaml:12:20:`,
# `execution error at (web/templates/x.yaml:4:8):`, `YAML parse error on web/templates/x.yaml:`, or (Helm 4)
# at the start of a line of its multi-line message: `web/templates/x.yaml:4:18\n  executing ...`.
# Linear: each alternative starts at a literal or a line start, and the name stops at the first space.
_HELM_POSITION = re.compile(
    r"(?:(?:template: |error at \(|parse error on )(?P<template>[^\s:()]+)(?::(?P<line>\d+)(?::(?P<column>\d+))?)?"
    r"|^(?P<template2>[^\s:()]+):(?P<line2>\d+)(?::(?P<column2>\d+))?$)",
    re.MULTILINE,
)
_SPACES = re.compile(r"\s+")
# A template's `required` or `fail` call, as Helm's engine words it (cleanupExecError): the chart's own message
_CHART_CHECK = re.compile(r"execution error at \([^()\s]+\): (.*)", re.DOTALL)
_SOURCE_COMMENT = re.compile(r"^# Source: (.+)$", re.MULTILINE)
MAX_CHART_BYTES = COPY_MAX_BYTES  # a chart (or values file) bigger than this is not one someone reviews
MAX_TEMPLATE_BYTES = COPY_MAX_BYTES
_MISSING_IN_CHARTS = re.compile(r"found in Chart\.yaml, but missing in charts/ directory: ([^\n]+)")


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
    """Render the chart in FOLDER sealed (a private copy, a child process with a budget); its templates are
    reported as DISPLAY/templates/..."""
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
    budget = options.budget or Budget()
    with tempfile.TemporaryDirectory(prefix="nodename-lint-chart-") as scratch:
        copy_folder = os.path.join(scratch, "chart")
        try:
            chart = prepare(folder, copy_folder, repository_boundary(folder))
        except CopyRefused as exc:
            rendering.problems.append(
                RenderProblem(
                    RULE,
                    joined(display, CHART_FILE),
                    1,
                    1,
                    f"the chart was not rendered, so none of it was checked: {exc}",
                    "keep the chart to its own files (move large files out of the chart folder), "
                    "and run nodename-lint where git can list them",
                    severity="warning",
                )
            )
            return rendering
        if CHART_FILE not in chart.sources and CHART_FILE in chart.untracked:
            rendering.problems.append(
                RenderProblem(
                    RULE,
                    joined(display, CHART_FILE),
                    1,
                    1,
                    "the chart was not checked: git does not track its Chart.yaml, and nodename-lint renders a "
                    "chart from the files git tracks only (a file an earlier step wrote is never chart content)",
                    f"git add {display} to lint it",
                    severity="warning",
                )
            )
            return rendering
        _copy_notes(rendering, display, chart)
        rendering.inputs = sorted({*chart.sources.values(), *(os.path.realpath(path) for path in values_files)})
        try:
            values = [_read_values(path) for path in values_files]
            if which == "sdk":
                rendered = _render_sdk(copy_folder, values, release, namespace, budget)
            else:
                rendered = _render_binary(copy_folder, scratch, values, release, namespace, budget)
        except _MissingDependencies as missing:
            rendering.problems.append(_missing_dependencies_problem(missing.names, folder, display))
            return rendering
        except _OverBudget as exc:
            rendering.problems.append(_over_budget_problem(str(exc), display, budget, values_note))
            return rendering
        except _RenderFailed as failure:
            rendering.problems.append(
                _failure_problem(
                    str(failure).replace(copy_folder, display),
                    chart,
                    display,
                    values_note,
                    values_given=bool(values_files),
                )
            )
            return rendering
        for name, text in rendered.items():
            relative = name.split("/", 1)[1] if "/" in name else name
            base = os.path.basename(relative)
            if base == "NOTES.txt" or base.startswith("_") or not text.strip():
                continue
            file, template_text = _template_file(chart, display, relative)
            documents = list(_documents(text))  # composed once: counted here, linted later
            rendering.add(documents, TemplateOrigin(file, template_text, name, len(documents), values_note, namespace))
    return rendering


def _copy_notes(rendering: Rendering, display: str, chart: ChartCopy) -> None:
    """What the copy left out and what it did not follow, one note per kind of entry."""
    rendering.notes.extend(f"{display}: {note}" for note in chart.notes)
    rendering.notes.extend(
        f"{display}: {printable_path(path)}: left out of the render: {printable_path(why)}"
        for path, why in chart.left_out
    )
    if chart.untracked:  # names of the work tree: any bytes (a text report wrote a name's 0xff as it is)
        shown = ", ".join(map(printable_path, chart.untracked[:5])) + (
            f" and {len(chart.untracked) - 5} more" if len(chart.untracked) > 5 else ""
        )
        rendering.notes.append(
            f"{display}: left out of the render, as git does not track them (git add them to lint them): {shown}"
        )


def _documents(text: str) -> Any:
    from ..documents import iter_documents

    return iter_documents([text])


def _template_file(chart: ChartCopy, display: str, relative: str) -> tuple[str, str]:
    """(reported path, text) of the template Helm names RELATIVE (charts/SUBCHART-NAME/templates/...),
    read from the private copy only. A template of a packaged subchart (.tgz) has no file of its own in
    the repository: it is reported at the chart's Chart.yaml. A template copied from elsewhere in the
    repository (a symlinked sibling chart, a file:// dependency) is reported at its own file."""
    in_copy = copy_path(chart.folder, relative)
    source = chart.sources.get(in_copy or "")
    if in_copy is None or source is None:
        return joined(display, CHART_FILE), ""
    try:
        text = read_regular(os.path.join(chart.folder, in_copy), MAX_TEMPLATE_BYTES).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError, ValueError):
        return joined(display, CHART_FILE), ""
    if source == os.path.join(os.path.realpath(chart.root), in_copy):
        return joined(display, in_copy), text
    # copied from elsewhere in the repository: its own file, named as the user named the chart (absolute or not)
    return printable_path(source if os.path.isabs(display) else os.path.relpath(source)), text


def copy_path(copy_folder: str, relative: str) -> str | None:
    """The path in the copy of a template Helm names by chart names (charts/NAME/...): subchart folders
    are found by their Chart.yaml's name, as Helm names them (a folder may be called otherwise)."""
    parts = relative.split("/")
    found: list[str] = []
    while len(parts) > 2 and parts[0] == "charts":
        folder = chart_folders(os.path.join(copy_folder, *found, "charts")).get(parts[1])
        if folder is None:
            return None
        found += ["charts", folder]
        parts = parts[2:]
    return "/".join([*found, *parts])


class _RenderFailed(Exception):
    """Helm refused the chart; the message is Helm's."""


class _OverBudget(Exception):
    """The render hit a limit of its budget; the message says which."""


class _MissingDependencies(Exception):
    def __init__(self, names: list[str]) -> None:
        super().__init__(", ".join(names))
        self.names = names


def _read_values(path: str) -> str:
    """A values file's text: a regular file (a FIFO with no writer would hang the run) of chart size at most."""
    try:
        return read_regular(path, MAX_CHART_BYTES).decode("utf-8-sig")
    except TooBig:
        raise _RenderFailed(f"values file {path}: larger than {MAX_CHART_BYTES >> 20} MiB, not read") from None
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise _RenderFailed(f"values file {path}: not a regular file, not read") from None
        raise _RenderFailed(f"values file {path}: cannot read it: {exc}") from None
    except UnicodeDecodeError as exc:
        raise _RenderFailed(f"values file {path}: cannot read it: {exc}") from None


_sdk_worker: tuple[int, Worker] | None = None  # (the process that started it, the helper)


def _render_sdk(chart_folder: str, values: list[str], release: str, namespace: str, budget: Budget) -> dict[str, str]:
    """Render in the sealed helper (helm_child.py), which stays up for the charts that follow. A process
    forked from the one that started it (a --jobs worker) starts its own: the pipes are its parent's."""
    global _sdk_worker
    if _sdk_worker is None or _sdk_worker[0] != os.getpid():
        home = tempfile.mkdtemp(prefix="nodename-lint-helm-")
        _sdk_worker = (os.getpid(), Worker([sys.executable, "-I", helm_child.__file__], budget, home))
        # at exit, also of a --jobs worker process (multiprocessing ends those with os._exit, skipping atexit)
        Finalize(None, _close_worker, args=(_sdk_worker[1], home), exitpriority=0)
    request = {"chart": chart_folder, "values": values, "release": release, "namespace": namespace}
    outcome = _sdk_worker[1].ask(json.dumps(request).encode(), budget)
    if outcome.limit:
        raise _OverBudget(outcome.limit)
    if outcome.returncode != 0:
        raise _RenderFailed(f"Helm's engine ended without an answer ({_last_words(outcome)})")
    answer = json.loads(outcome.stdout)
    if "missing" in answer:
        raise _MissingDependencies(answer["missing"])
    if "error" in answer:
        raise _RenderFailed(answer["error"])
    rendered: dict[str, str] = answer["rendered"]
    return rendered


def _close_worker(worker: Worker, home: str) -> None:
    worker.close()
    shutil.rmtree(home, ignore_errors=True)


def _last_words(outcome: Outcome) -> str:
    """The line of a crashed engine's stderr that says why (Go: `panic: ...`, `fatal error: ...`)."""
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    why = next((line for line in lines if line.startswith(("panic:", "fatal error:"))), lines[-1] if lines else "")
    status = f"signal {-outcome.returncode}" if outcome.returncode < 0 else f"exit code {outcome.returncode}"
    return f"{status}: {why[:400]}" if why else status


def _render_binary(
    chart_folder: str, home: str, values: list[str], release: str, namespace: str, budget: Budget
) -> dict[str, str]:
    """`helm template` sealed: no kubeconfig, no plugins, no repositories, no network."""
    helm = shutil.which("helm")
    assert helm is not None
    command = [helm, "template", release, chart_folder, "--namespace", namespace]
    for index, text in enumerate(values):
        path = os.path.join(home, f"values-{index}.yaml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        command += ["--values", path]
    outcome = run(command, budget, cwd=home)
    if outcome.limit:
        raise _OverBudget(outcome.limit)
    if outcome.returncode != 0:
        message = _helm_error(outcome.stderr)
        missing = _MISSING_IN_CHARTS.search(message)
        if missing:
            raise _MissingDependencies([name.strip() for name in missing.group(1).split(",") if name.strip()])
        raise _RenderFailed(message or f"helm template exited {outcome.returncode}")
    rendered = split_template_output(outcome.stdout.decode("utf-8", "replace"))
    # as the library renders them: without the `# Source:` line (the origin already names the template)
    return {name: _SOURCE_COMMENT.sub("", text, count=1) for name, text in rendered.items()}


def _helm_error(stderr: str) -> str:
    """What `helm template` says went wrong: its `Error: ...`, without the warnings before it (`WARNING: This
    chart is deprecated`) nor its advice after (`Use --debug flag to render out invalid YAML`)."""
    text = stderr.strip()
    start = text.find("Error: ")
    if start > 0 and text[:start].endswith("\n"):
        text = text[start:]
    text = text.removeprefix("Error: ")
    return text.removesuffix("Use --debug flag to render out invalid YAML").rstrip()


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


def _failure_problem(
    message: str, chart: ChartCopy, display: str, values_note: str, *, values_given: bool
) -> RenderProblem:
    """A helm-render finding at the template and line Helm names, else at Chart.yaml.

    A chart's own check (`required`, `fail`: Helm's "execution error at (...)") that stops a render with
    the chart's values.yaml alone is a chart asking for values (grafana's loki-canary, linkerd's control
    plane), not a broken one: a warning that it was not checked. With values the run gives, it is an error.
    """
    file, line, column = joined(display, CHART_FILE), 1, 1
    match = _HELM_POSITION.search(message)
    if match:
        template, at, at_column = (
            match.group("template", "line", "column")
            if match.group("template")
            else match.group("template2", "line2", "column2")
        )
        relative = template.split("/", 1)[-1]
        if ".." not in relative.split("/"):
            named, text = _template_file(chart, display, relative)
            if text or named != file:
                file, line, column = named, int(at or 1), int(at_column or 1)
    # Helm 4 writes its message over several indented lines; one line of words reads better in every
    # report than escaped line ends (and no text of it can start a line of its own)
    readable = _SPACES.sub(" ", message).strip()
    chart_check = _CHART_CHECK.match(readable)
    if chart_check and not values_given:
        return RenderProblem(
            RULE,
            file,
            line,
            column,
            f"the chart was not checked: with its own values.yaml it stops at its own check ({values_note}), "
            f"so it needs values from you before Helm renders anything: {chart_check.group(1)}",
            f"give the values it asks for: --helm-values FILE, or per chart in .nodename-lint.yaml "
            f"(helm: {{{display}: {{values: [FILE]}}}})",
            severity="warning",
        )
    return RenderProblem(
        RULE,
        file,
        line,
        column,
        f"Helm cannot render this chart ({values_note}), so none of it can be installed: {readable}",
        "set the values the chart's check asks for"
        if chart_check
        else "fix the template or the values at the position Helm names",
    )


def _over_budget_problem(limit: str, display: str, budget: Budget, values_note: str) -> RenderProblem:
    return RenderProblem(
        RULE,
        joined(display, CHART_FILE),
        1,
        1,
        f"Helm did not finish rendering this chart within nodename-lint's budget ({budget.describe()}): it {limit}, "
        f"so none of it was checked ({values_note}); a template that loops or recurses without end "
        "(`range until`, `tpl` calling itself) is the usual cause, and `helm install` would hang or fail the same way",
        "make the chart render with less: bound the loops and recursion in its templates",
    )


def _missing_dependencies_problem(names: list[str], folder: str, display: str) -> RenderProblem:
    """Helm names a dependency once per alias (memcached, memcached, memcached): each name is said once."""
    unique = list(dict.fromkeys(names))
    declared_in = declaring_file(folder, unique)
    return RenderProblem(
        RULE,
        joined(display, declared_in),
        1,
        1,
        f"the chart was not checked: its dependencies {', '.join(unique)} are declared in {declared_in} but "
        "missing in its charts/ folder, so Helm refuses to render or install it; "
        f"`helm dependency build {display}` fetches them",
        f"run `helm dependency build {display}` before nodename-lint (or vendor the dependencies in charts/)",
        severity="warning",
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
