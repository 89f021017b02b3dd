"""The readers of a Pod spec that offline rules and the cluster code share (nodename_lint.podspec)."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from nodename_lint.podspec import required_node_names, required_node_selector_terms

from .conftest import ROOT, lint_yaml


def _required(terms: Any) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}}


def _names(*values: str, operator: str = "In") -> dict[str, Any]:
    return {"key": "metadata.name", "operator": operator, "values": list(values)}


@pytest.mark.parametrize(
    "spec, terms",
    [
        ({}, None),
        ({"affinity": "x"}, None),
        ({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}}, None),
        (_required(None), None),
        (_required({}), []),  # required, but no term: no node matches
        (_required({"nodeSelectorTerms": "x"}), []),
        (_required({"nodeSelectorTerms": [{"matchFields": [_names("a")]}]}), [{"matchFields": [_names("a")]}]),
    ],
)
def test_required_node_selector_terms(spec: dict[str, Any], terms: list[Any] | None) -> None:
    assert required_node_selector_terms(spec) == terms


@pytest.mark.parametrize(
    "terms, names",
    [
        ([], None),
        ([{"matchFields": [_names("a", "b")]}], {"a", "b"}),
        ([{"matchFields": [_names("a", "b"), _names("b", "c")]}], {"b"}),  # a term ANDs its requirements
        ([{"matchFields": [_names("a")]}, {"matchFields": [_names("b")]}], {"a", "b"}),  # the terms are ORed
        ([{"matchFields": [_names("a")]}, {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}], None),
        ([{"matchFields": [_names("a", operator="NotIn")]}], None),  # only In narrows the search
        ([{"matchFields": [_names("a"), _names("b")]}], set()),  # conflicting: no node
    ],
)
def test_required_node_names(terms: list[Any], names: set[str] | None) -> None:
    found = required_node_names(_required({"nodeSelectorTerms": terms}))
    assert found == (None if names is None else frozenset(names))


def test_the_required_node_affinity_is_read_in_podspec_alone() -> None:
    """Issue 25: its reader existed three times (twice in scheduling.py, once in nodename_in_template.py).
    The field's name is written once, in podspec; every other reader goes through it."""
    field = "requiredDuringSchedulingIgnoredDuringExecution"
    written = [
        path.relative_to(ROOT).as_posix()
        for path in sorted([*(ROOT / "nodename_lint").rglob("*.py"), *(ROOT / "rules").glob("*.py")])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == field
    ]
    assert written == ["nodename_lint/podspec.py"]


def test_offline_and_cluster_rules_name_pods_alike() -> None:
    """One wording for both kinds of rule (podspec.pods_noun): nodename-in-template said "every replica
    of Deployment web (3)" where the cluster rules said "the 3 replicas of Deployment web"."""
    text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template:\n"
    text += "    spec:\n      nodeName: worker-2\n      containers: [{name: a, image: busybox}]\n"
    [finding] = lint_yaml(text, rules=["nodename-in-template"])
    assert "the 3 replicas of Deployment web skip the scheduler and land on node worker-2" in finding.message
