"""Every cluster rule through both paths: a saved state file and the same objects served live.

The live path reads only what the manifests name (Pods on the referenced nodes, Pods with the
manifests' names), so equal findings prove that this partial read is enough for every rule.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import trustme
import yaml

from nodename_lint.cluster.from_file import load_state_text
from nodename_lint.cluster.live import LiveCluster, LiveOptions, referenced
from nodename_lint.engine import Linter, parse_source
from nodename_lint.registry import all_rules
from nodename_lint.render.types import RenderOptions
from nodename_lint.rule import Context, Severity
from nodename_lint.sources import Source
from tests.apiserver import TOKEN, ApiServer, cluster_entry, write_kubeconfig
from tests.apiserver.server import BUILT_IN_PRIORITY_CLASSES
from tests.conftest import ROOT, run_cli

EXAMPLE = ROOT / "examples" / "cluster"
KINDS = {
    "Node": "nodes",
    "Namespace": "namespaces",
    "Pod": "pods",
    "RuntimeClass": "runtimeclasses",
    "PriorityClass": "priorityclasses",  # served beside the built-in ones, as an API server does
}
TEMPLATE_HOLDERS = {"ReplicaSet": "replicasets", "ControllerRevision": "controllerrevisions"}  # served as workloads
CA = trustme.CA()


def objects_of(state_text: str) -> dict[str, Any]:
    """The items of a saved List, grouped by resource and without kind/apiVersion, as a list response has them
    (ApiServer's arguments: the ReplicaSets and ControllerRevisions under `workloads`)."""
    known = {**KINDS, **TEMPLATE_HOLDERS}
    served: dict[str, list[dict[str, Any]]] = {resource: [] for resource in known.values()}
    for document in yaml.safe_load_all(state_text):
        for item in (document or {}).get("items", [document] if document and document.get("kind") in known else []):
            item = dict(item)
            kind = item.pop("kind", None)
            item.pop("apiVersion", None)
            if kind in known:
                served[known[kind]].append(item)
    served["priorityclasses"] = [*BUILT_IN_PRIORITY_CLASSES, *served["priorityclasses"]]
    return {
        **{resource: served[resource] for resource in KINDS.values()},
        "workloads": {resource: served[resource] for resource in TEMPLATE_HOLDERS.values()},
    }


def _kubeconfig(tmp_path: Path, server: ApiServer) -> Path:
    return write_kubeconfig(
        tmp_path / "kubeconfig",
        clusters={"kind-kind": cluster_entry(server.url, server.ca_pem)},
        users={"kind-kind": {"token": TOKEN}},
        contexts={"kind-kind": ("kind-kind", "kind-kind")},
        current="kind-kind",
    )


# no-node-fits says when it compared nodes whose Pods a live run does not read with their allocatable alone
PARTIAL = re.compile(r" \(the Pods already on \d+ of \d+ nodes are not in the cluster state <cluster>: [^)]*\)")


def _rows(findings: list[Any], source: str) -> list[tuple[str, int, int, str, str]]:
    return sorted(
        (f.rule, f.line, f.column, f.severity, PARTIAL.sub("", f.message.replace(source, "<cluster>")))
        for f in findings
    )


# Examples whose finding needs the Pods of nodes a live run does not read: no-node-fits' unpinned Deployment
# without host ports, whose rollout stalls beside its old Pods (a live run reads the Pods of the nodes the
# manifests pin, or of every node for host ports: docs/cluster-state.md). Checked from the file only.
FILE_ONLY = {("no-node-fits", 3)}


def _cluster_examples() -> list[Any]:
    return [
        pytest.param(rule, index, example, id=f"{rule.id}-{index}")
        for rule in all_rules().values()
        if rule.is_cluster_rule
        for index, example in enumerate(rule.examples)
        if example.cluster is not None and (rule.id, index) not in FILE_ONLY
    ]


@pytest.mark.parametrize("rule,index,example", _cluster_examples())
def test_rule_example_gives_the_same_findings_live(tmp_path: Path, rule: Any, index: int, example: Any) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(example.manifest, encoding="utf-8")
    source = Source(str(manifest), example.static_pod)
    severities: dict[str, Severity | None] = {rule.id: None}

    from_file = Linter(severities, Context(cluster=load_state_text(example.cluster, source="state.yaml")))
    expected = from_file.collect([from_file.lint_source(source)]).findings

    parsed = parse_source(source, RenderOptions(), "default")  # a live run parses once, fetches, then lints
    with ApiServer(**objects_of(example.cluster), ca=CA) as server:
        state = LiveCluster(LiveOptions(kubeconfig=str(_kubeconfig(tmp_path, server)), request_timeout=5)).state_for(
            referenced([parsed], "default")
        )
        assert server.methods == {"GET"}
    live = Linter(severities, Context(cluster=state))
    found = live.collect([live.lint_parsed(parsed)]).findings
    assert bool(found) == example.fails
    assert _rows(found, "context kind-kind") == _rows(expected, "file state.yaml")


def test_cluster_rules_all_have_a_live_example() -> None:
    covered = {param.values[0].id for param in _cluster_examples()}
    assert covered == {rule.id for rule in all_rules().values() if rule.is_cluster_rule}


def test_examples_cluster_live_equals_cluster_state(tmp_path: Path) -> None:
    """The lesson's scenario: `--cluster-state state.yaml` and the same cluster served live agree exactly."""
    state_path = EXAMPLE / "state.yaml"
    args = [str(EXAMPLE / "manifests"), "--format", "json"]
    from_file = run_cli(*args, "--cluster-state", str(state_path), cwd=ROOT)
    with ApiServer(**objects_of(state_path.read_text(encoding="utf-8")), ca=CA) as server:
        live = run_cli(*args, "--kubeconfig", str(_kubeconfig(tmp_path, server)), cwd=ROOT)
        pod_lists = [r for r in server.requests if r.path.endswith("/pods")]
        assert server.methods == {"GET"}
    assert live.returncode == from_file.returncode == 1, live.stderr + from_file.stderr

    def comparable(report: str, source: str) -> list[tuple[Any, ...]]:
        return sorted(
            (f["rule"], f["file"], f["line"], f["column"], f["severity"], f["message"].replace(source, "<cluster>"))
            for f in json.loads(report)["findings"]
        )

    expected = comparable(from_file.stdout, f"file {state_path}")
    found = comparable(live.stdout, "context kind-kind")
    assert any(PARTIAL.search(row[5]) for row in found if row[0] == "no-node-fits")
    assert [(*row[:5], PARTIAL.sub("", row[5])) for row in found] == expected
    assert {row[0] for row in expected} >= {
        "unknown-node",
        "insufficient-resources",
        "node-selector-mismatch",
        "untolerated-taint",
        "node-not-ready",
        "nodename-immutable",
        "static-pod-missing-namespace",
        "no-node-fits",
    }
    # Pods were read per referenced node and per manifest Pod, never as one cluster-wide list
    assert all(r.query.get("fieldSelector") for r in pod_lists)


def _issue_11_cases() -> list[Any]:
    """Issue 11's cases (tests/test_kubelet_admission.py) whose prediction reads the cluster."""
    from tests import test_kubelet_admission as cases

    sandboxed_by_hand = cases.SANDBOXED.replace(
        "  runtimeClassName: gvisor\n", "  runtimeClassName: gvisor\n  overhead: {cpu: 100m}\n"
    )
    return [
        pytest.param(cases.pod(cases.BURSTABLE), cases.PRESSURED, [], id="disk-pressure"),
        pytest.param(cases.pod(cases.CONTAINER, node_name="kind-worker2"), cases.PRESSURED, [], id="memory-pressure"),
        pytest.param(cases.pod("  os: {name: windows}\n" + cases.CONTAINER), cases.OS_NODES, [], id="os"),
        pytest.param(cases.pod(cases.WANTS_80), cases.PORT_STATE, [], id="host-port"),
        pytest.param(
            cases.pod(cases.WANTS_80, node_name=None),
            cases.state(cases.node("kind-worker"), cases.running_pod("ingress", "kind-worker", cases.HOLDER)),
            [],
            id="scheduler-ports",
        ),
        pytest.param(cases.SERVICE, cases.NS_STATE, [], id="missing-namespace"),
        pytest.param(cases.SANDBOXED, cases.RC_STATE, [], id="runtime-class-overhead-counted"),
        pytest.param(sandboxed_by_hand, cases.RC_STATE, [], id="runtime-class-overhead-by-hand"),
        pytest.param(cases.SANDBOXED.replace("gvisor", "kata"), cases.RC_STATE, [], id="runtime-class-not-found"),
        pytest.param(cases.DEPLOYMENT, cases.state(cases.node("kind-worker")), [], id="invalid-name-in-template"),
        pytest.param(
            cases.pod("  runtimeClassName: gvisor\n" + cases.CONTAINER, node_name="kind-worker2"),
            cases.SANDBOX_STATE,
            [],
            id="runtime-class-scheduling",
        ),
        pytest.param(
            cases.pod("  runtimeClassName: gvisor\n  nodeSelector: {sandbox: kata}\n" + cases.CONTAINER),
            cases.SANDBOX_STATE,
            [],
            id="runtime-class-conflict",
        ),
        pytest.param(
            cases.pod(cases.match_fields(["kind-worker"]) + cases.BIG, node_name=None),
            cases.THREE_NODES,
            [],
            id="match-fields",
        ),
        pytest.param(
            cases.pod(
                '  containers:\n    - name: app\n      image: busybox\n      resources: {requests: {cpu: "64"}}\n',
                node_name=None,
            ),
            cases.state(cases.node("kind-control-plane"), cases.running_pod("etcd", "kind-control-plane")),
            ["--static-pod-node", "kind-control-plane"],
            id="static-pod-node",
        ),
    ]


@pytest.mark.parametrize("manifest, state_text, extra", _issue_11_cases())
def test_issue_11_cases_agree_live(tmp_path: Path, manifest: str, state_text: str, extra: list[str]) -> None:
    """The same findings from `--cluster-state FILE` and from the same objects served live."""
    from tests.test_kubelet_admission import NAMESPACES

    if "kind: Namespace" not in state_text:  # a live cluster always has its namespaces
        state_text += NAMESPACES
    folder = tmp_path / ("manifests" if extra else "deploy")
    folder.mkdir()
    (folder / "manifest.yaml").write_text(manifest, encoding="utf-8")
    (tmp_path / "state.yaml").write_text(state_text, encoding="utf-8")
    args = [str(folder), "--format", "json", *extra] + (["--static-pod-dir", str(folder)] if extra else [])
    from_file = run_cli(*args, "--cluster-state", str(tmp_path / "state.yaml"))
    with ApiServer(**objects_of(state_text), ca=CA) as server:
        live = run_cli(*args, "--kubeconfig", str(_kubeconfig(tmp_path, server)))
        assert server.methods == {"GET"}

    def comparable(report: str, source: str) -> list[tuple[Any, ...]]:
        return sorted(
            (f["rule"], f["line"], f["column"], f["severity"], f["message"].replace(source, "<cluster>"))
            for f in json.loads(report)["findings"]
        )

    expected = comparable(from_file.stdout, f"file {tmp_path / 'state.yaml'}")
    assert expected, from_file.stderr
    assert comparable(live.stdout, "context kind-kind") == expected, live.stderr


def test_a_snapshot_keeps_what_issue_11_reads(tmp_path: Path) -> None:
    """`nodename-lint snapshot` keeps RuntimeClasses, host ports and node conditions: linting against it
    gives the findings a live run gives."""
    from tests import test_kubelet_admission as cases

    state_text = (
        cases.state(
            cases.node("kind-worker", cpu="1", conditions=', {type: MemoryPressure, status: "True"}'),
            cases.running_pod("ingress", "kind-worker", cases.HOLDER),
            cases.GVISOR,
        )
        + cases.NAMESPACES
    )
    manifest = cases.pod(
        "  runtimeClassName: gvisor\n  containers:\n    - name: app\n      image: nginx\n"
        "      resources: {requests: {cpu: 600m}}\n      ports: [{containerPort: 80, hostPort: 80}]\n"
    )
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "pod.yaml").write_text(manifest, encoding="utf-8")
    args = [str(tmp_path / "deploy"), "--format", "json"]
    with ApiServer(**objects_of(state_text), ca=CA) as server:
        kubeconfig = str(_kubeconfig(tmp_path, server))
        live = run_cli(*args, "--kubeconfig", kubeconfig)
        snapshot = run_cli("snapshot", "--kubeconfig", kubeconfig, "-o", str(tmp_path / "snapshot.yaml"))
        assert snapshot.returncode == 0, snapshot.stderr
    from_snapshot = run_cli(*args, "--cluster-state", str(tmp_path / "snapshot.yaml"))

    def rows(report: str, source: str) -> list[tuple[str, str]]:
        return sorted((f["rule"], f["message"].replace(source, "<cluster>")) for f in json.loads(report)["findings"])

    found = rows(live.stdout, "context kind-kind")
    assert {rule for rule, _ in found} >= {"insufficient-resources", "host-port-conflict"}
    assert any("RuntimeClass gvisor" in message for _, message in found)
    assert rows(from_snapshot.stdout, f"file {tmp_path / 'snapshot.yaml'}") == found
