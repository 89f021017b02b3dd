"""What a run produces: findings located in files, and the run's summary."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from .model import ObjectRef

# The order of findings: by position in a file (Finding.sort_key), and in a report file by file, which
# also tells two findings apart (a base linted alone and in an overlay); attrgetter builds the keys in C.
POSITION_ORDER = attrgetter("line", "column", "rule", "message")
REPORT_ORDER = attrgetter("file", "line", "column", "rule", "message")


class Finding:
    """One problem at the file, line and column the user has to change.

    A plain class with __slots__, not a dataclass (startup: CONTRIBUTING.md); equal by its fields.
    """

    __slots__ = (
        "cause",
        "column",
        "file",
        "fix",
        "inputs",
        "line",
        "message",
        "object",
        "rule",
        "severity",
        "template",
        "template_column",
        "template_file",
        "template_line",
    )

    def __init__(
        self,
        rule: str,
        severity: str,
        message: str,
        file: str,
        line: int,
        column: int,
        object: ObjectRef | None,
        fix: str,
        template: str | None = None,
        template_file: str | None = None,
        template_line: int | None = None,
        template_column: int | None = None,
        inputs: frozenset[str] = frozenset(),
        cause: str = "",
    ) -> None:
        self.rule = rule
        self.severity = severity
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.object = object
        self.fix = fix
        self.template = template  # Helm template from the `# Source:` comment of the document
        # For a rendered stream (stdin): the template file found on disk and its line for the finding,
        # so code hosts can attach the finding to the file a pull request changes.
        self.template_file = template_file
        self.template_line = template_line
        self.template_column = template_column
        # Real paths of the files the build of a rendered object read (a chart's copy, values files): the
        # finding counts as changed when any of them changed (--changed-since). Not part of any report.
        self.inputs = inputs
        self.cause = cause  # Violation.cause: what the text report groups by (not a field of the machine formats)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Finding:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in Finding.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable (audit adds to the message)

    def __repr__(self) -> str:
        return f"Finding({', '.join(f'{name}={getattr(self, name)!r}' for name in Finding.__slots__)})"

    @property
    def in_file(self) -> bool:
        """False for a finding about an object read from a cluster (audit): it has no file and line."""
        return bool(self.file)

    def where(self) -> str:
        """path:line:column, or kind/namespace/name for a cluster object."""
        if self.in_file or self.object is None:
            return f"{self.file}:{self.line}:{self.column}"
        return self.object.key()

    def sort_key(self) -> tuple[Any, ...]:
        return POSITION_ORDER(self)

    def to_json(self) -> dict[str, Any]:
        obj = None
        if self.object is not None:
            obj = {
                "apiVersion": self.object.api_version,
                "kind": self.object.kind,
                "namespace": self.object.namespace,
                "name": self.object.name,
            }
            if self.object.generate_name:
                obj["generateName"] = self.object.generate_name
        result: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "file": self.file if self.in_file else None,
            "line": self.line if self.in_file else None,
            "column": self.column if self.in_file else None,
            "object": obj,
            "fix": self.fix,
        }
        if self.template:
            result["template"] = self.template
        if self.template_file:
            result["templateFile"] = self.template_file
            result["templateLine"] = self.template_line
            result["templateColumn"] = self.template_column
        return result

    def code_host_location(self) -> tuple[str, int, int]:
        """(file, line, column) for SARIF and annotations: a stream's finding goes to its template."""
        if self.template_file:  # line 1 when the template was not found to match the line in
            return self.template_file, self.template_line or 1, self.template_column or 1
        return self.file, self.line, self.column


class RunResult:
    """Everything the reporters need: findings in a stable order and what was (not) checked."""

    __slots__ = (
        "cluster",
        "conditional",
        "created",
        "files",
        "findings",
        "internal_errors",
        "notes",
        "objects",
        "skipped_rules",
    )

    def __init__(
        self,
        findings: list[Finding] | None = None,
        files: int = 0,
        objects: int = 0,
        skipped_rules: dict[str, str] | None = None,
        notes: list[str] | None = None,
        internal_errors: list[str] | None = None,
        cluster: str | None = None,
        created: set[tuple[str, str]] | None = None,
        conditional: list[tuple[Finding, tuple[str, str]]] | None = None,
    ) -> None:
        self.findings = [] if findings is None else findings
        self.files = files
        self.objects = objects
        self.skipped_rules = {} if skipped_rules is None else skipped_rules  # rule id -> why it did not run
        self.notes = [] if notes is None else notes  # run-level messages for the summary
        # rules that raised: also in notes; exit code 2
        self.internal_errors = [] if internal_errors is None else internal_errors
        self.cluster = cluster  # audit: the cluster whose objects were checked (there are no files)
        # cluster-scoped objects the run's manifests create (kind, name), and the findings kept because
        # none of them did: another config group's manifests may still create them (cli._merged)
        self.created = set() if created is None else created
        self.conditional = [] if conditional is None else conditional

    def copy(self) -> RunResult:
        """A copy whose lists of findings and notes can change without changing this one's."""
        return RunResult(
            list(self.findings),
            self.files,
            self.objects,
            self.skipped_rules,
            list(self.notes),
            self.internal_errors,
            self.cluster,
            self.created,
            self.conditional,
        )

    def counts(self) -> dict[str, int]:
        counts = {"error": 0, "warning": 0, "info": 0}
        for finding in self.findings:
            counts[finding.severity] += 1
        return counts
