"""`nodename-lint audit`: findings on a cluster's own objects, and silence on the Pods the system placed.

Placement is tested both ways for each kind of Pod: the same Pod on the same broken node is
reported when a person pinned it and not when the scheduler, a controller or the kubelet did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodename_lint.audit import run_audit
from nodename_lint.cluster.workloads import CORE, KIND_RESOURCES, WORKLOADS, ClusterObjects, Placement, placement
from nodename_lint.model import Manifest
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context, Rule, Violation
from tests.apiserver import TOKEN, ApiServer, cluster_entry, kind_node, write_kubeconfig
from tests.conftest import ROOT, run_cli
from tests.test_sarif import assert_valid_sarif

EXAMPLE = ROOT / "examples" / "cluster"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


# --- building clusters ----------------------------------------------------------------------------
def nodes() -> list[dict[str, Any]]:
    return [
        kind_node("kind-worker", cpu="4", index=1),
        kind_node(
            "kind-gone",
            ready="Unknown",
            unschedulable=True,
            index=2,
            taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}],
        ),
    ]


def owned_by(kind: str, name: str) -> dict[str, Any]:
    return {"ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": name, "controller": True}]}


def managed_by(manager: str, *, nodename: bool, subresource: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"f:containers": {}}
    if nodename:
        spec["f:nodeName"] = {}
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": "Update",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": spec},
    }
    if subresource:
        entry["subresource"] = subresource
    return {"managedFields": [entry]}


def pod(
    name: str,
    node: str | None,
    *,
    phase: str = "Running",
    cpu: str = "100m",
    meta: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox:1.37", "resources": {"requests": {"cpu": cpu}}}],
        **(spec or {}),
    }
    if node:
        body["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-11-29T22:00:00Z", **(meta or {})},
        "spec": body,
        "status": {"phase": phase, **(status or {})},
    }


def workload(
    kind: str, name: str, template_spec: dict[str, Any], *, meta: dict[str, Any] | None = None, replicas: int = 1
) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"metadata": {"labels": {"app": name}}, "spec": template_spec}}
    if kind != "DaemonSet":
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default", **(meta or {})},
        "spec": spec,
    }


def container(cpu: str) -> list[dict[str, Any]]:
    return [{"name": "main", "image": "busybox:1.37", "resources": {"requests": {"cpu": cpu}}}]


def audit_result(*objects: dict[str, Any]) -> Any:
    """The RunResult of auditing these objects next to nodes()."""
    found = ClusterObjects(source="file test.yaml", by_kind={"Node": nodes(), "Namespace": [], "Pod": []})
    for obj in objects:
        if obj["kind"] == "Pod":
            found.add_pod(obj)
        else:
            found.by_kind.setdefault(obj["kind"], []).append(obj)
    return run_audit(found, dict.fromkeys(all_rules()), now=NOW)


def audit(*objects: dict[str, Any]) -> list[tuple[str, str]]:
    """(object, rule) of every finding when auditing these objects next to nodes()."""
    return sorted((f.object.key() if f.object else "", f.rule) for f in audit_result(*objects).findings)


HAND = managed_by("kubectl-create", nodename=True)
REJECTED = "Pod was rejected: Node didn't have enough resource: cpu"


# --- who placed a Pod -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "meta,expected",
    [
        ({"annotations": {"kubernetes.io/config.mirror": "abc"}}, Placement.MIRROR),
        (owned_by("Node", "kind-worker"), Placement.MIRROR),
        (owned_by("DaemonSet", "kindnet"), Placement.DAEMONSET),
        (owned_by("ReplicaSet", "web-5d8f"), Placement.CONTROLLER),
        (managed_by("kubectl-run", nodename=False), Placement.SCHEDULER),
        (managed_by("kube-scheduler", nodename=True, subresource="binding"), Placement.SCHEDULER),
        (HAND, Placement.BY_HAND),
        ({}, Placement.UNKNOWN),
    ],
)
def test_placement_is_read_from_owners_and_managed_fields(meta: dict[str, Any], expected: Placement) -> None:
    assert placement(pod("p", "kind-worker", meta=meta)) is expected


def test_a_pod_without_node_name_is_unscheduled_whoever_manages_it() -> None:
    assert placement(pod("p", None, meta=HAND)) is Placement.UNSCHEDULED


# --- silence on what the system placed, findings on what a person pinned ---------------------------
SYSTEM_PLACED = {
    "mirror": {"annotations": {"kubernetes.io/config.mirror": "abc"}, **owned_by("Node", "kind-gone")},
    "daemonset": owned_by("DaemonSet", "kindnet"),
    "controller": owned_by("ReplicaSet", "web-5d8f"),
    "scheduler": managed_by("kubectl-run", nodename=False),
    "binding": managed_by("kube-scheduler", nodename=True, subresource="binding"),
}


@pytest.mark.parametrize("who", sorted(SYSTEM_PLACED))
@pytest.mark.parametrize(
    "node,phase,status",
    [
        ("kind-gone", "Running", {}),  # NotReady, cordoned, NoExecute-tainted
        ("no-such-node", "Pending", {}),  # orphaned
        ("kind-worker", "Failed", {"reason": "OutOfcpu", "message": REJECTED}),
    ],
)
def test_system_placed_pods_are_never_reported(who: str, node: str, phase: str, status: dict[str, Any]) -> None:
    assert audit(pod("p", node, phase=phase, cpu="100", meta=SYSTEM_PLACED[who], status=status)) == []


@pytest.mark.parametrize(
    "node,phase,status,rule",
    [
        ("kind-gone", "Running", {}, "node-not-ready"),
        ("no-such-node", "Pending", {}, "unknown-node"),
        ("kind-worker", "Failed", {"reason": "OutOfcpu", "message": REJECTED}, "insufficient-resources"),
    ],
)
def test_the_same_pods_pinned_by_hand_are_reported(node: str, phase: str, status: dict[str, Any], rule: str) -> None:
    assert ("Pod/default/p", rule) in audit(pod("p", node, phase=phase, cpu="100", meta=HAND, status=status))


def test_a_pod_without_managed_fields_gets_only_its_live_state_audited() -> None:
    assert audit(pod("p", "kind-gone")) == []  # who pinned it is unknown: node-not-ready is not claimed
    assert audit(pod("p", "no-such-node", phase="Pending")) == [("Pod/default/p", "unknown-node")]


def test_a_succeeded_pod_pinned_by_hand_is_done_and_not_reported() -> None:
    assert audit(pod("p", "no-such-node", phase="Succeeded", meta=HAND)) == []


# --- workloads: once, on the owner ----------------------------------------------------------------
def test_a_replicaset_owned_by_a_deployment_is_reported_once_on_the_deployment() -> None:
    pinned = {"nodeName": "kind-worker", "containers": container("100m")}
    found = audit(
        workload("Deployment", "web", pinned),
        workload("ReplicaSet", "web-5d8f", pinned, meta=owned_by("Deployment", "web")),
        pod("web-5d8f-abcde", "kind-worker", meta=owned_by("ReplicaSet", "web-5d8f")),
    )
    assert found == [("Deployment/default/web", "nodename-in-template")]


def test_a_replicaset_whose_owner_is_not_in_the_state_is_reported_itself() -> None:
    pinned = {"nodeName": "kind-worker", "containers": container("100m")}
    found = audit(workload("ReplicaSet", "rollout-5d8f", pinned, meta=owned_by("Rollout", "rollout")))
    assert found == [("ReplicaSet/default/rollout-5d8f", "nodename-in-template")]


def test_a_workload_without_node_name_is_silent() -> None:
    assert (
        audit(
            workload("Deployment", "web", {"containers": container("100m")}),
            workload("DaemonSet", "agent", {"containers": container("100m")}),
        )
        == []
    )


def test_a_running_object_is_not_reported_for_not_fitting_next_to_itself() -> None:
    """3 of 4 cpu: a Pod (or two replicas of 1500m) that already run there fit; a new copy would not."""
    assert audit(pod("big", "kind-worker", cpu="3", meta=HAND)) == [("Pod/default/big", "nodename-on-pod")]
    pinned = {"nodeName": "kind-worker", "containers": container("1500m")}
    replicas = [pod(f"web-{i}", "kind-worker", cpu="1500m", meta=owned_by("Deployment", "web")) for i in range(2)]
    assert audit(workload("Deployment", "web", pinned, replicas=2), *replicas) == [
        ("Deployment/default/web", "nodename-in-template")
    ]
    assert ("Deployment/default/web", "insufficient-resources") in audit(
        workload("Deployment", "web", pinned, replicas=3), *replicas
    )


# --- live-state messages --------------------------------------------------------------------------
def audit_messages(*objects: dict[str, Any]) -> dict[str, str]:
    return {f.rule: f.message for f in audit_result(*objects).findings}


def test_a_pod_on_a_missing_node_gets_the_podgc_timeline_from_its_creation() -> None:
    message = audit_messages(pod("ghost", "kind-wroker", phase="Pending", meta=HAND))["unknown-node"]
    assert (
        "? In the cluster: it is Pending, created at 2026-11-29T22:00:00Z: with its node missing since then, PodGC "
        "deletes it between 2026-11-29T22:00:40Z and 2026-11-29T22:01:20Z"
    ) in message
    assert "which has passed" in message


def test_a_rejected_pod_is_explained_by_the_rule_and_quotes_the_kubelet() -> None:
    kubelet = "Pod was rejected: Node didn't have enough resource: cpu, requested: 100000, used: 100, capacity: 4000"
    message = audit_messages(
        pod(
            "bigcpu",
            "kind-worker",
            phase="Failed",
            cpu="100",
            meta=HAND,
            status={"reason": "OutOfcpu", "message": kubelet},
        )
    )["insufficient-resources"]
    assert message.startswith("Pod bigcpu would be rejected by the kubelet on kind-worker with OutOfcpu")
    assert f'status.reason OutOfcpu, status.message "{kubelet}"' in message


def test_a_rejection_whose_cause_is_gone_is_still_reported_with_control_characters_removed() -> None:
    status = {"reason": "OutOfmemory", "message": "Pod was rejected:\x1b[2J memory"}
    found = audit_messages(pod("p", "kind-worker", phase="Failed", meta=HAND, status=status))
    message = found["insufficient-resources"]
    assert 'status.message "Pod was rejected: [2J memory"' in message and "\x1b" not in message
    assert "The cause is gone from the cluster now" in message


# --- the example cluster: file, live, formats -----------------------------------------------------
def objects_of(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The items of a saved List grouped by resource, as list responses hold them."""
    served: dict[str, list[dict[str, Any]]] = {resource: [] for resource in KIND_RESOURCES.values()}
    for item in yaml.safe_load(path.read_text(encoding="utf-8"))["items"]:
        item = dict(item)
        kind = item.pop("kind")
        item.pop("apiVersion", None)
        served[KIND_RESOURCES[kind]].append(item)
    return served


def serve(path: Path) -> ApiServer:
    served = objects_of(path)
    nodes, namespaces, pods = (served.pop(resource) for resource in CORE.values())
    return ApiServer(nodes, namespaces, pods, workloads=dict(served))


def kubeconfig_for(tmp_path: Path, server: ApiServer) -> Path:
    return write_kubeconfig(
        tmp_path / "kubeconfig",
        clusters={"kind-kind": cluster_entry(server.url, server.ca_pem)},
        users={"kind-kind": {"token": TOKEN}},
        contexts={"kind-kind": ("kind-kind", "kind-kind")},
        current="kind-kind",
    )


def test_audit_of_the_example_cluster_fails_the_run_and_says_nothing_on_stderr() -> None:
    """What it prints is audit-expected.txt and docs/audit.md's run, kept current by tests/test_generated.py."""
    result = run_cli("audit", "--cluster-state", "examples/cluster/state.yaml", cwd=ROOT)
    assert result.returncode == 1 and result.stderr == ""


def comparable(report: str, source: str) -> list[tuple[Any, ...]]:
    return sorted(
        (
            f["rule"],
            f["object"]["kind"],
            f["object"]["namespace"],
            f["object"]["name"],
            f["severity"],
            f["message"].replace(source, "<cluster>"),
        )
        for f in json.loads(report)["findings"]
    )


def test_audit_live_gives_the_same_findings_as_the_saved_state(tmp_path: Path) -> None:
    state = EXAMPLE / "state.yaml"
    from_file = run_cli("audit", "--cluster-state", str(state), "--format", "json", cwd=ROOT)
    with serve(state) as server:
        live = run_cli("audit", "--kubeconfig", str(kubeconfig_for(tmp_path, server)), "--format", "json")
        requests = server.api_requests() + [r for r in server.requests if r.path.startswith("/apis/")]
    assert live.returncode == from_file.returncode == 1, live.stderr + from_file.stderr
    expected = comparable(from_file.stdout, f"file {state}")
    assert expected and comparable(live.stdout, "context kind-kind") == expected
    assert {r.method for r in server.requests} == {"GET"}
    assert all(r.query.get("limit") and "watch" not in r.query for r in requests)  # paginated LISTs, no watch
    assert {r.path for r in requests} == {
        "/api/v1/nodes",
        "/api/v1/namespaces",
        "/api/v1/pods",
        *(f"{group}/{resource}" for resource, group in WORKLOADS.values()),
    }


def test_snapshot_workloads_round_trips_to_the_same_audit(tmp_path: Path) -> None:
    state = EXAMPLE / "state.yaml"
    with serve(state) as server:
        kubeconfig = kubeconfig_for(tmp_path, server)
        snapshot = run_cli("snapshot", "--workloads", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "s.yaml"))
        live = run_cli("audit", "--kubeconfig", str(kubeconfig), "--format", "json")
    assert snapshot.returncode == 0, snapshot.stderr
    saved = run_cli("audit", "--cluster-state", str(tmp_path / "s.yaml"), "--format", "json")
    assert comparable(saved.stdout, f"file {tmp_path / 's.yaml'}") == comparable(live.stdout, "context kind-kind")
    saved_text = (tmp_path / "s.yaml").read_text()
    assert "managedFields" in saved_text and "f:containers" not in saved_text


def test_audit_findings_name_the_object_in_every_format(tmp_path: Path) -> None:
    args = ["audit", "--cluster-state", "examples/cluster/state.yaml"]
    log = assert_valid_sarif(run_cli(*args, "--format", "sarif", cwd=ROOT).stdout)
    results = log["runs"][0]["results"]
    assert results and all(
        "physicalLocation" not in location and location["logicalLocations"][0]["fullyQualifiedName"]
        for result in results
        for location in result["locations"]
    )
    names = {result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for result in results}
    assert "Pod/default/ghost" in names and "Deployment/default/web" in names
    report = json.loads(run_cli(*args, "--format", "json", cwd=ROOT).stdout)
    assert all(f["file"] is None and f["line"] is None and f["object"]["name"] for f in report["findings"])
    assert report["summary"]["cluster"] == "file examples/cluster/state.yaml"
    github = run_cli(*args, "--format", "github", cwd=ROOT).stdout.splitlines()
    assert github and all("file=" not in line and "line=" not in line for line in github)
    assert any(line.startswith("::error title=nodename-lint unknown-node::Pod/default/ghost: ") for line in github)
    markdown = run_cli(*args, "--format", "markdown", cwd=ROOT).stdout
    assert "<code>Pod/default/ghost</code>" in markdown


def test_audit_cluster_state_and_live_options_exclude_each_other(tmp_path: Path) -> None:
    result = run_cli("audit", "--cluster-state", "examples/cluster/state.yaml", "--context", "x", cwd=ROOT)
    assert result.returncode == 2 and "cannot be combined" in result.stderr


def rejected_replica(name: str, cpu: str = "100") -> dict[str, Any]:
    return pod(
        name,
        "kind-worker",
        phase="Failed",
        cpu=cpu,
        meta=owned_by("ReplicaSet", "web-5d8f"),
        status={"reason": "OutOfcpu", "message": f"Pod was rejected: {name} did not fit"},
    )


def test_the_rejected_pods_of_a_pinned_workload_are_counted_on_the_workload() -> None:
    pinned = {"nodeName": "kind-worker", "containers": container("100")}
    objects = (
        workload("Deployment", "web", pinned),
        workload("ReplicaSet", "web-5d8f", pinned, meta=owned_by("Deployment", "web")),
        rejected_replica("web-5d8f-a"),
        rejected_replica("web-5d8f-b"),
    )
    message = audit_messages(*objects)["insufficient-resources"]
    assert "the kubelet did reject them: 2 of its Pods are Failed" in message and "did not fit" in message
    assert [key for key, _ in audit(*objects)] == ["Deployment/default/web"] * 2  # never on the Pods themselves


def test_rejected_pods_of_a_workload_are_reported_even_when_the_cause_is_gone() -> None:
    pinned = {"nodeName": "kind-worker", "containers": container("100m")}
    message = audit_messages(
        workload("Deployment", "web", pinned),
        workload("ReplicaSet", "web-5d8f", pinned, meta=owned_by("Deployment", "web")),
        rejected_replica("web-5d8f-a"),
    )["insufficient-resources"]
    assert message.startswith("the kubelet on kind-worker rejected Deployment web's Pod: ")
    assert "The cause is gone from the cluster now" in message


def test_rejected_pods_of_a_workload_the_scheduler_places_are_not_claimed() -> None:
    unpinned = {"containers": container("100m")}
    assert (
        audit(
            workload("Deployment", "web", unpinned),
            workload("ReplicaSet", "web-5d8f", unpinned, meta=owned_by("Deployment", "web")),
            rejected_replica("web-5d8f-a"),
        )
        == []
    )


def test_an_unscheduled_bare_pod_that_fits_nowhere_is_reported() -> None:
    assert audit(pod("huge", None, phase="Pending", cpu="100", meta=HAND)) == [("Pod/default/huge", "no-node-fits")]
    assert audit(pod("small", None, phase="Pending", cpu="100m", meta=HAND)) == []


def test_the_ignore_annotation_on_a_live_object_silences_it() -> None:
    meta = {**HAND, "annotations": {"nodename-lint.io/ignore": "unknown-node"}}
    assert audit(pod("ghost", "no-such-node", phase="Pending", meta=meta)) == [("Pod/default/ghost", "nodename-on-pod")]


def test_progress_is_shown_on_a_terminal_and_cleared() -> None:
    import io

    from nodename_lint.cluster.workloads import ListProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    progress = ListProgress(screen)
    keep = progress.counter("pods", lambda obj: obj)
    for index in range(1200):
        keep({"n": index})
    progress.done()
    assert "reading pods: 500" in screen.getvalue() and "reading pods: 1,000" in screen.getvalue()
    assert screen.getvalue().endswith("\r\x1b[K")
    quiet = io.StringIO()
    ListProgress(quiet).counter("pods", lambda obj: obj)({"n": 1})
    assert quiet.getvalue() == ""


BAD_STATE = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: kind-worker}}
- {apiVersion: v1, kind: Pod, metadata: 5, spec: [1], status: x}
- {apiVersion: v1, kind: Pod, metadata: {name: p, ownerReferences: [7, {controller: true}]}, spec: {nodeName: 3}}
- {apiVersion: apps/v1, kind: Deployment, metadata: [], spec: {template: 4}}
- {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs, ownerReferences: {a: b}}, spec: {template: {spec: []}}}
- apps/v1
- {apiVersion: batch/v1, kind: CronJob, metadata: {name: cj},
   spec: {jobTemplate: {spec: {template: {spec: {nodeName: [x]}}}}}}
- {apiVersion: v1, kind: {cpu: 1e400}, metadata: {name: k}}
"""


def test_odd_objects_in_a_state_file_never_end_in_a_traceback(tmp_path: Path) -> None:
    """A kind that is a mapping raised while the objects were sorted by kind (tests/test_state_mutations.py)."""
    (tmp_path / "state.yaml").write_text(BAD_STATE)
    result = run_cli("audit", "--cluster-state", str(tmp_path / "state.yaml"))
    assert "Traceback" not in result.stderr and result.returncode in (0, 1, 2), result.stderr
    assert result.stdout or result.stderr.startswith("nodename-lint: ")


def test_audit_from_a_file_never_imports_the_kubernetes_client(tmp_path: Path) -> None:
    from tests.test_imports import loaded_modules

    _, loaded, output = loaded_modules(["audit", "--cluster-state", str(EXAMPLE / "state.yaml")], tmp_path)
    assert "kubernetes" not in loaded and "urllib3" not in loaded, loaded
    assert "Pod/default/ghost" in output


def test_a_pod_pinned_by_hand_on_a_node_tainted_noexecute_since_is_reported_with_its_fate() -> None:
    taint = {"key": "maintenance", "value": "kernel", "effect": "NoExecute"}
    tainted = kind_node("kind-tainted", index=3, taints=[taint])
    found = ClusterObjects(source="file test.yaml", by_kind={"Node": [*nodes(), tainted], "Namespace": []})
    found.add_pod(pod("debug", "kind-tainted", meta=HAND))
    found.add_pod(pod("agent", "kind-tainted", meta=owned_by("DaemonSet", "agent")))
    result = run_audit(found, dict.fromkeys(all_rules()), now=NOW)
    messages = {(f.object.key() if f.object else "", f.rule): f.message for f in result.findings}
    assert set(messages) == {("Pod/default/debug", "untolerated-taint"), ("Pod/default/debug", "nodename-on-pod")}
    assert (
        "In the cluster: it is Running there: the taint eviction controller deletes"
        in messages[("Pod/default/debug", "untolerated-taint")]
    )


@pytest.mark.parametrize(
    "tolerations,fate",
    [
        ([], "evicts it at once"),
        (
            [
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            "evicts it 300 s after",
        ),
        ([{"operator": "Exists"}], "tolerates the node's NoExecute taint forever"),
    ],
)
def test_a_pod_pinned_to_an_unreachable_node_is_told_when_it_is_evicted(tolerations: list[Any], fate: str) -> None:
    message = audit_messages(pod("p", "kind-gone", meta=HAND, spec={"tolerations": tolerations}))["node-not-ready"]
    assert "In the cluster: it is Running there" in message and fate in message


def test_a_cluster_bigger_than_a_page_is_read_page_by_page_with_the_same_findings(tmp_path: Path) -> None:
    """1,201 Pods: three pages of Pods, and a continue token that expires once on the way (410 Gone)."""
    from tests.apiserver import Fault, kind_namespace

    agents = [pod(f"agent-{i:04d}", "kind-worker", meta=owned_by("DaemonSet", "agent")) for i in range(1200)]
    ghost = pod("ghost", "kind-wroker", phase="Pending", meta=HAND)
    served = [{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")} for obj in (*agents, ghost)]
    with ApiServer(nodes(), [kind_namespace("default")], served) as server:
        server.faults.append(Fault("gone", path="/api/v1/pods", times=1, continue_only=True))
        live = run_cli("audit", "--kubeconfig", str(kubeconfig_for(tmp_path, server)), "--format", "json")
        pages = [r for r in server.requests if r.path == "/api/v1/pods"]
    assert live.returncode == 1, live.stderr
    report = json.loads(live.stdout)
    assert sorted((f["object"]["name"], f["rule"]) for f in report["findings"]) == [
        ("ghost", "nodename-on-pod"),
        ("ghost", "unknown-node"),
    ]
    assert any("1200 Pods placed by the system" in note for note in report["summary"]["notes"])
    assert len(pages) == 3 + 2 and all(r.query["limit"] == "500" for r in pages)  # 2 pages, 410, then 3 pages


def with_host_port(port: int) -> dict[str, Any]:
    ports = [{"containerPort": port, "hostPort": port}]
    return {"containers": [{"name": "main", "image": "busybox:1.37", "ports": ports}]}


def test_host_ports_held_by_system_placed_pods_count_and_a_pod_never_conflicts_with_itself() -> None:
    ingress = pod("ingress-abcde", "kind-worker", meta=owned_by("DaemonSet", "ingress"), spec=with_host_port(80))
    debug = pod("debug", "kind-worker", phase="Pending", meta=HAND, spec=with_host_port(80))
    assert ("Pod/default/debug", "host-port-conflict") in audit(ingress, debug)
    assert ("Pod/default/debug", "host-port-conflict") not in audit(
        pod("debug", "kind-worker", meta=HAND, spec=with_host_port(80))
    )


def test_a_pod_rejected_for_its_host_port_is_explained_by_host_port_conflict() -> None:
    ingress = pod("ingress-abcde", "kind-worker", meta=owned_by("DaemonSet", "ingress"), spec=with_host_port(80))
    status = {
        "reason": "NodePorts",
        "message": "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the "
        "requested pod ports",
    }
    message = audit_messages(
        ingress, pod("debug", "kind-worker", phase="Failed", meta=HAND, status=status, spec=with_host_port(80))
    )["host-port-conflict"]
    assert "already used by Pod default/ingress-abcde" in message and "status.reason NodePorts" in message


def _rule_on_every_pod(rule_id: str, **declared: Any) -> Rule:
    """A rule that reports every Pod, with what it declares about audit."""
    rule = Rule(id=rule_id, severity="error", summary="Test.", doc="", examples=(), **declared)

    @rule.check
    def check(obj: Manifest, context: Context) -> Iterator[Violation]:
        if obj.is_pod:
            yield Violation(("spec",), f"{rule_id} found it", fix="none")

    return rule


def test_what_audit_does_with_a_rule_is_declared_by_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """audit reads the rule's own declarations (not_audited, audit_adds), not a list of rule ids of its own."""
    rules = [
        _rule_on_every_pod("test-plain"),
        _rule_on_every_pod("test-about-files", not_audited="it is about files"),
        _rule_on_every_pod("test-missing-node", audit_adds="podgc-timeline"),
        _rule_on_every_pod("test-who-pinned", audit_adds="nodename-managers"),
    ]
    catalogue = {**all_rules(), **{rule.id: rule for rule in rules}}
    monkeypatch.setattr("nodename_lint.audit.all_rules", lambda: catalogue)
    monkeypatch.setattr("nodename_lint.engine.all_rules", lambda: catalogue)
    found = ClusterObjects(source="file test.yaml", by_kind={"Node": nodes(), "Namespace": []})
    found.add_pod(pod("ghost", "kind-nowhere", phase="Pending", meta=HAND))
    found.add_pod(pod("unattributed", "kind-nowhere", phase="Pending"))  # no managedFields: who pinned it is unknown
    result = run_audit(found, dict.fromkeys(rule.id for rule in rules), now=NOW)
    messages = {(f.object.key() if f.object else "", f.rule): f.message for f in result.findings}
    assert set(messages) == {
        ("Pod/default/ghost", "test-plain"),
        ("Pod/default/ghost", "test-missing-node"),
        ("Pod/default/ghost", "test-who-pinned"),
        ("Pod/default/unattributed", "test-missing-node"),  # a live-state fact whoever pinned it
    }
    assert messages[("Pod/default/ghost", "test-plain")] == "test-plain found it"
    assert (
        "found it. In the cluster: it is Pending, created at 2026-11-29T22:00:00Z: with its node missing"
        in (messages[("Pod/default/ghost", "test-missing-node")])
    )
    assert messages[("Pod/default/ghost", "test-who-pinned")] == (
        "test-who-pinned found it (nodeName was set at creation by kubectl-create, per managedFields)"
    )
