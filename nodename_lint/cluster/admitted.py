"""What the API server makes of a workload's Pods: the RuntimeClass admission plugin's part (how many
Pods run at once is podspec.replica_count). The cluster rules (targets.py) and the rollout prediction
(rollout.py) read them.
"""

from __future__ import annotations

from typing import Any

from ..model import Manifest
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


def admitted_spec(obj: Manifest, cluster: ClusterState) -> dict[str, Any]:
    """The Pod spec as the RuntimeClass admission plugin leaves it (`setScheduling`): the class's
    scheduling.nodeSelector merged into spec.nodeSelector and its tolerations added. The spec as
    written when the class sets no scheduling (or is not known)."""
    spec = obj.pod_spec or {}
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
