"""Runs the rules over sources: parse, build objects, check, locate, suppress."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable

from .documents import Document, SyntaxProblem, iter_documents, without_cycle_collection
from .findings import Finding, RunResult
from .model import Manifest, objects_in
from .registry import all_rules
from .rule import Context, Rule, Severity, Violation
from .sources import Source, read_blocks
from .suppress import annotation_ignores, comment_directives, ignored_by_comment
from .yamlnodes import ConversionError

SYNTAX_RULE = "yaml-syntax"


@dataclass
class FileResult:
    """Findings of one source, and the static Pods it holds for the folder-wide checks."""

    source: Source
    findings: list[Finding] = field(default_factory=list)
    objects: int = 0
    static_pods: list[Manifest] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)


class Linter:
    """The active rules with their severities, bound to one run's context."""

    def __init__(self, severities: dict[str, Severity], context: Context) -> None:
        catalogue = all_rules()
        self.context = context
        self.skipped: dict[str, str] = {}
        active: list[tuple[Rule, Severity]] = []
        for rule_id, severity in severities.items():
            rule = catalogue[rule_id]
            reason = self._missing_data(rule)
            if reason:
                self.skipped[rule_id] = reason
            else:
                active.append((rule, severity))
        self.object_rules = [(r, s) for r, s in active if r.check_object and not r.static_pods_only]
        self.static_rules = [(r, s) for r, s in active if r.check_object and r.static_pods_only]
        self.file_rules = [(r, s) for r, s in active if r.check_file]
        self.folder_rules = [(r, s) for r, s in active if r.check_folder]
        self.syntax_severity = severities.get(SYNTAX_RULE)

    def _missing_data(self, rule: Rule) -> str:
        if not rule.needs:
            return ""
        cluster = self.context.cluster
        if cluster is None:
            return "no cluster state (use --cluster-state FILE, or --context/--live for a live cluster)"
        missing = sorted(need for need in rule.needs if not cluster.has(need))
        return "; ".join(cluster.why_missing(need) for need in missing)

    # --- one source ---------------------------------------------------------------------------
    def lint_source(self, source: Source) -> FileResult:
        result = FileResult(source)
        try:
            self._lint_documents(result, iter_documents(read_blocks(source), split_lists=True))
        except UnicodeDecodeError as exc:
            self._syntax(result, None, SyntaxProblem(
                _decode_message(exc), getattr(exc, "line", 1), 1,
                "save the file as UTF-8 (or UTF-16 with a byte-order mark); binary files are not manifests"))
        except OSError as exc:
            self._syntax(result, None, SyntaxProblem(
                f"cannot read the file: {exc.strerror or exc}", 1, 1, "check that the file exists and is readable"))
        result.findings.sort(key=Finding.sort_key)
        return result

    def lint_text(self, text: str, display: str = "<string>", is_static_pod: bool = False) -> FileResult:
        """Lint YAML given as a string (tests, documentation examples)."""
        result = FileResult(Source(display, is_static_pod))
        self._lint_documents(result, iter_documents([text], split_lists=True))
        result.findings.sort(key=Finding.sort_key)
        return result

    def _lint_documents(self, result: FileResult, documents: Iterable[Document]) -> None:
        source = result.source
        file_objects: list[Manifest] = []
        for document in documents:
            if document.error is not None:
                self._syntax(result, document, document.error)
                continue
            # the cyclic GC would rescan the document's whole node tree at each full collection:
            # quadratic in a List of thousands of items; what one document's checks drop is freed after
            with without_cycle_collection():
                for obj in objects_in(
                    source.display, document,
                    default_namespace=self.context.default_namespace, is_static_pod=source.is_static_pod,
                ):
                    result.objects += 1
                    self._check_object(result, obj)
                    if source.is_static_pod:
                        file_objects.append(obj)
        if source.is_static_pod:
            result.static_pods.extend(o for o in file_objects if o.is_pod)
            for rule, severity in self.file_rules:
                self._run(result, rule, severity, lambda: rule.check_file(file_objects, self.context), None)

    def _check_object(self, result: FileResult, obj: Manifest) -> None:
        rules = self.object_rules + self.static_rules if obj.is_static_pod else self.object_rules
        for rule, severity in rules:
            if not self._run(result, rule, severity, lambda: ((obj, v) for v in rule.check_object(obj, self.context)), obj):
                return

    def _run(self, result: FileResult, rule: Rule, severity: Severity, produce, obj: Manifest | None) -> bool:
        """Collect one rule's violations; False when the object cannot be read any further."""
        try:
            for found_obj, violation in produce():
                self._report(result.findings, rule, severity, found_obj, violation)
        except ConversionError as exc:
            if obj is not None:
                mark = exc.node.start_mark
                line = obj.document.line_offset + mark.line + 1
                self._syntax(result, obj.document, SyntaxProblem(str(exc), line, mark.column + 1))
            return False
        except Exception as exc:  # a rule bug must not stop the other files from being checked
            where = f"{result.source.display}" + (f":{obj.locate(())[0]}" if obj is not None else "")
            result.internal_errors.append(f"internal error in rule {rule.id} at {where}: {exc!r}")
        return True

    def locate(self, rule: Rule, severity: Severity, obj: Manifest, violation: Violation) -> Finding:
        line, column = obj.locate(violation.path)
        return Finding(
            rule=rule.id,
            # a severity set in the configuration wins over the rule's per-violation one
            severity=(violation.severity or severity) if severity == rule.severity else severity,
            message=violation.message,
            file=obj.path,
            line=line,
            column=column,
            object=obj.ref,
            fix=violation.fix,
            template=obj.document.template,
        )

    def _report(self, findings: list[Finding], rule: Rule, severity: Severity, obj: Manifest,
                violation: Violation) -> None:
        """Locate a violation and keep it unless the object or a comment suppresses it."""
        finding = self.locate(rule, severity, obj, violation)
        if not self.suppressed(finding, obj):
            findings.append(finding)

    def suppressed(self, finding: Finding, obj: Manifest) -> bool:
        ignored = annotation_ignores(obj)
        if ignored and ("*" in ignored or finding.rule in ignored):
            return True
        directives = comment_directives(obj.document)
        return bool(directives) and ignored_by_comment(directives, finding.line, finding.rule)

    def _syntax(self, result: FileResult, document: Document | None, problem: SyntaxProblem) -> None:
        if self.syntax_severity is None:
            return
        finding = Finding(
            rule=SYNTAX_RULE,
            severity=self.syntax_severity,
            message=f"the API server and the kubelet cannot read this: {problem.message}",
            file=result.source.display,
            line=problem.line,
            column=problem.column,
            object=None,
            fix=problem.hint or "fix the YAML syntax at this position",
            template=document.template if document else None,
        )
        if document is not None and ignored_by_comment(comment_directives(document), problem.line, SYNTAX_RULE):
            return
        result.findings.append(finding)

    # --- a whole run --------------------------------------------------------------------------
    def lint_sources(self, sources: Iterable[Source]) -> RunResult:
        """Lint every source in order, then run the folder-wide static Pod checks."""
        return self.collect(self.lint_source(source) for source in sources)

    def collect(self, file_results: Iterable[FileResult]) -> RunResult:
        """Merge per-file results (from this process or from workers) into the run's result."""
        run = RunResult(skipped_rules=dict(self.skipped))
        static_by_folder: dict[str, list[Manifest]] = {}
        for file_result in file_results:
            run.files += 1
            run.objects += file_result.objects
            run.findings.extend(file_result.findings)
            run.notes.extend(file_result.internal_errors)
            for pod in file_result.static_pods:
                static_by_folder.setdefault(os.path.dirname(pod.path), []).append(pod)
        for rule, severity in self.folder_rules:
            for pods in static_by_folder.values():
                for obj, violation in rule.check_folder(pods, self.context):
                    self._report(run.findings, rule, severity, obj, violation)
        run.findings.sort(key=lambda f: (f.file, *f.sort_key()))
        return run


def _decode_message(exc: UnicodeDecodeError) -> str:
    byte = exc.object[exc.start]
    why = " (a NUL byte: UTF-16 without a byte-order mark, or a binary file)" if byte == 0 else ""
    return f"the file is not UTF-8 or UTF-16 text (byte 0x{byte:02x} at offset {exc.start}){why}"
