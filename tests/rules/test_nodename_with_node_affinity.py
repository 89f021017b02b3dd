"""nodename-with-node-affinity: what it says offline, and which rule speaks when several would."""

from __future__ import annotations

import pytest

from nodename_lint.cluster.from_file import load_state_text

from ..conftest import lint_yaml

RULE = "nodename-with-node-affinity"


def pod(term: str, *, node: str = "worker-2", kind: str = "Pod") -> str:
    spec = f"""
  nodeName: {node}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - {term}
  containers:
    - name: app
      image: busybox:1.37
"""
    if kind == "Pod":
        return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: cache\nspec:{spec}"
    template = spec.replace("\n", "\n      ")
    return (
        f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: cache\nspec:\n  replicas: 2\n"
        f"  template:\n    spec:{template}"
    )


LABEL = "matchExpressions: [{key: disktype, operator: In, values: [ssd]}]"
NAMES = "matchFields: [{key: metadata.name, operator: In, values: [%s]}]"


def test_a_pinned_pod_with_a_required_affinity_gets_this_finding_alone_offline():
    findings = lint_yaml(pod(LABEL))  # every rule: nodename-on-pod is superseded
    assert [(f.rule, f.severity, f.line, f.column) for f in findings] == [(RULE, "warning", 6, 3)]
    message = findings[0].message
    assert message.startswith("spec.nodeName: worker-2 bypasses the scheduler, so the required node affinity")
    rejected = "the kubelet rejects Pod cache with NodeAffinity and the Pod goes to Failed and is never retried"
    assert rejected in message
    assert "drop nodeName and let the scheduler place the Pod by its affinity" in findings[0].fix


@pytest.mark.parametrize(
    "term, severity, says",
    [
        (NAMES % "worker-1", "error", "the required node affinity allows only node worker-1 (matchFields"),
        (NAMES % "worker-1, worker-3", "error", "allows only node worker-1, worker-3"),
        (NAMES % "worker-2", "warning", "never chooses the node"),  # it matches: redundant, not fatal
        (
            "matchFields: [{key: metadata.name, operator: In, values: [worker-1]}, "
            "{key: metadata.name, operator: In, values: [worker-3]}]",
            "error",
            "allows no node (its terms conflict)",
        ),
        (NAMES.replace("In", "NotIn") % "worker-2", "warning", "never chooses the node"),  # not told offline
    ],
)
def test_matchfields_that_leave_the_node_out_are_a_certain_rejection(term, severity, says):
    [finding] = lint_yaml(pod(term), rules=[RULE])
    assert finding.severity == severity and says in finding.message
    if severity == "error":
        assert 'kubelet: "Pod was rejected: Predicate NodeAffinity failed' in finding.message


def test_a_workload_template_is_nodename_in_templates_unless_that_rule_is_off():
    text = pod(LABEL, kind="Deployment")
    assert [f.rule for f in lint_yaml(text)] == ["nodename-in-template"]
    [finding] = lint_yaml(text, rules=[RULE])
    assert "the kubelet rejects the 2 replicas of Deployment cache with NodeAffinity" in finding.message
    assert "the controller keeps creating replacements" in finding.message


@pytest.mark.parametrize(
    "text",
    [
        pod(LABEL).replace("  nodeName: worker-2\n", ""),  # the scheduler places it by the affinity
        pod(LABEL).replace("requiredDuringScheduling", "preferredDuringScheduling"),
        pod(LABEL).replace("      requiredDuringSchedulingIgnoredDuringExecution:\n", "      other:\n"),
    ],
)
def test_silent_without_nodename_or_without_a_required_affinity(text):
    assert lint_yaml(text, rules=[RULE]) == []


def test_a_static_pod_is_left_alone():
    assert lint_yaml(pod(LABEL), rules=[RULE], static_pod=True) == []


STATE = """
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: worker-2
      labels: {kubernetes.io/hostname: worker-2, disktype: hdd}
    status:
      allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
      conditions: [{type: Ready, status: "True"}]
"""


def test_with_a_cluster_node_selector_mismatch_speaks_when_the_node_does_not_match():
    cluster = load_state_text(STATE, source="test")
    assert [f.rule for f in lint_yaml(pod(LABEL), cluster=cluster)] == ["node-selector-mismatch"]
    matching = pod(LABEL.replace("ssd", "hdd"))
    assert [(f.rule, f.severity) for f in lint_yaml(matching, cluster=cluster)] == [(RULE, "warning")]
