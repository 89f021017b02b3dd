"""`--format github`: GitHub Actions workflow commands that annotate the exact lines of a pull request.

`::error file=deploy/web.yaml,line=17,col=7,title=nodename-lint nodename-in-template::message`;
warnings become `::warning`, infos `::notice`. Files are relative to the repository root, as
GitHub expects. Control and bidi characters from manifests, file names and the API server are
written as visible escapes (safe_text.one_line), then values are escaped by the workflow-command
rules (%, CR, LF; in properties also `:` and `,`), so a message can never end the command early,
inject another one, or reach the log or the annotation as a terminal sequence.
"""

from __future__ import annotations

from ..findings import Finding, RunResult
from ..safe_text import one_line
from ..sources import repository_root
from .locations import repository_path

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def render(result: RunResult, *, color: bool = False) -> str:
    root = repository_root()
    return "".join(
        annotation(finding, repository_path(finding.code_host_location()[0], root) if finding.in_file else None) + "\n"
        for finding in result.findings
    )


def annotation(finding: Finding, path: str | None) -> str:
    """One workflow command; without a repository path (stdin, a cluster object) it is shown on the run.

    A finding about a cluster object (audit) has no line either: its message starts with the object.
    A finding in a rendered stream is annotated on the template its `# Source:` comment names.
    """
    properties: dict[str, object] = {"title": f"nodename-lint {finding.rule}"}
    if finding.in_file:
        _, line, column = finding.code_host_location()
        properties = {"line": line, "col": column, **properties}
    if path is not None:
        properties = {"file": path, **properties}
    # one_line: ESC, BEL or a bidi override would reach the log and the annotation as they are
    message = one_line(("" if finding.in_file else f"{finding.where()}: ") + finding.message)
    message += f"\nfix: {one_line(finding.fix)}" if finding.fix else ""
    joined = ",".join(f"{key}={escape_property(one_line(str(value)))}" for key, value in properties.items())
    return f"::{COMMANDS[finding.severity]} {joined}::{escape_data(message)}"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
