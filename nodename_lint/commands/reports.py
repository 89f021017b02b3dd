"""Where each report goes: destinations checked before a run, each format rendered once and written."""

from __future__ import annotations

import os
import sys
from typing import Any, NamedTuple

import click

from ..sources import UsageError
from ..writing import check_output, write_output

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


class TextOptions(NamedTuple):
    """How the text format shows a run (ruff's --quiet, --statistics and --show-source)."""

    quiet: bool = False
    statistics: bool = False
    show_source: bool = False


# Formats that are one document each: two of them on one stream would be unreadable (ruff refuses it too).
_DOCUMENT_FORMATS = ("json", "sarif")


def check_destinations(formats: list[str], output: str | None, outputs: dict[str, str]) -> None:
    """Refuse, before anything is linted, a report file that cannot be written or that a symlink of the
    repository leads to (writing.py), two reports in one file, or a JSON/SARIF document mixed into stdout."""
    destinations = {name: outputs.get(name, output) for name in dict.fromkeys([*formats, *outputs])}
    for name, file in destinations.items():
        if file:
            check_output(file, f"{name} report")
            _check_writable(name, file)
    files = [file for file in destinations.values() if file]
    shared = sorted({file for file in files if files.count(file) > 1})
    if shared:
        names = [name for name, file in destinations.items() if file == shared[0]]
        raise UsageError(
            f"{shared[0]}: {' and '.join(names)} reports cannot share one file; "
            f"give each its own with --output-FORMAT FILE"
        )
    on_stdout = [name for name, file in destinations.items() if file is None]
    documents = [name for name in on_stdout if name in _DOCUMENT_FORMATS]
    if documents and len(on_stdout) > 1:
        raise UsageError(
            f"--format {' and --format '.join(on_stdout)} would write {len(on_stdout)} reports to stdout "
            f"one after the other, and {documents[0]} must be alone to be read: "
            f"send it to a file with --output-{documents[0]} FILE"
        )


def _check_writable(name: str, file: str) -> None:
    """A report file whose folder is missing, or that is a folder, fails the run before it starts, not after."""
    folder = os.path.dirname(os.path.abspath(file))
    if not os.path.isdir(folder):
        problem = "its folder does not exist" if not os.path.exists(folder) else "its folder is not a folder"
    elif os.path.isdir(file):
        problem = "it is a folder"
    elif not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(file) and not os.access(file, os.W_OK)):
        problem = "permission denied"
    else:
        return
    raise UsageError(f"{file}: cannot write the {name} report: {problem}")


def write_reports(
    result: Any,
    formats: list[str],
    output: str | None,
    outputs: dict[str, str],
    color: bool | None,
    text: TextOptions = TextOptions(),
    sarif_result: Any = None,
) -> None:
    """Render each format once to its destination (checked by check_destinations).

    SARIF_RESULT, the run before --changed-since, goes into SARIF: code scanning takes an upload as
    the complete state of the repository and would close the alerts of every file left out.
    """
    from ..report import renderer

    destinations = {name: outputs.get(name, output) for name in dict.fromkeys([*formats, *outputs])}
    use_color = _use_color(color, destinations.get("text"))
    for name, file in destinations.items():
        if name == "text":
            from ..report.text import render as render_text

            report = render_text(
                result, color=use_color, quiet=text.quiet, statistics=text.statistics, show_source=text.show_source
            )
        else:
            report = renderer(name)(sarif_result if name == "sarif" and sarif_result is not None else result)
        if file is None:
            click.echo(report, nl=False, color=use_color)  # click strips ANSI codes off a terminal unless told
            continue
        write_output(file, report, f"{name} report")  # never through a symlink of the repository


def _use_color(flag: bool | None, output: str | None) -> bool:
    if flag is not None:
        return flag
    if output or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()
