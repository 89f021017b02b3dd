"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` to a node that is NotReady or
Unknown (its Ready condition), cordoned (`spec.unschedulable`), or tainted
`node.kubernetes.io/not-ready` or `node.kubernetes.io/unreachable`.

## Why is this bad?
Cordon and the NoSchedule not-ready taints only stop the scheduler, and `nodeName` bypasses the
scheduler: the Pod is bound to the node anyway. On a node whose kubelet is down or unreachable,
nothing starts it and it stays Pending; with the NoExecute not-ready/unreachable taint the taint
eviction controller evicts it after 300 s (the toleration the API server adds by default). A
cordoned node is usually being drained or maintained: the Pod lands there and dies with it.

A DaemonSet's Pods are the exception the controller makes on purpose: it gives each one tolerations
for the not-ready and unreachable NoExecute taints without tolerationSeconds and for the
unschedulable taint (`AddOrUpdateDaemonPodTolerations`), so they are never evicted for those, and a
cordoned node is not reported for them (`kubectl drain --ignore-daemonsets` leaves them there too).

## How to fix
Wait until the node is Ready and uncordoned (`kubectl uncordon NODE`), pick a Ready node from
`kubectl get nodes`, or drop `nodeName` and let the scheduler choose.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pods_noun, spec_path
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
        status:
          conditions:
            - {type: Ready, status: "True"}
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker4
        spec:
          unschedulable: true
        status:
          conditions:
            - {type: Ready, status: Unknown, reason: NodeStatusUnknown}
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: debug
    spec:
      nodeName: {node}
      containers:
        - name: shell
          image: busybox:1.37
"""

RULE = Rule(
    id="node-not-ready",
    severity="warning",
    summary="The pinned node is NotReady, unreachable or cordoned: "
    "nodeName bypasses cordon, and the Pod may never start.",
    doc=__doc__,
    audit_adds="node-state-eviction",
    needs=frozenset({"nodes"}),
    examples=(
        Example(
            "a cordoned node whose kubelet stopped reporting",
            _POD.replace("{node}", "kind-worker4"),
            fails=True,
            cluster=_CLUSTER,
        ),
        Example("a Ready node", _POD.replace("{node}", "kind-worker"), fails=False, cluster=_CLUSTER),
    ),
)

_READY_TEXT = {
    "False": "NotReady (its kubelet reports it is not ready)",
    "Unknown": "Unknown (its kubelet stopped reporting)",
}


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    target = targets.pinned_existing_node(obj, context)
    if target is None:
        return
    name, node, cluster = target
    problems: list[str] = []
    ready = node.conditions.get("Ready")
    if ready != "True":
        problems.append(
            f"node {name} is "
            + _READY_TEXT.get(ready or "", "not Ready (it has no Ready condition)")
            + ", so nothing may ever start the Pod there"
        )
    state_taints = [
        t for t in node.taints if t.get("key") in (scheduling.NOT_READY_TAINT, scheduling.UNREACHABLE_TAINT)
    ]
    if state_taints:
        evicting = scheduling.untolerated(
            [t for t in state_taints if t.get("effect") == "NoExecute"],
            # a DaemonSet's Pods tolerate the not-ready and unreachable taints for ever
            [
                t
                for t in scheduling.tolerations_of(admission.admitted_spec(obj, cluster))
                if not isinstance(t, dict) or "tolerationSeconds" not in t
            ],
            ("NoExecute",),
        )
        text = ", ".join(scheduling.taint_text(t) for t in state_taints)
        problems.append(
            f"it has taint {text}"
            + (
                "; the taint eviction controller evicts the Pod after 300 s (the default toleration)"
                if evicting
                else ""
            )
        )
    if node.unschedulable and obj.kind != "DaemonSet":  # daemon Pods belong on cordoned nodes (drain leaves them)
        problems.append(
            f"node {name} is cordoned (spec.unschedulable), which stops the scheduler but not nodeName: the Pod lands "
            "on a node that is being drained or maintained"
        )
    if not problems:
        return
    yield Violation(
        spec_path(obj, "nodeName"),
        f"{pods_noun(obj)} is pinned to a node that is not usable: " + "; ".join(problems),
        fix=f"wait until {name} is Ready and uncordoned (kubectl uncordon {name}), pick a Ready node, "
        "or drop nodeName and let the scheduler choose",
        cause=f"node {name}",
    )
