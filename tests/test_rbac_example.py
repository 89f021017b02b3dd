"""examples/rbac grants exactly what the live mode needs: enough for every rule, nothing to spare."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.apiserver import ApiServer
from tests.apiserver.fixtures import api_server, kubeconfig  # noqa: F401  (pytest fixtures)
from tests.conftest import ROOT, run_cli

RBAC = ROOT / "examples" / "rbac" / "nodename-lint-readonly.yaml"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: kind-worker\n  containers: [{name: a, image: nginx}]\n"


def granted() -> set[tuple[str, str]]:
    """(verb, resource) pairs of the example ClusterRole."""
    role = next(doc for doc in yaml.safe_load_all(RBAC.read_text()) if doc["kind"] == "ClusterRole")
    return {(verb, resource) for rule in role["rules"] for verb in rule["verbs"] for resource in rule["resources"]}


def test_the_role_is_read_only() -> None:
    assert {verb for verb, _ in granted()} <= {"get", "list"}
    assert {resource for _, resource in granted()} == {"nodes", "namespaces", "pods", "runtimeclasses"}


def test_the_role_is_enough_for_every_rule_and_for_snapshot(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    api_server.allowed = granted()
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli(str(tmp_path / "pod.yaml"), "--kubeconfig", str(kubeconfig), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["summary"]["skipped_rules"] == []
    assert run_cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "s.yaml")).returncode == 0


@pytest.mark.parametrize("missing", sorted(granted()))
def test_every_grant_is_needed(tmp_path: Path, api_server: ApiServer, kubeconfig: Path, missing: tuple[str, str]) -> None:
    api_server.allowed = granted() - {missing}
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli(str(tmp_path / "pod.yaml"), "--kubeconfig", str(kubeconfig), "--format", "json")
    skipped = json.loads(result.stdout)["summary"]["skipped_rules"]
    verb, resource = missing
    if resource == "runtimeclasses":  # no rule needs them, but RuntimeClass overhead goes uncounted, and it says so
        assert not skipped and f"grant {verb} on {resource}" in result.stderr
    else:
        assert skipped and all(f"grant {verb} on {resource}" in entry["reason"] for entry in skipped)
    snapshot = run_cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert snapshot.returncode == 2 and f"refused to {verb} {resource}" in snapshot.stderr
