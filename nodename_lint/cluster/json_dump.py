"""The fast path for the commonest big cluster state: a kubectl JSON List (`kubectl get ... -A -o json`).

msgspec decodes the file into typed structs that hold only what the records read (metadata name,
namespace, labels and a Pod's annotations, left undecoded; of the spec the node, the containers'
resources and ports, overhead, host network and priority, a Node's taints; status phase, start
time, QoS class, allocatable, conditions and a Node's nodeInfo; a RuntimeClass's overhead and
scheduling; a PriorityClass's value, globalDefault and preemptionPolicy) and skips everything else
in C: managedFields, images, env, volumes, container statuses. The Pod records and the Pods-by-node
index are built in one loop, and a Pod's spec stays a struct until a rule reads it (most Pods of a
big cluster never are).

Anything unusual (another top-level shape, a field of the wrong type, bytes that are not UTF-8, an
item the records refuse) returns None, and the generic reader (from_file) reads the file again and
says exactly what is wrong and where: this path is only ever faster, never another judge.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from .objects import (
    Holder,
    StateError,
    node_from_object,
    priority_class_from_object,
    runtime_class_from_object,
    state_from_kinds,
)
from .records import TERMINATED_PHASES, OwnerKey, PodInfo, TemplateInfo
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
    # decoded in the loading loop (_REFERENCES): as structs here, every Pod's would be alive at once
    ownerReferences: msgspec.Raw = _NULL


class _RevisionLabel(msgspec.Struct, gc=False):
    revision: Any = msgspec.field(default=None, name=REVISION_LABEL)


_REVISION = msgspec.json.Decoder(_RevisionLabel)
_REFERENCES = msgspec.json.Decoder(list[_OwnerReference] | None)


class _Status(msgspec.Struct, gc=False):
    phase: Any = None
    allocatable: msgspec.Raw = _NULL  # Node
    conditions: msgspec.Raw = _NULL  # decoded for Nodes only: every Pod of a real cluster has some
    nodeInfo: msgspec.Raw = _NULL  # Node: decoded for its operatingSystem
    startTime: Any = None  # Pod: when it started, for preemption
    qosClass: Any = None  # Pod


class _Container(msgspec.Struct, gc=False, omit_defaults=True):
    """A container (or init container) as usage sums and host ports read it (scheduling.py)."""

    resources: Any = msgspec.UNSET
    ports: Any = msgspec.UNSET
    restartPolicy: Any = msgspec.UNSET


_Containers = list[_Container] | None | msgspec.UnsetType


class _SpecRequests(msgspec.Struct, gc=False, omit_defaults=True):
    """What pod_requests reads of a Pod's spec (not its node or host network), encoded as _Spec.requests_key:
    the containers whole (their ports too, which only split the key: the Pods of one workload share them)."""

    containers: Any = msgspec.UNSET
    initContainers: Any = msgspec.UNSET
    overhead: Any = msgspec.UNSET
    resources: Any = msgspec.UNSET


_ENCODE_KEY = msgspec.json.Encoder().encode


class _Spec(msgspec.Struct, gc=False, omit_defaults=True):
    """The spec of any kind, with the fields a Pod's or a Node's record reads: a Pod's spec is kept
    as it is until a rule reads it (records.PodInfo.spec makes it plain values); unset stays absent."""

    nodeName: Any = msgspec.UNSET
    containers: _Containers = msgspec.UNSET
    initContainers: _Containers = msgspec.UNSET
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
        (scheduling._running_pod_requests memoizes them by it)."""
        return _ENCODE_KEY(_SpecRequests(self.containers, self.initContainers, self.overhead, self.resources))

    def plain_container_requests(self) -> list[Any] | None:
        """records.plain_container_requests of this spec, read from the structs (no plain values made)."""
        unset = msgspec.UNSET
        if not (self.initContainers is unset and self.overhead is unset and self.resources is unset):
            return None
        return [
            resources.get("requests") if isinstance(resources := container.resources, dict) else None
            for container in (self.containers if isinstance(self.containers, list) else ())
        ]


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


def state_from_json_dump(data: bytes | str, source: str) -> ClusterState | None:
    """The ClusterState of a kubectl JSON List; None when the file is not one of the plain shape."""
    try:
        dump = _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):  # ValidationError too: the generic reader says what is wrong
        return None
    kind = dump.kind
    if not isinstance(kind, str) or not kind.endswith("List") or dump.items is None:
        return None
    implied = kind[: -len("List")]  # `kubectl get nodes -o json` of the API: a NodeList, items without kind
    read = _read_items(dump.items, implied)
    del dump
    if read is None:
        return None
    others = read.others
    try:
        nodes = [node_from_object(_as_object(item)) for item in others["Node"]]
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
            if metadata is None or owner_key(kind, str(metadata.name)) not in used.get(
                metadata.namespace or "default", ()
            ):
                continue  # a Deployment's old ReplicaSets: not read
            if kind == "ReplicaSet" and item.spec is not None and item.spec.template != _NULL:
                holder = _replicaset_holder(item, metadata, kind)  # its template's bytes, as they are
            else:
                holder = holder_from_object(_holder_object(kind, item), used)
            if holder is not None:
                holders.append(holder)
    state = state_from_kinds(source, nodes, namespaces, read.records, runtime_classes, priority_classes, holders)
    state.set_pod_indexes(read.by_node, read.by_namespace)
    return state


class _Read(NamedTuple):
    records: list[PodInfo]
    by_node: dict[str, list[PodInfo]]  # the non-terminated Pods
    by_namespace: dict[str, dict[str, PodInfo]]
    others: dict[str, list[_Item]]  # the items of the other kinds, by kind
    templates: dict[str, set[OwnerKey]]  # templates.templates_in_use of the Pods


def _read_items(items: list[_Item], implied: str) -> _Read | None:
    """The Pod records, indexed by node and by name, and the other kinds' items to read.

    Pods are read as objects.pod_from_object reads them, in the one loop over every item of the
    cluster; None at the first Pod it would refuse (the generic reader then names it).
    """
    records: list[PodInfo] = []
    by_node: dict[str, list[PodInfo]] = {}
    by_namespace: dict[str, dict[str, PodInfo]] = {}
    others: dict[str, list[_Item]] = {
        kind: [] for kind in ("Node", "Namespace", "RuntimeClass", "PriorityClass", *HOLDER_KINDS)
    }
    owners: dict[Any, OwnerKey] = {}  # the keys of the controllers, shared by their Pods
    replicasets: dict[Any, OwnerKey] = {}
    in_use: dict[str, set[OwnerKey]] = {}
    for item in items:
        kind = implied if item.kind is msgspec.UNSET else item.kind
        if kind != "Pod":
            of_kind = others.get(kind or "")
            if of_kind is not None:
                of_kind.append(item)
            continue
        metadata, spec, status = item.metadata, item.spec, item.status
        if metadata is None or spec is None:
            return None
        name, namespace = metadata.name, metadata.namespace or "default"
        if name.__class__ is not str or not name or namespace.__class__ is not str:
            return None
        node = spec.nodeName
        phase = status.phase if status is not None else None
        if node.__class__ is not str or not node:
            node = None
        if phase.__class__ is not str:
            phase = None
        record = PodInfo(namespace, name, node, phase, spec)
        references = _REFERENCES.decode(metadata.ownerReferences) if metadata.ownerReferences != _NULL else None
        if references:  # most Pods: one reference, to a ReplicaSet, whose key the other Pods of it share
            reference = references[0]
            if len(references) == 1 and reference.kind == "ReplicaSet" and reference.controller is True:
                owner = replicasets.get(reference.name)
                if owner is None and reference.name.__class__ is str and reference.name:
                    owner = replicasets[reference.name] = owner_key("ReplicaSet", reference.name)
                record.owner = record.template = owner
            else:
                _read_owner(record, metadata, references, owners)
            if record.template is not None:
                keys = in_use.get(namespace)
                if keys is None:
                    keys = in_use[namespace] = set()
                keys.add(record.template)
        if metadata.annotations is not _NULL:
            record.loaded_annotations = metadata.annotations
        if status is not None:
            record.start_time, record.qos_class = status.startTime, status.qosClass
        records.append(record)
        named = by_namespace.get(namespace)
        if named is None:
            by_namespace[namespace] = {name: record}
        else:
            named[name] = record
        if node is not None and phase not in TERMINATED_PHASES:
            found = by_node.get(node)
            if found is None:
                by_node[node] = [record]
            else:
                found.append(record)
    return _Read(records, by_node, by_namespace, others, in_use)


def _read_owner(
    record: PodInfo, metadata: _Metadata, references: list[_OwnerReference], keys: dict[Any, OwnerKey]
) -> None:
    """The Pod's controller and the holder of its template (templates.pod_owner, from the structs); the Pods
    of one controller share its key (`keys`)."""
    for reference in references:
        if reference.controller is True:
            kind, name = reference.kind, reference.name
            if kind.__class__ is not str or name.__class__ is not str or not kind or not name:
                return
            owner = keys.get((kind, name))
            if owner is None:
                owner = keys[(kind, name)] = owner_key(kind, name)
            record.owner = owner
            if kind == "ReplicaSet":
                record.template = owner
            elif kind in ("StatefulSet", "DaemonSet"):
                try:
                    revision = _REVISION.decode(metadata.labels).revision
                except msgspec.DecodeError:
                    revision = None
                record.template = template_key(owner, revision)
            return


def _replicaset_holder(item: _Item, metadata: _Metadata, kind: str) -> Holder | None:
    """A ReplicaSet's template kept as the file's bytes (records.TemplateInfo), without decoding it."""
    assert item.spec is not None
    try:
        references = _REFERENCES.decode(metadata.ownerReferences) or []
    except msgspec.DecodeError:
        return None
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
    try:  # valid JSON already; RecursionError: nested too deeply to read, so no template
        references, template, data = (
            msgspec.json.decode(raw) for raw in (metadata.ownerReferences, template, item.data)
        )
    except (msgspec.DecodeError, RecursionError):
        return {}
    return {
        "kind": kind,
        "metadata": {"name": metadata.name, "namespace": metadata.namespace, "ownerReferences": references},
        "spec": {"template": template},
        "data": data,
    }


def _as_object(item: _Item) -> dict[str, Any]:
    """A Node, RuntimeClass or PriorityClass item as the API object the generic record readers take (a few
    thousand)."""
    metadata = item.metadata or _Metadata()
    status = item.status or _Status()
    fields = {
        "metadata": {"name": metadata.name, "labels": msgspec.json.decode(metadata.labels)},
        "spec": None if item.spec is None else msgspec.to_builtins(item.spec),
        "status": {
            "allocatable": msgspec.json.decode(status.allocatable),
            "conditions": msgspec.json.decode(status.conditions),
            "nodeInfo": msgspec.json.decode(status.nodeInfo),
        },
        "overhead": item.overhead,
        "scheduling": item.scheduling,
        "value": item.value,
        "globalDefault": item.globalDefault,
        "preemptionPolicy": item.preemptionPolicy,
    }
    return {key: value for key, value in fields.items() if value is not None}
