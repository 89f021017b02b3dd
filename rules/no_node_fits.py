"""
## What it does
Flags a Pod or a workload (not a DaemonSet) without `spec.nodeName` that no node of the cluster
can take, running the default scheduler's filters in their order on every node: cordon
(NodeUnschedulable), taints with effect NoSchedule or NoExecute (TaintToleration), nodeSelector
and required node affinity (NodeAffinity), then allocatable resources minus the requests of the
non-terminated Pods already there (NodeResourcesFit). The first failing filter counts per node,
as in the scheduler's FailedScheduling event ("0/4 nodes are available: 1 Insufficient cpu, 3
node(s) didn't match Pod's node affinity/selector").

When the cluster state lacks the Pods of some nodes (a live run reads Pods only on the nodes the
manifests name), those nodes are compared with their allocatable alone, and the message says so.
Preemption of lower-priority Pods is not predicted.

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

RULE = Rule(
    id="no-node-fits",
    severity="error",
    summary="No node can take the Pod (resources, selector and affinity, taints, cordon): it stays Pending with FailedScheduling.",
    doc=__doc__,
    needs=frozenset({"nodes"}),
    examples=(
        Example("8 cpu on 4-cpu nodes", _DEPLOYMENT.replace("{cpu}", "8"), fails=True, cluster=_CLUSTER),
        Example("a request a worker can take", _DEPLOYMENT.replace("{cpu}", "1"), fails=False, cluster=_CLUSTER),
    ),
)

_FIXES = {
    "Insufficient": "lower the requests or add a node with more allocatable resources",
    "Too many pods": "free Pod slots or add a node",
    "node(s) didn't match": "fix the nodeSelector or required node affinity, or label a node to match",
    "node(s) had untolerated": "add a toleration for the taint if the Pod belongs on those nodes",
    "node(s) were unschedulable": "uncordon a node (kubectl uncordon NODE)",
}


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    from nodename_lint.cluster.targets import pods_noun
    from nodename_lint.scheduling import (
        AFFINITY_REASON,
        RequestError,
        no_node_available_message,
        pod_requests,
        request_path,
    )

    cluster = context.cluster
    spec = obj.pod_spec
    if cluster is None or cluster.nodes is None or spec is None or obj.is_static_pod or obj.kind == "DaemonSet":
        return
    if spec.get("nodeName"):
        return
    try:
        requests = pod_requests(spec)
    except RequestError:
        return
    verdict = cluster.no_node_fits(spec, requests)
    if verdict is None:
        return
    counts, unknown_usage = verdict.reasons, verdict.unknown_usage
    event = no_node_available_message(len(cluster.nodes), counts)
    main = max(counts, key=lambda reason: (counts[reason], reason))
    if main == AFFINITY_REASON:
        path = spec_path(obj, "nodeSelector" if "nodeSelector" in spec else "affinity")
    elif main.startswith("Insufficient "):
        path = spec_path(obj, *request_path(spec, main.removeprefix("Insufficient ")))
    else:
        path = (obj.pod_spec_path or ())
    note = ""
    if unknown_usage:
        note = (
            f" (the Pods already on {unknown_usage} of {len(cluster.nodes)} nodes are not in the cluster state "
            f"{cluster.source}: those nodes were compared with their allocatable alone)"
        )
    fixes = [fix for prefix, fix in _FIXES.items() if any(reason.startswith(prefix) for reason in counts)]
    yield Violation(
        path,
        f"no node of the cluster can take {pods_noun(obj)}: it stays Pending with FailedScheduling \"{event}\"{note}",
        fix="; ".join(fixes) or "change the Pod's constraints",
    )
