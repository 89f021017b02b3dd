"""The cluster as the rules see it: plain data, built once from a file or the API.

Rules receive a ClusterState through their Context and never fetch anything themselves. Each kind
of data is None when it is not known (a state file with nodes only, an RBAC denial), and the
engine then skips the rules that need it and says so.

What the rules derive from the state alone (a node's usage, the nodes a mistyped name may mean,
why no node fits a set of constraints) are typed accessors here, each cached per state: many
manifests of a run share node names and constraints, and the indexes are built once, so checking
one more manifest costs the same in a cluster of 5 nodes or 5,000.
"""

from __future__ import annotations

import gc
import json
from bisect import bisect_left
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from ..podspec import required_node_names
from ..scheduling import (
    AFFINITY_CONFLICT,
    HostPort,
    absent_nodes_reason,
    admitted_tolerations,
    fit_order,
    host_ports,
    node_filter_labels,
    node_filter_rejection,
    running_pods_requests,
    usage_rejection,
)
from .records import (
    TERMINATED_PHASES,
    NodeInfo,
    NodeUsage,
    OwnerKey,
    PodInfo,
    PodTable,
    PriorityClassInfo,
    RunningPod,
    RuntimeClassInfo,
    SavedLabels,
    TemplateInfo,
)
from .templates import owner_key, split_key, workload_of

if TYPE_CHECKING:
    from ..preemption import Priority, SchedulerPreemption

_Index = TypeVar("_Index")


def _frozen(build: Callable[[], _Index]) -> _Index:
    """Build an index over the whole cluster with the cyclic GC paused, then freeze it out of the GC.

    The state itself is frozen once loaded (from_file.load_state_text); an index built later during
    the linting (150,000 tuple keys for the Pods by name) would otherwise be rescanned by every
    collection the linting triggers. It lives as long as the state, and holds no cycle.
    """
    from ..documents import without_cycle_collection

    with without_cycle_collection():
        index = build()
        gc.freeze()
    return index


class NoNodeFits(NamedTuple):
    """Why the scheduler finds no node for a Pod: nodes per rejection reason, and how many of them
    were compared with their allocatable alone because their Pods are not known."""

    reasons: dict[str, int]
    unknown_usage: int
    prefilter: str = ""  # a PreFilter rejection that replaces the per-node reasons
    preemption_may_help: int = 0  # the nodes whose filter status is Unschedulable (not ...AndUnresolvable)
    helpful: tuple[str, ...] = ()  # those nodes' names: where DefaultPreemption looks for victims


@dataclass(slots=True)
class ClusterState:
    """Nodes, namespaces and Pods of one cluster; None means "not known", not "empty".

    `pod_nodes` names the nodes whose non-terminated Pods are all in `pods` (None: every node, as
    with a full `kubectl get pods -A`); for other nodes the usage is unknown.
    """

    source: str  # "file state.yaml", "context kind-kind": said in messages and the summary
    nodes: dict[str, NodeInfo] | None = None
    namespaces: frozenset[str] | None = None
    pods: Collection[PodInfo] | None = None  # a list, or a snapshot's PodTable
    runtime_classes: dict[str, RuntimeClassInfo] | None = None  # by name
    priority_classes: dict[str, PriorityClassInfo] | None = None  # by name (the built-in ones may be missing)
    unavailable: dict[str, str] = field(default_factory=dict)  # data kind -> why it is missing
    pod_nodes: frozenset[str] | None = None
    # namespace -> "ReplicaSet/web-5d8f7c9b6d" (or a ControllerRevision) -> its Pod template; None: not known
    templates: dict[str, dict[OwnerKey, TemplateInfo]] | None = None
    _by_node: dict[str, list[PodInfo]] | None = field(default=None, repr=False)
    _by_name: dict[str, dict[str, PodInfo]] | None = field(default=None, repr=False)  # namespace -> name -> Pod
    # see _owners; a controller of one Pod may hold it alone, not in a list (set_pod_indexes)
    _by_owner: dict[str, dict[OwnerKey, PodInfo | list[PodInfo]]] | None = field(default=None, repr=False)
    # the caches of the accessors below, private to this state
    _usage: dict[str, NodeUsage] = field(default_factory=dict, repr=False)
    _ports: dict[str, dict[HostPort, str]] = field(default_factory=dict, repr=False)
    _port_holders: dict[str, list[tuple[HostPort, str]]] = field(default_factory=dict, repr=False)
    _suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _no_fit: dict[str, NoNodeFits | None] = field(default_factory=dict, repr=False)
    _shapes: NodeShapes | None = field(default=None, repr=False)  # None also once the nodes change
    _controlled: dict[str, _Owners] = field(default_factory=dict, repr=False)  # by namespace
    _holders: dict[str, dict[OwnerKey, list[OwnerKey]]] = field(default_factory=dict, repr=False)  # by namespace
    # a snapshot's: whether a workload has a running Pod in a namespace (None: not saved, every lookup reads the Pods)
    _runs_workload: Callable[[str, OwnerKey], bool] | None = field(default=None, repr=False)
    _running: dict[str, list[RunningPod]] = field(default_factory=dict, repr=False)
    _running_source: Callable[[str], list[RunningPod]] | None = field(default=None, repr=False)  # a snapshot's
    _port_source: Callable[[str], list[tuple[HostPort, str]]] | None = field(default=None, repr=False)  # likewise
    _lowest: dict[str, int | None] = field(default_factory=dict, repr=False)
    _preemption: dict[str, SchedulerPreemption] = field(default_factory=dict, repr=False)
    # what a loader decoded besides the records (a JSON dump's items): freed with the state, which a command
    # keeps to its exit (commands.options.kept_until_exit), not piece by piece once loaded (36 ms of 150,000 Pods)
    _decoded: Any = field(default=None, repr=False)

    def has(self, data: str) -> bool:
        """Whether one kind of data ("nodes", "namespaces", "pods", "live-pods", "runtime_classes",
        "priority_classes") is known."""
        if data in self.unavailable:
            return False
        attribute = "pods" if data == "live-pods" else data
        return getattr(self, attribute, None) is not None

    def why_missing(self, data: str) -> str:
        return self.unavailable.get(data, f"the cluster state from {self.source} has no {data}")

    # --- indexes, built on first use (each on its own: a snapshot's usage is summed already) --------
    def _pods_by_node(self) -> dict[str, list[PodInfo]]:
        if self._by_node is None:
            self._by_node = _frozen(self._index_by_node)
        return self._by_node

    def set_pod_indexes(
        self,
        by_node: dict[str, list[PodInfo]],
        by_namespace: dict[str, dict[str, PodInfo]],
        by_owner: dict[str, dict[OwnerKey, PodInfo | list[PodInfo]]] | None,
    ) -> None:
        """The non-terminated Pods by node, every Pod by namespace and name, and the bound non-terminated
        Pods by namespace and controller, from a loader that walked every Pod anyway (json_dump); a
        controller of one Pod may hold its record alone (_Owners.group makes it a list)."""
        self._by_node = by_node
        self._by_name = by_namespace
        self._by_owner = by_owner

    def _index_by_node(self) -> dict[str, list[PodInfo]]:
        by_node: dict[str, list[PodInfo]] = {}
        for pod in self.pods or ():
            if pod.node_name and not pod.is_terminated:
                by_node.setdefault(pod.node_name, []).append(pod)
        return by_node

    def pods_known_on(self, node: str) -> bool:
        """Whether every non-terminated Pod on `node` is known (so its usage can be summed)."""
        return self.has("pods") and (self.pod_nodes is None or node in self.pod_nodes)

    def usage(self, node: str) -> NodeUsage | None:
        """Pods count and summed effective requests on `node`; None when its Pods are not known."""
        if not self.pods_known_on(node):
            return None
        cached = self._usage.get(node)
        if cached is None:
            running = self._pods_by_node().get(node, [])
            cached = self._usage[node] = NodeUsage(len(running), _frozen(partial(running_pods_requests, running)))
        return cached

    def ports_in_use(self, node: str) -> dict[HostPort, str] | None:
        """The host ports of the non-terminated Pods on `node` ("namespace/name" of the holder); None when unknown."""
        if not self.pods_known_on(node):
            return None
        cached = self._ports.get(node)
        if cached is None:
            cached = self._ports[node] = dict(self.port_holders(node))
        return cached

    def port_holders(self, node: str) -> list[tuple[HostPort, str]]:
        """Each host port of each non-terminated Pod on `node`, with its holder ("namespace/name"), in the
        Pods' order: a port two Pods hold is there twice ([] when the node's Pods are not known)."""
        if not self.pods_known_on(node):
            return []
        cached = self._port_holders.get(node)
        if cached is None and self._port_source is not None:
            cached = self._port_holders[node] = self._port_source(node)
        elif cached is None:
            running = self._pods_by_node().get(node, [])
            cached = self._port_holders[node] = _frozen(  # a JSON dump's specs made plain live on
                lambda: [
                    (port, f"{pod.namespace}/{pod.name}")
                    for pod in running
                    if pod.loaded_spec.__class__ is dict or pod.loaded_spec.may_have_host_ports()
                    for _, port in host_ports(pod.spec)
                ]
            )
        return cached

    def ports_held(self, node: str, without: frozenset[str]) -> dict[HostPort, str]:
        """The host ports in use on `node` once the Pods named in `without` ("namespace/name") are gone: a
        port another Pod holds too stays held."""
        return {port: holder for port, holder in self.port_holders(node) if holder not in without}

    def running_pods(self, node: str) -> list[RunningPod] | None:
        """The non-terminated Pods on `node` as preemption weighs them (in the state's order); None when
        its Pods are not known."""
        if not self.pods_known_on(node):
            return None
        cached = self._running.get(node)
        if cached is None:
            if self._running_source is not None:
                cached = self._running[node] = self._running_source(node)
                return cached
            from ..preemption import running_pod

            running = self._pods_by_node().get(node, [])
            cached = self._running[node] = _frozen(lambda: [running_pod(pod, self.priority_classes) for pod in running])
        return cached

    def lowest_priority(self, node: str) -> int | None:
        """The lowest priority of the non-terminated Pods on `node` (None: no Pod, or not known), read
        without weighing each Pod whole: most nodes of a cluster hold no Pod a given Pod may preempt."""
        if not self.pods_known_on(node):
            return None
        if node not in self._lowest:
            if self._running_source is not None:
                priorities = [pod.priority for pod in self.running_pods(node) or ()]
            else:
                from ..preemption import running_priority

                classes = self.priority_classes
                priorities = [running_priority(pod, classes) for pod in self._pods_by_node().get(node, ())]
            self._lowest[node] = min(priorities, default=None)
        return self._lowest[node]

    def set_running_source(self, source: Callable[[str], list[RunningPod]]) -> None:
        """Where running_pods reads a node's Pods from, when the state holds them already weighed (a snapshot)."""
        self._running_source = source

    def live_pod(self, namespace: str, name: str) -> PodInfo | None:
        """The Pod with this namespace and name in the cluster, if any."""
        if isinstance(self.pods, PodTable):  # a snapshot's table is looked up as it is
            return self.pods.lookup(namespace, name)
        if self._by_name is None:
            self._by_name = _frozen(self._index_by_name)
        return self._by_name.get(namespace, {}).get(name)

    def _index_by_name(self) -> dict[str, dict[str, PodInfo]]:
        by_namespace: dict[str, dict[str, PodInfo]] = {}
        for pod in self.pods or ():
            by_namespace.setdefault(pod.namespace, {})[pod.name] = pod
        return by_namespace

    def _owners(self, namespace: str) -> _Owners:
        """The bound, non-terminated Pods of one namespace by controller, read once (a snapshot's table
        decodes that namespace only, and makes records of the Pods of the groups asked for alone)."""
        found = self._controlled.get(namespace)
        if found is None:
            groups: dict[OwnerKey, Any]
            if isinstance(self.pods, PodTable):
                groups = cast("dict[OwnerKey, list[Any]]", self.pods.controlled(namespace))  # (name, row) pairs
            elif self._by_owner is not None:
                groups = self._by_owner.get(namespace, {})
            else:
                if self._by_name is None:
                    self._by_name = _frozen(self._index_by_name)
                groups = _by_controller(self._by_name.get(namespace, {}).values())
            found = self._controlled[namespace] = _frozen(partial(_Owners, groups))
        return found

    def workload_pods(self, namespace: str, workload: OwnerKey) -> list[tuple[list[PodInfo], bool]]:
        """The running Pods of a Deployment, StatefulSet or DaemonSet ("Kind/name"), by controller in the
        Pods' order, each group with whether it is certainly the workload's (templates.workload_of).

        Only the controllers that may be the workload's are weighed: itself, the ReplicaSets whose held
        template names it, and those named after it; a namespace holds thousands of others.
        """
        if self._runs_workload is not None and not self._runs_workload(namespace, workload):
            return []
        owners = self._owners(namespace)
        kind, name = split_key(workload)
        candidates = {workload} if kind in ("StatefulSet", "DaemonSet") else set()
        if kind == "Deployment":
            candidates.update(owners.named_after(name))
            candidates.update(self._held_for(namespace).get(workload, ()))
        groups: list[tuple[list[PodInfo], bool]] = []
        for owner in owners.in_order(candidates & owners.groups.keys()):
            found = workload_of(owner, self.template(namespace, owner))
            if found is not None and found[0] == workload:
                groups.append((self._records(namespace, owners.group(owner)), found[1]))
        return groups

    def running_workloads(self, namespace: str) -> list[OwnerKey]:
        """The workloads ("Kind/name") with a bound, non-terminated Pod in the namespace, sorted: what a
        snapshot saves, so that workload_pods reads the Pods of a namespace for those alone."""
        found = set()
        for owner in self._owners(namespace).groups:
            workload = workload_of(owner, self.template(namespace, owner))
            if workload is not None:
                found.add(workload[0])
        return sorted(found)

    def set_runs_workload(self, runs: Callable[[str, OwnerKey], bool]) -> None:
        """How workload_pods tells whether a workload is among a namespace's running_workloads, when the state
        has them saved (a snapshot)."""
        self._runs_workload = runs

    def _held_for(self, namespace: str) -> dict[OwnerKey, list[OwnerKey]]:
        """The namespace's template holders by the workload that controls them ("Deployment/web")."""
        found = self._holders.get(namespace)
        if found is None:
            found = self._holders[namespace] = {}
            for key, holder in (self.templates or {}).get(namespace, {}).items():
                if holder.workload:
                    found.setdefault(holder.workload, []).append(key)
        return found

    def _records(self, namespace: str, group: list[Any]) -> list[PodInfo]:
        if isinstance(self.pods, PodTable):  # (name, row) pairs
            return [self.pods.info(namespace, name, row) for name, row in group]
        return group

    def template(self, namespace: str, key: OwnerKey) -> TemplateInfo | None:
        """The Pod template a ReplicaSet or ControllerRevision ("Kind/name") holds, when the state has it."""
        return (self.templates or {}).get(namespace, {}).get(key)

    def node_suggestions(self, name: str) -> tuple[str, ...]:
        """The existing node names a missing `name` most likely meant, best first (see closest_node_names)."""
        cached = self._suggestions.get(name)
        if cached is None:  # many manifests share a mistyped name: rank the nodes once per name
            from .names import closest_node_names  # startup: rapidfuzz, for a run that names a missing node

            cached = self._suggestions[name] = tuple(closest_node_names(name, self.nodes or {}))
        return cached

    def no_node_fits(self, spec: dict[str, Any], requests: dict[str, int]) -> NoNodeFits | None:
        """Why the default scheduler would place a Pod with this spec and these requests on no node;
        None as soon as one node fits. Each distinct set of constraints is checked once per state."""
        constraints = {key: spec.get(key) for key in ("nodeSelector", "affinity", "tolerations")}
        wanted_ports = host_ports(spec, default_from_host_network=True)
        key = json.dumps([constraints, requests, [port for _, port in wanted_ports]], sort_keys=True, default=str)
        if key not in self._no_fit:
            self._no_fit[key] = self._find_no_fit(spec, requests, wanted_ports)
        return self._no_fit[key]

    def _find_no_fit(
        self, spec: dict[str, Any], requests: dict[str, int], wanted_ports: list[tuple[Any, HostPort]]
    ) -> NoNodeFits | None:
        """As findNodesThatFitPod: NodeAffinity's PreFilter may narrow the search to the nodes a
        required `matchFields` `metadata.name` term names; the others count as absent ("node(s)
        didn't satisfy plugin(s) [NodeAffinity]"), and terms naming no common node fail at once."""
        nodes = self.nodes or {}
        names = required_node_names(spec)  # NodeAffinity's PreFilter
        if names is not None and not names:
            return NoNodeFits({}, 0, AFFINITY_CONFLICT)
        candidates = (
            [nodes[name] for name in sorted(names) if name in nodes] if names is not None else list(nodes.values())
        )
        tolerations = admitted_tolerations(spec)  # the same for every node (a third of the loop, per node)
        keys = node_filter_labels(spec)
        if keys is not None and names is None:
            shapes = self._node_shapes()
            candidates, groups = shapes.nodes, shapes.groups(keys)
        else:
            groups = [[index] for index in range(len(candidates))]
        counts: dict[str, int] = {}
        passing: list[int] = []
        for group in groups:  # the filters that read the node alone, once per group of nodes they see alike
            rejection = node_filter_rejection(spec, candidates[group[0]], tolerations)
            if rejection is None:
                passing.extend(group)
            else:
                for reason in rejection.reasons:
                    counts[reason] = counts.get(reason, 0) + len(group)
        passing.sort()  # back in the nodes' order, which `helpful` keeps
        helpful: list[str] = []
        order = fit_order(requests)  # the same for every node
        for index in passing:
            node = candidates[index]
            name = node.name
            rejection = usage_rejection(
                requests, node, partial(self.usage, name), wanted_ports, partial(self.ports_in_use, name), order
            )
            if rejection is None:
                return None
            if rejection.preemption_may_help:
                helpful.append(name)
            for reason in rejection.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        unknown_usage = self._unknown_usage(candidates)  # every node was rejected
        if len(candidates) < len(nodes):
            counts[absent_nodes_reason()] = len(nodes) - len(candidates)
        return NoNodeFits(counts, unknown_usage, preemption_may_help=len(helpful), helpful=tuple(helpful))

    def _node_shapes(self) -> NodeShapes:
        if self._shapes is None:
            self._shapes = _frozen(lambda: NodeShapes(list((self.nodes or {}).values())))
        return self._shapes

    def _unknown_usage(self, nodes: list[NodeInfo]) -> int:
        """How many of `nodes` have Pods the state does not know (pods_known_on)."""
        if self.pod_nodes is None and self.has("pods"):
            return 0
        return sum(not self.pods_known_on(node.name) for node in nodes)

    def scheduler_preemption(
        self, spec: dict[str, Any], requests: dict[str, int], priority: Priority, verdict: NoNodeFits
    ) -> SchedulerPreemption:
        """What DefaultPreemption does for a Pod no node fits (`verdict`, from no_node_fits with the same spec
        and requests): preemption.scheduler_preemption, once per set of constraints, requests and priority."""
        from ..preemption import scheduler_preemption

        constraints = {key: spec.get(key) for key in ("nodeSelector", "affinity", "tolerations")}
        ports = [port for _, port in host_ports(spec, default_from_host_network=True)]
        key = json.dumps([constraints, requests, ports, priority.value, priority.policy], sort_keys=True, default=str)
        if key not in self._preemption:
            nodes = self.nodes or {}
            self._preemption[key] = scheduler_preemption(
                spec, requests, priority, nodes, verdict.helpful, self.running_pods, self.lowest_priority
            )
        return self._preemption[key]

    def keep_decoded(self, decoded: Any) -> None:
        """Hold what the loader decoded as long as the state (see `_decoded`)."""
        self._decoded = decoded

    def set_node_summaries(
        self, usage: dict[str, NodeUsage], ports: Callable[[str], list[tuple[HostPort, str]]]
    ) -> None:
        """Usage, and where port_holders reads a node's host ports from, summed elsewhere (a snapshot holds them,
        not the Pods' specs)."""
        self._usage.update(usage)
        self._port_source = ports


def _by_controller(pods: Any) -> dict[OwnerKey, list[PodInfo]]:
    found: dict[OwnerKey, list[PodInfo]] = {}
    for pod in pods:
        owner = pod.owner
        if owner is not None and pod.node_name and pod.phase not in TERMINATED_PHASES:
            listed = found.get(owner)
            if listed is None:
                found[owner] = [pod]
            else:
                listed.append(pod)
    return found


class _Owners:
    """One namespace's running Pods by controller (records, or a snapshot's rows), with the ReplicaSets
    named after a Deployment (`web-5d8f7c9b6d` for `web`) and each controller's place in the Pods' order.

    Both are found when first asked for, from the controllers sorted once: a namespace of a big cluster
    holds thousands of controllers, and indexing each by the name before its hash took 0.1 s of a run.
    """

    __slots__ = ("_position", "_sorted", "groups")

    def __init__(self, groups: dict[OwnerKey, Any]) -> None:
        self.groups = groups
        self._sorted: list[OwnerKey] | None = None
        self._position: dict[OwnerKey, int] | None = None

    def group(self, owner: OwnerKey) -> list[Any]:
        """The Pods of one controller (a JSON dump's index holds the record of a controller's only Pod alone)."""
        found = self.groups[owner]
        return found if found.__class__ is list else [found]

    def named_after(self, deployment: str) -> list[OwnerKey]:
        """The ReplicaSets named `deployment` and a dash-free suffix (the pod-template hash), as the
        Deployment controller names them; found by bisection in the sorted controllers."""
        if self._sorted is None:
            self._sorted = sorted(self.groups)
        prefix = owner_key("ReplicaSet", deployment) + "-"
        found = []
        for owner in islice(self._sorted, bisect_left(self._sorted, prefix), None):
            if not owner.startswith(prefix):
                break
            if "-" not in owner[len(prefix) :]:
                found.append(owner)
        return found

    def in_order(self, owners: set[OwnerKey]) -> list[OwnerKey]:
        """Some of the controllers, in the order of their Pods (the order is indexed when first needed)."""
        if len(owners) < 2:
            return list(owners)
        if self._position is None:
            self._position = {owner: index for index, owner in enumerate(self.groups)}
        return sorted(owners, key=self._position.__getitem__)


class NodeShapes:
    """The nodes of a state as the scheduler's filters that read a node alone see them
    (scheduling.node_filter_rejection): cordoned or not, the taints, and the values of the labels a
    spec's selector and affinity read (scheduling.node_filter_labels). Nodes alike for one set of
    label keys are grouped (by their places in `nodes`), and each group is weighed once: the 5,000
    nodes of a big cluster fall into a few dozen groups. Built once per state and set of keys."""

    __slots__ = ("_bases", "_columns", "_groups", "nodes")

    def __init__(self, nodes: list[NodeInfo]) -> None:
        self.nodes = nodes
        self._bases = [(node.unschedulable, repr(node.taints) if node.taints else "") for node in nodes]
        self._columns: dict[Any, list[str | None]] = {}  # label key -> its value on each node
        self._groups: dict[tuple[Any, ...], list[list[int]]] = {}

    def groups(self, keys: tuple[Any, ...]) -> list[list[int]]:
        """The places of the nodes alike for these label keys, by group, each in the nodes' order."""
        found = self._groups.get(keys)
        if found is None:
            missing = [key for key in dict.fromkeys(keys) if key not in self._columns]
            if missing:  # read together: one pass over the nodes' saved labels
                self._columns.update(zip(missing, SavedLabels.columns(self.nodes, missing), strict=True))
            grouped: dict[tuple[Any, ...], list[int]] = {}
            columns = [self._columns[key] for key in keys]
            for index, shape in enumerate(zip(self._bases, *columns, strict=True)):
                listed = grouped.get(shape)
                if listed is None:
                    grouped[shape] = [index]
                else:
                    listed.append(index)
            found = self._groups[keys] = list(grouped.values())
        return found
