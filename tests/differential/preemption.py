"""What nodename-lint's findings say about preemption, read back from their messages and compared with
the oracle's `evicts` (the kubelet's critical Pod admission) and `nominated`/`victims` (the scheduler's
DefaultPreemption).

- insufficient-resources: "the kubelet evicts ns/a, ns/b to admit it" (or "them", for replicas);
- no-node-fits: "the scheduler nominates node N and deletes ns/a, ns/b there", or, when nodes tie,
  "nominates one of the nodes N1 (deleting ns/a), N2 (deleting ns/b) and deletes those Pods there".

A finding that speaks of evictions or nominations in words this module cannot read is itself a
disagreement, so that a change of wording cannot turn the comparison off.
"""

from __future__ import annotations

import re
from typing import Any

from nodename_lint.findings import Finding

_EVICTS = re.compile(r"the kubelet evicts (?P<evicts>[^()]+?) to admit (?:it|them) \(")
_NOMINATES_ONE = re.compile(r"the scheduler nominates node (?P<node>\S+) and deletes (?P<victims>[^()]+?) there \(")
_NOMINATES_ANY = re.compile(r"the scheduler nominates one of the nodes (?P<listed>.+?) and deletes those Pods there")
_CHOICE = re.compile(r"(?P<node>[^\s,]+) \(deleting (?P<victims>[^)]*)\)")


def _names(listed: str) -> frozenset[str]:
    return frozenset(name.strip() for name in listed.split(",") if name.strip())


def evictions(findings: list[Finding], problems: list[str]) -> frozenset[str]:
    """Every Pod the findings say the kubelet evicts."""
    found: set[str] = set()
    for finding in findings:
        if "the kubelet evicts" not in finding.message:
            continue
        match = _EVICTS.search(finding.message)
        if match is None:
            problems.append(f"cannot read the evictions {finding.rule} predicts: {finding.message}")
            continue
        found |= _names(match.group("evicts"))
    return frozenset(found)


def nominations(findings: list[Finding], problems: list[str]) -> dict[str, frozenset[str]] | None:
    """The nodes no-node-fits says the scheduler may nominate, each with its victims; None when it says none."""
    for finding in findings:
        if finding.rule != "no-node-fits" or "the scheduler nominates" not in finding.message:
            continue
        one = _NOMINATES_ONE.search(finding.message)
        if one is not None:
            return {one.group("node"): _names(one.group("victims"))}
        many = _NOMINATES_ANY.search(finding.message)
        choices = (
            {m.group("node"): _names(m.group("victims")) for m in _CHOICE.finditer(many.group("listed"))}
            if many
            else {}
        )
        if not choices:
            problems.append(f"cannot read the nomination no-node-fits predicts: {finding.message}")
        return choices
    return None


def kubelet_evictions(findings: list[Finding], answer: dict[str, Any]) -> list[str]:
    """The Pods the kubelet evicts (the oracle's `evicts`, for the Pods it admitted) against the findings'."""
    problems: list[str] = []
    ours = evictions(findings, problems)
    theirs = frozenset(answer.get("evicts") or ())
    if ours != theirs:
        problems.append(f"the kubelet evicts {sorted(theirs)}; nodename-lint says {sorted(ours)}")
    return problems


def scheduler_nomination(findings: list[Finding], answer: dict[str, Any]) -> list[str]:
    """The node DefaultPreemption nominates and the victims it deletes, against no-node-fits'."""
    problems: list[str] = []
    ours = nominations(findings, problems)
    node = answer.get("nominated") or ""
    victims = frozenset(answer.get("victims") or ())
    if not node:
        if ours is not None:
            problems.append(f"the scheduler nominates no node; nodename-lint says it nominates one of {ours}")
        return problems
    if ours is None:
        return [*problems, f"the scheduler nominates {node} and deletes {sorted(victims)}; nodename-lint says none"]
    if node not in ours:
        problems.append(f"the scheduler nominates {node}; nodename-lint says one of {sorted(ours)}")
    elif ours[node] != victims:
        problems.append(f"the scheduler deletes {sorted(victims)} on {node}; nodename-lint says {sorted(ours[node])}")
    return problems
