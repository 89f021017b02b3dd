"""The webhook's state changed in place by watch events gives the same answers as a state built at once from
the same objects (objects.state_from_objects, what a live lint and a file read): random events on random
Pods (bound, resized, terminated, deleted, with host ports, init containers, overhead), then every node's
usage and host ports compared."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import msgspec
import pytest

from nodename_lint.cluster.objects import state_from_objects
from nodename_lint.cluster.trimming import decode_pod_page
from nodename_lint.cluster.watched import KEEP, PodSums, WatchedState, pod_entry
from tests.apiserver import kind_node, kind_pod

NODES = [f"node-{i}" for i in range(4)]


def random_pod(rng: random.Random, name: str) -> dict[str, Any]:
    pod = kind_pod(
        name,
        rng.choice(["default", "team-a"]),
        rng.choice([*NODES, None]),
        cpu=rng.choice(["100m", "1", None]),
        memory=rng.choice(["64Mi", None]),
        phase=rng.choice(["Running", "Running", "Pending", "Succeeded", "Failed"]),
    )
    spec = pod["spec"]
    if rng.random() < 0.3:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": rng.choice([80, 443])}]
    if rng.random() < 0.2:
        spec["initContainers"] = [{"name": "init", "image": "x", "resources": {"requests": {"cpu": "2"}}}]
    if rng.random() < 0.2:
        spec["overhead"] = {"cpu": "250m"}
    return pod


@pytest.mark.parametrize("seed", range(20))
def test_events_give_the_state_a_full_list_gives(seed: int) -> None:
    rng = random.Random(seed)
    live: dict[str, dict[str, Any]] = {}
    state = WatchedState(source="test")
    state.install("nodes", [KEEP["nodes"](kind_node(name)) for name in NODES])
    state.install("pods", PodSums())
    for _ in range(200):
        name = f"p{rng.randrange(30)}"
        if name in live and rng.random() < 0.3:
            state.apply("pods", True, pod_entry(live.pop(name)))
            continue
        pod = random_pod(rng, name)
        if name in live:
            pod["metadata"]["namespace"] = live[name]["metadata"]["namespace"]
            if live[name]["spec"].get("nodeName"):  # nodeName never changes once set
                pod["spec"]["nodeName"] = live[name]["spec"]["nodeName"]
        live[name] = pod
        terminated = pod["status"]["phase"] in ("Succeeded", "Failed")
        state.apply("pods", terminated, pod_entry(pod))  # a watch with the non-terminated selector: DELETED
        if terminated:
            del live[name]
    whole = state_from_objects("test", nodes=[kind_node(n) for n in NODES], namespaces=[], pods=list(live.values()))
    for node in NODES:
        assert state.usage(node) == whole.usage(node), (seed, node)
        ports = state.ports_in_use(node) or {}
        assert set(ports) == set(whole.ports_in_use(node) or {}), (seed, node)
        for (_, _, number), holder in ports.items():  # when two Pods hold a port, either may be named
            held = live[holder.split("/")[1]]
            assert held["spec"].get("nodeName") == node
            assert number in [p.get("hostPort") for c in held["spec"]["containers"] for p in c.get("ports", [])]


def test_a_pod_page_read_trimmed_counts_as_read_whole() -> None:
    rng = random.Random(7)
    pods = [random_pod(rng, f"p{i}") for i in range(200)]
    for pod in pods:
        pod["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
        pod["spec"]["containers"][0]["env"] = [{"name": "A", "value": "b"}]
    page = json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": pods}).encode()
    trimmed = decode_pod_page(page)
    assert trimmed["metadata"] == {"resourceVersion": "9"}
    assert [pod_entry(item) for item in trimmed["items"]] == [pod_entry(copy.deepcopy(pod)) for pod in pods]
    kept = {key for item in trimmed["items"] for container in item["spec"]["containers"] for key in container}
    assert "env" not in kept and kept <= {"resources", "ports", "restartPolicy"}  # what the usage and ports read


@pytest.mark.parametrize("containers", [[{"name": "c", "env": [{"name": "TOKEN", "value": "s"}]}, 5], "c", {"a": 1}])
def test_a_pod_page_whose_containers_are_not_a_list_of_mappings_is_refused_for_a_whole_read(containers: Any) -> None:
    """A Pod's containers stay bytes until its spec is made plain values: a page holding containers that are
    not a list of mappings is refused then (connection._decode reads such a page whole), not trimmed with
    what those containers hold."""
    pods = [random_pod(random.Random(5), f"p{i}") for i in range(3)]
    pods[1]["spec"]["initContainers"] = containers
    page = json.dumps({"kind": "PodList", "metadata": {}, "items": pods}).encode()
    with pytest.raises(msgspec.ValidationError):
        decode_pod_page(page)
    pods[1]["spec"]["initContainers"] = None
    page = json.dumps({"kind": "PodList", "metadata": {}, "items": pods}).encode()
    assert decode_pod_page(page)["items"][1]["spec"]["initContainers"] is None


def test_a_node_that_changes_is_weighed_anew_by_the_scheduler_prediction() -> None:
    """The scheduler's prediction groups the nodes by what its filters read (NodeShapes, built once); a
    node added, relabelled, tainted or deleted by a watch event is weighed as it now is."""
    state = WatchedState(source="test")
    state.install("nodes", [KEEP["nodes"](kind_node(name)) for name in NODES])
    state.install("pods", PodSums())
    spec = {"nodeSelector": {"pool": "gpu"}, "containers": [{"name": "c", "image": "i"}]}
    verdict = state.no_node_fits(spec, {"cpu": 100})
    assert verdict is not None and verdict.reasons == {"node(s) didn't match Pod's node affinity/selector": 4}

    relabelled = kind_node(NODES[1])
    relabelled["metadata"].setdefault("labels", {})["pool"] = "gpu"
    state.apply("nodes", False, KEEP["nodes"](relabelled))
    assert state.no_node_fits(spec, {"cpu": 100}) is None

    relabelled["spec"]["taints"] = [{"key": "gpu", "effect": "NoSchedule"}]
    state.apply("nodes", False, KEEP["nodes"](relabelled))
    verdict = state.no_node_fits(spec, {"cpu": 100})
    assert verdict is not None and verdict.reasons == {
        "node(s) didn't match Pod's node affinity/selector": 3,
        "node(s) had untolerated taint(s)": 1,
    }

    added = kind_node("node-9")
    added["metadata"].setdefault("labels", {})["pool"] = "gpu"
    state.apply("nodes", False, KEEP["nodes"](added))
    assert state.no_node_fits(spec, {"cpu": 100}) is None
    state.apply("nodes", True, KEEP["nodes"](added))
    verdict = state.no_node_fits(spec, {"cpu": 100})
    assert verdict is not None and sum(verdict.reasons.values()) == 4

    state.install("nodes", [KEEP["nodes"](kind_node(name)) for name in NODES[:2]])
    verdict = state.no_node_fits(spec, {"cpu": 100})
    assert verdict is not None and verdict.reasons == {"node(s) didn't match Pod's node affinity/selector": 2}
