"""The kubectl JSON dump fast path (cluster/json_dump.py): the same state as the generic reader, or none.

Every case reads one file both ways: the typed msgspec path and the generic one (the YAML/JSON
reader every other file goes through). The fast path must build the identical state, or return
None so that the generic reader gives its exact message; it must never be a second judge.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodename_lint.cluster.from_file import _load_state_text, load_state_file
from nodename_lint.cluster.json_dump import state_from_json_dump
from nodename_lint.cluster.state import ClusterState
from nodename_lint.cluster.templates import digest
from nodename_lint.sources import UsageError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from cluster_scale import node, pod  # noqa: E402  (the benchmark's own generator)


def _example_objects() -> list[dict[str, Any]]:
    documents = list(yaml.safe_load_all((ROOT / "examples" / "cluster" / "state.yaml").read_text()))
    return [item for document in documents for item in document.get("items", [document])]


def _dump(items: list[Any], kind: str = "List") -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": kind, "items": items}).encode()


_CONTAINER_FIELDS = ("resources", "ports", "restartPolicy")
_SPEC_FIELDS = ("nodeName", "overhead", "resources", "hostNetwork", "priority", "priorityClassName")


def _read_by_rules(spec: dict[str, Any]) -> dict[str, Any]:
    """What scheduling.py reads of a running Pod's spec (usage sums, host ports): the fast path keeps
    these and skips the rest (images, env, volumes...)."""
    kept = {key: spec[key] for key in _SPEC_FIELDS if key in spec}
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            kept[key] = [
                {k: c[k] for k in _CONTAINER_FIELDS if k in c} if isinstance(c, dict) else c for c in spec[key]
            ]
        elif key in spec:
            kept[key] = spec[key]
    return kept


def _as_data(state: ClusterState) -> dict[str, Any]:
    """Everything a rule can read from a state, as plain data (usage first: it reads a JSON dump's
    specs as loaded, before anything makes them plain values)."""
    nodes = state.nodes or {}
    usage = {name: state.usage(name) for name in nodes}
    pods = [
        (p.namespace, p.name, p.node_name, p.phase, p.owner, p.template, _read_by_rules(p.spec))
        for p in state.pods or ()
    ]
    return {
        "usage": usage,
        "source": state.source,
        "nodes": nodes,
        "namespaces": state.namespaces,
        "pods": pods if state.pods is not None else None,
        "runtime_classes": state.runtime_classes,
        "priority_classes": state.priority_classes,
        "running": {name: state.running_pods(name) for name in nodes},  # annotations, start, QoS, priority
        "unavailable": state.unavailable,
        "pod_nodes": state.pod_nodes,
        "by_node": {node: [(p.namespace, p.name) for p in pods] for node, pods in state._pods_by_node().items()},
        "ports": {name: state.ports_in_use(name) for name in nodes},
        "templates": {  # a template is kept as JSON until compared: the same digest, whatever the bytes
            namespace: {key: (info.workload, digest(info)) for key, info in held.items()}
            for namespace, held in (state.templates or {}).items()
        },
        "workloads": {  # each workload's running Pods by controller, as a rollout prediction reads them
            (namespace, workload): [
                ([(p.namespace, p.name) for p in group], certain)
                for group, certain in state.workload_pods(namespace, workload)
            ]
            for namespace in sorted({p.namespace for p in state.pods or ()})
            for workload in state.running_workloads(namespace)
        },
    }


def _both_ways(data: bytes) -> tuple[ClusterState | None, ClusterState]:
    return state_from_json_dump(data, "dump.json"), _load_state_text(data.decode(), "dump.json")


def _rich_cluster() -> list[dict[str, Any]]:
    """The example cluster plus what real dumps hold: managedFields, statuses, terminated Pods,
    Pods without a namespace or a node, init containers, host ports, other kinds."""
    rng = random.Random(7)
    items = _example_objects() + [node(i) for i in range(30)]
    for index in range(300):
        item = pod(index, 30, rng)
        item["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
        item["metadata"]["labels"] = {"app": f"a{index % 7}"}
        item["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        if index % 10 == 0:
            item["status"]["phase"] = rng.choice(["Succeeded", "Failed", "Pending"])
        if index % 11 == 0:
            del item["metadata"]["namespace"]
        if index % 13 == 0:
            del item["spec"]["nodeName"]
        if index % 17 == 0:
            item["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "2"}}}]
        if index % 19 == 0:
            item["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8000 + index}]
        if index % 23 == 0:
            del item["status"]
        if index % 29 == 0:  # a sidecar with a host port, fields the fast path skips, nulls it keeps
            item["spec"]["initContainers"] = [
                {
                    "name": "proxy",
                    "restartPolicy": "Always",
                    "image": "envoy",
                    "env": [{"name": "A", "value": "1"}],
                    "ports": [{"containerPort": 15001, "hostPort": 15001}],
                    "resources": {"requests": {"cpu": "1"}},
                }
            ]
            item["spec"]["volumes"] = [{"name": "v", "emptyDir": {}}]
            item["spec"]["overhead"] = {"cpu": "250m"}
        if index % 31 == 0:
            item["spec"]["hostNetwork"] = True
            item["spec"]["containers"].append({"name": "bare", "resources": None, "ports": None})
            item["spec"]["resources"] = {"requests": {"cpu": "3"}, "limits": {"cpu": "4", "memory": "1Gi"}}
        if index % 37 == 0:
            item["spec"]["initContainers"] = None
        if index % 41 == 0:  # a workload's Pods: the controller and the revision that holds their template
            owner = ("StatefulSet", "db") if index % 2 else ("DaemonSet", "agent")
            item["metadata"]["ownerReferences"] = [
                {"kind": "Other", "name": "x", "controller": False},
                {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "u", "controller": True},
            ]
            item["metadata"]["labels"]["controller-revision-hash"] = "db-5f7c9" if index % 2 else 7
        if index % 43 == 0:
            reference = {"kind": "ReplicaSet", "name": "web-5d8f7c9b6d", "controller": "yes"}  # not a controller
            item["metadata"]["ownerReferences"] = [reference]
        if index % 3 == 0:  # what preemption reads: priority, mirror annotations, start time, QoS class
            item["spec"]["priority"] = rng.choice([0, 1000, 2000000000])
            item["spec"]["priorityClassName"] = "batch-high"
            item["metadata"]["annotations"] = rng.choice(
                [{"kubernetes.io/config.mirror": "x", "kubernetes.io/config.source": "file"}, {"note": "y"}, None]
            )
            if "status" in item:
                item["status"]["startTime"] = f"2026-01-01T00:00:{index % 60:02d}Z"
                item["status"]["qosClass"] = rng.choice(["Burstable", "BestEffort"])
        items.append(item)
    items.append(
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": "db-5f7c9",
                "namespace": "team-1",  # where Pod app-41 of StatefulSet db runs from it
                "ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": True}],
            },
            "data": {"spec": {"template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": []}}}},
            "revision": 2,
        }
    )
    items.append({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "bare"}, "data": 3})
    items.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"x": [1]}})
    items.append(
        {
            "kind": "RuntimeClass",
            "metadata": {"name": "kata"},
            "handler": "kata",
            "overhead": {"podFixed": {"cpu": "250m"}},
        }
    )
    items.append(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "batch-high"},
            "value": 1000,
            "globalDefault": False,
            "preemptionPolicy": "Never",
        }
    )
    return items


def test_a_rich_dump_reads_the_same_both_ways() -> None:
    fast, generic = _both_ways(_dump(_rich_cluster()))
    assert fast is not None
    assert _as_data(fast) == _as_data(generic)
    assert fast.runtime_classes and "kata" in fast.runtime_classes  # the comparison covers every kind
    assert fast.templates and "ControllerRevision/db-5f7c9" in fast.templates["team-1"]
    assert {p.template for p in fast.pods or ()} >= {"ControllerRevision/db-5f7c9", "ReplicaSet/web-5d8f7c9b6d"}
    assert fast.priority_classes and fast.priority_classes["batch-high"].preemption_policy == "Never"
    running = [pod for name in fast.nodes or () for pod in fast.running_pods(name) or ()]
    assert any(pod.critical and pod.priority < 2000000000 for pod in running)  # a mirror Pod
    assert any(pod.start_time for pod in running) and {pod.qos for pod in running} >= {"BestEffort", "Burstable"}


@pytest.mark.parametrize(
    "items",
    [
        pytest.param([node(0)], id="nodes only: namespaces, Pods and RuntimeClasses unavailable"),
        pytest.param(
            [node(0), {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "status": None}], id="null status"
        ),
        pytest.param([node(0), {"kind": None, "metadata": {"name": "x"}}], id="null kind is no kind"),
        pytest.param(
            [{**node(0), "metadata": {"name": "n", "labels": {"zone": "a", "n": 1, "b": True}}}],
            id="labels as kubectl sends them",
        ),
    ],
)
def test_small_shapes_read_the_same_both_ways(items: list[Any]) -> None:
    fast, generic = _both_ways(_dump(items))
    assert fast is not None
    assert _as_data(fast) == _as_data(generic)


def test_items_of_a_typed_list_take_its_kind() -> None:
    """`kind: NodeList` (the API's own List): its items carry no kind; an explicit one wins, and an
    explicit null is no kind (the generic reader skips that item)."""
    untyped = {key: value for key, value in node(1).items() if key != "kind"}
    fast, generic = _both_ways(_dump([untyped, node(2), {**node(3), "kind": None}], kind="NodeList"))
    assert fast is not None and fast.nodes is not None
    assert sorted(fast.nodes) == ["node-00001", "node-00002"]
    assert _as_data(fast) == _as_data(generic)


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([node(0), {"kind": "Pod", "metadata": "p", "spec": {}}], "metadata is not a mapping"),
        ([node(0), {"kind": "Pod", "metadata": {"namespace": "a"}, "spec": {}}], "a Pod has no metadata.name"),
        ([{**node(0), "spec": {"taints": "none"}}], "spec.taints is not a list of mappings"),
        (  # the rules hash a taint's key: a list as a key was an internal error of untolerated-taint (fuzzer)
            [{**node(0), "spec": {"taints": [{"key": [None], "effect": "NoSchedule"}]}}],
            r"Node node-00000: spec.taints\[0\].key is not a string",
        ),
        ([node(0), {"kind": "Namespace", "metadata": {"name": 5}}], "a Namespace has no metadata.name"),
        (
            [node(0), {"kind": "Pod", "metadata": {"name": "p", "namespace": 3}, "spec": {}}],
            "metadata.namespace is not a string",
        ),
    ],
)
def test_a_bad_item_is_left_to_the_generic_reader_and_its_line(tmp_path: Path, items: list[Any], message: str) -> None:
    data = json.dumps({"kind": "List", "items": items}, indent=1).encode()
    assert state_from_json_dump(data, "dump.json") is None
    path = tmp_path / "dump.json"
    path.write_bytes(data)
    with pytest.raises(UsageError, match=message) as raised:
        load_state_file(str(path))
    assert str(raised.value).startswith(f"{path}:")  # a line and column


def test_a_pod_without_spec_is_read_by_the_generic_reader(tmp_path: Path) -> None:
    """The generic reader takes a missing spec as empty; the fast path hands such a file over."""
    data = _dump([node(0), {"kind": "Pod", "metadata": {"name": "p"}}])
    assert state_from_json_dump(data, "dump.json") is None
    path = tmp_path / "dump.json"
    path.write_bytes(data)
    state = load_state_file(str(path))
    assert [(p.namespace, p.name, p.node_name) for p in state.pods or ()] == [("default", "p", None)]


def test_bytes_that_are_not_utf8_get_the_encoding_message_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "dump.json"
    path.write_bytes(b'{"kind": "List",\n "items": [\n{"kind": "Node", "metadata": {"name": "n\xff"}}]}')
    with pytest.raises(UsageError, match=r"dump\.json:3: the cluster state is not UTF-8"):
        load_state_file(str(path))


def test_a_file_read_as_bytes_gives_the_same_state_as_its_text(tmp_path: Path) -> None:
    """load_state_file hands JSON over as bytes, a BOM or UTF-16 file as text: both reach the fast path."""
    items = _rich_cluster()
    plain, utf16 = tmp_path / "plain.json", tmp_path / "utf16.json"
    plain.write_bytes(_dump(items))
    utf16.write_bytes(_dump(items).decode().encode("utf-16"))
    from_bytes, from_text = load_state_file(str(plain)), load_state_file(str(utf16))
    assert from_bytes.pods and from_bytes._by_node is not None  # indexed while loading: the fast path
    assert from_text._by_node is not None
    assert {**_as_data(from_bytes), "source": ""} == {**_as_data(from_text), "source": ""}


def test_an_item_whose_kind_is_not_a_string_is_skipped(tmp_path: Path) -> None:
    """Neither reader takes it for a Node or a Pod; the generic one used to crash on an unhashable kind."""
    path = tmp_path / "dump.json"
    path.write_bytes(_dump([node(0), {"kind": ["Pod"], "metadata": {"name": "p"}, "spec": {}}, {"kind": 5}]))
    state = load_state_file(str(path))
    assert list(state.nodes or ()) == ["node-00000"] and state.pods is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n"}}, {"kind": "Pod", "metadata": '
            '{"name": "p"}, "spec": {"containers": [{"resources": ' + "[" * 200_000 + "]" * 200_000 + "}]}}]}",
            "not a valid JSON cluster state: nested too deeply",
        ),
        (
            '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"a": '
            + "[" * 200_000
            + "]" * 200_000
            + "}}}]}",
            "not a valid JSON cluster state: nested too deeply",
        ),
        (
            '{"format": "nodename-lint.io/cluster-snapshot", "version": 2, "source": "x", "nodes": [], "usage": {}, '
            '"ports": {}, "namespaces": [], "pods": {"default": ' + "[" * 200_000 + "]" * 200_000 + "}, "
            '"podNodes": null, "runtimeClasses": null, "unavailable": {}}',
            "not a valid nodename-lint cluster snapshot: nested too deeply",
        ),
    ],
    ids=["a dump's Pod spec", "a dump's Node labels", "a snapshot's Pod table"],
)
def test_a_state_nested_too_deeply_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    """msgspec raises RecursionError, not DecodeError, past its depth: still the file's error, no traceback."""
    path = tmp_path / "state.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        load_state_file(str(path))


def test_a_dumps_pods_of_one_spec_are_summed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pod with init containers, overhead or pod-level resources takes the full PodRequests; a JSON
    dump's Pods are looked up by what it reads of them (`_Spec.usage_key`), so the replicas of a
    workload are summed once, from their containers' resources as the file has them (each distinct
    block parsed once), with the same usage as the generic reader's."""
    from nodename_lint import scheduling

    rng = random.Random(26)
    items: list[Any] = [node(0)]
    for index in range(60):
        item = pod(index, 1, rng)
        spec = item["spec"]
        spec["containers"][0]["resources"] = {"requests": {"cpu": "100m"}, "limits": {"memory": "64Mi"}}
        spec["containers"][0]["env"] = [{"name": "POD", "value": f"p{index}"}]  # not read: not in the key
        spec["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": f"{1 + index % 2}"}}}]
        if index % 3 == 0:
            spec["initContainers"][0]["restartPolicy"] = "Always"
        if index % 5 == 0:  # limits standing in for requests, after the sidecar
            spec["initContainers"].append({"name": "setup", "resources": {"limits": {"memory": "1Gi"}}})
        items.append(item)
    summed: list[Any] = []
    generic_sums: list[Any] = []

    def counted(*arguments: Any) -> dict[str, Any]:
        summed.append(arguments)
        return aggregate_requests(*arguments)

    def counted_generic(spec: dict[str, Any], **options: Any) -> dict[str, int]:
        generic_sums.append(spec)
        return pod_requests(spec, **options)

    aggregate_requests, pod_requests = scheduling.aggregate_requests, scheduling.pod_requests
    monkeypatch.setattr(scheduling, "aggregate_requests", counted)
    monkeypatch.setattr(scheduling, "pod_requests", counted_generic)
    monkeypatch.setattr(scheduling, "_DUMP_REQUESTS", {})
    monkeypatch.setattr(scheduling, "_STORED_REQUESTS", {})
    fast, generic = _both_ways(_dump(items))
    assert fast is not None
    assert fast.usage("node-00000") == generic.usage("node-00000")
    assert len(generic_sums) == 60  # the generic reader's Pods; the dump's never make their spec plain values
    distinct_specs = 2 * 2 * 2  # init cpu 1 or 2, sidecar or not, with setup or not (all combinations occur)
    assert len(summed) == 60 + distinct_specs
    assert len(scheduling._STORED_REQUESTS) == 4  # the container's block, init cpu 1 and 2, setup


def test_host_ports_are_found_in_the_bytes_however_the_key_is_spelled() -> None:
    """A dump's spec stays structs unless a container may name a hostPort; a key spelled with a JSON
    escape (`host\\u0050ort`) is the same key, and its port is still in use on the node."""
    items: list[Any] = [node(0)]
    for index, ports in enumerate(
        [
            [{"containerPort": 80, "hostPort": 8080}],
            [{"containerPort": 81, "hostPORT_": 8081}],  # not the key: not a host port
            [{"containerPort": 9100}],
            [{"containerPort": 443, "hostPort": 8443, "protocol": "UDP", "hostIP": "10.0.0.1"}],
        ]
    ):
        item = pod(index, 1, random.Random(index))
        item["spec"]["containers"][0]["ports"] = ports
        items.append(item)
    escaped = _dump(items).replace(b'"hostPort": 8443', b'"host\\u0050ort": 8443')
    assert b"host\\u0050ort" in escaped
    fast, generic = _both_ways(escaped)
    assert fast is not None
    assert fast.port_holders("node-00000") == generic.port_holders("node-00000")
    assert {port for port, _ in fast.port_holders("node-00000")} == {
        ("0.0.0.0", "TCP", 8080),
        ("10.0.0.1", "UDP", 8443),
    }
    plain = [pod.name for pod in fast.pods or () if pod.loaded_spec.__class__ is dict]
    assert len(plain) == 2  # the Pods without a hostPort were never made plain values


def test_a_dumps_plain_pods_are_summed_once_for_each_set_of_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pods without init containers, overhead or pod-level resources are looked up by their containers'
    resources as the file has them: each distinct set is decoded and parsed once, the usage the same."""
    from nodename_lint import scheduling

    items: list[Any] = [node(0)]
    blocks = [{"requests": {"cpu": "100m"}}, {"requests": {"cpu": "0.25", "memory": "1Gi"}, "limits": {"cpu": 1}}, {}]
    for index in range(60):
        item = pod(index, 1, random.Random(index))
        item["spec"]["containers"] = [
            {"name": "app", "image": "i", "resources": blocks[index % 3]},
            {"name": "side", "image": "i", "resources": blocks[(index // 3) % 2]},
        ]
        item["spec"].pop("initContainers", None)
        items.append(item)
    monkeypatch.setattr(scheduling, "_DUMP_REQUESTS", {})
    fast, generic = _both_ways(_dump(items))
    assert fast is not None
    assert fast.usage("node-00000") == generic.usage("node-00000")
    assert len(scheduling._DUMP_REQUESTS) == 3 * 2
    assert all(pod.loaded_spec.__class__ is not dict for pod in fast.pods or ())  # no spec made plain values


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"metadata": {"name": "p", "ownerReferences": {"kind": "ReplicaSet"}}}, id="references an object"),
        pytest.param({"metadata": {"name": "p", "ownerReferences": [1]}}, id="a reference not an object"),
        pytest.param(
            {"metadata": {"name": "p", "ownerReferences": [{"kind": "ReplicaSet", "name": {}, "controller": True}]}},
            id="a reference's name an object",
        ),
        pytest.param({"spec": {"nodeName": "node-00000", "containers": [{"resources": "x"}]}}, id="resources a string"),
        pytest.param({"spec": {"nodeName": "node-00000", "containers": [{"ports": {"a": 1}}]}}, id="ports an object"),
        pytest.param({"spec": {"nodeName": "node-00000", "containers": 3}}, id="containers a number"),
    ],
)
def test_odd_shapes_never_raise_and_read_as_the_generic_reader_reads_them(change: dict[str, Any]) -> None:
    """The fast path returns None (the generic reader then says what is wrong) or the generic reader's state;
    it never raises (a dump whose ownerReferences was an object raised a traceback from the loading loop)."""
    item: dict[str, Any] = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "node-00000"}}
    item.update(change)
    data = _dump([node(0), item])
    fast = state_from_json_dump(data, "dump.json")
    generic = _load_state_text(data.decode(), "dump.json")
    if fast is not None:
        assert _as_data(fast) == _as_data(generic)
        assert fast.usage("node-00000") == generic.usage("node-00000")
        assert fast.port_holders("node-00000") == generic.port_holders("node-00000")


_BIG, _SURROGATE = "@1e999@", "@lone surrogate@"  # written in as JSON that msgspec refuses and json reads


def _with_odd_json(items: list[Any]) -> bytes:
    """A dump holding 1e999 (json reads inf) and a lone surrogate's escape where the items say so."""
    return _dump(items).replace(f'"{_BIG}"'.encode(), b"1e999").replace(_SURROGATE.encode(), b"\\ud800")


@pytest.mark.parametrize(
    "where",
    ["requests", "limits", "annotations", "allocatable", "labels", "conditions", "template", "taint"],
)
@pytest.mark.parametrize("odd", [_BIG, _SURROGATE])
def test_json_that_msgspec_refuses_reads_as_the_generic_reader_reads_it(where: str, odd: str) -> None:
    """A number past a float's range or a lone surrogate is valid JSON that msgspec refuses and json reads (as
    inf, as the surrogate). The fast path keeps much of a Pod raw and reads it when a rule asks: it read such a
    value as nothing, or raised while a rule read it (an internal error, found by a mutation fuzzer)."""
    rng = random.Random(5)
    items: list[Any] = [node(0), node(1)]
    running = pod(0, 1, rng)
    running["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web-1", "controller": True}]
    container = running["spec"]["containers"][0]
    replicaset = {
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": running["metadata"]["namespace"]},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }
    if where in ("requests", "limits"):
        container["resources"] = {"requests": {"cpu": "100m"}, where: {"memory": odd}}
    elif where == "annotations":
        running["metadata"]["annotations"] = {"note": odd, "kubernetes.io/config.mirror": "x"}
        running["spec"]["priority"] = 1
    elif where == "template":
        replicaset["spec"]["template"]["spec"]["containers"][0]["image"] = odd
    elif where == "taint":
        items[0]["spec"] = {"taints": [{"key": "k", "value": odd, "effect": "NoSchedule"}]}
    else:
        block = items[0]["metadata"] if where == "labels" else items[0]["status"]
        if where == "conditions":
            block[where].append({"type": "Odd", "status": "True", "message": odd})
        else:
            block[where] = {**block[where], "odd": odd}
    items += [running, replicaset]
    data = _with_odd_json(items)
    fast, generic = _both_ways(data)
    if odd == _SURROGATE or where == "taint":  # in what the List's decoding reads: the generic reader reads the file
        assert fast is None
    else:  # kept raw, read when a rule asks
        assert fast is not None
        assert _as_data(fast) == _as_data(generic)


def test_bytes_that_are_not_utf8_in_a_pod_read_late_are_the_files_error(tmp_path: Path) -> None:
    """The List's decoding checks the syntax of what it keeps raw, not its encoding, so bytes that are not
    UTF-8 inside a Pod's resources surface when a rule sums them: the run exits 2 naming the file and the Pod
    (it was an internal error of the rule), as the generic reader refuses the file."""
    from click.testing import CliRunner

    from nodename_lint.cli import main

    rng = random.Random(5)
    running = pod(0, 1, rng)
    running["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "@bad@"}}
    state = tmp_path / "dump.json"
    state.write_bytes(_dump([node(0), running]).replace(b"@bad@", b"1\xff"))
    manifest = tmp_path / "pinned.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nspec:\n  nodeName: node-00000\n"
        "  containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n"
    )
    for command in ([str(manifest)], ["snapshot", "-o", str(tmp_path / "snap.json")]):
        result = CliRunner().invoke(main, [*command, "--cluster-state", str(state)])
        assert result.exit_code == 2, result.output
        pod_name = f"{running['metadata']['namespace']}/{running['metadata']['name']}"
        assert result.output.strip().endswith(
            f"{state}: not a valid cluster state: the spec of Pod {pod_name} is not UTF-8 or UTF-16 text"
        ), result.output
        assert "Traceback" not in result.output and "internal error" not in result.output


@pytest.mark.parametrize(
    "metadata",
    [
        pytest.param({"name": "web-1", "namespace": [["default"]]}, id="namespace a list"),
        pytest.param({"name": "web-1", "namespace": 3}, id="namespace a number"),
        pytest.param({"name": ["web-1"], "namespace": "default"}, id="name a list"),
        pytest.param({"name": 1, "namespace": "default"}, id="name a number"),
    ],
)
def test_a_template_holder_of_odd_metadata_is_skipped_as_the_generic_reader_skips_it(metadata: dict[str, Any]) -> None:
    """A ReplicaSet whose namespace was a list raised while the holders were matched with the running Pods'
    templates (unhashable; found by tests/test_state_mutations.py)."""
    running = pod(0, 1, random.Random(3))
    running["metadata"].update(
        namespace="default", ownerReferences=[{"kind": "ReplicaSet", "name": "web-1", "controller": True}]
    )
    template = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    holder = {"kind": "ReplicaSet", "metadata": metadata, "spec": {"template": template}}
    fast, generic = _both_ways(_dump([node(0), running, holder]))
    assert fast is not None
    assert _as_data(fast) == _as_data(generic)


def _workload_groups(state: ClusterState, namespace: str, workload: str) -> list[tuple[list[str], bool]]:
    return [([pod.name for pod in group], certain) for group, certain in state.workload_pods(namespace, workload)]


@pytest.mark.parametrize("twice", [False, True], ids=["names unique", "a Pod's name twice"])
def test_a_workloads_pods_are_the_generic_readers(twice: bool) -> None:
    """The loading loop indexes the running Pods by controller; a workload's Pods are the ones the generic
    reader's state finds, also when a dump holds one name twice in a namespace (the last one counts)."""
    items = _rich_cluster()
    if twice:
        copy = json.loads(json.dumps(next(item for item in items if item.get("kind") == "Pod")))
        copy["spec"]["nodeName"] = "node-00001"
        items.append(copy)
    fast, generic = _both_ways(_dump(items))
    assert fast is not None
    workloads = {
        (pod.namespace, f"Deployment/{pod.owner.split('/')[1].rpartition('-')[0]}")
        if pod.owner.startswith("ReplicaSet/")
        else (pod.namespace, pod.owner)
        for pod in generic.pods or ()
        if pod.owner is not None
    }
    found = 0
    for namespace, workload in sorted(workloads):
        expected = _workload_groups(generic, namespace, workload)
        assert _workload_groups(fast, namespace, workload) == expected, workload
        found += bool(expected)
    assert found >= 3  # the comparison covers Deployments, StatefulSets and DaemonSets of the rich cluster


def test_a_big_state_file_is_mapped_and_reads_as_when_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A regular state file of MAPPED_BYTES or more is mapped, not read: the state (records, usage, host
    ports, a Pod's spec made plain values) is the one the same file gives read into memory. Its items are
    decoded in pieces, in the mapping's own copy: the file itself is never written."""
    from mmap import mmap

    from nodename_lint.cluster import from_file, json_dump

    path = tmp_path / "dump.json"
    path.write_bytes(_kubectl_json(_rich_cluster(), "kubectl"))
    written = path.read_bytes()
    read = load_state_file(str(path))
    monkeypatch.setattr(from_file, "MAPPED_BYTES", 1)
    monkeypatch.setattr(json_dump, "_PIECE_BYTES", 2_000)
    assert isinstance(from_file.read_state_bytes(str(path), mapped=True), mmap)
    assert isinstance(from_file.read_state_bytes(str(path)), bytes)  # only the callers that asked for it
    mapped = load_state_file(str(path))
    assert _as_data(mapped) == _as_data(read)
    for name in read.nodes or ():
        assert mapped.usage(name) == read.usage(name) and mapped.port_holders(name) == read.port_holders(name)
    assert [pod.spec for pod in mapped.pods or ()] == [pod.spec for pod in read.pods or ()]
    assert mapped._decoded is None and read._decoded is not None  # in pieces, and whole
    assert path.read_bytes() == written


_ODD_CONTAINERS: list[Any] = [3, "x", [1], [None], [[]], {"name": "a"}, [{"name": "a"}, 2]]


def _random_container(rng: random.Random, index: int) -> Any:
    """A container of any shape a dump may hold: resources and ports of every kind, a host port in the
    ports or only in the text of an env value, JSON escapes, restart policies."""
    if rng.random() < 0.05:
        return rng.choice([1, "c", None, []])
    container: dict[str, Any] = {"name": f"c{index}", "image": f"registry/i:{rng.randrange(3)}"}
    resources = rng.choice(
        [
            {"requests": {"cpu": f"{rng.choice((50, 100, 250))}m", "memory": rng.choice(("64Mi", "1Gi"))}},
            {"limits": {"cpu": "1", "memory": "128Mi"}},
            {"requests": {"cpu": "2", "example.com/gpu": 1}, "limits": {"cpu": "3"}},
            {},
            None,
            "x",
            [1],
            {"requests": "cpu"},
        ]
    )
    if rng.random() < 0.9:
        container["resources"] = resources
    ports = rng.choice(
        [
            [{"containerPort": 80}],
            [{"containerPort": 80, "hostPort": 8000 + rng.randrange(4)}],
            [{"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}],
            None,
            {"a": 1},
            [2],
        ]
    )
    if rng.random() < 0.7:
        container["ports"] = ports
    if rng.random() < 0.3:
        container["env"] = [{"name": "NOTE", "value": rng.choice(["hostPort", "a\\b", "\u00e9", "plain"])}]
    if rng.random() < 0.4:
        container["restartPolicy"] = rng.choice(["Always", "Never", 5, None])
    return container


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _random_containers(rng: random.Random) -> Any:
    if rng.random() < 0.08:
        return rng.choice(_ODD_CONTAINERS)
    return [_random_container(rng, index) for index in range(rng.randrange(4))]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_dumps_pods_of_random_containers_read_as_the_generic_reader_reads_them(seed: int) -> None:
    """On random Pods (containers and init containers of many shapes, host ports spelled with escapes, overhead
    and pod-level resources) the fast path's state is the generic reader's: usage, host ports, the Pods as
    preemption weighs them, each Pod's spec made plain values, Pods whose containers are not a list of
    mappings among them (their specs are then read as plain values, as the generic reader reads them)."""
    rng = random.Random(seed)
    items: list[Any] = [node(index) for index in range(6)]
    for index in range(240):
        item = pod(index, 6, rng)
        spec = item["spec"]
        for key in ("containers", "initContainers"):
            if rng.random() < (0.9 if key == "containers" else 0.4):
                spec[key] = _random_containers(rng)
            else:
                spec.pop(key, None)
        if rng.random() < 0.1:
            spec["overhead"] = {"cpu": "100m"}
        if rng.random() < 0.1:
            spec["resources"] = {"requests": {"memory": "1Gi"}}
        items.append(item)
    assert any(_odd_pod(item) for item in items if item.get("kind") == "Pod")
    escaped = (b'"hostPort": 8003', b'"host\\u0050ort": 8003')  # the same key, escaped
    fast, generic = _both_ways(_dump(items).replace(*escaped))
    assert fast is not None  # odd Pods too: their specs read as plain values
    for name in fast.nodes or ():
        assert fast.port_holders(name) == generic.port_holders(name)
    assert _as_data(fast) == _as_data(generic)
    assert any(fast.port_holders(name) for name in fast.nodes or ())


def _odd_pod(item: dict[str, Any]) -> bool:
    """A Pod whose containers or init containers are not a list of mappings (nor null)."""
    listed = [item["spec"].get(key, []) for key in ("containers", "initContainers")]
    return any(value is not None and not (isinstance(value, list) and all(map(_is_dict, value))) for value in listed)


def _random_node(rng: random.Random, index: int) -> dict[str, Any]:
    """A Node of any shape a dump may hold: labels of every type, conditions and nodeInfo that are or are not
    what the records read (items that are not mappings, no type, extra fields, not a list or a mapping)."""
    item = node(index)
    labels: dict[str, Any] = {f"k{key}": f"v{rng.randrange(3)}" for key in range(rng.randrange(5))}
    if rng.random() < 0.2:
        labels["odd"] = rng.choice([1, True, None, 2.5, "\u00e9", "", {"a": 1}])
    item["metadata"]["labels"] = labels if rng.random() < 0.9 else rng.choice([None, "x"])
    condition = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ok", "lastHeartbeatTime": "t"}
    item["status"]["conditions"] = rng.choice(
        [
            [condition, {"type": "MemoryPressure", "status": "False"}],
            [{"status": "True"}, {"type": "", "status": "True"}, {"type": "DiskPressure"}, {"type": 5, "status": None}],
            [condition, 3, "x", None],
            [],
            None,
        ]
        if rng.random() < 0.9
        else [{"type": "Ready"}, "Ready"]
    )
    item["status"]["nodeInfo"] = rng.choice(
        [{"operatingSystem": "linux", "kernelVersion": "6"}, {"operatingSystem": 7}, {}, None]
        if rng.random() < 0.9
        else [["linux"], "linux"]
    )
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    spec = rng.choice([{}, {"taints": [taint]}, {"taints": []}, {"taints": None}, {"unschedulable": True}])
    if rng.random() < 0.1:
        spec = rng.choice([{"taints": [taint, "x"]}, {"taints": {}}, {"taints": "x"}, {"unschedulable": "true"}, None])
    if spec is None:
        del item["spec"]
    else:
        item["spec"] = spec
    if rng.random() < 0.1:
        item["status"]["allocatable"] = rng.choice([None, {}, {"cpu": 4, "pods": None}, ["cpu"], "4"])
    if rng.random() < 0.05:
        item["metadata"]["name"] = rng.choice(["", None, 5])
    if rng.random() < 0.05:
        del item["status"]
    return item


@pytest.mark.parametrize("seed", range(6))
def test_a_dumps_nodes_read_from_what_the_records_read_are_the_generic_readers(seed: int) -> None:
    """A dump's Nodes are read from their conditions' types and statuses and nodeInfo's operatingSystem alone (not
    the times and messages), their labels checked for strings at once: on random Nodes of every shape the state
    is the generic reader's, or none when the generic reader refuses the file (which then says why)."""
    rng = random.Random(seed)
    for _ in range(30):
        data = _dump([_random_node(rng, index) for index in range(rng.randrange(1, 4))])
        fast = state_from_json_dump(data, "dump.json")
        try:
            generic = _load_state_text(data.decode(), "dump.json")
        except UsageError:
            assert fast is None
            continue
        assert fast is not None
        assert _as_data(fast) == _as_data(generic)


@pytest.mark.parametrize("seed", range(3))
def test_labels_of_strings_are_read_as_one_by_one(seed: int) -> None:
    """objects._strings takes a mapping of strings whole (checked in C); on random mappings it gives what
    reading each key and value gives (other types as kubectl sends them, a list or mapping refused)."""
    from nodename_lint.cluster.objects import StateError, _strings

    def one_by_one(found: dict[Any, Any]) -> dict[str, str]:
        labels: dict[str, str] = {}
        for key, value in found.items():
            if isinstance(value, (dict, list)):
                raise StateError(found, (), "not a string")
            labels[str(key)] = value if isinstance(value, str) else json.dumps(value)
        return labels

    rng = random.Random(seed)
    values: list[Any] = ["a", "", "\u00e9", 1, True, None, 2.5, [1], {"a": 1}]
    for _ in range(500):
        found = {
            rng.choice([f"k{index}", index, True, None]): rng.choice(values[:3] if rng.random() < 0.7 else values)
            for index in range(rng.randrange(6))
        }
        try:
            expected: Any = one_by_one(found)
        except StateError:
            expected = StateError
        try:
            got: Any = _strings({}, {"labels": found}, ("labels",))
        except StateError:
            got = StateError
        assert got == expected
        if expected is not StateError:
            assert got is not found  # a copy: the record does not share the object's mapping


def test_a_dumps_decoded_items_live_as_long_as_its_state() -> None:
    """The items a dump decoded (metadata, statuses, references the records do not keep) are held by the state,
    not freed one by one once loaded: a command keeps its state to its exit (options.kept_until_exit)."""
    fast = state_from_json_dump(_dump(_rich_cluster()), "dump.json")
    assert fast is not None and fast.pods
    decoded = fast._decoded
    assert decoded is not None and len(decoded.items) > len(fast.pods)
    assert any(
        item.metadata is not None and item.metadata.name == pod.name for item in decoded.items for pod in fast.pods
    )


@pytest.mark.parametrize("seed", range(6))
def test_a_nodes_usage_sums_its_pods_requests_in_the_order_adding_them_one_by_one_gives(seed: int) -> None:
    """A dump's Pods of one set of requests are added once, times their number (scheduling.running_pods_requests):
    the sums, and the order the resources come in (which messages list), are those of adding Pod by Pod, also
    when some Pods were made plain values in between (a rule read their spec)."""
    from nodename_lint.scheduling import add_into, pod_requests

    rng = random.Random(seed)
    resources = ["cpu", "memory", "example.com/gpu", "ephemeral-storage", "hugepages-2Mi"]
    amounts = {"cpu": ["100m", "0.25", "1", "333m"], "memory": ["64Mi", "1Gi", "1.5Gi"]}
    blocks = [
        {
            "requests": {
                name: rng.choice(amounts.get(name, ["1", "2"])) for name in rng.sample(resources, rng.randint(0, 3))
            }
        }
        for _ in range(5)
    ]
    items: list[Any] = [node(0)]
    for index in range(80):
        item = pod(index, 1, random.Random(index))
        item["spec"]["containers"] = [
            {"name": f"c{n}", "image": "i", "resources": rng.choice(blocks)} for n in range(rng.randint(1, 3))
        ]
        if rng.random() < 0.2:
            item["spec"]["initContainers"] = [{"name": "init", "image": "i", "resources": rng.choice(blocks)}]
        else:
            item["spec"].pop("initContainers", None)
        items.append(item)
    fast, reference = (state_from_json_dump(_dump(items), "dump.json") for _ in range(2))
    assert fast is not None and reference is not None
    running = [pod for pod in fast.pods or () if pod.node_name == "node-00000" and not pod.is_terminated]
    for made_plain in rng.sample(running, 10):
        assert made_plain.spec  # read by a rule: now plain values
    one_by_one: dict[str, int] = {}
    for each in reference.pods or ():
        if each.node_name == "node-00000" and not each.is_terminated:
            add_into(one_by_one, pod_requests(each.spec, lenient=True))
    usage = fast.usage("node-00000")
    assert usage is not None
    assert list(usage.requested.items()) == list(one_by_one.items())


def test_a_deployments_replicasets_read_the_same_both_ways_whatever_their_pods() -> None:
    """The loading loop keeps a controller's only Pod alone and adds a running Pod's ReplicaSet to the templates in
    use with its namespace's controllers: ReplicaSets of several running Pods, of one, of a terminated Pod only, of
    an unbound Pod only and of none give the generic reader's templates and workload Pods."""
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    items: list[Any] = [node(0), node(1)]
    for replicaset in ("web-aaa", "web-bbb", "web-ccc", "web-ddd", "web-eee"):
        items.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": replicaset,
                    "namespace": "shop",
                    "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}],
                },
                "spec": {"template": template},
            }
        )
    pods = [("web-aaa", "node-00000", "Running"), ("web-aaa", "node-00001", "Running")]
    pods += [("web-bbb", "node-00000", "Running"), ("web-ccc", "node-00001", "Succeeded"), ("web-ddd", None, "Pending")]
    pods += [("web-aaa", "node-00001", "Running")]
    for index, (replicaset, node_name, phase) in enumerate(pods):
        item = pod(index, 2, random.Random(index))
        item["metadata"]["namespace"] = "shop"
        item["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": replicaset, "controller": True}]
        item["status"]["phase"] = phase
        if node_name is None:
            del item["spec"]["nodeName"]
        items.append(item)
    fast, generic = _both_ways(_dump(items))
    assert fast is not None
    data = _as_data(fast)
    assert data == _as_data(generic)
    assert set((fast.templates or {})["shop"]) == {
        f"ReplicaSet/web-{suffix}" for suffix in ("aaa", "bbb", "ccc", "ddd")
    }
    groups = data["workloads"][("shop", "Deployment/web")]
    assert sorted(len(group) for group, _ in groups) == [1, 3]  # web-bbb's one Pod, web-aaa's three


def _kubectl_json(items: list[Any], layout: str) -> bytes:
    """A List as kubectl prints it (keys sorted, four spaces), or packed, or as `json.dumps` leaves it."""
    document = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
    if layout == "kubectl":
        return json.dumps(document, indent=4, sort_keys=True).encode()
    if layout == "packed":
        return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
    return json.dumps(document, sort_keys=True).encode()


def _read_in_pieces(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[ClusterState | None, int, bytearray]:
    """The state of DATA read from a writable buffer with pieces of a few items, how many pieces decoded,
    and the buffer after the reading."""
    from nodename_lint.cluster import json_dump

    monkeypatch.setattr(json_dump, "_PIECE_BYTES", 2_000)
    decoded = json_dump._decoded_piece
    pieces: list[Any] = []

    def counted(*arguments: Any) -> Any:
        pieces.append(decoded(*arguments))
        return pieces[-1]

    monkeypatch.setattr(json_dump, "_decoded_piece", counted)
    buffer = bytearray(data)
    return state_from_json_dump(buffer, "dump.json"), sum(piece is not None for piece in pieces), buffer


@pytest.mark.parametrize("layout", ["kubectl", "packed", "json.dumps"])
def test_a_dump_read_in_pieces_is_the_dump_read_whole(layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big file (mapped copy-on-write) is decoded a piece of items at a time, cut before an item as kubectl
    starts one: the same state as the generic reader's, and the buffer put back byte for byte."""
    data = _kubectl_json(_rich_cluster(), layout)
    fast, pieces, buffer = _read_in_pieces(data, monkeypatch)
    assert fast is not None and pieces > 20 and fast._decoded is None  # read in pieces, not whole
    assert bytes(buffer) == data
    assert _as_data(fast) == _as_data(_load_state_text(data.decode(), "dump.json"))


def test_a_cut_inside_an_item_reads_the_file_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """An item holding objects that start as a List's items do (`{"apiVersion": ..., "kind": ...}`, in an
    array) makes a piece cut inside it: that piece does not decode, and the file is read whole, the same."""
    items = _rich_cluster()
    nested = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"n{index}"}} for index in range(40)]
    for index in range(0, len(items), 25):
        items.insert(index, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "x": nested})
    data = _kubectl_json(items, "packed")
    fast, _, buffer = _read_in_pieces(data, monkeypatch)
    assert fast is not None and fast._decoded is not None  # read whole after all
    assert bytes(buffer) == data
    assert _as_data(fast) == _as_data(_load_state_text(data.decode(), "dump.json"))


def test_an_items_array_below_the_top_level_is_not_the_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pods in an `items` array nested before the List's own (its Nodes): the random word put in place of the
    first array is not the top-level `items`, so the file is read whole, with no Pod, as the generic reader."""
    items = _rich_cluster()
    pods = [item for item in items if item.get("kind") == "Pod"]
    nodes = [item for item in items if item.get("kind") == "Node"]
    text = json.dumps({"apiVersion": "v1", "metadata": {"x": {"items": pods}}, "kind": "List", "items": nodes})
    fast, pieces, _ = _read_in_pieces(text.encode(), monkeypatch)
    generic = _load_state_text(text, "dump.json")
    assert fast is not None and pieces == 0 and not fast.pods
    assert _as_data(fast) == _as_data(generic)


def test_a_refused_pod_in_a_piece_is_left_to_the_generic_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pod the records refuse (no spec) in a later piece: None, so the generic reader names it."""
    items = _rich_cluster()
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": "default"}})
    fast, pieces, buffer = _read_in_pieces(_kubectl_json(items, "kubectl"), monkeypatch)
    assert fast is None and pieces > 20
    assert bytes(buffer) == _kubectl_json(items, "kubectl")


def test_a_piece_of_blanks_does_not_hide_a_comma_out_of_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """`"items": [   , {...}]` is not JSON: a first piece of blanks decodes as an empty array, so an empty
    piece sends the file to the whole decoding, which refuses it as the generic reader does."""
    items = _kubectl_json(_rich_cluster(), "packed")
    start = items.index(b'"items":[') + len(b'"items":[')
    data = items[:start] + b" " * 5_000 + b"," + items[start:]
    fast, _, buffer = _read_in_pieces(data, monkeypatch)
    assert fast is None and bytes(buffer) == data
    with pytest.raises(UsageError):
        _load_state_text(data.decode(), "dump.json")


def test_a_read_only_mapping_is_decoded_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the system refuses a private writable mapping of the file (a strict overcommit limit), the file
    is mapped read-only, and a read-only buffer is decoded whole: the same state, no write attempted."""
    from mmap import ACCESS_COPY
    from mmap import mmap as real_mmap

    from nodename_lint.cluster import from_file, json_dump

    def refusing(fileno: int, length: int, access: int) -> real_mmap:
        if access == ACCESS_COPY:
            raise OSError(12, "Cannot allocate memory")
        return real_mmap(fileno, length, access=access)

    path = tmp_path / "dump.json"
    data = _kubectl_json(_rich_cluster(), "kubectl")
    path.write_bytes(data)
    monkeypatch.setattr(from_file, "MAPPED_BYTES", 1)
    monkeypatch.setattr(from_file, "mmap", refusing)
    monkeypatch.setattr(json_dump, "_PIECE_BYTES", 2_000)
    mapped = from_file.read_state_bytes(str(path), mapped=True)
    assert memoryview(mapped).readonly
    state = state_from_json_dump(mapped, "dump.json")
    assert state is not None and state._decoded is not None  # whole
    assert _as_data(state) == _as_data(_load_state_text(data.decode(), "dump.json"))
