"""The live path end to end: the real CLI, a real kubeconfig, the official client, the loopback HTTPS API server."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from tests.apiserver import TOKEN, ApiServer, cluster_entry, write_kubeconfig
from tests.conftest import run_cli

NON_TERMINATED = "status.phase!=Succeeded,status.phase!=Failed"

DEBUG_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: node-debugger
spec:
  nodeName: kind-worker
  containers:
    - name: shell
      image: busybox:1.36
      resources:
        requests:
          cpu: "100"
"""
TYPO_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeName: kind-wroker
      containers:
        - name: web
          image: nginx:1.27
"""


def _manifests(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "deploy"
    folder.mkdir()
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder


def test_live_run_reads_only_what_the_manifests_name(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    folder = _manifests(tmp_path, debug=DEBUG_POD, web=TYPO_DEPLOYMENT)
    result = run_cli(str(folder), "--kubeconfig", str(kubeconfig), "--format", "json")
    assert result.returncode == 1, result.stderr
    findings = {(f["rule"], Path(f["file"]).name) for f in json.loads(result.stdout)["findings"]}
    assert ("unknown-node", "web.yaml") in findings
    assert ("insufficient-resources", "debug.yaml") in findings
    calls = [(r.path, r.query.get("fieldSelector", "")) for r in api_server.requests]
    assert calls == [
        ("/api/v1/nodes", ""),
        ("/api/v1/namespaces", ""),
        # kind-wroker does not exist: no Pod list for it
        ("/api/v1/pods", f"spec.nodeName=kind-worker,{NON_TERMINATED}"),
        ("/api/v1/namespaces/default/pods", "metadata.name=node-debugger"),
        ("/apis/node.k8s.io/v1/runtimeclasses", ""),  # few objects; their overhead counts in the requests
        ("/apis/scheduling.k8s.io/v1/priorityclasses", ""),  # few objects; a Pod's priority comes from them
    ]
    assert api_server.methods == {"GET"}
    assert all(r.authorization == f"Bearer {TOKEN}" for r in api_server.requests)


CHART_POD = DEBUG_POD.replace("node-debugger", "chart-pod").replace("kind-worker", "kind-worker2")


@pytest.mark.parametrize("held_bytes,composed_count", [(8 << 20, 3), (0, 4)], ids=["held", "file-read-again"])
def test_a_live_run_parses_each_source_once_and_reads_stdin_as_a_stream(
    tmp_path: Path,
    api_server: ApiServer,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    held_bytes: int,
    composed_count: int,
) -> None:
    """Issue 14: no pre-scan. Every document (stdin, a file, a rendered chart) is composed once, stdin is read
    as the pipe it is (never swapped for a copy), and the requests are those the manifests name, as before.
    Beyond the held budget a file is read again to lint (memory), never stdin or a chart: same findings."""
    from nodename_lint import documents
    from nodename_lint.cluster.live import LiveOptions
    from nodename_lint.commands import run as lint_run
    from nodename_lint.commands.run import run_lint
    from nodename_lint.render.helm import write_chart

    folder = _manifests(tmp_path, web=TYPO_DEPLOYMENT)
    write_chart(str(tmp_path / "chart"), {"templates/pod.yaml": CHART_POD}, name="chart")
    composed: list[str] = []
    compose = documents.compose

    def counted(text: str, *args: object, **kwargs: object) -> documents.Document:
        composed.append(text)
        return compose(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(documents, "compose", counted)
    monkeypatch.setattr(lint_run, "HELD_INPUT_BYTES", held_bytes)
    read_end, write_end = os.pipe()  # a pipe can be read once and never rewound, like `helm template | ...`
    with os.fdopen(write_end, "wb") as writer:
        writer.write(DEBUG_POD.encode())
    stdin = io.TextIOWrapper(os.fdopen(read_end, "rb"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)

    code = run_lint(
        paths=["-", str(folder), str(tmp_path / "chart")],
        formats=["json"],
        output=None,
        fail_on=None,
        config_path=None,
        select=[],
        ignore=[],
        namespace=None,
        static_pod_dirs=[],
        color=False,
        live=LiveOptions(kubeconfig=str(kubeconfig)),
    )

    assert code == 1
    assert sys.stdin is stdin, "stdin is read where it is, not replaced by a buffered copy"
    assert len(composed) == composed_count, "each document once (the file's twice when it is not held)"
    findings = {(f["rule"], Path(f["file"]).name) for f in json.loads(capsys.readouterr().out)["findings"]}
    assert {
        ("insufficient-resources", "<stdin>"),
        ("unknown-node", "web.yaml"),
        ("insufficient-resources", "pod.yaml"),
    } <= findings
    calls = {(r.path, r.query.get("fieldSelector", "")) for r in api_server.requests}
    assert calls == {
        ("/api/v1/nodes", ""),
        ("/api/v1/namespaces", ""),
        ("/api/v1/pods", f"spec.nodeName=kind-worker,{NON_TERMINATED}"),
        ("/api/v1/pods", f"spec.nodeName=kind-worker2,{NON_TERMINATED}"),
        ("/api/v1/namespaces/default/pods", "metadata.name=node-debugger"),
        ("/api/v1/namespaces/default/pods", "metadata.name=chart-pod"),
        ("/apis/node.k8s.io/v1/runtimeclasses", ""),
        ("/apis/scheduling.k8s.io/v1/priorityclasses", ""),
    }
    assert api_server.methods == {"GET"}


def test_kubeconfig_in_the_environment_alone_never_contacts_a_cluster(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    folder = _manifests(tmp_path, debug=DEBUG_POD)
    result = run_cli(str(folder), env={"KUBECONFIG": str(kubeconfig)})
    assert api_server.requests == []
    assert "12 cluster rules skipped: no cluster state" in result.stdout  # counted as skipped


def test_live_uses_the_current_context_of_kubeconfig(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    folder = _manifests(tmp_path, web=TYPO_DEPLOYMENT)
    result = run_cli(str(folder), "--live", env={"KUBECONFIG": str(kubeconfig)})
    assert "did you mean kind-worker" in result.stdout, result.stdout + result.stderr
    assert api_server.methods == {"GET"} and api_server.requests


def test_kubeconfig_paths_merge_as_kubectl_does(tmp_path: Path, api_server: ApiServer) -> None:
    """KUBECONFIG=a:b: the first file to set current-context or a name wins; users and clusters come from either."""
    first = write_kubeconfig(
        tmp_path / "a",
        clusters={"kind-kind": cluster_entry(api_server.url, api_server.ca_pem)},
        users={},
        contexts={"kind-kind": ("kind-kind", "admin")},
        current="kind-kind",
    )
    second = write_kubeconfig(
        tmp_path / "b",
        clusters={"kind-kind": cluster_entry("https://127.0.0.1:1", None)},
        users={"admin": {"token": TOKEN}},
        contexts={"other": ("kind-kind", "admin")},
        current="other",
    )
    folder = _manifests(tmp_path, web=TYPO_DEPLOYMENT)
    missing = tmp_path / "does-not-exist"
    result = run_cli(str(folder), "--live", env={"KUBECONFIG": f"{missing}:{first}:{second}"})
    assert "did you mean kind-worker" in result.stdout, result.stderr
    assert api_server.requests and all(r.authorization == f"Bearer {TOKEN}" for r in api_server.requests)


def test_unknown_context_is_a_clear_error(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    folder = _manifests(tmp_path, debug=DEBUG_POD)
    result = run_cli(str(folder), "--kubeconfig", str(kubeconfig), "--context", "kind-prod")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"nodename-lint: context 'kind-prod' is not in kubeconfig {kubeconfig} "
        "(contexts: kind-kind, kind-wrong-token, other-ca, stopped-cluster)"
    ]
    assert api_server.requests == []


def test_missing_kubeconfig_file(tmp_path: Path) -> None:
    result = run_cli(str(tmp_path), "--kubeconfig", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "--kubeconfig" in result.stderr and "no such file" in result.stderr and "Traceback" not in result.stderr


def test_context_namespace_is_the_default_namespace(tmp_path: Path, api_server: ApiServer) -> None:
    """kubectl apply puts an object without a namespace into the context's namespace; so does the lookup."""
    config = write_kubeconfig(
        tmp_path / "kc",
        clusters={"c": cluster_entry(api_server.url, api_server.ca_pem)},
        users={"u": {"token": TOKEN}},
        contexts={"team": ("c", "u")},
        current="team",
    )
    data = yaml.safe_load(config.read_text())
    data["contexts"][0]["context"]["namespace"] = "team-a"
    config.write_text(yaml.safe_dump(data))
    folder = _manifests(tmp_path, debug=DEBUG_POD)
    run_cli(str(folder), "--kubeconfig", str(config))
    assert ("/api/v1/namespaces/team-a/pods", "metadata.name=node-debugger") in [
        (r.path, r.query.get("fieldSelector")) for r in api_server.requests
    ]


def test_insecure_skip_tls_verify_only_from_the_kubeconfig_and_with_a_warning(
    tmp_path: Path, api_server: ApiServer
) -> None:
    config = write_kubeconfig(
        tmp_path / "kc",
        clusters={"c": cluster_entry(api_server.url, None, **{"insecure-skip-tls-verify": True})},
        users={"u": {"token": TOKEN}},
        contexts={"insecure": ("c", "u")},
        current="insecure",
    )
    folder = _manifests(tmp_path, web=TYPO_DEPLOYMENT)
    result = run_cli(str(folder), "--kubeconfig", str(config))
    assert result.returncode == 1
    assert "warning: TLS verification is off for cluster c (insecure-skip-tls-verify: true" in result.stderr
    assert "InsecureRequestWarning" not in result.stderr


def test_snapshot_holds_what_the_rules_read_and_cluster_state_reads_it_back(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    snapshot = tmp_path / "cluster.json"
    result = run_cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot))
    assert result.returncode == 0, result.stderr
    assert "3 nodes, 5 namespaces, 7 Pods" in result.stderr
    data = json.loads(snapshot.read_text())
    assert data["format"] == "nodename-lint.io/cluster-snapshot" and data["source"] == "context kind-kind"
    assert len(data["nodes"]) == 3 and len(data["namespaces"]) == 5
    assert "done-job-x7k2p" not in {row[1] for row in data["pods"]}  # Succeeded Pods use nothing
    assert set(data["usage"]) == {node["name"] for node in data["nodes"]}  # summed requests, no Pod specs
    node = data["nodes"][0]
    assert set(node) == {"name", "labels", "taints", "unschedulable", "allocatable", "conditions", "operating_system"}
    assert node["conditions"]["Ready"] == "True"
    assert node["operating_system"] == "linux"  # status.nodeInfo: the kubelet's own OS (node-os-mismatch)
    assert api_server.methods == {"GET"}
    assert [r.query.get("fieldSelector", "") for r in api_server.requests if r.path == "/api/v1/pods"] == [
        NON_TERMINATED
    ]

    folder = _manifests(tmp_path, debug=DEBUG_POD, web=TYPO_DEPLOYMENT)
    from_file = run_cli(str(folder), "--cluster-state", str(snapshot), "--format", "json")
    live = run_cli(str(folder), "--kubeconfig", str(kubeconfig), "--format", "json")
    assert _comparable(from_file.stdout, str(snapshot)) == _comparable(live.stdout, "context kind-kind")
    assert _comparable(live.stdout, "")  # not vacuous


def test_snapshot_to_stdout(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    result = run_cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert result.returncode == 0
    assert json.loads(result.stdout)["format"] == "nodename-lint.io/cluster-snapshot"


def _comparable(report: str, source: str) -> list[tuple[str, str, int, int, str, str]]:
    """Findings without the words that name where the state came from."""
    findings = json.loads(report)["findings"]
    rows = []
    for finding in findings:
        message = finding["message"]
        for name in (f"file {source}", source, "context kind-kind"):
            if name:
                message = message.replace(name, "<cluster>")
        rows.append(
            (
                finding["rule"],
                Path(finding["file"]).name,
                finding["line"],
                finding["column"],
                finding["severity"],
                message,
            )
        )
    return sorted(rows)


def test_request_timeout_flag_is_validated(tmp_path: Path) -> None:
    result = run_cli(str(tmp_path), "--context", "x", "--request-timeout", "0")
    assert result.returncode == 2 and "--request-timeout" in result.stderr


def test_live_options_and_snapshot_are_documented() -> None:
    from nodename_lint.cli import main
    from tests.conftest import ROOT

    page = (ROOT / "docs" / "cluster-state.md").read_text(encoding="utf-8")
    options = {"--live", "--context", "--kubeconfig", "--in-cluster", "--request-timeout"}
    options |= {
        opt
        for param in main.commands["snapshot"].params
        for opt in getattr(param, "opts", [])
        if opt.startswith("--") and opt != "--help"
    }
    assert {option for option in options if f"`{option}" not in page and f" {option} " not in page} == set()
    for heading in ("## Live: --context, --kubeconfig, --live", "## Snapshot for CI", "## RBAC"):
        assert heading in page
    assert "## Cluster access" in (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")


def test_live_falls_back_to_home_kube_config(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(kubeconfig.read_text())
    folder = _manifests(tmp_path, web=TYPO_DEPLOYMENT)
    environment = {"HOME": str(tmp_path), "KUBECONFIG": ""}
    result = run_cli(str(folder), "--live", env=environment)
    assert "did you mean kind-worker" in result.stdout, result.stderr
    (tmp_path / ".kube" / "config").unlink()
    result = run_cli(str(folder), "--live", env=environment)
    assert result.returncode == 2 and ".kube/config does not exist and KUBECONFIG is not set" in result.stderr


def test_kubeconfig_without_current_context_asks_for_one(tmp_path: Path, api_server: ApiServer) -> None:
    config = write_kubeconfig(
        tmp_path / "kc",
        clusters={"c": cluster_entry(api_server.url, api_server.ca_pem)},
        users={"u": {"token": TOKEN}},
        contexts={"a": ("c", "u"), "b": ("c", "u")},
    )
    result = run_cli(str(tmp_path), "--kubeconfig", str(config))
    assert result.returncode == 2
    assert "has no current-context; pick one with --context NAME (contexts: a, b)" in result.stderr
    assert run_cli(str(tmp_path), "--kubeconfig", str(config), "--context", "b").returncode == 0


def test_in_cluster_uses_the_mounted_service_account(tmp_path: Path, api_server: ApiServer, monkeypatch) -> None:
    """--in-cluster reads the token and CA the kubelet mounts, and the service host from the environment."""
    import kubernetes.config.incluster_config as incluster

    from nodename_lint.cluster.live import LiveCluster, LiveOptions, Referenced

    token_file, ca_file = tmp_path / "token", tmp_path / "ca.crt"
    token_file.write_text(TOKEN)
    ca_file.write_bytes(api_server.ca_pem)
    monkeypatch.setattr(incluster, "SERVICE_TOKEN_FILENAME", str(token_file))
    monkeypatch.setattr(incluster, "SERVICE_CERT_FILENAME", str(ca_file))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(api_server.port))
    state = LiveCluster(LiveOptions(in_cluster=True)).state_for(Referenced(nodes={"kind-worker"}))
    assert state.source == "in-cluster service account"
    assert sorted(state.nodes) == ["kind-control-plane", "kind-worker", "kind-worker2"]
    assert {pod.name for pod in state.pods} == {"kindnet-4kd8w", "kube-proxy-9xq2c", "web-5d4f8c7b9-abcde"}
    assert api_server.methods == {"GET"} and all(
        r.authorization.lower() == f"bearer {TOKEN}" for r in api_server.requests
    )


def test_in_cluster_outside_a_cluster_is_a_clear_error(tmp_path: Path) -> None:
    result = run_cli(str(tmp_path), "--in-cluster", env={"KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": ""})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("nodename-lint: cannot use the cluster credentials")
    assert run_cli(str(tmp_path), "--in-cluster", "--context", "x").returncode == 2


def test_stdin_in_a_live_run_is_linted_against_the_pods_it_names(api_server: ApiServer, kubeconfig: Path) -> None:
    result = run_cli("-", "--kubeconfig", str(kubeconfig), stdin=DEBUG_POD + "---\n" + TYPO_DEPLOYMENT)
    assert "<stdin>:" in result.stdout and "insufficient-resources" in result.stdout and "kind-wroker" in result.stdout
    assert ("/api/v1/namespaces/default/pods", "metadata.name=node-debugger") in [
        (r.path, r.query.get("fieldSelector")) for r in api_server.requests
    ]


def test_diff_of_stdin_in_a_live_run(api_server: ApiServer, kubeconfig: Path) -> None:
    """--diff reads the raw bytes of stdin after the live run has parsed it for what it names."""
    golden = Path(__file__).parent / "fix" / "golden" / "template-comments.before.yaml"
    # pinned to a node the test cluster has: a template pinned to a missing node is not turned into a selector
    text = golden.read_text(encoding="utf-8").replace("worker-2", "kind-worker")
    shown = run_cli("--diff", "-", "--kubeconfig", str(kubeconfig), stdin=text)
    assert shown.returncode == 1, shown.stderr
    assert shown.stdout.startswith("--- <stdin>\n+++ <stdin>\n")
    assert "+      nodeSelector:   # the only node with the SSD\n" in shown.stdout
    assert api_server.requests, "the cluster was read"


def test_node_pages_read_with_only_the_fields_the_rules_read_give_the_same_nodes(tmp_path: Path) -> None:
    """Node pages are decoded with only the fields the records read (a real Node's images and managedFields are
    skipped); a page of another shape is decoded whole. Either way the nodes are those of the objects served."""
    from nodename_lint.cluster.live import LiveCluster, LiveOptions, Referenced
    from nodename_lint.cluster.objects import node_from_object
    from tests.apiserver import kind_node

    real = kind_node("real", index=1, labels={"zone": "a"}, taints=[{"key": "k", "effect": "NoSchedule"}])
    real["status"]["images"] = [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}]
    real["metadata"]["managedFields"] = [{"manager": "kubelet", "operation": "Update"}]
    odd_conditions = kind_node("odd-conditions", index=2, unschedulable=True)
    odd_conditions["status"]["conditions"].append("not a mapping")  # another shape: the page is decoded whole
    bare = {"metadata": {"name": "bare", "labels": {"n": 1, "b": True}}}  # no spec, no status
    for nodes in ([real, bare], [real, odd_conditions, bare]):
        with ApiServer(nodes=nodes, namespaces=[], pods=[]) as server:
            config = write_kubeconfig(
                tmp_path / "kubeconfig",
                clusters={"c": cluster_entry(server.url, server.ca_pem)},
                users={"u": {"token": TOKEN}},
                contexts={"test": ("c", "u")},
                current="test",
            )
            state = LiveCluster(LiveOptions(kubeconfig=str(config))).state_for(Referenced())
        expected = sorted((node_from_object(node) for node in nodes), key=lambda node: node.name)
        assert sorted(state.nodes.values(), key=lambda node: node.name) == expected


def test_no_request_thread_outlives_a_live_read(api_server: ApiServer, kubeconfig: Path) -> None:
    """Requests run in reused threads that end with the connection: a process that read a cluster can still
    start worker processes by fork (parallel.py forks only a process without other threads)."""
    import threading

    from nodename_lint.cluster.live import LiveCluster, LiveOptions, Referenced

    state = LiveCluster(LiveOptions(kubeconfig=str(kubeconfig))).state_for(Referenced(nodes={"kind-worker"}))
    assert "kind-worker" in state.nodes and len(api_server.requests) >= 4
    for thread in [t for t in threading.enumerate() if t.name == "nodename-lint-request"]:
        thread.join(5)
    assert not [t for t in threading.enumerate() if t.name == "nodename-lint-request"]
