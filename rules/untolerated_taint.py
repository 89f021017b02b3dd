"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` to a node that has a taint the
Pod does not tolerate. Tolerations are matched exactly as Kubernetes does (`Equal` compares the
value, `Exists` does not; an empty key with `Exists` tolerates every taint; an empty effect
matches every effect). Severity depends on the effect:

- `NoExecute` (error): the kubelet rejects the Pod on admission with `TaintToleration`. A
  toleration with `tolerationSeconds` only delays it: the taint eviction controller evicts the
  Pod that many seconds after it starts (at once for 0 or less).
- `NoSchedule` and `PreferNoSchedule` (warning): only the scheduler reads them, and `nodeName`
  bypasses the scheduler, so the Pod lands on a node that was reserved for other workloads.

The taints the node lifecycle controller sets for NotReady, unreachable and cordoned nodes
(`node.kubernetes.io/not-ready`, `unreachable`, `unschedulable`) are reported by node-not-ready,
and the NoSchedule taints of a pressure condition that is True (`node.kubernetes.io/disk-pressure`,
`memory-pressure`, `pid-pressure`) by node-pressure: the taint is not the whole story, the
kubelet's eviction manager refuses the Pod (Evicted) before any taint is looked at. A NoExecute
taint the Pod does not tolerate is reported here whatever its key, counting the tolerations the
API server adds (the DefaultTolerationSeconds admission plugin: not-ready and unreachable for
300 s, unless the Pod has a toleration with that key, or none, and effect NoExecute, or none).
Static Pods are not checked: the kubelet skips the taint check for them.

A DaemonSet is different: its controller checks the template against the node before it creates
a Pod, nodeName or not (`NodeShouldRunDaemonPod` in `pkg/controller/daemon/daemon_controller.go`),
and every `NoSchedule` or `NoExecute` taint the template does not tolerate, counting the
tolerations the controller adds (`AddOrUpdateDaemonPodTolerations`: not-ready and unreachable
NoExecute, disk-, memory- and pid-pressure and unschedulable NoSchedule, network-unavailable for
hostNetwork), means no Pod is created at all (error).

## Why is this bad?
A NoExecute taint means "nothing without a toleration runs here": the Pod goes to Failed, or is
evicted later. A NoSchedule taint usually marks dedicated or control-plane nodes; nodeName walks
past it silently, which is rarely what the owner of that node wants.

## How to fix
If the Pod belongs on that node, add a matching toleration (for NoExecute without
`tolerationSeconds`). Otherwise pick an untainted node, or drop `nodeName` and let the scheduler
respect the taint.
"""

from collections.abc import Iterator
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
          name: kind-worker3
        spec:
          taints:
            - {key: maintenance, value: kernel-upgrade, effect: NoExecute}
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: debug
    spec:
      nodeName: kind-worker3
      containers:
        - name: shell
          image: busybox:1.37
"""

RULE = Rule(
    id="untolerated-taint",
    severity="error",
    summary="The pinned node has a taint the Pod does not tolerate: rejected or evicted (NoExecute), "
    "or placed past the taint (NoSchedule).",
    doc=__doc__,
    audit_adds="taint-eviction",
    needs=frozenset({"nodes"}),
    examples=(
        Example("a NoExecute taint without a toleration", _POD, fails=True, cluster=_CLUSTER),
        Example(
            "the Pod tolerates the taint",
            _POD + "      tolerations:\n        - {key: maintenance, operator: Exists, effect: NoExecute}\n",
            fails=False,
            cluster=_CLUSTER,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    target = targets.pinned_node_or_refusal(obj, context)
    if target is None:
        return
    name, node, cluster, refusal = target
    if refusal is not None:
        if refusal.taints:
            listed = ", ".join(scheduling.taint_text(t) for t in refusal.taints)
            why = (
                f"the node has taint {listed} and the template does not tolerate it, nor do the tolerations the "
                "controller adds"
            )
            yield Violation(
                spec_path(obj, "tolerations") if "tolerations" in (obj.pod_spec or {}) else spec_path(obj, "nodeName"),
                targets.daemon_refusal_message(obj, name, why),
                fix=f"add a toleration for {listed} to the template if the Pod belongs there, or pick another node",
                severity="error",
                cause=f"node {name}, taint {listed}",
            )
        return
    spec = targets.admitted_spec(obj, cluster)  # with the RuntimeClass's tolerations
    tolerations = scheduling.tolerations_of(spec)
    # the kubelet's TaintToleration check: every NoExecute taint, and the tolerations as the API stores them
    rejected = scheduling.untolerated(node.taints, scheduling.admitted_tolerations(spec), ("NoExecute",))
    # node-pressure explains the taints of a pressure condition that is True: the kubelet rejects the Pod
    pressure = {scheduling.PRESSURE_TAINTS[condition] for condition in scheduling.pressure_conditions(node)}
    taints = [taint for taint in node.taints if taint.get("key") not in scheduling.NODE_STATE_TAINTS | pressure]
    if not taints and not rejected:
        return
    noun = pods_noun(obj)
    where = spec_path(obj, "tolerations") if "tolerations" in spec else spec_path(obj, "nodeName")
    if rejected:
        listed = ", ".join(scheduling.taint_text(t) for t in rejected)
        first = scheduling.reported_first(targets.admission_reasons(obj, node, cluster), "TaintToleration")
        yield Violation(
            where,
            f"{noun} would be rejected by the kubelet on {name} with TaintToleration{first}: "
            f"the node has taint {listed} "
            f"and the Pod does not tolerate it; {rejection_fate(obj)}",
            fix=f"add a toleration for {listed} (without tolerationSeconds) if the Pod belongs there, "
            "or pick another node, or drop nodeName",
            cause=f"node {name}, taint {listed}",
        )
    else:
        no_execute = [taint for taint in taints if taint.get("effect") == "NoExecute"]
        delay = scheduling.eviction_delay(no_execute, tolerations) if no_execute else None
        if delay is not None:
            listed = ", ".join(scheduling.taint_text(t) for t in no_execute)
            when = "at once" if delay == 0 else f"{delay} s after it starts"
            yield Violation(
                where,
                f"{noun} tolerates taint {listed} of {name} only for a while: the kubelet admits it, and the taint "
                f"eviction controller evicts it {when} (tolerationSeconds)",
                fix="drop tolerationSeconds from the toleration if the Pod must stay, or pick another node",
                cause=f"node {name}, taint {listed}",
            )
    soft = scheduling.untolerated(taints, tolerations, ("NoSchedule", "PreferNoSchedule"))
    if soft:
        listed = ", ".join(scheduling.taint_text(t) for t in soft)
        yield Violation(
            where,
            f"nodeName bypasses the scheduler, so taint {listed} does not keep {noun} off {name}: it lands on a node "
            "reserved for other workloads",
            fix=f"add a toleration for {listed} if the Pod belongs there, else pick an untainted node or drop nodeName",
            severity="warning",
            cause=f"node {name}, taint {listed}",
        )
