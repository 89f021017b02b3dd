"""The fast path for the commonest big cluster state: a kubectl JSON List (`kubectl get ... -A -o json`).

msgspec decodes the file into typed structs that hold only what the records read (metadata name,
namespace, labels and a Pod's annotations, left undecoded; of the spec the node, the containers and
init containers, left undecoded until a node's usage or host ports read their resources and ports,
overhead, host network and priority, a Node's taints; status phase, start time, QoS class,
allocatable, conditions and a Node's nodeInfo; a RuntimeClass's overhead and scheduling; a
PriorityClass's value, globalDefault and preemptionPolicy) and skips everything else in C:
managedFields, volumes, container statuses. The Pod records and the Pods-by-node index are built in
one loop, and a Pod's spec stays a struct until a rule reads it (most Pods of a big cluster never are).

Anything unusual (another top-level shape, a field of the wrong type, bytes that are not UTF-8, an
item the records refuse) returns None, and the generic reader (from_file) reads the file again and
says exactly what is wrong and where: this path is only ever faster, never another judge.
"""

from __future__ import annotations

import os
import re
from collections.abc import Hashable
from mmap import mmap
from typing import Any, NamedTuple

import msgspec

from ..sources import DamagedState
from .objects import (
    Holder,
    StateError,
    is_text_taint,
    node_from_object,
    priority_class_from_object,
    runtime_class_from_object,
    state_from_kinds,
)
from .records import LABELS, TERMINATED_PHASES, NodeInfo, OwnerKey, PodInfo, TemplateInfo, plain_json
from .state import ClusterState
from .templates import HOLDER_KINDS, REVISION_LABEL, holder_from_object, owner_key, template_key

_NULL = msgspec.Raw(b"null")


class _OwnerReference(msgspec.Struct, gc=False):
    kind: Any = None
    name: Any = None
    controller: Any = None


class _Metadata(msgspec.Struct, gc=False):
    name: Any = None
    namespace: Any = None
    # decoded for Nodes, and for a StatefulSet's or DaemonSet's Pods its revision label only (_RevisionLabel):
    # every Pod of a real cluster has labels
    labels: msgspec.Raw = _NULL
    annotations: msgspec.Raw = _NULL  # a Pod's: decoded only when preemption weighs it (mirror Pods)
    ownerReferences: list[_OwnerReference] | None = None


class _RevisionLabel(msgspec.Struct, gc=False):
    revision: Any = msgspec.field(default=None, name=REVISION_LABEL)


_REVISION = msgspec.json.Decoder(_RevisionLabel)
_REPLICASET = owner_key("ReplicaSet", "")  # "ReplicaSet/": the start of a ReplicaSet's key


class _Status(msgspec.Struct, gc=False):
    phase: Any = None
    allocatable: msgspec.Raw = _NULL  # Node
    conditions: msgspec.Raw = _NULL  # decoded for Nodes only: every Pod of a real cluster has some
    nodeInfo: msgspec.Raw = _NULL  # Node: decoded for its operatingSystem
    startTime: Any = None  # Pod: when it started, for preemption
    qosClass: Any = None  # Pod


class _Container(msgspec.Struct, gc=False, omit_defaults=True):
    """A container (or init container) as usage sums and host ports read it (scheduling.py).

    Its resources and ports stay the file's bytes: a node's usage decodes the requests of its Pods
    alone (`_Spec.plain_container_requests`), and most nodes of a big cluster are never summed;
    building every Pod's dicts took a third of the decoding. Absent stays absent (the default is
    omitted when the spec is made plain values).
    """

    resources: msgspec.Raw = _NULL
    ports: msgspec.Raw = _NULL
    restartPolicy: Any = msgspec.UNSET


class _Resources(msgspec.Struct, gc=False):
    requests: Any = None


_RESOURCES = msgspec.json.Decoder(_Resources | None)
_CONTAINERS = msgspec.json.Decoder(list[_Container] | None)


def _listed(containers: msgspec.Raw) -> list[_Container] | None:
    """A spec's `containers` or `initContainers`, kept as the file's bytes, as structs: [] when absent or null,
    None when not a list of mappings (the spec is then read as plain values, as the generic reader reads it)."""
    if containers is _NULL:  # absent
        return []
    try:
        listed = _CONTAINERS.decode(containers)
    except (msgspec.DecodeError, RecursionError):  # ValidationError too: not a list of mappings
        return None
    return [] if listed is None else listed


class _SpecRequests(msgspec.Struct, gc=False, omit_defaults=True):
    """What pod_requests reads of a Pod's spec (not its node or host network), encoded as _Spec.requests_key:
    the containers whole, as the file has them."""

    containers: Any = msgspec.UNSET
    initContainers: Any = msgspec.UNSET
    overhead: Any = msgspec.UNSET
    resources: Any = msgspec.UNSET


_ENCODE_KEY = msgspec.json.Encoder().encode
_INIT_CONTAINERS, _SIDECAR, _NOT_SIDECAR = b"\1", b"\2", b"\3"  # the marks of _blocks_key


class _Spec(msgspec.Struct, gc=False, omit_defaults=True):
    """The spec of any kind, with the fields a Pod's or a Node's record reads: a Pod's spec is kept
    as it is until a rule reads it (records.PodInfo.spec makes it plain values); unset stays absent.

    A Pod's containers and init containers stay the file's bytes (absent: `_NULL` itself) until a node's
    usage or host ports read them (`_listed`): their structs, a list and two raw values for each container,
    took a tenth of a dump's decoding (0.06 s of `tainted`'s 0.68), for every Pod, and most Pods' usage is
    never summed.
    """

    nodeName: Any = msgspec.UNSET
    containers: msgspec.Raw = _NULL
    initContainers: msgspec.Raw = _NULL
    overhead: Any = msgspec.UNSET
    resources: Any = msgspec.UNSET
    hostNetwork: Any = msgspec.UNSET
    priority: Any = msgspec.UNSET  # a Pod's, for preemption
    priorityClassName: Any = msgspec.UNSET
    taints: Any = msgspec.UNSET  # Node
    unschedulable: Any = msgspec.UNSET  # Node
    template: msgspec.Raw = _NULL  # ReplicaSet: decoded only when one of the Pods runs it

    def requests_key(self) -> bytes:
        """What pod_requests reads of this spec, encoded: Pods with the same key have the same requests
        (`usage_key` of a spec with overhead or pod-level resources, or containers not a list of mappings)."""
        containers, init_containers = (
            msgspec.UNSET if raw is _NULL else raw for raw in (self.containers, self.initContainers)
        )
        return _ENCODE_KEY(_SpecRequests(containers, init_containers, self.overhead, self.resources))

    def _without_pod_level(self) -> bool:
        """No overhead and no pod-level resources: the containers alone make the Pod's requests."""
        return self.overhead is msgspec.UNSET and self.resources is msgspec.UNSET

    def usage_key(self) -> Hashable:
        """A key Pods with the same requests share (scheduling.running_pods_requests sums each distinct key
        once), made from what pod_requests reads: the bytes of each container's `resources` when they alone
        make the requests (most Pods of a cluster: one container's key is its bytes alone, no tuple to make
        and hash), what `resource_blocks` holds with init containers (as one bytes object, `_blocks_key`),
        else the fields encoded (`requests_key`, after None: overhead, pod-level resources, or containers not
        a list of mappings). The kinds never equal one another.
        """
        if self._without_pod_level() and (containers := _listed(self.containers)) is not None:
            if self.initContainers is _NULL:
                if len(containers) == 1:
                    return bytes(containers[0].resources)
                return tuple([bytes(container.resources) for container in containers])
            if (init_containers := _listed(self.initContainers)) is not None:
                return _blocks_key(containers, init_containers)
        return None, self.requests_key()

    @staticmethod
    def plain_container_requests(key: Hashable) -> list[Any] | None:
        """records.plain_container_requests of a spec, read from its `usage_key`, which holds each container's
        `resources` when they alone make the requests (None for any other key): a Pod whose requests are not
        known yet has its containers decoded once, for its key."""
        if isinstance(key, bytes):  # one container's, or `_blocks_key`'s (which holds a mark no raw value has)
            return None if _INIT_CONTAINERS in key else [_requests(key)]
        if not isinstance(key, tuple) or (key and key[0] is None):  # `requests_key`'s
            return None
        return [_requests(resources) for resources in key]

    @staticmethod
    def resource_blocks(key: Hashable) -> tuple[tuple[bytes, ...], tuple[tuple[bytes, bool], ...]] | None:
        """Each container's `resources` as the file's bytes, and each init container's with whether it is a
        sidecar (restartPolicy Always): all pod_requests reads of a spec with init containers and without
        overhead or pod-level resources, read back from its `usage_key` (`_blocks_key`); None for any other key."""
        if not isinstance(key, bytes) or _INIT_CONTAINERS not in key:
            return None
        parts = key.split(b"\0")
        mark = parts.index(_INIT_CONTAINERS)  # the first: a raw value is never a mark
        init_containers = parts[mark + 1 :]
        return tuple(parts[:mark]), tuple(
            [(init_containers[at], init_containers[at + 1] == _SIDECAR) for at in range(0, len(init_containers), 2)]
        )

    def may_have_host_ports(self) -> bool:
        """Whether a container or init container names a `hostPort` (in the file's bytes, or behind a
        JSON escape that may spell it): a spec without one holds no host port (scheduling.host_ports).
        Containers whose bytes hold neither are not decoded; containers not a list of mappings may."""
        for raw in (self.containers, self.initContainers):
            if raw is _NULL or (b"hostPort" not in (whole := bytes(raw)) and b"\\" not in whole):
                continue
            containers = _listed(raw)
            if containers is None:
                return True
            for container in containers:
                ports = container.ports
                if ports is not _NULL and (b"hostPort" in (found := bytes(ports)) or b"\\" in found):
                    return True
        return False

    def plain(self, strict: bool = False) -> dict[str, Any]:
        """The spec as plain values (records.PodInfo.spec), the bytes kept raw decoded too, each container
        with the fields its struct reads. Containers not a list of mappings stay whole, as the generic reader
        has them; STRICT raises msgspec.ValidationError for them instead (trimming then reads the page whole)."""
        spec = self
        for field in ("containers", "initContainers"):
            raw = getattr(self, field)
            if raw is _NULL:
                continue
            if strict:
                listed = _CONTAINERS.decode(raw)
            elif (listed := _listed(raw)) is None:
                continue
            if listed:  # else [] or null: the bytes say the same
                spec = msgspec.structs.replace(spec, **{field: listed})
        decoded = plain_json(_ENCODE_KEY(spec))
        assert isinstance(decoded, dict)  # a struct encodes as an object
        return decoded


def _blocks_key(containers: list[_Container], init_containers: list[_Container]) -> bytes:
    """`resource_blocks` as one bytes object: the containers' `resources`, a mark, then each init
    container's with a mark of whether it is a sidecar, joined by NUL. A raw value is valid JSON, which
    holds no byte below a blank, so the marks and joints cannot be read another way; and it is no plain
    key (those are a block's bytes alone, which holds no mark). Two tuples and a bytes copy of each block
    took twice as long for each Pod with init containers (a third of a real cluster's)."""
    parts: list[Any] = [container.resources for container in containers]
    parts.append(_INIT_CONTAINERS)
    for container in init_containers:
        parts.append(container.resources)
        parts.append(_SIDECAR if container.restartPolicy == "Always" else _NOT_SIDECAR)
    return b"\0".join(parts)


def _requests(resources: msgspec.Raw | bytes) -> Any:
    """A container's `resources.requests` from its bytes (None unless `resources` is a mapping)."""
    try:
        decoded = _RESOURCES.decode(resources)
    except (msgspec.DecodeError, RecursionError):  # not a mapping, a value msgspec does not hold (1e999)...
        plain = plain_json(resources)
        return plain.get("requests") if isinstance(plain, dict) else None
    return None if decoded is None else decoded.requests


class _Item(msgspec.Struct, gc=False):
    """One object of the List, whatever its kind: the fields the records of any kind read."""

    kind: str | msgspec.UnsetType | None = msgspec.UNSET  # unset: the List's kind names it
    metadata: _Metadata | None = None
    spec: _Spec | None = None
    status: _Status | None = None
    overhead: Any = None  # RuntimeClass
    scheduling: Any = None  # RuntimeClass
    data: msgspec.Raw = _NULL  # ControllerRevision: the same
    value: Any = None  # PriorityClass
    globalDefault: Any = None  # PriorityClass
    preemptionPolicy: Any = None  # PriorityClass


class _List(msgspec.Struct, gc=False):
    kind: Any = None
    items: list[_Item] | None = None


_DECODER = msgspec.json.Decoder(_List)


_ITEMS = msgspec.json.Decoder(list[_Item])


class _Head(msgspec.Struct):
    kind: Any = None
    items: Any = None


_HEAD = msgspec.json.Decoder(_Head)
_PIECE_BYTES = 1 << 20  # the items decoded at a time: a megabyte, about 500 Pods, fits the processor's caches
_HEAD_BYTES = 1 << 12  # how far "items" may start from the file's start, and how far its end from the file's end
_ITEMS_KEY = re.compile(rb'"items"\s*:\s*\[')
# Where an item of the List starts, as kubectl writes one: the comma before it, then `{"apiVersion": ..., "kind":`
# (kubectl sorts the keys; an ownerReference or managedFields entry has another key second). Found only where a
# piece should end; a cut inside an item makes a piece that does not decode, and the file is then decoded whole.
_NEXT_ITEM = re.compile(rb',\s*\{\s*"apiVersion"\s*:\s*"[^"\\]*"\s*,\s*"kind"\s*:')


def _read_dump(data: bytes | str | bytearray | mmap) -> _Read | None:
    """The records of a kubectl JSON List (None when it is not one of the plain shape): in pieces when the
    buffer can be written (`_pieces`), else decoded whole.

    In pieces, each piece's Pods are read while its objects are still in the processor's caches, and what
    the records do not keep is freed for the next piece: on a 150,000-Pod dump, a third fewer page faults and
    a tenth less CPU in decoding and reading than decoding it whole (docs/performance.md, "The seventh round").
    """
    if isinstance(data, (bytearray, mmap)) and not memoryview(data).readonly and (pieces := _pieces(data)):
        kind, bounds = pieces
        reader = _reader(kind)
        if reader is None:
            return None
        for start, end in bounds:
            items = _decoded_piece(data, start, end)
            if not items:  # not cut between items after all (or a piece of blanks): decoded whole below
                break
            if not reader.read(items):
                return None
        else:
            return reader.result()
    try:
        dump = _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):  # ValidationError too: the generic reader says what is wrong
        return None
    reader = _reader(dump.kind)
    if reader is None or dump.items is None or not reader.read(dump.items):
        return None
    reader.decoded = dump  # its items, freed with the state, not one by one (ClusterState.keep_decoded)
    return reader.result()


def _reader(kind: Any) -> _ItemReader | None:
    """The reader of a List's items (None unless KIND names a List: `kubectl get nodes -o json` of the API
    is a NodeList, whose items have no kind)."""
    if not isinstance(kind, str) or not kind.endswith("List"):
        return None
    return _ItemReader(kind[: -len("List")])


def _pieces(data: bytearray | mmap) -> tuple[Any, list[tuple[int, int]]] | None:
    """The List's kind and the bounds of its items' pieces, each from the byte before its first item (the
    array's `[` or a comma) to the one after its last (a comma or the array's `]`); None when the file is
    small or not laid out as kubectl writes a List (then it is decoded whole).

    Safe whatever the file holds: the file with its items replaced by a random word must decode with that word
    as its top-level `items` (so the pieces are that array's elements, not another's), and each piece
    must decode as an array of one item or more (`_decoded_piece`; an empty one would let `[ , {...}]`
    through): the items, one piece after another, are then exactly the array's (JSON's grammar has one
    reading), and the List is the file's.
    """
    size = len(data)
    if size < 2 * _PIECE_BYTES:
        return None
    key = _ITEMS_KEY.search(data, 0, _HEAD_BYTES)
    end = data.rfind(b"]", size - _HEAD_BYTES)
    if key is None or end < key.end():
        return None
    start = key.end() - 1
    word = os.urandom(16).hex()
    try:
        head = _HEAD.decode(data[: start + 1] + b'"' + word.encode() + b'"' + data[end:])
    except (msgspec.DecodeError, RecursionError):
        return None
    if head.items != [word]:
        return None
    bounds = []
    while (cut := _NEXT_ITEM.search(data, start + _PIECE_BYTES, end)) is not None:
        bounds.append((start, cut.start()))
        start = cut.start()
    bounds.append((start, end))
    return head.kind, bounds


def _decoded_piece(data: bytearray | mmap, start: int, end: int) -> list[_Item] | None:
    """The items between START and END decoded as an array (the bytes there made `[` and `]` for the
    decoding, then put back: the mapping is the file's own copy), or None when they are not one."""
    first, last = data[start], data[end]
    data[start], data[end] = ord("["), ord("]")
    try:
        return _ITEMS.decode(memoryview(data)[start : end + 1])
    except (msgspec.DecodeError, RecursionError):
        return None
    finally:
        data[start], data[end] = first, last


def state_from_json_dump(data: bytes | str | bytearray | mmap, source: str) -> ClusterState | None:
    """The ClusterState of a kubectl JSON List; None when the file is not one of the plain shape, or holds bytes
    the generic reader refuses (it then says where)."""
    try:
        return _dump_state(data, source)
    except DamagedState:  # found while loading, in bytes kept raw: not UTF-8 text
        return None


def _dump_state(data: bytes | str | bytearray | mmap, source: str) -> ClusterState | None:
    read = _read_dump(data)
    if read is None:
        return None
    others = read.others
    try:
        nodes = [_node_record(item) for item in others["Node"]]
        runtime_classes = [runtime_class_from_object(_as_object(item)) for item in others["RuntimeClass"]]
        priority_classes = [priority_class_from_object(_as_object(item)) for item in others["PriorityClass"]]
    except (StateError, RecursionError):  # a Node's raw labels or conditions nested too deeply
        return None
    namespaces: list[str] = []
    for item in others["Namespace"]:
        name = item.metadata.name if item.metadata else None
        if not isinstance(name, str) or not name:
            return None
        namespaces.append(name)
    holders: list[Holder] = []
    used = read.templates
    for kind in HOLDER_KINDS:
        for item in others[kind]:
            metadata = item.metadata
            if metadata is None or metadata.name.__class__ is not str or not metadata.name:
                continue  # as holder_from_object skips it
            namespace = metadata.namespace or "default"
            if namespace.__class__ is not str or owner_key(kind, metadata.name) not in used.get(namespace, ()):
                continue  # a Deployment's old ReplicaSets: not read (a namespace not a string: as holder_from_object)
            if kind == "ReplicaSet" and item.spec is not None and item.spec.template != _NULL:
                holder = _replicaset_holder(item, metadata, kind)  # its template's bytes, as they are
            else:
                holder = holder_from_object(_holder_object(kind, item), used)
            if holder is not None:
                holders.append(holder)
    state = state_from_kinds(source, nodes, namespaces, read.records, runtime_classes, priority_classes, holders)
    state.set_pod_indexes(read.by_node, read.by_namespace, read.by_owner)
    state.keep_decoded(read.decoded)
    return state


class _Read(NamedTuple):
    records: list[PodInfo]
    by_node: dict[str, list[PodInfo]]  # the non-terminated Pods
    by_namespace: dict[str, dict[str, PodInfo]]
    # the bound non-terminated Pods by namespace and controller (None: the state groups them from by_namespace);
    # a controller of one Pod holds it alone, not in a list (ClusterState.set_pod_indexes)
    by_owner: dict[str, dict[OwnerKey, PodInfo | list[PodInfo]]] | None
    others: dict[str, list[_Item]]  # the items of the other kinds, by kind
    templates: dict[str, set[OwnerKey]]  # templates.templates_in_use of the Pods (all of them when there are holders)
    decoded: Any  # what was decoded whole (_List), held by the state (ClusterState.keep_decoded); None in pieces


class _ItemReader:
    """The Pod records, indexed by node, by name and by controller, and the other kinds' items to read,
    from the List's items a piece at a time (`read`), then whole (`result`).

    Pods are read as objects.pod_from_object reads them, in the one loop over every item of the
    cluster; `read` is False at the first Pod it would refuse (the generic reader then names it).

    The loop touches 150,000 Pods' objects once each, so it does no more for each than it must: a
    controller of one Pod keeps the record alone (a list for each took a third of the loop on a cluster
    whose ReplicaSets run a Pod or two in each namespace), and a running Pod's ReplicaSet is added to
    the templates in use with the namespace's controllers at the end, not Pod by Pod.
    """

    def __init__(self, implied: str) -> None:
        self.implied = implied  # the kind of an item without one (a NodeList's)
        self.records: list[PodInfo] = []
        self.by_node: dict[str, list[PodInfo]] = {}
        self.by_namespace: dict[str, dict[str, PodInfo]] = {}
        self.by_owner: dict[str, dict[OwnerKey, PodInfo | list[PodInfo]]] = {}
        self.others: dict[str, list[_Item]] = {
            kind: [] for kind in ("Node", "Namespace", "RuntimeClass", "PriorityClass", *HOLDER_KINDS)
        }
        self.owners: dict[Any, OwnerKey] = {}  # the keys of the controllers, shared by their Pods
        self.replicasets: dict[str, OwnerKey] = {}
        self.in_use: dict[str, set[OwnerKey]] = {}
        self.decoded: Any = None

    def read(self, items: list[_Item]) -> bool:
        """Read ITEMS into the records and indexes; False at a Pod the records refuse."""
        implied, records, by_node, by_namespace = self.implied, self.records, self.by_node, self.by_namespace
        by_owner, others, owners, replicasets, in_use = (
            self.by_owner,
            self.others,
            self.owners,
            self.replicasets,
            self.in_use,
        )
        unset, null, terminated = msgspec.UNSET, _NULL, TERMINATED_PHASES
        for item in items:
            kind = implied if item.kind is unset else item.kind
            if kind != "Pod":
                of_kind = others.get(kind or "")
                if of_kind is not None:
                    of_kind.append(item)
                continue
            metadata, spec, status = item.metadata, item.spec, item.status
            if metadata is None or spec is None:
                return False
            name, namespace = metadata.name, metadata.namespace or "default"
            if name.__class__ is not str or not name or namespace.__class__ is not str:
                return False
            node = spec.nodeName
            if node.__class__ is not str or not node:
                node = None
            owner = template = None
            references = metadata.ownerReferences
            if references:  # most Pods: one reference, to a ReplicaSet, whose key the other Pods of it share
                reference = references[0]
                held = reference.name
                if len(references) == 1 and reference.kind == "ReplicaSet" and reference.controller is True:
                    if held.__class__ is str and held:
                        owner = replicasets.get(held)
                        if owner is None:
                            owner = replicasets[held] = owner_key("ReplicaSet", held)
                        template = owner
                else:
                    owner, template = _owner_of(metadata, references, owners)
            annotations = metadata.annotations
            if status is None:
                phase = start_time = qos_class = None
            else:
                phase, start_time, qos_class = status.phase, status.startTime, status.qosClass
                if phase.__class__ is not str:
                    phase = None
            record = PodInfo(
                namespace,
                name,
                node,
                phase,
                spec,
                owner,
                template,
                None,
                None if annotations is null else annotations,
                start_time,
                qos_class,
            )
            records.append(record)
            named = by_namespace.get(namespace)
            if named is None:
                by_namespace[namespace] = {name: record}
            else:
                named[name] = record
            if node is not None and phase not in terminated:
                found = by_node.get(node)
                if found is None:
                    by_node[node] = [record]
                else:
                    found.append(record)
                if owner is not None:
                    controlled = by_owner.get(namespace)
                    if controlled is None:
                        by_owner[namespace] = {owner: record}
                    elif (of_owner := controlled.get(owner)) is None:
                        controlled[owner] = record
                    elif of_owner.__class__ is list:
                        of_owner.append(record)
                    else:
                        controlled[owner] = [of_owner, record]  # type: ignore[list-item]
                    if template is owner:  # a ReplicaSet's: in use, with the namespace's controllers below
                        continue
            if template is not None:
                keys = in_use.get(namespace)
                if keys is None:
                    keys = in_use[namespace] = set()
                keys.add(template)
        return True

    def result(self) -> _Read:
        """The records and indexes of every item read."""
        records, by_namespace, by_owner, in_use = self.records, self.by_namespace, self.by_owner, self.in_use
        # the templates in use choose which ReplicaSets and ControllerRevisions to read: without any, the running
        # Pods' ReplicaSets are not added (a pass over every controller, 50 ms of a 150,000-Pod dump)
        holders = any(self.others[kind] for kind in HOLDER_KINDS)
        for namespace, controlled in by_owner.items() if holders else ():  # the running Pods' ReplicaSets
            keys = in_use.get(namespace)
            if keys is None:
                keys = in_use[namespace] = set()
            keys.update(key for key in controlled if key.startswith(_REPLICASET))
        if sum(map(len, by_namespace.values())) != len(records):  # a name twice in a namespace: the last one counts
            return _Read(records, self.by_node, by_namespace, None, self.others, in_use, self.decoded)
        return _Read(records, self.by_node, by_namespace, by_owner, self.others, in_use, self.decoded)


def _owner_of(
    metadata: _Metadata, references: list[_OwnerReference], keys: dict[Any, OwnerKey]
) -> tuple[OwnerKey | None, OwnerKey | None]:
    """(controller, holder of its template) of a Pod (templates.pod_owner, from the structs); the Pods of
    one controller share its key (`keys`)."""
    for reference in references:
        if reference.controller is True:
            kind, name = reference.kind, reference.name
            if kind.__class__ is not str or name.__class__ is not str or not kind or not name:
                return None, None
            owner = keys.get((kind, name))
            if owner is None:
                owner = keys[(kind, name)] = owner_key(kind, name)
            if kind == "ReplicaSet":
                return owner, owner
            if kind in ("StatefulSet", "DaemonSet"):
                try:
                    revision = _REVISION.decode(metadata.labels).revision
                except msgspec.DecodeError:  # not a mapping, or not read as the generic reader reads it
                    labels = plain_json(metadata.labels)
                    revision = labels.get(REVISION_LABEL) if isinstance(labels, dict) else None
                return owner, template_key(owner, revision)
            return owner, None
    return None, None


def _replicaset_holder(item: _Item, metadata: _Metadata, kind: str) -> Holder | None:
    """A ReplicaSet's template kept as the file's bytes (records.TemplateInfo), without decoding it."""
    assert item.spec is not None
    references = metadata.ownerReferences or []
    workload = next(
        (
            owner_key(reference.kind, reference.name)
            for reference in references
            if reference.controller is True and isinstance(reference.kind, str) and isinstance(reference.name, str)
        ),
        None,
    )
    template = bytes(item.spec.template)
    if not template.lstrip().startswith(b"{"):  # not a mapping: no template
        return None
    namespace = metadata.namespace or "default"
    return namespace, owner_key(kind, metadata.name), TemplateInfo(workload, template=template)


def _holder_object(kind: str, item: _Item) -> dict[str, Any]:
    """A ReplicaSet or ControllerRevision item as the API object holder_from_object reads."""
    metadata = item.metadata or _Metadata()
    template = item.spec.template if item.spec is not None else _NULL
    template, data = (plain_json(raw) for raw in (template, item.data))
    references = msgspec.to_builtins(metadata.ownerReferences)
    return {
        "kind": kind,
        "metadata": {"name": metadata.name, "namespace": metadata.namespace, "ownerReferences": references},
        "spec": {"template": template},
        "data": data,
    }


class _Condition(msgspec.Struct, gc=False):
    type: Any = None
    status: Any = None


class _SystemInfo(msgspec.Struct, gc=False):
    operatingSystem: Any = None


_CONDITIONS = msgspec.json.Decoder(list[_Condition] | None)
_SYSTEM_INFO = msgspec.json.Decoder(_SystemInfo | None)


def _conditions(raw: msgspec.Raw) -> Any:
    """A Node's conditions as objects.node_from_object reads them: the type and status of each (not the
    times, reasons and messages), or the value as it is when not a list of mappings."""
    try:
        conditions = _CONDITIONS.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # ValidationError too
        return plain_json(raw)
    return None if conditions is None else [{"type": found.type, "status": found.status} for found in conditions]


def _system_info(raw: msgspec.Raw) -> Any:
    """A Node's status.nodeInfo as objects.node_from_object reads it (its operatingSystem), or as it is when
    not a mapping."""
    try:
        info = _SYSTEM_INFO.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return plain_json(raw)
    return None if info is None else {"operatingSystem": info.operatingSystem}


_ALLOCATABLE = msgspec.json.Decoder(dict[str, Any] | None)


def _node_record(item: _Item) -> NodeInfo:
    """objects.node_from_object of a Node item, read from the structs when the Node is of the usual shape
    (labels of strings, conditions a list of mappings, a mapping of nodeInfo and of allocatable, taints of
    text: objects.is_text_taint), else through the generic reader's checks (`_as_object`), which also raise
    its errors: the generic conversion decoded each Node's labels into plain values and copied them once more
    (19 µs a Node, 10 here; 5,000 Nodes of 20 labels)."""
    metadata, spec, status = item.metadata, item.spec, item.status
    name = None if metadata is None else metadata.name
    taints = [] if spec is None or spec.taints is msgspec.UNSET or not spec.taints else spec.taints
    if name.__class__ is str and name and taints.__class__ is list and all(map(is_text_taint, taints)):
        assert metadata is not None  # for mypy: the name was read from it
        status = status or _Status()
        try:
            labels = LABELS.decode(metadata.labels)
            allocatable = _ALLOCATABLE.decode(status.allocatable)
            conditions = _CONDITIONS.decode(status.conditions)
            system = _SYSTEM_INFO.decode(status.nodeInfo)
        except (msgspec.DecodeError, RecursionError):  # ValidationError too: not the usual shape
            pass
        else:
            operating_system = None if system is None else system.operatingSystem
            return NodeInfo(
                name=name,
                labels=labels or {},
                taints=taints,
                unschedulable=spec is not None and spec.unschedulable is True,
                allocatable=allocatable or {},
                conditions={str(found.type): str(found.status) for found in conditions or () if found.type},
                operating_system=operating_system if operating_system.__class__ is str else "",
            )
    return node_from_object(_as_object(item))


def _as_object(item: _Item) -> dict[str, Any]:
    """A Node, RuntimeClass or PriorityClass item as the API object the generic record readers take (a few
    thousand), with what they read of a Node's conditions and nodeInfo alone."""
    metadata = item.metadata or _Metadata()
    status = item.status or _Status()
    fields = {
        "metadata": {"name": metadata.name, "labels": plain_json(metadata.labels)},
        "spec": None if item.spec is None else _node_spec(item.spec),
        "status": {
            "allocatable": plain_json(status.allocatable),
            "conditions": _conditions(status.conditions),
            "nodeInfo": _system_info(status.nodeInfo),
        },
        "overhead": item.overhead,
        "scheduling": item.scheduling,
        "value": item.value,
        "globalDefault": item.globalDefault,
        "preemptionPolicy": item.preemptionPolicy,
    }
    return {key: value for key, value in fields.items() if value is not None}


def _node_spec(spec: _Spec) -> dict[str, Any]:
    """What node_from_object reads of a spec (taints, unschedulable), as plain values: the whole spec made
    plain values (an encoding and a decoding) took 6 µs a Node."""
    return {
        field: value
        for field, value in (("taints", spec.taints), ("unschedulable", spec.unschedulable))
        if value is not msgspec.UNSET
    }
