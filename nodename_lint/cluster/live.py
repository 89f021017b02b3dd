"""Cluster state from a live API server, for what the manifests name.

Only used when the user asks for a live cluster (--context, --kubeconfig, --live, --in-cluster, or
`snapshot`). The number of requests grows with what the manifests name (nodes, Pods), not with the
cluster: node pages, one namespace list, one Pod list per referenced node and per manifest Pod.
Manifests are untrusted: only names the API server would accept become part of a request.
The jobs live in their own modules: kubeconfig (which context), redaction (no secret in any
output), connection (GET with bounds, retries and paging), errors (what went wrong), snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .connection import ApiConnection, LiveOptions
from .errors import ClusterUnavailable, Forbidden
from .state import ClusterState
from .templates import holder_from_object
from .trimming import decode_node_page, trim_pod

if TYPE_CHECKING:
    from ..engine import ParsedSource
    from .objects import Holder
    from .templates import InUse

__all__ = ["ClusterUnavailable", "LiveCluster", "LiveOptions", "Referenced", "referenced"]

PARALLEL_REQUESTS = 4  # Pod lists in flight at once
NON_TERMINATED = "status.phase!=Succeeded,status.phase!=Failed"
RUNTIME_CLASSES = "/apis/node.k8s.io/v1/runtimeclasses"
PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


@dataclass
class Referenced:
    """What the manifests name: the nodes they pin Pods to and the Pods they define."""

    nodes: set[str] = field(default_factory=set)
    pods: set[tuple[str, str]] = field(default_factory=set)  # (namespace, name)
    # a Pod the scheduler places asks for host ports, or names a PriorityClass and may preempt: the ports
    # in use and the Pods on every node matter
    every_node: bool = False
    # (namespace, kind, name) of the Deployments, StatefulSets and DaemonSets: their running Pods' templates
    workloads: set[tuple[str, str, str]] = field(default_factory=set)

    def update(self, other: Referenced) -> None:
        """Add what another group of manifests names."""
        self.nodes |= other.nodes
        self.pods |= other.pods
        self.every_node |= other.every_node
        self.workloads |= other.workloads

    def covers(self, other: Referenced) -> bool:
        """Whether a state read for these names serves the other names too."""
        return other.nodes <= self.nodes and other.pods <= self.pods and (self.every_node or not other.every_node)


# --- what the rules need --------------------------------------------------------------------------
def referenced(parsed: Iterable[ParsedSource], default_namespace: str) -> Referenced:
    """Nodes and Pods the manifests name, read from the documents the lint run parsed (and will lint).

    Only names the API server would accept are kept: anything else is reported by a rule, never requested.
    """
    from ..podspec import is_dns1123_label, is_dns1123_subdomain, pinned_node
    from .templates import TEMPLATE_HOLDERS

    found = Referenced()
    for source in parsed:
        for obj in source.objects(default_namespace):
            try:
                node = pinned_node(obj)
                if node and is_dns1123_subdomain(node):  # else invalid-node-name reports it: no request
                    found.nodes.add(node)
                elif not node and not found.every_node and _scheduled_needing_every_node(obj):
                    found.every_node = True
                namespace = obj.namespace or default_namespace
                if (
                    obj.is_pod
                    and not source.source.is_static_pod
                    and is_dns1123_subdomain(obj.name)
                    and is_dns1123_label(namespace)
                ):  # else invalid-object-name reports it
                    found.pods.add((namespace, obj.name))
                if obj.kind in TEMPLATE_HOLDERS and is_dns1123_subdomain(obj.name) and is_dns1123_label(namespace):
                    found.workloads.add((namespace, obj.kind, obj.name))
            except Exception:  # an unreadable object is the lint run's to report
                continue
    return found


def _scheduled_needing_every_node(obj: Any) -> bool:
    """A Pod or template the scheduler places (no-node-fits checks it) that asks for host ports, or that
    names a PriorityClass and may preempt (which Pods the scheduler could delete is on every node)."""
    from ..scheduling import host_ports

    spec = obj.pod_spec
    if not spec or obj.is_static_pod or obj.kind == "DaemonSet":
        return False
    may_preempt = bool(spec.get("priorityClassName")) and spec.get("preemptionPolicy") != "Never"
    return may_preempt or bool(host_ports(spec, default_from_host_network=True))


class LiveCluster:
    """A connection plus what the run reads with it."""

    def __init__(self, options: LiveOptions) -> None:
        self.connection = ApiConnection(options)

    @property
    def namespace(self) -> str | None:
        """The kubeconfig context's namespace: kubectl's default for objects that set none."""
        return self.connection.namespace

    @property
    def source(self) -> str:
        return self.connection.source

    def _read(self, unavailable: dict[str, str], kind: str, read: Callable[[], Any]) -> Any:
        try:
            return read()
        except Forbidden as exc:
            unavailable[kind] = exc.reason()
            return None

    def state_for(self, wanted: Referenced) -> ClusterState:
        """Nodes, namespaces, and only the Pods the rules need for these manifests."""
        conn = self.connection
        unavailable: dict[str, str] = {}
        try:
            nodes = self._read(unavailable, "nodes", lambda: conn.list_all("/api/v1/nodes", decode=decode_node_page))
            namespaces = self._read(unavailable, "namespaces", lambda: conn.list_all("/api/v1/namespaces"))
            existing = {(n.get("metadata") or {}).get("name") for n in nodes} if nodes is not None else None
            pod_nodes = sorted(wanted.nodes if existing is None else wanted.nodes & existing)
            pods = self._read(
                unavailable, "pods", lambda: self._pods(None if wanted.every_node else pod_nodes, sorted(wanted.pods))
            )
            runtime_classes = self._read(unavailable, "runtime_classes", lambda: conn.list_all(RUNTIME_CLASSES))
            priority_classes = self._read(unavailable, "priority_classes", lambda: conn.list_all(PRIORITY_CLASSES))
            templates = None
            if pods and wanted.workloads:
                templates = self._read(unavailable, "templates", lambda: self._templates(pods, wanted.workloads))
        finally:
            conn.close()
        known = frozenset(pod_nodes) if pods is not None and not wanted.every_node else None
        return self._state(nodes, namespaces, pods, known, unavailable, runtime_classes, priority_classes, templates)

    def _templates(self, pods: list[dict[str, Any]], workloads: set[tuple[str, str, str]]) -> list[Holder]:
        """The ReplicaSets and ControllerRevisions holding the templates of the linted workloads' running Pods,
        each by name: their templates tell an unchanged manifest from a rollout (rollout.py)."""
        from ..podspec import is_dns1123_label, is_dns1123_subdomain
        from .templates import deployment_of_replicaset, pod_owner, split_key

        deployments = {(namespace, name) for namespace, kind, name in workloads if kind == "Deployment"}
        wanted: set[tuple[str, str]] = set()  # (namespace, "Kind/name")
        for pod in pods:
            metadata = pod.get("metadata") or {}
            owner, template = pod_owner(metadata)
            namespace = metadata.get("namespace") or "default"
            if owner is None or template is None or not isinstance(namespace, str) or not is_dns1123_label(namespace):
                continue
            if not is_dns1123_subdomain(split_key(template)[1]):  # the API server's reply is untrusted too
                continue
            kind, name = split_key(owner)
            if kind == "ReplicaSet":
                if (namespace, deployment_of_replicaset(name)) in deployments:
                    wanted.add((namespace, template))
            elif (namespace, kind, name) in workloads:
                wanted.add((namespace, template))
        queries, kinds = [], []
        for namespace, key in sorted(wanted):
            kind, name = split_key(key)
            resource = "replicasets" if kind == "ReplicaSet" else "controllerrevisions"
            queries.append(
                (f"/apis/apps/v1/namespaces/{_segment(namespace)}/{resource}", f"metadata.name={_name(name)}")
            )
            kinds.append(kind)
        return [
            holder
            for kind, found in zip(kinds, self._parallel(queries), strict=True)
            for holder in (_holder_of_kind(kind, None, obj) for obj in found)
            if holder is not None
        ]

    def whole_state(self) -> ClusterState:
        """Every node, namespace and non-terminated Pod: for a client that reads once and lints many
        documents not known in advance (the language server)."""
        conn = self.connection
        unavailable: dict[str, str] = {}
        try:
            nodes = self._read(unavailable, "nodes", lambda: conn.list_all("/api/v1/nodes", decode=decode_node_page))
            namespaces = self._read(unavailable, "namespaces", lambda: conn.list_all("/api/v1/namespaces"))
            pods = self._read(unavailable, "pods", lambda: conn.list_all("/api/v1/pods", NON_TERMINATED))
            runtime_classes = self._read(unavailable, "runtime_classes", lambda: conn.list_all(RUNTIME_CLASSES))
            priority_classes = self._read(unavailable, "priority_classes", lambda: conn.list_all(PRIORITY_CLASSES))
            templates = self._read(unavailable, "templates", lambda: self._every_template(pods or []))
        finally:
            conn.close()
        return self._state(nodes, namespaces, pods, None, unavailable, runtime_classes, priority_classes, templates)

    def _every_template(self, pods: list[dict[str, Any]]) -> list[Holder]:
        """The template of every ReplicaSet and ControllerRevision the Pods run, reduced to its digest as
        each page arrives (the others, a Deployment's old ReplicaSets, are not digested)."""
        from .templates import pod_owner

        used: dict[str, set[str]] = {}  # templates_in_use of the Pods, read from the objects
        for pod in pods:
            metadata = pod.get("metadata") if isinstance(pod, dict) else None
            if isinstance(metadata, dict):
                template = pod_owner(metadata)[1]
                if template is not None:
                    used.setdefault(metadata.get("namespace") or "default", set()).add(template)
        found: list[Holder] = []
        for kind, resource in (("ReplicaSet", "replicasets"), ("ControllerRevision", "controllerrevisions")):
            keep = partial(_holder_of_kind, kind, used)
            found += [holder for holder in self.connection.list_all(f"/apis/apps/v1/{resource}", keep=keep) if holder]
        return found

    def _state(
        self,
        nodes: Any,
        namespaces: Any,
        pods: Any,
        pod_nodes: frozenset[str] | None,
        unavailable: dict[str, str],
        runtime_classes: Any,
        priority_classes: Any,
        templates: list[Holder] | None,
    ) -> ClusterState:
        from .objects import StateError, state_from_objects

        if "pods" in unavailable:
            unavailable["live-pods"] = unavailable["pods"]  # nodename-immutable reads the same Pods
        try:
            return state_from_objects(
                self.source,
                nodes=nodes,
                namespaces=namespaces,
                pods=pods,
                pod_nodes=pod_nodes,
                unavailable=unavailable or None,
                runtime_classes=runtime_classes,
                priority_classes=priority_classes,
                holders=templates,
            )
        except StateError as exc:
            raise ClusterUnavailable(
                f"the API server at {self.connection.host} returned an object nodename-lint "
                f"cannot read ({exc}); the cluster state cannot be trusted"
            ) from None

    def _pods(self, nodes: list[str] | None, identities: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """The non-terminated Pods on each node (None: on every node, in one list), then the manifests'
        Pods not found there."""
        pods: dict[tuple[str, str], dict[str, Any]] = {}
        lists = (
            [("/api/v1/pods", NON_TERMINATED)]
            if nodes is None
            else [("/api/v1/pods", f"spec.nodeName={_name(node)},{NON_TERMINATED}") for node in nodes]
        )
        for found in self._parallel(lists):
            pods.update((_pod_key(pod), pod) for pod in found)
        lookups = [
            (f"/api/v1/namespaces/{_segment(namespace)}/pods", f"metadata.name={_name(name)}")
            for namespace, name in identities
            if (namespace, name) not in pods
        ]
        for found in self._parallel(lookups):
            pods.update((_pod_key(pod), pod) for pod in found)
        return list(pods.values())

    def _parallel(self, lists: list[tuple[str, str]]) -> list[list[dict[str, Any]]]:
        """Several lists at once (a few connections, like kubectl); the first error cancels the rest."""
        from concurrent.futures import ThreadPoolExecutor

        if len(lists) <= 1:
            return [self.connection.list_all(*query) for query in lists]
        pool = ThreadPoolExecutor(max_workers=PARALLEL_REQUESTS)
        try:
            return list(pool.map(lambda query: self.connection.list_all(*query), lists))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def snapshot(self) -> ClusterState:
        """Every node, namespace and non-terminated Pod, for `nodename-lint snapshot`."""
        from .objects import StateError, state_from_objects

        conn = self.connection
        try:
            nodes = conn.list_all("/api/v1/nodes", decode=decode_node_page)
            namespaces = conn.list_all("/api/v1/namespaces")
            pods = conn.list_all("/api/v1/pods", NON_TERMINATED, keep=trim_pod)  # trimmed as pages arrive
            runtime_classes = conn.list_all(RUNTIME_CLASSES)
            priority_classes = conn.list_all(PRIORITY_CLASSES)
            templates = self._every_template(pods)
        except Forbidden as exc:
            raise ClusterUnavailable(f"cannot snapshot {self.source}: {exc.reason()}") from None
        finally:
            conn.close()
        try:
            return state_from_objects(
                self.source,
                nodes=nodes,
                namespaces=namespaces,
                pods=pods,
                runtime_classes=runtime_classes,
                priority_classes=priority_classes,
                holders=templates,
            )
        except StateError as exc:
            raise ClusterUnavailable(
                f"the API server at {conn.host} returned an object nodename-lint cannot read "
                f"({exc}); the cluster state cannot be trusted"
            ) from None


def _holder_of_kind(kind: str, used: InUse | None, obj: dict[str, Any]) -> Holder | None:
    """holder_from_object of an item of a list, which carries no kind."""
    return holder_from_object({**obj, "kind": kind}, used)


def _segment(namespace: str) -> str:
    """A namespace as one path segment: checked (a DNS-1123 label, as the API requires) and percent-quoted.

    Manifests are untrusted; `kube-system/secrets#` or `../../apis` must never become a path.
    `referenced` already drops such values (a rule reports them); this is the last line of defence.
    """
    from ..podspec import is_dns1123_label

    if not is_dns1123_label(namespace):
        raise ValueError(f"not a namespace name: {namespace!r}")
    return quote(namespace, safe="")


def _name(name: str) -> str:
    """A node or Pod name for a field selector: a DNS-1123 subdomain, so it cannot add `,` or `=` terms."""
    from ..podspec import is_dns1123_subdomain

    if not is_dns1123_subdomain(name):
        raise ValueError(f"not an object name: {name!r}")
    return name


def _pod_key(pod: dict[str, Any]) -> tuple[str, str]:
    metadata = pod.get("metadata") or {}
    return (metadata.get("namespace") or "", metadata.get("name") or "")
