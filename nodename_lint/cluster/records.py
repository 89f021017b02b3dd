"""What the cluster rules read from the cluster's Node and Pod objects: plain records.

They sit below both the cluster state (which indexes them) and the scheduling predicates (which
compare a Pod with them), so neither needs the other to describe a node.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

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

    @property
    def spec(self) -> dict[str, Any]:
        if self.loaded_spec.__class__ is not dict:
            import msgspec  # startup: only a state from a JSON dump holds structs

            self.loaded_spec = msgspec.to_builtins(self.loaded_spec)
        return self.loaded_spec

    @property
    def is_terminated(self) -> bool:
        return self.phase in TERMINATED_PHASES


PodRow = tuple[str, str, str | None, str | None]  # namespace, name, node, phase


class PodTable(Sequence[PodInfo]):
    """Pods known by namespace, name, node and phase only (a snapshot's Pod table), read as PodInfo.

    A PodInfo is built when a Pod is read, not for all of them up front: a snapshot of 150,000
    Pods is decoded into rows in C, and building every record took as long again, for the few
    Pods a run looks up by name.
    """

    __slots__ = ("rows",)

    def __init__(self, rows: list[PodRow]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> PodInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[PodInfo]: ...

    def __getitem__(self, index: int | slice) -> PodInfo | list[PodInfo]:
        if isinstance(index, slice):
            return [PodInfo(*row) for row in self.rows[index]]
        return PodInfo(*self.rows[index])

    def __iter__(self) -> Iterator[PodInfo]:
        return (PodInfo(*row) for row in self.rows)


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
