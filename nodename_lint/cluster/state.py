"""The cluster as the rules see it: plain data, built once from a file or the API.

Rules receive a ClusterState through their Context and never fetch anything themselves. Each kind
of data is None when it is not known (a state file with nodes only, an RBAC denial), and the
engine then skips the rules that need it and says so.

The indexes the rules read (non-terminated Pods by node with their summed requests, Pods by
namespace and name) are built once per state, so checking one more manifest costs the same in a
cluster of 5 nodes or 5,000.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TERMINATED_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(slots=True)
class NodeInfo:
    """What the rules read from a Node object."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    unschedulable: bool = False
    allocatable: dict[str, Any] = field(default_factory=dict)  # raw quantities, as the API returns them
    conditions: dict[str, str] = field(default_factory=dict)  # condition type -> status
    _capacity: dict[str, int] | None = field(default=None, repr=False)

    @property
    def capacity(self) -> dict[str, int]:
        """Allocatable as the kubelet counts it: cpu in millicores, the rest in units.

        A quantity that does not parse counts as 0, as a Node object with it could not exist.
        """
        if self._capacity is None:
            from ..quantity import QuantityError, request_value

            parsed: dict[str, int] = {}
            for resource, raw in self.allocatable.items():
                try:
                    parsed[resource] = request_value(resource, raw)
                except QuantityError:
                    parsed[resource] = 0
            self._capacity = parsed
        return self._capacity


@dataclass(slots=True)
class PodInfo:
    """A Pod already in the cluster: where it runs and what it requests."""

    namespace: str
    name: str
    node_name: str | None
    phase: str | None
    spec: dict[str, Any] = field(default_factory=dict)

    @property
    def is_terminated(self) -> bool:
        return self.phase in TERMINATED_PHASES


@dataclass(slots=True)
class NodeUsage:
    """The non-terminated Pods on one node: how many, and their summed effective requests."""

    pods: int
    requested: dict[str, int]


@dataclass(slots=True)
class ClusterState:
    """Nodes, namespaces and Pods of one cluster; None means "not known", not "empty".

    `pod_nodes` names the nodes whose non-terminated Pods are all in `pods` (None: every node, as
    with a full `kubectl get pods -A`); for other nodes the usage is unknown.
    """

    source: str  # "file state.yaml", "context kind-kind": said in messages and the summary
    nodes: dict[str, NodeInfo] | None = None
    namespaces: frozenset[str] | None = None
    pods: list[PodInfo] | None = None
    unavailable: dict[str, str] = field(default_factory=dict)  # data kind -> why it is missing
    pod_nodes: frozenset[str] | None = None
    _by_node: dict[str, list[PodInfo]] | None = field(default=None, repr=False)
    _by_name: dict[tuple[str, str], PodInfo] | None = field(default=None, repr=False)
    _usage: dict[str, NodeUsage] = field(default_factory=dict, repr=False)
    # results rules derive from the state alone (a rule id and a key -> value): many manifests of
    # a run share node names and constraints, so each answer is computed once per run
    memo: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    def has(self, data: str) -> bool:
        """Whether one kind of data ("nodes", "namespaces", "pods", "live-pods") is known."""
        if data in self.unavailable:
            return False
        attribute = "pods" if data == "live-pods" else data
        return getattr(self, attribute, None) is not None

    def why_missing(self, data: str) -> str:
        return self.unavailable.get(data, f"the cluster state from {self.source} has no {data}")

    # --- indexes, built on first use (each on its own: a snapshot's usage is summed already) --------
    def _pods_by_node(self) -> dict[str, list[PodInfo]]:
        if self._by_node is None:
            by_node: dict[str, list[PodInfo]] = {}
            for pod in self.pods or ():
                if pod.node_name and not pod.is_terminated:
                    by_node.setdefault(pod.node_name, []).append(pod)
            self._by_node = by_node
        return self._by_node

    def pods_known_on(self, node: str) -> bool:
        """Whether every non-terminated Pod on `node` is known (so its usage can be summed)."""
        return self.has("pods") and (self.pod_nodes is None or node in self.pod_nodes)

    def usage(self, node: str) -> NodeUsage | None:
        """Pods count and summed effective requests on `node`; None when its Pods are not known."""
        if not self.pods_known_on(node):
            return None
        cached = self._usage.get(node)
        if cached is None:
            from ..scheduling import add_into, pod_requests

            running = self._pods_by_node().get(node, [])
            requested: dict[str, int] = {}
            for pod in running:
                add_into(requested, pod_requests(pod.spec, lenient=True))
            cached = self._usage[node] = NodeUsage(len(running), requested)
        return cached

    def live_pod(self, namespace: str, name: str) -> PodInfo | None:
        """The Pod with this namespace and name in the cluster, if any."""
        if self._by_name is None:
            self._by_name = {(pod.namespace, pod.name): pod for pod in self.pods or ()}
        return self._by_name.get((namespace, name))

    def set_usage(self, usage: dict[str, NodeUsage]) -> None:
        """Usage summed elsewhere (a snapshot holds the sums, not the Pods' specs)."""
        self._usage.update(usage)
