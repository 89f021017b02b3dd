"""The cluster snapshot format (issue 12): written from a dump, read back with the same findings, versioned."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import NoReturn

import msgspec
import pytest

from nodename_lint.cluster.from_file import load_state_file
from nodename_lint.cluster.records import NodeInfo, PodInfo, PodTable, SavedLabels
from nodename_lint.cluster.snapshot import FORMAT, VERSION, is_snapshot
from nodename_lint.sources import UsageError

from .conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_STATE = ROOT / "examples" / "cluster" / "state.yaml"
EXAMPLE_MANIFESTS = ROOT / "examples" / "cluster" / "manifests"
sys.path.insert(0, str(ROOT / "bench"))

from cluster_scale import manifest, node, pod  # noqa: E402  (the benchmark's own generator)


def _findings(report: str, source: str) -> list[dict]:
    """Findings with the name of the state file replaced: the one thing that may differ."""
    found = json.loads(report)["findings"]
    assert found, "the comparison would be vacuous"
    return [{**f, "message": f["message"].replace(source, "<state>")} for f in found]


def _convert(dump: Path, target: Path) -> None:
    result = run_cli("snapshot", "--cluster-state", str(dump), "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert f"wrote {target}" in result.stderr


def _lint(manifests: Path, state: Path) -> str:
    result = run_cli(str(manifests), "--cluster-state", str(state), "--format", "json")
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_snapshot_of_the_example_dump_gives_the_same_findings(tmp_path: Path) -> None:
    snapshot = tmp_path / "state.snapshot.json"
    _convert(EXAMPLE_STATE, snapshot)
    text = snapshot.read_text()
    assert is_snapshot(text) and json.loads(text)["version"] == VERSION
    from_dump = _findings(_lint(EXAMPLE_MANIFESTS, EXAMPLE_STATE), f"file {EXAMPLE_STATE}")
    from_snapshot = _findings(_lint(EXAMPLE_MANIFESTS, snapshot), f"file {snapshot}")
    assert from_snapshot == from_dump
    rules = {f["rule"] for f in from_dump}
    assert {
        "insufficient-resources",
        "no-node-fits",
        "nodename-immutable",
        "unknown-node",
        "node-not-ready",
        "untolerated-taint",
        "node-selector-mismatch",
        "static-pod-missing-namespace",
    } <= rules


def test_a_snapshot_read_from_its_tail_reads_as_the_whole_file(tmp_path: Path) -> None:
    """The writer puts `pods` and `running` last and says how far from the end each starts (`tail`): the rest
    is decoded alone, and those two when first read. An edit before them keeps that reading; a file edited
    in them, written before `tail`, or whose `tail` points anywhere else is decoded whole: the same findings."""
    snapshot = tmp_path / "state.snapshot.json"
    _convert(EXAMPLE_STATE, snapshot)
    text = snapshot.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[2].startswith('"tail":[') and lines[-1] == ""
    pods_from_end, running_from_end = json.loads(lines[2][len('"tail":') : -1])
    data = text.encode()
    assert data[len(data) - pods_from_end :].startswith(b'\n"pods":{')
    assert data[len(data) - running_from_end :].startswith(b'\n"running":{')
    expected = _findings(_lint(EXAMPLE_MANIFESTS, snapshot), f"file {snapshot}")

    state = load_state_file(str(snapshot))
    table = state.pods
    dump = load_state_file(str(EXAMPLE_STATE))
    assert dump.pods is not None and isinstance(table, PodTable)
    assert table._with_pods == {pod.namespace for pod in dump.pods}
    assert state.live_pod("nowhere", "web-0") is None and state.live_pod("default", "absent") is None
    assert table._namespaces is None  # neither lookup read the Pod table

    tail = lines[2].removesuffix(",")
    variants = {  # name: (text, read from the tail)
        "as written": (text, True),
        "edited before the tail": (text.replace('{"name":"kind-worker",', '{"name": "kind-worker",', 1), True),
        "edited in the Pods": (text.replace(',"Running"]', ', "Running"]', 1), False),
        "edited in the running Pods": (text.replace(',"Burstable",', ', "Burstable",', 1), False),
        "an earlier writer's": (text.replace(tail + ",\n", "", 1), False),
        "tail past the end": (text.replace(tail, f'"tail":[{len(data) * 2},{running_from_end}]', 1), False),
        "tail swapped": (text.replace(tail, f'"tail":[{running_from_end},{pods_from_end}]', 1), False),
        "tail of zeros": (text.replace(tail, '"tail":[0,0]', 1), False),
        "tail inside the Pods": (text.replace(tail, f'"tail":[{pods_from_end - 9},{running_from_end}]', 1), False),
        "tail too long": (text.replace(tail, f'"tail":[1{pods_from_end:012d},{running_from_end}]', 1), False),
    }
    for name, (variant, from_tail) in variants.items():
        assert variant != text or name == "as written", name
        path = tmp_path / f"{name.replace(' ', '-')}.snapshot.json"
        path.write_text(variant, encoding="utf-8")
        loaded = load_state_file(str(path)).pods
        assert isinstance(loaded, PodTable) and (loaded._with_pods is not None) == from_tail, name
        assert _findings(_lint(EXAMPLE_MANIFESTS, path), f"file {path}") == expected, name


@pytest.mark.parametrize(
    "change, problem",
    [
        (('\n"pods":{', '\n"pods":['), "Expected `object | null`, got `array` (the Pod table)"),
        (('\n"running":{', '\n"running":['), "Expected `object`, got `array` (the running Pods)"),
        (('\n"running":{\n"kind-', '\n"running":{\n"kinx-'), "usage of unknown node 'kinx-"),
    ],
)
def test_damage_in_a_snapshots_tail_is_the_files_error_when_read(
    tmp_path: Path, change: tuple[str, str], problem: str
) -> None:
    """Damage that keeps the length leaves `tail` pointing at the members: found when a rule reads them."""
    snapshot = tmp_path / "state.snapshot.json"
    _convert(EXAMPLE_STATE, snapshot)
    text = snapshot.read_text(encoding="utf-8")
    assert change[0] in text and len(change[0]) == len(change[1])
    snapshot.write_text(text.replace(change[0], change[1], 1), encoding="utf-8")
    state = load_state_file(str(snapshot))
    assert isinstance(state.pods, PodTable) and state.pods._with_pods is not None  # loaded from the tail
    with pytest.raises(UsageError, match=re.escape(problem)):
        len(state.pods) if "pods" in change[0] else state.running_pods("kind-worker")


def test_the_snapshots_pod_table_reads_as_the_dumps_pods(tmp_path: Path) -> None:
    """A snapshot's Pods are built from its table only when read: they read as the dump's, whole and by name."""
    snapshot = tmp_path / "state.snapshot.json"
    _convert(EXAMPLE_STATE, snapshot)
    dump, table = load_state_file(str(EXAMPLE_STATE)), load_state_file(str(snapshot))
    assert dump.pods is not None and table.pods is not None and len(table.pods) == len(dump.pods) > 2

    Row = tuple[str, str, str | None, str | None, str | None, str | None]

    def rows(pods: Iterable[PodInfo | None]) -> list[Row | None]:
        return [None if p is None else (p.namespace, p.name, p.node_name, p.phase, p.owner, p.template) for p in pods]

    def by_name(pods: Iterable[PodInfo | None]) -> list[Row | None]:
        return sorted(rows(pods), key=str)  # the table is by namespace and name

    assert by_name(table.pods) == by_name(dump.pods)
    assert all(pod in table.pods for pod in table.pods) and dump.pods[0] in table.pods
    assert PodInfo("default", "no-such-pod", None, None) not in table.pods
    for running in dump.pods:
        found = table.live_pod(running.namespace, running.name)
        assert found is not None and rows([found]) == rows([dump.live_pod(running.namespace, running.name)])
    assert table.live_pod("default", "no-such-pod") is None is dump.live_pod("default", "no-such-pod")


def test_snapshot_of_a_generated_cluster_gives_the_same_findings(tmp_path: Path) -> None:
    """The benchmark's cluster, smaller: usage sums decide insufficient-resources and no-node-fits."""
    rng = random.Random(12)
    nodes = 60
    items = [node(i) for i in range(nodes)]
    items += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i}"}} for i in range(20)]
    pods = [pod(i, nodes, rng) for i in range(3000)]
    for index, item in enumerate(pods[:300]):  # terminated Pods count for nodename-immutable, not for usage
        item["status"]["phase"] = "Succeeded" if index % 2 else "Failed"
    items += pods
    # host ports in use (host-port-conflict) and a RuntimeClass (runtime-class-overhead): summaries the snapshot keeps
    items.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "proxy", "namespace": "team-1"},
            "spec": {
                "nodeName": "node-00002",
                "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 8080}]}],
            },
            "status": {"phase": "Running"},
        }
    )
    items.append(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "gvisor"},
            "handler": "runsc",
            "overhead": {"podFixed": {"cpu": "250m"}},
        }
    )
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    for i in range(150):
        (manifests / f"m{i:03d}.yaml").write_text(manifest(i, nodes, rng))
    (manifests / "live.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: app-7, namespace: team-7}\n"
        "spec: {nodeName: node-00001, containers: [{name: c, image: busybox}]}\n"
    )
    (manifests / "ports.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: team-2}\nspec:\n  nodeName: node-00002\n"
        "  containers: [{name: c, image: i, ports: [{containerPort: 80, hostPort: 8080}]}]\n"
    )
    (manifests / "runtime.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: sandboxed, namespace: team-2}\nspec:\n"
        "  runtimeClassName: gvisor\n  overhead: {cpu: 100m}\n  containers: [{name: c, image: i}]\n"
    )
    snapshot = tmp_path / "snap.json"
    _convert(dump, snapshot)
    from_dump = _findings(_lint(manifests, dump), f"file {dump}")
    assert _findings(_lint(manifests, snapshot), f"file {snapshot}") == from_dump
    rules = {f["rule"] for f in from_dump}
    assert {
        "insufficient-resources",
        "no-node-fits",
        "unknown-node",
        "nodename-immutable",
        "host-port-conflict",
        "runtime-class-overhead",
    } <= rules


# An older snapshot, as the version that wrote it shaped it: version 3 was written by two lines of development,
# one with the preemption fields (priorityClasses, running), one with the rollout fields (podRequests, templates)
OLDER = {
    99: (),
    3: ("podRequests", "templates"),  # the preemption version 3
    -3: ("priorityClasses", "running"),  # the rollout version 3
    2: ("podRequests", "templates", "priorityClasses", "running"),
}


@pytest.mark.parametrize("version", sorted(OLDER))
def test_snapshot_of_another_version_is_refused(tmp_path: Path, version: int) -> None:
    snapshot = tmp_path / "snap.json"
    _convert(EXAMPLE_STATE, snapshot)
    data = json.loads(snapshot.read_text())
    assert VERSION == 4 and all(key in data for key in OLDER[2])  # version 4 holds both version 3s' additions
    for key in OLDER[version]:
        del data[key]
    data["version"] = abs(version)
    snapshot.write_text(json.dumps(data))
    result = run_cli(str(EXAMPLE_MANIFESTS), "--cluster-state", str(snapshot))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (
        f"{snapshot}: this cluster snapshot has format version {abs(version)}, and this nodename-lint reads "
        f"version {VERSION}" in result.stderr
    )
    assert "write it again with `nodename-lint snapshot`" in result.stderr


@pytest.mark.parametrize(
    "change, problem",
    [
        (('"taints":[]', '"taints":"none"'), "Expected `array`, got `str` - at `$.nodes[1].taints`"),
        (  # the rules hash a taint's key: a list there was an internal error of untolerated-taint (fuzzer)
            ('"taints":[]', '"taints":[{"key":[null],"effect":"NoSchedule"}]'),
            "a taint of node 'kind-worker' has a key, value or effect that is not a string",
        ),
        (('"pods":{', '"pods":['), "not a valid nodename-lint cluster snapshot"),
    ],
)
def test_a_damaged_snapshot_is_a_clear_error(tmp_path: Path, change: tuple[str, str], problem: str) -> None:
    snapshot = tmp_path / "snap.json"
    _convert(EXAMPLE_STATE, snapshot)
    text = snapshot.read_text()
    assert change[0] in text
    snapshot.write_text(text.replace(change[0], change[1], 1))
    result = run_cli(str(EXAMPLE_MANIFESTS), "--cluster-state", str(snapshot))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"nodename-lint: {snapshot}: not a valid nodename-lint cluster snapshot" in result.stderr
    assert problem in result.stderr


def _alias_bomb_in_taints(levels: int) -> str:
    """A Node whose taint value is ten to the LEVELS strings, written in a few lines with aliases."""
    lines = [
        "apiVersion: v1",
        "kind: List",
        "items:",
        "- apiVersion: v1",
        "  kind: Node",
        "  metadata: {name: kind-worker}",
        "  spec:",
        "    taints:",
        "    - key: a",
        "      effect: NoSchedule",
        "      l0: &l0 [x, x, x, x, x, x, x, x, x, x]",
        *(f"      l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 10)}]" for level in range(1, levels)),
        f"    - {{key: b, effect: NoSchedule, extra: *l{levels - 1}}}",
        "  status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}",
    ]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_in_a_nodes_taints_is_refused_not_written(tmp_path: Path) -> None:
    """Aliases share their value in memory; the snapshot writer expanded 10**9 strings (SIGSEGV)."""
    dump, output = tmp_path / "dump.yaml", tmp_path / "snap.json"
    dump.write_text(_alias_bomb_in_taints(9))
    result = run_cli("snapshot", "--cluster-state", str(dump), "--output", str(output))
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert f"nodename-lint: {dump}:" in result.stderr and "an alias bomb" in result.stderr
    assert "Traceback" not in result.stderr and not output.exists()
    lint = run_cli(str(EXAMPLE_MANIFESTS), "--cluster-state", str(dump))
    assert lint.returncode == 2 and "an alias bomb" in lint.stderr
    # a few aliases, as a hand-written state may have, still read
    dump.write_text(_alias_bomb_in_taints(3))
    assert run_cli("snapshot", "--cluster-state", str(dump), "--output", str(output)).returncode == 0
    assert output.read_text().count('"x"') == 10 + 100 + 1000 + 1000  # l0, l1 and l2 of taint a, and taint b


def test_a_snapshot_cannot_set_the_models_caches(tmp_path: Path) -> None:
    """Only data fields are read: a `_capacity` in the file would bypass the allocatable quantities."""
    snapshot = tmp_path / "snap.json"
    _convert(EXAMPLE_STATE, snapshot)
    text = snapshot.read_text().replace('{"name":"kind-worker",', '{"name":"kind-worker","_capacity":{"cpu":1},', 1)
    snapshot.write_text(text)
    state = load_state_file(str(snapshot))
    assert state.nodes is not None and state.nodes["kind-worker"].capacity["cpu"] == 4000


def test_the_snapshot_is_one_record_per_line_and_starts_with_its_format(tmp_path: Path) -> None:
    result = run_cli("snapshot", "--cluster-state", str(EXAMPLE_STATE))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f'{{"format":"{FORMAT}",'
    state = load_state_file(str(EXAMPLE_STATE))
    assert state.nodes is not None and state.pods is not None
    assert sum(line.startswith('{"name":"kind-') for line in lines) == len(state.nodes) == 5
    value = r'("[^"]+"|null)'
    # a running controller's Pod adds owner, template and requests (a template's key has a "/", a Pod's name none)
    row = rf'"[^"/]+":\[{value},{value}(,{value},{value},[0-9]+)?\][,}}]*'
    table = lines[lines.index('"pods":{') : next(i for i, line in enumerate(lines) if line.startswith('"running"'))]
    pod_lines = [line for line in table if re.fullmatch(row, line)]
    assert len(pod_lines) == len(state.pods)  # the Pod table: one Pod per line, under its namespace
    web = '"web-5d8f7c9b6d-2lq8x":["kind-worker","Running","ReplicaSet/web-5d8f7c9b6d","ReplicaSet/web-5d8f7c9b6d",'
    assert any(line.startswith(web) for line in lines)


def test_snapshot_options_are_checked(tmp_path: Path) -> None:
    both = run_cli("snapshot", "--cluster-state", str(EXAMPLE_STATE), "--context", "x")
    assert both.returncode == 2 and "cannot be combined" in both.stderr
    missing = run_cli("snapshot", "--cluster-state", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot read the cluster state" in missing.stderr


def test_audit_says_a_lint_snapshot_lacks_the_workloads(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap.json"
    _convert(EXAMPLE_STATE, snapshot)
    result = run_cli("audit", "--cluster-state", str(snapshot))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "snapshot --workloads" in result.stderr


def test_a_nodes_host_ports_are_read_when_first_needed_and_damage_there_is_a_clear_error(tmp_path: Path) -> None:
    """Each node's host ports are decoded when a rule first reads them (most runs read a few nodes'): a Pod
    pinned to a node whose saved ports hold its port gets host-port-conflict, and a damaged row there is the
    file's error (exit 2, naming the node), not a rule's internal error; damage on a node no rule reads is
    not read."""
    snapshot = tmp_path / "snap.json"
    _convert(EXAMPLE_STATE, snapshot)
    text = snapshot.read_text()
    assert '"ports":{}' in text
    pinned = tmp_path / "pod.yaml"
    pinned.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: exporter, namespace: default}\nspec:\n  nodeName: kind-worker\n"
        "  containers:\n    - {name: e, image: e, ports: [{containerPort: 9100, hostPort: 9100}]}\n",
        encoding="utf-8",
    )
    held = '"kind-worker":[["0.0.0.0","TCP",9100,"monitoring/node-exporter-x"]]'
    for ports, outcome in (
        (held, "host-port-conflict"),
        (held + ',"kind-control-plane":[["0.0.0.0","TCP","x","ns/p"]]', "host-port-conflict"),
        ('"kind-worker":[["0.0.0.0","TCP","9100","ns/p"]]', "the host ports of node 'kind-worker'"),
    ):
        snapshot.write_text(text.replace('"ports":{}', '"ports":{' + ports + "}", 1))
        result = run_cli(str(pinned), "--cluster-state", str(snapshot), "--format", "json")
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
        if outcome == "host-port-conflict":
            assert result.returncode == 1, result.stderr
            findings = json.loads(result.stdout)["findings"]
            assert [f["rule"] for f in findings if f["rule"] == outcome] == [outcome], findings
            assert "monitoring/node-exporter-x" in result.stdout
        else:
            assert result.returncode == 2, result.stdout
            assert f"nodename-lint: {snapshot}: not a valid nodename-lint cluster snapshot: Expected `int`" in (
                result.stderr
            )
            assert outcome in result.stderr


def test_a_damaged_pod_table_is_a_clear_error_when_read(tmp_path: Path) -> None:
    """A namespace's Pods are decoded when nodename-immutable first looks one up: damage there is
    still the file's error (exit 2, its name), not a rule's internal error."""
    snapshot = tmp_path / "snap.json"
    _convert(EXAMPLE_STATE, snapshot)
    text = snapshot.read_text()
    assert ',"Running"]' in text
    snapshot.write_text(text.replace(',"Running"]', ",5]"))
    result = run_cli(str(EXAMPLE_MANIFESTS), "--cluster-state", str(snapshot))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert (
        f"nodename-lint: {snapshot}: not a valid nodename-lint cluster snapshot: Expected `str | null`" in result.stderr
    )
    assert "(the Pods of namespace " in result.stderr


def _workload_pod(name: str, namespace: str, owner: tuple[str, str], phase: str = "Running") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "ownerReferences": [{"kind": owner[0], "name": owner[1], "controller": True}],
        },
        "spec": {"nodeName": "node-00000", "containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": phase},
    }


def test_a_snapshot_lists_the_running_workloads_and_reads_no_pods_for_the_others(tmp_path: Path) -> None:
    """The workloads with a running Pod are saved by namespace; a rollout lookup of any other workload
    decodes none of the namespace's Pods, and a file without the list (an earlier writer) finds the same."""
    pods = [
        _workload_pod("web-5d8f7c9b6d-abcde", "team", ("ReplicaSet", "web-5d8f7c9b6d")),
        _workload_pod("db-0", "team", ("StatefulSet", "db")),
        _workload_pod("done-7c9f8-x1", "team", ("ReplicaSet", "done-7c9f8"), phase="Succeeded"),
        _workload_pod("agent-x", "ops", ("DaemonSet", "agent")),
    ]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"kind": "List", "items": [node(0), *pods]}), encoding="utf-8")
    snapshot = tmp_path / "state.snapshot.json"
    _convert(dump, snapshot)
    saved = json.loads(snapshot.read_text(encoding="utf-8"))
    assert saved["workloads"] == {"ops": ["DaemonSet/agent"], "team": ["Deployment/web", "StatefulSet/db"]}
    assert set(saved["workloadFilters"]) == set(saved["workloads"])

    state = load_state_file(str(snapshot))
    table = state.pods
    assert table is not None
    for absent in ("Deployment/done", "Deployment/api", "StatefulSet/web"):
        assert state.workload_pods("team", absent) == []
    assert state.workload_pods("nowhere", "Deployment/web") == []
    assert table._namespaces is None  # the Pod table never decoded, let alone the namespace's Pods
    runs = state._runs_workload
    assert isinstance(runs, partial) and runs.args[-1] == {}  # the filter answered: no list of workloads decoded
    assert [[p.name for p in group] for group, _ in state.workload_pods("team", "Deployment/web")] == [
        ["web-5d8f7c9b6d-abcde"]
    ]

    saved.pop("workloadFilters")  # as an earlier writer saved it
    saved.pop("workloads")  # as a still earlier one saved it
    older = tmp_path / "older.snapshot.json"
    older.write_text(json.dumps(saved), encoding="utf-8")
    without = load_state_file(str(older))
    from_dump = load_state_file(str(dump))
    for namespace, workload in [("team", "Deployment/web"), ("team", "StatefulSet/db"), ("ops", "DaemonSet/agent")]:
        expected = [
            ([p.name for p in group], certain) for group, certain in from_dump.workload_pods(namespace, workload)
        ]
        assert expected
        for other in (state, without):
            found = [([p.name for p in group], certain) for group, certain in other.workload_pods(namespace, workload)]
            assert found == expected
    assert without.workload_pods("team", "Deployment/done") == [] == from_dump.workload_pods("team", "Deployment/done")


def test_a_workload_looked_up_with_a_good_a_damaged_or_no_filter_is_found_as_in_its_list() -> None:
    """A snapshot's `workloadFilters` answers most lookups of a workload that does not run without decoding the
    namespace's list; on random lists (names with quotes, backslashes, other scripts), with the writer's filter,
    a damaged one, one of another size, or none, every lookup answers as the list itself does, and the writer's
    filter lets at most a few of the absent names through to a decoding."""
    from nodename_lint.cluster.snapshot import _base64_filter, _runs_workload

    rng = random.Random(26)
    alphabet = ["Deployment/", "StatefulSet/", "web", "a", "-", "0", "é", '"', "\\", "\u202e"]
    decodings = lookups_of_absent = 0
    for round_ in range(80):
        symbols = alphabet if round_ % 2 else alphabet[:7]  # half the lists need no escape: their filters are read
        listed = {
            f"ns-{index}": sorted({"".join(rng.choice(symbols) for _ in range(rng.randint(1, 4))) for _ in range(30)})
            for index in range(rng.randint(1, 3))
        }
        saved = {namespace: msgspec.Raw(msgspec.json.encode(names)) for namespace, names in listed.items()}
        good = {namespace: _base64_filter(names) for namespace, names in listed.items()}
        damaged = {namespace: rng.choice(["", "!!", "AAAA", "A" * 12, _base64_filter(["x"])]) for namespace in listed}
        queries = [(namespace, name) for namespace, names in listed.items() for name in names]
        queries += [
            (rng.choice([*listed, "elsewhere"]), "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))))
            for _ in range(60)
        ]
        for filters in (good, damaged, {}):
            decoded: dict[str, frozenset[str]] = {}
            for namespace, name in queries:
                expected = name in listed.get(namespace, ())
                found = _runs_workload("state.json", saved, dict(filters), decoded, namespace, name)
                assert found == expected, (round_, filters is good, namespace, name)
            if filters is good:  # each absent name alone, against the namespaces' clean lists
                for namespace, name in queries:
                    if namespace in listed and name not in listed[namespace] and b"\\" not in bytes(saved[namespace]):
                        fresh: dict[str, frozenset[str]] = {}
                        _runs_workload("state.json", saved, dict(filters), fresh, namespace, name)
                        lookups_of_absent += 1
                        decodings += bool(fresh)
    assert lookups_of_absent > 1000 and decodings <= lookups_of_absent // 20, (decodings, lookups_of_absent)


def test_pods_looked_up_by_name_with_and_without_the_saved_names_as_in_the_pods_themselves(tmp_path: Path) -> None:
    """A snapshot saves each namespace's Pod names (`podNames`), and a lookup of a name not among them
    decodes none of the namespace's rows; on random tables (names with line breaks, empty names, other
    scripts) every lookup answers as the Pods themselves do, and as a file without the names (an
    earlier writer) does."""
    from nodename_lint.cluster.snapshot import snapshot_text
    from nodename_lint.cluster.state import ClusterState

    rng = random.Random(26)
    alphabet = ["a", "b", "web", "-", ".", "0", "\n", "é", "\u202e", " ", '"', "\\"]
    for round_ in range(60):
        pods: dict[tuple[str, str], PodInfo] = {}
        namespaces = [f"ns-{i}" for i in range(rng.randint(1, 4))]
        for _ in range(rng.randint(0, 30)):
            namespace = rng.choice(namespaces)
            name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))
            node = rng.choice([None, "node-1", "node-2"])
            pods[namespace, name] = PodInfo(namespace, name, node, rng.choice([None, "Running", "Succeeded"]))
        state = ClusterState(source="test", nodes={}, namespaces=frozenset(namespaces), pods=list(pods.values()))
        saved = json.loads(snapshot_text(state, "test"))
        assert set(saved["podNames"]) <= set(saved["pods"])
        assert set(saved["podNameFilters"]) == set(saved["podNames"])
        variants = [json.dumps(saved)]
        for namespace in saved["podNameFilters"]:  # a filter damaged by hand is not read
            saved["podNameFilters"][namespace] = rng.choice(["", "!!", "AAAA", "AAAAAAAAAAAA", "=" * 12])
        variants.append(json.dumps(saved))
        saved.pop("podNameFilters")  # as an earlier writer saved it
        variants.append(json.dumps(saved))
        saved.pop("podNames")  # as an earlier one saved it
        variants.append(json.dumps(saved))
        others = []
        for number, variant in enumerate(variants):
            path = tmp_path / f"{round_}.{number}.snapshot.json"
            path.write_text(variant, encoding="utf-8")
            others.append(load_state_file(str(path)))
        queries = [
            *pods,
            *((rng.choice([*namespaces, "elsewhere"]), "".join(rng.sample(alphabet, 3))) for _ in range(20)),
        ]
        rng.shuffle(queries)
        for namespace, name in queries:
            expected = state.live_pod(namespace, name)
            for other in others:
                found = other.live_pod(namespace, name)
                assert (found and (found.namespace, found.name, found.node_name, found.phase)) == (
                    expected and (expected.namespace, expected.name, expected.node_name, expected.phase)
                ), (round_, namespace, name)

    state = ClusterState(
        source="test", nodes={}, namespaces=frozenset({"team"}), pods=[PodInfo("team", "web-0", "node-1", "Running")]
    )
    path = tmp_path / "one.snapshot.json"
    path.write_text(snapshot_text(state, "test"), encoding="utf-8")
    loaded = load_state_file(str(path))
    assert loaded.live_pod("team", "web-1") is None
    assert loaded.pods is not None and loaded.pods._namespaces is None  # type: ignore[attr-defined]  # never decoded
    found = loaded.live_pod("team", "web-0")
    assert found is not None and found.node_name == "node-1"

    # Absent names, many of them: most answered by the name filter, the others searched in the saved names,
    # then in the set made of them (the rows stay undecoded); without the filter (an earlier writer's file) each
    # is searched; a name inside another is not one of them, nor one across two lines (looked up in the rows).
    names = [f"web-{index}" for index in range(40)]
    state = ClusterState(
        source="test",
        nodes={},
        namespaces=frozenset({"team"}),
        pods=[PodInfo("team", name, None, None) for name in names],
    )
    text = snapshot_text(state, "test")
    unfiltered = json.loads(text)
    unfiltered.pop("podNameFilters")
    absent = ["web", "eb-1", "web-40", "", "web-1 ", "-1", *(f"x-{index}" for index in range(30))]
    for variant, filtered in ((text, True), (json.dumps(unfiltered), False)):
        path.write_text(variant, encoding="utf-8")
        loaded = load_state_file(str(path))
        assert all(loaded.live_pod("team", name) is None for name in absent)
        table = loaded.pods
        assert isinstance(table, PodTable) and table._namespaces is None  # never decoded
        searched = table._searched.get("team", ("", 0))[1]
        if filtered:  # about one miss in fifty gets through the filter
            assert searched <= 4 and "team" not in table._name_sets, searched
        else:
            assert table._name_sets["team"] == frozenset(names)
        assert all(loaded.live_pod("team", name) is not None for name in names)
        assert loaded.live_pod("team", "web-1\nweb-2") is None


@pytest.mark.parametrize("seed", range(4))
def test_a_label_read_alone_from_a_snapshot_is_the_label_read_whole(seed: int) -> None:
    """NodeShapes reads some labels of every node from a snapshot's labels without decoding them whole
    (SavedLabels.columns): on random labels (keys escaped or not, a key twice, null labels, keys the nodes do
    not have, labels read whole before) each value is the one the decoded labels hold."""
    rng = random.Random(seed)
    keys = ["zone", "topology.kubernetes.io/zone", "pool", "\u00e9t\u00e9", 'a"b', "a\\b", "tab\t", "", "x" * 40]
    for _ in range(40):
        nodes = []
        for index in range(rng.randrange(1, 6)):
            labels = {key: rng.choice(["a", "b", "", "\u00fc", 'q"uote']) for key in rng.sample(keys, rng.randrange(4))}
            text = json.dumps(labels, ensure_ascii=rng.random() < 0.5)
            if labels and rng.random() < 0.2:  # a key twice: the last one counts, as in the whole decoding
                key = next(iter(labels))
                text = text[:-1] + f', {json.dumps(key)}: "twice"}}'
                labels[key] = "twice"
            if rng.random() < 0.1:
                text, labels = "null", {}
            saved = SavedLabels(msgspec.Raw(text.encode()), f"n{index}", _no_refusal)
            if rng.random() < 0.2:
                assert dict(saved) == labels
            nodes.append(NodeInfo(name=f"n{index}", labels=saved))
        for key in [*keys, "missing", 5]:
            assert SavedLabels.columns(nodes, [key]) == [[node.labels.get(key) for node in nodes]]
        for _ in range(5):  # several read together, a key twice among them
            some = rng.sample([*keys, "missing", 5], rng.randrange(1, 5))
            some.append(rng.choice(some))
            assert SavedLabels.columns(nodes, some) == [[node.labels.get(key) for node in nodes] for key in some]
        assert [dict(node.labels) for node in nodes] == [
            json.loads(bytes(node.labels._raw) or b"{}") or {} for node in nodes
        ]


def _no_refusal(node: str, exc: Exception) -> NoReturn:
    raise AssertionError(f"{node}: {exc}")


@pytest.mark.parametrize("damage", ['{"zone": 5}', '["zone"]', '{"zone": {"a": "b"}}'])
def test_damaged_labels_in_a_snapshot_are_a_clear_error_when_read(tmp_path: Path, damage: str) -> None:
    """A node's labels are decoded when a rule first reads them: labels that are not a mapping of strings are
    still the file's error (exit 2, its name, the node), not a rule's internal error."""
    snapshot = tmp_path / "snap.json"
    _convert(EXAMPLE_STATE, snapshot)
    data = json.loads(snapshot.read_text())
    for saved in data["nodes"]:
        saved["labels"] = json.loads(damage)
    snapshot.write_text(json.dumps(data))
    result = run_cli(str(EXAMPLE_MANIFESTS), "--cluster-state", str(snapshot))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert f"nodename-lint: {snapshot}: not a valid nodename-lint cluster snapshot: Expected" in result.stderr
    assert "(the labels of node " in result.stderr
