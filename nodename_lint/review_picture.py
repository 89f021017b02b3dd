"""docs/review.svg, README's picture of what a reviewer sees, drawn from the tool's real output.

The GitHub Action prints annotations (`--format github`) and writes a job summary (`--format
markdown`). This draws what GitHub shows of a run over examples/deploy in both formats: the
annotation under the line it points at in the pull request's "Files changed" view, and the
summary's table. Nothing in the picture is typed by hand, so it changes when a message does:
`python -m nodename_lint.regenerate` draws it with the other generated files. No browser is
needed: the SVG is written directly.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape

PICTURE = "docs/review.svg"
EXAMPLE = "examples/deploy"
RUNS = ((EXAMPLE, "--format", "github"), (EXAMPLE, "--format", "markdown"))  # what the picture shows
WIDTH = 960
FONT = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
COLORS = {"error": "#cf222e", "warning": "#9a6700", "notice": "#0969da"}
LABELS = {"error": "Check failure", "warning": "Check warning", "notice": "Check notice"}
ICONS = {"error": "✖", "warning": "⚠", "info": "ℹ"}  # noqa: RUF001 (the symbols GitHub's emoji stand for)
ANNOTATION = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=([^:]+)::(.*)$")


# The stdout of `nodename-lint ARGS` run in the repository (regenerate.Runner.stdout).
Printed = Callable[[tuple[str, ...]], str]


def github_annotations(printed: Printed) -> list[dict[str, str]]:
    """The workflow commands as GitHub reads them (%0A, %0D and %25 decoded)."""
    found = []
    for line in printed(RUNS[0]).splitlines():
        match = ANNOTATION.match(line)
        if match:
            level, file, row, column, title, message = match.groups()
            text = message.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
            found.append({"level": level, "file": file, "line": row, "column": column, "title": title, "text": text})
    return found


def summary(printed: Printed) -> tuple[str, list[list[str]], list[str]]:
    """The job summary's count line, table rows (cells as plain text) and list items."""
    markdown = printed(RUNS[1])
    count = next(line for line in markdown.splitlines() if line.startswith(("Found ", "No problems")))
    rows = [
        [_plain(cell) for cell in line.strip("|").split(" | ")]
        for line in markdown.splitlines()
        if line.startswith("| :")
    ]
    items = [_plain(line[2:]) for line in markdown.splitlines() if line.startswith("- ")]
    return count, rows, items


def _plain(cell: str) -> str:
    """Markdown and HTML of one cell as GitHub displays it: links' text, code without tags, no escapes."""
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell.strip())
    cell = re.sub(r"</?code>", "", cell).replace("`", "")
    cell = re.sub(r"\\(.)", r"\1", cell)
    cell = re.sub(r":(x|warning|information_source): ", lambda m: ICONS[_SEVERITY[m.group(1)]] + " ", cell)
    return html.unescape(cell)


_SEVERITY = {"x": "error", "warning": "warning", "information_source": "info"}


class Drawing:
    """SVG elements top to bottom; `y` is where the next one goes."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.y = 0

    def text(
        self, x: int, text: str, size: int = 13, color: str = "#1f2328", weight: str = "normal", mono: bool = False
    ) -> None:
        family = MONO if mono else FONT
        self.parts.append(
            f'<text x="{x}" y="{self.y}" font-family="{family}" font-size="{size}" font-weight="{weight}" '
            f'fill="{color}" xml:space="preserve">{escape(text)}</text>'
        )

    def rect(self, x: int, y: int, width: int, height: int, fill: str, stroke: str = "none", radius: int = 6) -> None:
        self.parts.append(
            f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="{radius}" fill="{fill}" stroke="{stroke}"/>'
        )

    def svg(self) -> str:
        height = self.y + 16
        body = "\n".join(self.parts)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}">\n<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>\n'
            f"{body}\n</svg>\n"
        )


def draw_annotation(drawing: Drawing, found: dict[str, str], root: Path) -> None:
    """The file's lines around the finding, and GitHub's annotation box under the line it names."""
    lines = (root / found["file"]).read_text(encoding="utf-8").splitlines()
    at = int(found["line"])
    shown = range(max(1, at - 3), min(len(lines), at + 1) + 1)
    top = drawing.y
    drawing.y += 28
    drawing.text(24, found["file"], size=13, weight="600", mono=True)
    drawing.y += 14
    for number in shown:
        drawing.y += 20
        if number == at:
            drawing.rect(17, drawing.y - 15, WIDTH - 34, 20, "#fff8c5", radius=0)
        drawing.text(28, f"{number:>3}", size=12, color="#6e7781", mono=True)
        drawing.text(72, lines[number - 1], size=12, mono=True)
        if number == at:
            draw_box(drawing, found)
    drawing.rect(16, top, WIDTH - 32, drawing.y - top + 12, "none", stroke="#d0d7de")
    drawing.y += 12


def draw_box(drawing: Drawing, found: dict[str, str]) -> None:
    message, _, fix = found["text"].partition("\nfix: ")
    wrapped = [*textwrap.wrap(message, 118), "", *textwrap.wrap("fix: " + fix, 118)]
    top = drawing.y + 12
    height = 52 + 17 * len(wrapped)
    drawing.rect(40, top, WIDTH - 80, height, "#ffffff", stroke="#d0d7de")
    drawing.rect(40, top, 4, height, COLORS[found["level"]], radius=0)
    drawing.y = top + 22
    drawing.text(56, f"{LABELS[found['level']]}: line {found['line']}", color=COLORS[found["level"]], weight="600")
    drawing.y += 18
    drawing.text(56, found["title"].replace("nodename-lint ", "nodename-lint / "), size=12, color="#656d76")
    for line in wrapped:
        drawing.y += 17
        drawing.text(56, line, size=12)
    drawing.y = top + height


def draw_summary(drawing: Drawing, printed: Printed) -> None:
    """The job summary: heading, count, the table (messages cut to fit), the list below it."""
    count, rows, items = summary(printed)
    top = drawing.y
    drawing.y += 32
    drawing.text(32, "nodename-lint", size=20, weight="600")
    drawing.y += 26
    drawing.text(32, count)
    columns = [(32, "severity"), (112, "rule"), (282, "where"), (604, "what the cluster will do")]
    drawing.y += 30
    drawing.rect(24, drawing.y - 18, WIDTH - 48, 26, "#f6f8fa", radius=0)
    for x, name in columns:
        drawing.text(x, name, size=12, weight="600")
    for row in rows:
        severity, rule, where, what = row[:4]
        drawing.y += 26
        cells = [severity, rule, where, textwrap.shorten(what, 50, placeholder=" …")]
        for (x, _), cell in zip(columns, cells, strict=True):
            drawing.text(x, cell, size=12, mono=x in (112, 282), color="#0969da" if x == 112 else "#1f2328")
    for item in items:
        drawing.y += 28
        drawing.text(32, "• " + item, size=12, color="#656d76")
    drawing.rect(16, top, WIDTH - 32, drawing.y - top + 16, "none", stroke="#d0d7de")
    drawing.y += 16


def picture(root: Path, printed: Printed) -> str:
    """The SVG of the repository at `root`."""
    drawing = Drawing()
    drawing.y = 24
    drawing.text(16, "Pull request, Files changed: the annotation at the line", size=14, weight="600", color="#656d76")
    drawing.y += 12
    found = github_annotations(printed)
    draw_annotation(drawing, next(item for item in found if item["level"] == "error"), root)
    drawing.y += 32
    drawing.text(16, "Actions run, job summary: every finding", size=14, weight="600", color="#656d76")
    drawing.y += 12
    draw_summary(drawing, printed)
    return drawing.svg()
