"""Repositories as they really are: a state file next to the manifests, kubectl dumps, Kustomize
overlays linted file by file, a config file of their own found from anywhere, typo'd suppressions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import ROOT, lint_yaml, run_cli

STATE = ROOT / "examples" / "cluster" / "state.yaml"

BASE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27.3-alpine
          resources: {requests: {cpu: 100m, memory: 64Mi}}
"""
# An overlay's strategic-merge patch: a partial object that pins the Pods to a node kind-worker
OVERLAY_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      nodeSelector:
        kubernetes.io/hostname: kind-worker
"""
JSON6902_PATCH = """\
- op: replace
  path: /spec/replicas
  value: 3
"""
KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../../base]
patches:
  - path: pin.yaml
  - path: replicas.yaml
    target: {kind: Deployment, name: web}
"""
DEBUG_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: debugger
  namespace: default
spec:
  # nodename-lint: ignore[nodename-on-pod]
  nodeName: kind-wroker
  containers:
    - name: shell
      image: busybox:1.37
"""


def make_repository(root: Path) -> Path:
    """A GitOps repository: base and an overlay, a debug Pod, the cluster's state file, its own config."""
    repo = root / "repo"
    for name, text in {
        "base/deployment.yaml": BASE_DEPLOYMENT,
        "base/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources: [deployment.yaml]\n",
        "overlays/prod/kustomization.yaml": KUSTOMIZATION,
        "overlays/prod/pin.yaml": OVERLAY_PATCH,
        "overlays/prod/replicas.yaml": JSON6902_PATCH,
        "debug/pod.yaml": DEBUG_POD,
        ".nodename-lint.yaml": "rules:\n  nodename-on-pod: off\nfail-on: warning\n",
    }.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    (repo / "cluster").mkdir()
    shutil.copy(STATE, repo / "cluster" / "state.yaml")
    return repo


def _findings(result) -> list[tuple[str, int, str]]:
    return [(f["file"], f["line"], f["rule"]) for f in json.loads(result.stdout)["findings"]]


def test_a_repository_lints_from_anywhere_with_its_config_and_state_and_no_false_findings(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli(
        str(repo), "--cluster-state", str(repo / "cluster" / "state.yaml"), "--format", "json", cwd=elsewhere
    )
    # the one real problem: the typo'd node (the debug Pod's nodename-on-pod is off in the repo's config)
    assert _findings(result) == [(str(repo / "debug" / "pod.yaml"), 8, "unknown-node")], result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["skipped_rules"] == []
    assert any(
        "state.yaml: not linted: it is the cluster state given with --cluster-state" in note
        for note in summary["notes"]
    )
    assert result.returncode == 1


def test_the_state_file_is_not_linted_even_when_named(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    result = run_cli(
        "cluster/state.yaml", "debug", "--cluster-state", "cluster/state.yaml", "--format", "json", cwd=repo
    )
    assert _findings(result) == [("debug/pod.yaml", 8, "unknown-node")]
    assert json.loads(result.stdout)["summary"]["files"] == 1
    assert "nodename-lint: cluster/state.yaml: not linted" in result.stderr


def test_a_kubectl_dump_of_live_objects_is_skipped_with_a_note(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    result = run_cli(".", "--format", "json", cwd=repo)  # no --cluster-state: the dump is still not manifests
    assert _findings(result) == [], result.stdout
    notes = json.loads(result.stdout)["summary"]["notes"]
    first_line = next(
        number for number, line in enumerate(STATE.read_text().splitlines(), 1) if line.startswith("apiVersion:")
    )
    [note] = notes
    assert note.startswith(f"cluster/state.yaml:{first_line}: skipped a List of live objects (resourceVersion, ")
    assert note.endswith(
        "status: saved from a cluster with kubectl get -o yaml); it describes a cluster, so give it "
        "with --cluster-state instead of linting it"
    )
    # a List of manifests to apply (no status, resourceVersion or managedFields) is linted as always
    pod = DEBUG_POD.replace("  # nodename-lint: ignore[nodename-on-pod]\n", "")
    listed = "apiVersion: v1\nkind: List\nitems:\n- " + pod.replace("\n", "\n  ").rstrip() + "\n"
    assert [f.rule for f in lint_yaml(listed)] == ["nodename-on-pod"]


def test_config_nearest_to_each_path(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    team = repo / "teams" / "a"
    team.mkdir(parents=True)
    (team / "pod.yaml").write_text(DEBUG_POD.replace("  # nodename-lint: ignore[nodename-on-pod]\n", ""))
    (team / ".nodename-lint.yaml").write_text("rules:\n  nodename-on-pod: warning\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".nodename-lint.yaml").write_text("rules:\n  nodename-on-pod: error\n")
    (elsewhere / "pod.yaml").write_text((team / "pod.yaml").read_text())

    def severities(*paths: str) -> list[tuple[str, str]]:
        result = run_cli(*paths, "--select", "nodename-on-pod", "--format", "json", cwd=elsewhere)
        return [(f["file"], f["severity"]) for f in json.loads(result.stdout)["findings"]]

    # the team's file with the team's config, the repo's debug Pod with the repo's (rule off), the
    # current folder's file with the current folder's config: all in one run
    assert severities(str(team / "pod.yaml"), str(repo / "debug"), "pod.yaml") == [
        (str(team / "pod.yaml"), "warning"),
        ("pod.yaml", "error"),
    ]  # sorted by file, as in one group
    assert severities(str(team)) == [(str(team / "pod.yaml"), "warning")]
    # --config governs every path
    result = run_cli(
        str(team), "pod.yaml", "--config", str(repo / ".nodename-lint.yaml"), "--format", "json", cwd=elsewhere
    )
    assert json.loads(result.stdout)["findings"] == []


def test_fail_on_comes_from_each_paths_config(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    (repo / "debug" / "pod.yaml").write_text(
        DEBUG_POD.replace("kind-wroker", "kind-worker").replace("  # nodename-lint: ignore[nodename-on-pod]\n", "")
    )
    (repo / ".nodename-lint.yaml").write_text("fail-on: info\n")
    assert run_cli(str(repo / "debug"), cwd=tmp_path).returncode == 1, "the repo's fail-on: info"
    assert run_cli(str(repo / "debug"), "--fail-on", "error", cwd=tmp_path).returncode == 0


def test_suppression_naming_an_unknown_rule_is_a_warning_at_the_comment() -> None:
    text = DEBUG_POD.replace("ignore[nodename-on-pod]", "ignore[nodename-on-pods, unknown-node]")
    findings = lint_yaml(text)
    assert [(f.rule, f.line, f.column, f.severity) for f in findings] == [
        ("invalid-suppression", 7, 3, "warning"),
        ("nodename-on-pod", 8, 3, "info"),
    ]
    assert "'nodename-on-pods'" in findings[0].message and "did you mean 'nodename-on-pod'?" in findings[0].message
    silenced = text.replace(
        "  # nodename-lint: ignore", "  # nodename-lint: ignore[invalid-suppression]\n  # nodename-lint: ignore"
    )
    assert "invalid-suppression" not in [f.rule for f in lint_yaml(silenced)]
    assert "invalid-suppression" not in [f.rule for f in lint_yaml(text, rules=["nodename-on-pod"])], "can be off"


def test_a_list_written_by_the_client_with_empty_status_is_linted() -> None:
    """Issue 23: `kubectl create --dry-run=client -o yaml` (and other client output) writes `status: {}` and
    `creationTimestamp: null` into objects no cluster has seen; such a List was skipped as live objects and
    its pinned Pod missed. Only a non-empty status, resourceVersion or managedFields marks saved state."""
    item = (
        "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    creationTimestamp: null\n    name: web\n"
        "    resourceVersion: {resource_version}\n    managedFields: {managed}\n  spec:\n"
        "    selector: {{matchLabels: {{app: web}}}}\n    template:\n      metadata: {{labels: {{app: web}}}}\n"
        "      spec:\n        nodeName: kind-worker\n        containers: [{{name: web, image: nginx}}]\n"
        "  status: {status}\n"
    )
    header = "apiVersion: v1\nkind: List\nmetadata: {}\nitems:\n"

    def listed(status: str = "{}", resource_version: str = '""', managed: str = "[]", items: int = 1) -> str:
        return header + item.format(status=status, resource_version=resource_version, managed=managed) * items

    for empty in ("{}", "null", "", "~"):
        assert [f.rule for f in lint_yaml(listed(status=empty))] == ["nodename-in-template"], empty
    # a big List (composed in pieces) is judged the same way
    big = listed(items=2_000)
    assert len(big) > 256 * 1024
    assert [f.rule for f in lint_yaml(big)] == ["nodename-in-template"] * 2_000
    for live in (
        listed(status="{replicas: 1}"),
        listed(resource_version='"12345"'),
        listed(managed="[{manager: kubectl}]"),
    ):
        assert lint_yaml(live) == [], live


def test_a_snapshot_that_starts_with_trimmed_namespaces_is_recognised(tmp_path: Path) -> None:
    snapshot = (
        'apiVersion: v1\nkind: List\nmetadata: {resourceVersion: ""}\nitems:\n'
        '- {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}\n'
        '- {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"}, '
        '"spec": {"nodeName": "kind-worker", "containers": [{"name": "a"}]}, "status": {"phase": "Running"}}\n'
    )
    (tmp_path / "prod.yaml").write_text(snapshot)
    result = run_cli(str(tmp_path), "--format", "json")
    assert result.returncode == 0 and json.loads(result.stdout)["findings"] == []
    assert "prod.yaml:1: skipped a List of live objects (status: " in result.stderr


def test_a_static_pod_dir_is_linted_once_whatever_the_number_of_configs(tmp_path: Path) -> None:
    for team in ("a", "b"):
        (tmp_path / team).mkdir()
        (tmp_path / team / ".nodename-lint.yaml").write_text("fail-on: error\n")
        (tmp_path / team / "pod.yaml").write_text(CLEAN_POD_TEXT)
    manifests = tmp_path / "node" / "manifests"
    manifests.mkdir(parents=True)
    (manifests / "agent.yaml").write_text(CLEAN_POD_TEXT)
    result = run_cli("a", "b", "--static-pod-dir", str(manifests), "--format", "json", cwd=tmp_path)
    assert json.loads(result.stdout)["summary"]["files"] == 3, result.stdout


CLEAN_POD_TEXT = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: agent, namespace: kube-system}\nspec:\n"
    "  containers: [{name: a, image: busybox:1.37}]\n"
)
