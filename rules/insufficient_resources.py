"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` to a node that cannot fit it:
its requests exceed the node's allocatable cpu, memory, ephemeral-storage, Pod count or an
extended resource, minus what the non-terminated Pods already there request. It predicts the
kubelet's rejection with its exact reason (`OutOfcpu`, `OutOfmemory`, `OutOfephemeral-storage`,
`OutOfpods`, `OutOf<resource>`) and message, and says whether the Pod can never fit that node or
does not fit now. For a template, all replicas land on the node: they are counted.

Requests are computed as the kubelet does (`PodRequests`): containers summed, sidecars
(restartable init containers) added, the largest init container counted, `spec.overhead` added,
Pod-level `spec.resources.requests` taking precedence; a limit without a request counts as the
request (API defaulting, `SetDefaults_Pod`). Pod-level limits default the pod-level requests as
`defaultPodRequests` does: to the containers' aggregated requests where containers request the
resource, else to the limit. When the cluster state has RuntimeClasses, the overhead of the
Pod's `runtimeClassName` is added (the RuntimeClass admission plugin sets `spec.overhead`) and
the message says which class was counted.

The kubelet checks pods, cpu, memory and ephemeral-storage in that order, then extended
resources and hugepages in Go map order (`noderesources.Fits`): when several of those are short,
the message says the Pod is rejected with one of them, not which one. When an earlier check
decides what the Pod shows (node pressure, the OS; for a later replica, a host port an earlier
one took), the message says so and quotes no kubelet text.

A critical Pod is not simply refused. A Pod is critical (`kubetypes.IsCriticalPod`) when it is a
static Pod or its priority is at least 2000000000: `priorityClassName: system-node-critical` or
`system-cluster-critical` (the Priority admission plugin resolves the class; see
`invalid-priority`). The kubelet hands its failures to the critical Pod admission handler
(`CriticalPodAdmissionHandler.HandleAdmissionFailure`, `pkg/kubelet/preemption/preemption.go`):

- when another check fails too (node affinity, host ports, a NoExecute taint), that failure is
  what the Pod shows, not the shortage, and nothing is evicted (the rule of that check reports it);
- otherwise `getPodsToPreempt` chooses Pods to evict among those it may (`Preemptable`: not
  critical, or of a lower priority; a static Pod's own priority is what its file says, or none):
  Guaranteed Pods for what the BestEffort and Burstable ones together cannot free, then Burstable,
  then BestEffort Pods, each time the one closest to what is missing first
  (`getPodsToPreemptByDistance`; of two alike, the one listed last). The Pod is admitted, and this
  rule warns with the Pods evicted (they go to Failed with reason `Preempting`); what each frees
  is `GetResourceRequest` (with pod-level resources only the pod-level ones count);
- when evicting all of them is not enough, the Pod is rejected with `UnexpectedAdmissionError`
  and the kubelet's exact text ("preemption: error finding a set of pods to preempt: no set of
  running pods found to reclaim resources: [(res: cpu, q: 1000), ]").

For a critical template's replicas, each admission counts the Pods the earlier ones evicted as
gone. Static Pods are checked against the node named with `--static-pod-node NAME` (the node
whose kubelet reads the folder). The webhook's watched state counts each node's Pods without
their priorities: there the warning says the kubelet evicts lower-priority Pods or rejects the
Pod, not which.

Quantities are read exactly as apimachinery does, and added up exactly (`Quantity.Add`): a Pod's
total is rounded up once (cpu to millicores, the rest to whole units), as `PodRequests` and
`MilliValue()`/`Value()` do. A request that is not a valid quantity is left to the API server,
which rejects the manifest; this rule then skips the object.

A pinned workload that already runs on the node is not counted against itself: the kubelet meets
its new Pods only as its controller makes them (an unchanged template makes none; a Deployment's
default maxSurge starts a new Pod beside the old ones, `ResolveFenceposts`; a StatefulSet recreates
each Pod in its old one's place, `updateStatefulSet`; a DaemonSet replaces its Pod in place unless
maxSurge is set). The message then says what the rollout does and which strategy lets it complete
(docs/cluster-state.md, "A workload that already runs"). The text quoted is the kubelet's for the
new Pod where the rollout stalls, counting the old Pods the strategy keeps beside it; the first new
Pod's verdict, reason and text (and how many replicas a `Recreate` gets admitted) are checked
against the kubelet's admission itself (`tests/test_oracle_rollout.py`).

## Why is this bad?
With `nodeName` the scheduler never checks resources, but the kubelet does on admission. The Pod
goes straight to phase Failed with the reason in kubectl's STATUS column (`OutOfcpu`) and
`Pod was rejected: Node didn't have enough resource: cpu, requested: 100000, used: 950,
capacity: 4000`. It is never retried or moved to another node. A controller keeps creating
replacements that are rejected the same way, and failed Pods pile up.

A critical Pod that fits only by eviction kills Pods that did nothing wrong; one the kubelet
cannot make room for fails with `UnexpectedAdmissionError` instead of `OutOfcpu`.

## How to fix
Lower the request, pick a node with room (`kubectl describe node` shows allocatable and
allocated resources), or drop `nodeName` and let the scheduler place the Pod. For a critical Pod,
make room first or give it a lower PriorityClass if it need not displace others.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from nodename_lint.model import Manifest, Path
from nodename_lint.podspec import pods_noun, rejection_fate, replica_count, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import preemption, quantity, scheduling
    from nodename_lint import rollout as rollouts
    from nodename_lint.cluster import admitted as admission
    from nodename_lint.cluster import records, targets
    from nodename_lint.cluster.state import ClusterState
    from nodename_lint.preemption import KubeletAdmission
    from nodename_lint.scheduling import Shortage
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    admission = later("nodename_lint.cluster.admitted", globals())
    preemption = later("nodename_lint.preemption", globals())
    quantity = later("nodename_lint.quantity", globals())
    records = later("nodename_lint.cluster.records", globals())
    rollouts = later("nodename_lint.rollout", globals())
    scheduling = later("nodename_lint.scheduling", globals())
    targets = later("nodename_lint.cluster.targets", globals())

_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110", ephemeral-storage: 61255492Ki}
      - apiVersion: v1
        kind: Pod
        metadata:
          name: web-5d8f7c9b6d-2lq8x
          namespace: default
        spec:
          nodeName: kind-worker
          containers:
            - name: nginx
              image: nginx:1.27.3-alpine
              resources:
                requests: {cpu: 950m, memory: 512Mi}
        status:
          phase: Running
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: bigcpu
    spec:
      nodeName: kind-worker
      containers:
        - name: stress
          image: busybox:1.37
          resources:
            requests:
              cpu: "{cpu}"
"""

RULE = Rule(
    id="insufficient-resources",
    severity="error",
    summary="The pinned node cannot fit the Pod's requests: the kubelet rejects it with OutOfcpu, OutOfmemory, ...",
    doc=__doc__,
    needs=frozenset({"nodes"}),
    examples=(
        Example("100 cpu on a 4-cpu node", _POD.replace("{cpu}", "100"), fails=True, cluster=_CLUSTER),
        Example("a request that fits", _POD.replace("{cpu}", "500m"), fails=False, cluster=_CLUSTER),
        Example(
            "a critical Pod on a full node: the kubelet evicts a Pod to admit it",
            _POD.replace("{cpu}", "3500m").replace(
                "      nodeName: kind-worker\n",
                "      nodeName: kind-worker\n      priorityClassName: system-node-critical\n",
            ),
            fails=True,
            cluster=_CLUSTER,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    target = targets.admission_target(obj, context)
    if target is None:
        return
    name, node, cluster = target
    spec = obj.pod_spec or {}
    overhead, counted = targets.runtime_overhead(obj, cluster)
    try:
        requests = scheduling.pod_requests(spec, overhead=overhead)
    except scheduling.RequestError:
        return
    rollout = rollouts.workload_rollout(obj, cluster)  # the workload's own running Pods: what the apply does with them
    if rollout is not None:
        if not rollout.blocks:  # it completes, the kubelet perhaps evicting other Pods for critical new ones
            if rollout.evicting:
                evicting, noun = rollout.evicting, rollout.noun(len(rollout.evicting))
                for finding in _critical_findings(obj, name, cluster, spec, evicting, len(evicting), counted, noun):
                    yield finding._replace(message=rollout.explain(finding.message))
            return
        cluster = rollout.view
    usage = cluster.usage(name)
    replicas = rollout.to_place if rollout else replica_count(obj)
    noun = rollout.noun(replicas) if rollout else pods_noun(obj)
    critical = targets.critical_admissions(obj, node, cluster, min(replicas, 100_000), until_rejected=True)
    if critical is not None:  # the kubelet's critical Pod admission: evictions, or UnexpectedAdmissionError
        for finding in _critical_findings(obj, name, cluster, spec, critical, replicas, counted, noun):
            if rollout is not None:
                finding = finding._replace(message=rollout.explain(finding.message), fix=rollout.fix(finding.fix))
            yield finding
        return
    current = records.NodeUsage(usage.pods, dict(usage.requested)) if usage else records.NodeUsage(0, {})
    for admitted in range(min(replicas, 100_000)):  # noqa: B007  (read after the loop: how many fit)
        found = scheduling.shortages(requests, node, current, kubelet=True)
        if found:
            break
        current.pods += 1
        scheduling.add_into(current.requested, requests)
    else:
        return
    shortage = found[0]
    resource = shortage.resource
    reason = shortage.kubelet_reason
    # pressure or the OS may come first; for a later replica, a host port its siblings took
    first = scheduling.reported_first(targets.admission_reasons(obj, node, cluster, replicas_before=admitted), reason)
    exact = resource in ("pods", *scheduling.NATIVE_ORDER) or len(found) == 1
    if not exact:  # scalar resources: Go map order
        reason = f"one of {', '.join(s.kubelet_reason for s in found)} (the kubelet checks these in no fixed order)"
    reason += first
    head = _rejected(noun, name, name, replicas, admitted, reason)
    others = "the Pods already there" + (f" and the first {admitted} replicas" if admitted else "")
    if resource == "pods":
        detail = f"the node already runs {shortage.used} of the {shortage.capacity} Pods it allows"
        fix = "pick another node, or drop nodeName and let the scheduler choose"
    elif shortage.never_fits:
        detail = (
            f"it requests {quantity.describe(resource, shortage.requested)} and the node has "
            f"{quantity.describe(resource, shortage.capacity)} allocatable, so it can never fit there"
        )
        fix = (
            f"lower the {resource} request below {quantity.describe(resource, shortage.capacity)} or pin to a node "
            f"with more allocatable {resource}"
        )
    else:
        free = shortage.capacity - shortage.used
        if replicas > 1:  # what each replica may request for all of them to fit
            free = (shortage.capacity - (usage.requested.get(resource, 0) if usage else 0)) // replicas
        detail = (
            f"it requests {quantity.describe(resource, shortage.requested)} but only "
            f"{quantity.describe(resource, shortage.capacity - shortage.used)} of "
            f"{quantity.describe(resource, shortage.capacity)} allocatable is free now "
            f"({quantity.describe(resource, shortage.used)} requested by {others}), so it does not fit now"
        )
        fix = (
            f"lower the {resource} request to at most {quantity.describe(resource, max(free, 0))} or pick another node"
        )
    if replicas > 1:
        fix += ", or run fewer replicas, or use a nodeSelector instead of nodeName so the scheduler spreads them"
    if usage is None:
        detail += (
            f" (the Pods already on {name} are not in the cluster state {cluster.source}: only allocatable was "
            "compared)"
        )
    detail += counted
    fate = rejection_fate(obj)
    path = (
        spec_path(obj, "nodeName") if resource == "pods" else spec_path(obj, *scheduling.request_path(spec, resource))
    )
    # without the node's Pods the kubelet's "used" is unknown, so its message cannot be quoted; nor can
    # it when another check decides what the Pod shows
    quoted = usage is not None and exact and not first
    quote = f' (kubelet: "Pod was rejected: {shortage.kubelet_message}")' if quoted else ""
    message = f"{head}: {detail}; {fate}{quote}"
    yield Violation(path, rollout.explain(message) if rollout else message, fix=rollout.fix(fix) if rollout else fix)


def _critical_findings(
    obj: Manifest,
    name: str,
    cluster: ClusterState,
    spec: dict[str, Any],
    admissions: list[KubeletAdmission],
    replicas: int,
    counted: str,
    pods: str,
) -> Iterator[Violation]:
    """A critical Pod's fate on a full node: the kubelet evicts Pods to admit it (a warning naming them), or
    rejects it with UnexpectedAdmissionError when evicting every Pod it may evict is not enough."""

    def at(resource: str) -> Path:
        return (
            spec_path(obj, "nodeName")
            if resource == "pods"
            else spec_path(obj, *scheduling.request_path(spec, resource))
        )

    if obj.is_static_pod:
        why = "it is a static Pod, which the kubelet treats as critical"
        noun = f"static Pod {obj.shown_name}"
        where = f"{name} (--static-pod-node)"
    else:
        why = f"its {admission.pod_priority(obj, cluster).text} makes it critical"
        noun = pods
        where = name
    rejected = next((index for index, admission in enumerate(admissions) if not admission.admitted), None)
    before = admissions if rejected is None else admissions[:rejected]
    uncounted = next((a for a in before if a.eviction is not None and not a.eviction.computed), None)
    if uncounted is not None and uncounted.eviction is not None:
        outcome = (
            f"the kubelet evicts some of the {uncounted.eviction.candidates} Pods there it may evict to admit it (too "
            "many to compute which)"
            if uncounted.eviction.pods_known
            else f"the kubelet evicts Pods that are not critical and of a lower priority to admit it, or rejects it "
            f"with {preemption.UNEXPECTED_ADMISSION_ERROR} if they do not free enough (the cluster state "
            f"{cluster.source} counts the Pods on {name} but does not hold them one by one)"
        )
        yield Violation(
            at(uncounted.shortages[0].resource),
            f"{noun} does not fit on {where} as it stands ({_lacks(uncounted.shortages)}), but {why}: {outcome}"
            + counted,
            fix=f"make room on {name} first, pick a node with room, or use a lower PriorityClass if the Pod need not "
            "displace others",
            severity="warning",
        )
        return
    evicting = [(a.shortages, a.eviction) for a in before if a.eviction is not None and a.eviction.evicts]
    if evicting:
        evicted = [pod for _, eviction in evicting for pod in eviction.evicts]
        first = evicting[0][0]
        tie = any(eviction.tie for _, eviction in evicting)
        them = "it" if replicas == 1 else "them"
        yield Violation(
            at(first[0].resource),
            f"{noun} {'does' if replicas == 1 else 'do'} not fit on {where} as it stands ({_lacks(first)}), but "
            f"{why}: the kubelet evicts {preemption.pod_names(evicted)} to admit {them} (evicted Pods go to Failed "
            f'with reason {preemption.PREEMPTED_REASON}, "{preemption.PREEMPTED_MESSAGE}")'
            + (
                "; which of several Pods of the same size goes depends on the order the kubelet lists its Pods in"
                if tie
                else ""
            )
            + counted,
            fix=f"make room on {name} first (move or scale down {preemption.pod_names(evicted)}), pick a node with "
            "room, or use a lower PriorityClass if the Pod need not displace others",
            severity="warning",
        )
    if rejected is None or admissions[rejected].reasons[0] != preemption.UNEXPECTED_ADMISSION_ERROR:
        return  # admitted, or rejected for another reason that its own rule reports
    rejection = admissions[rejected]
    eviction = rejection.eviction
    head = _rejected(noun, where, name, replicas, rejected, preemption.UNEXPECTED_ADMISSION_ERROR)
    known = cluster.usage(name) is not None and eviction is not None and bool(eviction.message)
    if known and eviction is not None:
        resource, missing = eviction.unmet[0]
        lacking = ", ".join(
            f"{amount} Pod slot{'s' if amount != 1 else ''}" if res == "pods" else _amount(res, amount)
            for res, amount in eviction.unmet
        )
        may = (
            f"may evict only the {eviction.candidates} Pod{'s' if eviction.candidates != 1 else ''} there that "
            "are not critical or have a lower priority"
            if eviction.candidates
            else "finds no Pod there it may evict (all are critical, or of the same or a higher priority)"
        )
        detail = (
            f"{_lacks(rejection.shortages)}; {why}, and the kubelet's critical Pod admission {may}: "
            f"{'even with all of them gone, ' if eviction.candidates else ''}{lacking} would be missing"
        )
        requested = next(s.requested for s in rejection.shortages if s.resource == resource)
        most = quantity.describe(resource, requested - missing)
        fix = (
            "pick another node"
            if resource == "pods"
            else f"lower the {resource} request to at most {most} or pick another node"
        )
    else:
        resource = rejection.shortages[0].resource
        detail = (
            f"{_lacks(rejection.shortages)}, beyond what the node can hold: {why}, but no eviction makes room for a "
            f"request larger than the allocatable (the Pods already on {name} are not in the cluster state "
            f"{cluster.source})"
        )
        fix = f"lower the {resource} request or pin to a node with more allocatable {resource}"
    if replicas > 1:
        fix += ", or run fewer replicas, or use a nodeSelector instead of nodeName so the scheduler spreads them"
    fate = "the kubelet never runs it and its mirror Pod shows Failed" if obj.is_static_pod else rejection_fate(obj)
    quote = f' (kubelet: "Pod was rejected: {eviction.message}")' if known and eviction and eviction.exact else ""
    yield Violation(at(resource), f"{head}: {detail}{counted}; {fate}{quote}", fix=fix)


def _lacks(found: list[Shortage]) -> str:
    """What the node lacks for the Pod, each shortage as the kubelet counts it."""

    parts = []
    for shortage in found:
        resource = shortage.resource
        if resource == "pods":
            parts.append(f"the node already runs {shortage.used} of the {shortage.capacity} Pods it allows")
        else:
            parts.append(
                f"it requests {_amount(resource, shortage.requested)} and "
                f"{quantity.describe(resource, max(shortage.capacity - shortage.used, 0))} of "
                f"{quantity.describe(resource, shortage.capacity)} allocatable is free"
            )
    return "; ".join(parts)


def _amount(resource: str, amount: int) -> str:
    """`2 cpu`, `512Mi of memory`, `2 nvidia.com/gpu`: an amount that says its resource."""

    text = quantity.describe(resource, amount)
    return text if resource == "cpu" or text.endswith(resource) else f"{text} of {resource}"


def _rejected(noun: str, where: str, name: str, replicas: int, admitted: int, reason: str) -> str:
    """What the kubelet does with the Pods: "Pod x would be rejected ...", or how many replicas fit first."""
    if replicas == 1:
        return f"{noun} would be rejected by the kubelet on {where} with {reason}"
    if admitted == 0:
        return f"none of {noun} fits on {name}: each would be rejected by the kubelet with {reason}"
    return (
        f"only {admitted} of {noun} fit on {name}: replica {admitted + 1} would be rejected by the kubelet with "
        f"{reason}"
    )
