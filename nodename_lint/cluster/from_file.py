"""Build a ClusterState from API objects: a saved `kubectl get ... -o yaml|json` List, or the live client.

`state_from_objects` takes plain dicts exactly as the API returns them (the live client and the
file loader both end here). `load_state_text`/`load_state_file` read a v1 List as printed by
`kubectl get nodes,namespaces,pods -A -o yaml` (or `-o json`, or `kubectl get nodes -o yaml`
alone): JSON through json.loads, YAML through libyaml with go-yaml's scalar rules (`=` and dates
stay strings, `yes` is true), so that a big state loads fast and reads as kubectl reads it.
A bad file is a UsageError naming the file and the line.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from ..sources import UsageError
from ..yamlnodes import key_text, resolve_plain
from .state import ClusterState, NodeInfo, PodInfo

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

SAVE_HINT = "save it with `kubectl get nodes,namespaces,pods -A -o yaml > FILE`"
_KINDS = {"Node": "nodes", "Namespace": "namespaces", "Pod": "pods"}


class StateError(ValueError):
    """An API object that cannot be read; `obj` is the offending item, `path` a path inside it."""

    def __init__(self, obj: Any, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.obj = obj
        self.path = path


# --- from API objects -----------------------------------------------------------------------------
def _mapping(obj: Any, parent: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    value: Any = parent
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StateError(obj, path, f"{'.'.join(map(str, path))} is not a mapping")
    return value


def _name(obj: Any, kind: str, *, namespaced: bool = False) -> tuple[str, str]:
    if not isinstance(obj, dict):
        raise StateError(obj, (), f"a {kind} item is not a mapping")
    metadata = _mapping(obj, obj, ("metadata",))
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise StateError(obj, ("metadata",), f"a {kind} has no metadata.name")
    namespace = metadata.get("namespace") or "default" if namespaced else ""
    if not isinstance(namespace, str):
        raise StateError(obj, ("metadata", "namespace"), f"{kind} {name}: metadata.namespace is not a string")
    return namespace, name


def _strings(obj: Any, mapping: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, str]:
    """Labels: JSON object of strings (YAML numbers or booleans read as kubectl would send them)."""
    found = _mapping(obj, mapping, path)
    labels: dict[str, str] = {}
    for key, value in found.items():
        if isinstance(value, (dict, list)):
            raise StateError(obj, (*path, key), f"{'.'.join(map(str, path))}.{key} is not a string")
        labels[str(key)] = value if isinstance(value, str) else json.dumps(value)
    return labels


def node_from_object(obj: Any) -> NodeInfo:
    """A NodeInfo from a Node object; raises StateError when its shape is wrong."""
    _, name = _name(obj, "Node")
    spec = _mapping(obj, obj, ("spec",))
    taints = spec.get("taints") or []
    if not isinstance(taints, list) or not all(isinstance(t, dict) for t in taints):
        raise StateError(obj, ("spec", "taints"), f"Node {name}: spec.taints is not a list of mappings")
    conditions = _mapping(obj, obj, ("status",)).get("conditions") or []
    if not isinstance(conditions, list):
        raise StateError(obj, ("status", "conditions"), f"Node {name}: status.conditions is not a list")
    return NodeInfo(
        name=name,
        labels=_strings(obj, obj, ("metadata", "labels")),
        taints=taints,
        unschedulable=spec.get("unschedulable") is True,
        allocatable=_mapping(obj, obj, ("status", "allocatable")),
        conditions={
            str(c.get("type")): str(c.get("status")) for c in conditions if isinstance(c, dict) and c.get("type")
        },
    )


def pod_from_object(obj: Any) -> PodInfo:
    """A PodInfo from a Pod object; raises StateError when its shape is wrong."""
    namespace, name = _name(obj, "Pod", namespaced=True)
    spec = _mapping(obj, obj, ("spec",))
    node_name = spec.get("nodeName")
    phase = _mapping(obj, obj, ("status",)).get("phase")
    return PodInfo(
        namespace=namespace,
        name=name,
        node_name=node_name if isinstance(node_name, str) and node_name else None,
        phase=phase if isinstance(phase, str) else None,
        spec=spec,
    )


def state_from_objects(
    source: str,
    *,
    nodes: list[dict] | None,
    namespaces: list[dict] | None,
    pods: list[dict] | None,
    pod_nodes: frozenset[str] | None = None,
    unavailable: dict[str, str] | None = None,
) -> ClusterState:
    """A ClusterState from API objects as returned by the API or `kubectl get -o json`.

    None for a kind means it is not known (and `unavailable` may say why); `pod_nodes` names the
    nodes whose non-terminated Pods are all in `pods` (None: every node). Raises StateError for
    an object of the wrong shape.
    """
    return ClusterState(
        source=source,
        nodes=None if nodes is None else {info.name: info for info in map(node_from_object, nodes)},
        namespaces=None if namespaces is None else frozenset(_name(ns, "Namespace")[1] for ns in namespaces),
        pods=None if pods is None else [pod_from_object(pod) for pod in pods],
        unavailable=dict(unavailable or {}),
        pod_nodes=pod_nodes,
    )


# --- from a file ----------------------------------------------------------------------------------
class _StateLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """libyaml parsing with go-yaml v2 scalars: every plain scalar goes through resolve_plain."""

    yaml_implicit_resolvers: dict = {}


_StateLoader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])


def _construct_scalar(loader: _StateLoader, node: yaml.ScalarNode) -> Any:
    return node.value if node.style else resolve_plain(node.value)


def _construct_mapping(loader: _StateLoader, node: yaml.MappingNode) -> Any:
    data: dict[str, Any] = {}
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = key_text(key_node)
        if key is None:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key is itself a mapping or a list", key_node.start_mark
            )
        data[key] = loader.construct_object(value_node, deep=True)


_StateLoader.add_constructor("tag:yaml.org,2002:str", _construct_scalar)
_StateLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def _parse(text: str, display: str) -> list[Any]:
    """The documents of the file as plain values; a syntax error is a UsageError with its line."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith(("{", "[")):
        try:
            return [json.loads(stripped)]
        except json.JSONDecodeError as exc:
            line = exc.lineno + text[: len(text) - len(stripped)].count("\n")
            raise UsageError(f"{display}:{line}:{exc.colno}: not a valid JSON cluster state: {exc.msg}") from None
        except RecursionError:
            raise UsageError(f"{display}: not a valid JSON cluster state: nested too deeply") from None
    try:
        return [doc for doc in yaml.load_all(text, Loader=_StateLoader) if doc is not None]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{display}:{mark.line + 1}:{mark.column + 1}" if mark else display
        problem = ": ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        raise UsageError(f"{where}: not a valid YAML cluster state: {problem}") from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise UsageError(f"{display}: not a valid YAML cluster state: {str(exc).splitlines()[0]}") from None


def _items(documents: list[Any], display: str) -> list[tuple[int, int, Any]]:
    """(document index, item index or -1, object) for every object of the documents."""
    found: list[tuple[int, int, Any]] = []
    for doc_index, document in enumerate(documents):
        if not isinstance(document, dict) or not isinstance(document.get("kind"), str):
            raise UsageError(
                f"{display}: document {doc_index + 1} is not a Kubernetes object or List; {SAVE_HINT}"
            )
        if document["kind"].endswith("List") and "items" in document:
            items = document.get("items") or []
            if not isinstance(items, list):
                raise UsageError(f"{display}: `items` of document {doc_index + 1} is not a list; {SAVE_HINT}")
            implied = document["kind"][: -len("List")]
            for index, item in enumerate(items):
                if isinstance(item, dict) and "kind" not in item and implied:
                    item = {**item, "kind": implied}
                    items[index] = item
                found.append((doc_index, index, item))
        else:
            found.append((doc_index, -1, document))
    return found


def _locate(text: str, doc_index: int, item_index: int, path: tuple[str | int, ...]) -> str:
    """`:line:column` of an item (and a path inside it) in the file; '' when it cannot be found."""
    try:
        documents = list(yaml.compose_all(text, Loader=_BaseLoader))
    except yaml.YAMLError:
        return ""
    if doc_index >= len(documents):
        return ""
    node = mark = documents[doc_index]
    steps: tuple[str | int, ...] = (("items", item_index) if item_index >= 0 else ()) + path
    for step in steps:
        if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = mark = node.value[step]
        elif isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == step), None)
            if pair is None:
                break
            mark, node = pair  # point at the key, as the findings do
        else:
            break
    return f":{mark.start_mark.line + 1}:{mark.start_mark.column + 1}"


def load_state_text(text: str, source: str) -> ClusterState:
    """A ClusterState from the text of a saved List; `source` names it in messages ("state.yaml")."""
    documents = _parse(text, source)
    items = _items(documents, source)
    by_kind: dict[str, list[Any]] = {"nodes": [], "namespaces": [], "pods": []}
    origin: dict[int, tuple[int, int]] = {}
    for doc_index, item_index, item in items:
        kind = item.get("kind") if isinstance(item, dict) else None
        if kind in _KINDS:
            by_kind[_KINDS[kind]].append(item)
            origin[id(item)] = (doc_index, item_index)
    if not by_kind["nodes"]:
        raise UsageError(f"{source}: the cluster state has no Node objects; {SAVE_HINT}")
    missing = {
        data: f"the cluster state {source} has no {data} ({SAVE_HINT})"
        for data in ("namespaces", "pods") if not by_kind[data]
    }
    if "pods" in missing:
        missing["live-pods"] = missing["pods"]
    try:
        return state_from_objects(
            f"file {source}",
            nodes=by_kind["nodes"],
            namespaces=by_kind["namespaces"] or None,
            pods=by_kind["pods"] or None,
            unavailable=missing,
        )
    except StateError as exc:
        doc_index, item_index = origin.get(id(exc.obj), (0, -1))
        where = _locate(text, doc_index, item_index, exc.path) if id(exc.obj) in origin else ""
        item = f" (items[{item_index}])" if item_index >= 0 else ""
        raise UsageError(f"{source}{where}: bad cluster state{item}: {exc}") from None


def load_state_file(path: str) -> ClusterState:
    """Read `--cluster-state FILE`; any problem is a UsageError (exit code 2)."""
    from ..documents import decode

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the cluster state: {exc.strerror or exc}") from None
    try:
        text = decode(data)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{path}:{line}: the cluster state is not UTF-8 or UTF-16 text") from None
    return load_state_text(text, path)
