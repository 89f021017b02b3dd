"""
## What it does
Flags a Pod, or a workload's Pod template, that sets `spec.nodeName` together with a required node
affinity (`affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`). When the
affinity's `matchFields` on `metadata.name` leave the pinned node out, the rejection is certain and
the finding is an error.

## Why is this bad?
A required node affinity is written for the scheduler, and `nodeName` takes the scheduler out:
the affinity never chooses a node. The kubelet on the named node admits the Pod directly
(NoSchedule taints and cordon are not checked) and evaluates the affinity only then, in its
admission check (`predicateAdmitHandler.Admit` in `pkg/kubelet/lifecycle/predicate.go`, through the
scheduler's `AdmissionCheck`: `GetRequiredNodeAffinity(pod).Match(node)` in component-helpers
`scheduling/corev1/nodeaffinity`). If the node does not match, the Pod goes straight to Failed with
status `NodeAffinity` ("Predicate NodeAffinity failed: node(s) didn't match Pod's node
affinity/selector") and is never retried or moved. So the affinity is redundant when the node
matches and fatal when it does not: either way it does not do what it was written for.

Offline, only `matchFields` on `metadata.name` can be compared with the pinned node. With a cluster
state, `node-selector-mismatch` compares the whole affinity with the node's labels and supersedes
this rule when it does not match; on a workload's template `nodename-in-template` supersedes it.
This rule supersedes `nodename-on-pod`: it says all that one says. A DaemonSet's controller checks the
affinity itself before it creates a Pod (`NodeShouldRunDaemonPod`): a pinned node the affinity leaves
out gets no Pod at all.

## How to fix
Drop `nodeName` and let the scheduler place the Pod by its affinity (it then also checks taints,
cordon and resources), or drop the affinity if the Pod must run on that node.
"""

from collections.abc import Iterator

from nodename_lint.model import Manifest
from nodename_lint.podspec import (
    REQUIRED_NODE_AFFINITY,
    dotted,
    pinned_node,
    pods_noun,
    rejection_fate,
    required_node_names,
    required_node_selector_terms,
    spec_path,
)
from nodename_lint.rule import Context, Example, Rule, Violation

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: cache
    spec:
      nodeName: worker-2
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - {term}
      containers:
        - name: redis
          image: redis:7.4-alpine
"""
_SSD = "matchExpressions: [{key: disktype, operator: In, values: [ssd]}]"

RULE = Rule(
    id="nodename-with-node-affinity",
    severity="warning",
    summary="spec.nodeName with a required node affinity: the scheduler never sees the affinity; the kubelet "
    "rejects the Pod (NodeAffinity) if the node does not match.",
    doc=__doc__,
    supersedes=frozenset({"nodename-on-pod"}),
    superseded_by=frozenset({"node-selector-mismatch", "nodename-in-template"}),
    audit_adds="nodename-managers",
    examples=(
        Example(
            "a Pod pinned to a node, with a required node affinity on a label", _POD.replace("{term}", _SSD), fails=True
        ),
        Example(
            "an affinity that names another node: certain rejection",
            _POD.replace("{term}", "matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]"),
            fails=True,
        ),
        Example(
            "use instead: the affinity alone, and the scheduler picks a node that matches",
            _POD.replace("{term}", _SSD).replace("  nodeName: worker-2\n", ""),
            fails=False,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    node = pinned_node(obj)
    if node is None or obj.is_static_pod:
        return  # before the spec is made plain values: most objects pin no node
    spec = obj.pod_spec
    if spec is None or required_node_selector_terms(spec) is None:
        return
    path = spec_path(obj, "nodeName")
    pods, fate = pods_noun(obj), rejection_fate(obj)
    allowed = required_node_names(spec)
    if allowed is not None and node not in allowed:
        names = ", ".join(sorted(allowed))
        allows = f"allows only node {names}" if allowed else "allows no node (its terms conflict)"
        outcome = (
            f"the DaemonSet controller checks the affinity before it creates a Pod, so none is ever created for {node}"
            if obj.kind == "DaemonSet"  # NodeShouldRunDaemonPod
            else f'the kubelet on {node} rejects {pods} with NodeAffinity; {fate} (kubelet: "Pod was rejected: '
            "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector\")"
        )
        yield Violation(
            path,
            f"{dotted(path)}: {node} bypasses the scheduler, and the required node affinity {allows} "
            f"(matchFields metadata.name): {outcome}",
            fix=f"pin to {names}, or drop nodeName and let the scheduler place the Pod by its affinity"
            if allowed
            else "fix the affinity's terms, and drop nodeName so that the scheduler places the Pod by them",
            severity="error",
        )
        return
    yield Violation(
        path,
        f"{dotted(path)}: {node} bypasses the scheduler, so the required node affinity "
        f"({dotted(spec_path(obj, *REQUIRED_NODE_AFFINITY))}) never chooses the node: the kubelet on {node} admits "
        f"{pods} directly (NoSchedule taints and cordon are not checked) and checks the affinity only then; if {node} "
        f"does not match it, the kubelet rejects {pods} with NodeAffinity and {fate}",
        fix=f"drop nodeName and let the scheduler place the Pod by its affinity (it also checks taints and resources), "
        f"or drop the affinity if the Pod must run on {node}",
    )
