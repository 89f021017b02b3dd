"""A cluster state kept current by watch events, for a process that runs as long as the cluster (the webhook).

The rules read it through the same ClusterState accessors as a state from a file or a one-off live read.
What differs is how it is kept: each kind is installed whole from a list, then changed one event at a
time (watch.py). Pods are not kept as records: a node's usage (count and summed requests) and its host
ports are what the rules read of them, so those are kept, updated by each event; each Pod's share is
kept too (shared between Pods that ask for the same), to take it away when the Pod changes or goes.
A Pod's share is computed by the same functions as a file's or a live read's (pod_from_object,
running_pods_requests, host_ports), so every source gives the same numbers.

Readers hold `lock` for as long as they read (a review holds it while the rules run); every change takes
it too, and sets aside the cached answers (no_node_fits, node_suggestions) the change may alter.
"""

from __future__ import annotations

import sys
import threading
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from ..scheduling import HostPort, host_ports, running_pods_requests
from .objects import name_of, node_from_object, pod_from_object, runtime_class_from_object
from .records import NodeInfo, NodeUsage, RunningPod, RuntimeClassInfo
from .state import ClusterState

Requests = tuple[tuple[str, int], ...]  # (resource, amount) in the units the usage sums
# What one Pod adds to its node: requests, host ports, and who holds them ("namespace/name", only with ports:
# every other share is one tuple for all the Pods that ask the same)
Share = tuple[Requests, tuple[HostPort, ...], str]
NO_LIVE_PODS = (
    "the webhook keeps each node's usage, not the Pods by name (and the API server itself refuses a change "
    "of a live Pod's nodeName)"
)


@dataclass(frozen=True, slots=True)
class PodEntry:
    """One Pod as the usage counts it: its node (None: not bound yet), and its share (None: it counts
    nowhere, terminated)."""

    key: str  # namespace/name
    node: str | None
    share: Share | None


def pod_entry(obj: Any) -> PodEntry:
    """A Pod object's entry; raises StateError when its shape is wrong."""
    pod = pod_from_object(obj)
    key, node = f"{pod.namespace}/{pod.name}", pod.node_name and sys.intern(pod.node_name)
    if node is None or pod.is_terminated:
        return PodEntry(key, node, None)
    requests = tuple(sorted(running_pods_requests([pod]).items()))
    ports = tuple(port for _, port in host_ports(pod.spec))
    return PodEntry(key, node, (requests, ports, key if ports else ""))


class NodePods:
    """The Pods counted on one node: the hashes of their "namespace/name", sorted in an array of 64-bit
    integers, and their shares in the same order, 16 bytes a Pod and no object of its own.

    A dict of 150,000 names took 15 MB of small objects, and the pages of the list they were read between
    could then not be given back to the system (the process stayed 16 MB over the snapshot of the same
    state). Two Pods of one node would have to share a hash (64 bits, keyed anew in each process) to be
    counted once: about one chance in 10^15 for a node of 110 Pods, and then only a warning is missed.
    """

    __slots__ = ("hashes", "shares")

    def __init__(self) -> None:
        self.hashes = array("q")
        self.shares: list[Share] = []

    def get(self, key: int) -> Share | None:
        index = bisect_left(self.hashes, key)
        return self.shares[index] if index < len(self.hashes) and self.hashes[index] == key else None

    def put(self, key: int, share: Share) -> None:
        index = bisect_left(self.hashes, key)
        if index < len(self.hashes) and self.hashes[index] == key:
            self.shares[index] = share
        else:
            self.hashes.insert(index, key)
            self.shares.insert(index, share)

    def pop(self, key: int) -> Share | None:
        index = bisect_left(self.hashes, key)
        if index == len(self.hashes) or self.hashes[index] != key:
            return None
        del self.hashes[index]
        return self.shares.pop(index)


@dataclass
class PodSums:
    """The Pods on each node with their shares; each node's usage and host ports, summed from them."""

    on_node: dict[str, NodePods] = field(default_factory=dict)
    usage: dict[str, NodeUsage] = field(default_factory=dict)
    ports: dict[str, dict[HostPort, str]] = field(default_factory=dict)
    shares: dict[Share, Share] = field(default_factory=dict)  # one tuple for all the Pods that ask the same
    counted: int = 0

    def add(self, entry: PodEntry) -> str | None:
        """Count a Pod (replacing what it counted before on its node); the node whose usage changed, if any."""
        node = entry.node
        if node is None or entry.share is None:
            return self.remove(entry.key, node)
        share = self.shares.setdefault(entry.share, entry.share)
        pods = self.node(node)
        key = hash(entry.key)
        old = pods.get(key)
        if old is share:
            return None  # a status update: the same requests on the same node
        if old is not None:
            self._count(node, old, -1)
        pods.put(key, share)
        self._count(node, share, 1)
        if share[1] or (old is not None and old[1]):
            self._ports_of(node)
        if len(self.shares) > 2 * self.counted + 1024:  # shares no Pod holds any more (resized, deleted)
            self.shares = {held: held for pods in self.on_node.values() for held in pods.shares}
        return node

    def node(self, node: str) -> NodePods:
        """The Pods of a node, and its usage, made empty on first use."""
        pods = self.on_node.get(node)
        if pods is None:
            pods = self.on_node[node] = NodePods()
            self.usage[node] = NodeUsage(0, {})
        return pods

    def remove(self, key: str, node: str | None) -> str | None:
        """Stop counting a Pod (deleted, terminated); the node whose usage changed, if any."""
        pods = self.on_node.get(node) if node is not None else None
        old = pods.pop(hash(key)) if pods is not None else None
        if old is None or node is None:
            return None
        self._count(node, old, -1)
        if old[1]:
            self._ports_of(node)
        return node

    def _count(self, node: str, share: Share, sign: int) -> None:
        self.counted += sign
        usage = self.usage[node]
        usage.pods += sign
        requested = usage.requested
        for resource, amount in share[0]:
            total = requested.get(resource, 0) + sign * amount
            if total:
                requested[resource] = total
            else:
                requested.pop(resource, None)

    def _ports_of(self, node: str) -> None:
        """The host ports in use on a node, from its Pods again (a port two Pods hold outlives one of them)."""
        pods = self.on_node.get(node)
        self.ports[node] = {port: share[2] for share in (pods.shares if pods else ()) for port in share[1]}


@dataclass(slots=True)
class WatchedState(ClusterState):
    """A ClusterState changed in place by watch events (see the module docstring); readers hold `lock`."""

    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    sums: PodSums = field(default_factory=PodSums, repr=False)
    _namespace_names: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self.unavailable.setdefault("live-pods", NO_LIVE_PODS)

    # --- what the rules read ------------------------------------------------------------------
    def usage(self, node: str) -> NodeUsage | None:
        if not self.pods_known_on(node):
            return None
        return self.sums.usage.get(node) or NodeUsage(0, {})

    def ports_in_use(self, node: str) -> dict[HostPort, str] | None:
        if not self.pods_known_on(node):
            return None
        return self.sums.ports.get(node) or {}

    def running_pods(self, node: str) -> list[RunningPod] | None:
        """Not known: the Pods are kept as their node's sums, without the priority, QoS class and start
        time preemption weighs (the rules say what the kubelet and the scheduler may evict, not who)."""
        return None

    def lowest_priority(self, node: str) -> int | None:
        return None

    # --- whole kinds, from a list (built before the lock is taken) ----------------------------------
    def install(self, kind: str, records: Any) -> None:
        """Replace everything known of one kind by what a full list gave: the records of "nodes",
        "namespaces" and "runtime_classes" (each read with KEEP[kind]), the PodSums of "pods"."""
        with self.lock:
            self.unavailable.pop(kind, None)
            if kind == "nodes":
                self.nodes = {node.name: node for node in records}
                self._shapes = None
            elif kind == "namespaces":
                self._namespace_names = set(records)
                self.namespaces = frozenset(records)
            elif kind == "runtime_classes":
                self.runtime_classes = dict(records)
            else:
                self.sums, self.pods = records, ()  # Pods known, kept as their sums
            self._suggestions.clear()
            self._no_fit.clear()

    def forget(self, kind: str, reason: str | None) -> None:
        """One kind cannot be read (403, or a watch that is not allowed): the rules that need it are skipped;
        None: it can again (its list is in, its watch accepted)."""
        with self.lock:
            if reason is None:
                self.unavailable.pop(kind, None)
            else:
                self.unavailable[kind] = reason
            self._no_fit.clear()

    # --- one event --------------------------------------------------------------------------------
    def apply(self, kind: str, deleted: bool, record: Any) -> None:
        """One watch event (ADDED, MODIFIED, or DELETED when `deleted`) with its record (KEEP[kind])."""
        with self.lock:
            if kind == "pods":
                changed = self.sums.remove(record.key, record.node) if deleted else self.sums.add(record)
                if changed is not None:
                    self._no_fit.clear()
            elif kind == "nodes":
                self._node(deleted, record)
            elif kind == "namespaces":
                (self._namespace_names.discard if deleted else self._namespace_names.add)(record)
                self.namespaces = frozenset(self._namespace_names)
            elif deleted:
                (self.runtime_classes or {}).pop(record[0], None)
                self._no_fit.clear()
            else:
                self.runtime_classes = {**(self.runtime_classes or {}), record[0]: record[1]}
                self._no_fit.clear()

    def _node(self, deleted: bool, node: NodeInfo) -> None:
        nodes = self.nodes if self.nodes is not None else {}
        old = nodes.get(node.name)
        if deleted:
            if nodes.pop(node.name, None) is None:
                return
        elif old is not None and _same_node(old, node):
            return  # a heartbeat: nothing the rules read changed
        else:
            nodes[node.name] = node
        self.nodes = nodes
        if deleted or old is None:
            self._suggestions.clear()
        self._no_fit.clear()
        self._shapes = None

    def add_node(self, node: NodeInfo) -> None:
        """A node confirmed by a GET before its watch event came: the rules see it at once."""
        with self.lock:
            self._node(False, node)


def _same_node(old: NodeInfo, new: NodeInfo) -> bool:
    return (old.labels, old.taints, old.unschedulable, old.allocatable, old.conditions) == (
        new.labels,
        new.taints,
        new.unschedulable,
        new.allocatable,
        new.conditions,
    )


def _namespace(obj: Any) -> str:
    return name_of(obj, "Namespace")[1]


def _runtime_class(obj: Any) -> tuple[str, RuntimeClassInfo]:
    return runtime_class_from_object(obj)


# kind -> what is kept of one API object of it (raises StateError for an object of the wrong shape)
KEEP: dict[str, Any] = {
    "nodes": node_from_object,
    "namespaces": _namespace,
    "runtime_classes": _runtime_class,
    "pods": pod_entry,
}
