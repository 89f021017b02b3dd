"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` whose `nodeSelector` or required
node affinity (`requiredDuringSchedulingIgnoredDuringExecution`: matchExpressions with In,
NotIn, Exists, DoesNotExist, Gt, Lt; matchFields on `metadata.name`) does not match that node.
It names the label that is missing or different, and the nodes that would match.

## Why is this bad?
`nodeName` skips the scheduler, but the kubelet still checks the required node affinity on
admission. The Pod goes straight to phase Failed with status `NodeAffinity` ("Pod was rejected:
Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"), and it is
never retried or moved. The selector and the pinned node contradict each other: one of them is
wrong. (The kubelet checks resources first: when the Pod does not fit either, it reports
`OutOfcpu` etc. instead, see insufficient-resources.)

The kubelet matches one label differently from the scheduler: when the node has labels but no
`kubernetes.io/os` label, or one that is not the kubelet's own OS, the kubelet's OS check
(`rejectPodAdmissionBasedOnOSSelector` in `pkg/kubelet/lifecycle/predicate.go`) has already
written its OS into the node's labels, so a selector on `kubernetes.io/os` is matched against the
kubelet's OS (`status.nodeInfo.operatingSystem`).

A DaemonSet's controller checks the same selector and affinity before it creates a Pod, nodeName
or not (`NodeShouldRunDaemonPod`, `predicates` in `pkg/controller/daemon/daemon_controller.go`): when the
pinned node does not match, no Pod is created at all, and the DaemonSet shows 0 Pods desired.

## How to fix
Pin the Pod to a node that has the labels (the message lists some), label the node
(`kubectl label node NODE key=value`), or drop `nodeName` and let the selector choose the node.
"""

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pods_noun, rejection_fate, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import scheduling
    from nodename_lint.cluster import targets
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
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
          labels: {kubernetes.io/hostname: kind-worker, disktype: hdd}
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker2
          labels: {kubernetes.io/hostname: kind-worker2, disktype: ssd}
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: badsel
    spec:
      nodeName: {node}
      nodeSelector:
        disktype: ssd
      containers:
        - name: nginx
          image: nginx:1.27.3-alpine
"""

RULE = Rule(
    id="node-selector-mismatch",
    severity="error",
    summary="nodeSelector or required node affinity does not match the pinned node: "
    "the kubelet rejects the Pod with NodeAffinity.",
    doc=__doc__,
    needs=frozenset({"nodes"}),
    examples=(
        Example(
            "nodeSelector disktype=ssd on an hdd node",
            _POD.replace("{node}", "kind-worker"),
            fails=True,
            cluster=_CLUSTER,
        ),
        Example(
            "the selector matches the pinned node",
            _POD.replace("{node}", "kind-worker2"),
            fails=False,
            cluster=_CLUSTER,
        ),
    ),
)

MAX_LISTED = 3


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    target = targets.pinned_node_or_refusal(obj, context)
    if target is None:
        return
    name, node, cluster, refusal = target
    if refusal is not None:
        if refusal.mismatch is not None:
            yield Violation(
                spec_path(obj, *refusal.mismatch.path),
                targets.daemon_refusal_message(obj, name, refusal.mismatch.detail),
                fix=f"fix the selector or label {name} to match, or pin the template to a node that matches",
            )
        return
    assert cluster.nodes is not None
    spec = targets.admitted_spec(obj, cluster)  # with the RuntimeClass's nodeSelector
    mismatch = scheduling.affinity_mismatch(
        spec, scheduling.kubelet_node(node)
    )  # with the OS label the kubelet may have added
    if mismatch is None:
        return
    try:
        requests = scheduling.pod_requests(spec)
    except scheduling.RequestError:
        requests = {}
    # nodes where the scheduler would put it: the selector matches, no taint, cordon or shortage
    matching = [
        other.name
        for other in cluster.nodes.values()
        if scheduling.scheduler_rejection(spec, requests, other, partial(cluster.usage, other.name)) is None
    ]
    first = scheduling.reported_first(targets.admission_reasons(obj, node, cluster), "NodeAffinity")
    fate = rejection_fate(obj)
    if matching:
        names = ", ".join(matching[:MAX_LISTED]) + (", ..." if len(matching) > MAX_LISTED else "")
        fix = (
            f"drop nodeName and let the selector choose (it would fit on {names}), pin to one of those nodes, "
            f"or label {name} to match"
        )
    else:
        fix = f"no node can take the Pod with this selector now: fix the selector or label {name} to match"
    quote = (
        "" if first else f' (kubelet: "Pod was rejected: Predicate NodeAffinity failed: {scheduling.AFFINITY_REASON}")'
    )
    yield Violation(
        spec_path(obj, *mismatch.path),
        f"{pods_noun(obj)} would be rejected by the kubelet on {name} with NodeAffinity{first}: {mismatch.detail}; "
        f"{fate}{quote}",
        fix=fix,
    )
