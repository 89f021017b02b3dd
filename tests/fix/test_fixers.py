"""Edge cases of the fixers and of the splicing they rely on, fixed in-process."""

from __future__ import annotations

import textwrap

from nodename_lint.cluster.records import NodeInfo
from nodename_lint.cluster.state import ClusterState
from nodename_lint.fix.runner import fix_text
from tests.fix.helpers import default_linter


def fix(text: str, cluster: ClusterState | None = None) -> tuple[str, list[str], list[str]]:
    return fix_text(default_linter(cluster), textwrap.dedent(text).lstrip("\n"), "m.yaml")


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
{spec}
"""


def deployment(spec: str) -> str:
    return DEPLOYMENT.format(spec=textwrap.indent(textwrap.dedent(spec).strip("\n"), " " * 6))


def test_an_empty_node_selector_is_filled_not_duplicated() -> None:
    fixed, applied, _ = fix(deployment("nodeSelector:\nnodeName: worker-2\ncontainers: [{name: a, image: b}]"))
    assert fixed.endswith(
        "    spec:\n      nodeSelector:\n        kubernetes.io/hostname: worker-2\n"
        "      containers: [{name: a, image: b}]\n"
    )
    assert applied == ["m.yaml:9: nodename-in-template"]


def test_a_node_selector_on_the_same_host_only_loses_node_name() -> None:
    fixed, _, _ = fix(
        deployment(
            "nodeSelector: {kubernetes.io/hostname: worker-2}\nnodeName: worker-2\ncontainers: [{name: a, image: b}]"
        )
    )
    assert "nodeName" not in fixed and "nodeSelector: {kubernetes.io/hostname: worker-2}\n" in fixed


def test_with_a_cluster_state_the_nodes_hostname_label_is_used() -> None:
    node = "ip-10-0-0-1.ec2.internal"
    labels = {"kubernetes.io/hostname": "ip-10-0-0-1"}
    cluster = ClusterState("file state.yaml", nodes={node: NodeInfo(node, labels=labels)})
    fixed, _, _ = fix(deployment(f"nodeName: {node}\ncontainers: [{{name: a, image: b}}]"), cluster)
    assert "kubernetes.io/hostname: ip-10-0-0-1\n" in fixed


def test_lowercasing_needs_the_node_to_exist_when_the_cluster_is_known() -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: Worker-9\n  containers: []\n"
    cluster = ClusterState("file state.yaml", nodes={"kind-control-plane": NodeInfo("kind-control-plane")})
    fixed, applied, notes = fix(pod, cluster)
    assert fixed == pod and not [a for a in applied if "invalid-node-name" in a]
    assert any("no node named 'worker-9' in the cluster state from file state.yaml" in note for note in notes)
    fixed, _, _ = fix(pod)  # offline, lowercasing is the fix
    assert "  nodeName: worker-9\n" in fixed


def test_a_node_name_from_a_merge_key_is_left_with_a_note() -> None:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n"
        "    spec:\n      <<: {nodeName: worker-2}\n      containers: [{name: a, image: b}]\n"
    )
    fixed, applied, notes = fix(text)
    assert (fixed, applied) == (text, [])
    assert notes and "nodename-in-template not fixed" in notes[0] and "change it by hand" in notes[0]


def test_no_newline_at_the_end_of_the_file() -> None:
    text = deployment("containers: [{name: a, image: b}]\nnodeName: worker-2").rstrip("\n")
    fixed, _, _ = fix(text)
    assert fixed.endswith(
        "      containers: [{name: a, image: b}]\n      nodeSelector:\n        kubernetes.io/hostname: worker-2\n"
    )


def test_documents_around_end_markers_and_directives_stay_byte_identical() -> None:
    first = "%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}   # odd   spacing\n...\n"
    pod = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: Node-1\n  containers: []\n"
    fixed, _, _ = fix(first + pod)
    assert fixed == first + pod.replace("Node-1", "node-1")


def test_a_suppressed_finding_is_not_fixed() -> None:
    text = deployment("# nodename-lint: ignore[nodename-in-template]\nnodeName: worker-2\ncontainers: []")
    fixed, applied, notes = fix(text)
    assert (fixed, applied, notes) == (textwrap.dedent(text).lstrip("\n"), [], [])


def test_a_misspelt_node_in_a_template_is_corrected_before_it_becomes_a_selector() -> None:
    cluster = ClusterState("file state.yaml", nodes={"kind-worker": NodeInfo("kind-worker")})
    fixed, applied, _ = fix(deployment("nodeName: kind-wroker\ncontainers: [{name: a, image: b}]"), cluster)
    assert "kubernetes.io/hostname: kind-worker\n" in fixed, "not a selector no node matches"
    assert "nodeName" not in fixed and "kind-wroker" not in fixed
    assert applied == ["m.yaml:8: unknown-node", "m.yaml:8: nodename-in-template"]


def test_the_template_advice_never_names_a_selector_on_a_missing_node() -> None:
    """The nodename-in-template message follows the fixer: correct the name before making it a selector."""
    from tests.conftest import lint_yaml

    cluster = ClusterState("file state.yaml", nodes={"kind-worker": NodeInfo("kind-worker")})
    spec = "containers: [{name: a, image: b}]"
    for node, advice in (
        ("kind-wroker", "correct the node name first (kind-wroker is not in the cluster: see unknown-node), then "),
        ("kind-worker", "remove nodeName and use nodeSelector {kubernetes.io/hostname: kind-worker}"),
    ):
        findings = lint_yaml(deployment(f"nodeName: {node}\n{spec}"), rules=["nodename-in-template"], cluster=cluster)
        assert [finding.fix.startswith(advice) for finding in findings] == [True], findings
        assert "hostname: kind-wroker" not in findings[0].fix
