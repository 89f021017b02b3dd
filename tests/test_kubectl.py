"""The real kubectl against the loopback API server: proof that it speaks the API as kubectl understands it.

kubectl comes from the Debian package kubernetes-client (.ci/run installs it); on machines with the
Google Cloud SDK, /usr/bin/kubectl is its version dispatcher, which works as well. Without any
kubectl the tests skip and say why, except in CI (CI=true), where that is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.apiserver import ApiServer
from tests.conftest import require_tool, run_cli, unavailable


@pytest.fixture
def kubectl(tmp_path: Path, kubeconfig: Path):
    binary = require_tool("kubectl", "apt-get install kubernetes-client")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [binary, "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True, text=True, env=env, timeout=60
        )

    probe = run("version", "--client")
    if probe.returncode != 0:
        unavailable(f"{binary} does not run here: {probe.stderr.strip()[:200]}")
    return run


def test_kubectl_lists_nodes_with_pagination(kubectl, api_server: ApiServer) -> None:
    result = kubectl("get", "nodes", "-o", "name", "--chunk-size=2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["node/kind-control-plane", "node/kind-worker", "node/kind-worker2"]
    node_calls = [r.query for r in api_server.requests if r.path == "/api/v1/nodes"]
    assert [q.get("limit") for q in node_calls] == ["2", "2"] and "continue" in node_calls[1]
    assert api_server.methods == {"GET"}


def test_kubectl_field_selectors_on_pods(kubectl, api_server: ApiServer) -> None:
    result = kubectl(
        "get",
        "pods",
        "-A",
        "--field-selector",
        "spec.nodeName=kind-worker,status.phase!=Succeeded,status.phase!=Failed",
        "-o",
        "name",
    )
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == ["pod/kindnet-4kd8w", "pod/kube-proxy-9xq2c", "pod/web-5d4f8c7b9-abcde"]
    result = kubectl(
        "get", "pods", "-n", "kube-system", "--field-selector", "metadata.name=kindnet-8hn2v", "-o", "json"
    )
    assert [item["spec"]["nodeName"] for item in json.loads(result.stdout)["items"]] == ["kind-worker2"]
    result = kubectl("get", "pods", "-A", "--field-selector", "spec.hostIP=1.2.3.4")
    assert result.returncode != 0 and "field label not supported: spec.hostIP" in result.stderr
    assert api_server.methods == {"GET"}


def test_kubectl_label_selector_and_get_by_name(kubectl, api_server: ApiServer) -> None:
    result = kubectl("get", "nodes", "-l", "node-role.kubernetes.io/control-plane", "-o", "name")
    assert result.stdout.split() == ["node/kind-control-plane"]
    result = kubectl(
        "get", "nodes", "-l", "!node-role.kubernetes.io/control-plane,kubernetes.io/os in (linux)", "-o", "name"
    )
    assert result.stdout.split() == ["node/kind-worker", "node/kind-worker2"]
    result = kubectl("get", "namespace", "kube-system", "-o", "json")
    assert json.loads(result.stdout)["metadata"]["name"] == "kube-system"
    result = kubectl("get", "pod", "missing", "-n", "default")
    assert result.returncode == 1 and 'pods "missing" not found' in result.stderr


def test_kubectl_sees_a_wrong_token_as_unauthorized(kubectl, api_server: ApiServer) -> None:
    result = kubectl("--context", "kind-wrong-token", "get", "nodes")
    assert result.returncode == 1
    assert "You must be logged in to the server" in result.stderr


def test_kubectl_saved_state_gives_the_same_findings_as_live(
    kubectl, tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    """`kubectl get nodes,namespaces,pods -A -o yaml` of this server, used as --cluster-state, agrees with the
    live run."""
    result = kubectl("get", "nodes,namespaces,pods", "-A", "-o", "yaml")
    assert result.returncode == 0, result.stderr
    state = tmp_path / "state.yaml"
    state.write_text(result.stdout)
    assert {item["kind"] for item in yaml.safe_load(result.stdout)["items"]} == {"Node", "Namespace", "Pod"}
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  nodeName: kind-worker\n"
        "  containers: [{name: a, image: nginx, resources: {requests: {cpu: 3500m}}}]\n"
    )
    from_file = run_cli(str(manifest), "--cluster-state", str(state), "--format", "json")
    live = run_cli(str(manifest), "--kubeconfig", str(kubeconfig), "--format", "json")

    def findings(report: str) -> list[tuple[str, str]]:
        return [(f["rule"], f["message"].split(" (kubelet:")[0]) for f in json.loads(report)["findings"]]

    assert findings(from_file.stdout) == findings(live.stdout)
    # 3500m + 950m already requested on kind-worker > 4 cpu: it does not fit now
    assert any(rule == "insufficient-resources" and "OutOfcpu" in message for rule, message in findings(live.stdout))
    assert api_server.methods == {"GET"}
