"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` to a node under resource
pressure: its `DiskPressure` or `PIDPressure` condition is True (every Pod that is not critical
is refused), or `MemoryPressure` alone is True and the Pod is BestEffort (no cpu or memory
requests or limits) without a toleration for `node.kubernetes.io/memory-pressure`.

A Pod with a pod-level `spec.resources` block is BestEffort when that block sets no cpu or memory,
whatever its containers request: `ComputePodQOS` (`pkg/apis/core/v1/helper/qos`) reads only the
pod-level block once it is there, even empty (`resources: {}`), and the API server sets
`status.qosClass` from the same function. A DaemonSet's Pods are admitted under memory pressure
alone: its controller gives each Pod a toleration for `node.kubernetes.io/memory-pressure`
(`AddOrUpdateDaemonPodTolerations`), as a RuntimeClass's tolerations may.

Critical Pods are admitted under pressure, as in the kubelet: static Pods and Pods with
priority class `system-node-critical` or `system-cluster-critical` (a priority of at least
2000000000).

## Why is this bad?
The `node.kubernetes.io/disk-pressure` NoSchedule taint only keeps the scheduler away, and
`nodeName` bypasses the scheduler. The kubelet's first admission handler is the eviction
manager (`managerImpl.Admit` in `pkg/kubelet/eviction/eviction_manager.go`): while the node has
a pressure condition it refuses the Pod before any other check. The Pod goes to phase Failed
with reason `Evicted` and the message "The node had condition: [DiskPressure]. " (with its
trailing space, `nodeConditionMessageFmt`); it is never retried or moved, and a controller keeps
creating replacements that fail the same way.

## How to fix
Pick a node without pressure (`kubectl describe node` shows the conditions), free disk or
memory on the node first, give a BestEffort Pod requests (Burstable Pods are admitted under
memory pressure), or drop `nodeName` and let the scheduler choose.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pods_noun, rejection_fate, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import scheduling
    from nodename_lint.cluster import admitted as admission
    from nodename_lint.cluster import targets
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    admission = later("nodename_lint.cluster.admitted", globals())
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
        spec:
          taints:
            - {key: node.kubernetes.io/disk-pressure, effect: NoSchedule}
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
          conditions:
            - {type: DiskPressure, status: "True"}
            - {type: Ready, status: "True"}
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker2
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
          conditions:
            - {type: DiskPressure, status: "False"}
            - {type: Ready, status: "True"}
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: report
    spec:
      nodeName: {node}
      containers:
        - name: report
          image: busybox:1.37
          resources:
            requests: {cpu: 100m, memory: 64Mi}
"""

RULE = Rule(
    id="node-pressure",
    severity="error",
    summary="The pinned node has DiskPressure or PIDPressure (or MemoryPressure for a BestEffort Pod): the kubelet "
    "refuses it as Evicted.",
    doc=__doc__,
    needs=frozenset({"nodes"}),
    examples=(
        Example("a node under disk pressure", _POD.replace("{node}", "kind-worker"), fails=True, cluster=_CLUSTER),
        Example("a node without pressure", _POD.replace("{node}", "kind-worker2"), fails=False, cluster=_CLUSTER),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    target = targets.pinned_existing_node(obj, context)
    if target is None:
        return
    name, node, cluster = target
    spec = admission.admitted_spec(obj, cluster)  # a DaemonSet's Pods tolerate memory pressure
    conditions = scheduling.pressure_rejection(spec, node, static=False)
    if not conditions:
        return
    listed = " and ".join(conditions)
    if conditions == ["MemoryPressure"]:
        if isinstance(spec.get("resources"), dict):
            why = (
                f"node {name} has MemoryPressure and the Pod is BestEffort: spec.resources is there but sets no "
                "cpu or memory, and once it is there the containers' requests and limits do not count"
            )
            fix = "set cpu or memory requests in spec.resources or remove it, pick another node, or drop nodeName"
        else:
            why = f"node {name} has MemoryPressure and the Pod is BestEffort (no cpu or memory requests or limits)"
            fix = (
                "give the containers cpu and memory requests (Burstable Pods are admitted under memory pressure), "
                "pick another node, or drop nodeName"
            )
    else:
        why = f"node {name} has {listed}, under which the kubelet admits only critical Pods"
        freed = "disk" if "DiskPressure" in conditions else "PIDs"
        fix = (
            f"pick a node without pressure, free {freed} on {name} first, or drop nodeName and let the scheduler choose"
        )
    order = " (the kubelet lists the conditions in no fixed order)" if len(conditions) > 1 else ""
    yield Violation(
        spec_path(obj, "nodeName"),
        f"{pods_noun(obj)} would be rejected by the kubelet on {name} with Evicted: {why}; {rejection_fate(obj)} "
        f'(kubelet: "Pod was rejected: {scheduling.pressure_message(conditions)}"{order})',
        fix=fix,
        cause=f"node {name}",
    )
