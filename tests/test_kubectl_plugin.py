"""`kubectl nodename-lint`: the real kubectl finds the installed kubectl-nodename_lint on PATH and runs it.

The plugin is the console script that `pip install` puts beside the interpreter; kubectl discovers it
on PATH like any plugin. Against the loopback API server it reads kubectl's current context (from
KUBECONFIG, as kubectl does) unless --offline or --cluster-state is given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.apiserver import ApiServer
from tests.conftest import require_tool, unavailable
from tests.test_live_cluster import TYPO_DEPLOYMENT

PLUGIN = Path(sys.executable).parent / "kubectl-nodename_lint"
Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def kubectl(tmp_path: Path, kubeconfig: Path) -> Kubectl:
    """Run the real kubectl with the plugin's folder first on PATH and KUBECONFIG set; never skips in CI."""
    binary = require_tool("kubectl", "apt-get install kubernetes-client")
    if not PLUGIN.exists():
        unavailable(f"{PLUGIN} is not installed (pip install -e .)")

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full_env = {
            **os.environ,
            "HOME": str(tmp_path),
            "KUBECONFIG": str(kubeconfig),
            "NO_COLOR": "1",
            "PATH": os.pathsep.join([str(PLUGIN.parent), os.environ.get("PATH", "")]),
            **(env or {}),
        }
        return subprocess.run([binary, *args], capture_output=True, text=True, env=full_env, timeout=120, cwd=tmp_path)

    return run


@pytest.fixture
def deploy(tmp_path: Path) -> Path:
    folder = tmp_path / "deploy"
    folder.mkdir()
    (folder / "web.yaml").write_text(TYPO_DEPLOYMENT)
    return folder


def test_kubectl_lists_the_installed_plugin(kubectl: Kubectl) -> None:
    result = kubectl("plugin", "list")
    assert str(PLUGIN) in result.stdout, result.stdout + result.stderr


def test_plugin_reads_the_current_context_by_default(kubectl: Kubectl, deploy: Path, api_server: ApiServer) -> None:
    result = kubectl("nodename-lint", "deploy", "--format", "json")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    unknown = [f for f in findings if f["rule"] == "unknown-node"]
    assert len(unknown) == 1 and "kind-wroker" in unknown[0]["message"] and "kind-worker" in unknown[0]["message"]
    assert any(r.path == "/api/v1/nodes" for r in api_server.requests)
    assert api_server.methods == {"GET"}


def test_plugin_offline_and_state_file_read_no_cluster(
    kubectl: Kubectl, deploy: Path, tmp_path: Path, api_server: ApiServer
) -> None:
    offline = kubectl("nodename-lint", "--offline", "deploy", "--format", "json")
    assert offline.returncode == 1, offline.stderr
    report = json.loads(offline.stdout)
    assert [f["rule"] for f in report["findings"]] == ["nodename-in-template"]
    assert api_server.requests == []
    state = tmp_path / "state.yaml"
    state.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: kind-wroker}\n"
    )
    from_file = kubectl("nodename-lint", "deploy", "--cluster-state", str(state), "--format", "json")
    assert "unknown-node" not in {f["rule"] for f in json.loads(from_file.stdout)["findings"]}, from_file.stderr
    assert api_server.requests == []
    both = kubectl("nodename-lint", "--offline", "--context", "kind-kind", "deploy")
    assert both.returncode == 2 and "--offline cannot be combined" in both.stderr


def test_plugin_honours_kubeconfig_and_context(
    kubectl: Kubectl, deploy: Path, tmp_path: Path, kubeconfig: Path
) -> None:
    """KUBECONFIG's first file with a current-context wins, as in kubectl; --context picks another."""
    first = tmp_path / "first"
    first.write_text("apiVersion: v1\nkind: Config\ncurrent-context: stopped-cluster\n")
    merged = {"KUBECONFIG": os.pathsep.join([str(first), str(kubeconfig)])}
    stopped = kubectl("nodename-lint", "deploy", env=merged)
    assert stopped.returncode == 2
    assert "cannot connect" in stopped.stderr and "stopped-cluster" in stopped.stderr, stopped.stderr
    wrong_token = kubectl("nodename-lint", "--context", "kind-wrong-token", "deploy", env=merged)
    assert wrong_token.returncode == 2 and "401" in wrong_token.stderr, wrong_token.stderr
    help_text = kubectl("nodename-lint", "--help")
    assert help_text.returncode == 0 and "kubectl nodename-lint" in help_text.stdout


def test_krew_manifest_renders_to_a_plugin_running_the_installed_script() -> None:
    """krew/nodename-lint.yaml, filled in as krew-release-bot does, names the script pyproject installs."""
    import re

    import yaml

    root = Path(__file__).resolve().parent.parent
    template = (root / "krew" / "nodename-lint.yaml").read_text()
    rendered = re.sub(
        r'\{\{ addURIAndSha "([^"]+)" \.TagName \}\}',
        lambda m: f"uri: {m.group(1)}\n      sha256: {'0' * 64}",
        template,
    )
    rendered = rendered.replace("{{ .TagName }}", "v1.2.3")
    assert "{{" not in rendered
    plugin = yaml.safe_load(rendered)
    assert (plugin["apiVersion"], plugin["kind"]) == ("krew.googlecontainertools.github.com/v1alpha2", "Plugin")
    assert plugin["metadata"]["name"] == "nodename-lint" and plugin["spec"]["version"] == "v1.2.3"
    script = re.search(r'^kubectl-nodename_lint = "([^"]+)"$', (root / "pyproject.toml").read_text(), re.M)
    assert script is not None and script.group(1) == "nodename_lint.cli:kubectl_plugin"
    platforms = plugin["spec"]["platforms"]
    assert {p["selector"]["matchLabels"]["os"] for p in platforms} == {"linux", "darwin"}
    for platform in platforms:
        assert platform["bin"] == PLUGIN.name == "kubectl-nodename_lint"
        assert platform["uri"].endswith(".tar.gz") and "/v1.2.3/" in platform["uri"]


def test_plugin_audits_the_current_context(kubectl: Kubectl, tmp_path: Path) -> None:
    """`kubectl nodename-lint audit` reads kubectl's current context, like the lint."""
    from tests.test_audit import EXAMPLE, comparable, kubeconfig_for, serve

    state = EXAMPLE / "state.yaml"
    saved = kubectl("nodename-lint", "audit", "--cluster-state", str(state), "--format", "json")
    with serve(state) as server:
        live = kubectl(
            "nodename-lint", "audit", "--format", "json", env={"KUBECONFIG": str(kubeconfig_for(tmp_path, server))}
        )
    assert live.returncode == saved.returncode == 1, live.stderr + saved.stderr
    expected = comparable(saved.stdout, f"file {state}")
    assert expected and comparable(live.stdout, "context kind-kind") == expected
    assert {r.method for r in server.requests} == {"GET"}
