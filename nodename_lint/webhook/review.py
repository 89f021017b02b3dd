"""One AdmissionReview in, one verdict out: the rules of the CLI, with the same ids and messages.

The object the API server sends becomes a PlainObject (as audit's objects), and `Linter.check_object`
runs the same checks against the same kind of ClusterState. What is added is the admission policy:

- a finding of a rule in `deny` at severity error denies the request (403, the rule's message and fix);
  every other finding at or above `warn_on` is an AdmissionReview warning, which kubectl prints;
- before it denies a Pod for a node the state lacks, the node is looked up with one GET (it may have
  just joined), and a lookup that cannot tell turns the denial into a warning;
- while the state may be behind the cluster (not loaded yet, a watch lost), nothing is denied;
- an UPDATE is not denied for what the object already had (the same rule, the same nodeName), nor an
  object a controller makes (its owner was the place to deny: a stalled controller helps nobody);
- what the webhook does not review (another kind, DELETE, CONNECT) is allowed untouched; a request that
  cannot be read is a 400, never an `allowed`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from ..cluster.state import ClusterState
from ..engine import Linter
from ..findings import Finding
from ..model import PlainObject
from ..podspec import pinned_node
from ..registry import all_rules
from ..rule import SEVERITY_RANK, Context, Severity
from ..safe_text import one_line

ADMISSION_VERSION = "admission.k8s.io/v1"
MAX_BODY = 3 << 20  # bytes: the API server's own limit for a request body; a review of a bigger object cannot come
DEFAULT_DENY = frozenset({"unknown-node", "nodename-in-template", "invalid-node-name"})
# The rules that cannot apply to an object the API server holds cannot apply to one it is admitting either:
# each says why in its own declaration (Rule.not_audited: about files, comparing a manifest with the live
# object, or predicting an admission step already made).
NOT_AT_ADMISSION = frozenset(rule.id for rule in all_rules().values() if rule.not_audited)
WARNING_BUDGET = 4096  # characters of warnings the API server passes on whole (truncateAtTotalRunes)
WARNING_ITEM = 256  # past the budget, it cuts each warning to this many (truncateItemRunes)
_DATA = ("nodes", "namespaces", "pods", "live-pods", "runtime_classes")


class ClusterSource(Protocol):
    """Where the state comes from: a file (fixed) or watches (cluster.watch.WatchedCluster)."""

    @property
    def state(self) -> ClusterState | None: ...

    @property
    def lock(self) -> AbstractContextManager[Any]: ...  # held while the rules read the state

    def ready(self) -> bool: ...

    def degraded(self) -> list[str]: ...

    def confirm_node(self, name: str) -> bool | None: ...

    @property
    def statuses(self) -> Mapping[str, Any]: ...  # kind -> cluster.watch.WatchStatus, for the metrics


@dataclass
class FixedCluster:
    """A state read once from a file (`--cluster-state`): always ready, never behind, nothing to look up."""

    state: ClusterState | None
    lock: AbstractContextManager[Any] = field(default_factory=contextlib.nullcontext)
    statuses: Mapping[str, Any] = field(default_factory=dict)

    def ready(self) -> bool:
        return True

    def degraded(self) -> list[str]:
        return []

    def confirm_node(self, name: str) -> bool | None:
        return False  # the file is the cluster


@dataclass(frozen=True)
class Policy:
    """Which findings deny and which warn (the `webhook` section of .nodename-lint.yaml)."""

    deny: frozenset[str] = DEFAULT_DENY
    warn_on: Severity = "warning"


@dataclass
class Verdict:
    """The HTTP reply to one review, and what the metrics count of it."""

    status: int
    body: bytes
    verdict: str  # allowed, warned, denied, skipped (not reviewed), invalid (400)
    rules: dict[str, str] = field(default_factory=dict)  # rule id -> "denied" or "warned"
    subject: str = ""  # "Pod default/ghost", for the log


class BadReview(ValueError):
    """A request body that is not an AdmissionReview this webhook can answer: a 400."""


_NULL = msgspec.Raw(b"null")


class _GroupVersionKind(msgspec.Struct, gc=False):
    group: str = ""
    version: str = ""
    kind: str = ""


class _Request(msgspec.Struct, gc=False):
    uid: str
    kind: _GroupVersionKind
    operation: str = ""
    namespace: str = ""
    object: msgspec.Raw = _NULL
    oldObject: msgspec.Raw = _NULL
    dryRun: bool = False


class _Review(msgspec.Struct, gc=False):
    apiVersion: str = ""
    kind: str = ""
    request: _Request | None = None


_REVIEW = msgspec.json.Decoder(_Review)
_ENCODE = msgspec.json.Encoder().encode
_OBJECT = msgspec.json.Decoder(dict[str, Any])


class Reviewer:
    """Answers AdmissionReviews with the rules at the configured severities, against a cluster source."""

    def __init__(self, cluster: ClusterSource, severities: Mapping[str, Severity | None], policy: Policy) -> None:
        self.cluster = cluster
        self.severities = {rule: severity for rule, severity in severities.items() if rule not in NOT_AT_ADMISSION}
        self.policy = policy
        self._linters: dict[tuple[bool, ...], Linter] = {}

    def review(self, body: bytes) -> Verdict:
        """The reply to one POST /validate body."""
        try:
            request = _read(body)
            obj = self._object(request)
            old = self._object(request, old=True) if obj is not None and request.operation == "UPDATE" else None
        except BadReview as exc:
            return Verdict(400, _ENCODE({"error": one_line(str(exc))}), "invalid")
        if obj is None:
            return _reply(request.uid, "skipped")
        behind = self.cluster.degraded() if self.cluster.ready() else ["the cluster state is not loaded yet"]
        may_deny = not behind and not _controlled(obj)  # a controller's object: its owner was the place to deny
        findings = self._check(obj, old)
        for name in _missing_nodes(obj, findings, self._denies) if may_deny else ():
            confirmed = self.cluster.confirm_node(name)
            if confirmed:  # it just joined: the state has it now, every rule reads it
                findings = self._check(obj, old)
            elif confirmed is None:
                findings = [_unconfirmed(f) if f.rule == "unknown-node" else f for f in findings]
        verdict = self._verdict(request.uid, findings, may_deny, behind)
        verdict.subject = obj.ref.describe()
        return verdict

    # --- the object and its findings -------------------------------------------------------------------
    def _object(self, request: _Request, old: bool = False) -> PlainObject | None:
        """The object to check, None when this webhook does not review it (another kind, DELETE, CONNECT)."""
        raw = request.oldObject if old else request.object
        if request.operation not in ("CREATE", "UPDATE") or bytes(raw).strip() == b"null":
            return None
        gvk = request.kind
        api_version = f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version
        try:
            data = _OBJECT.decode(raw)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise BadReview(f"request.{'oldObject' if old else 'object'} is not an object: {_problem(exc)}") from None
        obj = PlainObject(data, api_version, gvk.kind, request.namespace or "default")
        return obj if obj.pod_spec_path is not None else None

    def _check(self, obj: PlainObject, old: PlainObject | None) -> list[Finding]:
        """The findings the webhook reports: those at or above warn_on, and every denying one, minus what
        the object had before an UPDATE (kept as warnings)."""
        floor = SEVERITY_RANK[self.policy.warn_on]
        cluster = self.cluster
        with cluster.lock:
            linter = self._linter(cluster.state)
            checked = linter.check_object(obj)
            before = linter.check_object(old).findings if old is not None else []
        kept = [f for f in checked.findings if self._denies(f) or SEVERITY_RANK[f.severity] >= floor]
        kept += [_internal(error) for error in checked.internal_errors]
        if old is not None and before:
            had = {(f.rule, pinned_node(old)) for f in before if self._denies(f)}
            node = pinned_node(obj)
            kept = [_had_before(f) if (f.rule, node) in had and self._denies(f) else f for f in kept]
        kept.sort(key=lambda f: (-SEVERITY_RANK[f.severity], f.rule, f.message))
        return kept

    def _linter(self, state: ClusterState | None) -> Linter:
        """The engine for the rules the state can feed now (a kind may be refused, or not listed yet)."""
        available = tuple(state.has(data) for data in _DATA) if state is not None else ()
        linter = self._linters.get(available)
        if linter is None:
            linter = self._linters[available] = Linter(self.severities, Context(cluster=state))
        return linter

    def _denies(self, finding: Finding) -> bool:
        return finding.rule in self.policy.deny and finding.severity == "error"

    # --- the reply --------------------------------------------------------------------------------------
    def _verdict(self, uid: str, findings: list[Finding], may_deny: bool, behind: list[str]) -> Verdict:
        denials = [f for f in findings if self._denies(f)] if may_deny else []
        warnings = [f for f in findings if f not in denials]
        if behind and any(self._denies(f) for f in findings):
            warnings.insert(0, _behind(behind))
        rules = {f.rule: "warned" for f in warnings if f.rule}
        rules.update({f.rule: "denied" for f in denials})
        texts = _warning_texts(warnings)
        if denials:
            message = "\n".join(one_line(f"{f.rule}: {f.message}; fix: {f.fix}") for f in denials)
            status = {"code": 403, "reason": "Forbidden", "message": message}
            return _reply(uid, "denied", rules, allowed=False, status=status, warnings=texts)
        return _reply(uid, "warned" if texts else "allowed", rules, warnings=texts)


def _read(body: bytes) -> _Request:
    """The request of an AdmissionReview v1; BadReview says what is wrong with anything else."""
    if len(body) > MAX_BODY:
        raise BadReview(f"the request body is over {MAX_BODY} bytes")
    try:
        review = _REVIEW.decode(body)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise BadReview(f"the request body is not an AdmissionReview: {_problem(exc)}") from None
    if review.apiVersion != ADMISSION_VERSION or review.kind != "AdmissionReview":
        raise BadReview(
            f"expected apiVersion {ADMISSION_VERSION} kind AdmissionReview, got apiVersion "
            f"{review.apiVersion[:60]!r} kind {review.kind[:60]!r} (admissionReviewVersions must be [v1])"
        )
    if review.request is None:
        raise BadReview("the AdmissionReview has no request")
    return review.request


def _controlled(obj: PlainObject) -> bool:
    """An object a controller made (a Deployment's ReplicaSet, a ReplicaSet's Pods, a CronJob's Jobs)."""
    owners = obj.metadata.get("ownerReferences")
    return isinstance(owners, list) and any(isinstance(o, dict) and o.get("controller") is True for o in owners)


def _problem(exc: Exception) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]


def _missing_nodes(obj: PlainObject, findings: list[Finding], denies: Callable[[Finding], bool]) -> list[str]:
    """The node a denial says does not exist (unknown-node), to look up before denying."""
    node = pinned_node(obj)
    return [node] if node and any(f.rule == "unknown-node" and denies(f) for f in findings) else []


def _unconfirmed(finding: Finding) -> Finding:
    """An unknown-node finding the API server could not confirm: a warning, never a denial."""
    return _as_warning(finding, " (the API server could not be asked whether the node exists: not denied)")


def _had_before(finding: Finding) -> Finding:
    return _as_warning(finding, " (the object had this before this update: not denied)")


def _as_warning(finding: Finding, why: str) -> Finding:
    return Finding(finding.rule, "warning", finding.message + why, "", 0, 0, finding.object, finding.fix)


def _internal(error: str) -> Finding:
    return Finding("", "warning", f"nodename-lint: {error}", "", 0, 0, None, "")


def _behind(reasons: list[str]) -> Finding:
    text = "; ".join(reasons)
    return Finding("", "warning", f"nodename-lint denies nothing now: {text}", "", 0, 0, None, "")


def _warning_texts(findings: list[Finding]) -> list[str]:
    """Each finding as one warning line, within what the API server passes on whole (4096 characters in
    all): with the fix while it fits, else without; past the budget, cut, and the rest counted."""
    full = [one_line(f"{f.rule}: {f.message}; fix: {f.fix}" if f.rule else f.message) for f in findings]
    if sum(map(len, full)) <= WARNING_BUDGET:
        return full
    short = [one_line(f"{f.rule}: {f.message}" if f.rule else f.message) for f in findings]
    texts: list[str] = []
    used = 0
    for index, text in enumerate(short):
        if len(text) > WARNING_ITEM:
            text = text[: WARNING_ITEM - 3] + "..."
        if used + len(text) > WARNING_BUDGET - 80:
            texts.append(f"and {len(short) - index} more findings: lint the manifest with nodename-lint")
            break
        texts.append(text)
        used += len(text)
    return texts


def _reply(
    uid: str,
    verdict: str,
    rules: dict[str, str] | None = None,
    *,
    allowed: bool = True,
    status: dict[str, Any] | None = None,
    warnings: list[str] | None = None,
) -> Verdict:
    response: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if status is not None:
        response["status"] = status
    if warnings:
        response["warnings"] = warnings
    body = _ENCODE({"apiVersion": ADMISSION_VERSION, "kind": "AdmissionReview", "response": response})
    return Verdict(200, body, verdict, rules or {})
