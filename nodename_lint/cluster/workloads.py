"""The cluster's own objects for `nodename-lint audit`: workloads, Pods, and who placed each Pod.

A live cluster gives every scheduled Pod a `spec.nodeName`, so "pinned by hand" has to be decided:

- a Pod with a controller ownerReference belongs to its controller: a DaemonSet Pod (placed by the
  scheduler through the node affinity the DaemonSet controller adds), a mirror Pod (ownerReference
  kind Node, annotation `kubernetes.io/config.mirror`: the kubelet's copy of a static Pod), or a
  Pod of a ReplicaSet, Job, StatefulSet... whose nodeName came from the template or the scheduler;
  it is never reported itself, its owner's template is;
- a bare Pod's nodeName was set by hand when a field manager owns `f:spec.f:nodeName` in its
  managedFields. The scheduler binds through the `pods/binding` subresource, whose storage writes
  nodeName straight into etcd (`BindingREST.setPodHostAndAnnotations` in
  pkg/registry/core/pod/storage/storage.go calls `Storage.GuaranteedUpdate`, bypassing the field
  manager), so a binding leaves no managedFields entry; and nodeName cannot change after creation,
  so an owner of `f:spec.f:nodeName` is the client that created the Pod with it (kubectl-create,
  kubectl-client-side-apply, an operator). An entry with subresource `binding` is ignored, should a
  future API server record one.
- a bare Pod without managedFields (saved with `kubectl get -o yaml` without
  `--show-managed-fields`, or stripped by a tool) cannot be decided: only its live state is audited.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import Any, TextIO

from ..scheduling import HostPort, reason_rule
from ..suppress import IGNORE_ANNOTATION

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# kind -> (resource, API group path), in the order `kubectl get` lists them
WORKLOADS: dict[str, tuple[str, str]] = {
    "Deployment": ("deployments", "/apis/apps/v1"),
    "StatefulSet": ("statefulsets", "/apis/apps/v1"),
    "DaemonSet": ("daemonsets", "/apis/apps/v1"),
    "ReplicaSet": ("replicasets", "/apis/apps/v1"),
    "Job": ("jobs", "/apis/batch/v1"),
    "CronJob": ("cronjobs", "/apis/batch/v1"),
}
CORE: dict[str, str] = {"Node": "nodes", "Namespace": "namespaces", "Pod": "pods"}
KIND_RESOURCES: dict[str, str] = {**CORE, **{kind: resource for kind, (resource, _) in WORKLOADS.items()}}
API_VERSIONS: dict[str, str] = {
    "Pod": "v1",
    **{kind: group.removeprefix("/apis/") for kind, (_, group) in WORKLOADS.items()},
}
SAVE_COMMAND = (
    "kubectl get nodes,namespaces,pods,deployments,statefulsets,daemonsets,replicasets,jobs,cronjobs "
    "-A -o yaml --show-managed-fields"
)


class Placement(Enum):
    """Who put a Pod on its node (or keeps it there)."""

    CONTROLLER = "controller"  # a workload's Pod: reported on the workload
    DAEMONSET = "daemonset"
    MIRROR = "mirror"  # the kubelet's mirror of a static Pod
    SCHEDULER = "scheduler"  # a bare Pod bound by the scheduler
    UNSCHEDULED = "unscheduled"  # a bare Pod without nodeName
    BY_HAND = "by-hand"  # a bare Pod created with nodeName
    UNKNOWN = "unknown"  # a bare Pod with nodeName and no managedFields


SYSTEM_PLACED = frozenset({Placement.CONTROLLER, Placement.DAEMONSET, Placement.MIRROR, Placement.SCHEDULER})


@dataclass(frozen=True, slots=True)
class PodRecord:
    """One Pod reduced to what audit needs of every Pod: where it runs, what it requests, who placed it.

    150,000 of these fit in a few dozen MiB; the whole object is kept only for the Pods audit
    reports on (bare Pods, and a pinned workload's Pods the kubelet rejected).
    """

    namespace: str
    name: str
    node: str | None
    running: bool  # not Succeeded or Failed: it counts in its node's usage
    requests: dict[str, int]  # effective requests (PodRequests), shared between Pods that request the same
    placement: Placement
    owner: tuple[str, str] | None  # the controller's kind and name
    host_ports: tuple[HostPort, ...] = ()  # what the kubelet's NodePorts check sees in use


@dataclass
class ClusterObjects:
    """The objects of an audit: raw ones per kind, and a PodRecord for every Pod.

    `by_kind["Pod"]` holds only the Pods audit reports on (or every Pod, for a snapshot); a
    resource that could not be read is in `unavailable`, with the reason.
    """

    source: str
    by_kind: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # resource -> why it is missing
    pods: list[PodRecord] = field(default_factory=list)
    _shared_requests: dict[tuple[tuple[str, int], ...], dict[str, int]] = field(default_factory=dict, repr=False)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return self.by_kind.get(kind, [])

    def add_pod(self, pod: Any) -> None:
        """Record one Pod (see reduce_pod)."""
        self.add_pods([self.reduce_pod(pod)])

    def add_pods(self, reduced: Iterable[tuple[PodRecord, dict[str, Any] | None] | None]) -> None:
        """File what reduce_pod made of a list of Pods."""
        for item in reduced:
            if item is not None:
                self.pods.append(item[0])
                if item[1] is not None:
                    self.by_kind.setdefault("Pod", []).append(item[1])

    def reduce_pod(self, pod: Any, keep_all: bool = False) -> tuple[PodRecord, dict[str, Any] | None] | None:
        """A Pod's record, and its trimmed object when audit reports on it (always with keep_all).

        Files nothing itself: a list restarted after 410 Gone reduces its Pods again.
        """
        if not isinstance(pod, dict):
            return None
        from ..scheduling import host_ports, pod_requests

        metadata = _metadata(pod)
        spec: dict[str, Any] = pod["spec"] if isinstance(pod.get("spec"), dict) else {}
        phase = _status_text(pod, "phase")
        requests = pod_requests(spec, lenient=True)
        key = tuple(sorted(requests.items()))
        where = placement(pod)
        node = spec.get("nodeName")
        record = PodRecord(
            namespace=str(metadata.get("namespace") or "default"),
            name=str(metadata.get("name") or ""),
            node=node if isinstance(node, str) and node else None,
            running=phase not in ("Succeeded", "Failed"),
            requests=self._shared_requests.setdefault(key, requests),
            placement=where,
            owner=controller_of(pod),
            host_ports=tuple(port for _, port in host_ports(spec)),
        )
        reported = where not in SYSTEM_PLACED or (phase == "Failed" and reason_rule(_status_text(pod, "reason")))
        return record, trim_audit_pod(pod) if keep_all or reported else None


# --- reading objects ----------------------------------------------------------------------------
def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _status_text(obj: dict[str, Any], key: str) -> str:
    status = obj.get("status")
    value = status.get(key) if isinstance(status, dict) else None
    return value if isinstance(value, str) else ""


def controller_of(obj: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, name) of the object's controller ownerReference, if it has one."""
    for reference in _metadata(obj).get("ownerReferences") or ():
        if isinstance(reference, dict) and reference.get("controller") is True:
            kind, name = reference.get("kind"), reference.get("name")
            if isinstance(kind, str) and isinstance(name, str):
                return kind, name
    return None


def nodename_managers(pod: dict[str, Any]) -> list[str] | None:
    """The field managers that own `f:spec.f:nodeName`, or None when the Pod has no managedFields."""
    entries = _metadata(pod).get("managedFields")
    if not isinstance(entries, list) or not entries:
        return None
    owners: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("subresource") == "binding":
            continue
        fields = entry.get("fieldsV1")
        spec = fields.get("f:spec") if isinstance(fields, dict) else None
        if isinstance(spec, dict) and "f:nodeName" in spec:
            owners.append(str(entry.get("manager") or "an unnamed manager"))
    return owners


def placement(pod: dict[str, Any]) -> Placement:
    """Who placed this Pod on its node (see the module docstring)."""
    metadata = _metadata(pod)
    annotations = metadata.get("annotations")
    owner = controller_of(pod)
    if (isinstance(annotations, dict) and MIRROR_ANNOTATION in annotations) or (owner and owner[0] == "Node"):
        return Placement.MIRROR
    if owner is not None:
        return Placement.DAEMONSET if owner[0] == "DaemonSet" else Placement.CONTROLLER
    spec = pod.get("spec")
    if not isinstance(spec, dict) or not spec.get("nodeName"):
        return Placement.UNSCHEDULED
    managers = nodename_managers(pod)
    if managers is None:
        return Placement.UNKNOWN
    return Placement.BY_HAND if managers else Placement.SCHEDULER


# --- trimming: keep what audit reads, drop the rest (bounded memory, small snapshots) ---------------
def _pick(source: Any, keys: Iterable[str]) -> dict[str, Any]:
    if not isinstance(source, dict):
        return {}
    return {key: source[key] for key in keys if source.get(key) not in (None, {}, [])}


def _kept_annotations(metadata: dict[str, Any]) -> dict[str, Any]:
    return _pick(metadata.get("annotations"), (MIRROR_ANNOTATION, IGNORE_ANNOTATION))


def _trimmed_managed_fields(metadata: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Each managedFields entry reduced to its manager and whether it owns spec.nodeName."""
    entries = metadata.get("managedFields")
    if not isinstance(entries, list) or not entries:
        return None
    trimmed = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        fields = entry.get("fieldsV1")
        spec = fields.get("f:spec") if isinstance(fields, dict) else None
        owns = isinstance(spec, dict) and "f:nodeName" in spec
        trimmed.append(
            {
                **_pick(entry, ("manager", "operation", "subresource")),
                "fieldsV1": {"f:spec": {"f:nodeName": {}}} if owns else {},
            }
        )
    return trimmed


def _trimmed_metadata(obj: dict[str, Any], *, managed: bool) -> dict[str, Any]:
    metadata = _metadata(obj)
    kept = _pick(metadata, ("name", "namespace", "creationTimestamp"))
    owner = controller_of(obj)
    if owner is not None:
        kept["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    annotations = _kept_annotations(metadata)
    if annotations:
        kept["annotations"] = annotations
    if managed:
        entries = _trimmed_managed_fields(metadata)
        if entries is not None:
            kept["managedFields"] = entries
    return kept


def trim_audit_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """A Pod as audit keeps it: a controller's Pod with what its node's usage and host ports read; a
    bare Pod with its whole spec."""
    status = _pick(pod.get("status"), ("phase", "reason", "message"))
    spec: dict[str, Any] = pod["spec"] if isinstance(pod.get("spec"), dict) else {}
    if controller_of(pod) is not None:

        def containers(key: str, fields: tuple[str, ...]) -> dict[str, Any]:
            kept = [_pick(c, fields) for c in spec.get(key) or [] if isinstance(c, dict)]
            return {key: kept} if kept else {}

        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": _trimmed_metadata(pod, managed=False),
            "spec": {
                **_pick(spec, ("nodeName", "overhead", "resources", "hostNetwork")),
                **containers("initContainers", ("name", "resources", "restartPolicy", "ports")),
                **containers("containers", ("name", "resources", "ports")),
            },
            "status": status,
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _trimmed_metadata(pod, managed=True),
        "spec": spec,
        "status": status,
    }


def trim_workload(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """A workload without its status: the spec holds the Pod template the rules read."""
    spec = obj.get("spec")
    return {
        "apiVersion": API_VERSIONS[kind],
        "kind": kind,
        "metadata": _trimmed_metadata(obj, managed=False),
        "spec": spec if isinstance(spec, dict) else {},
    }


# --- live ---------------------------------------------------------------------------------------
class ListProgress:
    """`reading pods: 12,500` on a terminal's stderr, rewritten in place; silent otherwise."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty()
        self.count = 0
        self.what = ""

    def counter(self, what: str, keep: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        """`keep`, counting the objects it sees and showing the count every 500."""
        self.what, self.count = what, 0

        def counted(obj: dict[str, Any]) -> Any:
            self.count += 1
            if self.enabled and self.count % 500 == 0:
                self.stream.write(f"\rnodename-lint: reading {what}: {self.count:,}")
                self.stream.flush()
            return keep(obj)

        return counted

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def read_live(live: Any, progress: ListProgress | None = None, *, keep_all: bool = False) -> ClusterObjects:
    """Every node, namespace, Pod and workload of a live cluster, page by page, each reduced as it arrives.

    `live` is a cluster.live.LiveCluster. Pods become PodRecords, and only those audit reports on
    are kept whole (trimmed); `keep_all` keeps every Pod (for `snapshot --workloads`). A 403 on one
    resource leaves it out (with the reason); anything else that makes the cluster unreadable
    raises ClusterUnavailable.
    """
    from .errors import Forbidden
    from .trimming import trim_namespace, trim_node

    progress = progress or ListProgress()
    connection = live.connection
    found = ClusterObjects(source=live.source)
    reads: list[tuple[str, str, str, Callable[[dict[str, Any]], Any]]] = [
        ("Node", "nodes", "/api/v1/nodes", trim_node),
        ("Namespace", "namespaces", "/api/v1/namespaces", trim_namespace),
        ("Pod", "pods", "/api/v1/pods", partial(found.reduce_pod, keep_all=keep_all)),
    ]
    for kind, (resource, group) in WORKLOADS.items():
        reads.append((kind, resource, f"{group}/{resource}", partial(trim_workload, kind)))
    try:
        for kind, resource, path, keep in reads:
            try:
                kept = connection.list_all(path, keep=progress.counter(resource, keep))
            except Forbidden as exc:
                found.unavailable[resource] = exc.reason()
                continue
            if kind == "Pod":
                found.add_pods(kept)
            else:
                found.by_kind[kind] = kept
    finally:
        progress.done()
        connection.close()
    return found


def write_workload_snapshot(found: ClusterObjects, output: str | None) -> None:
    """`snapshot --workloads`: the same objects audit reads live, as a v1 List for --cluster-state."""
    from .trimming import write_snapshot

    items = [obj for kind in (*CORE, *WORKLOADS) for obj in found.of(kind)]
    write_snapshot(
        {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}, output, found.source
    )


# --- from a file --------------------------------------------------------------------------------
def load_objects_file(path: str) -> ClusterObjects:
    """The objects of `--cluster-state FILE` for audit; a kind the file lacks is unavailable."""
    from ..documents import decode, without_cycle_collection
    from ..sources import UsageError
    from .from_file import _items, _parse, read_state_bytes

    data = read_state_bytes(path)  # a device is refused, a file or pipe over the cap stops the run
    try:
        text = decode(data)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{path}:{line}: the cluster state is not UTF-8 or UTF-16 text") from None
    from .snapshot import is_snapshot

    if is_snapshot(text):
        raise UsageError(
            f"{path} is a `nodename-lint snapshot` for linting: it holds usage sums, not the workloads "
            f"and Pods audit reads; save those with `nodename-lint snapshot --workloads -o FILE`"
        )
    with without_cycle_collection():
        items = _items(_parse(text, path), path)
        found = ClusterObjects(source=f"file {path}")
        for _, _, item in items:
            kind = item.get("kind") if isinstance(item, dict) else None
            if kind == "Pod":
                found.add_pod(item)
            elif isinstance(kind, str) and kind in KIND_RESOURCES:  # a kind not a string: not an object of these
                found.by_kind.setdefault(kind, []).append(item)
    if not found.of("Node"):
        raise UsageError(f"{path}: the cluster state has no Node objects; save it with `{SAVE_COMMAND} > FILE`")
    present = {kind for kind in found.by_kind} | ({"Pod"} if found.pods else set())
    for kind, resource in CORE.items():  # a file without Jobs may come from a cluster without Jobs
        if kind not in present:
            found.unavailable[resource] = f"the cluster state {path} has no {resource} (save it with `{SAVE_COMMAND}`)"
    return found
