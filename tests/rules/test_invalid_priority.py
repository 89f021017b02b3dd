"""invalid-priority: a class name of a type the API server refuses while decoding is not the rule's to judge."""

from __future__ import annotations

import pytest

from nodename_lint.cluster.from_file import load_state_text

from ..conftest import ROOT, lint_yaml

RULE = "invalid-priority"
CLUSTER = load_state_text((ROOT / "examples" / "cluster" / "state.yaml").read_text(), "state.yaml")


@pytest.mark.parametrize("name", ["{class: null}", "[system-node-critical]", "7"])
@pytest.mark.parametrize("cluster", [None, CLUSTER], ids=["offline", "with a cluster"])
def test_a_class_name_that_is_not_a_string_is_left_to_the_api_server(name: str, cluster: object) -> None:
    """A mapping or a list there was hashed (an internal error, found by a mutation fuzzer given a rule doc's
    `{class}` placeholder); the API server refuses the Pod while decoding it, before the Priority plugin."""
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        f"  priorityClassName: {name}\n  containers: [{{name: c, image: busybox:1.37}}]\n"
    )
    assert [f for f in lint_yaml(pod, rules=[RULE], cluster=cluster) if f.rule == RULE] == []
