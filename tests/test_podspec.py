"""The readers of a Pod spec that offline rules and the cluster code share (nodename_lint.podspec)."""

from __future__ import annotations

import ast
from typing import Any

import pytest
import yaml

from nodename_lint.model import PlainObject
from nodename_lint.podspec import rejection_fate, required_node_names, required_node_selector_terms

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


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        ("kind: Job\nspec: {template: {spec: {}}}", "once 7 Pods have failed (backoffLimit 6 by default)"),
        ("kind: Job\nspec: {backoffLimit: 0, template: {spec: {}}}", "once 1 Pods have failed (backoffLimit 0)"),
        (
            "kind: Job\nspec: {backoffLimitPerIndex: 1, completionMode: Indexed, completions: 3, template: {spec: {}}}",
            "each index fails once 2 of its Pods have failed (backoffLimitPerIndex 1)",
        ),
        (
            "kind: CronJob\nspec: {jobTemplate: {spec: {backoffLimit: 1, podFailurePolicy: {rules: []}}}}",
            "once 2 Pods have failed (backoffLimit 1) unless its podFailurePolicy ignores such failures; each Job the",
        ),
        ("kind: Deployment\nspec: {backoffLimit: 1}", "the controller keeps creating replacements"),
    ],
)
def test_a_jobs_rejected_pods_are_replaced_only_until_its_backoff_limit(manifest: str, expected: str) -> None:
    """syncJob fails the Job once more Pods failed than backoffLimit; other controllers replace them for ever."""
    raw = yaml.safe_load(manifest)
    assert expected in rejection_fate(PlainObject(raw, "batch/v1", raw["kind"], "default"))
