"""Objects read from a live cluster, trimmed to the fields the rules read; `snapshot --workloads` writes them
as a v1 List."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

import msgspec

from ..safe_text import json_escaped
from ..writing import write_output
from .json_dump import _Spec as PodSpec  # the fields of a Pod's spec a node's usage reads
from .templates import REVISION_LABEL, controller_reference, split_key


# --- snapshot trimming: keep what the rules read, drop the rest ---------------------------------
def _pick(source: Any, keys: Iterable[str]) -> dict[str, Any]:
    if not isinstance(source, dict):
        return {}
    return {key: source[key] for key in keys if source.get(key) not in (None, {}, [])}


def trim_node(node: dict[str, Any]) -> dict[str, Any]:
    status = node.get("status") or {}
    conditions = [_pick(c, ("type", "status")) for c in status.get("conditions") or [] if isinstance(c, dict)]
    node_info = _pick(status.get("nodeInfo"), ("operatingSystem",))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _pick(node.get("metadata"), ("name", "labels")),
        "spec": _pick(node.get("spec"), ("taints", "unschedulable")),
        "status": {
            **_pick(status, ("allocatable",)),
            **({"conditions": conditions} if conditions else {}),
            **({"nodeInfo": node_info} if node_info else {}),
        },
    }


class _NodeMetadata(msgspec.Struct, gc=False):
    name: Any = None
    labels: Any = None


class _NodeSpec(msgspec.Struct, gc=False):
    taints: Any = None
    unschedulable: Any = None


class _NodeCondition(msgspec.Struct, gc=False):
    type: Any = None
    status: Any = None


class _NodeSystemInfo(msgspec.Struct, gc=False):
    operatingSystem: Any = None


class _NodeStatus(msgspec.Struct, gc=False):
    allocatable: Any = None
    conditions: list[_NodeCondition] | None = None
    nodeInfo: _NodeSystemInfo | None = None


class _Node(msgspec.Struct, gc=False):
    metadata: _NodeMetadata | None = None
    spec: _NodeSpec | None = None
    status: _NodeStatus | None = None


class _NodePage(msgspec.Struct, gc=False):
    metadata: Any = None
    items: list[_Node] | None = None


_NODE_PAGE = msgspec.json.Decoder(_NodePage)


def decode_node_page(body: bytes) -> dict[str, Any]:
    """A page of a node list with the fields trim_node keeps, the rest (images, managedFields, addresses,
    the conditions' messages) skipped by msgspec without being built: 1.5x faster than decoding it whole.

    Raises msgspec.DecodeError (ValidationError) for a page of another shape, which is then decoded whole.
    """
    page = _NODE_PAGE.decode(body)
    return {"metadata": page.metadata, "items": [_node_object(node) for node in page.items or ()]}


def _node_object(node: _Node) -> dict[str, Any]:
    metadata, spec, status = node.metadata, node.spec, node.status
    return {
        "metadata": None if metadata is None else {"name": metadata.name, "labels": metadata.labels},
        "spec": None if spec is None else {"taints": spec.taints, "unschedulable": spec.unschedulable},
        "status": None
        if status is None
        else {
            "allocatable": status.allocatable,
            "conditions": None
            if status.conditions is None
            else [{"type": c.type, "status": c.status} for c in status.conditions],
            "nodeInfo": None if status.nodeInfo is None else {"operatingSystem": status.nodeInfo.operatingSystem},
        },
    }


class _PodMetadata(msgspec.Struct, gc=False):
    name: Any = None
    namespace: Any = None


class _PodStatus(msgspec.Struct, gc=False):
    phase: Any = None


class _Pod(msgspec.Struct, gc=False):
    metadata: _PodMetadata | None = None
    spec: PodSpec | None = None
    status: _PodStatus | None = None


class _PodPage(msgspec.Struct, gc=False):
    metadata: Any = None
    items: list[_Pod] | None = None


_POD_PAGE = msgspec.json.Decoder(_PodPage)


def decode_pod_page(body: bytes) -> dict[str, Any]:
    """A page of a Pod list with only what a node's usage reads (name, namespace, node, phase, the
    containers' resources and ports, overhead): the rest (managedFields, env, volumes, statuses) is
    skipped by msgspec without being built, so a page of big Pods never sits in memory as objects.

    Raises msgspec.DecodeError (ValidationError) for a page of another shape, which is then decoded whole.
    """
    page = _POD_PAGE.decode(body)
    return {"metadata": page.metadata, "items": [_pod_object(pod) for pod in page.items or ()]}


def _pod_object(pod: _Pod) -> dict[str, Any]:
    metadata, status = pod.metadata, pod.status
    return {
        "metadata": None if metadata is None else {"name": metadata.name, "namespace": metadata.namespace},
        "spec": None if pod.spec is None else pod.spec.plain(strict=True),
        "status": None if status is None else {"phase": status.phase},
    }


def trim_namespace(namespace: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": _pick(namespace.get("metadata"), ("name",)),
        "status": _pick(namespace.get("status"), ("phase",)),
    }


def trim_pod(pod: dict[str, Any]) -> dict[str, Any]:
    spec = pod.get("spec") or {}

    def containers(key: str, fields: tuple[str, ...]) -> dict[str, Any]:
        listed = [_pick(c, fields) for c in spec.get(key) or [] if isinstance(c, dict)]
        return {key: listed} if listed else {}

    metadata = pod.get("metadata") or {}
    kept = _pick(metadata, ("name", "namespace"))
    owner = controller_reference(metadata)
    if owner is not None:  # what tells a workload's own Pods and the template they run (templates.pod_owner)
        kind, name = split_key(owner)
        kept["ownerReferences"] = [{"kind": kind, "name": name, "controller": True}]
        kept["labels"] = _pick(metadata.get("labels"), (REVISION_LABEL,))
    annotations = _pick(metadata.get("annotations") if isinstance(metadata, dict) else None, _PREEMPTION_ANNOTATIONS)
    if annotations:
        kept["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": kept,
        "spec": {
            **_pick(spec, ("nodeName", "overhead", "resources", "priority", "priorityClassName")),
            **containers("initContainers", ("name", "resources", "restartPolicy", "ports")),
            **containers("containers", ("name", "resources", "ports")),
        },
        "status": _pick(pod.get("status"), ("phase", "startTime", "qosClass")),
    }


# what preemption reads of a Pod's annotations: whether it is a static Pod's mirror (kubelettypes.IsCriticalPod)
_PREEMPTION_ANNOTATIONS = ("kubernetes.io/config.mirror", "kubernetes.io/config.source")


def trim_runtime_class(runtime_class: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": _pick(runtime_class.get("metadata"), ("name",)),
        **_pick(runtime_class, ("handler", "overhead", "scheduling")),
    }


def write_snapshot(snapshot: dict[str, Any], output: str | None, source: str) -> None:
    """JSON when the file name ends in .json, else YAML with one object per line, to a file or stdout.

    Each item is a JSON flow mapping on its own line: valid YAML, written a hundred times faster
    than a block-style dump, and a change to one object is a one-line diff in a snapshot branch.
    """
    if output and output.endswith(".json"):
        text = json.dumps(snapshot, separators=(",", ":")) + "\n"  # ensure_ascii: every non-ASCII escaped
    else:
        lines = [
            f"# nodename-lint snapshot of {source}; lint against it with --cluster-state FILE",
            "apiVersion: v1",
            "kind: List",
            'metadata: {resourceVersion: ""}',
            "items:" if snapshot["items"] else "items: []",
        ]
        lines += [f"- {json.dumps(item, ensure_ascii=False, separators=(', ', ': '))}" for item in snapshot["items"]]
        text = json_escaped("\n".join(lines)) + "\n"  # values from the API server: no raw bidi override
    if output:
        write_output(output, text, "snapshot")
    else:
        sys.stdout.write(text)
