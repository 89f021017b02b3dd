"""`--format markdown`: a summary for people, e.g. a GitHub job summary ($GITHUB_STEP_SUMMARY).

A headline with the counts, then one table row per finding linking the rule's documentation.
"""

from __future__ import annotations

from ..findings import RunResult
from .locations import repository_path, repository_root, rule_doc_url
from .text import skipped_lines, summary_line

ICONS = {"error": ":x:", "warning": ":warning:", "info": ":information_source:"}


def render(result: RunResult, *, color: bool = False) -> str:
    root = repository_root()
    lines = ["## nodename-lint", "", summary_line(result), ""]
    if result.findings:
        lines += ["| severity | rule | where | what the cluster will do | how to fix |", "| --- | --- | --- | --- | --- |"]
        for finding in result.findings:
            if finding.in_file:
                where = f"{repository_path(finding.file, root) or finding.file}:{finding.line}:{finding.column}"
            else:
                where = finding.where()
            where = where.replace("|", "\\|")  # a table cell ends at `|`, even inside a code span
            rule = f"[`{finding.rule}`]({rule_doc_url(finding.rule)})"
            cells = [f"{ICONS[finding.severity]} {finding.severity}", rule, f"`{where}`",
                     _cell(finding.message), _cell(finding.fix)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    extra = skipped_lines(result) + [f"note: {note}" for note in result.notes]
    lines += [f"- {_cell(line)}" for line in extra]
    return "\n".join(lines).rstrip("\n") + "\n"


def _cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")
