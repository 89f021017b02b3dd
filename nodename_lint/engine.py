"""Runs the rules over sources: parse, build objects, check, locate, suppress."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .documents import (
    DEFAULT_LIMITS,
    Document,
    Limits,
    SyntaxProblem,
    iter_documents,
    names_object_keys,
    without_cycle_collection,
)
from .findings import POSITION_ORDER, REPORT_ORDER, Finding, RunResult
from .model import CLUSTER_SCOPED_KINDS, Manifest, live_list_fields, objects_in
from .registry import all_rules
from .rule import (
    Context,
    GroupCheck,
    GroupKind,
    ObjectCheck,
    ObjectKind,
    ObjectRuleCheck,
    Rule,
    Severity,
    Violation,
)
from .sources import STDIN, STDIN_NAME, Source, UsageError, read_blocks
from .suppress import (
    annotation_ignores,
    comment_directives,
    describe_unknown_ids,
    directives_in,
    ignored_by_comment,
    unknown_comment_ids,
)
from .yamlnodes import ConversionError, lookup

if TYPE_CHECKING:  # startup: render.types is loaded when a folder is built
    from .render.types import Rendering, RenderOptions

SYNTAX_RULE = "yaml-syntax"
SUPPRESSION_RULE = "invalid-suppression"  # its comment half is reported here


class FileResult:
    """Findings of one source, and the static Pods it holds for the folder-wide checks (pickled from a
    `--jobs` worker; a plain class with __slots__, not a dataclass: startup, CONTRIBUTING.md)."""

    __slots__ = (
        "built_from",
        "conditional",
        "created",
        "entry",
        "findings",
        "internal_errors",
        "notes",
        "objects",
        "source",
        "static_pods",
    )

    def __init__(self, source: Source, objects: int = 0) -> None:
        self.source = source
        self.findings: list[Finding] = []
        self.objects = objects
        self.static_pods: list[Manifest] = []
        self.internal_errors: list[str] = []
        self.notes: list[str] = []
        self.built_from: list[str] = []  # real paths of the files a successful build read
        self.entry = ""  # a kustomization: the real path of its kustomization file (Rendering.entry)
        # cluster-scoped objects the file creates (kind, name), and the findings they would make moot
        self.created: set[tuple[str, str]] = set()
        self.conditional: list[tuple[Finding, tuple[str, str]]] = []


class _Unparsed:
    """A file's documents that do not parse, held until its end: a file that does not parse and names no
    apiVersion or kind anywhere is no manifest (JSON with comments or Lines, a dashboard with a comment
    header, a Jinja template, an openssl dump saved as .yml) and is skipped with a note instead."""

    __slots__ = ("findings", "first", "names_objects")

    def __init__(self) -> None:
        self.findings: list[Finding] = []  # their yaml-syntax findings
        self.first: SyntaxProblem | None = None
        self.names_objects = False  # a document, parsed or not, names an apiVersion or kind

    def settle(self, result: FileResult) -> None:
        """Report the held findings, or, for a file that is no manifest, the note that it was skipped."""
        if self.first is None:
            return
        if self.names_objects:
            result.findings.extend(self.findings)
            return
        first = self.first
        result.notes.append(
            f"{result.source.display}:{first.line}:{first.column}: skipped a file that is not a Kubernetes manifest: "
            f"it does not parse ({first.message}) and names no kind or Kubernetes apiVersion"
        )


class ParsedSource:
    """A source read and parsed once and held whole: a live run collects what its objects name,
    fetches that from the cluster, then lints these same documents (see parse_source)."""

    __slots__ = ("documents", "failure", "held_objects", "notes", "rendering", "source")

    def __init__(self, source: Source, rendering: Rendering | None = None) -> None:
        self.source = source
        self.documents: list[Document] = []
        self.rendering = rendering  # a chart or kustomization: what its build gave
        self.failure: UnicodeDecodeError | OSError | None = None  # why reading stopped after `documents`
        self.notes: list[str] = []
        # (id of a document, default namespace) -> its objects, built once by `objects` for the lint to reuse
        self.held_objects: dict[tuple[int, str], list[Manifest]] = {}

    def replay(self) -> Iterator[Document]:
        """The documents as the reader gave them, then its failure, as reading the source again would."""
        yield from self.documents
        if self.failure is not None:
            raise self.failure

    def objects(self, default_namespace: str) -> Iterator[Manifest]:
        """The objects of the documents that parsed, as the rules will see them; kept for the lint, which then
        reads the same objects (and their plain values, already converted) instead of building them again."""
        for document in self.rendering.documents if self.rendering is not None else self.documents:
            if document.error is None:
                key = (id(document), default_namespace)
                if key not in self.held_objects:
                    self.held_objects[key] = list(_objects_of(self.source, document, default_namespace))
                yield from self.held_objects[key]


def parse_source(
    source: Source, render_options: RenderOptions | None, default_namespace: str, limits: Limits | None = None
) -> ParsedSource:
    """Read, build and parse one source into memory, exactly as `Linter.lint_source` streams it.

    Only a live run holds its sources (it must know what they name before it can fetch the cluster
    state the rules need); offline and --cluster-state runs stream one document at a time.
    """
    if source.render:
        from .render.build import render  # startup: only charts and kustomizations load the builders

        return ParsedSource(source, rendering=render(source, render_options, default_namespace))
    parsed = ParsedSource(source)
    with without_cycle_collection():  # as in _lint_documents: no cycles, and a rescan per burst is quadratic
        try:
            blocks = source_blocks(source, parsed.notes)
            for document in iter_documents(blocks, split_lists=True, limits=limits or DEFAULT_LIMITS):
                parsed.documents.append(document)
        except (UnicodeDecodeError, OSError) as exc:  # lint_parsed reports it after the documents before it
            parsed.failure = exc
    return parsed


def source_blocks(source: Source, notes: list[str]) -> Iterator[str]:
    """The text of a source (sources.read_blocks); a file of a chart folder that holds template actions
    is data the chart reads through .Files and tpl, not a manifest: no text, and a note names it."""
    if not source.in_chart:
        yield from read_blocks(source)
        return
    blocks = list(read_blocks(source))
    if any("{{" in block for block in blocks):
        notes.append(
            f"{source.display}: not linted on its own: it lies in a Helm chart folder and holds template actions "
            "({{ }}), so it is data the chart reads (.Files), not a manifest"
        )
        return
    yield from blocks


Check = TypeVar("Check", ObjectCheck, GroupCheck)


class ActiveCheck(Generic[Check]):
    """One check of an active rule, with the severity the configuration sets (None: the rule's own)."""

    __slots__ = ("configured", "function", "rule")
    rule: Rule
    configured: Severity | None
    function: Check

    def __init__(self, rule: Rule, configured: Severity | None, function: Check) -> None:
        self.rule = rule
        self.configured = configured
        self.function = function


class Linter:
    """The active rules' checks, by kind, bound to one run's context.

    `severities` maps each active rule id to the severity the configuration sets for it, or None
    for the rule's own (its default, which a rule may refine per violation). A configured severity
    always wins: `untolerated-taint: error` makes every untolerated taint an error.
    """

    def __init__(
        self,
        severities: Mapping[str, Severity | None],
        context: Context,
        render_options: RenderOptions | None = None,
        *,
        limits: Limits | None = None,
    ) -> None:
        catalogue = all_rules()
        self.context = context
        self.severities = severities
        self.render_options = render_options  # None: the defaults (render.build.render)
        self.limits = limits or DEFAULT_LIMITS
        self.skipped: dict[str, str] = {}
        self.object_checks: dict[ObjectKind, list[ActiveCheck[ObjectCheck]]] = {"object": [], "static-pod": []}
        self.group_checks: dict[GroupKind, list[ActiveCheck[GroupCheck]]] = {"file": [], "folder": []}
        for rule_id, configured in severities.items():
            rule = catalogue[rule_id]
            reason = self._missing_data(rule)
            if reason:
                self.skipped[rule_id] = reason
                continue
            for check in rule.checks:
                if isinstance(check, ObjectRuleCheck):
                    self.object_checks[check.kind].append(ActiveCheck(rule, configured, check.function))
                else:
                    self.group_checks[check.kind].append(ActiveCheck(rule, configured, check.function))
        # The engine reports these two itself (lines of a file, not paths of an object): None when inactive.
        self.syntax_severity = _active_severity(SYNTAX_RULE, severities, catalogue)
        self.suppression_severity = _active_severity(SUPPRESSION_RULE, severities, catalogue)
        self.rule_ids = list(catalogue)
        # rule id -> the active rules whose finding on an object drops this rule's there (Rule.superseded_by)
        self.superseders = {
            rule_id: frozenset(catalogue[rule_id].superseded_by & severities.keys())
            for rule_id in severities
            if catalogue[rule_id].superseded_by & severities.keys()
        }

    def _missing_data(self, rule: Rule) -> str:
        if not rule.needs:
            return ""
        cluster = self.context.cluster
        if cluster is None:
            return "no cluster state (--cluster-state FILE or --context NAME)"
        missing = sorted(need for need in rule.needs if not cluster.has(need))
        return "; ".join(cluster.why_missing(need) for need in missing)

    # --- one source ---------------------------------------------------------------------------
    def lint_source(self, source: Source) -> FileResult:
        """Read, parse and lint one source, one document at a time."""
        return self._lint(source, None)

    def lint_parsed(self, parsed: ParsedSource) -> FileResult:
        """Lint a source parse_source already read: the same result as lint_source, without reading it again."""
        return self._lint(parsed.source, parsed)

    def _lint(self, source: Source, parsed: ParsedSource | None) -> FileResult:
        result = FileResult(source)
        if source.render:
            if parsed is not None and parsed.rendering is not None:
                rendering = parsed.rendering
            else:
                from .render.build import render  # startup: only charts and kustomizations load the builders

                rendering = render(source, self.render_options, self.context.default_namespace)
            self._lint_rendered(result, rendering, parsed.held_objects if parsed is not None else None)
            _sort(result.findings, POSITION_ORDER)
            return result
        if parsed is not None:
            result.notes.extend(parsed.notes)
        documents = (
            parsed.replay()
            if parsed is not None
            else iter_documents(source_blocks(source, result.notes), split_lists=True, limits=self.limits)
        )
        try:
            self._lint_documents(result, documents, parsed.held_objects if parsed is not None else None)
        except UnicodeDecodeError as exc:
            self._syntax(
                result,
                None,
                SyntaxProblem(
                    _decode_message(exc),
                    getattr(exc, "line", 1),
                    1,
                    "save the file as UTF-8 (or UTF-16 with a byte-order mark); binary files are not manifests",
                ),
            )
        except OSError as exc:
            self._syntax(
                result,
                None,
                SyntaxProblem(
                    f"cannot read the file: {exc.strerror or exc}", 1, 1, "check that the file exists and is readable"
                ),
            )
        _sort(result.findings, POSITION_ORDER)
        return result

    def lint_text(
        self, text: str, display: str = "<string>", is_static_pod: bool = False, helm_chart: bool = False
    ) -> FileResult:
        """Lint YAML given as a string (tests, documentation examples); with `helm_chart`, the text
        is the template templates/example.yaml of a chart, rendered first."""
        if helm_chart:
            import tempfile

            from .render.helm import write_chart

            with tempfile.TemporaryDirectory(prefix="nodename-lint-example-") as folder:
                write_chart(folder, {"templates/example.yaml": text})
                return self.lint_source(Source(folder, render="helm"))
        return self.lint_documents(iter_documents([text], split_lists=True, limits=self.limits), display, is_static_pod)

    def lint_documents(
        self, documents: Iterable[Document], display: str = "<string>", is_static_pod: bool = False
    ) -> FileResult:
        """Lint documents already composed from one text (the language server keeps them for the ranges)."""
        result = FileResult(Source(display, is_static_pod))
        self._lint_documents(result, documents)
        _sort(result.findings, POSITION_ORDER)
        return result

    def _lint_rendered(
        self, result: FileResult, rendering: Rendering, held: dict[tuple[int, str], list[Manifest]] | None = None
    ) -> None:
        """A chart or kustomization: lint what it builds to, at the files it was built from."""
        result.notes.extend(rendering.notes)
        result.built_from.extend(rendering.built_from)
        result.entry = rendering.entry
        for problem in rendering.problems:
            if problem.rule not in self.severities:
                continue
            severity = self.severities[problem.rule] or problem.severity or all_rules()[problem.rule].severity
            result.findings.append(
                Finding(
                    problem.rule,
                    severity,
                    problem.message,
                    problem.file,
                    problem.line,
                    problem.column,
                    None,
                    problem.fix,
                )
            )
        self._lint_documents(result, rendering.documents, held)
        if rendering.inputs:  # --changed-since: these findings change with any file the build read
            inputs = frozenset(rendering.inputs)
            for finding in result.findings:
                finding.inputs = inputs

    def check_object(self, obj: Manifest) -> FileResult:
        """Run the object rules on one object that comes from no file (audit reads them from a cluster)."""
        result = FileResult(Source(obj.path, obj.is_static_pod), objects=1)
        self._check_object(result, obj)
        return result

    def _lint_documents(
        self,
        result: FileResult,
        documents: Iterable[Document],
        held: dict[tuple[int, str], list[Manifest]] | None = None,
    ) -> None:
        """Lint each document; `held`: objects ParsedSource.objects already built (a live run's)."""
        source = result.source
        file_objects: list[Manifest] = []
        skipped_list = -1  # the index of a List of live objects whose pieces are skipped
        unparsed = _Unparsed()
        # The cyclic GC is paused for the whole source: each full collection would rescan the node
        # tree of the document at hand (quadratic in a List of thousands of items), and composed
        # documents, objects and findings hold no reference cycles, so reference counting frees
        # each document when the next one replaces it (bench/memory.py: flat over a 1 GB stream).
        with without_cycle_collection():
            try:
                for document in documents:
                    if document.list_of is not None and document.index == skipped_list:
                        continue  # the other pieces of a List of live objects
                    if self._lint_document(result, document, file_objects, held, unparsed):
                        skipped_list = document.index
            finally:  # also before a decoding error further on is reported
                unparsed.settle(result)
        if source.is_static_pod:
            result.static_pods.extend(o for o in file_objects if o.is_pod)
            for group_check in self.group_checks["file"]:
                self._run(
                    result,
                    group_check.rule,
                    partial(group_check.function, file_objects, self.context),
                    group_check.configured,
                )

    def _lint_document(
        self,
        result: FileResult,
        document: Document,
        file_objects: list[Manifest],
        held: dict[tuple[int, str], list[Manifest]] | None,
        unparsed: _Unparsed,
    ) -> bool:
        """Check the objects of one document; True when it is a List of live objects, skipped with a note."""
        source = result.source
        if document.error is not None:
            if document.origin is not None:  # built by a chart or kustomization: its output must parse
                self._syntax(result, document, document.error)
                return False
            finding = self._syntax_finding(result, document, document.error)
            if finding is not None:
                unparsed.findings.append(finding)
            unparsed.first = unparsed.first or document.error
            unparsed.names_objects = unparsed.names_objects or names_object_keys(document.text)
            return False
        origin = document.origin
        if self.suppression_severity is not None and origin is None:
            self._check_suppression_comments(result, document)
        live_fields = live_list_fields(document)
        if live_fields and document.root is not None:
            line = document.line_offset + document.root.start_mark.line + 1
            result.notes.append(
                f"{source.display}:{line}: skipped a List of live objects ({', '.join(live_fields)}: saved from "
                "a cluster with kubectl get -o yaml); it describes a cluster, so give it with --cluster-state "
                "instead of linting it"
            )
            unparsed.names_objects = True
            return True
        namespace = self.context.default_namespace
        objects = held.get((id(document), namespace)) if held else None
        counted = result.objects
        for obj in _objects_of(source, document, namespace) if objects is None else objects:
            result.objects += 1
            if obj.kind in CLUSTER_SCOPED_KINDS and obj.name:
                result.created.add((obj.kind, obj.name))
            self._check_object(result, obj)
            if source.is_static_pod:
                file_objects.append(obj)
        if not unparsed.names_objects:  # once per file, in practice: its first document has an object
            root = document.root
            unparsed.names_objects = result.objects > counted or any(lookup(root, k) for k in ("apiVersion", "kind"))
        return False

    def _check_object(self, result: FileResult, obj: Manifest) -> None:
        checks = self.object_checks["object"]
        if obj.is_static_pod:
            checks = checks + self.object_checks["static-pod"]
        context = self.context
        superseders = self.superseders
        held: list[tuple[ActiveCheck[ObjectCheck], Violation]] = []  # of rules another rule may supersede
        fired: set[str] = set()
        for check in checks:
            try:
                for violation in check.function(obj, context):
                    fired.add(check.rule.id)
                    if check.rule.id in superseders:
                        held.append((check, violation))
                    else:
                        self._report(result.findings, check.rule, check.configured, obj, violation, result.conditional)
            except UsageError:  # bad input found while checking (a damaged snapshot's Pod table): exit 2, no rule bug
                raise
            except Exception as exc:
                if not self._failed(result, check.rule, obj, exc):
                    break
        for check, violation in held:  # kept unless a rule that supersedes it found something here too
            if fired.isdisjoint(superseders[check.rule.id]):
                self._report(result.findings, check.rule, check.configured, obj, violation, result.conditional)

    def _run(
        self,
        result: FileResult,
        rule: Rule,
        produce: Callable[[], Iterable[tuple[Manifest, Violation]]],
        configured: Severity | None,
    ) -> None:
        """Collect the violations of one group check (the objects of a file)."""
        try:
            for found_obj, violation in produce():
                self._report(result.findings, rule, configured, found_obj, violation, result.conditional)
        except UsageError:  # as in _check_object
            raise
        except Exception as exc:
            self._failed(result, rule, None, exc)

    def _failed(self, result: FileResult, rule: Rule, obj: Manifest | None, exc: Exception) -> bool:
        """Report a check that raised; False when the object cannot be read any further (no more checks)."""
        if isinstance(exc, ConversionError):
            if obj is not None:
                mark = exc.node.start_mark
                line = obj.document.line_offset + mark.line + 1
                self._syntax(result, obj.document, SyntaxProblem(str(exc), line, mark.column + 1))
            return False
        # a rule bug must not stop the other files, but the run must not read as clean
        result.internal_errors.append(internal_error(rule, exc, result.source.display, obj))
        return True

    def _place(self, obj: Manifest, violation: Violation) -> tuple[str, int, int, str]:
        """(file, line, column, message) of a violation: in the linted file, or in the one a build read."""
        origin = obj.document.origin
        if origin is None:
            line, column = obj.locate(violation.path)
            return obj.path, line, column, violation.message
        # built from a template or an overlay: at the line of the file that wrote it
        file, line, column, approximate = origin.place(obj, violation.path)
        return file, line, column, violation.message + approximate

    def _finding(
        self,
        rule: Rule,
        configured: Severity | None,
        obj: Manifest,
        violation: Violation,
        place: tuple[str, int, int, str],
    ) -> Finding:
        file, line, column, message = place
        template_at: tuple[str, int | None, int | None] | None = None
        if obj.document.template and obj.path == STDIN_NAME:  # `helm template . | nodename-lint -`
            from .render.helm import stream_template_location

            template_at = stream_template_location(obj.document.template, obj, violation.path)
        return Finding(
            rule=rule.id,
            # a severity set in the configuration wins over the violation's own and the rule's default
            severity=configured or violation.severity or rule.severity,
            message=message,
            file=file,
            line=line,
            column=column,
            object=obj.ref,
            fix=violation.fix,
            template=obj.document.template,
            template_file=template_at[0] if template_at else None,
            template_line=template_at[1] if template_at else None,
            template_column=template_at[2] if template_at else None,
            cause=violation.cause,
        )

    def _report(
        self,
        findings: list[Finding],
        rule: Rule,
        configured: Severity | None,
        obj: Manifest,
        violation: Violation,
        conditional: list[tuple[Finding, tuple[str, str]]] | None = None,
    ) -> None:
        """Locate a violation and keep it unless the object or a comment suppresses it.

        A violation `unless_applied` goes to `conditional`: the run keeps it only when no linted
        manifest creates that object. A suppressed one never becomes a Finding (half of the findings
        of a List whose items each carry an ignore comment).
        """
        place = self._place(obj, violation)
        if self._suppressed(rule.id, place[0], place[1], obj):
            return
        finding = self._finding(rule, configured, obj, violation, place)
        if violation.unless_applied is not None and conditional is not None:
            conditional.append((finding, violation.unless_applied))
        else:
            findings.append(finding)

    def _suppressed(self, rule_id: str, file: str, line: int, obj: Manifest) -> bool:
        """Whether the object's ignore annotation or a directive comment at LINE of FILE silences RULE_ID."""
        ignored = annotation_ignores(obj)
        if ignored and ("*" in ignored or rule_id in ignored):
            return True
        origin = obj.document.origin
        directives = directives_in(origin.text_of(file)) if origin else comment_directives(obj.document)
        return bool(directives) and ignored_by_comment(directives, line, rule_id)

    def _check_suppression_comments(self, result: FileResult, document: Document) -> None:
        """A directive comment naming a rule id that does not exist is a finding (it silences nothing)."""
        for line, column, unknown in unknown_comment_ids(document, self.rule_ids):
            message, fix = describe_unknown_ids(unknown, self.rule_ids)
            finding = Finding(
                SUPPRESSION_RULE,
                self.suppression_severity or "warning",
                message,
                result.source.display,
                line,
                column,
                None,
                fix,
                document.template,
            )
            if not ignored_by_comment(comment_directives(document), line, SUPPRESSION_RULE):
                result.findings.append(finding)

    def _syntax(self, result: FileResult, document: Document | None, problem: SyntaxProblem) -> None:
        finding = self._syntax_finding(result, document, problem)
        if finding is not None:
            result.findings.append(finding)

    def _syntax_finding(self, result: FileResult, document: Document | None, problem: SyntaxProblem) -> Finding | None:
        """The yaml-syntax finding of PROBLEM, None when the rule is off or a comment silences it."""
        if self.syntax_severity is None:
            return None
        file, line, column, built = result.source.display, problem.line, problem.column, ""
        if document is not None and document.origin is not None:  # the built output has no lines of its own
            file, line, column = document.origin.file, 1, 1
            built = f"line {problem.line} of the built output: "
        finding = Finding(
            rule=SYNTAX_RULE,
            severity=self.syntax_severity,
            message=f"the API server and the kubelet cannot read this: {built}{problem.message}",
            file=file,
            line=line,
            column=column,
            object=None,
            fix=problem.hint or "fix the YAML syntax at this position",
            template=document.template if document else None,
        )
        if document is not None and document.origin is not None:
            directives = directives_in(document.origin.text_of(file))
        else:
            directives = comment_directives(document) if document is not None else {}
        return None if ignored_by_comment(directives, line, SYNTAX_RULE) else finding

    # --- a whole run --------------------------------------------------------------------------
    def lint_sources(self, sources: Iterable[Source], progress: Callable[[], None] | None = None) -> RunResult:
        """Lint every source in order, then run the folder-wide static Pod checks."""
        return self.collect((self.lint_source(source) for source in sources), progress)

    def collect(self, file_results: Iterable[FileResult], progress: Callable[[], None] | None = None) -> RunResult:
        """Merge per-file results (from this process or from workers) into the run's result.

        PROGRESS is called once per file as its result arrives. The cyclic GC is paused for the whole
        run, not source by source: the first allocation after each re-enabling ran a collection over
        the young objects, which held the last document's node tree (18% of linting ../shared/corpus,
        for a few hundred objects collected in all); nothing a source builds holds a cycle.
        """
        with without_cycle_collection():
            return self._collect(file_results, progress)

    def _collect(self, file_results: Iterable[FileResult], progress: Callable[[], None] | None) -> RunResult:
        run = RunResult(skipped_rules=dict(self.skipped))
        static_by_folder: dict[str, list[Manifest]] = {}
        kept: list[FileResult] = []  # results reported whole; files linted on their own and bases are decided last
        plain: list[FileResult] = []  # files linted on their own
        built: list[FileResult] = []  # kustomizations, which an overlay of the run may build as a base
        built_from: set[str] = set()
        read_by_others: set[str] = set()  # kustomization files another build of the run read
        for file_result in file_results:
            if progress is not None:
                progress()
            run.files += 1
            if not file_result.entry:
                run.notes.extend(file_result.notes)
            run.internal_errors.extend(file_result.internal_errors)
            built_from.update(file_result.built_from)
            read_by_others.update(path for path in file_result.built_from if path != file_result.entry)
            if not file_result.source.render and file_result.source.path != STDIN:
                plain.append(file_result)
            elif file_result.entry:
                built.append(file_result)
            else:
                kept.append(file_result)
            for pod in file_result.static_pods:
                static_by_folder.setdefault(os.path.dirname(pod.path), []).append(pod)
        # A kustomization's patches and resources are reported as built (with the overlay's names and
        # namespace), not also on their own; a base that an overlay of the run builds, only as built there.
        # Without any (most runs) no file's real path is needed: five lstat calls a file, 4% of a big run.
        kept += (
            [result for result in plain if os.path.realpath(result.source.path) not in built_from]
            if built_from
            else plain
        )
        for result in built:
            if result.entry not in read_by_others:
                kept.append(result)
                run.notes.extend(result.notes)
        created: set[tuple[str, str]] = set()
        conditional: list[tuple[Finding, tuple[str, str]]] = []
        for file_result in kept:
            run.objects += file_result.objects
            run.findings.extend(file_result.findings)
            created |= file_result.created
            conditional += file_result.conditional
        for check in self.group_checks["folder"]:
            for folder, pods in static_by_folder.items():
                try:
                    for obj, violation in check.function(pods, self.context):
                        self._report(run.findings, check.rule, check.configured, obj, violation)
                except Exception as exc:  # as in _run: the run goes on and exits 2
                    run.internal_errors.append(internal_error(check.rule, exc, folder or ".", None))
        run.notes.extend(run.internal_errors)
        run.created = created
        run.conditional = [(finding, needed) for finding, needed in conditional if needed not in created]
        run.findings.extend(finding for finding, _ in run.conditional)
        run.findings = list({REPORT_ORDER(f): f for f in run.findings}.values())  # two overlays of one base
        _sort(run.findings, REPORT_ORDER)
        return run


def internal_error(rule: Rule, exc: Exception, where: str, obj: Manifest | None) -> str:
    """What a rule that raised did wrong, naming the rule, the object and its place (the run exits 2)."""
    if obj is not None:
        where = f"{obj.ref.describe()} at {where}:{obj.locate(())[0]}"
    return (
        f"internal error in rule {rule.id} on {where}: {type(exc).__name__}: {exc}; its findings for this "
        "object are missing and the run exits 2 (please report this bug)"
    )


def _active_severity(
    rule_id: str, severities: Mapping[str, Severity | None], catalogue: Mapping[str, Rule]
) -> Severity | None:
    """The severity of a rule the engine reports itself: configured, else its default; None when it is not active."""
    if rule_id not in severities:
        return None
    return severities[rule_id] or catalogue[rule_id].severity


def _sort(findings: list[Finding], order: Callable[[Finding], tuple[Any, ...]]) -> None:
    """Sort findings with the cyclic GC paused: the key tuples made for 100,000 findings triggered
    two full collections over everything alive (0.28 s of a 12 s run; the keys hold no cycles)."""
    with without_cycle_collection():
        findings.sort(key=order)


def _objects_of(source: Source, document: Document, default_namespace: str) -> Iterator[Manifest]:
    """The objects of one parsed document, placed in the file that wrote them (a template, an overlay)."""
    origin = document.origin
    return objects_in(
        origin.file if origin is not None else source.display,
        document,
        default_namespace=(origin and origin.namespace) or default_namespace,
        is_static_pod=source.is_static_pod,
    )


def _decode_message(exc: UnicodeDecodeError) -> str:
    byte = exc.object[exc.start]
    why = " (a NUL byte: UTF-16 without a byte-order mark, or a binary file)" if byte == 0 else ""
    return f"the file is not UTF-8 or UTF-16 text (byte 0x{byte:02x} at offset {exc.start}){why}"
