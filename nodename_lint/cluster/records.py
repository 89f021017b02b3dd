"""What the cluster rules read from the cluster's Node and Pod objects: plain records.

They sit below both the cluster state (which indexes them) and the scheduling predicates (which
compare a Pod with them), so neither needs the other to describe a node.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..quantity import QuantityError, request_value

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
    operating_system: str = ""  # status.nodeInfo.operatingSystem: the kubelet's runtime.GOOS ("" unknown)
    _capacity: dict[str, int] | None = field(default=None, repr=False)

    @property
    def capacity(self) -> dict[str, int]:
        """Allocatable as the kubelet counts it: cpu in millicores, the rest in units.

        A quantity that does not parse counts as 0, as a Node object with it could not exist.
        """
        if self._capacity is None:
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
    # the spec as loaded: plain values, or the typed structs of a kubectl JSON dump (json_dump), which
    # become plain values when first read: most Pods of a big cluster are never read
    loaded_spec: Any = field(default_factory=dict, repr=False)
    # what priority and preemption read besides the spec (preemption.running_pod): the annotations as
    # loaded (a dump's raw JSON, decoded when read), status.startTime and status.qosClass
    loaded_annotations: Any = field(default=None, repr=False)
    start_time: Any = field(default=None, repr=False)
    qos_class: Any = field(default=None, repr=False)

    @property
    def spec(self) -> dict[str, Any]:
        if self.loaded_spec.__class__ is not dict:
            import msgspec  # startup: only a state from a JSON dump holds structs

            self.loaded_spec = msgspec.to_builtins(self.loaded_spec)
        return self.loaded_spec

    @property
    def is_terminated(self) -> bool:
        return self.phase in TERMINATED_PHASES


def plain_container_requests(spec: dict[str, Any]) -> list[Any] | None:
    """Each container's `resources.requests` (anything, as written) when the spec has no init
    containers, overhead or pod-level resources: then these alone make the Pod's requests (a
    stored Pod's requests already include the limits that stood in for them). None otherwise."""
    if "initContainers" in spec or "overhead" in spec or "resources" in spec:
        return None
    containers = spec.get("containers")
    return [
        resources.get("requests") if isinstance(resources := container.get("resources"), dict) else None
        for container in (containers if isinstance(containers, list) else ())
        if isinstance(container, dict)
    ]


PodPlace = tuple[str | None, str | None]  # node, phase


class PodTable(Collection[PodInfo]):
    """Pods known by namespace, name, node and phase only (a snapshot's Pod table), read as PodInfo.

    Kept as the snapshot holds it, namespace -> name -> (node, phase), each namespace's Pods
    decoded when first read (`decode`): nodename-immutable looks a few Pods up by name, and
    decoding 150,000 of them, or building or indexing their records, took as long as reading
    the rest of the file.
    """

    __slots__ = ("_decode", "_namespaces")

    def __init__(self, namespaces: dict[str, Any], decode: Callable[[str, Any], dict[str, PodPlace]]) -> None:
        self._namespaces = namespaces
        self._decode = decode

    def _pods_in(self, namespace: str) -> dict[str, PodPlace]:
        pods = self._namespaces.get(namespace)
        if pods is None:
            return {}
        if pods.__class__ is not dict:
            pods = self._namespaces[namespace] = self._decode(namespace, pods)
        return pods

    def lookup(self, namespace: str, name: str) -> PodInfo | None:
        place = self._pods_in(namespace).get(name)
        return None if place is None else PodInfo(namespace, name, *place)

    def __len__(self) -> int:
        return sum(len(self._pods_in(namespace)) for namespace in self._namespaces)

    def __iter__(self) -> Iterator[PodInfo]:
        return (
            PodInfo(namespace, name, *place)
            for namespace in list(self._namespaces)
            for name, place in self._pods_in(namespace).items()
        )

    def __contains__(self, pod: object) -> bool:
        """A Pod of this namespace and name, on the same node and in the same phase (the table holds no spec)."""
        return isinstance(pod, PodInfo) and self._pods_in(pod.namespace).get(pod.name) == (pod.node_name, pod.phase)


@dataclass(slots=True)
class NodeUsage:
    """The non-terminated Pods on one node: how many, and their summed effective requests."""

    pods: int
    requested: dict[str, int]


@dataclass(frozen=True, slots=True)
class RuntimeClassInfo:
    """What the RuntimeClass admission plugin copies into a Pod that names the class."""

    overhead: dict[str, Any] | None = None  # overhead.podFixed: becomes spec.overhead
    node_selector: dict[str, str] = field(default_factory=dict)  # scheduling.nodeSelector: merged into the Pod's
    tolerations: list[dict[str, Any]] = field(default_factory=list)  # scheduling.tolerations: added to the Pod's


@dataclass(frozen=True, slots=True)
class PriorityClassInfo:
    """What the Priority admission plugin reads from a PriorityClass (scheduling.k8s.io/v1)."""

    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"  # the API's default for a class that sets none


@dataclass(frozen=True, slots=True)
class RunningPod:
    """A non-terminated Pod on a node as the kubelet's critical Pod admission and the scheduler's
    preemption weigh it (preemption.py): who it is, how important, and what evicting it frees."""

    key: str  # "namespace/name"
    priority: int  # spec.priority as the API stored it (PodPriority)
    critical: bool  # kubelettypes.IsCriticalPod: a static or mirror Pod, or priority >= SystemCriticalPriority
    qos: str  # BestEffort, Burstable or Guaranteed (GetPodQOS)
    start_time: str | None  # status.startTime (RFC 3339), None before it started
    requests: dict[str, int]  # PodRequests with overhead: what it adds to the node's requested resources
    # resource.GetResourceRequest of each resource, where it differs from `requests` (pod-level resources
    # hide the containers' other requests; overhead counts only on a resource the Pod requests)
    evictable: dict[str, int] | None = None
    ports: tuple[tuple[str, str, int], ...] = ()  # host ports (scheduling.HostPort)

    def freed(self, resource: str) -> int:
        """resource.GetResourceRequest: what evicting it frees for the kubelet's critical Pod admission."""
        if resource == "pods":
            return 1
        return (self.requests if self.evictable is None else self.evictable).get(resource, 0)
