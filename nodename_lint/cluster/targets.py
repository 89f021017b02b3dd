"""What the cluster rules share: the node a manifest pins its Pods to (or a static Pod's node), the
spec as admission leaves it, the kubelet's reasons there. How messages name the Pods and their fate
is podspec's (pods_noun, rejection_fate): offline rules word them the same way."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..model import Manifest
from ..podspec import is_dns1123_subdomain, pinned_node
from ..preemption import KubeletAdmission
from ..preemption import critical_admissions as admissions
from ..rollout import workload_rollout
from ..rule import Context
from ..scheduling import (
    AffinityMismatch,
    HostPort,
    RequestError,
    add_into,
    affinity_mismatch,
    host_ports,
    kubelet_reasons,
    pod_requests,
    untolerated,
)
from .admitted import (
    admitted_spec,
    kubelet_preemptor,
    pod_labels,
    runtime_class,
    runtime_overhead,
    with_daemon_tolerations,
)
from .records import NodeInfo, NodeUsage
from .state import ClusterState

__all__ = ["admitted_spec", "runtime_class", "runtime_overhead"]  # where the rules read them


def pinned_target(obj: Manifest, context: Context) -> tuple[str, NodeInfo | None, ClusterState] | None:
    """(node name, the node or None when it does not exist, the state) for an object with nodeName.

    None for objects that pin nothing, for objects the API server refuses for an invalid
    nodeName (invalid-node-name says so: nothing is ever created), and for static Pods: the
    kubelet that reads the file runs them on its own node whatever nodeName says.
    """
    cluster = context.cluster
    if cluster is None or cluster.nodes is None or obj.is_static_pod:
        return None
    node = obj.memo("valid_pinned_node", _valid_pinned_node)  # eight cluster rules ask it of every object
    if node is None:
        return None
    return node, cluster.nodes.get(node), cluster


def _valid_pinned_node(obj: Manifest) -> str | None:
    """The node the object pins its Pods to, when the API server takes the name (a DNS-1123 subdomain)."""
    node = pinned_node(obj)
    return node if node is not None and is_dns1123_subdomain(node) else None


def admission_target(obj: Manifest, context: Context) -> tuple[str, NodeInfo, ClusterState] | None:
    """The node whose kubelet admits the object's Pods: the pinned node, or for a static Pod the
    node named with --static-pod-node. None when there is none or it is not in the state."""
    cluster = context.cluster
    if obj.is_static_pod:
        if cluster is None or cluster.nodes is None or not context.static_pod_node or not obj.is_pod:
            return None
        node = cluster.nodes.get(context.static_pod_node)
        return (node.name, node, cluster) if node is not None else None
    return pinned_existing_node(obj, context)


def pinned_existing_node(obj: Manifest, context: Context) -> tuple[str, NodeInfo, ClusterState] | None:
    """pinned_target for the rules about what the kubelet does on a node that exists (unknown-node covers
    the others). None for a DaemonSet whose controller creates no Pod there (daemon_refusal): no kubelet
    ever sees one; untolerated-taint and node-selector-mismatch say why (pinned_node_or_refusal)."""
    found = pinned_node_or_refusal(obj, context)
    if found is None or found[3] is not None:
        return None
    return found[0], found[1], found[2]


def pinned_node_or_refusal(
    obj: Manifest, context: Context
) -> tuple[str, NodeInfo, ClusterState, DaemonRefusal | None] | None:
    """pinned_target for a node that exists, with why a DaemonSet's controller creates no Pod there (None
    when it creates one, and for every other kind). The refusal is weighed once per DaemonSet and node:
    eight cluster rules ask this of every object."""
    target = pinned_target(obj, context)
    if target is None or target[1] is None:
        return None
    node = target[1]
    weighed: dict[str, tuple[NodeInfo, DaemonRefusal | None]] = obj.memo("daemon_refusals", lambda _: {})
    found = weighed.get(node.name)
    if found is None or found[0] is not node:  # another state's node of that name (a state watched live)
        found = weighed[node.name] = node, daemon_refusal(obj, node)
    return target[0], node, target[2], found[1]


class DaemonRefusal(NamedTuple):
    """Why the DaemonSet controller creates no Pod on a node: the affinity, the taints, or both."""

    mismatch: AffinityMismatch | None
    taints: list[dict[str, Any]]


def daemon_refusal(obj: Manifest, node: NodeInfo) -> DaemonRefusal | None:
    """Why the DaemonSet controller creates no Pod for the object on `node`; None when it creates one,
    and for every other kind.

    NodeShouldRunDaemonPod (pkg/controller/daemon/daemon_controller.go) builds the Pod from the template
    with the tolerations it adds (NewPod, AddOrUpdateDaemonPodTolerations) and checks it against the
    node, nodeName or not: the nodeSelector and required node affinity, and every NoSchedule and
    NoExecute taint. The RuntimeClass admission plugin only acts later, on the Pod it creates.
    """
    if obj.kind != "DaemonSet":
        return None
    spec = obj.pod_spec or {}
    mismatch = affinity_mismatch(spec, node)
    taints = untolerated(node.taints, with_daemon_tolerations(spec), ("NoSchedule", "NoExecute"))
    return DaemonRefusal(mismatch, taints) if mismatch is not None or taints else None


def daemon_refusal_message(obj: Manifest, node: str, why: str) -> str:
    """What a DaemonSet the controller will not place on its pinned node comes to, and why (`why`)."""
    return (
        f"the DaemonSet controller will not run DaemonSet {obj.name} on {node}: {why}; no Pod is ever created for "
        f"node {node} (NodeShouldRunDaemonPod checks a pinned template too): nothing runs, no event says why, and "
        "the DaemonSet shows 0 Pods desired"
    )


def critical_admissions(
    obj: Manifest, node: NodeInfo, cluster: ClusterState, replicas: int, *, until_rejected: bool = False
) -> list[KubeletAdmission] | None:
    """What the kubelet does with each of the first `replicas` Pods of a critical object on `node`
    (preemption.critical_admissions: it may evict other Pods to admit them); None when the Pod is not
    critical, and the kubelet reports its failures as they are."""
    preemptor = kubelet_preemptor(obj, cluster)
    if not preemptor.critical:
        return None
    spec = admitted_spec(obj, cluster)
    overhead = runtime_overhead(obj, cluster)[0]
    try:
        requests = pod_requests(spec, overhead=overhead)
    except RequestError:
        requests = {}
    return admissions(
        spec,
        requests,
        node,
        cluster.usage(node.name),
        cluster.running_pods(node.name),
        other_pods_ports(obj, node.name, cluster),
        preemptor,
        replicas,
        labels=pod_labels(obj),
        static=obj.is_static_pod,
        overhead=overhead,
        until_rejected=until_rejected,
    )


def admission_reasons(obj: Manifest, node: NodeInfo, cluster: ClusterState, replicas_before: int = 0) -> list[str]:
    """The kubelet's admission failures for the object's Pod on `node`, in the kubelet's order.

    `replicas_before`: for a replica of a pinned template, how many of its siblings the kubelet
    admitted before it; their requests and host ports count as the other Pods' do. For a
    workload that already runs Pods, the cluster as its rollout leaves it (rollout.py). For a critical
    Pod, what the kubelet reports after its critical Pod admission (no resource shortage: it evicts,
    or fails with UnexpectedAdmissionError).
    """
    rollout = workload_rollout(obj, cluster)
    if rollout is not None:
        cluster = rollout.view

    critical = critical_admissions(obj, node, cluster, replicas_before + 1)
    if critical is not None:
        return critical[-1].reasons
    spec = admitted_spec(obj, cluster)
    overhead = runtime_overhead(obj, cluster)[0]
    usage = cluster.usage(node.name)
    ports = other_pods_ports(obj, node.name, cluster)
    if replicas_before:
        try:
            requests = pod_requests(spec, overhead=overhead)
        except RequestError:
            requests = {}
        usage = NodeUsage(usage.pods, dict(usage.requested)) if usage else NodeUsage(0, {})
        for _ in range(replicas_before):
            usage.pods += 1
            add_into(usage.requested, requests)
        own = f"{obj.namespace}/{obj.name}"
        ports = {**(ports or {}), **{port: own for _, port in host_ports(spec, default_from_host_network=True)}}
    return kubelet_reasons(
        spec,
        node,
        usage,
        labels=pod_labels(obj),
        static=obj.is_static_pod,
        ports_in_use=ports,
        overhead=overhead,
    )


def other_pods_ports(obj: Manifest, node: str, cluster: ClusterState) -> dict[HostPort, str] | None:
    """Host ports in use on `node`, without the Pod itself when it already runs there: an update of
    a Pod, or a static Pod's own mirror Pod `<name>-<node>`."""
    in_use = cluster.ports_in_use(node)
    if not in_use or not obj.is_pod:
        return in_use
    itself = f"{obj.namespace}/{obj.name}-{node}" if obj.is_static_pod else f"{obj.namespace}/{obj.name}"
    return {port: holder for port, holder in in_use.items() if holder != itself}
