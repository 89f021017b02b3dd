"""Build a ClusterState from a file: a saved `kubectl get ... -o yaml|json` List, or a snapshot.

`load_state_text`/`load_state_file` read a v1 List as printed by `kubectl get
nodes,namespaces,pods -A -o yaml` (or `-o json`, or `kubectl get nodes -o yaml` alone): a JSON
List through typed msgspec structs (json_dump), other JSON through msgspec, YAML through libyaml
with go-yaml's scalar rules (`=` and dates stay strings, `yes` is true), so that a big state loads
fast and reads as kubectl reads it. The objects become records in objects.py. A bad file is a
UsageError naming the file and the line.
"""

from __future__ import annotations

import gc
import json
import os
import re
from mmap import ACCESS_COPY, ACCESS_READ, mmap
from typing import Any, Literal, overload

import yaml

from ..documents import without_cycle_collection
from ..sources import UsageError, refuse_link_out_of_repository
from ..yamlnodes import MAX_EXPANDED_NODES, PLAIN_TAG, QUOTED_TAG, key_of, scalar_of, scalar_problem
from .objects import (
    SAVE_HINT,
    StateError,
    name_of,
    node_from_object,
    pod_from_object,
    priority_class_from_object,
    runtime_class_from_object,
    state_from_kinds,
)
from .snapshot import is_snapshot, load_snapshot
from .state import ClusterState
from .templates import HOLDER_KINDS, holder_from_object, templates_in_use

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

# the kinds a state file is read for
_KINDS = ("Node", "Namespace", "Pod", "RuntimeClass", "PriorityClass", *HOLDER_KINDS)

_NO_KEY = object()


class _BadYaml(ValueError):
    """Something JSON cannot hold, at an event's position."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.mark = mark


def _tag(event: yaml.ScalarEvent) -> str:
    """The tag the manifest reader gives this scalar (documents._Loader): explicit, plain or quoted."""
    if event.tag is None or event.tag == "!":
        return PLAIN_TAG if event.implicit[0] else QUOTED_TAG
    return event.tag


def _scalar(event: yaml.ScalarEvent) -> Any:
    """A scalar as go-yaml v2 decodes it, by the manifest reader's rules (yamlnodes.scalar_of)."""
    tag = _tag(event)
    if tag is QUOTED_TAG:
        return event.value
    value = scalar_of(tag, event.value)
    if tag is not PLAIN_TAG or value.__class__ is float:  # only these can be what JSON or the tag refuses
        problem = scalar_problem(tag, event.value)
        if problem:
            raise _BadYaml(problem, event.start_mark)
    return value


def _key(event: yaml.ScalarEvent) -> str:
    """A mapping key as the string JSON carries, by the manifest reader's rules (yamlnodes.key_of)."""
    tag = _tag(event)
    problem = scalar_problem(tag, event.value, as_key=True)
    key = None if problem else key_of(tag, event.value)
    if key is None:
        raise _BadYaml(
            problem or "a mapping key is null (`~`, `null` or empty), which JSON cannot hold", event.start_mark
        )
    return key


def _load_yaml(text: str) -> list[Any]:
    """The documents as plain values, built straight from libyaml's events.

    Several times faster than composing nodes first (what yaml.load does), which matters for a
    state of 150,000 Pods. The rules are the manifest reader's (yamlnodes, checked against kubectl's
    reader by tests/test_kubectl_yaml_oracle.py): aliases share the anchored value (no expansion);
    a merge key (`<<`) applies where it stands, overriding the keys before it (of a list of
    mappings the first one wins); duplicate keys: the last one wins.

    Shared values are not copied here, but whatever walks the state later (the snapshot writer,
    a message quoting a taint) expands them: an alias bomb of a few lines would be billions of
    nodes, and the C encoder ran out of stack. So every alias counts the nodes its value expands
    to, and past MAX_EXPANDED_NODES added by aliases in a document the file is refused (kubectl
    never writes an alias).
    """
    documents: list[Any] = []
    anchors: dict[str, Any] = {}
    sizes: dict[str, int] = {}  # anchor -> the events its value expands to
    expanded = 0  # events the aliases of this document add
    open_anchored: set[int] = set()  # ids of the anchored collections still open
    # frames: [container, pending key (mappings), anchor, index of its start event, `expanded` then]
    stack: list[list[Any]] = []
    root: list[Any] = []

    def add(value: Any, event: Any, is_scalar_key: yaml.ScalarEvent | None = None) -> None:
        if not stack:
            root.append(value)
            return
        frame = stack[-1]
        container = frame[0]
        if isinstance(container, list):
            container.append(value)
        elif frame[1] is _NO_KEY:
            if is_scalar_key is None:
                raise _BadYaml("a mapping key is itself a mapping or a list, which JSON cannot hold", event.start_mark)
            frame[1] = _key(is_scalar_key)
            if frame[1] == "<<" and not is_scalar_key.style and is_scalar_key.tag is None:
                frame[1] = _MERGE
        else:
            if frame[1] is _MERGE:
                sources = value if isinstance(value, list) else [value]
                if not all(isinstance(source, dict) for source in sources):
                    raise _BadYaml("a merge key (<<) must hold a mapping or a list of mappings", event.start_mark)
                for source in reversed(sources):
                    container.update(source)
            else:
                container[frame[1]] = value
            frame[1] = _NO_KEY

    event: Any  # dispatched on its exact class below, which is faster than isinstance and opaque to mypy
    for index, event in enumerate(yaml.parse(text, Loader=_BaseLoader)):
        kind = event.__class__
        if kind is yaml.ScalarEvent:
            value = None
            awaiting_key = bool(stack) and isinstance(stack[-1][0], dict) and stack[-1][1] is _NO_KEY
            if not awaiting_key:
                value = _scalar(event)
                if event.anchor:
                    anchors[event.anchor] = value
                    sizes[event.anchor] = 1
            add(value, event, event if awaiting_key else None)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            container: Any = {} if kind is yaml.MappingStartEvent else []
            if stack and isinstance(stack[-1][0], dict) and stack[-1][1] is _NO_KEY:
                raise _BadYaml("a mapping key is itself a mapping or a list, which JSON cannot hold", event.start_mark)
            if event.anchor:
                anchors[event.anchor] = container
                open_anchored.add(id(container))
            stack.append([container, _NO_KEY, event.anchor, index, expanded])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            container, _, anchor, start, expanded_before = stack.pop()
            if anchor:
                open_anchored.discard(id(container))
                sizes[anchor] = index - start + expanded - expanded_before
            add(container, event)
        elif kind is yaml.AliasEvent:
            if event.anchor not in anchors:
                raise _BadYaml(f"found undefined alias {event.anchor!r}", event.start_mark)
            if stack and isinstance(stack[-1][0], dict) and stack[-1][1] is _NO_KEY:
                raise _BadYaml("an alias as a mapping key is not supported in a cluster state", event.start_mark)
            target = anchors[event.anchor]
            if id(target) in open_anchored:
                raise _BadYaml("an alias refers to the collection that contains it", event.start_mark)
            expanded += sizes[event.anchor]
            if expanded > MAX_EXPANDED_NODES:
                raise _BadYaml(
                    f'its aliases expand to more than {MAX_EXPANDED_NODES:,} nodes (an alias bomb, "billion '
                    'laughs"); kubectl never writes aliases: save the state with kubectl or `nodename-lint snapshot`',
                    event.start_mark,
                )
            add(target, event)
        elif kind is yaml.DocumentEndEvent:
            documents.extend(value for value in root if value is not None)
            root.clear()
            anchors.clear()
            sizes.clear()
            expanded = 0
    return documents


_MERGE = object()


_FLOW_ITEMS = "\nitems:\n- {"


def _json_line_items(text: str) -> list[Any] | None:
    """A List whose items are one JSON object per line (`nodename-lint snapshot` writes YAML so).

    Each such line is YAML too, and json.loads reads it many times faster than a YAML parser;
    None when the text has another shape (the YAML loader then reads it all).
    """
    head, separator, rest = text.partition(_FLOW_ITEMS)
    if not separator:
        return None
    try:
        document = _load_yaml(head + "\nitems: []\n")
        items = [json.loads(line[2:]) for line in ("- {" + rest).splitlines() if line.strip()]
    except (ValueError, yaml.YAMLError):
        return None
    if len(document) != 1 or not isinstance(document[0], dict):
        return None
    document[0]["items"] = items
    return document


def _parse(text: str, display: str) -> list[Any]:
    """The documents of the file as plain values; a syntax error is a UsageError with its line."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith(("{", "[")):
        import msgspec  # 1.5x faster than json.loads on a 43 MB state; only its error needs json's line

        try:
            return [msgspec.json.decode(stripped)]
        except (msgspec.DecodeError, RecursionError):  # json.loads below says where, or that it nests too deeply
            pass
        try:
            return [json.loads(stripped)]
        except json.JSONDecodeError as exc:
            line = exc.lineno + text[: len(text) - len(stripped)].count("\n")
            raise UsageError(f"{display}:{line}:{exc.colno}: not a valid JSON cluster state: {exc.msg}") from None
        except RecursionError:
            raise UsageError(f"{display}: not a valid JSON cluster state: nested too deeply") from None
    flow_items = _json_line_items(text)
    if flow_items is not None:
        return flow_items
    try:
        return _load_yaml(text)
    except _BadYaml as exc:
        mark = exc.mark
        raise UsageError(
            f"{display}:{mark.line + 1}:{mark.column + 1}: not a valid YAML cluster state: {exc}"
        ) from None
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
            raise UsageError(f"{display}: document {doc_index + 1} is not a Kubernetes object or List; {SAVE_HINT}")
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
    """`:line:column` of an item (and a path inside it) in the file; '' when it cannot be found.

    The file is composed as the manifests are (documents.iter_documents), so keys read the go-yaml
    way, and the line comes from the same walk as a finding's (yamlnodes.follow).
    """
    from ..documents import iter_documents
    from ..yamlnodes import follow

    documents = [document for document in iter_documents([text]) if document.root is not None]
    if doc_index >= len(documents):
        return ""
    document = documents[doc_index]
    steps: tuple[str | int, ...] = (("items", item_index) if item_index >= 0 else ()) + path
    mark, _ = follow(document.root, steps)
    assert mark is not None
    return f":{document.line_offset + mark.start_mark.line + 1}:{mark.start_mark.column + 1}"


def load_state_text(text: str, source: str) -> ClusterState:
    """A ClusterState from the text of a saved List; `source` names it in messages ("state.yaml")."""
    return _frozen_state(text, source)


def load_state_file(path: str, named: str = "--cluster-state") -> ClusterState:
    """Read `--cluster-state FILE`; any problem is a UsageError (exit code 2).

    A JSON file is handed to the readers as bytes: msgspec decodes UTF-8 itself, and a 43 MB dump
    is not held a second time as text. A big regular file is mapped, not read (see read_state_bytes).
    """
    data = read_state_bytes(path, named, mapped=True)
    if _JSON_OBJECT_BYTES.match(data):
        return _frozen_state(data, path)
    return _frozen_state(_text_of(data if isinstance(data, bytes) else bytes(data), path), path)


# A JSON object's start, found without copying the file as bytes.lstrip() would (a 43 MB dump, twice)
_JSON_OBJECT_BYTES = re.compile(rb"\s*\{")
_JSON_OBJECT_TEXT = re.compile(r"\s*\{")


def _text_of(data: bytes, path: str) -> str:
    from ..documents import decode

    try:
        return decode(data)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{path}:{line}: the cluster state is not UTF-8 or UTF-16 text") from None


def _frozen_state(content: str | bytes | mmap, source: str) -> ClusterState:
    """The state of a file's content (bytes only when it starts as JSON), frozen out of the cyclic GC.

    The state lives as long as the run: once built, it is frozen, since the GC would otherwise
    rescan its millions of containers at every full collection the linting triggers (0.6 s of a
    2.5 s run against 150,000 Pods).
    """
    with without_cycle_collection():
        state = None
        if is_snapshot(content):
            state = load_snapshot(content, source)
        elif _JSON_OBJECT_TEXT.match(content) if isinstance(content, str) else _JSON_OBJECT_BYTES.match(content):
            from .json_dump import state_from_json_dump  # a snapshot does not need its structs

            state = state_from_json_dump(content, source)
        if state is None:
            text = content if isinstance(content, str) else _text_of(bytes(content), source)
            state = _load_state_text(text, source)
        gc.freeze()  # before the GC runs again: its first collection would scan everything built here
    return state


def _load_state_text(text: str, source: str) -> ClusterState:
    documents = _parse(text, source)
    items = _items(documents, source)
    by_kind: dict[str, list[Any]] = {kind: [] for kind in _KINDS}
    for _, _, item in items:
        kind = item.get("kind") if isinstance(item, dict) else None
        if isinstance(kind, str) and kind in by_kind:
            by_kind[kind].append(item)
    try:
        nodes = [node_from_object(node) for node in by_kind["Node"]]  # in this order: the first error is said
        namespaces = [name_of(namespace, "Namespace")[1] for namespace in by_kind["Namespace"]]
        pods = [pod_from_object(pod) for pod in by_kind["Pod"]]
        used = templates_in_use(pods)
        return state_from_kinds(
            source,
            nodes,
            namespaces,
            pods,
            [runtime_class_from_object(runtime_class) for runtime_class in by_kind["RuntimeClass"]],
            [priority_class_from_object(priority_class) for priority_class in by_kind["PriorityClass"]],
            [holder for kind in HOLDER_KINDS for obj in by_kind[kind] if (holder := holder_from_object(obj, used))],
        )
    except StateError as exc:
        found = next(((d, i) for d, i, item in items if item is exc.obj), None)  # the error path may be slow
        where = _locate(text, found[0], found[1], exc.path) if found else ""
        item = f" (items[{found[1]}])" if found and found[1] >= 0 else ""
        raise UsageError(f"{source}{where}: bad cluster state{item}: {exc}") from None


MAX_STATE_BYTES = 1 << 30  # 1 GiB: about 25 times a 150,000-Pod cluster saved as JSON
MAPPED_BYTES = 1 << 24  # 16 MiB: below it, reading costs less than mapping and unmapping


@overload
def read_state_bytes(path: str, named: str = ..., mapped: Literal[False] = ...) -> bytes: ...
@overload
def read_state_bytes(path: str, named: str = ..., *, mapped: bool) -> bytes | mmap: ...
def read_state_bytes(path: str, named: str = "--cluster-state", mapped: bool = False) -> bytes | mmap:
    """The bytes of a state file: a regular file or a pipe (`<(kubectl get ...)`), at most MAX_STATE_BYTES.

    `mapped`: a regular file of MAPPED_BYTES or more comes back mapped, not read: reading a 570 MB dump
    into memory cost as much CPU as decoding half of it (a page fault for each page of the copy), and
    msgspec decodes from the mapping as from bytes (the raw values it keeps point into it). The mapping
    is copy-on-write: json_dump writes the brackets of each piece of items it decodes into the process's
    own copy of those pages, puts the bytes back, and the file is never written (read-only where the
    system refuses a private writable mapping of the file's size, as a strict overcommit limit may).

    A device (/dev/zero) is refused before it is read, and a pipe that keeps going is cut off at the cap
    rather than read until the machine runs out of memory. A path reached through a symlink of a repository
    that leads out of it is not read: the flag (or the editor's setting) is the user's, the link the
    repository's (`state.yaml -> ~/.kube/config`, whose node names a did-you-mean would quote).
    """
    import stat

    limit = f"more than {MAX_STATE_BYTES:,} bytes, the limit for a cluster state"
    refuse_link_out_of_repository(path, named)
    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
                from ..render.sandbox import file_kind  # startup: the renderers' module, for a special file alone

                raise UsageError(f"{path}: not a cluster state: it is {file_kind(mode)}, not a file")
            first = b""
            if stat.S_ISREG(mode):
                size = os.fstat(handle.fileno()).st_size
                if size > MAX_STATE_BYTES:
                    raise UsageError(f"{path}: the cluster state is {limit}")
                if mapped and size >= MAPPED_BYTES:
                    try:  # the mapping outlives the file handle
                        return mmap(handle.fileno(), 0, access=ACCESS_COPY)
                    except OSError:  # a private writable mapping counts against a strict overcommit limit
                        return mmap(handle.fileno(), 0, access=ACCESS_READ)  # decoded whole, then
                first = handle.read(size)  # in one piece: joining blocks copied a 43 MB dump once more
            blocks, size = [first], len(first)
            while block := handle.read(1 << 20):  # a pipe (or a growing file): read(cap) would reserve the cap
                size += len(block)
                if size > MAX_STATE_BYTES:
                    raise UsageError(f"{path}: the cluster state is {limit}")
                blocks.append(block)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the cluster state: {exc.strerror or exc}") from None
    return first if len(blocks) == 1 else b"".join(blocks)
