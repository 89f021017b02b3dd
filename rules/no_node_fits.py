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
NodeResourcesFit unless a request exceeds the node's allocatable) as "No preemption victims found
for incoming pod" and the others as "Preemption is not helpful for scheduling"; with
`preemptionPolicy: Never` it says "not eligible due to preemptionPolicy=Never.". After a PreFilter
rejection DynamicResources' PostFilter fails to read the state its own PreFilter never wrote
(`getStateData`), and its error, "not found", ends the text.

When the cluster state lacks the Pods of some nodes (a live run reads Pods only on the nodes the
manifests name, unless a manifest the scheduler places asks for host ports), those nodes are
compared with their allocatable alone, and the message says so.
Preemption of lower-priority Pods is not predicted: the text assumes no Pod on the nodes where it
could help has a lower priority than this one.

A Deployment, StatefulSet or DaemonSet that already runs in the cluster is not counted against
itself: its own Pods (ownerReferences through its ReplicaSets, or to the workload) are what the
apply keeps or replaces. An unchanged Pod template (compared as the Deployment controller's
`EqualIgnoreHash` does, with the ReplicaSet's or ControllerRevision's template) creates no Pod; a
changed one is played as its controller rolls it out (`NewRSNewReplicas` and
`reconcileOldReplicaSets` with `ResolveFenceposts`' rounding for a Deployment, `rolloutRecreate`,
`updateStatefulSet`'s one-at-a-time replacement, the DaemonSet's `rollingUpdate` with maxSurge 0 by
default), and a finding says when the rollout stalls and which strategy lets it complete (see
docs/cluster-state.md, "A workload that already runs").

## Why is this bad?
The Pod stays Pending with a FailedScheduling event, forever or until the cluster changes. A
workload rolls out nothing, or a Deployment update stalls with its new replicas Pending.

## How to fix
Follow the reasons: lower the requests or add capacity (Insufficient ...), fix the nodeSelector
or affinity or label a node (didn't match), add a toleration (untolerated taint), uncordon a node
(unschedulable).
"""

from collections.abc import Iterator

from nodename_lint.model import Manifest
from nodename_lint.podspec import spec_path
from nodename_lint.rule import Context, Example, Rule, Violation

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
    # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    from nodename_lint.cluster.targets import admitted_spec, pods_noun, runtime_overhead
    from nodename_lint.rollout import workload_rollout
    from nodename_lint.scheduling import (
        AFFINITY_REASON,
        PORTS_REASON,
        RequestError,
        failed_scheduling_message,
        pod_requests,
        request_path,
    )

    cluster = context.cluster
    spec = obj.pod_spec
    if cluster is None or cluster.nodes is None or spec is None or obj.is_static_pod or obj.kind == "DaemonSet":
        return
    if spec.get("nodeName"):
        return
    overhead, counted = runtime_overhead(obj, cluster)
    try:
        requests = pod_requests(spec, overhead=overhead)
    except RequestError:
        return
    rollout = workload_rollout(obj, cluster)  # the workload's own running Pods: what the apply does with them
    if rollout is not None and not rollout.blocks:
        return
    room = rollout.view if rollout else cluster  # the cluster as the rollout leaves it
    verdict = room.no_node_fits(admitted_spec(obj, cluster), requests)  # with the RuntimeClass's scheduling
    if verdict is None:
        return
    counts, unknown_usage, prefilter = verdict.reasons, verdict.unknown_usage, verdict.prefilter
    event = failed_scheduling_message(
        len(cluster.nodes), counts, prefilter, preemption_may_help=verdict.preemption_may_help, spec=spec
    )
    main = max(counts, key=lambda reason: (counts[reason], reason)) if counts else AFFINITY_REASON
    if main == AFFINITY_REASON or main.startswith("node(s) didn't satisfy") or prefilter:
        path = spec_path(obj, "nodeSelector" if "nodeSelector" in spec and main == AFFINITY_REASON else "affinity")
    elif main.startswith("Insufficient "):
        path = spec_path(obj, *request_path(spec, main.removeprefix("Insufficient ")))
    elif main == PORTS_REASON:
        path = spec_path(obj, "containers")
    else:
        path = obj.pod_spec_path or ()
    note = ""
    if unknown_usage:
        note = (
            f" (the Pods already on {unknown_usage} of {len(cluster.nodes)} nodes are not in the cluster state "
            f"{cluster.source}: those nodes were compared with their allocatable alone)"
        )
    fixes = [fix for prefix, fix in _FIXES.items() if any(reason.startswith(prefix) for reason in counts)]
    if prefilter:
        fixes.append("the required node affinity terms name no common node: fix the matchFields metadata.name values")
    fix = "; ".join(fixes) or "change the Pod's constraints"
    noun = rollout.noun(1) if rollout else pods_noun(obj)
    message = f'no node of the cluster can take {noun}: it stays Pending with FailedScheduling "{event}"{note}{counted}'
    yield Violation(path, rollout.explain(message) if rollout else message, fix=rollout.fix(fix) if rollout else fix)
