"""examples/rbac grants exactly what the live mode and audit need: enough for every rule, nothing to spare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.apiserver import ApiServer, kind_cluster, kubeconfig_for
from tests.conftest import ROOT, run_cli

RBAC = ROOT / "examples" / "rbac" / "nodename-lint-readonly.yaml"
POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: kind-worker\n"
    "  containers: [{name: a, image: nginx}]\n"
)
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"
    "  template:\n    metadata: {labels: {app: web}}\n    spec:\n      nodeName: kind-worker\n"
    "      containers: [{name: a, image: nginx}]\n"
)


CORE = {"nodes", "namespaces", "pods"}
RUNTIME_CLASSES = ("node.k8s.io", "runtimeclasses")
PRIORITY_CLASSES = ("scheduling.k8s.io", "priorityclasses")
OPTIONAL = {"runtimeclasses", "priorityclasses"}  # no rule is skipped without them; the run says what it lacks
WORKLOADS = {
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("apps", "replicasets"),
    ("apps", "controllerrevisions"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
}


def granted() -> set[tuple[str, str]]:
    """(verb, resource) pairs of the example ClusterRole."""
    role = next(doc for doc in yaml.safe_load_all(RBAC.read_text()) if doc["kind"] == "ClusterRole")
    return {(verb, resource) for rule in role["rules"] for verb in rule["verbs"] for resource in rule["resources"]}


def test_the_role_is_read_only() -> None:
    role = next(doc for doc in yaml.safe_load_all(RBAC.read_text()) if doc["kind"] == "ClusterRole")
    assert {verb for verb, _ in granted()} <= {"get", "list"}
    grants = {
        (group, resource) for rule in role["rules"] for group in rule["apiGroups"] for resource in rule["resources"]
    }
    assert grants == {("", resource) for resource in CORE} | WORKLOADS | {RUNTIME_CLASSES, PRIORITY_CLASSES}


def test_the_role_is_enough_for_every_rule_and_for_snapshot(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    api_server.allowed = granted()
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli(str(tmp_path / "pod.yaml"), "--kubeconfig", str(kubeconfig), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["summary"]["skipped_rules"] == []
    assert run_cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "s.yaml")).returncode == 0


@pytest.mark.parametrize("missing", sorted(grant for grant in granted() if grant[1] in CORE))
def test_every_grant_is_needed(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path, missing: tuple[str, str]
) -> None:
    api_server.allowed = granted() - {missing}
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli(str(tmp_path / "pod.yaml"), "--kubeconfig", str(kubeconfig), "--format", "json")
    skipped = json.loads(result.stdout)["summary"]["skipped_rules"]
    verb, resource = missing
    assert skipped and all(f"grant {verb} on {resource}" in entry["reason"] for entry in skipped)
    snapshot = run_cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert snapshot.returncode == 2 and f"refused to {verb} {resource}" in snapshot.stderr


def test_the_role_is_enough_for_audit(api_server: ApiServer, kubeconfig: Path) -> None:
    api_server.allowed = granted()
    result = run_cli("audit", "--kubeconfig", str(kubeconfig), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["skipped_rules"] == [] and not any("not audited" in note for note in summary["notes"])


def test_priorityclasses_are_needed_for_their_values(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    """No rule is skipped without them: the built-in classes are known, other ones are not resolved, and the run
    says so."""
    api_server.allowed = granted() - {("list", "priorityclasses")}
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli(str(tmp_path / "pod.yaml"), "--kubeconfig", str(kubeconfig), "--format", "json")
    assert json.loads(result.stdout)["summary"]["skipped_rules"] == []
    assert "PriorityClasses are not known" in result.stderr and "grant list on priorityclasses" in result.stderr
    snapshot = run_cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert snapshot.returncode == 2 and "refused to list priorityclasses" in snapshot.stderr


def test_runtimeclasses_are_needed_for_their_overhead(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    """No rule is skipped without them, but the overhead goes uncounted, and the run says so."""
    api_server.allowed = granted() - {("list", "runtimeclasses")}
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli(str(tmp_path / "pod.yaml"), "--kubeconfig", str(kubeconfig), "--format", "json")
    assert json.loads(result.stdout)["summary"]["skipped_rules"] == []
    assert "RuntimeClass overhead is not counted" in result.stderr and "grant list on runtimeclasses" in result.stderr
    snapshot = run_cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert snapshot.returncode == 2 and "refused to list runtimeclasses" in snapshot.stderr


@pytest.mark.parametrize("missing", [("list", "replicasets"), ("list", "controllerrevisions")])
def test_replicasets_and_controllerrevisions_are_needed_for_rollouts(tmp_path: Path, missing: tuple[str, str]) -> None:
    """No rule is skipped without them, but a workload's running Pods cannot be told from its new ones: the run
    says so (tests/test_rollout.py shows the findings), and the snapshot, which would lack them, fails."""
    cluster = kind_cluster()
    web = next(pod for pod in cluster["pods"] if pod["metadata"]["name"].startswith("web-"))
    web["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web-5d4f8c7b9", "controller": True}]
    api_server = ApiServer(**cluster)
    api_server.allowed = granted() - {missing}
    with api_server:
        kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", api_server)
        result, snapshot = _lint_and_snapshot(tmp_path, kubeconfig)
    assert json.loads(result.stdout)["summary"]["skipped_rules"] == []
    if missing[1] == "replicasets":  # the Deployment's template: the StatefulSets' and DaemonSets' are revisions
        assert "cannot be told from its new ones" in result.stderr and "grant list on replicasets" in result.stderr
    assert snapshot.returncode == 2 and f"refused to list {missing[1]}" in snapshot.stderr


def _lint_and_snapshot(tmp_path: Path, kubeconfig: Path) -> tuple[Any, Any]:
    (tmp_path / "web.yaml").write_text(DEPLOYMENT)
    result = run_cli(str(tmp_path / "web.yaml"), "--kubeconfig", str(kubeconfig), "--format", "json")
    return result, run_cli("snapshot", "--kubeconfig", str(kubeconfig))


AUDITED = sorted(grant for grant in granted() if grant[1] not in OPTIONAL | {"controllerrevisions"})


@pytest.mark.parametrize("missing", AUDITED)
def test_every_grant_is_needed_by_audit(api_server: ApiServer, kubeconfig: Path, missing: tuple[str, str]) -> None:
    """A 403 on one resource: audit names it and what it skipped, and audits the rest (exit 0 or 1, not 2)."""
    api_server.allowed = granted() - {missing}
    result = run_cli("audit", "--kubeconfig", str(kubeconfig), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    verb, resource = missing
    notes = json.loads(result.stdout)["summary"]["notes"]
    assert [note for note in notes if note.startswith("not audited") and f"grant {verb} on {resource}" in note]
    assert any(note.startswith("audited ") for note in notes)
