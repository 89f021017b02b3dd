"""`nodename-lint audit`: the rules run on a cluster's own objects instead of manifests.

A thin layer on the engine: each workload (reported once, on its top-level owner) and each bare
Pod becomes a Manifest without file or line (ClusterObject), and the same rules check it against
the same cluster state. What is added is what only a running cluster shows: who placed a Pod
(cluster.workloads.placement; Pods placed by the system are never reported), how long PodGC leaves a
Pod on a missing node, and the kubelet's own rejection (status.reason, status.message) of a Failed Pod.

While an object is checked, its own Pods are left out of the node usage (AuditState.excluding): a
running Pod or Deployment must not be reported for not fitting next to itself.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from .cluster.state import ClusterState, NodeUsage
from .cluster.workloads import (
    API_VERSIONS,
    SYSTEM_PLACED,
    WORKLOADS,
    ClusterObjects,
    Placement,
    PodRecord,
    controller_of,
    nodename_managers,
)
from .engine import Linter
from .findings import Finding, RunResult
from .model import PlainObject
from .podspec import pinned_node
from .registry import all_rules
from .rule import SEVERITY_RANK, AuditAddition, Context, Severity
from .scheduling import HostPort, reason_rule

PODGC_PERIOD = timedelta(seconds=20)  # gcCheckPeriod, pkg/controller/podgc/gc_controller.go
PODGC_QUARANTINE = timedelta(seconds=40)  # quarantineTime: how long a missing node may reappear
LIVE = "In the cluster: "  # starts what a finding adds from the object's live state (see _live)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class ClusterObject(PlainObject):
    """An object read from the API: its own apiVersion, else the one of its kind's API."""

    __slots__ = ()

    def __init__(self, raw: dict[str, Any], kind: str, default_namespace: str) -> None:
        api_version = raw.get("apiVersion")
        super().__init__(
            raw, api_version if isinstance(api_version, str) else API_VERSIONS[kind], kind, default_namespace
        )


@dataclass(slots=True)
class AuditState(ClusterState):
    """A ClusterState whose node usage comes from PodRecords, and can leave the checked object's own Pods out.

    `pods` is empty (known, but not kept as PodInfo): usage() sums the records once per run.
    """

    records: list[PodRecord] = field(default_factory=list, repr=False)
    _sums: dict[str, NodeUsage] | None = field(default=None, repr=False)
    _ports_by_node: dict[str, dict[HostPort, list[str]]] | None = field(default=None, repr=False)
    _own: dict[str, list[PodRecord]] = field(default_factory=dict, repr=False)  # node -> the object's own Pods

    @contextlib.contextmanager
    def excluding(self, pods: list[PodRecord]) -> Iterator[None]:
        """Within the block, usage() does not count these Pods (the no-node-fits answers cached for the
        whole cluster are set aside, as they counted them)."""
        own: dict[str, list[PodRecord]] = {}
        for pod in pods:
            if pod.node and pod.running:
                own.setdefault(pod.node, []).append(pod)
        if not own:
            yield
            return
        shared, self._no_fit, self._own = self._no_fit, {}, own
        try:
            yield
        finally:
            self._no_fit, self._own = shared, {}

    def usage(self, node: str) -> NodeUsage | None:
        if not self.pods_known_on(node):
            return None
        if self._sums is None:
            self._sums = _sum_by_node(self.records)
        usage = self._sums.get(node) or NodeUsage(0, {})
        own = self._own.get(node)
        if not own:
            return usage
        requested = dict(usage.requested)
        for pod in own:
            for resource, amount in pod.requests.items():
                requested[resource] = requested.get(resource, 0) - amount
        return NodeUsage(usage.pods - len(own), requested)

    def ports_in_use(self, node: str) -> dict[HostPort, str] | None:
        """Host ports of the running Pods on `node` ("namespace/name" of the holder), the object's own left out."""
        if not self.pods_known_on(node):
            return None
        if self._ports_by_node is None:
            self._ports_by_node = {}
            for pod in self.records:
                if pod.node and pod.running and pod.host_ports:
                    held = self._ports_by_node.setdefault(pod.node, {})
                    for port in pod.host_ports:
                        held.setdefault(port, []).append(f"{pod.namespace}/{pod.name}")
        own = {f"{pod.namespace}/{pod.name}" for pod in self._own.get(node, ())}
        in_use: dict[HostPort, str] = {}
        for port, holders in self._ports_by_node.get(node, {}).items():
            others = [holder for holder in holders if holder not in own]
            if others:
                in_use[port] = others[0]
        return in_use


def _sum_by_node(records: list[PodRecord]) -> dict[str, NodeUsage]:
    """Pods count and summed requests of the running Pods on each node."""
    sums: dict[str, NodeUsage] = {}
    for pod in records:
        if pod.node and pod.running:
            usage = sums.get(pod.node)
            if usage is None:
                usage = sums[pod.node] = NodeUsage(0, {})
            usage.pods += 1
            for resource, amount in pod.requests.items():
                usage.requested[resource] = usage.requested.get(resource, 0) + amount
    return sums


@dataclass
class Subject:
    """One object audit checks, with the Pods that are its own."""

    obj: ClusterObject
    own_pods: list[PodRecord]
    placement: Placement | None = None  # for a bare Pod
    managers: list[str] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)  # a workload's Pods Failed on kubelet admission


@dataclass
class Plan:
    """What an audit checks, and how many Pods it leaves to the system that placed them."""

    subjects: list[Subject]
    system_placed: dict[Placement, int]
    undecided: int  # bare Pods with nodeName and no managedFields


def build_state(objects: ClusterObjects) -> AuditState:
    """The ClusterState the rules read, from the audited objects."""
    from .cluster.objects import StateError, state_from_objects
    from .sources import UsageError

    def present(kind: str, resource: str) -> list[dict[str, Any]] | None:
        return None if resource in objects.unavailable else objects.of(kind)

    unavailable = {k: v for k, v in objects.unavailable.items() if k in ("nodes", "namespaces", "pods")}
    if "pods" in unavailable:
        unavailable["live-pods"] = unavailable["pods"]
    try:
        state = state_from_objects(
            objects.source,
            nodes=present("Node", "nodes"),
            namespaces=present("Namespace", "namespaces"),
            pods=None,
            unavailable=unavailable,
        )
    except StateError as exc:
        raise UsageError(f"{objects.source}: bad cluster state: {exc}") from None
    return AuditState(
        source=state.source,
        nodes=state.nodes,
        namespaces=state.namespaces,
        pods=None if "pods" in unavailable else [],
        unavailable=state.unavailable,
        records=objects.pods,
    )


def plan(objects: ClusterObjects, default_namespace: str) -> Plan:
    """The top-level workloads and the bare Pods to check; every other Pod is counted and left alone."""
    workloads = {(kind, _namespace(obj), _name(obj)): obj for kind in WORKLOADS for obj in objects.of(kind)}

    def top(key: tuple[str, str, str]) -> tuple[str, str, str]:
        seen = set()
        while key not in seen:
            seen.add(key)
            owner = controller_of(workloads[key]) if key in workloads else None
            if owner is None or (owner[0], key[1], owner[1]) not in workloads:
                return key
            key = (owner[0], key[1], owner[1])
        return key

    own_pods: dict[tuple[str, str, str], list[PodRecord]] = {}
    system: dict[Placement, int] = {}
    records: dict[tuple[str, str], PodRecord] = {}
    for record in objects.pods:
        records[(record.namespace, record.name)] = record
        if record.owner is not None:
            own_pods.setdefault(top((record.owner[0], record.namespace, record.owner[1])), []).append(record)
        if record.placement in SYSTEM_PLACED:
            system[record.placement] = system.get(record.placement, 0) + 1
    rejected: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    pods: list[Subject] = []
    undecided = 0
    for raw in objects.of("Pod"):  # the Pods kept whole: bare ones, and rejected ones of a workload
        kept = records.get((_namespace(raw), _name(raw)))
        if kept is None:
            continue
        if kept.owner is not None:
            rejected.setdefault(top((kept.owner[0], kept.namespace, kept.owner[1])), []).append(raw)
        if kept.placement in SYSTEM_PLACED or _status(raw, "phase") == "Succeeded":
            continue
        undecided += kept.placement is Placement.UNKNOWN
        pods.append(
            Subject(ClusterObject(raw, "Pod", default_namespace), [kept], kept.placement, nodename_managers(raw) or [])
        )
    owners = [
        Subject(ClusterObject(raw, key[0], default_namespace), own_pods.get(key, []), rejected=rejected.get(key, []))
        for key, raw in workloads.items()
        if top(key) == key
    ]
    return Plan(owners + pods, system, undecided)


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _name(obj: dict[str, Any]) -> str:
    return str(_metadata(obj).get("name") or "")


def _namespace(obj: dict[str, Any]) -> str:
    return str(_metadata(obj).get("namespace") or "default")


def run_audit(
    objects: ClusterObjects,
    severities: Mapping[str, Severity | None],
    *,
    default_namespace: str = "default",
    now: datetime | None = None,
) -> RunResult:
    """Audit the objects with the rules at these severities; findings name objects, not files."""
    state = build_state(objects)
    catalogue = all_rules()
    # a rule about files, or about an admission the API server has already made, says so (Rule.not_audited)
    active = {rule: severity for rule, severity in severities.items() if not catalogue[rule].not_audited}
    linter = Linter(active, Context(cluster=state, default_namespace=default_namespace))
    work = plan(objects, default_namespace)
    result = RunResult(skipped_rules=dict(linter.skipped), cluster=objects.source)
    now = now or datetime.now(timezone.utc)
    for subject in work.subjects:
        with state.excluding(subject.own_pods):
            checked = linter.check_object(subject.obj)
        result.objects += 1
        result.notes.extend(checked.internal_errors)
        if subject.placement is None:
            result.findings.extend(checked.findings)
            if subject.rejected and pinned_node(subject.obj):  # a pinned template's Pods the kubelet rejected
                extra = _rejections(subject.obj, checked.findings, subject.rejected, active, state)
                result.findings.extend(f for f in extra if all(f is not seen for seen in checked.findings))
        else:
            result.findings.extend(_pod_findings(subject, checked.findings, active, state, now))
    result.findings.sort(
        key=lambda f: (f.object.key() if f.object else "", -SEVERITY_RANK[f.severity], f.rule, f.message)
    )
    result.notes.extend(_summary_notes(objects, work))
    return result


def _pod_findings(
    subject: Subject,
    findings: list[Finding],
    severities: Mapping[str, Severity | None],
    state: ClusterState,
    now: datetime,
) -> list[Finding]:
    """A bare Pod's findings as its live state qualifies them.

    Pinned by hand and still Pending or Running: every finding, with unknown-node's PodGC
    timeline. Failed with a kubelet admission reason: that rejection, explained by the rule that
    predicts it. Undecided (no managedFields): only those live-state facts.
    """
    obj = subject.obj
    status = obj.get(("status",)) or {}
    phase = status.get("phase") if isinstance(status, dict) else None
    if phase == "Failed":
        return _rejections(obj, findings, [obj.raw], severities, state)
    catalogue = all_rules()
    kept = []
    for finding in findings:
        adds = catalogue[finding.rule].audit_adds  # what the rule declares audit adds (rule.AUDIT_ADDITIONS)
        if adds == "podgc-timeline":
            finding.message = _live(finding.message, _podgc_timeline(obj, phase, now))
        elif subject.placement is Placement.UNKNOWN:
            continue
        elif adds == "nodename-managers" and subject.managers:
            finding.message += f" (nodeName was set at creation by {', '.join(subject.managers)}, per managedFields)"
        elif adds == "node-state-eviction" or (adds == "taint-eviction" and "TaintToleration" in finding.message):
            finding.message = _live(finding.message, _stranded(adds, phase, obj, state))
        finding.fix += (
            f"; a Pod's nodeName, selector and resources cannot change in place: recreate it "
            f"(kubectl delete pod {obj.name} -n {obj.namespace}, then apply the changed manifest)"
        )
        kept.append(finding)
    return kept


def _stranded(adds: AuditAddition, phase: Any, obj: ClusterObject, state: ClusterState) -> str:
    """What becomes of a bare Pod already on a node that turned unusable: nothing recreates it."""
    from .scheduling import NOT_READY_TAINT, UNREACHABLE_TAINT, eviction_delay, tolerations_of, untolerated

    where = f"it is {phase} there" if isinstance(phase, str) else "it is bound there"
    if adds == "taint-eviction":
        return (
            f"{where}: the taint eviction controller deletes a Pod that does not tolerate a NoExecute taint of "
            "its node, and nothing recreates a bare Pod"
        )
    node = (state.nodes or {}).get(str(obj.get(("spec", "nodeName"))))
    taints = [
        t
        for t in (node.taints if node else [])
        if t.get("key") in (NOT_READY_TAINT, UNREACHABLE_TAINT) and t.get("effect") == "NoExecute"
    ]
    tolerations = tolerations_of(obj.pod_spec or {})
    if not taints:
        return f"{where}, on a node that may not run it, and nothing moves a bare Pod elsewhere"
    if untolerated(taints, tolerations, ("NoExecute",)):
        return f"{where}: the taint eviction controller evicts it at once, and nothing recreates a bare Pod"
    delay = eviction_delay(taints, tolerations)
    if delay is None:
        return (
            f"{where} and tolerates the node's NoExecute taint forever: it stays bound to a node that may never "
            "run it, and nothing moves a bare Pod elsewhere"
        )
    return (
        f"{where}: the taint eviction controller evicts it {delay} s after the node's NoExecute taint was set "
        "(its toleration), and nothing recreates a bare Pod"
    )


def _podgc_timeline(obj: ClusterObject, phase: Any, now: datetime) -> str:
    """When PodGC removes a Pod bound to a missing node, counted from the Pod's creation."""
    created = _timestamp(obj.get(("metadata", "creationTimestamp")))
    state = f"it is {phase}" if isinstance(phase, str) else "it has no phase"
    if created is None:
        return f"{state}, and without a creationTimestamp the PodGC timeline cannot be told"
    first, last = created + PODGC_QUARANTINE, created + PODGC_QUARANTINE + 2 * PODGC_PERIOD
    text = (
        f"{state}, created at {_format(created)}: with its node missing since then, PodGC deletes it between "
        f"{_format(first)} and {_format(last)} (its 20 s check period plus a 40 s quarantine)"
    )
    if now > last:
        text += (
            ", which has passed, so PodGC is not running (check kube-controller-manager and its podgc "
            "controller) or the node existed for a while"
        )
    return text


def _rejections(
    obj: ClusterObject,
    findings: list[Finding],
    rejected: list[dict[str, Any]],
    severities: Mapping[str, Severity | None],
    state: ClusterState,
) -> list[Finding]:
    """Findings for Pods the kubelet rejected on admission (the Pod itself, or a pinned workload's Pods).

    Each is explained by the finding of the rule that predicts it, with the kubelet's own
    status.reason and status.message added; when that rule sees no problem now (the node changed
    since), a finding of that rule says what happened. A workload's rejected Pods are counted.
    """
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for pod in rejected:
        rule = reason_rule(_status(pod, "reason"))
        if rule is not None and rule in severities:
            by_rule.setdefault(rule, []).append(pod)
    kept = []
    for rule, pods in by_rule.items():
        newest = max(pods, key=lambda pod: (str(_metadata(pod).get("creationTimestamp") or ""), _name(pod)))
        reason, message = _status(newest, "reason"), _clean(_status(newest, "message")) or "(no status.message)"
        quoted = f'status.reason {reason}, status.message "{message}"'
        node = _spec(newest, "nodeName") or "its node"
        if obj.is_pod:
            said = f"the kubelet did reject it: the Pod is Failed with {quoted}"
            cleanup = f"delete the Failed Pod (kubectl delete pod {obj.name} -n {obj.namespace}): it is never retried"
        else:
            count = f"{len(pods)} of its Pods are" if len(pods) > 1 else "one of its Pods is"
            said = f"the kubelet did reject them: {count} Failed, the newest ({_name(newest)}) with {quoted}"
            cleanup = "delete the Failed Pods (they are never retried; the controller keeps creating new ones)"
        predicted = [f for f in findings if f.rule == rule and reason in f.message] or [
            f for f in findings if f.rule == rule
        ]
        if predicted:
            finding = predicted[0]
            finding.message = _live(finding.message, said)
            finding.fix += f"; then {cleanup}"
            kept.append(finding)
            continue
        kept.append(
            Finding(
                rule=rule,
                severity=severities[rule] or all_rules()[rule].severity,
                file="",
                line=0,
                column=0,
                object=obj.ref,
                message=(
                    f"the kubelet on {node} rejected {obj.kind} {obj.name}'s Pod{'s' if len(pods) > 1 else ''}: "
                    f"{said}; a rejected Pod is never retried or moved. The cause is gone from the cluster now "
                    f"({state.source}): the node or the Pods on it changed since"
                ),
                fix=f"{cleanup}, and pin to a node that fits or drop nodeName and let the scheduler choose",
            )
        )
    return kept


def _live(message: str, addition: str) -> str:
    """A rule's message followed by what the object's live state adds, as a sentence of its own."""
    return f"{message}{' ' if message.endswith(('.', '?')) else '. '}{LIVE}{addition}"


def _status(obj: dict[str, Any], key: str) -> str:
    status = obj.get("status")
    value = status.get(key) if isinstance(status, dict) else None
    return value if isinstance(value, str) else ""


def _spec(obj: dict[str, Any], key: str) -> str:
    spec = obj.get("spec")
    value = spec.get(key) if isinstance(spec, dict) else None
    return value if isinstance(value, str) else ""


def _summary_notes(objects: ClusterObjects, work: Plan) -> list[str]:
    """What was audited, what was left to the system, and what could not be read."""
    workloads = sum(1 for s in work.subjects if s.placement is None)
    pods = len(work.subjects) - workloads
    audited = (
        f"audited {workloads} workload{'s' if workloads != 1 else ''} (each on its top-level owner) and "
        f"{pods} bare Pod{'s' if pods != 1 else ''} of {objects.source}"
    )
    notes = [audited]
    system = sum(work.system_placed.values())
    if system:
        parts = ", ".join(
            f"{count} {_PLACED_BY[where]}"
            for where, count in sorted(work.system_placed.items(), key=lambda item: item[0].value)
        )
        notes.append(f"{system} Pod{'s' if system != 1 else ''} placed by the system were not checked: {parts}")
    if work.undecided:
        many = work.undecided != 1
        notes.append(
            f"{work.undecided} bare Pod{'s' if many else ''} with nodeName {'have' if many else 'has'} no "
            f"managedFields, so who set nodeName is unknown: only {'their' if many else 'its'} live state "
            "(missing node, kubelet rejection) was audited; save the state with --show-managed-fields"
        )
    for resource, reason in objects.unavailable.items():
        what = "bare Pods and the live-state findings" if resource == "pods" else resource
        notes.append(f"not audited: {what}: {reason}")
    if not any(objects.of(kind) for kind in WORKLOADS) and not any(
        WORKLOADS[kind][0] in objects.unavailable for kind in WORKLOADS
    ):
        notes.append(
            f"{objects.source} holds no workloads (Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, "
            "CronJobs): if the cluster has some, save them too (see docs/audit.md)"
        )
    return notes


_PLACED_BY = {
    Placement.CONTROLLER: "by a workload controller (the workload is checked)",
    Placement.DAEMONSET: "by the DaemonSet controller and the scheduler",
    Placement.MIRROR: "mirror Pods of static Pods (the kubelet)",
    Placement.SCHEDULER: "bound by the scheduler (no manager owns nodeName)",
}


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _format(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _clean(text: Any, limit: int = 400) -> str:
    """An API server's text made safe to print: no control characters, bounded length."""
    if not isinstance(text, str):
        return ""
    text = _CONTROL.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
