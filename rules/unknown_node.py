"""
## What it does
Flags a Pod or a workload template whose `spec.nodeName` names no node of the cluster, and
suggests the closest existing names ("did you mean kind-worker?").

## Why is this bad?
The scheduler only picks up Pods with an empty `nodeName`, so it ignores this one: no
FailedScheduling event. No kubelet has that name, so none picks it up either. The Pod sits in
Pending with no events at all, until PodGC (kube-controller-manager) treats it as orphaned and
force-deletes it ("PodGC is force deleting Pod", no event): PodGC runs every 20 s and deletes an
orphaned Pod after a 40 s quarantine, so 40 to 80 s after it was created
(`pkg/controller/podgc/gc_controller.go`, `gcCheckPeriod` and `quarantineTime`). From the outside
the Pod is created and silently vanishes. In a workload template, every replica does this, and the
controller keeps recreating them.

## How to fix
Use a name from `kubectl get nodes` (a manifest copied from another cluster keeps that cluster's
node names), or better, drop `nodeName` and let the scheduler choose with a `nodeSelector` on
`kubernetes.io/hostname`. `nodename-lint --fix` (with a cluster state) rewrites `nodeName` to the
one existing node that is clearly closest; when several are as close it changes nothing and
lists them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import dotted, job_failure_limit, pods_noun, replica_count, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint.cluster import targets
    from nodename_lint.cluster.state import ClusterState
    from nodename_lint.fix.edits import FixStep
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    targets = later("nodename_lint.cluster.targets", globals())


_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-control-plane
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
"""

RULE = Rule(
    id="unknown-node",
    severity="error",
    summary="spec.nodeName names no node of the cluster: the Pod sits in Pending with no events and PodGC deletes it.",
    doc=__doc__,
    audit_adds="podgc-timeline",
    needs=frozenset({"nodes"}),
    fix="rewrites spec.nodeName to the one existing node that is clearly closest (a typo, another case, a "
    "missing prefix or suffix); when several are as close, changes nothing and lists them.",
    examples=(
        Example(
            "a typo in the node name",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: pinned
            spec:
              nodeName: kind-wroker
              containers:
                - name: nginx
                  image: nginx:1.27.3-alpine
            """,
            fails=True,
            cluster=_CLUSTER,
        ),
        Example(
            "a node that exists",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: pinned
            spec:
              nodeName: kind-worker
              containers:
                - name: nginx
                  image: nginx:1.27.3-alpine
            """,
            fails=False,
            cluster=_CLUSTER,
        ),
    ),
)


def _missing_node(obj: Manifest, context: Context) -> tuple[str, tuple[str, ...], ClusterState] | None:
    """(the unknown node name, the closest existing names, the state), or None when the node exists."""
    target = targets.pinned_target(obj, context)
    if target is None or target[1] is not None:
        return None
    name, _, cluster = target
    return name, cluster.node_suggestions(name), cluster


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    missing = _missing_node(obj, context)
    if missing is None:
        return
    name, suggestions, cluster = missing
    path = spec_path(obj, "nodeName")
    guess = f"; did you mean {' or '.join(suggestions)}?" if suggestions else ""
    count = len(cluster.nodes or ())
    several = obj.kind in ("Job", "CronJob") or (obj.is_workload_template and replica_count(obj) != 1)
    fate = (
        f"{'each' if several else 'it'} stays Pending with no events (the scheduler ignores Pods with nodeName and "
        "no kubelet has that name) until PodGC force-deletes it 40 to 80 s after it was created"
    )
    if obj.kind == "DaemonSet":  # NodeShouldRunDaemonPod: the controller creates Pods for the nodes it lists
        fate = (
            "the DaemonSet controller creates a Pod only for a node it lists, so none is ever created, no event "
            "says why, and the DaemonSet shows 0 Pods desired"
        )
    elif (limit := job_failure_limit(obj)) is not None:  # PodGC marks the Pod Failed as it deletes it
        fate += f", and the Job controller counts each as failed and replaces it: {limit}"
    elif obj.is_workload_template:
        fate += ", and the controller keeps recreating the replicas, which vanish the same way"
    if len(suggestions) == 1:
        fix = f"set {dotted(path)} to {suggestions[0]}"
    else:
        fix = f"set {dotted(path)} to a node from `kubectl get nodes`"
    yield Violation(
        path,
        f"node {name} does not exist in the cluster ({cluster.source}, {count} node{'s' if count != 1 else ''}): "
        f"{pods_noun(obj)} would never run; {fate}{guess}",
        fix=fix + ", or drop nodeName and use a nodeSelector on kubernetes.io/hostname",
        cause=f"node {name}",
    )


@RULE.fixer
def fix(obj: Manifest, context: Context) -> Iterator[FixStep]:
    # startup: only --fix and --diff load the edits
    from nodename_lint.fix.edits import SetValue, Unfixable

    missing = _missing_node(obj, context)
    if missing is None:
        return
    name, candidates, cluster = missing
    if len(candidates) == 1:
        yield SetValue(spec_path(obj, "nodeName"), candidates[0])
    elif candidates:
        names = f"{', '.join(candidates[:-1])} and {candidates[-1]}"
        yield Unfixable(f"node {name} is equally close to {names}: set the one you mean")
    else:
        yield Unfixable(f"no node of {cluster.source} has a name close to {name}: pick one from kubectl get nodes")
