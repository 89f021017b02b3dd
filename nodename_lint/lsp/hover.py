"""Hover text: what the pinned node has, shown on nodeName, nodeSelector, tolerations and requests.

It answers the question the rules answer with a verdict, with the facts instead: the node's
labels (marking the ones nodeSelector asks for), its taints (marking the ones the Pod tolerates),
and its allocatable resources minus what the Pods already on it request.
"""

from __future__ import annotations

import re
from typing import Any

from ..cluster.state import ClusterState, NodeInfo
from ..documents import iter_documents
from ..model import Manifest, objects_in
from ..podspec import pinned_node
from ..quantity import describe
from ..safe_text import markdown_text
from ..scheduling import pod_requests, taint_text, tolerates, tolerations_of
from .spans import Point, path_at

HOVER_KEYS = frozenset({"nodeName", "nodeSelector", "tolerations"})
CONTAINER_LISTS = frozenset({"containers", "initContainers"})
_BACKTICKS = re.compile("`+")


def hover_markdown(text: str, point: Point, cluster: ClusterState | None, default_namespace: str) -> str | None:
    """Markdown about the node pinned by the object under POINT, when POINT is on a key this covers."""
    if cluster is None or cluster.nodes is None:
        return None
    obj = _object_at(text, point, default_namespace)
    spec_path = obj.pod_spec_path if obj is not None else None
    if obj is None or spec_path is None:
        return None
    path = path_at(obj.node, point, obj.document.line_offset)
    inside = path[len(spec_path) :] if path[: len(spec_path)] == spec_path else ()
    if not inside or not (inside[0] in HOVER_KEYS or (inside[0] in CONTAINER_LISTS and "resources" in inside)):
        return None
    node_name = pinned_node(obj)
    if node_name is None:
        return None
    node = cluster.nodes.get(node_name)
    if node is None:
        return (
            f"{code(node_name)} is not a node of {code(cluster.source)}: the Pod would sit in Pending and PodGC "
            f"would delete it ({len(cluster.nodes)} nodes known)."
        )
    return node_summary(node, obj.pod_spec or {}, cluster)


def _object_at(text: str, point: Point, default_namespace: str) -> Manifest | None:
    for document in iter_documents([text]):
        if document.root is None:
            continue
        for obj in objects_in("<editor>", document, default_namespace=default_namespace):
            start, end = obj.node.start_mark, obj.node.end_mark
            offset = document.line_offset
            if (offset + start.line, start.column) <= point <= (offset + end.line, end.column):
                return obj
    return None


def node_summary(node: NodeInfo, spec: dict[str, Any], cluster: ClusterState) -> str:
    """The node's state, labels, taints and free resources, each set against what the Pod asks for."""
    ready = node.conditions.get("Ready")
    state = "Ready" if ready == "True" else f"not Ready (Ready={code(ready or 'unknown')})"
    cordoned = ", cordoned" if node.unschedulable else ""
    lines = [f"**Node** {code(node.name)} ({code(cluster.source)}): {state}{cordoned}", ""]
    wanted = spec.get("nodeSelector")
    selector: dict[str, Any] = wanted if isinstance(wanted, dict) else {}
    lines.append("Labels:")
    for key, value in sorted(node.labels.items()):
        mark = ""
        if key in selector:
            mark = " ✓ nodeSelector" if selector[key] == value else f" ✗ nodeSelector wants {code(selector[key])}"
        lines.append(f"- {code(f'{key}={value}')}{mark}")
    lines += [
        f"- ✗ no {code(key)} label (nodeSelector wants {code(value)})"
        for key, value in selector.items()
        if key not in node.labels
    ]
    tolerations = tolerations_of(spec)
    lines += ["", "Taints:" if node.taints else "Taints: none"]
    for taint in node.taints:
        verdict = "tolerated" if any(tolerates(t, taint) for t in tolerations) else "**not tolerated**"
        lines.append(f"- {code(taint_text(taint))}: {verdict}")
    lines += ["", *_resources(node, spec, cluster)]
    return "\n".join(lines)


def _resources(node: NodeInfo, spec: dict[str, Any], cluster: ClusterState) -> list[str]:
    usage = cluster.usage(node.name)
    requests = pod_requests(spec, lenient=True)
    if usage is None:
        header = ["Allocatable (the Pods on this node are not in the cluster state, so what is used is unknown):"]
        return header + [
            f"- {code(resource)}: {_amount(resource, amount)}" for resource, amount in sorted(node.capacity.items())
        ]
    lines = [
        f"Allocatable minus used ({usage.pods} Pods on the node):",
        "",
        "| resource | allocatable | used | free | this Pod |",
        "| --- | --- | --- | --- | --- |",
    ]
    for resource in sorted(set(node.capacity) | set(requests)):
        allocatable = node.capacity.get(resource, 0)
        used = usage.requested.get(resource, 0) + (usage.pods if resource == "pods" else 0)
        asked = requests.get(resource, 1 if resource == "pods" else 0)
        free = allocatable - used
        lines.append(
            f"| {code(resource, cell=True)} | {_amount(resource, allocatable)} | "
            f"{_amount(resource, used)} | {_amount(resource, free) if free >= 0 else 'none'} | "
            f"{_amount(resource, asked)}{' ✗' if asked > free else ''} |"
        )
    return lines


def _amount(resource: str, amount: int) -> str:
    """An amount as Markdown text: an extended resource's amount names it, and the name is the manifest's."""
    return markdown_text(describe(resource, amount))


def code(value: object, cell: bool = False) -> str:
    """VALUE as a Markdown code span that nothing in it can end: names and labels come from the
    cluster and the manifest, and must not turn into links or formatting in the editor."""
    text = " ".join(str(value).split())  # no line break can end the list item or table row
    if cell:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
