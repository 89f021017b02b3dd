"""The readers of a Pod spec that offline rules and the cluster code share (nodename_lint.podspec)."""

from __future__ import annotations

from typing import Any

import pytest

from nodename_lint.podspec import required_node_names, required_node_selector_terms


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
