"""Records from API objects: Nodes, Namespaces, Pods, RuntimeClasses and PriorityClasses as the API returns them.

The live client, a saved kubectl List (from_file) and the JSON dump fast path (json_dump) all end
here, so an object reads the same whatever brought it. An object of the wrong shape raises
StateError with the path inside it; the reader that has the file turns that into a line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..sources import UsageError
from .records import NodeInfo, OwnerKey, PodInfo, PriorityClassInfo, RuntimeClassInfo, TemplateInfo
from .state import ClusterState
from .templates import SAVE_TEMPLATES, pod_owner

Holder = tuple[str, OwnerKey, TemplateInfo]  # namespace, "Kind/name", the template
SAVE_HINT = "save it with `kubectl get nodes,namespaces,pods -A -o yaml > FILE`"


class StateError(ValueError):
    """An API object that cannot be read; `obj` is the offending item, `path` a path inside it."""

    def __init__(self, obj: Any, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.obj = obj
        self.path = path


def _mapping(obj: Any, parent: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    value: Any = parent
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StateError(obj, path, f"{'.'.join(map(str, path))} is not a mapping")
    return value


def name_of(obj: Any, kind: str, *, namespaced: bool = False) -> tuple[str, str]:
    if not isinstance(obj, dict):
        raise StateError(obj, (), f"a {kind} item is not a mapping")
    metadata = _mapping(obj, obj, ("metadata",))
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise StateError(obj, ("metadata",), f"a {kind} has no metadata.name")
    namespace = metadata.get("namespace") or "default" if namespaced else ""
    if not isinstance(namespace, str):
        raise StateError(obj, ("metadata", "namespace"), f"{kind} {name}: metadata.namespace is not a string")
    return namespace, name


_STRING_TYPE = frozenset({str})


def _strings(obj: Any, mapping: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, str]:
    """Labels: JSON object of strings (YAML numbers or booleans read as kubectl would send them)."""
    found = _mapping(obj, mapping, path)
    if _STRING_TYPE.issuperset(map(type, found)) and _STRING_TYPE.issuperset(map(type, found.values())):
        return dict(found)  # the common case, checked in C: 5,000 nodes of 47 labels took 60 ms one by one
    labels: dict[str, str] = {}
    for key, value in found.items():
        if isinstance(value, (dict, list)):
            raise StateError(obj, (*path, key), f"{'.'.join(map(str, path))}.{key} is not a string")
        labels[str(key)] = value if isinstance(value, str) else json.dumps(value)
    return labels


_TAINT_TEXT = ("key", "value", "effect")  # what the rules compare of a taint, and hash (the key and the effect)
_TEXT = frozenset({str, type(None)})


def is_text_taint(taint: Any) -> bool:
    """A mapping whose key, value and effect are strings or null, as in every taint the API holds (unrolled:
    a snapshot's load asks it of every taint)."""
    if taint.__class__ is not dict:
        return False
    get = taint.get
    return get("key").__class__ in _TEXT and get("value").__class__ in _TEXT and get("effect").__class__ in _TEXT


def _taint(obj: Any, node: str, index: int, taint: dict[Any, Any]) -> dict[Any, Any]:
    """A taint whose key, value and effect are text (YAML numbers or booleans read as kubectl would send them);
    a mapping or a list there is a StateError: the rules hash and compare them (a list as the key made
    untolerated-taint raise)."""
    if is_text_taint(taint):
        return taint
    fields = dict(taint)
    for field in _TAINT_TEXT:
        value = fields.get(field)
        if isinstance(value, (dict, list)):
            where = ("spec", "taints", index, field)
            raise StateError(obj, where, f"Node {node}: spec.taints[{index}].{field} is not a string")
        if value.__class__ not in _TEXT:
            fields[field] = json.dumps(value)
    return fields


def node_from_object(obj: Any) -> NodeInfo:
    """A NodeInfo from a Node object; raises StateError when its shape is wrong."""
    _, name = name_of(obj, "Node")
    spec = _mapping(obj, obj, ("spec",))
    taints = spec.get("taints") or []
    if not isinstance(taints, list) or not all(isinstance(t, dict) for t in taints):
        raise StateError(obj, ("spec", "taints"), f"Node {name}: spec.taints is not a list of mappings")
    taints = [_taint(obj, name, index, taint) for index, taint in enumerate(taints)]
    conditions = _mapping(obj, obj, ("status",)).get("conditions") or []
    if not isinstance(conditions, list):
        raise StateError(obj, ("status", "conditions"), f"Node {name}: status.conditions is not a list")
    operating_system = _mapping(obj, obj, ("status", "nodeInfo")).get("operatingSystem")
    return NodeInfo(
        name=name,
        labels=_strings(obj, obj, ("metadata", "labels")),
        taints=taints,
        unschedulable=spec.get("unschedulable") is True,
        allocatable=_mapping(obj, obj, ("status", "allocatable")),
        conditions={
            str(c.get("type")): str(c.get("status")) for c in conditions if isinstance(c, dict) and c.get("type")
        },
        operating_system=operating_system if isinstance(operating_system, str) else "",
    )


def pod_from_object(obj: Any) -> PodInfo:
    """A PodInfo from a Pod object; raises StateError when its shape is wrong.

    Runs once for every Pod of the cluster, so the well-formed case takes the shortest path.
    """
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    spec = obj.get("spec") if isinstance(obj, dict) else None
    status = obj.get("status") if isinstance(obj, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    namespace = (metadata.get("namespace") or "default") if isinstance(metadata, dict) else None
    if not (
        isinstance(name, str)
        and name
        and isinstance(namespace, str)
        and isinstance(spec, dict)
        and isinstance(status, (dict, type(None)))
    ):
        namespace, name = name_of(obj, "Pod", namespaced=True)  # raises the precise error
        spec = _mapping(obj, obj, ("spec",))
        status = _mapping(obj, obj, ("status",))
    node_name = spec.get("nodeName")
    phase = status.get("phase") if status else None
    owner, template = (
        pod_owner(metadata) if isinstance(metadata, dict) and "ownerReferences" in metadata else (None, None)
    )
    return PodInfo(
        namespace=namespace,
        name=name,
        node_name=node_name if isinstance(node_name, str) and node_name else None,
        phase=phase if isinstance(phase, str) else None,
        loaded_spec=spec,
        owner=owner,
        template=template,
        loaded_annotations=metadata.get("annotations") if isinstance(metadata, dict) else None,
        start_time=status.get("startTime") if status else None,
        qos_class=status.get("qosClass") if status else None,
    )


def runtime_class_from_object(obj: Any) -> tuple[str, RuntimeClassInfo]:
    """(name, what the admission plugin copies from it) of a RuntimeClass; raises StateError when its shape is wrong."""
    _, name = name_of(obj, "RuntimeClass")
    fixed = _mapping(obj, obj, ("overhead", "podFixed")) if _mapping(obj, obj, ("overhead",)) else {}
    scheduling = _mapping(obj, obj, ("scheduling",))
    tolerations = scheduling.get("tolerations") or []
    if not isinstance(tolerations, list) or not all(isinstance(t, dict) for t in tolerations):
        raise StateError(
            obj, ("scheduling", "tolerations"), f"RuntimeClass {name}: scheduling.tolerations is not a list of mappings"
        )
    return name, RuntimeClassInfo(fixed or None, _strings(obj, obj, ("scheduling", "nodeSelector")), tolerations)


PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def priority_class_from_object(obj: Any) -> tuple[str, PriorityClassInfo]:
    """(name, what the Priority admission plugin reads) of a PriorityClass; StateError when its shape is wrong."""
    _, name = name_of(obj, "PriorityClass")
    value = obj.get("value")
    if not isinstance(value, int) or isinstance(value, bool) or not -(2**31) <= value < 2**31:
        raise StateError(obj, ("value",), f"PriorityClass {name}: value is not a 32-bit integer")
    policy = obj.get("preemptionPolicy") or "PreemptLowerPriority"
    if policy not in PREEMPTION_POLICIES:
        raise StateError(
            obj, ("preemptionPolicy",), f"PriorityClass {name}: preemptionPolicy is not one of {PREEMPTION_POLICIES}"
        )
    return name, PriorityClassInfo(value, obj.get("globalDefault") is True, policy)


def state_from_objects(
    source: str,
    *,
    nodes: list[dict] | None,
    namespaces: list[dict] | None,
    pods: list[dict] | None,
    pod_nodes: frozenset[str] | None = None,
    unavailable: dict[str, str] | None = None,
    runtime_classes: list[dict] | None = None,
    priority_classes: list[dict] | None = None,
    holders: list[Holder] | None = None,
) -> ClusterState:
    """A ClusterState from API objects as returned by the API or `kubectl get -o json`.

    None for a kind means it is not known (and `unavailable` may say why); `pod_nodes` names the
    nodes whose non-terminated Pods are all in `pods` (None: every node); `holders` are the
    templates of ReplicaSets and ControllerRevisions (holder_from_object). Raises StateError for
    an object of the wrong shape.
    """
    return ClusterState(
        source=source,
        nodes=None if nodes is None else {info.name: info for info in map(node_from_object, nodes)},
        namespaces=None if namespaces is None else frozenset(name_of(ns, "Namespace")[1] for ns in namespaces),
        pods=None if pods is None else [pod_from_object(pod) for pod in pods],
        runtime_classes=None if runtime_classes is None else dict(map(runtime_class_from_object, runtime_classes)),
        priority_classes=None if priority_classes is None else dict(map(priority_class_from_object, priority_classes)),
        unavailable=dict(unavailable or {}),
        pod_nodes=pod_nodes,
        templates=None if holders is None else templates_by_namespace(holders),
    )


def templates_by_namespace(holders: Any) -> dict[str, dict[OwnerKey, TemplateInfo]]:
    """namespace -> "Kind/name" -> template, from holder_from_object's results (None ones skipped)."""
    found: dict[str, dict[OwnerKey, TemplateInfo]] = {}
    for holder in holders:
        if holder is not None:
            namespace, key, info = holder
            found.setdefault(namespace, {})[key] = info
    return found


def state_from_kinds(
    source: str,
    nodes: list[NodeInfo],
    namespaces: list[str],
    pods: list[PodInfo],
    runtime_classes: list[tuple[str, RuntimeClassInfo]],
    priority_classes: Sequence[tuple[str, PriorityClassInfo]] = (),
    holders: list[Holder] | None = None,
) -> ClusterState:
    """The ClusterState of a file's records; a kind the file lacks is unavailable, and the message says
    how to save it (a file cannot say "none" for namespaces, Pods, RuntimeClasses or the templates of
    ReplicaSets and ControllerRevisions)."""
    if not nodes:
        raise UsageError(f"{source}: the cluster state has no Node objects; {SAVE_HINT}")
    missing = {
        data: f"the cluster state {source} has no {data} ({SAVE_HINT})"
        for data, found in (("namespaces", namespaces), ("pods", pods))
        if not found
    }
    if "pods" in missing:
        missing["live-pods"] = missing["pods"]
    if not runtime_classes:
        missing["runtime_classes"] = (
            f"the cluster state {source} has no RuntimeClasses (add runtimeclasses to the "
            "kubectl get command to count their overhead)"
        )
    if not holders and pods:
        missing["templates"] = (
            f"the cluster state {source} has no ReplicaSets or ControllerRevisions ({SAVE_TEMPLATES} to tell "
            "the Pods a workload already runs from its new ones)"
        )
    if not priority_classes:
        missing["priority_classes"] = (
            f"the cluster state {source} has no PriorityClasses (add priorityclasses to the kubectl get command "
            "to resolve their values; the built-in system-node-critical and system-cluster-critical are known)"
        )
    return ClusterState(
        source=f"file {source}",
        nodes={node.name: node for node in nodes},
        namespaces=frozenset(namespaces) if namespaces else None,
        pods=pods or None,
        runtime_classes=dict(runtime_classes) if runtime_classes else None,
        priority_classes=dict(priority_classes) if priority_classes else None,
        unavailable=missing,
        templates=templates_by_namespace(holders) if holders else None,
    )
