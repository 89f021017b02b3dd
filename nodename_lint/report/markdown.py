"""`--format markdown`: a summary for people, e.g. a GitHub job summary ($GITHUB_STEP_SUMMARY).

A headline with the counts, then one table row per finding linking the rule's documentation.
Everything that comes from a manifest, a file name or an API server is escaped (safe_text): a
nodeName of `<img src=...>` or `</details>`, or a backtick in a file name, shows as text.
"""

from __future__ import annotations

from ..findings import RunResult
from ..safe_text import markdown_code, markdown_text
from ..sources import repository_root
from .locations import repository_path, rule_doc_url
from .text import skipped_lines, summary_line

ICONS = {"error": ":x:", "warning": ":warning:", "info": ":information_source:"}


def render(result: RunResult, *, color: bool = False) -> str:
    root = repository_root()
    lines = ["## nodename-lint", "", markdown_text(summary_line(result)), ""]
    if result.findings:
        lines += [
            "| severity | rule | where | what the cluster will do | how to fix |",
            "| --- | --- | --- | --- | --- |",
        ]
        for finding in result.findings:
            if finding.in_file:
                where = f"{repository_path(finding.file, root) or finding.file}:{finding.line}:{finding.column}"
            else:
                where = finding.where()
            rule = f"[`{finding.rule}`]({rule_doc_url(finding.rule)})"
            cells = [
                f"{ICONS[finding.severity]} {finding.severity}",
                rule,
                markdown_code(where),
                markdown_text(finding.message),
                markdown_text(finding.fix),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    extra = skipped_lines(result) + [f"note: {note}" for note in result.notes]
    lines += [f"- {markdown_text(line)}" for line in extra]
    return "\n".join(lines).rstrip("\n") + "\n"
