"""Real-world manifests nobody on this project wrote: no crash, no false finding."""

from __future__ import annotations

import json

from .conftest import run_cli

# Real duplicates in kubernetes/examples (file, line of the key that wins, key): e.g. `selector:`
# written twice in one ReplicationController spec.
DUPLICATED_KEYS = [
    ("kubernetes-examples/_archived/openshift-origin/etcd-controller.yaml", 12, "selector"),
    ("kubernetes-examples/_archived/openshift-origin/etcd-discovery-controller.yaml", 12, "selector"),
    ("kubernetes-examples/_archived/openshift-origin/openshift-controller.yaml", 12, "selector"),
    ("kubernetes-examples/_archived/persistent-volume-provisioning/quobyte/quobyte-admin-secret.yaml", 9, "type"),
    ("kubernetes-examples/_archived/volumes/scaleio/sc-pvc.yaml", 12, "storageClassName"),
]


def test_shared_corpus_has_only_the_six_unrendered_templates(shared_dir):
    result = run_cli(str(shared_dir / "corpus"), "--format", "json")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    # The corpus really has duplicated keys (kubectl silently keeps the last one): warnings, not errors
    duplicated = sorted(
        (f["file"].split("/corpus/")[1], f["line"], f["message"].split("'")[1])
        for f in report["findings"]
        if f["rule"] == "duplicate-key"
    )
    assert duplicated == DUPLICATED_KEYS
    findings = [f for f in report["findings"] if f["rule"] != "duplicate-key"]
    # Five templates are not YAML at all; a sixth parses, but its Pod name `vttablet-{{uid}}` is refused.
    assert sorted((f["rule"], f["file"].split("/_archived/")[1]) for f in findings) == [
        ("invalid-object-name", "storage/vitess/vttablet-pod-template.yaml"),
        ("yaml-syntax", "newrelic-infrastructure/newrelic-config-template.yaml"),
        ("yaml-syntax", "newrelic/newrelic-config-template.yaml"),
        ("yaml-syntax", "storage/vitess/etcd-controller-template.yaml"),
        ("yaml-syntax", "storage/vitess/etcd-service-template.yaml"),
        ("yaml-syntax", "storage/vitess/vtgate-controller-template.yaml"),
    ]
    assert all("helm template" in f["fix"] for f in findings), "each gets the unrendered-template hint"
    assert report["summary"]["objects"] > 350
