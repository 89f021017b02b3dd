"""The default format: `path:line:col: severity[rule] message`, a fix hint, a summary.

Each finding is one line (and its fix one more): messages quote manifest values and API server
text, so control characters are escaped (safe_text.one_line) and no value can start a line.
Findings of one rule with one cause outside the objects (Finding.cause: a missing namespace, a
node) and one fix are shown once, at the first of them, with a line that counts the others and
names a few of their places; the machine formats keep every finding.
"""

from __future__ import annotations

from collections import Counter

from ..findings import Finding, RunResult
from ..safe_text import one_line

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def render(
    result: RunResult, *, color: bool = False, quiet: bool = False, statistics: bool = False, show_source: bool = False
) -> str:
    """The findings (or, with STATISTICS, one count per rule), then the summary unless QUIET."""
    lines = statistics_lines(result) if statistics else _finding_lines(result, color, show_source)
    if not quiet:
        lines.append(one_line(summary_line(result)))
        lines.extend(one_line(line) for line in skipped_lines(result))
        lines.extend(f"note: {one_line(note)}" for note in result.notes)
    return "\n".join(lines) + "\n" if lines else ""


def _finding_lines(result: RunResult, color: bool, show_source: bool) -> list[str]:
    lines: list[str] = []
    sources = _SourceLines() if show_source else None
    for group in _same_cause(result.findings):
        finding = group[0]
        where = one_line(finding.where())  # an audit finding's object id comes from the API server
        if finding.template_line:
            where += f" ({one_line(finding.template_file or '')}:{finding.template_line}:{finding.template_column})"
        elif finding.template:
            where += f" ({one_line(finding.template)})"
        label = f"{finding.severity}[{finding.rule}]"
        if color:
            where = f"{_BOLD}{where}{_RESET}"
            label = f"{_COLORS[finding.severity]}{label}{_RESET}"
        lines.append(f"{where}: {label} {one_line(finding.message)}")
        if sources is not None:
            lines.extend(sources.excerpt(finding.file, finding.line, finding.column))
        if len(group) > 1:
            more = f"  {_more_line(group)}"
            lines.append(f"{_DIM}{more}{_RESET}" if color else more)
        if finding.fix:
            hint = f"  fix: {one_line(finding.fix)}"
            lines.append(f"{_DIM}{hint}{_RESET}" if color else hint)
    return lines


SHOWN_PLACES = 3  # places of a group's other findings named on its line


def _same_cause(findings: list[Finding]) -> list[list[Finding]]:
    """The findings in groups, in report order: those of one rule, severity, cause and fix together (at the
    place of the first), every finding without a cause on its own."""
    groups: list[list[Finding]] = []
    by_cause: dict[tuple[str, str, str, str], list[Finding]] = {}
    for finding in findings:
        if not finding.cause:
            groups.append([finding])
            continue
        key = (finding.rule, finding.severity, finding.cause, finding.fix)
        group = by_cause.get(key)
        if group is None:
            group = by_cause[key] = []
            groups.append(group)
        group.append(finding)
    return groups


def _more_line(group: list[Finding]) -> str:
    """`and 1,141 more with the same cause (namespace monitoring), 87 files in all: b.yaml:4:3, ... and 1,138 more`.

    The places named are the first finding of each file after the first finding's own, then the next findings
    in order: the breadth of the group at a glance, every place in --format json.
    """
    first, others = group[0], group[1:]
    files = {_file_of(first): 0}  # file (an object, for audit) -> index of its first finding in OTHERS
    for index, finding in enumerate(others):
        files.setdefault(_file_of(finding), index)
    chosen = sorted(list(files.values())[1 : SHOWN_PLACES + 1])
    for index in range(len(others)):  # fewer other files than places: more of their findings
        if len(chosen) >= SHOWN_PLACES:
            break
        if index not in chosen:
            chosen.append(index)
    places = ", ".join(others[index].where() for index in sorted(chosen))
    rest = len(others) - len(chosen)
    where = f", {len(files):,} files in all" if first.in_file and len(files) > 1 else ""
    return one_line(
        f"and {len(others):,} more with the same cause ({first.cause}){where}: {places}"
        + (f" and {rest:,} more" if rest else "")
    )


def _file_of(finding: Finding) -> str:
    return finding.file if finding.in_file else finding.where()


def statistics_lines(result: RunResult) -> list[str]:
    """`COUNT RULE SUMMARY` per rule, most frequent first (ruff's --statistics)."""
    from ..registry import all_rules  # startup: only --statistics loads the catalogue here

    catalogue = all_rules()
    counts = Counter(finding.rule for finding in result.findings)
    if not counts:
        return []
    count_width = len(str(max(counts.values())))
    rule_width = max(len(rule) for rule in counts)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    summaries = {rule: catalogue[rule].summary if rule in catalogue else "" for rule in counts}
    return [f"{count:>{count_width}}  {rule:<{rule_width}}  {summaries[rule]}".rstrip() for rule, count in ordered]


class _SourceLines:
    """The lines of the linted files, read again only for --show-source (stdin has none to show)."""

    def __init__(self) -> None:
        self.files: dict[str, list[str] | None] = {}

    def excerpt(self, file: str, line: int, column: int) -> list[str]:
        """The flagged line with a caret under the column, ruff-style; [] when the file cannot be read."""
        if file not in self.files:
            self.files[file] = self._read(file)
        lines = self.files[file]
        if lines is None or not 1 <= line <= len(lines):
            return []
        text = lines[line - 1]
        gutter = " " * len(str(line))
        caret = "".join(c if c == "\t" else " " for c in text[: column - 1]) + "^"
        return [f"  {line} | {one_line(text)}", f"  {gutter} | {caret}"]

    @staticmethod
    def _read(file: str) -> list[str] | None:
        # startup: only --show-source reads the files again
        from ..documents import decode
        from ..sources import STDIN_NAME

        if file == STDIN_NAME:
            return None
        try:
            with open(file, "rb") as handle:
                return decode(handle.read()).replace("\r\n", "\n").split("\n")
        except (OSError, UnicodeDecodeError):
            return None


def summary_line(result: RunResult) -> str:
    counts = result.counts()
    total = len(result.findings)
    detail = ", ".join(
        f"{counts[s]} {s}{'s' if counts[s] != 1 and s != 'info' else ''}" for s in ("error", "warning", "info")
    )
    objects = f"{result.objects} object{'s' if result.objects != 1 else ''}"
    files = result.cluster or f"{result.files} file{'s' if result.files != 1 else ''}"
    if not total:
        return f"No problems found in {objects} of {files}."
    return f"Found {total} problem{'s' if total != 1 else ''} ({detail}) in {objects} of {files}."


def skipped_lines(result: RunResult) -> list[str]:
    """One short line per reason: how many rules did not run and why (the machine formats name each rule)."""
    by_reason: dict[str, list[str]] = {}
    for rule, reason in result.skipped_rules.items():
        by_reason.setdefault(reason, []).append(rule)
    return [
        f"{', '.join(rules) if len(rules) <= _NAMED_SKIPS else f'{len(rules)} cluster rules'} skipped: {reason}"
        for reason, rules in by_reason.items()
    ]


# A reason that stops more rules than this gives their count, not their names.
_NAMED_SKIPS = 3
