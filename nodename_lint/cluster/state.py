"""The cluster as the rules see it: plain data, built once from a file or the API.

Rules receive a ClusterState through their Context and never fetch anything themselves. Each kind
of data is None when it is not known (a state file with nodes only, an RBAC denial), and the
engine then skips the rules that need it and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class NodeInfo:
    """What the rules read from a Node object."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    unschedulable: bool = False
    allocatable: dict[str, Any] = field(default_factory=dict)  # raw quantities, as the API returns them
    conditions: dict[str, str] = field(default_factory=dict)  # condition type -> status


@dataclass(slots=True)
class PodInfo:
    """A Pod already in the cluster: where it runs and what it requests."""

    namespace: str
    name: str
    node_name: str | None
    phase: str | None
    spec: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ClusterState:
    """Nodes, namespaces and Pods of one cluster; None means "not known", not "empty"."""

    source: str  # "file state.yaml", "context kind-kind": said in messages and the summary
    nodes: dict[str, NodeInfo] | None = None
    namespaces: frozenset[str] | None = None
    pods: list[PodInfo] | None = None
    unavailable: dict[str, str] = field(default_factory=dict)  # data kind -> why it is missing

    def has(self, data: str) -> bool:
        """Whether one kind of data ("nodes", "namespaces", "pods") is known."""
        return getattr(self, data.replace("-", "_"), None) is not None

    def why_missing(self, data: str) -> str:
        return self.unavailable.get(data, f"the cluster state from {self.source} has no {data}")
