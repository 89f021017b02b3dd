"""What the cluster rules read from the cluster's Node and Pod objects: plain records.

They sit below both the cluster state (which indexes them) and the scheduling predicates (which
compare a Pod with them), so neither needs the other to describe a node.
"""

from __future__ import annotations

import binascii
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn, Protocol

import msgspec
from msgspec.structs import astuple

from ..quantity import QuantityError, request_value
from ..sources import DamagedState

TERMINATED_PHASES = frozenset({"Succeeded", "Failed"})


def plain_json(raw: msgspec.Raw | bytes) -> Any:
    """JSON a dump's reading kept raw, as plain values, as the generic reader (from_file._parse) reads the
    file: msgspec, else json, which holds what msgspec refuses of valid JSON (1e999 as inf, a lone
    surrogate's escape). Bytes that are not UTF-8 are DamagedState, as the generic reader refuses them."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        pass
    except RecursionError:  # the decoding read it whole, less deep in the stack than a rule
        raise DamagedState("nested too deeply") from None
    import json  # startup: only a damaged or odd dump gets here

    try:
        return json.loads(bytes(raw))
    except UnicodeDecodeError:
        raise DamagedState("not UTF-8 or UTF-16 text") from None
    except json.JSONDecodeError as exc:  # control characters in a string, which the decoding let through raw
        raise DamagedState(f"not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise DamagedState("nested too deeply") from None


@dataclass(slots=True)
class NodeInfo:
    """What the rules read from a Node object."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)  # a dict, or a snapshot's SavedLabels
    taints: list[dict[str, Any]] = field(default_factory=list)
    unschedulable: bool = False
    allocatable: dict[str, Any] = field(default_factory=dict)  # raw quantities, as the API returns them
    conditions: dict[str, str] = field(default_factory=dict)  # condition type -> status
    operating_system: str = ""  # status.nodeInfo.operatingSystem: the kubelet's runtime.GOOS ("" unknown)
    _capacity: dict[str, int] | None = field(default=None, repr=False)

    @property
    def capacity(self) -> dict[str, int]:
        """Allocatable as the kubelet counts it: cpu in millicores, the rest in units.

        A quantity that does not parse counts as 0, as a Node object with it could not exist. Nodes
        with the same allocatable, written alike, share one capacity (read-only): a cluster's 5,000
        nodes come in a few shapes, and no-node-fits parsed each node's again.
        """
        if self._capacity is None:
            allocatable = self.allocatable
            key = tuple(allocatable.items()) if all(raw.__class__ is str for raw in allocatable.values()) else None
            parsed = None if key is None else _CAPACITIES.get(key)
            if parsed is None:
                parsed = self._parse_each(allocatable)
                if key is not None and len(_CAPACITIES) < _CAPACITIES_KEPT:
                    _CAPACITIES[key] = parsed
            self._capacity = parsed
        return self._capacity

    @staticmethod
    def _parse_each(allocatable: dict[str, Any]) -> dict[str, int]:
        parsed: dict[str, int] = {}
        for resource, raw in allocatable.items():
            try:
                parsed[resource] = request_value(resource, raw)
            except QuantityError:
                parsed[resource] = 0
        return parsed


class SavedLabels(Mapping[str, str]):
    """A node's labels as a snapshot saves them (a JSON object of strings), decoded when first read.

    The labels of every node of a big cluster took half of a snapshot's decoding (5,000 nodes of 47
    labels: 55 ms of 110), for a run that reads them whole on the few nodes a Pod is pinned to or a
    filter weighs; NodeShapes reads a few labels of every node (`columns`), which decodes those labels alone
    (7 ms for 5,000 nodes). `refuse(node, exc)` raises the file's error when the bytes are not such an
    object.
    """

    __slots__ = ("_decoded", "_node", "_raw", "_refuse")

    def __init__(self, raw: msgspec.Raw, node: str, refuse: Callable[[str, Exception], NoReturn]) -> None:
        self._raw = raw
        self._node = node
        self._refuse = refuse
        self._decoded: dict[str, str] | None = None

    def _labels(self) -> dict[str, str]:
        if self._decoded is None:
            try:
                self._decoded = LABELS.decode(self._raw) or {}
            except (msgspec.DecodeError, RecursionError) as exc:
                self._refuse(self._node, exc)
        return self._decoded

    @staticmethod
    def columns(nodes: Sequence[NodeInfo], keys: Sequence[Any]) -> list[list[str | None]]:
        """Some labels' values on each node, a list for each key (None where a node has none): a snapshot's
        labels not read whole yet are decoded for those labels alone, all of them in one loop over the nodes
        (NodeShapes reads a few labels of every node; a pass for each took a third more on `labels`)."""
        plain = list(dict.fromkeys(key for key in keys if key.__class__ is str and not _escaped_key(key)))
        found = {key: [node.labels.get(key) for node in nodes] for key in keys if key not in plain}
        if plain:
            decoder = _SOME_LABELS.get(tuple(plain))
            if decoder is None:
                fields = [(f"label{index}", str | None, None) for index in range(len(plain))]
                rename = {f"label{index}": key for index, key in enumerate(plain)}
                decoder = msgspec.json.Decoder(msgspec.defstruct("SomeLabels", fields, rename=rename, gc=False) | None)
                if len(_SOME_LABELS) < _SOME_LABELS_KEPT:  # the keys come from the manifests: a bounded cache
                    _SOME_LABELS[tuple(plain)] = decoder
            decode, absent = decoder.decode, (None,) * len(plain)
            rows: list[tuple[str | None, ...]] = []
            for node in nodes:
                labels = node.labels
                if labels.__class__ is SavedLabels and labels._decoded is None:
                    try:
                        values = decode(labels._raw)
                    except (msgspec.DecodeError, RecursionError):  # the whole decoding says what is wrong
                        rows.append(tuple(labels.get(key) for key in plain))
                        continue
                    rows.append(absent if values is None else astuple(values))
                else:
                    rows.append(tuple(labels.get(key) for key in plain))
            for key, column in zip(plain, zip(*rows, strict=True) if rows else [()] * len(plain), strict=True):
                found[key] = list(column)
        return [found[key] for key in keys]

    def __getitem__(self, key: str) -> str:
        return self._labels()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._labels().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._labels()

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels())

    def __len__(self) -> int:
        return len(self._labels())

    def __repr__(self) -> str:
        return repr(self._labels())


LABELS = msgspec.json.Decoder(dict[str, str] | None)  # a node's labels as the API and a snapshot hold them
_SOME_LABELS: dict[tuple[str, ...], msgspec.json.Decoder[Any]] = {}  # SavedLabels.columns' decoders, by keys
_SOME_LABELS_KEPT = 1_000


def _escaped_key(key: str) -> bool:
    """A key no struct field can be renamed to: one JSON writes with an escape."""
    return any(char in '\\"' or char < " " for char in key)


# NodeInfo.capacity by the allocatable's items, when they are all strings (1 and 1.0 would make one key)
_CAPACITIES: dict[tuple[tuple[str, str], ...], dict[str, int]] = {}
_CAPACITIES_KEPT = 10_000


class PodInfo(msgspec.Struct, gc=False):
    """A Pod already in the cluster: where it runs, what it requests, and which controller runs it.

    A msgspec Struct, not a dataclass: a JSON dump makes one for each of 150,000 Pods, and the Struct's
    constructor (in C) took a third of the dataclass's (0.06 s against 0.19 s). Not tracked by the
    cyclic GC: a record refers to no record.
    """

    namespace: str
    name: str
    node_name: str | None
    phase: str | None
    # the spec as loaded: plain values, or the typed structs of a kubectl JSON dump (json_dump), which
    # become plain values when first read: most Pods of a big cluster are never read
    loaded_spec: Any = msgspec.field(default_factory=dict)
    owner: OwnerKey | None = None  # "Kind/name" of its controller ownerReference (templates.owner_key)
    template: OwnerKey | None = None  # the object holding the Pod template it was made from (templates.template_key)
    requests: dict[str, int] | None = None  # its effective requests, when the spec is not held (a snapshot)
    # what priority and preemption read besides the spec (preemption.running_pod): the annotations as
    # loaded (a dump's raw JSON, decoded when read), status.startTime and status.qosClass
    loaded_annotations: Any = None
    start_time: Any = None
    qos_class: Any = None

    @property
    def spec(self) -> dict[str, Any]:
        if self.loaded_spec.__class__ is not dict:  # a JSON dump's structs (json_dump._Spec)
            try:
                self.loaded_spec = self.loaded_spec.plain()
            except DamagedState as exc:
                raise DamagedState(f"the spec of Pod {self.namespace}/{self.name} is {exc}") from None
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


OwnerKey = str  # "ReplicaSet/web-5d8f7c9b6d": an object of one namespace by kind and name


class TemplateInfo:
    """A ReplicaSet's or ControllerRevision's Pod template, reduced to what a rollout prediction compares.

    `workload` is its controller ("Deployment/web"), `digest` the template with the API server's
    defaults taken out (templates.template_digest). A state read from the cluster or a dump holds the
    template as compact JSON until its digest is first asked for (`digest(compute)`): digesting the
    templates of 10,000 ReplicaSets costs seconds, and a run lints a few workloads; a snapshot holds
    the digest alone, never the template with its environment variables and images.
    """

    __slots__ = ("_digest", "_template", "workload")

    def __init__(self, workload: OwnerKey | None, digest: str | None = None, template: bytes | None = None) -> None:
        self.workload = workload
        self._digest = digest
        self._template = template

    def digest(self, compute: Callable[[bytes], str]) -> str:
        """The digest, computed from the template the first time (`compute`: templates.digest_of_json)."""
        if self._digest is None:
            self._digest = compute(self._template or b"null")
            self._template = None
        return self._digest

    def __repr__(self) -> str:
        return f"TemplateInfo({self.workload!r}, {self._digest!r}{', <template>' if self._template else ''})"


class PodRow(Protocol):
    """One Pod of a snapshot's table (snapshot.PodRow)."""

    node: str | None
    phase: str | None
    owner: OwnerKey | None
    template: OwnerKey | None
    requests: int | None  # an index into the snapshot's table of distinct requests


_SEARCHES_BEFORE_SET = 16  # PodTable._surely_absent
_FILTER_BITS_PER_NAME = 10  # a Bloom filter of 10 bits a name and 3 probes lets about 2 % of the misses through
_FILTER_PROBES = 3


def name_filter(names: Collection[str]) -> bytes:
    """A Bloom filter of `names` (a snapshot's `podNameFilters`): `filter_may_hold` is False for a name not
    among them, but for about one in fifty, and never for one among them."""
    bits = bytearray(filter_size(len(names)))
    for name in names:
        for position in _probes(name, len(bits) * 8):
            bits[position >> 3] |= 1 << (position & 7)
    return bytes(bits)


def filter_size(names: int) -> int:
    """The bytes of the filter of so many names."""
    return max(8, -(-names * _FILTER_BITS_PER_NAME // 8))


def saved_filter_may_hold(
    filters: dict[str, str | bytes], namespace: str, name: str, names: Callable[[], int | None]
) -> bool:
    """Whether `name` may be among a namespace's names, by the filter a snapshot saved for it (`podNameFilters`,
    `workloadFilters`): True without one. The filter is made bytes when first read and kept in `filters`;
    it is not read (True) when it is not base64 or its size is not that of a filter of `names()` names
    (None: not known), so not the filter of those names (a file edited by hand)."""
    bits = filters.get(namespace)
    if bits is None:
        return True
    if isinstance(bits, str):
        bits = filters[namespace] = _decoded_filter(bits, names())
    return not bits or filter_may_hold(bits, name)


def _decoded_filter(text: str, names: int | None) -> bytes:
    """A filter as a snapshot saves it (base64) made bytes; empty unless it is that of `names` names."""
    if names is None:
        return b""
    try:
        bits = binascii.a2b_base64(text)
    except (binascii.Error, ValueError):
        return b""
    return bits if len(bits) == filter_size(names) else b""


def filter_may_hold(bits: bytes, name: str) -> bool:
    """Whether `name` may be among the names of the filter `bits` (False: surely not)."""
    return all(bits[position >> 3] & (1 << (position & 7)) for position in _probes(name, len(bits) * 8))


def _probes(name: str, size: int) -> list[int]:
    """The filter's bits for `name` (double hashing of two CRC-32s: the same on every machine and run)."""
    encoded = name.encode("utf-8", "surrogatepass")
    first, second = zlib.crc32(encoded), zlib.crc32(encoded, 0x9E3779B9) | 1
    return [(first + probe * second) % size for probe in range(_FILTER_PROBES)]


class PodTable(Collection[PodInfo]):
    """Pods known by namespace and name with their node, phase and controller (a snapshot's Pod table),
    read as PodInfo.

    Kept as the snapshot holds it, namespace -> name -> row, each namespace's Pods decoded when
    first read (`decode`): nodename-immutable looks a few Pods up by name, a rollout prediction
    reads the Pods of a few namespaces, and decoding 150,000 of them, or building or indexing
    their records, took as long as reading the rest of the file. `requests` is the snapshot's
    table of distinct requests the rows point into. `names` holds, for some namespaces, their Pods'
    names joined by line breaks (a snapshot's `podNames`): a name not among them is not in the table,
    so looking it up decodes nothing; a name among them is read from the decoded rows as before.
    `with_pods` (a snapshot's `podNamespaces`) lists the namespaces the table holds: a lookup anywhere
    else reads nothing of it.
    """

    __slots__ = (
        "_decode",
        "_filters",
        "_name_sets",
        "_names",
        "_namespaces",
        "_read",
        "_requests",
        "_searched",
        "_with_pods",
    )

    def __init__(
        self,
        namespaces: Callable[[], dict[str, Any]],
        decode: Callable[[str, Any], Mapping[str, PodRow]],
        requests: list[dict[str, int]] | None = None,
        names: dict[str, str] | None = None,
        with_pods: Collection[str] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> None:
        # namespace -> its Pods, as `namespaces()` gives them when the table is first read (a snapshot's member,
        # decoded then: most runs look Pods up by their saved names alone), each decoded when first read
        self._read = namespaces
        self._namespaces: dict[str, Any] | None = None
        self._decode = decode
        self._requests = requests or []
        self._names = names or {}
        self._with_pods = with_pods  # the namespaces `namespaces()` holds, when known before it is read
        # namespace -> name_filter of its saved names (base64, made bytes when read: saved_filter_may_hold)
        self._filters: dict[str, str | bytes] = dict(filters or {})
        self._name_sets: dict[str, frozenset[str]] = {}
        self._searched: dict[str, tuple[str, int]] = {}  # the names as "\nname\n" lines, and the searches so far

    def _tables(self) -> dict[str, Any]:
        if self._namespaces is None:
            self._namespaces = self._read()
        return self._namespaces

    def _pods_in(self, namespace: str) -> Mapping[str, PodRow]:
        if self._namespaces is None and self._with_pods is not None and namespace not in self._with_pods:
            return {}  # a namespace without Pods: the table is not read for it
        tables = self._tables()
        pods = tables.get(namespace)
        if pods is None:
            return {}
        if pods.__class__ is not dict:
            pods = tables[namespace] = self._decode(namespace, pods)
        return pods

    def info(self, namespace: str, name: str, row: PodRow) -> PodInfo:
        index = row.requests
        requests = self._requests[index] if index is not None and 0 <= index < len(self._requests) else None
        return PodInfo(namespace, name, row.node, row.phase, owner=row.owner, template=row.template, requests=requests)

    def lookup(self, namespace: str, name: str) -> PodInfo | None:
        if self._surely_absent(namespace, name):
            return None
        row = self._pods_in(namespace).get(name)
        return None if row is None else self.info(namespace, name, row)

    def _surely_absent(self, namespace: str, name: str) -> bool:
        """Whether the namespace's saved names show that no Pod has this name, without decoding its rows
        (a name with a line break, or a namespace without saved names, is looked up in the rows).

        The namespace's name filter (a snapshot's `podNameFilters`) answers most misses at once. The
        other lookups of a namespace search its names as saved, one C search each (20 µs for 2,500
        names); past _SEARCHES_BEFORE_SET the names are made a set: splitting and hashing them costs
        as much as seven searches, and most runs look a namespace up a few times.
        """
        tables = self._namespaces  # None: no namespace's Pods decoded yet
        if (tables is not None and tables.get(namespace).__class__ is dict) or "\n" in name:
            return False
        names = self._name_sets.get(namespace)
        if names is None:
            joined = self._names.get(namespace)
            if joined is None:
                return False
            if not self._may_hold(namespace, name):
                return True
            lines, searches = self._searched.get(namespace) or (f"\n{joined}\n", 0)
            if searches < _SEARCHES_BEFORE_SET:
                self._searched[namespace] = lines, searches + 1
                return f"\n{name}\n" not in lines
            del self._searched[namespace]
            names = self._name_sets[namespace] = frozenset(joined.split("\n"))
        return name not in names

    def _may_hold(self, namespace: str, name: str) -> bool:
        """False when the namespace's name filter shows the name is not among its saved names."""
        return saved_filter_may_hold(self._filters, namespace, name, lambda: self._names[namespace].count("\n") + 1)

    def in_namespace(self, namespace: str) -> Iterator[PodInfo]:
        """The Pods of one namespace (only that namespace is decoded)."""
        return (self.info(namespace, name, row) for name, row in self._pods_in(namespace).items())

    def controlled(self, namespace: str) -> dict[OwnerKey, list[tuple[str, PodRow]]]:
        """The bound, non-terminated Pods of one namespace by controller, as (name, row): no record is made."""
        found: dict[OwnerKey, list[tuple[str, PodRow]]] = {}
        for name, row in self._pods_in(namespace).items():
            owner = row.owner
            if owner is not None and row.node and row.phase not in TERMINATED_PHASES:
                listed = found.get(owner)
                if listed is None:
                    found[owner] = [(name, row)]
                else:
                    listed.append((name, row))
        return found

    def __len__(self) -> int:
        return sum(len(self._pods_in(namespace)) for namespace in self._tables())

    def __iter__(self) -> Iterator[PodInfo]:
        return (pod for namespace in list(self._tables()) for pod in self.in_namespace(namespace))

    def __contains__(self, pod: object) -> bool:
        """A Pod of this namespace and name, on the same node and in the same phase (the table holds no spec)."""
        if not isinstance(pod, PodInfo):
            return False
        row = self._pods_in(pod.namespace).get(pod.name)
        return row is not None and (row.node, row.phase) == (pod.node_name, pod.phase)


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


class RunningPod(NamedTuple):
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
