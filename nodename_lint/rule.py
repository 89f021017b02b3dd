"""What a rule is: documentation, examples and typed checks, in one module under rules/.

A rule never reads files, never fetches cluster data and never computes line numbers: it receives
a Manifest and a Context (with the cluster state when there is one) and yields Violations that
name a path inside the object. The engine locates them, applies configuration and suppressions.

Each check is registered with its kind, and the engine dispatches on the kind:

- `@RULE.check`: an ObjectCheck on every object;
- `@RULE.static_pod_check`: an ObjectCheck on every object of a static Pod file;
- `@RULE.file_check`: a GroupCheck on all objects of one static Pod file;
- `@RULE.folder_check`: a GroupCheck on the static Pods of one folder;
- `@RULE.fixer`: the automatic fix (a Fixer) for what the rule reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from .model import Manifest, Path

if TYPE_CHECKING:  # startup: offline runs load neither the cluster code nor the fix edits
    from .cluster.state import ClusterState
    from .fix.edits import FixStep

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}
# Cluster data a rule can need; a rule whose data is missing is skipped and the summary says why.
ClusterData = Literal["nodes", "namespaces", "pods", "live-pods"]
# What `nodename-lint audit` adds to a rule's finding on a bare Pod from the Pod's live state
# (nodename_lint.audit), after "In the cluster:"; a rule whose finding is about one of these declares it.
AuditAddition = Literal["podgc-timeline", "nodename-managers", "node-state-eviction", "taint-eviction"]
AUDIT_ADDITIONS: dict[AuditAddition, str] = {
    "podgc-timeline": "the Pod's phase and when PodGC deletes it (a Pod on a missing node); reported even when who "
    "set nodeName is unknown",
    "nodename-managers": "who set nodeName when the Pod was created, per managedFields",
    "node-state-eviction": "what becomes of the Pod already on the node: evicted at once, after its toleration of the "
    "not-ready or unreachable NoExecute taint, or bound there forever",
    "taint-eviction": "that the taint eviction controller deletes the Pod already on the node (a NoExecute taint it "
    "does not tolerate) and nothing recreates it",
}


class Violation(NamedTuple):
    """A problem a rule found: where in the object (a path), what the cluster will do, how to fix."""

    path: Path
    message: str
    fix: str = ""
    severity: Severity | None = None  # overrides the rule's default (e.g. per taint effect)
    # (kind, name) of a cluster-scoped object that, when a linted manifest creates it, makes this moot
    unless_applied: tuple[str, str] | None = None
    # The one thing outside the object that makes it fail, when many objects can share it ("namespace
    # monitoring", "node kind-wroker"): the text report shows a rule's findings with one cause and one fix
    # as one line with their count and places (one missing namespace gave 1,142 lines); "" when the object
    # itself is the cause.
    cause: str = ""


class Context(NamedTuple):
    """Run-wide inputs handed to every rule."""

    cluster: ClusterState | None = None
    default_namespace: str = "default"
    static_pod_node: str | None = None  # --static-pod-node: the node whose kubelet reads the static Pod folders


class Example:
    """A documented manifest that must make the rule fire (`fails=True`) or stay silent.

    `cluster` is a cluster state as `kubectl get nodes,namespaces,pods -A -o yaml` prints it;
    `static_pod` lints the manifest as a file of the kubelet's staticPodPath; `helm_chart` renders it
    as the template templates/example.yaml of a chart named example (nodename_lint.render).

    The texts are kept as written and dedented when read: every rule's examples load with the rules,
    and only the tests, the docs and `explain` read them (startup: 64 dedents and textwrap spared).
    """

    __slots__ = ("_cluster", "_manifest", "fails", "helm_chart", "static_pod", "title")

    def __init__(
        self,
        title: str,
        manifest: str,
        fails: bool,
        cluster: str | None = None,
        static_pod: bool = False,
        helm_chart: bool = False,
    ) -> None:
        self.title = title
        self.fails = fails
        self.static_pod = static_pod
        self.helm_chart = helm_chart
        self._manifest = manifest
        self._cluster = cluster

    @property
    def manifest(self) -> str:
        return _dedented(self._manifest)

    @property
    def cluster(self) -> str | None:
        return None if self._cluster is None else _dedented(self._cluster)

    def __repr__(self) -> str:
        return f"Example({self.title!r}, fails={self.fails})"


def _dedented(text: str) -> str:
    import textwrap  # startup: see Example

    return textwrap.dedent(text).lstrip("\n")


class ObjectCheck(Protocol):
    """A check of one object: yields what is wrong with it, as paths inside the object."""

    def __call__(self, obj: Manifest, context: Context, /) -> Iterator[Violation]: ...


class GroupCheck(Protocol):
    """A check of several objects at once (one file, one folder): says which object each violation is about."""

    def __call__(self, objects: Sequence[Manifest], context: Context, /) -> Iterator[tuple[Manifest, Violation]]: ...


class Fixer(Protocol):
    """Describes edits by path (nodename_lint.fix.edits), never text; only --fix and --diff call it."""

    def __call__(self, obj: Manifest, context: Context, /) -> Iterator[FixStep]: ...


# What a check looks at; the engine dispatches on it.
ObjectKind = Literal["object", "static-pod"]
GroupKind = Literal["file", "folder"]


class ObjectRuleCheck(NamedTuple):
    """`kind` "object": every object; "static-pod": every object of a static Pod file."""

    kind: ObjectKind
    function: ObjectCheck


class GroupRuleCheck(NamedTuple):
    """`kind` "file": the objects of one static Pod file; "folder": the static Pods of one folder."""

    kind: GroupKind
    function: GroupCheck


RuleCheck = ObjectRuleCheck | GroupRuleCheck


class Rule:
    """A rule's identity, documentation and checks, each check registered with its kind.

    `doc` is Markdown with the sections "What it does", "Why is this bad?" (what the cluster does)
    and "How to fix"; `fix` says what --fix changes, empty when the rule has no automatic fix.

    What `nodename-lint audit` does with the rule is declared here too: `not_audited` says why the
    rule cannot apply to an object read from the API server (it is about files, or predicts an
    admission the API server has already made), and audit (and the admission webhook) then never
    run it; `audit_adds` names what audit adds to its finding on a bare Pod (AUDIT_ADDITIONS).

    Overlapping rules: a finding of this rule on an object drops that object's findings of the
    rules it `supersedes`, and a finding of a rule in `superseded_by` drops this rule's. A rule
    supersedes another when its finding says all that the other's would, more precisely. Either
    side may declare the relation (a new rule places itself without editing the others); the
    registry completes the other side, so both sets hold the whole relation once loaded.

    A plain class with __slots__, not a dataclass: every rule module creates one at import (startup,
    CONTRIBUTING.md).
    """

    __slots__ = (
        "audit_adds",
        "checks",
        "doc",
        "examples",
        "fix",
        "fixer_function",
        "id",
        "module",
        "needs",
        "not_audited",
        "severity",
        "summary",
        "superseded_by",
        "supersedes",
    )

    def __init__(
        self,
        id: str,
        severity: Severity,
        summary: str,
        doc: str,
        examples: tuple[Example, ...],
        needs: frozenset[ClusterData] = frozenset(),
        fix: str = "",
        not_audited: str = "",
        audit_adds: AuditAddition | None = None,
        supersedes: frozenset[str] = frozenset(),
        superseded_by: frozenset[str] = frozenset(),
    ) -> None:
        self.id = id
        self.severity = severity
        self.summary = summary
        self.doc = doc
        self.examples = examples
        self.needs = needs
        self.fix = fix
        self.not_audited = not_audited
        self.audit_adds = audit_adds
        self.supersedes = supersedes
        self.superseded_by = superseded_by
        self.checks: list[RuleCheck] = []
        self.fixer_function: Fixer | None = None
        self.module = ""  # the rule's module, set by the registry

    def __repr__(self) -> str:
        return f"Rule(id={self.id!r})"

    def check(self, function: ObjectCheck) -> ObjectCheck:
        """Decorator: register a check of every object."""
        self.checks.append(ObjectRuleCheck("object", function))
        return function

    def static_pod_check(self, function: ObjectCheck) -> ObjectCheck:
        """Decorator: register a check of every object in a static Pod file (the kubelet's staticPodPath)."""
        self.checks.append(ObjectRuleCheck("static-pod", function))
        return function

    def file_check(self, function: GroupCheck) -> GroupCheck:
        """Decorator: register a check that sees all objects of one static Pod file together."""
        self.checks.append(GroupRuleCheck("file", function))
        return function

    def folder_check(self, function: GroupCheck) -> GroupCheck:
        """Decorator: register a check that sees the static Pods of one folder together."""
        self.checks.append(GroupRuleCheck("folder", function))
        return function

    def fixer(self, function: Fixer) -> Fixer:
        """Decorator: register the automatic fix for objects this rule reported (what `fix` describes)."""
        self.fixer_function = function
        return function

    @property
    def is_cluster_rule(self) -> bool:
        return bool(self.needs)

    def documentation(self) -> str:
        """The whole documentation as Markdown, examples included (what `explain` prints)."""
        from .report.locations import rule_doc_url

        parts = [f"# {self.id}", "", f"{self.summary}", "", f"Default severity: {self.severity}."]
        if self.needs:
            parts.append(f"Needs cluster state: {', '.join(sorted(self.needs))}.")
        parts.append(f"Automatic fix: {self.fix}" if self.fix else "Automatic fix: none.")
        if self.not_audited:
            parts.append(f"Not run by `nodename-lint audit`: {self.not_audited}.")
        if self.audit_adds:
            parts.append(f"`nodename-lint audit` adds {AUDIT_ADDITIONS[self.audit_adds]}.")
        if self.supersedes:
            parts.append(
                f"Supersedes (their findings on an object this rule reports are dropped): {_ids(self.supersedes)}."
            )
        if self.superseded_by:
            parts.append(f"Superseded by (their finding on the object drops this rule's): {_ids(self.superseded_by)}.")
        parts.append(f"Documentation: {rule_doc_url(self.id)}")
        parts += ["", _dedented(self.doc).strip(), ""]
        for example in self.examples:
            verdict = "Fails" if example.fails else "Passes"
            parts += [f"## Example ({verdict}): {example.title}", ""]
            if example.helm_chart:
                parts += ["The template `templates/example.yaml` of a chart:", ""]
            parts += ["```yaml", example.manifest.rstrip(), "```", ""]
            if example.cluster:
                parts += ["With this cluster state:", "", "```yaml", example.cluster.rstrip(), "```", ""]
        return "\n".join(parts).rstrip() + "\n"


class _Later:
    """A module a rule reads from only once a check runs: imported then, and bound in its place."""

    __slots__ = ("_module", "_namespace")

    def __init__(self, module: str, namespace: dict[str, Any]) -> None:
        self._module = module
        self._namespace = namespace

    def __getattr__(self, name: str) -> Any:
        module = import_module(self._module)
        for binding, value in list(self._namespace.items()):
            if value is self:
                self._namespace[binding] = module
        return getattr(module, name)


def later(module: str, namespace: dict[str, Any]) -> Any:
    """A stand-in for `module` (dotted name) in a rule module's globals (`namespace`), imported when a check first
    reads from it and then bound in the stand-in's place, so that later reads cost what any global's does.

    A cluster rule's module is imported by every run (the catalogue lists it), its cluster code only by runs with
    a cluster state; an import statement inside the check kept offline startup lean but ran for every object
    (2 µs each, 30,000 of them a run of 1,000 manifests against a cluster). Pair it with the same import under
    `if TYPE_CHECKING:`, which mypy reads and the stand-in cannot satisfy:

        if TYPE_CHECKING:
            from nodename_lint import scheduling
        else:  # startup: offline runs never load the cluster code
            scheduling = later("nodename_lint.scheduling", globals())
    """
    return _Later(module, namespace)


def _ids(rule_ids: frozenset[str]) -> str:
    return ", ".join(f"`{rule_id}`" for rule_id in sorted(rule_ids))
