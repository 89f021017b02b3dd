"""The cluster snapshot file: what the cluster rules read, saved once, loaded in a fraction of a dump's time.

`nodename-lint snapshot` (live) and `nodename-lint snapshot --cluster-state DUMP` write it;
`--cluster-state FILE` recognises it by its first key. A kubectl dump of 150,000 Pods holds every
Pod's spec so that the run can sum each node's requests; the snapshot holds the sums instead.
It is JSON, one record per line (a change to one node is a one-line diff), made only of the
cluster model (records.py, state.py), so a field added there travels without a change here:

    {"format": "nodename-lint.io/cluster-snapshot", "version": 4,
     "tail": [P, R],                          bytes from the line break before "pods", and before "running",
                                              to the end of the file (see `_tail_bounds`)
     "source": "context prod",
     "nodes": [NodeInfo, ...],               every public field of records.NodeInfo
     "usage": {"node": NodeUsage, ...},       every node whose Pods are known: Pod count, summed requests
     "ports": {"node": [["0.0.0.0", "TCP", 8080, "ns/pod"], ...]},   host ports in use, a row for each holder
     "runtimeClasses": {"name": RuntimeClassInfo, ...},
     "priorityClasses": {"name": PriorityClassInfo, ...},   or null when the source did not list them
     "namespaces": ["default", ...],
     "podRequests": [{"cpu": 500}, ...],      the distinct effective requests of those Pods
     "templates": {"namespace": {"ReplicaSet/web-5d8f7c9b6d": ["Deployment/web", "digest"], ...}, ...},
                                              the Pod templates those Pods run (records.TemplateInfo), or null
     "podNodes": null,                        or the nodes whose Pods are all known (a partial state)
     "unavailable": {"pods": "why", ...},     data the source could not give, and why
     "workloads": {"namespace": ["Deployment/web", ...], ...},   the workloads with a running Pod
                                              (ClusterState.running_workloads), or null with pods; a rollout
                                              prediction reads a namespace's Pods for those alone (files
                                              of earlier writers lack it, and every lookup reads the Pods)
     "workloadFilters": {"namespace": "base64", ...},   a Bloom filter of each namespace's workloads
                                              (records.name_filter): most workloads not there decode none
                                              of the namespace's list (optional, as "workloads")
     "podNames": {"namespace": "web-0\\nweb-1", ...},   the names of each namespace's Pods, joined by line
                                              breaks (none for a namespace with a name holding one): a
                                              lookup of a Pod by name that is not there decodes none of
                                              the namespace's rows (optional, as "workloads")
     "podNameFilters": {"namespace": "base64", ...},   a Bloom filter of each namespace's podNames
                                              (records.name_filter): most names not there need no search
     "podNamespaces": ["default", ...],      the namespaces "pods" holds (written with "tail")
     "pods": {"namespace": {"name": ["node", "phase"], ...}, ...},   every Pod (node and phase may be null);
                                              a controller's Pod adds its owner, the holder of its template
                                              and an index into podRequests: ["node", "Running",
                                              "ReplicaSet/web-5d8f7c9b6d", "ReplicaSet/web-5d8f7c9b6d", 0]
     "running": {"node": [[key, priority, critical, qos, startTime, requests, evictable, ports], ...]}}
                                              every node whose Pods are known: its Pods as preemption weighs
                                              them (records.RunningPod), in the state's order

`null` for nodes, namespaces or pods means "not known" (the rules needing it are skipped).
Another `version` is refused with a message saying how to write the file again (version 3 was written
by two lines of development, one with the preemption fields, one with the rollout fields: 4 holds both).
"""

from __future__ import annotations

import dataclasses
import json
import re
from binascii import b2a_base64
from collections.abc import Callable, Collection
from functools import cache, partial
from typing import TYPE_CHECKING, Any, NoReturn, get_type_hints

import msgspec
from msgspec.structs import astuple

from ..safe_text import json_escaped
from ..sources import UsageError
from .objects import is_text_taint
from .records import (
    NodeInfo,
    NodeUsage,
    OwnerKey,
    PodTable,
    PriorityClassInfo,
    RunningPod,
    RuntimeClassInfo,
    SavedLabels,
    TemplateInfo,
    name_filter,
    saved_filter_may_hold,
)
from .state import ClusterState
from .templates import digest

if TYPE_CHECKING:
    from mmap import mmap

    from ..scheduling import HostPort

FORMAT = "nodename-lint.io/cluster-snapshot"
VERSION = 4  # 4: 3's two kinds together; 3: PriorityClasses and each node's Pods for preemption, or a controller's
# Pods with owner, template and requests (2: Pods keyed by namespace and name)
_HEAD = re.compile(r'\A\s*\{\s*"format"\s*:\s*"' + re.escape(FORMAT) + '"')

PortRow = tuple[str, str, int, str]  # hostIP, protocol, hostPort (scheduling.HostPort), "namespace/name" of the Pod
# records.RunningPod as an array: key, priority, critical, qos, start_time, requests, evictable, ports
RunningRow = tuple[str, int, bool, str, str | None, dict[str, int], dict[str, int] | None, list[tuple[str, str, int]]]


class PodRow(msgspec.Struct, array_like=True, gc=False):
    """One Pod of the table: `[node, phase]`, and for a controller's Pod `owner`, `template` (OwnerKeys)
    and `requests` (an index into podRequests)."""

    node: str | None
    phase: str | None
    owner: OwnerKey | None = None
    template: OwnerKey | None = None
    requests: int | None = None


def _saved_node_type() -> Any:
    """A NodeInfo as a snapshot holds it, as a struct of the same public fields whose labels stay the file's
    bytes (records.SavedLabels): a field added to NodeInfo is read here too."""
    hints = get_type_hints(NodeInfo)
    every = dataclasses.fields(NodeInfo)
    public = [found for found in every if not found.name.startswith("_")]
    if list(every[: len(public)]) != public:  # load_snapshot makes each NodeInfo from the public fields in order
        raise TypeError("NodeInfo's cache fields must come after its public ones")
    fields: list[tuple[str, Any, Any]] = []
    for found in public:
        kind = msgspec.Raw if found.name == "labels" else hints[found.name]
        if found.name == "labels":
            default: Any = msgspec.Raw(b"null")
        elif found.default_factory is not dataclasses.MISSING:
            default = msgspec.field(default_factory=found.default_factory)
        else:
            default = found.default if found.default is not dataclasses.MISSING else msgspec.NODEFAULT
        fields.append((found.name, kind, default))
    return msgspec.defstruct("SavedNode", fields, gc=False)


_SavedNode = _saved_node_type()
_LABELS_FIELD = _SavedNode.__struct_fields__.index("labels")


class _Header(msgspec.Struct):
    format: str
    version: int


class _SnapshotHead(
    msgspec.Struct,
    rename={
        "pod_nodes": "podNodes",
        "runtime_classes": "runtimeClasses",
        "priority_classes": "priorityClasses",
        "pod_requests": "podRequests",
        "pod_names": "podNames",
        "pod_namespaces": "podNamespaces",
        "pod_name_filters": "podNameFilters",
        "workload_filters": "workloadFilters",
    },
):
    format: str
    version: int
    source: str
    nodes: list[_SavedNode] | None  # type: ignore[valid-type]
    usage: dict[str, NodeUsage]
    ports: dict[str, msgspec.Raw]  # node -> its list of PortRow, decoded when first read (`_node_ports`)
    namespaces: list[str] | None
    pod_requests: list[dict[str, int]]
    templates: dict[str, dict[OwnerKey, tuple[OwnerKey | None, str]]] | None
    pod_nodes: list[str] | None
    runtime_classes: dict[str, RuntimeClassInfo] | None
    priority_classes: dict[str, PriorityClassInfo] | None
    unavailable: dict[str, str]
    # namespace -> its running workloads, decoded when read; not written before rollout lookups used it
    workloads: dict[str, msgspec.Raw] | None = None
    # namespace -> records.name_filter of its workloads, in base64: most workloads not there decode no list
    workload_filters: dict[str, str] | None = None
    # namespace -> its Pods' names joined by line breaks; not written before lookups by name used it
    pod_names: dict[str, str] | None = None
    # the namespaces with Pods in the table: a lookup elsewhere decodes none of it; not written before `tail`
    pod_namespaces: list[str] | None = None
    # namespace -> records.name_filter of its podNames, in base64: most misses answered without a search
    pod_name_filters: dict[str, str] | None = None


class _Snapshot(_SnapshotHead, kw_only=True):
    """The whole file, decoded at once when it has no `tail` (a file of an earlier writer, or one edited)."""

    pods: dict[str, msgspec.Raw] | None  # namespace -> its Pods, decoded when read (records.PodTable)
    running: dict[str, msgspec.Raw]  # node -> its RunningRows, decoded when read


# The members a writer puts last, each value found from the end of the file by the header's `tail` and decoded
# when first read (`_tail_bounds`); each starts a line, and a raw line break is never inside a JSON string
_PODS_KEY = b'\n"pods":'
_RUNNING_KEY = b'\n"running":'
_TAIL = re.compile(rb'\{"format":"[^"\\\n]{1,100}",\n"version":[0-9]{1,9},\n"tail":\[([0-9]{1,12}),([0-9]{1,12})\],\n')
_PODS = msgspec.json.Decoder(dict[str, msgspec.Raw] | None)
_RUNNING_PODS = msgspec.json.Decoder(dict[str, msgspec.Raw])


def is_snapshot(content: str | bytes | mmap) -> bool:
    """Whether a cluster state file is a snapshot (its first key names the format)."""
    head = content[:200]
    return _HEAD.match(head if isinstance(head, str) else head.decode("utf-8", "replace")) is not None


def _public(record: Any) -> dict[str, Any]:
    """A model dataclass as its public fields (caches such as NodeInfo._capacity are not data); labels read
    from a snapshot as the mapping they are."""
    return {
        f.name: dict(value) if (value := getattr(record, f.name)).__class__ is SavedLabels else value
        for f in dataclasses.fields(record)
        if not f.name.startswith("_")
    }


def snapshot_text(state: ClusterState, source: str) -> str:
    """The snapshot of a cluster state, one node, usage or Pod per line."""
    try:
        return _snapshot_text(state, source)
    except UnicodeEncodeError:  # JSON's "\ud800" read by the generic reader; the snapshot's reader refuses one
        raise UsageError(
            f"the cluster state from {source} holds text that is not Unicode (a lone surrogate, such as JSON's "
            '"\\ud800"), which no API server writes: the snapshot is not written'
        ) from None


def _snapshot_text(state: ClusterState, source: str) -> str:
    encode = msgspec.json.Encoder().encode
    nodes = state.nodes
    usage: dict[str, NodeUsage] = {}
    ports: dict[str, list[PortRow]] = {}
    running: dict[str, list[RunningRow]] = {}
    for name in nodes or ():
        summed, holders = state.usage(name), state.port_holders(name)
        if summed is not None:
            usage[name] = summed
            running[name] = [_running_row(pod) for pod in state.running_pods(name) or ()]
        if holders:  # every holder of a shared port, in the Pods' order (the last one is what messages name)
            ports[name] = [(*port, holder) for port, holder in sorted(holders, key=lambda row: row[0])]
    pods, pod_requests, templates = _pod_table(state)
    workloads = workload_filters = names = filters = None
    if pods is not None:
        workloads = {namespace: keys for namespace in pods if (keys := state.running_workloads(namespace))}
        workload_filters = {namespace: _base64_filter(keys) for namespace, keys in workloads.items()}
        names = {
            namespace: "\n".join(named) for namespace, named in pods.items() if not any("\n" in name for name in named)
        }
        filters = {namespace: _base64_filter(pods[namespace]) for namespace in names}

    def listed(values: Any) -> str:
        if values is None:
            return "null"
        return "[" + ",".join("\n" + encode(value).decode() for value in values) + ("\n]" if values else "]")

    def lines(values: dict[str, Any] | None) -> str:
        """A mapping, one key and its value a line."""
        if values is None:
            return "null"
        rows = ",".join(f"\n{encode(key).decode()}:{encode(value).decode()}" for key, value in values.items())
        return "{" + rows + ("\n}" if values else "}")

    def keyed(pods: dict[str, dict[str, tuple[Any, ...]]] | None) -> str:
        if pods is None:
            return "null"
        namespaces = (
            f"\n{encode(namespace).decode()}:{{"
            + ",".join(f"\n{encode(name).decode()}:{encode(place).decode()}" for name, place in named.items())
            + "}"
            for namespace, named in pods.items()
        )
        return "{" + ",".join(namespaces) + ("\n}" if pods else "}")

    fields = [
        f'"source":{encode(source).decode()}',
        f'"nodes":{listed(None if nodes is None else [_public(node) for node in nodes.values()])}',
        f'"usage":{lines(usage)}',
        f'"ports":{lines(ports)}',
        f'"namespaces":{encode(None if state.namespaces is None else sorted(state.namespaces)).decode()}',
        f'"podRequests":{listed(pod_requests)}',
        f'"templates":{keyed(templates)}',
        f'"podNodes":{encode(None if state.pod_nodes is None else sorted(state.pod_nodes)).decode()}',
        f'"runtimeClasses":{encode(state.runtime_classes).decode()}',
        f'"priorityClasses":{encode(state.priority_classes).decode()}',
        f'"unavailable":{encode(state.unavailable).decode()}',
        f'"workloads":{lines(workloads)}',
        f'"workloadFilters":{lines(workload_filters)}',
        f'"podNames":{lines(names)}',
        f'"podNameFilters":{lines(filters)}',
        f'"podNamespaces":{encode(None if pods is None else list(pods)).decode()}',
    ]
    # names from the API server: no raw bidi (json_escaped replaces character by character: piece by piece alike)
    body = json_escaped(",\n".join(fields))
    running_tail = json_escaped(f"{_RUNNING_KEY.decode()}{lines(running)}") + "}\n"
    pods_tail = json_escaped(f"{_PODS_KEY.decode()}{keyed(pods)}") + "," + running_tail
    tail = f'"tail":[{len(pods_tail.encode())},{len(running_tail.encode())}]'
    head = f'{{"format":{encode(FORMAT).decode()},\n"version":{VERSION},\n{tail},\n'
    return head + body + "," + pods_tail


def _pod_table(
    state: ClusterState,
) -> tuple[
    dict[str, dict[str, tuple[Any, ...]]] | None,
    list[dict[str, int]],
    dict[str, dict[OwnerKey, tuple[OwnerKey | None, str]]] | None,
]:
    """The Pod table's rows, the distinct requests of the controllers' Pods, and the templates they run."""
    from ..scheduling import running_pods_requests

    if state.pods is None:
        return None, [], None
    pods: dict[str, dict[str, tuple[Any, ...]]] = {}
    distinct: dict[str, int] = {}
    requests: list[dict[str, int]] = []
    used: set[tuple[str, OwnerKey]] = set()
    for pod in sorted(state.pods, key=lambda pod: (pod.namespace, pod.name)):
        row: tuple[Any, ...] = (pod.node_name, pod.phase)
        if pod.owner is not None:
            # as its node's usage summed it (a JSON dump's spec is not made plain values)
            summed = pod.requests if pod.requests is not None else running_pods_requests((pod,))
            key = json.dumps(summed, sort_keys=True)
            if key not in distinct:
                distinct[key] = len(requests)
                requests.append(summed)
            row = (*row, pod.owner, pod.template, distinct[key])
            if pod.template is not None:
                used.add((pod.namespace, pod.template))
        pods.setdefault(pod.namespace, {})[pod.name] = row
    if state.templates is None:
        return pods, requests, None
    templates: dict[str, dict[OwnerKey, tuple[OwnerKey | None, str]]] = {}
    for namespace, key in sorted(used):
        info = state.template(namespace, key)
        if info is not None:
            templates.setdefault(namespace, {})[key] = (info.workload, digest(info))
    return pods, requests, templates


def load_snapshot(content: str | bytes | mmap, display: str) -> ClusterState:
    """The ClusterState a snapshot holds; a file of another version or shape is a UsageError."""
    data = content.encode() if isinstance(content, str) else content
    bounds = _tail_bounds(data)
    try:  # one decoding when the file is of this version and shape; the header alone says why not
        snapshot = msgspec.json.decode(data, type=_Snapshot) if bounds is None else _decoded_head(data, bounds[0])
    except (msgspec.DecodeError, RecursionError) as exc:
        _refuse_other_version(_header_version(data, display), display)
        raise UsageError(f"{display}: not a valid nodename-lint cluster snapshot: {_problem(exc)}") from None
    _refuse_other_version(snapshot.version, display)
    nodes = None
    if snapshot.nodes is not None:
        nodes = {}
        refuse = partial(_refuse_labels, display)
        saved: Any
        for saved in snapshot.nodes:
            fields = list(astuple(saved))  # NodeInfo's public fields in their order: 3 µs a node less than by name
            fields[_LABELS_FIELD] = SavedLabels(saved.labels, saved.name, refuse)
            if saved.taints and not all(map(is_text_taint, saved.taints)):  # the rules hash a key and an effect
                raise UsageError(
                    f"{display}: not a valid nodename-lint cluster snapshot: a taint of node {saved.name!r} has a "
                    "key, value or effect that is not a string"
                )
            nodes[saved.name] = NodeInfo(*fields)
    _refuse_unknown_nodes(display, nodes, snapshot.usage, snapshot.ports)
    pods: Callable[[], dict[str, Any]] | None
    running: Callable[[], dict[str, msgspec.Raw]]
    with_pods = None
    if isinstance(snapshot, _Snapshot):  # decoded whole
        pods = None if snapshot.pods is None else partial(dict, snapshot.pods)
        running = partial(_checked_running, display, nodes, snapshot.running)
    else:
        assert bounds is not None
        pods, running = _tail_members(data, bounds, display, nodes)
        if snapshot.pod_namespaces is not None:  # written with the table it lists
            with_pods = frozenset(snapshot.pod_namespaces)
    state = ClusterState(
        source=f"file {display}",
        nodes=nodes,
        namespaces=None if snapshot.namespaces is None else frozenset(snapshot.namespaces),
        pods=None
        if pods is None
        else PodTable(
            pods,
            partial(_namespace_pods, display),
            snapshot.pod_requests,
            snapshot.pod_names,
            with_pods,
            snapshot.pod_name_filters,
        ),
        templates=None
        if snapshot.templates is None
        else {
            namespace: {key: TemplateInfo(workload, digest) for key, (workload, digest) in held.items()}
            for namespace, held in snapshot.templates.items()
        },
        unavailable=snapshot.unavailable,
        pod_nodes=None if snapshot.pod_nodes is None else frozenset(snapshot.pod_nodes),
        runtime_classes=snapshot.runtime_classes,
        priority_classes=snapshot.priority_classes,
    )
    state.set_running_source(partial(_node_running, display, cache(running)))
    if snapshot.workloads is not None:
        state.set_runs_workload(
            partial(_runs_workload, display, snapshot.workloads, dict(snapshot.workload_filters or {}), {})
        )
    known = [name for name in nodes or () if state.pods_known_on(name)]
    state.set_node_summaries(
        {name: snapshot.usage.get(name) or NodeUsage(0, {}) for name in known},
        partial(_node_ports, display, snapshot.ports),
    )
    return state


def _tail_bounds(data: bytes | mmap) -> tuple[int, int] | None:
    """Where the members `pods` and `running` start (the line break before each), as the header's `tail`
    gives them from the end of the file; None when the file has no `tail` (an earlier writer's) or its
    bytes there are not those members' starts (the file was edited since): it is then decoded whole."""
    hint = _TAIL.match(data[:200])
    if hint is None:
        return None
    size = len(data)
    pods_at, running_at = size - int(hint[1]), size - int(hint[2])
    if not hint.end() < pods_at < running_at < size - len(_RUNNING_KEY) - 2:
        return None
    if (
        data[pods_at - 1 : pods_at + len(_PODS_KEY)] != b"," + _PODS_KEY
        or data[running_at - 1 : running_at + len(_RUNNING_KEY)] != b"," + _RUNNING_KEY
        or data[size - 2 :] != b"}\n"
    ):
        return None
    return pods_at, running_at


def _decoded_head(data: bytes | mmap, pods_at: int) -> _SnapshotHead:
    """The members before `pods`: the bytes up to the comma before it, closed as an object. A mapping is
    decoded where it is (the comma written over in the process's own copy of the page, then put back)."""
    if isinstance(data, bytes) or memoryview(data).readonly:
        return _HEAD_DECODER.decode(b"".join((memoryview(data)[: pods_at - 1], b"}")))
    data[pods_at - 1] = ord("}")
    try:
        return _HEAD_DECODER.decode(memoryview(data)[:pods_at])
    finally:
        data[pods_at - 1] = ord(",")


def _tail_members(
    data: bytes | mmap, bounds: tuple[int, int], display: str, nodes: dict[str, NodeInfo] | None
) -> tuple[Callable[[], dict[str, Any]] | None, Callable[[], dict[str, msgspec.Raw]]]:
    """The Pod table (None when the file says null) and the running Pods by node, each decoded when first read:
    most runs read neither (a third of a 150,000-Pod snapshot's load was decoding them)."""
    pods_at, running_at = bounds
    view = memoryview(data)
    pods = view[pods_at + len(_PODS_KEY) : running_at - 1]
    running = view[running_at + len(_RUNNING_KEY) : len(data) - 2]
    table = (
        None
        if len(pods) == 4 and pods.tobytes() == b"null"
        else partial(_decoded_part, display, "the Pod table", _PODS, pods)
    )
    return table, lambda: _checked_running(
        display, nodes, _decoded_part(display, "the running Pods", _RUNNING_PODS, running)
    )


def _decoded_part(display: str, part: str, decoder: msgspec.json.Decoder[Any], raw: msgspec.Raw | memoryview) -> Any:
    """A part of a snapshot decoded when first read; the file's error, naming the part, when it does not decode."""
    try:
        return decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise UsageError(f"{display}: not a valid nodename-lint cluster snapshot: {_problem(exc)} ({part})") from None


def _checked_running(
    display: str, nodes: dict[str, NodeInfo] | None, running: dict[str, msgspec.Raw]
) -> dict[str, msgspec.Raw]:
    _refuse_unknown_nodes(display, nodes, running)
    return running


def _refuse_unknown_nodes(display: str, nodes: dict[str, NodeInfo] | None, *by_node: dict[str, Any]) -> None:
    unknown = sorted(set().union(*by_node) - set(nodes or ()))
    if unknown:
        raise UsageError(f"{display}: not a valid nodename-lint cluster snapshot: usage of unknown node {unknown[0]!r}")


_HEAD_DECODER = msgspec.json.Decoder(_SnapshotHead)
_NAMESPACE_PODS = msgspec.json.Decoder(dict[str, PodRow])
_RUNNING = msgspec.json.Decoder(list[RunningRow])
_PORT_ROWS = msgspec.json.Decoder(list[PortRow])
_WORKLOADS = msgspec.json.Decoder(list[OwnerKey])


def _running_row(pod: RunningPod) -> RunningRow:
    return (
        pod.key,
        pod.priority,
        pod.critical,
        pod.qos,
        pod.start_time,
        pod.requests,
        pod.evictable,
        list(pod.ports),
    )


def _node_running(display: str, running: Callable[[], dict[str, msgspec.Raw]], node: str) -> list[RunningPod]:
    """The Pods of one node of a snapshot as preemption weighs them, decoded when first read."""
    rows = running().get(node)
    if rows is None:
        return []
    decoded = _decoded_part(display, f"the Pods of node {node!r}", _RUNNING, rows)
    return [
        RunningPod(key, priority, critical, qos, start, requests, evictable, tuple(ports))
        for key, priority, critical, qos, start, requests, evictable, ports in decoded
    ]


def _node_ports(display: str, saved: dict[str, msgspec.Raw], node: str) -> list[tuple[HostPort, str]]:
    """The host ports held on one node of a snapshot, with their holders, decoded when first read: a run reads
    those of a few nodes, and decoding every node's took the most of a snapshot's load where a third of the
    Pods hold one (13 ms of 47 for 45,000 ports)."""
    rows = saved.get(node)
    if rows is None:
        return []
    decoded: list[PortRow] = _decoded_part(display, f"the host ports of node {node!r}", _PORT_ROWS, rows)
    return [((ip, protocol, port), holder) for ip, protocol, port, holder in decoded]


def _runs_workload(
    display: str,
    saved: dict[str, msgspec.Raw],
    filters: dict[str, str | bytes],
    decoded: dict[str, frozenset[OwnerKey]],
    namespace: str,
    workload: OwnerKey,
) -> bool:
    """Whether a workload has a running Pod in one namespace of a snapshot. The namespace's filter answers most
    workloads that do not (a rollout lookup of a new workload: 150,000 saved workloads decoded and hashed to
    answer 300 such lookups took 13 ms); the namespace's list is decoded when first needed.

    A filter is read when its size is that of a filter of the list's names, counted from the list's quotes
    (each name has two when the list holds no backslash, which any escape would need)."""
    found = decoded.get(namespace)
    if found is None:
        listed = saved.get(namespace)
        if listed is None:
            return False
        if not saved_filter_may_hold(filters, namespace, workload, partial(_quoted_names, listed)):
            return False
        part = f"the workloads of namespace {namespace!r}"
        found = decoded[namespace] = frozenset(_decoded_part(display, part, _WORKLOADS, listed))
    return workload in found


def _quoted_names(listed: msgspec.Raw) -> int | None:
    """How many strings a saved JSON list of strings holds, from its quotes; None when it holds a backslash."""
    whole = bytes(listed)
    return None if b"\\" in whole else whole.count(b'"') // 2


def _base64_filter(names: Collection[str]) -> str:
    """records.name_filter of NAMES as a snapshot saves it."""
    return b2a_base64(name_filter(names), newline=False).decode()


def _namespace_pods(display: str, namespace: str, pods: msgspec.Raw) -> dict[str, PodRow]:
    """The Pods of one namespace of a snapshot's table, decoded when first read."""
    decoded: dict[str, PodRow] = _decoded_part(display, f"the Pods of namespace {namespace!r}", _NAMESPACE_PODS, pods)
    return decoded


def _refuse_labels(display: str, node: str, exc: Exception) -> NoReturn:
    raise UsageError(
        f"{display}: not a valid nodename-lint cluster snapshot: {_problem(exc)} (the labels of node {node!r})"
    ) from None


def _problem(exc: Exception) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def _header_version(data: bytes | mmap, display: str) -> int:
    """The version a snapshot's header gives, whatever the shape of the rest."""
    try:
        return msgspec.json.decode(data, type=_Header).version
    except (msgspec.DecodeError, RecursionError) as exc:
        raise UsageError(f"{display}: not a valid nodename-lint cluster snapshot: {_problem(exc)}") from None


def _refuse_other_version(version: int, display: str) -> None:
    if version != VERSION:
        raise UsageError(
            f"{display}: this cluster snapshot has format version {version}, and this nodename-lint reads "
            f"version {VERSION}; write it again with `nodename-lint snapshot` of this version (from the live cluster, "
            "or `--cluster-state DUMP` from a kubectl dump), or lint with the version that wrote it"
        )
