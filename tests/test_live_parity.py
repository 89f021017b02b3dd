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
from nodename_lint.engine import Linter
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context, Severity
from nodename_lint.sources import Source
from tests.apiserver import TOKEN, ApiServer, cluster_entry, write_kubeconfig
from tests.conftest import ROOT, run_cli

EXAMPLE = ROOT / "examples" / "cluster"
KINDS = {"Node": "nodes", "Namespace": "namespaces", "Pod": "pods"}
CA = trustme.CA()


def objects_of(state_text: str) -> dict[str, list[dict[str, Any]]]:
    """The items of a saved List, grouped by resource and without kind/apiVersion, as a list response has them."""
    served: dict[str, list[dict[str, Any]]] = {"nodes": [], "namespaces": [], "pods": []}
    for document in yaml.safe_load_all(state_text):
        for item in (document or {}).get("items", [document] if document and document.get("kind") in KINDS else []):
            item = dict(item)
            kind = item.pop("kind", None)
            item.pop("apiVersion", None)
            if kind in KINDS:
                served[KINDS[kind]].append(item)
    return served


def _kubeconfig(tmp_path: Path, server: ApiServer) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", clusters={"kind-kind": cluster_entry(server.url, server.ca_pem)},
                            users={"kind-kind": {"token": TOKEN}}, contexts={"kind-kind": ("kind-kind", "kind-kind")},
                            current="kind-kind")


# no-node-fits says when it compared nodes whose Pods a live run does not read with their allocatable alone
PARTIAL = re.compile(r" \(the Pods already on \d+ of \d+ nodes are not in the cluster state <cluster>: [^)]*\)")


def _rows(findings: list[Any], source: str) -> list[tuple[str, int, int, str, str]]:
    return sorted((f.rule, f.line, f.column, f.severity, PARTIAL.sub("", f.message.replace(source, "<cluster>")))
                  for f in findings)


def _cluster_examples() -> list[Any]:
    return [pytest.param(rule, index, example, id=f"{rule.id}-{index}")
            for rule in all_rules().values() if rule.is_cluster_rule
            for index, example in enumerate(rule.examples) if example.cluster is not None]


@pytest.mark.parametrize("rule,index,example", _cluster_examples())
def test_rule_example_gives_the_same_findings_live(tmp_path: Path, rule: Any, index: int, example: Any) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(example.manifest, encoding="utf-8")
    source = Source(str(manifest), example.static_pod)
    severities: dict[str, Severity | None] = {rule.id: None}

    from_file = Linter(severities, Context(cluster=load_state_text(example.cluster, source="state.yaml")))
    expected = from_file.collect([from_file.lint_source(source)]).findings

    with ApiServer(**objects_of(example.cluster), ca=CA) as server:
        state = LiveCluster(LiveOptions(kubeconfig=str(_kubeconfig(tmp_path, server)), request_timeout=5)).state_for(
            referenced([source], "default"))
        assert server.methods == {"GET"}
    live = Linter(severities, Context(cluster=state))
    found = live.collect([live.lint_source(source)]).findings
    assert bool(found) == example.fails
    assert _rows(found, "context kind-kind") == _rows(expected, "file state.yaml")


def test_cluster_rules_all_have_a_live_example() -> None:
    covered = {param.values[0].id for param in _cluster_examples()}
    assert covered == {rule.id for rule in all_rules().values() if rule.is_cluster_rule}


@pytest.mark.skipif(not (EXAMPLE / "state.yaml").is_file(), reason="examples/cluster/state.yaml is not there")
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
        return sorted((f["rule"], f["file"], f["line"], f["column"], f["severity"],
                       f["message"].replace(source, "<cluster>")) for f in json.loads(report)["findings"])

    expected = comparable(from_file.stdout, f"file {state_path}")
    found = comparable(live.stdout, "context kind-kind")
    assert any(PARTIAL.search(row[5]) for row in found if row[0] == "no-node-fits")
    assert [(*row[:5], PARTIAL.sub("", row[5])) for row in found] == expected
    assert {row[0] for row in expected} >= {"unknown-node", "insufficient-resources", "node-selector-mismatch",
                                            "untolerated-taint", "node-not-ready", "nodename-immutable",
                                            "static-pod-missing-namespace", "no-node-fits"}
    # Pods were read per referenced node and per manifest Pod, never as one cluster-wide list
    assert all(r.query.get("fieldSelector") for r in pod_lists)
