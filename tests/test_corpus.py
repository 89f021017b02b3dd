"""Real-world manifests nobody on this project wrote: no crash, no false finding."""

from __future__ import annotations

import json

from .conftest import run_cli


def test_shared_corpus_has_only_the_five_unrendered_templates(shared_dir):
    result = run_cli(str(shared_dir / "corpus"), "--format", "json")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    findings = report["findings"]
    assert {f["rule"] for f in findings} == {"yaml-syntax"}
    assert sorted(f["file"].split("/_archived/")[1] for f in findings) == [
        "newrelic-infrastructure/newrelic-config-template.yaml",
        "newrelic/newrelic-config-template.yaml",
        "storage/vitess/etcd-controller-template.yaml",
        "storage/vitess/etcd-service-template.yaml",
        "storage/vitess/vtgate-controller-template.yaml",
    ]
    assert all("helm template" in f["fix"] for f in findings), "each gets the unrendered-template hint"
    assert report["summary"]["objects"] > 350
