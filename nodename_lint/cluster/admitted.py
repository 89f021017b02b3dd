"""What the API server makes of a workload's Pods: the RuntimeClass admission plugin's part and the
Priority admission plugin's (how many Pods run at once is podspec.replica_count). The cluster rules
(targets.py) and the rollout prediction (rollout.py) read them.
"""

from __future__ import annotations

from typing import Any

from ..model import Manifest
from ..preemption import Preemptor, Priority, preemptor_for, resolve_priority
from .records import RuntimeClassInfo
from .state import ClusterState


def runtime_class(obj: Manifest, cluster: ClusterState) -> tuple[str, RuntimeClassInfo] | None:
    """The RuntimeClass the object's Pods name, when the state has it."""
    name = (obj.pod_spec or {}).get("runtimeClassName")
    if not isinstance(name, str) or cluster.runtime_classes is None or name not in cluster.runtime_classes:
        return None
    return name, cluster.runtime_classes[name]


def runtime_overhead(obj: Manifest, cluster: ClusterState) -> tuple[dict[str, Any] | None, str]:
    """(the overhead the RuntimeClass admission plugin sets, how messages name it).

    (None, "") without runtimeClassName, when the state has no RuntimeClasses, or when the
    class sets no overhead: then spec.overhead as written counts (runtime-class-overhead
    reports one set by hand).
    """
    found = runtime_class(obj, cluster)
    if found is None or not found[1].overhead:
        return None, ""
    name, info = found
    assert info.overhead is not None
    amounts = ", ".join(f"{resource} {value}" for resource, value in info.overhead.items())
    return info.overhead, f" (counting the overhead of RuntimeClass {name}: {amounts})"


# What the DaemonSet controller adds to every Pod it creates (AddOrUpdateDaemonPodTolerations in
# pkg/controller/daemon/util/daemonset_util.go): a daemon Pod stays on a node that is not ready,
# unreachable, under pressure or cordoned, and a hostNetwork one on a node without its network.
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
HOST_NETWORK_DAEMON_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def with_daemon_tolerations(spec: dict[str, Any]) -> list[Any]:
    """The spec's tolerations once the DaemonSet controller has added its own, one at a time as
    AddOrUpdateTolerationInPodSpec does: a toleration that matches one of them (same key, operator,
    value and effect) is replaced by it, so its tolerationSeconds goes; any other is appended."""
    own = spec.get("tolerations")
    tolerations = list(own) if isinstance(own, list) else []
    added = [*DAEMON_TOLERATIONS, *([HOST_NETWORK_DAEMON_TOLERATION] if spec.get("hostNetwork") is True else [])]
    for key, effect in added:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        matching = [
            i
            for i, t in enumerate(tolerations)
            if isinstance(t, dict)
            and t.get("key") == key
            and t.get("operator") == "Exists"
            and (t.get("value") or "") == ""
            and t.get("effect") == effect
        ]
        if not matching:
            tolerations.append(toleration)
        for i in matching:
            tolerations[i] = toleration
    return tolerations


def admitted_spec(obj: Manifest, cluster: ClusterState) -> dict[str, Any]:
    """The Pod spec as the kubelet meets it: for a DaemonSet, with the tolerations its controller adds
    (with_daemon_tolerations); then as the RuntimeClass admission plugin leaves it (`setScheduling`):
    the class's scheduling.nodeSelector merged into spec.nodeSelector and its tolerations added. The
    spec as written otherwise."""
    spec = obj.pod_spec or {}
    if obj.kind == "DaemonSet":
        spec = {**spec, "tolerations": with_daemon_tolerations(spec)}
    found = runtime_class(obj, cluster)
    if found is None or not (found[1].node_selector or found[1].tolerations):
        return spec
    info = found[1]
    selector = spec.get("nodeSelector")
    tolerations = spec.get("tolerations")
    merged = dict(spec)
    if info.node_selector:
        merged["nodeSelector"] = {**(selector if isinstance(selector, dict) else {}), **info.node_selector}
    if info.tolerations:
        own = tolerations if isinstance(tolerations, list) else []
        merged["tolerations"] = own + [t for t in info.tolerations if t not in own]
    return merged


def pod_priority(obj: Manifest, cluster: ClusterState) -> Priority:
    """The priority the Priority admission plugin gives the object's Pods (preemption.resolve_priority)."""
    return resolve_priority(obj.pod_spec or {}, cluster.priority_classes)


def kubelet_preemptor(obj: Manifest, cluster: ClusterState) -> Preemptor:
    """The object's Pod as the kubelet's critical Pod admission sees it (critical or not, its priority)."""
    return preemptor_for(
        obj.pod_spec or {}, f"{obj.namespace}/{obj.name}", pod_priority(obj, cluster), static=obj.is_static_pod
    )


def pod_labels(obj: Manifest) -> dict[str, Any]:
    """The labels of the Pods the object creates (its own for a Pod, the template's for a workload)."""
    metadata = obj.metadata if obj.is_pod else obj.pod_template_metadata
    labels = metadata.get("labels")
    return labels if isinstance(labels, dict) else {}
