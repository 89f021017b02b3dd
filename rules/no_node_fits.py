"""
## What it does
Flags a Pod or a workload (not a DaemonSet) without `spec.nodeName` that no node of the cluster
can take, running the default scheduler's filters in their order on every node: cordon
(NodeUnschedulable), taints with effect NoSchedule or NoExecute (TaintToleration), nodeSelector
and required node affinity (NodeAffinity), host ports already used by the Pods there (NodePorts,
compared as `host-port-conflict` does), then allocatable resources minus the requests of the
non-terminated Pods already there (NodeResourcesFit). The first failing filter counts per node,
as in the scheduler's FailedScheduling event ("0/4 nodes are available: 1 Insufficient cpu, 3
node(s) didn't match Pod's node affinity/selector", `FitError.Error`).

A required node affinity term with `matchFields` `metadata.name` `In` narrows the search first,
as `findNodesThatFitPod` (`pkg/scheduler/schedule_one.go`) does with the PreFilter result of
NodeAffinity: only the named nodes are filtered, every other node gets the absent-nodes status
"node(s) didn't satisfy plugin(s) [NodeAffinity]", and terms that name no common node fail the
PreFilter itself ("0/3 nodes are available: pod affinity terms conflict. not found"). When the
cluster state has RuntimeClasses, the overhead of the Pod's RuntimeClass is added to its requests.

The text quoted is the whole event, as the PostFilter plugins complete it (`FitError.Error`,
`RunPostFilterPlugins`): DynamicResources finds "no new claims to deallocate", then
DefaultPreemption's own FitError counts the nodes where preemption could help (NodePorts, and
NodeResourcesFit unless a request exceeds the node's allocatable) by what its dry run finds there
("No preemption victims found for incoming pod" where no Pod has a lower priority, else the
filter that still fails without them) and the others as "Preemption is not helpful for
scheduling"; with
`preemptionPolicy: Never` it says "not eligible due to preemptionPolicy=Never.". After a PreFilter
rejection DynamicResources' PostFilter fails to read the state its own PreFilter never wrote
(`getStateData`), and its error, "not found", ends the text.

Preemption is predicted as DefaultPreemption's PostFilter makes it (`Evaluator.Preempt` in
`pkg/scheduler/framework/preemption`, `SelectVictimsOnNode` and `PodEligibleToPreemptOthers` in
`pkg/scheduler/framework/plugins/defaultpreemption`), with the Pod's priority from its
PriorityClass (the Priority admission plugin: the built-in classes, the cluster's, a
`globalDefault` one; see `invalid-priority`). On each node where preemption may help (host
ports, or resources short but within the allocatable) every Pod of a lower priority is removed,
the filters run again, and the Pods are given back, the most important first (`MoreImportantPod`:
higher priority, then the earlier start), while the Pod still fits; the others are the victims.
`pickOneNodeForPreemption` chooses the node (the lowest highest-priority victim, then the lowest
sum of priorities, the fewest victims, the latest start); when nodes tie the message names them
all, as the scheduler picks one in no fixed order. The Pod then gets FailedScheduling with the
filters' text alone, the victims are deleted and the node is nominated: a warning names them. When
no node has victims enough, the text quoted is the PostFilter's own FitError ("preemption: 0/3
nodes are available: 1 Insufficient cpu, 2 Preemption is not helpful for scheduling."); a class
with `preemptionPolicy: Never` makes it "not eligible". PodDisruptionBudgets are not read: the
scheduler prefers victims and nodes that violate none.

When the cluster state lacks the Pods of some nodes (a live run reads Pods only on the nodes the
manifests name, unless a manifest the scheduler places asks for host ports or names a
PriorityClass), those nodes are compared with their allocatable alone, no preemption is predicted
there, and the message says so.

A Deployment, StatefulSet or DaemonSet that already runs in the cluster is not counted against
itself: its own Pods (ownerReferences through its ReplicaSets, or to the workload) are what the
apply keeps or replaces. An unchanged Pod template (compared as the Deployment controller's
`EqualIgnoreHash` does, with the ReplicaSet's or ControllerRevision's template) creates no Pod; a
changed one is played as its controller rolls it out (`NewRSNewReplicas` and
`reconcileOldReplicaSets` with `ResolveFenceposts`' rounding for a Deployment, `rolloutRecreate`,
`updateStatefulSet`'s one-at-a-time replacement, the DaemonSet's `rollingUpdate` with maxSurge 0 by
default), and a finding says when the rollout stalls and which strategy lets it complete (see
docs/cluster-state.md, "A workload that already runs"). The event quoted is the one the new Pod
gets where the rollout stalls: beside the old Pods its strategy keeps running (a surge Pod under
maxUnavailable 0), without those it deletes first. The first new Pod's verdict and event are
checked against the kube-scheduler itself (`tests/test_oracle_rollout.py`).

## Why is this bad?
The Pod stays Pending with a FailedScheduling event, forever or until the cluster changes. A
workload rolls out nothing, or a Deployment update stalls with its new replicas Pending. A Pod
that fits only by preemption deletes Pods of a lower priority, whose replacements may then stay
Pending themselves.

## How to fix
Follow the reasons: lower the requests or add capacity (Insufficient ...), fix the nodeSelector
or affinity or label a node (didn't match), add a toleration (untolerated taint), uncordon a node
(unschedulable).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest, Path
from nodename_lint.podspec import pods_noun, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import preemption, scheduling
    from nodename_lint import rollout as rollouts
    from nodename_lint.cluster import admitted as admission
    from nodename_lint.preemption import Priority, SchedulerPreemption
    from nodename_lint.rollout import Rollout
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    admission = later("nodename_lint.cluster.admitted", globals())
    preemption = later("nodename_lint.preemption", globals())
    rollouts = later("nodename_lint.rollout", globals())
    scheduling = later("nodename_lint.scheduling", globals())

_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-control-plane
          labels: {kubernetes.io/hostname: kind-control-plane}
        spec:
          taints:
            - {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
          labels: {kubernetes.io/hostname: kind-worker, disktype: ssd}
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
"""

_BUSY_CLUSTER = (
    _CLUSTER
    + """
      - apiVersion: v1
        kind: Pod
        metadata:
          name: batch-7c9d4
          namespace: jobs
        spec:
          nodeName: kind-worker
          priority: 0
          containers:
            - name: crunch
              image: busybox:1.37
              resources:
                requests: {cpu: "3"}
        status:
          phase: Running
      - apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: business-critical
        value: 100000
"""
)

_DEPLOYMENT = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: analytics
    spec:
      replicas: 2
      selector:
        matchLabels: {app: analytics}
      template:
        metadata:
          labels: {app: analytics}
        spec:
          nodeSelector:
            disktype: ssd
          containers:
            - name: worker
              image: busybox:1.37
              resources:
                requests:
                  cpu: "{cpu}"
"""

# The Deployment below already runs in this cluster (2 replicas of 3 cpu, one per worker): its
# ReplicaSet, with the template as the API server stores it, and its Pods.
_RUNNING = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
          labels: {kubernetes.io/hostname: kind-worker, disktype: ssd}
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker2
          labels: {kubernetes.io/hostname: kind-worker2, disktype: ssd}
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
      - apiVersion: apps/v1
        kind: ReplicaSet
        metadata:
          name: analytics-6f9d8c7b5
          namespace: default
          ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: analytics, controller: true}]
        spec:
          template:
            metadata:
              labels: {app: analytics, pod-template-hash: 6f9d8c7b5}
            spec:
              nodeSelector: {disktype: ssd}
              containers:
                - name: worker
                  image: busybox:1.37
                  imagePullPolicy: IfNotPresent
                  resources: {requests: {cpu: "3"}}
                  terminationMessagePath: /dev/termination-log
                  terminationMessagePolicy: File
              dnsPolicy: ClusterFirst
              restartPolicy: Always
              schedulerName: default-scheduler
              securityContext: {}
              terminationGracePeriodSeconds: 30
      - apiVersion: v1
        kind: Pod
        metadata:
          name: analytics-6f9d8c7b5-x7k2p
          namespace: default
          ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: analytics-6f9d8c7b5, controller: true}]
        spec:
          nodeName: kind-worker
          containers:
            - {name: worker, image: busybox:1.37, resources: {requests: {cpu: "3"}}}
        status: {phase: Running}
      - apiVersion: v1
        kind: Pod
        metadata:
          name: analytics-6f9d8c7b5-q8w4z
          namespace: default
          ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: analytics-6f9d8c7b5, controller: true}]
        spec:
          nodeName: kind-worker2
          containers:
            - {name: worker, image: busybox:1.37, resources: {requests: {cpu: "3"}}}
        status: {phase: Running}
"""

RULE = Rule(
    id="no-node-fits",
    severity="error",
    summary="No node can take the Pod (resources, selector and affinity, taints, cordon): "
    "it stays Pending with FailedScheduling.",
    doc=__doc__,
    needs=frozenset({"nodes"}),
    examples=(
        Example("8 cpu on 4-cpu nodes", _DEPLOYMENT.replace("{cpu}", "8"), fails=True, cluster=_CLUSTER),
        Example("a request a worker can take", _DEPLOYMENT.replace("{cpu}", "1"), fails=False, cluster=_CLUSTER),
        Example(
            "the same Deployment, already running on both workers: applying it creates no Pod",
            _DEPLOYMENT.replace("{cpu}", "3"),
            fails=False,
            cluster=_RUNNING,
        ),
        Example(
            "a new image for it: the default rolling update starts a new Pod before deleting an old one, and none fits",
            _DEPLOYMENT.replace("{cpu}", "3").replace("busybox:1.37", "busybox:1.38"),
            fails=True,
            cluster=_RUNNING,
        ),
        Example(
            "a higher priority: the scheduler deletes a Pod to make room",
            _DEPLOYMENT.replace("{cpu}", "2").replace(
                "          nodeSelector:", "          priorityClassName: business-critical\n          nodeSelector:"
            ),
            fails=True,
            cluster=_BUSY_CLUSTER,
        ),
    ),
)

_FIXES = {
    "node(s) didn't satisfy plugin(s) [NodeAffinity]": "the required matchFields metadata.name term limits the Pod "
    "to the nodes it names: name existing nodes that can take it, or drop the term",
    "node(s) didn't have free ports": "use another hostPort, or drop hostPort and expose the Pod with a Service",
    "Insufficient": "lower the requests or add a node with more allocatable resources",
    "Too many pods": "free Pod slots or add a node",
    "node(s) didn't match": "fix the nodeSelector or required node affinity, or label a node to match",
    "node(s) had untolerated": "add a toleration for the taint if the Pod belongs on those nodes",
    "node(s) were unschedulable": "uncordon a node (kubectl uncordon NODE)",
}


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    cluster = context.cluster
    spec = obj.pod_spec
    if cluster is None or cluster.nodes is None or spec is None or obj.is_static_pod or obj.kind == "DaemonSet":
        return
    if spec.get("nodeName"):
        return
    overhead, counted = admission.runtime_overhead(obj, cluster)
    try:
        requests = scheduling.pod_requests(spec, overhead=overhead)
    except scheduling.RequestError:
        return
    rollout = rollouts.workload_rollout(obj, cluster)  # the workload's own running Pods: what the apply does with them
    if rollout is not None and not rollout.blocks:
        return
    room = rollout.view if rollout else cluster  # the cluster as the rollout leaves it
    admitted = admission.admitted_spec(obj, cluster)  # with the RuntimeClass's scheduling
    verdict = room.no_node_fits(admitted, requests)
    if verdict is None:
        return
    counts, unknown_usage, prefilter = verdict.reasons, verdict.unknown_usage, verdict.prefilter
    total = len(cluster.nodes)
    priority = admission.pod_priority(obj, cluster)
    outcome = None if prefilter or not total else room.scheduler_preemption(admitted, requests, priority, verdict)
    postfilter = preemption.postfilter_text(outcome, total) if outcome is not None and not outcome.nominated else None
    event = scheduling.failed_scheduling_message(
        total, counts, prefilter, preemption_may_help=verdict.preemption_may_help, spec=spec, preemption=postfilter
    )
    if outcome is not None and outcome.nominated:  # RunPostFilterPlugins stops at the success: no PostFilter text
        event = scheduling.no_node_available_message(total, counts)
    main = max(counts, key=lambda reason: (counts[reason], reason)) if counts else scheduling.AFFINITY_REASON
    if main == scheduling.AFFINITY_REASON or main.startswith("node(s) didn't satisfy") or prefilter:
        path = spec_path(
            obj, "nodeSelector" if "nodeSelector" in spec and main == scheduling.AFFINITY_REASON else "affinity"
        )
    elif main.startswith("Insufficient "):
        path = spec_path(obj, *scheduling.request_path(spec, main.removeprefix("Insufficient ")))
    elif main == scheduling.PORTS_REASON:
        path = spec_path(obj, "containers")
    else:
        path = obj.pod_spec_path or ()
    note = ""
    if unknown_usage:
        note = (
            f" (the Pods already on {unknown_usage} of {len(cluster.nodes)} nodes are not in the cluster state "
            f"{cluster.source}: those nodes were compared with their allocatable alone)"
        )
    if outcome is not None and outcome.unknown and priority.value is not None and not outcome.nominated:
        note += (
            f" (preemption was not predicted on the {outcome.unknown} node(s) whose Pods are not in the cluster "
            "state: the text assumes no Pod of a lower priority there)"
        )
    elif outcome is not None and priority.value is None and not priority.refusal:
        note += (
            f" (PriorityClass {priority.class_name} is not in the cluster state {cluster.source}: preemption was "
            "not predicted)"
        )
    fixes = [fix for prefix, fix in _FIXES.items() if any(reason.startswith(prefix) for reason in counts)]
    if prefilter:
        fixes.append("the required node affinity terms name no common node: fix the matchFields metadata.name values")
    fix = "; ".join(fixes) or "change the Pod's constraints"
    noun = rollout.noun(1) if rollout else pods_noun(obj)
    if outcome is not None and outcome.nominated:
        yield _preempting(noun, path, event, priority, outcome, note + counted, rollout)
        return
    message = f'no node of the cluster can take {noun}: it stays Pending with FailedScheduling "{event}"{note}{counted}'
    yield Violation(path, rollout.explain(message) if rollout else message, fix=rollout.fix(fix) if rollout else fix)


def _preempting(
    noun: str,
    path: Path,
    event: str,
    priority: Priority,
    outcome: SchedulerPreemption,
    note: str,
    rollout: Rollout | None,
) -> Violation:
    """The scheduler makes room by preemption: it deletes Pods of a lower priority and nominates the node."""

    choices = outcome.nominated
    if len(choices) == 1:
        where = f"nominates node {choices[0].node} and deletes {preemption.pod_names(choices[0].victims)} there"
    else:
        listed = ", ".join(f"{choice.node} (deleting {preemption.pod_names(choice.victims)})" for choice in choices)
        where = (
            f"nominates one of the nodes {listed} and deletes those Pods there (the nodes tie on every criterion "
            "of pickOneNodeForPreemption: it picks one in no fixed order)"
        )
    victims = sorted({pod.priority for choice in choices for pod in choice.victims})
    lower = "priority " + ("/".join(str(value) for value in victims))
    message = (
        f'no node of the cluster can take {noun} as it stands: it first gets FailedScheduling "{event}", '
        f"then, as its {priority.text} is above the {lower} of Pods it may displace, the scheduler {where} "
        "(preemption); the Pod is bound there once they are gone, and their controllers' replacements may stay "
        f"Pending{note}"
    )
    fix = (
        "add capacity or lower the requests so that the Pod fits without displacing others, or give it a lower "
        "PriorityClass (or preemptionPolicy: Never) if it should wait for room instead"
    )
    if rollout is not None:
        message, fix = rollout.explain(message), rollout.fix(fix)
    return Violation(path, message, fix=fix, severity="warning")
