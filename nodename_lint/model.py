"""Kubernetes objects found in documents, with lazy access to the parts rules read.

A Manifest wraps the composed node of one object (a document, or one item of a List). Rules read
plain values (`pod_spec`, `metadata`, `data`); the engine turns the paths rules report into the
line and column of the node the user has to change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from yaml import MappingNode, Node, ScalarNode, SequenceNode

from .documents import Document
from .yamlnodes import child, converts_whole, follow, lookup, scalar_value, to_python

Path = tuple[str | int, ...]

# Where the Pod spec lives in each workload kind (core API groups only).
POD_SPEC_PATHS: dict[str, Path] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}
_WORKLOAD_GROUPS = {"v1", "apps/v1", "apps/v1beta1", "apps/v1beta2", "extensions/v1beta1", "batch/v1", "batch/v1beta1"}
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace",
        "Node",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "StorageClass",
        "PriorityClass",
        "APIService",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "RuntimeClass",
        "IngressClass",
        "CSIDriver",
        "CSINode",
        "VolumeAttachment",
        "ComponentStatus",
        "CertificateSigningRequest",
        "FlowSchema",
        "PriorityLevelConfiguration",
        "ClusterTrustBundle",
    }
)


class ObjectRef(NamedTuple):
    """What kubectl would call the object: apiVersion, kind, namespace and name."""

    api_version: str
    kind: str
    namespace: str | None
    name: str
    generate_name: str = ""  # metadata.generateName, when the API server is to make the name up

    @property
    def shown_name(self) -> str:
        """The name messages show (name_to_show): `debug-<random>` for an object named by generateName."""
        return name_to_show(self.name, self.generate_name)

    def describe(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.shown_name}"

    def key(self) -> str:
        """kind/namespace/name (kind/name when cluster-scoped): how audit names an object it reports."""
        return "/".join(part for part in (self.kind, self.namespace, self.shown_name) if part)


def name_to_show(name: str, generate_name: str = "") -> str:
    """How messages name an object: its name; for one named by generateName, the prefix the API server
    completes (`debug-<random>`, as `kubectl create` would print `debug-x7k2p`); else `<unnamed>`."""
    if name:
        return name
    return f"{generate_name}<random>" if generate_name else "<unnamed>"


class Manifest:
    """One Kubernetes object of a file, read lazily from its YAML nodes."""

    __slots__ = (
        "_cache",
        "_namespace_default",
        "api_version",
        "document",
        "is_static_pod",
        "kind",
        "node",
        "path",
        "pod_spec_path",
    )

    def __init__(
        self,
        path: str,
        document: Document,
        node: MappingNode,
        api_version: str,
        kind: str,
        *,
        default_namespace: str = "default",
        is_static_pod: bool = False,
    ) -> None:
        self.path = path  # as the user named the file; "<stdin>" for standard input
        self.document = document
        self.node = node
        self.api_version = api_version
        self.kind = kind
        # Where this object's Pod spec lives, or None for kinds that run no Pods (rules ask it many times)
        self.pod_spec_path: Path | None = POD_SPEC_PATHS.get(kind) if api_version in _WORKLOAD_GROUPS else None
        self.is_static_pod = is_static_pod
        self._namespace_default = default_namespace
        self._cache: dict[str, Any] = {}

    # --- plain values -------------------------------------------------------------------------
    def get(self, path: Path) -> Any:
        """The plain value at `path` (None when absent)."""
        node: Node | None = self.node
        for step in path:
            found = child(node, step)
            if found is None:
                return None
            node = found[1]
        return to_python(node, self.document.limits.max_nodes)

    def _cached(self, key: str, path: Path) -> Any:
        if key not in self._cache:
            self._cache[key] = self.get(path)
        return self._cache[key]

    def memo(self, key: str, compute: Callable[[Manifest], Any]) -> Any:
        """compute(self), computed once per object: what every finding of the object asks again."""
        if key not in self._cache:
            self._cache[key] = compute(self)
        return self._cache[key]

    @property
    def metadata(self) -> dict[str, Any]:
        value = self._cached("metadata", ("metadata",))
        return value if isinstance(value, dict) else {}

    @property
    def data(self) -> Any:
        """The whole object as plain values (costly for big objects: prefer the narrower views)."""
        return self._cached("data", ())

    @property
    def name(self) -> str:
        name = self.metadata.get("name")
        return name if isinstance(name, str) else ""

    @property
    def generate_name(self) -> str:
        """metadata.generateName ("" when absent): the prefix of a name the API server makes up."""
        prefix = self.metadata.get("generateName")
        return prefix if isinstance(prefix, str) else ""

    @property
    def shown_name(self) -> str:
        """The name messages show (name_to_show): never empty, `debug-<random>` for a generateName."""
        return name_to_show(self.name, self.generate_name)

    @property
    def namespace(self) -> str | None:
        """metadata.namespace, else the run's default namespace; None for cluster-scoped kinds."""
        if self.kind in CLUSTER_SCOPED_KINDS:
            return None
        namespace = self.metadata.get("namespace")
        return namespace if isinstance(namespace, str) and namespace else self._namespace_default

    @property
    def annotations(self) -> dict[str, Any]:
        value = self.metadata.get("annotations")
        return value if isinstance(value, dict) else {}

    @property
    def pod_spec(self) -> dict[str, Any] | None:
        """The Pod spec as plain values (None for kinds without one, {} when it is not a mapping)."""
        path = self.pod_spec_path
        if path is None:
            return None
        value = self._cached("pod_spec", path)
        return value if isinstance(value, dict) else {}

    def pod_spec_field(self, key: str) -> Any:
        """`pod_spec.get(key)` (None for kinds without a Pod spec), converting only that field when the whole
        spec is sure to convert: a rule that reads nodeName does not pay for converting the containers.
        When it is not sure (a spec nested or sized past the limits), the whole spec is converted, so that
        the error is reported by the same rule as before."""
        if self.pod_spec_path is None:
            return None
        cache = self._cache
        if "pod_spec" not in cache:
            converts, spec_node = self.memo("pod_spec_node", _pod_spec_node)
            if converts:
                cached = "pod_spec:" + key
                if cached not in cache:  # as get() reads it, one step from the spec
                    found = lookup(spec_node, key)
                    cache[cached] = to_python(found[1], self.document.limits.max_nodes) if found else None
                return cache[cached]
        spec = self.pod_spec
        return spec.get(key) if spec else None

    @property
    def pod_template_metadata(self) -> dict[str, Any]:
        """The metadata of a workload's Pod template ({} for a Pod)."""
        path = self.pod_spec_path
        if path is None or len(path) < 2:
            return {}
        value = self._cached("template_metadata", (*path[:-1], "metadata"))
        return value if isinstance(value, dict) else {}

    @property
    def is_pod(self) -> bool:
        return self.kind == "Pod" and self.pod_spec_path is not None

    @property
    def is_workload_template(self) -> bool:
        return self.pod_spec_path is not None and self.kind != "Pod"

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, self.namespace, self.name, self.generate_name)

    # --- locations ----------------------------------------------------------------------------
    def locate(self, path: Path) -> tuple[int, int]:
        """1-based (line, column) in the stream of the deepest node on `path` that exists.

        For a mapping key the key itself is pointed at (`nodeName:`), for a list item its start.
        """
        mark_node, _ = follow(self.node, path)
        assert mark_node is not None
        mark = mark_node.start_mark
        return self.document.line_offset + mark.line + 1, mark.column + 1


_EMPTY_DOCUMENT = Document(index=0, line_offset=0, text="", root=None)
_EMPTY_NODE = MappingNode("tag:yaml.org,2002:map", [])


class PlainObject(Manifest):
    """An object that comes from no file, as plain values (read from the API by `audit`, or sent by the
    API server to the admission webhook): no line (locate() gives 0, 0), the same rules."""

    __slots__ = ("raw",)

    def __init__(self, raw: dict[str, Any], api_version: str, kind: str, default_namespace: str) -> None:
        super().__init__("", _EMPTY_DOCUMENT, _EMPTY_NODE, api_version, kind, default_namespace=default_namespace)
        self.raw = raw

    def get(self, path: Path) -> Any:
        value: Any = self.raw
        for step in path:
            if isinstance(step, int):
                value = value[step] if isinstance(value, list) and -len(value) <= step < len(value) else None
            else:
                value = value.get(step) if isinstance(value, dict) else None
            if value is None:
                return None
        return value

    def locate(self, path: Path) -> tuple[int, int]:
        return 0, 0

    def pod_spec_field(self, key: str) -> Any:
        spec = self.pod_spec  # plain values already: nothing to save by reading one field
        return spec.get(key) if spec else None


def _pod_spec_node(obj: Manifest) -> tuple[bool, Node | None]:
    """(whether converting the object's Pod spec whole cannot fail (yamlnodes.converts_whole), its node)."""
    node: Node | None = obj.node
    for step in obj.pod_spec_path or ():
        found = child(node, step)
        if found is None:
            return True, None  # no spec: nothing to convert
        node = found[1]
    return converts_whole(node, obj.document.limits.max_nodes), node


def scalar_at(node: Node | None, key: str) -> str | None:
    """A string scalar value in a mapping node, without converting anything else."""
    pair = lookup(node, key)
    if pair is None or not isinstance(pair[1], ScalarNode):
        return None
    value = scalar_value(pair[1])
    return value if isinstance(value, str) else None


def live_list_fields(document: Document) -> list[str]:
    """The fields of live objects in the first items of a `kind: List` (a `kubectl get -o yaml` dump), else [].

    Such a dump describes a cluster (what --cluster-state reads), not manifests to apply: linting
    its Pods would check them against themselves. A few items are looked at, so a dump that starts
    with trimmed objects (a snapshot's Namespaces) is still recognised.
    """
    root = document.root
    if document.list_of is not None:  # a piece of a List (documents._list_items): its first one decides
        if document.first_item or not isinstance(root, SequenceNode):
            return []
        listed = root.value
    else:
        kind = scalar_at(root, "kind")
        if not kind or not kind.endswith("List"):
            return []
        items = lookup(root, "items")
        if items is None or not isinstance(items[1], SequenceNode):
            return []
        listed = items[1].value
    found: set[str] = set()
    for item in [node for node in listed[:_LIVE_ITEMS_LOOKED_AT] if isinstance(node, MappingNode)]:
        metadata = lookup(item, "metadata")
        found.update(key for key in ("resourceVersion", "managedFields") if metadata and _filled(metadata[1], key))
        if _filled(item, "status"):
            found.add("status")
    return sorted(found)


_LIVE_ITEMS_LOOKED_AT = 8


def _filled(node: Node, key: str) -> bool:
    """Whether KEY of the mapping NODE holds something: kubectl's client-side output (`create --dry-run=client
    -o yaml`, `get` of a manifest file) writes `status: {}` and `creationTimestamp: null` into objects the
    cluster never saw, so an empty value marks nothing as saved from a cluster."""
    pair = lookup(node, key)
    if pair is None:
        return False
    value = pair[1]
    if isinstance(value, ScalarNode):
        return scalar_value(value) not in (None, "")
    return bool(value.value)


def objects_in(
    path: str, document: Document, *, default_namespace: str = "default", is_static_pod: bool = False
) -> Iterator[Manifest]:
    """The Kubernetes objects of one document: itself, or the items of a List.

    A document without a string apiVersion and kind (Helm values, CI configs) yields nothing.
    """
    root = document.root
    if document.list_of is not None:  # items of a List, split out of it (documents._list_items)
        assert isinstance(root, SequenceNode)
        items: list[Node] = root.value
        api_version, kind = document.list_of
    else:
        found_api, found_kind = scalar_at(root, "apiVersion"), scalar_at(root, "kind")
        if not found_api or not found_kind:
            return
        api_version, kind = found_api, found_kind
        assert isinstance(root, MappingNode)
        found = lookup(root, "items") if kind.endswith("List") else None
        if found is None or not isinstance(found[1], SequenceNode):
            yield Manifest(
                path,
                document,
                root,
                api_version,
                kind,
                default_namespace=default_namespace,
                is_static_pod=is_static_pod,
            )
            return
        items = found[1].value[document.first_item :]
    item_kind = kind[: -len("List")] or None
    for item in items:
        if isinstance(item, MappingNode):
            item_api = scalar_at(item, "apiVersion") or (api_version if item_kind else None)
            kind_of_item = scalar_at(item, "kind") or item_kind
            if item_api and kind_of_item:
                yield Manifest(
                    path,
                    document,
                    item,
                    item_api,
                    kind_of_item,
                    default_namespace=default_namespace,
                    is_static_pod=is_static_pod,
                )
