"""What applying a workload manifest does to the Pods the workload already runs in the cluster.

Linting a Deployment against the cluster it runs in must not count its own running Pods against
it: applying the unchanged manifest creates no Pod at all, and a changed Pod template starts a
rollout whose new Pods meet the old ones only as far as the update strategy lets them. This
module finds the workload's own Pods (cluster/templates.py), tells whether the manifest's Pod
template is the one they run, and plays the controller's rollout against the cluster's room,
following the Kubernetes code:

- Deployment, RollingUpdate (pkg/controller/deployment/rolling.go): `reconcileNewReplicaSet`
  scales the new ReplicaSet up to `NewRSNewReplicas` (at most replicas + maxSurge Pods in all,
  maxSurge rounded up: `intstrutil.GetScaledValueFromIntOrPercent(..., true)`);
  `reconcileOldReplicaSets` scales old ones down only while `allPods - minAvailable -
  newRSUnavailable > 0` and `available > minAvailable`, minAvailable = replicas - maxUnavailable
  rounded down (`deploymentutil.ResolveFenceposts`, which makes maxUnavailable 1 when both round
  to 0). A new Pod that finds no room (Pending, or Failed on the kubelet and replaced) is never
  available, so with maxUnavailable 0 the old Pods stay and the rollout stalls.
- Deployment, Recreate (recreate.go `rolloutRecreate`): every old Pod is deleted, and gone,
  before the new ReplicaSet is scaled up.
- StatefulSet (pkg/controller/statefulset/stateful_set_control.go `updateStatefulSet`): missing
  ordinals are created first (OrderedReady: one at a time, each Running and Ready before the
  next), then Pods not at the update revision are deleted and recreated from the highest ordinal
  down to the partition, one at a time (`maxUnavailable` needs the MaxUnavailableStatefulSet
  feature gate, off by default in 1.35). A recreated Pod takes its old Pod's place: if it does
  not fit there, the replica stays down.
- DaemonSet (pkg/controller/daemon/update.go `rollingUpdate`): maxSurge (default 0) and
  maxUnavailable (default 1), both rounded up against the nodes that should run the Pod
  (`util.SurgeCount`, `util.UnavailableCount`). Without surge the old Pod is deleted first and the
  new one takes its place; with surge the new one starts beside the old one, which is deleted once
  the new one is available.

The scheduler is played with the filters of scheduling.py, trying nodes in the cluster state's
order (the rollout's outcome, not the node each Pod lands on, is what is predicted); a pinned
template meets the kubelet's admission on its node. Old Pods a ReplicaSet scales down are taken,
as `getPodsToDelete` ranks them, from the nodes with the most of the workload's Pods first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, NamedTuple

from .cluster.admitted import admitted_spec, kubelet_preemptor, pod_labels, runtime_overhead
from .cluster.records import NodeInfo, NodeUsage, OwnerKey, PodInfo, RunningPod
from .cluster.state import ClusterState, NodeShapes
from .cluster.templates import SAVE_TEMPLATES, TEMPLATE_HOLDERS, owner_key, split_key, template_digest
from .cluster.templates import digest as held_digest
from .model import Manifest
from .podspec import replica_count, required_node_names
from .preemption import KubeletAdmission, Preemptor, critical_admissions
from .scheduling import (
    AFFINITY_REASON,
    TAINT_REASON,
    UNSCHEDULABLE_REASON,
    HostPort,
    RequestError,
    add_into,
    host_ports,
    pod_requests,
    port_conflict,
    running_pods_requests,
    scheduler_rejection,
    shortages,
)

Outcome = Literal["nothing", "completes", "stalls"]
_STATIC_REASONS = frozenset({UNSCHEDULABLE_REASON, TAINT_REASON, AFFINITY_REASON})
_PERCENT = re.compile(r"([0-9]+)%")
_SIMULATED_PODS = 100_000  # a bound on the replicas played (the rules bound their loops the same way)


# --- the update strategy, as the controllers resolve it -------------------------------------------
def scaled_value(value: Any, total: int, round_up: bool) -> int | None:
    """intstrutil.GetScaledValueFromIntOrPercent: an int as is, "N%" of total rounded up or down; None when invalid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str):
        match = _PERCENT.fullmatch(value.strip())
        if match:
            percent = int(match.group(1))
            return -(-percent * total // 100) if round_up else percent * total // 100
    return None


class Strategy(NamedTuple):
    """An update strategy resolved for a number of Pods, with how messages explain it."""

    type: str  # RollingUpdate, Recreate, OnDelete
    surge: int = 0
    unavailable: int = 1
    partition: int = 0  # StatefulSet
    explained: str = ""


def _rolling(spec: Any, key: str) -> dict[str, Any]:
    strategy = spec.get(key) if isinstance(spec, dict) else None
    rolling = strategy.get("rollingUpdate") if isinstance(strategy, dict) else None
    return rolling if isinstance(rolling, dict) else {}


def _strategy_type(spec: Any, key: str) -> str:
    strategy = spec.get(key) if isinstance(spec, dict) else None
    kind = strategy.get("type") if isinstance(strategy, dict) else None
    return kind if isinstance(kind, str) and kind else "RollingUpdate"


def _fenceposts(
    rolling: dict[str, Any], defaults: tuple[Any, Any], total: int, *, round_unavailable_up: bool
) -> tuple[Any, Any, int, int, bool] | None:
    """(maxSurge and maxUnavailable as written, resolved, and whether both resolved to 0 so that
    maxUnavailable is taken as 1): `ResolveFenceposts` for a Deployment, `updatedDesiredNodeCounts` for a
    DaemonSet (which rounds maxUnavailable up). None for a value the API server refuses."""
    surge_value, unavailable_value = rolling.get("maxSurge", defaults[0]), rolling.get("maxUnavailable", defaults[1])
    surge = scaled_value(surge_value, total, True)
    unavailable = scaled_value(unavailable_value, total, round_unavailable_up)
    if surge is None or unavailable is None:
        return None
    forced = surge == 0 and unavailable == 0
    return surge_value, unavailable_value, surge, 1 if forced else unavailable, forced


def deployment_strategy(spec: Any, replicas: int) -> Strategy | None:
    """SetDefaults_Deployment (25% and 25%) and ResolveFenceposts; None for a value the API server refuses."""
    kind = _strategy_type(spec, "strategy")
    if kind == "Recreate":
        return Strategy("Recreate", explained="Recreate deletes every old Pod before it starts a new one")
    if kind != "RollingUpdate":
        return None
    resolved = _fenceposts(_rolling(spec, "strategy"), ("25%", "25%"), replicas, round_unavailable_up=False)
    if resolved is None:
        return None
    surge_value, unavailable_value, surge, unavailable, forced = resolved
    unavailable = min(unavailable, replicas)
    if surge:
        surge_text = (
            f"maxSurge {_resolved(surge_value, replicas, surge, 'up')}, so the Deployment controller starts "
            f"{'a new Pod' if surge == 1 else f'{surge} new Pods'} before it deletes an old one"
        )
    else:
        surge_text = "maxSurge 0 starts no new Pod before an old one is deleted"
    if forced:
        unavailable_text = "maxUnavailable rounds to 0 too, so the controller takes 1"
    elif unavailable:
        unavailable_text = (
            f"maxUnavailable {_resolved(unavailable_value, replicas, unavailable, 'down')} lets it delete "
            f"{_pods(unavailable, 'old Pod')} before new ones are available"
        )
    else:
        unavailable_text = (
            f"maxUnavailable {_resolved(unavailable_value, replicas, 0, 'down')}, so it deletes an old Pod only once "
            "a new one is available"
        )
    return Strategy("RollingUpdate", surge, unavailable, explained=f"{surge_text}, and {unavailable_text}")


def statefulset_strategy(spec: Any) -> Strategy | None:
    """SetDefaults_StatefulSet: RollingUpdate, partition 0. (podManagementPolicy Parallel creates the
    missing ordinals at once rather than in order, and updates still go one Pod at a time: a rollout
    that stalls stalls either way.)"""
    kind = _strategy_type(spec, "updateStrategy")
    if kind == "OnDelete":
        return Strategy("OnDelete", explained="OnDelete replaces a Pod only when you delete it")
    if kind != "RollingUpdate":
        return None
    partition = _rolling(spec, "updateStrategy").get("partition", 0)
    if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
        return None
    return Strategy(
        "RollingUpdate",
        partition=partition,
        explained=(
            "the StatefulSet controller deletes one Pod at a time, from the highest ordinal"
            + (f" down to the partition {partition}" if partition else "")
            + ", and recreates it from the new template in its place"
        ),
    )


def daemonset_strategy(spec: Any, nodes: int = 1) -> Strategy | None:
    """SetDefaults_DaemonSet (maxSurge 0, maxUnavailable 1), rounded up against the nodes that run it."""
    kind = _strategy_type(spec, "updateStrategy")
    if kind == "OnDelete":
        return Strategy("OnDelete", explained="OnDelete replaces the Pod only when you delete it")
    if kind != "RollingUpdate":
        return None
    resolved = _fenceposts(_rolling(spec, "updateStrategy"), (0, 1), nodes, round_unavailable_up=True)
    if resolved is None:
        return None
    surge_value, _, surge, unavailable, _ = resolved
    if surge:
        explained = (
            f"maxSurge {_resolved(surge_value, nodes, surge, 'up')} starts the new Pod beside the old one, which the "
            "DaemonSet controller deletes only once the new one is available"
        )
    else:
        explained = (
            "with maxSurge 0 the DaemonSet controller deletes the old Pod first and starts the new one in its place"
        )
    return Strategy("RollingUpdate", surge, unavailable, explained=explained)


def _resolved(value: Any, total: int, result: int, direction: str) -> str:
    """How a maxSurge or maxUnavailable value resolves: "25% of 1 replica rounds up to 1", or "2"."""
    if isinstance(value, str) and _PERCENT.fullmatch(value.strip()):
        return f"{value.strip()} of {_pods(total, 'replica')} rounds {direction} to {result}"
    return str(value)


def _pods(count: int, noun: str = "Pod") -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


# --- the cluster as a rollout changes it ----------------------------------------------------------
@dataclass(slots=True)
class OwnPod:
    """A Pod the workload runs now (its host ports leave with it: RolloutView drops them by its name)."""

    pod: PodInfo
    node: str
    current: bool | None  # runs the manifest's template; None: not known
    _requests: dict[str, int] | None = None

    @property
    def requests(self) -> dict[str, int]:
        """What its deletion frees, as its node's usage summed it (read only for the Pods a rollout deletes)."""
        if self._requests is None:
            pod = self.pod  # a JSON dump's spec is summed as loaded, not made plain values
            self._requests = pod.requests if pod.requests is not None else running_pods_requests((pod,))
        return self._requests


@dataclass(slots=True)
class RolloutView(ClusterState):
    """The cluster as the rollout leaves it: the workload's Pods it deleted taken away, its new Pods added.

    Rules read it as any state: usage() and ports_in_use() of a node are the base state's, changed.
    """

    base: ClusterState | None = None
    removed: dict[str, list[OwnPod]] = field(default_factory=dict)
    added: dict[str, int] = field(default_factory=dict)  # node -> new Pods running there
    # node -> other Pods the kubelet's critical Pod admission evicted for a new Pod (_Placer)
    evicted: dict[str, list[RunningPod]] = field(default_factory=dict)
    new_requests: dict[str, int] = field(default_factory=dict)
    new_ports: list[HostPort] = field(default_factory=list)
    new_pods: str = "a new Pod"  # how a holder of a port is named

    @classmethod
    def of(cls, base: ClusterState, requests: dict[str, int], ports: list[HostPort], label: str) -> RolloutView:
        return cls(
            source=base.source,
            nodes=base.nodes,
            namespaces=base.namespaces,
            pods=base.pods,
            runtime_classes=base.runtime_classes,
            priority_classes=base.priority_classes,
            unavailable=base.unavailable,
            pod_nodes=base.pod_nodes,
            templates=base.templates,
            base=base,
            new_requests=requests,
            new_ports=ports,
            new_pods=label,
        )

    def copy(self) -> RolloutView:
        assert self.base is not None
        view = RolloutView.of(self.base, self.new_requests, self.new_ports, self.new_pods)
        view.removed = {node: list(pods) for node, pods in self.removed.items()}
        view.added = dict(self.added)
        view.evicted = {node: list(pods) for node, pods in self.evicted.items()}
        return view

    def pods_known_on(self, node: str) -> bool:
        assert self.base is not None
        return self.base.pods_known_on(node)

    def _node_shapes(self) -> NodeShapes:
        assert self.base is not None
        return self.base._node_shapes()  # the same nodes

    def usage(self, node: str) -> NodeUsage | None:
        assert self.base is not None
        usage = self.base.usage(node)
        removed, added, evicted = self.removed.get(node, ()), self.added.get(node, 0), self.evicted.get(node, ())
        if not removed and not added and not evicted:
            return usage
        if usage is None and not added:
            return None
        requested = dict(usage.requested) if usage else {}
        if removed and evicted:  # an old Pod of the workload the kubelet evicted, then its controller deleted
            deleted = self._deleted(node)
            evicted = [pod for pod in evicted if pod.key not in deleted]
        for gone in (*(own.requests for own in removed), *(pod.requests for pod in evicted)):
            for resource, amount in gone.items():
                requested[resource] = requested.get(resource, 0) - amount
        for _ in range(added):
            add_into(requested, self.new_requests)
        return NodeUsage((usage.pods if usage else 0) - len(removed) - len(evicted) + added, requested)

    def ports_in_use(self, node: str) -> dict[HostPort, str] | None:
        assert self.base is not None
        in_use = self.base.ports_in_use(node)
        added, gone = self.added.get(node, 0), self._gone(node)
        if not gone and not added:
            return in_use
        ports = dict(in_use or {})
        if gone and in_use:  # a port the old Pod held may be held by another Pod too
            ports = self.base.ports_held(node, frozenset(gone))
        if added:
            ports.update((port, self.new_pods) for port in self.new_ports)
        return ports if in_use is not None or added else None

    def running_pods(self, node: str) -> list[RunningPod] | None:
        """The base state's Pods on `node` as preemption weighs them, without the ones the rollout deleted
        (its new Pods, of the preemptor's own priority, are never victims)."""
        assert self.base is not None
        running = self.base.running_pods(node)
        gone = self._gone(node)
        if running is None or not gone:
            return running
        return [pod for pod in running if pod.key not in gone]

    def _deleted(self, node: str) -> set[str]:
        """The keys ("namespace/name", RunningPod.key) of the workload's Pods on `node` the rollout deleted."""
        return {f"{own.pod.namespace}/{own.pod.name}" for own in self.removed.get(node, ())}

    def _gone(self, node: str) -> set[str]:
        """The keys of the Pods on `node` the rollout deleted or evicted."""
        return self._deleted(node).union(pod.key for pod in self.evicted.get(node, ()))

    def lowest_priority(self, node: str) -> int | None:
        if not self.removed.get(node) and not self.evicted.get(node):
            assert self.base is not None
            return self.base.lowest_priority(node)
        return min((pod.priority for pod in self.running_pods(node) or ()), default=None)

    def remove(self, own: OwnPod) -> None:
        self.removed.setdefault(own.node, []).append(own)
        self._no_fit.clear()
        self._preemption.clear()

    def add(self, node: str) -> None:
        self.added[node] = self.added.get(node, 0) + 1
        self._no_fit.clear()
        self._preemption.clear()

    def evict(self, node: str, pods: Iterable[RunningPod]) -> None:
        self.evicted.setdefault(node, []).extend(pods)
        self._no_fit.clear()
        self._preemption.clear()


class _Critical(NamedTuple):
    """A critical Pod as the kubelet's critical Pod admission weighs it (cluster.admitted)."""

    preemptor: Preemptor
    labels: dict[str, Any]
    overhead: dict[str, Any] | None


class _Placer:
    """Where the next new Pod goes in a view: the pinned node's kubelet, or the scheduler's filters."""

    def __init__(
        self, spec: dict[str, Any], requests: dict[str, int], pinned: str | None, critical: _Critical | None = None
    ) -> None:
        self.spec = spec
        self.requests = requests
        self.pinned = pinned
        self.critical = critical  # a critical pinned Pod: the kubelet may evict others to admit it
        self.admissions: list[KubeletAdmission] = []  # each new Pod admitted by evicting others
        self.wanted = host_ports(spec, default_from_host_network=True)
        self.ports = [port for _, port in self.wanted]
        self.static_out: set[str] = set()  # nodes no new Pod passes (cordon, taints, affinity)
        self.full: set[str] = set()  # nodes full until a Pod leaves them

    def freed(self, node: str) -> None:
        self.full.discard(node)

    def place(self, view: RolloutView) -> str | None:
        nodes = view.nodes or {}
        if self.pinned is not None:
            node = nodes.get(self.pinned)
            if node is None:
                return None
            short = shortages(self.requests, node, view.usage(node.name), kubelet=True)
            if short and not self._evicted_for(view, node):
                return None
            in_use = view.ports_in_use(node.name)
            return None if in_use and port_conflict(self.wanted, in_use) is not None else node.name
        names = required_node_names(self.spec)  # NodeAffinity's PreFilter
        for node in (nodes[name] for name in sorted(names) if name in nodes) if names is not None else nodes.values():
            if node.name in self.static_out or node.name in self.full:
                continue
            rejection = scheduler_rejection(
                self.spec,
                self.requests,
                node,
                partial(view.usage, node.name),
                self.wanted,
                partial(view.ports_in_use, node.name),
            )
            if rejection is None:
                return node.name
            (self.static_out if rejection.reasons[0] in _STATIC_REASONS else self.full).add(node.name)
        return None

    def _evicted_for(self, view: RolloutView, node: NodeInfo) -> bool:
        """The kubelet's critical Pod admission (preemption.critical_admissions, one Pod): a critical new Pod
        short of resources, and of nothing else (a host port, the node's affinity), is admitted when evicting
        Pods it may preempt frees enough; they leave the view."""
        critical = self.critical
        if critical is None:
            return False
        name = node.name
        admission = critical_admissions(
            self.spec,
            self.requests,
            node,
            view.usage(name),
            view.running_pods(name),
            view.ports_in_use(name),
            critical.preemptor,
            1,
            labels=critical.labels,
            static=False,
            overhead=critical.overhead,
        )[0]
        eviction = admission.eviction
        if not admission.admitted or eviction is None or not eviction.computed:
            return False  # rejected, or what evicting leaves for the next Pod is not known
        view.evict(name, eviction.evicts)
        self.admissions.append(admission)
        return True


# --- the prediction -------------------------------------------------------------------------------
@dataclass
class Rollout:
    """What applying the manifest does to the workload's running Pods, and the cluster rules then read.

    `view` is the cluster when the rollout stops (stalls), or without the workload's Pods (it
    replaces them all); `to_place` the new Pods still to be placed in it.
    """

    workload: str  # "Deployment web"
    replicas: int
    own: list[OwnPod]
    change: Literal["unchanged", "changed", "unknown"]
    unknown_why: str
    strategy: Strategy
    outcome: Outcome
    view: RolloutView
    to_place: int
    kept: list[OwnPod]  # the workload's Pods still running in `view`
    deleted_and_stuck: list[str] = field(default_factory=list)  # StatefulSet Pods deleted and not back
    strategy_fixes: list[str] = field(default_factory=list)  # strategy changes that let the rollout complete
    probable: list[str] = field(default_factory=list)  # Pods taken for the workload's by their ReplicaSet's name
    placed: int = 0  # new Pods that find room once the old ones are gone (when no strategy helps)
    old_counted: bool = False  # no strategy helps, and `view` holds the old Pods the stalled rollout keeps
    # a rollout that completes once the kubelet's critical Pod admission evicts other Pods for its new ones
    evicting: list[KubeletAdmission] = field(default_factory=list)

    @property
    def blocks(self) -> bool:
        return self.outcome == "stalls"

    def noun(self, count: int) -> str:
        """How messages name the Pods that do not fit."""
        if count == 1:
            return f"the new Pod of {self.workload}"
        return f"the {count} new Pods of {self.workload}"

    def explain(self, message: str) -> str:
        """A rule's message about the Pods that do not fit, told as what the apply does (in a rollout that
        completes, about the Pods the kubelet evicts on the way: `evicting`)."""
        if not self.blocks:
            return f"{self._head()}: {message}; the rollout then completes"
        return f"{self._head()}: {message}; {self._tail()}"

    def fix(self, rule_fix: str) -> str:
        if self.strategy_fixes:
            return " or ".join(self.strategy_fixes)
        return rule_fix

    def _head(self) -> str:
        if self.change == "unchanged" and all(own.current for own in self.own):
            return f"applying this manifest scales {self.workload} from {_pods(len(self.own))} to {self.replicas}" + (
                ", and the new ones do not all fit" if self.blocks else ""
            )
        verbs = {"Recreate": "replaces", "OnDelete": "is set to replace"}
        verb = verbs.get(self.strategy.type, "starts a rolling update of")
        what = "the Pods of " if self.strategy.type in ("Recreate", "OnDelete") else ""
        stalls = ", which stalls" if self.blocks else ""
        head = f"applying this changed Pod template {verb} {what}{self.workload}{stalls}"
        if self.change == "unchanged":
            that = " that stalls" if self.blocks else ""
            head = f"{self.workload} is in the middle of a rollout{that} (some of its Pods run an older template)"
        elif self.change == "unknown":
            head = (
                f"if this Pod template differs from the one {self.workload} runs (the cluster state cannot tell: "
                f"{self.unknown_why}), applying it {verb} {what}{self.workload}{stalls}"
            )
        return head

    def _tail(self) -> str:
        parts = []
        if self.deleted_and_stuck:
            parts.append(
                f"{self.strategy.explained}, so {' and '.join(self.deleted_and_stuck)} is deleted, its replacement "
                "finds no room, and that replica stays down while the update goes no further"
            )
        if self.strategy_fixes:
            names = ", ".join(f"{own.pod.name} (on {own.node})" for own in self.kept[:3])
            more = f" and {len(self.kept) - 3} more" if len(self.kept) > 3 else ""
            one = len(self.kept) == 1
            if self.kept:
                parts.append(
                    f"the old Pod{'' if one else 's'} {names}{more} keep{'s' if one else ''} running the old template "
                    f"and holding {'its' if one else 'their'} room, and the rollout never completes"
                )
            parts.append(self.strategy.explained)
        elif all(own.current for own in self.own):
            parts.append(f"the {_pods(len(self.own))} it runs now keep running and were counted")
        elif self.old_counted:
            running_old = [own for own in self.kept if not own.current]
            names = ", ".join(f"{own.pod.name} (on {own.node})" for own in running_old[:3])
            more = f" and {len(running_old) - 3} more" if len(running_old) > 3 else ""
            one = len(running_old) == 1
            how = "" if self.deleted_and_stuck else f"{self.strategy.explained}, so "
            parts.append(
                f"{how}the old Pod{'' if one else 's'} {names}{more} keep{'s' if one else ''} running and "
                f"{'is' if one else 'are'} counted; no update strategy helps: the new Pods do not fit even once the "
                "old ones are gone"
            )
        else:
            old = len([own for own in self.own if not own.current])
            parts.append(
                f"the new Pods do not fit even once the {_pods(old)} {self.workload} runs now "
                f"{'is' if old == 1 else 'are'} gone (not counted: the rollout replaces {'it' if old == 1 else 'them'})"
                + (f"; only {self.placed} of the {self.replicas} new Pods find room" if self.placed else "")
            )
        if self.change == "unknown":
            parts.append("if the template is unchanged, applying it creates no Pod")
        if self.probable:
            parts.append(
                f"{', '.join(self.probable[:3])}{' and more' if len(self.probable) > 3 else ''} were taken for "
                f"{self.workload}'s own Pods by the name of their ReplicaSet"
            )
        return "; ".join(parts)


def workload_rollout(obj: Manifest, cluster: ClusterState) -> Rollout | None:
    """What applying `obj` does to the Pods its workload already runs in `cluster` (computed once per object).

    None when `obj` is not a Deployment, StatefulSet or pinned DaemonSet, or the state shows none of its Pods.
    """
    found: Rollout | None = obj.memo("rollout", partial(_predict, cluster=cluster))
    return found


def _predict(obj: Manifest, cluster: ClusterState) -> Rollout | None:
    if obj.kind not in TEMPLATE_HOLDERS or obj.is_static_pod or cluster.pods is None or cluster.nodes is None:
        return None
    spec = obj.pod_spec
    pinned = spec.get("nodeName") if spec else None
    if not spec or (obj.kind == "DaemonSet" and not isinstance(pinned, str)):
        return None  # the rules check a DaemonSet only when its template pins a node
    own, probable, unknown_why = _own_pods(obj, cluster)
    if not own:
        return None
    overhead, _ = runtime_overhead(obj, cluster)
    try:
        requests = pod_requests(spec, overhead=overhead)
    except RequestError:
        return None
    workload = f"{obj.kind} {obj.name}"
    placer = _Placer(admitted_spec(obj, cluster), requests, pinned if isinstance(pinned, str) else None)
    label = f"a new Pod of {workload}"
    view = RolloutView.of(cluster, requests, placer.ports, label)
    replicas = _replicas(obj, len(own))
    strategy = _strategy(obj, replicas)
    if strategy is None:  # a strategy the API server refuses (validation): the apply changes nothing
        view = _without_own(cluster, own, requests, placer.ports, label)
        return Rollout(workload, replicas, own, "unknown", "", Strategy("invalid"), "nothing", view, replicas, [])
    change: Literal["unchanged", "changed", "unknown"]
    if any(o.current is None for o in own):
        change = "unknown"
    elif all(o.current for o in own):
        change = "unchanged"
    else:
        change = "changed"
    play = _PLAYS[obj.kind]
    outcome, final, to_place, kept, stuck = play(own, replicas, strategy, placer, view, obj.name)
    evicting: list[KubeletAdmission] = []
    preemptor = kubelet_preemptor(obj, cluster) if isinstance(pinned, str) and outcome == "stalls" else None
    if preemptor is not None and preemptor.critical:
        # a critical new Pod: the kubelet evicts Pods it may preempt to admit it. When that lets the rollout
        # complete, it is played so; when it stalls all the same, the rules weigh the evictions where it stops
        evicts = _Placer(placer.spec, requests, pinned, _Critical(preemptor, pod_labels(obj), overhead))
        again = play(own, replicas, strategy, evicts, RolloutView.of(cluster, requests, placer.ports, label), obj.name)
        if again[0] == "completes":
            outcome, final, to_place, kept, stuck = again
            evicting = evicts.admissions
    rollout = Rollout(
        workload, replicas, own, change, unknown_why, strategy, outcome, final, to_place, kept, stuck, probable=probable
    )
    if outcome == "completes" or outcome == "nothing":
        rollout.view = _without_own(cluster, own, requests, placer.ports, label)
        rollout.to_place = replicas
        rollout.evicting = evicting
        return rollout
    if any(not o.current for o in own):
        rollout.strategy_fixes = _strategy_fixes(obj, own, replicas, strategy, requests, cluster, pinned, label)
    if not rollout.strategy_fixes and any(not o.current for o in kept) and not final.added:
        # no strategy helps, and this one keeps old Pods running beside its first new Pod, refused: what that
        # Pod shows is said of the cluster as the rollout leaves it, the old Pods counted. (Once some new
        # Pods run, the count below, without the old Pods, says how many of them fit at all.)
        rollout.old_counted = True
    elif not rollout.strategy_fixes:  # no strategy helps: the new Pods do not fit where the old ones were
        current = [o for o in own if o.current]
        rollout.kept = current
        if isinstance(pinned, str):  # the rules count the new replicas on the node, the old ones gone
            rollout.view = _without_own(cluster, [o for o in own if not o.current], requests, placer.ports, label)
            rollout.to_place = max(replicas - len(current), 1)
        elif obj.kind == "Deployment":  # the scheduler places them one by one: the old Pods gone, the rest placed
            placer = _Placer(admitted_spec(obj, cluster), requests, None)
            view = RolloutView.of(cluster, requests, placer.ports, label)
            _, rollout.view, rollout.to_place, _, _ = _play_deployment(
                own, replicas, Strategy("Recreate"), placer, view, obj.name
            )
            rollout.placed = replicas - len(current) - rollout.to_place
        # a StatefulSet placed by the scheduler: the cluster where its recreated Pod found no node
    return rollout


def _without_own(
    cluster: ClusterState, own: list[OwnPod], requests: dict[str, int], ports: list[HostPort], label: str
) -> RolloutView:
    view = RolloutView.of(cluster, requests, ports, label)
    for pod in own:
        view.remove(pod)
    return view


def _replicas(obj: Manifest, running: int) -> int:
    """spec.replicas; without it, `kubectl apply` leaves the live count alone (an autoscaler's): the Pods running."""

    if obj.kind == "DaemonSet":
        return 1
    if obj.get(("spec", "replicas")) is None:
        return running
    return min(replica_count(obj), _SIMULATED_PODS)


def _strategy(obj: Manifest, replicas: int) -> Strategy | None:
    spec = obj.get(("spec",))
    if obj.kind == "Deployment":
        return deployment_strategy(spec, replicas)
    if obj.kind == "StatefulSet":
        return statefulset_strategy(spec)
    return daemonset_strategy(spec)


def _own_pods(obj: Manifest, cluster: ClusterState) -> tuple[list[OwnPod], list[str], str]:
    """The workload's running Pods, those taken for its own by a ReplicaSet's name only, and why the
    template some of them run is unknown ("" when it is known for all)."""
    namespace = obj.namespace or "default"
    manifest = ""
    own: list[OwnPod] = []
    probable: list[str] = []
    unknown: set[str] = set()
    current: dict[OwnerKey | None, bool | None] = {}  # template key -> whether it is the manifest's
    for pods, certain in cluster.workload_pods(namespace, owner_key(obj.kind, obj.name)):
        for pod in pods:
            key = pod.template
            if key not in current:
                template = cluster.template(namespace, key) if key is not None else None
                if template is None:
                    unknown.add(_missing_holder(key, cluster))
                    current[key] = None
                else:
                    if not manifest:
                        manifest = template_digest({"metadata": obj.pod_template_metadata, "spec": obj.pod_spec or {}})
                    current[key] = bool(manifest) and held_digest(template) == manifest
            if not certain:
                probable.append(pod.name)
            assert pod.node_name is not None  # workload_pods holds bound Pods only
            own.append(OwnPod(pod, pod.node_name, current[key]))
    return own, probable, "; ".join(sorted(unknown))


def _missing_holder(key: OwnerKey | None, cluster: ClusterState) -> str:
    """Why the template of a Pod's controller (`key`: its ReplicaSet or ControllerRevision) is not known."""
    if cluster.templates is None:
        if "templates" in cluster.unavailable:
            return cluster.why_missing("templates")
        return f"the cluster state {cluster.source} has no ReplicaSets or ControllerRevisions ({SAVE_TEMPLATES})"
    if key is None:
        return "a Pod of it has no controller-revision-hash label"
    kind, name = split_key(key)
    return f"{kind} {name} is not in the cluster state {cluster.source} ({SAVE_TEMPLATES})"


# --- the controllers, played ------------------------------------------------------------------------
Play = Callable[
    [list[OwnPod], int, Strategy, _Placer, RolloutView, str],
    tuple[Outcome, RolloutView, int, list[OwnPod], list[str]],
]


def _play_deployment(
    own: list[OwnPod], replicas: int, strategy: Strategy, placer: _Placer, view: RolloutView, name: str
) -> tuple[Outcome, RolloutView, int, list[OwnPod], list[str]]:
    """The Deployment controller and the ReplicaSet controller, step by step, until nothing moves."""
    old = [o for o in own if not o.current]
    running = len(own) - len(old)  # the new ReplicaSet's Pods already running
    if not old and running >= replicas:
        return "nothing", view, 0, own, []
    pending = 0
    placed_on: dict[str, int] = {}
    for _ in range(4 * (replicas + len(own)) + 8):
        moved = False
        wanted = replicas - running - pending
        if strategy.type == "Recreate" and old:  # scale every old Pod down, and wait until they are gone
            for pod in old:
                view.remove(pod)
                placer.freed(pod.node)
            old, moved = [], True
        elif wanted > 0:
            room = wanted
            if strategy.type == "RollingUpdate":  # NewRSNewReplicas: replicas + maxSurge Pods in all
                room = min(replicas + strategy.surge - len(old) - running - pending, wanted)
            if room > 0:
                pending += room
                moved = True
        while pending:
            node = placer.place(view)
            if node is None:
                break
            view.add(node)
            placed_on[node] = placed_on.get(node, 0) + 1
            pending -= 1
            running += 1
            moved = True
        if strategy.type == "RollingUpdate" and old:
            min_available = replicas - strategy.unavailable
            scaled_down = (len(old) + running + pending) - min_available - pending
            surplus = len(old) + running - min_available
            count = min(surplus, len(old)) if scaled_down > 0 else 0
            if count > 0:
                for pod in _deletion_order(old, own, placed_on)[:count]:
                    old.remove(pod)
                    view.remove(pod)
                    placer.freed(pod.node)
                moved = True
        if not moved:
            break
    if running >= replicas and not old:
        return "completes", view, 0, [o for o in own if o.current], []
    return "stalls", view, replicas - running, old + [o for o in own if o.current], []


def _deletion_order(old: list[OwnPod], own: list[OwnPod], placed_on: dict[str, int]) -> list[OwnPod]:
    """getPodsToDelete's ranking for running Pods: more of the workload's Pods on the same node first."""
    related: dict[str, int] = dict(placed_on)
    for pod in own:
        related[pod.node] = related.get(pod.node, 0) + 1
    return sorted(old, key=lambda pod: (-related.get(pod.node, 0), pod.pod.name))


_ORDINAL = re.compile(r"(0|[1-9][0-9]*)")


def _play_statefulset(
    own: list[OwnPod], replicas: int, strategy: Strategy, placer: _Placer, view: RolloutView, name: str
) -> tuple[Outcome, RolloutView, int, list[OwnPod], list[str]]:
    """updateStatefulSet: missing ordinals created first, then Pods of another revision recreated from the top."""
    by_ordinal: dict[int, OwnPod] = {}
    for pod in own:
        suffix = pod.pod.name[len(name) + 1 :] if pod.pod.name.startswith(f"{name}-") else ""
        if _ORDINAL.fullmatch(suffix):
            by_ordinal[int(suffix)] = pod
    missing = [ordinal for ordinal in range(replicas) if ordinal not in by_ordinal]
    stale = [
        ordinal
        for ordinal in sorted(by_ordinal, reverse=True)
        if ordinal < replicas and not by_ordinal[ordinal].current and ordinal >= strategy.partition
    ]
    if not missing and not stale:
        return "nothing", view, 0, own, []
    kept = list(own)
    for ordinal in missing:  # created in order (OrderedReady waits for each; Parallel: all at once)
        node = placer.place(view)
        if node is None:
            return "stalls", view, len(missing) - missing.index(ordinal), kept, []
        view.add(node)
    for ordinal in sorted(by_ordinal, reverse=True):  # condemned Pods beyond replicas are deleted
        if ordinal >= replicas:
            view.remove(by_ordinal[ordinal])
            placer.freed(by_ordinal[ordinal].node)
            kept.remove(by_ordinal[ordinal])
    for ordinal in stale:
        pod = by_ordinal[ordinal]
        view.remove(pod)
        placer.freed(pod.node)
        kept.remove(pod)
        node = placer.place(view)
        if node is None:
            return "stalls", view, 1, kept, [pod.pod.name]
        view.add(node)
    return "completes", view, 0, kept, []


def _play_daemonset(
    own: list[OwnPod], replicas: int, strategy: Strategy, placer: _Placer, view: RolloutView, name: str
) -> tuple[Outcome, RolloutView, int, list[OwnPod], list[str]]:
    """The pinned node's daemon Pod: replaced in place without surge, started beside the old one with it."""
    old = [o for o in own if not o.current]
    if not old:
        return "nothing", view, 0, own, []
    if not strategy.surge:  # the old Pod goes first (OnDelete: once you delete it)
        for pod in old:
            view.remove(pod)
            placer.freed(pod.node)
    node = placer.place(view)
    if node is None:
        return "stalls", view, 1, [] if not strategy.surge else old, []
    return "completes", view, 0, [], []


_PLAYS: dict[str, Play] = {
    "Deployment": _play_deployment,
    "StatefulSet": _play_statefulset,
    "DaemonSet": _play_daemonset,
}


def _strategy_fixes(
    obj: Manifest,
    own: list[OwnPod],
    replicas: int,
    strategy: Strategy,
    requests: dict[str, int],
    cluster: ClusterState,
    pinned: Any,
    label: str,
) -> list[str]:
    """The strategy changes that let this rollout complete."""
    if obj.kind == "StatefulSet":
        return []
    if obj.kind == "DaemonSet":
        candidates = [
            (
                Strategy("RollingUpdate", 0, 1),
                "set spec.updateStrategy.rollingUpdate.maxSurge: 0 (the default) and maxUnavailable: 1: the old Pod "
                "is deleted first and the new one takes its place",
            )
        ]
    else:
        candidates = [
            (
                Strategy("RollingUpdate", 0, 1),
                "set spec.strategy.rollingUpdate.maxSurge: 0 and maxUnavailable: 1 (an old Pod is deleted before each "
                "new one starts, one replica down at a time)",
            ),
            (
                Strategy("Recreate"),
                "set spec.strategy.type: Recreate (every old Pod is deleted before the new ones start: the workload is "
                "down meanwhile)",
            ),
        ]
    fixes = []
    spec = admitted_spec(obj, cluster)
    for candidate, text in candidates:
        if candidate.type == strategy.type and candidate.surge == strategy.surge:
            continue
        placer = _Placer(spec, requests, pinned if isinstance(pinned, str) else None)
        view = RolloutView.of(cluster, requests, placer.ports, label)
        outcome = _PLAYS[obj.kind](own, replicas, candidate, placer, view, obj.name)[0]
        if outcome != "stalls":
            fixes.append(text)
    return fixes
