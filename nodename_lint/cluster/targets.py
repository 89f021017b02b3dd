"""What the cluster rules share: the node a manifest pins its Pods to, and how many Pods land there."""

from __future__ import annotations

from ..model import Manifest
from ..podspec import pinned_node
from ..rule import Context
from .records import NodeInfo
from .state import ClusterState

# Where each controller keeps the number of Pods it runs at once.
_REPLICA_FIELDS = {
    "Deployment": ("spec", "replicas"),
    "ReplicaSet": ("spec", "replicas"),
    "StatefulSet": ("spec", "replicas"),
    "ReplicationController": ("spec", "replicas"),
    "Job": ("spec", "parallelism"),
    "CronJob": ("spec", "jobTemplate", "spec", "parallelism"),
}


def pinned_target(obj: Manifest, context: Context) -> tuple[str, NodeInfo | None, ClusterState] | None:
    """(node name, the node or None when it does not exist, the state) for an object with nodeName.

    None for objects that pin nothing, and for static Pods: the kubelet that reads the file runs
    them on its own node whatever nodeName says.
    """
    cluster = context.cluster
    if cluster is None or cluster.nodes is None or obj.is_static_pod:
        return None
    node = pinned_node(obj)
    if node is None:
        return None
    return node, cluster.nodes.get(node), cluster


def pinned_existing_node(obj: Manifest, context: Context) -> tuple[str, NodeInfo, ClusterState] | None:
    """pinned_target for the rules about a node that exists (unknown-node covers the others)."""
    target = pinned_target(obj, context)
    if target is None or target[1] is None:
        return None
    return target[0], target[1], target[2]


def rejection_fate(obj: Manifest) -> str:
    """What follows a kubelet rejection: a Pod stays Failed; a controller keeps replacing it."""
    if obj.is_pod:
        return "the Pod goes to Failed and is never retried or moved"
    return "rejected Pods go to Failed and the controller keeps creating replacements that fail the same way"


def replica_count(obj: Manifest) -> int:
    """How many Pods of the object run at once (1 for a Pod or a DaemonSet's one node)."""
    path = _REPLICA_FIELDS.get(obj.kind)
    if path is None:
        return 1
    value = obj.get(path)
    if value is None:
        return 1
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1


def pods_noun(obj: Manifest, count: int | None = None) -> str:
    """How messages name the Pods of an object: "Pod bigcpu", "the 3 replicas of Deployment web"."""
    if obj.is_pod:
        return f"Pod {obj.name}"
    count = replica_count(obj) if count is None else count
    if obj.kind in ("Job", "CronJob"):
        return f"the Pods of {obj.kind} {obj.name}"
    if obj.kind == "DaemonSet":
        return f"the Pod of DaemonSet {obj.name}"
    return f"the {count} replica{'s' if count != 1 else ''} of {obj.kind} {obj.name}"
