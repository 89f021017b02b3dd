"""The default format: `path:line:col: severity[rule] message`, a fix hint, a summary."""

from __future__ import annotations

from ..findings import RunResult

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def render(result: RunResult, *, color: bool = False) -> str:
    lines: list[str] = []
    for finding in result.findings:
        where = f"{finding.file}:{finding.line}:{finding.column}"
        if finding.template_line:
            where += f" ({finding.template_file}:{finding.template_line}:{finding.template_column})"
        elif finding.template:
            where += f" ({finding.template})"
        label = f"{finding.severity}[{finding.rule}]"
        if color:
            where = f"{_BOLD}{where}{_RESET}"
            label = f"{_COLORS[finding.severity]}{label}{_RESET}"
        lines.append(f"{where}: {label} {finding.message}")
        if finding.fix:
            hint = f"  fix: {finding.fix}"
            lines.append(f"{_DIM}{hint}{_RESET}" if color else hint)
    lines.append(summary_line(result))
    lines.extend(skipped_lines(result))
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines) + "\n"


def summary_line(result: RunResult) -> str:
    counts = result.counts()
    total = len(result.findings)
    detail = ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 and s != 'info' else ''}" for s in ("error", "warning", "info"))
    objects = f"{result.objects} object{'s' if result.objects != 1 else ''}"
    files = f"{result.files} file{'s' if result.files != 1 else ''}"
    if not total:
        return f"No problems found in {objects} of {files}."
    return f"Found {total} problem{'s' if total != 1 else ''} ({detail}) in {objects} of {files}."


def skipped_lines(result: RunResult) -> list[str]:
    """One line per reason: which rules did not run and why."""
    by_reason: dict[str, list[str]] = {}
    for rule, reason in result.skipped_rules.items():
        by_reason.setdefault(reason, []).append(rule)
    return [f"Skipped {', '.join(rules)}: {reason}." for reason, rules in by_reason.items()]
