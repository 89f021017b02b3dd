"""nodename-lint's side of a differential case, and where it disagrees with the oracle.

nodename-lint runs as a user runs it: every rule, over the manifest (a JSON document), with the
cluster state read from the kubectl JSON dump of the same Nodes and Pods (`--cluster-state`). What
it predicts is read back from the findings' messages, the text users get:

- the kubelet (a pinned Pod): "... would be rejected by the kubelet on NODE with REASON" (with
  " (it reports OTHER first: ...)" when an earlier check decides what the Pod shows), and the text
  quoted as `(kubelet: "Pod was rejected: ...")`;
- a pinned Deployment: how many replicas the kubelet admits ("none of ... fits", "only K of ... fit",
  "only 1 of ... can run", or "would be rejected" for all), and the first rejection's reason and text;
- the scheduler (an unpinned Pod): `no-node-fits` and the FailedScheduling text it quotes;
- requests: `nodename_lint.scheduling.pod_requests` of the Pod as written.

A finding that says the kubelet rejects a Pod but that this module cannot read is itself reported,
so that a change of wording cannot turn the comparison off.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import permutations
from typing import Any

from nodename_lint.cluster.from_file import load_state_text
from nodename_lint.engine import Linter
from nodename_lint.findings import Finding
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context
from nodename_lint.scheduling import RequestError, pod_requests

from .generator import Case
from .preemption import kubelet_evictions, scheduler_nomination

SEVERITIES: dict[str, Any] = dict.fromkeys(all_rules())  # every rule at its own severity
REJECTED = "rejected by the kubelet"
_NAME = r"[A-Za-z][\w./-]*"  # OutOfcpu, OutOfnvidia.com/gpu, OutOfhugepages-2Mi, NodeAffinity, ...
_CLAIM = re.compile(
    r"(?:none of .+? fits on \S+: each would be|only (?P<admitted>\d+) of .+? (?:fit|can run) on \S+: .*?would be|"
    r"would be) rejected by the kubelet (?:on \S+ (?:\(--static-pod-node\) )?)?with "
    rf"(?:one of (?P<own_any>[^()]+?) \(the kubelet checks these in no fixed order\)|(?P<own>{_NAME}))"
    rf"(?: \(it reports (?:one of (?P<first_any>[^()]+?) first, in no fixed order|(?P<first>{_NAME}) first): "
    r"see [a-z-]+\))?[:;]"
)
_QUOTE = re.compile(
    r'\(kubelet: "(?P<text>Pod was rejected: .*?)"'
    r"(?P<unordered> \(the kubelet lists the conditions in no fixed order\))?\)"
)
_EVENT = re.compile(r'(?:stays Pending with|first gets) FailedScheduling "(?P<event>[^"]*)"')


@dataclass
class Claim:
    """One finding's prediction of a kubelet rejection."""

    rule: str
    message: str
    admitted: int  # replicas admitted before the rejected one (0 for a Pod)
    reported: frozenset[str]  # the reason(s) the Pod's status may show
    quote: str | None  # the kubelet's text the finding quotes
    unordered: bool  # the quote lists node conditions in no fixed order


def _reasons(match: re.Match[str], group: str) -> frozenset[str] | None:
    if match.group(group):
        return frozenset({match.group(group)})
    if match.group(f"{group}_any"):
        return frozenset(part.strip() for part in match.group(f"{group}_any").split(","))
    return None


def read_claim(finding: Finding) -> Claim | None:
    """The kubelet rejection a finding predicts; None when it predicts none. Raises ValueError for a
    finding that speaks of a kubelet rejection in words this module does not know."""
    if REJECTED not in finding.message or finding.severity != "error":
        return None
    match = _CLAIM.search(finding.message)
    if match is None:
        raise ValueError(f"cannot read the kubelet prediction of {finding.rule}: {finding.message}")
    own = _reasons(match, "own")
    first = _reasons(match, "first")
    assert own is not None
    quote = _QUOTE.search(finding.message)
    return Claim(
        rule=finding.rule,
        message=finding.message,
        admitted=int(match.group("admitted") or 0),
        reported=first or own,
        quote=quote.group("text") if quote else None,
        unordered=bool(quote and quote.group("unordered")),
    )


def scheduler_event(findings: list[Finding]) -> list[str]:
    return [m.group("event") for f in findings if f.rule == "no-node-fits" and (m := _EVENT.search(f.message))]


@dataclass
class Linted:
    """nodename-lint's findings for each form of a case (or the internal errors of a crash)."""

    findings: dict[str, list[Finding]]
    errors: list[str]


def lint_case(case: Case) -> Linted:
    state = load_state_text(case.cluster_dump(), "file cluster.json")
    linter = Linter(SEVERITIES, Context(cluster=state))
    findings: dict[str, list[Finding]] = {}
    errors: list[str] = []
    for mode in ("kubelet", "scheduler", "kubelet-replicas"):
        result = linter.lint_text(json.dumps(case.manifest(mode)), display=f"probe-{mode}.json")
        run = linter.collect([result])
        findings[mode] = run.findings
        errors += [f"{mode}: {error}" for error in run.internal_errors]
    return Linted(findings, errors)


def _same_quote(claim: Claim, message: str) -> bool:
    expected = f"Pod was rejected: {message}"
    if claim.quote == expected:
        return True
    if claim.unordered:  # "The node had condition: [A B]. " in any order
        inside = re.fullmatch(r"(Pod was rejected: The node had condition: \[)(.*)(\]\. )", expected)
        if inside:
            return any(
                claim.quote == inside.group(1) + " ".join(order) + inside.group(3)
                for order in permutations(inside.group(2).split())
            )
    return False


Disagreement = tuple[str, str]  # (path: crash, kubelet, kubelet-replicas, scheduler, requests; what differs)


def _claims(findings: list[Finding], problems: list[str]) -> list[Claim]:
    claims = []
    for finding in findings:
        try:
            claim = read_claim(finding)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if claim is not None:
            claims.append(claim)
    return claims


def _rejection(claims: list[Claim], admitted: int, reason: str, message: str) -> list[str]:
    """What the claims about the rejected Pod (the replica after `admitted`) get wrong: its reason, the
    text they quote."""
    problems = []
    for claim in claims:
        if claim.admitted != admitted:
            continue  # a claim about a later replica, which the kubelet never meets as such
        if reason not in claim.reported:
            problems.append(
                f"the kubelet reports {reason} ({message!r}); {claim.rule} says {'/'.join(sorted(claim.reported))}: "
                f"{claim.message}"
            )
        elif claim.quote is not None and not _same_quote(claim, message):
            problems.append(
                f"{claim.rule} quotes {claim.quote!r}; the kubelet writes {'Pod was rejected: ' + message!r}"
            )
    return problems


def _requests(case: Case, answer: dict[str, Any], invalid: bool) -> list[str]:
    try:
        ours = pod_requests(case.pod["spec"])
    except RequestError as exc:
        return [] if invalid else [f"nodename-lint refuses {exc.path}: {exc}; the API accepts the Pod"]
    theirs = {name: value for name, value in (answer.get("requests") or {}).items() if value}
    return [] if ours == theirs else [f"nodename-lint {ours}, PodRequests {theirs}"]


def _kubelet(findings: list[Finding], answer: dict[str, Any]) -> list[str]:
    problems: list[str] = kubelet_evictions(findings, answer)
    claims = _claims(findings, problems)
    if answer["admit"]:
        return problems + [f"the kubelet admits the Pod; {claim.rule} says {claim.message}" for claim in claims]
    if not claims:
        problems.append(
            f"the kubelet rejects the Pod with {answer['reason']} ({answer['message']!r}); nodename-lint is silent"
        )
    return problems + _rejection(claims, 0, answer["reason"], answer["message"])


def _replicas(case: Case, findings: list[Finding], answer: dict[str, Any]) -> list[str]:
    problems: list[str] = kubelet_evictions(findings, answer)
    claims = _claims(findings, problems)
    admitted = case.replicas if answer["admit"] else answer["admitted"]
    predicted = min((claim.admitted for claim in claims), default=case.replicas)
    if predicted != admitted:
        then = f" then reports {answer['reason']} ({answer['message']!r})" if admitted < case.replicas else ""
        said = " | ".join(claim.message for claim in claims)
        problems.append(
            f"the kubelet admits {admitted} of {case.replicas}{then}; nodename-lint predicts {predicted}: {said}"
        )
        return problems
    if admitted < case.replicas:
        problems += _rejection(claims, admitted, answer["reason"], answer["message"])
    return problems


def _scheduler(findings: list[Finding], answer: dict[str, Any]) -> list[str]:
    events = scheduler_event(findings)
    if answer["fits"]:
        return [f"the scheduler binds the Pod to {answer['node']}; nodename-lint says {event!r}" for event in events]
    if not events:
        return [f"FailedScheduling {answer['message']!r}; nodename-lint is silent"]
    return scheduler_nomination(findings, answer) + [
        f"FailedScheduling {answer['message']!r}; nodename-lint quotes {event!r}"
        for event in events
        if event != answer["message"]
    ]


def compare(case: Case, linted: Linted, answers: dict[str, dict[str, Any]]) -> list[Disagreement]:
    """Every disagreement between nodename-lint and the oracle on one case ([] when they agree).

    A Pod the API server refuses (the oracle's `invalid`) runs nowhere: only crashes, unreadable
    findings and requests are compared for it.
    """
    problems: list[Disagreement] = [("crash", error) for error in linted.errors]
    invalid = bool(answers["kubelet"].get("invalid"))
    problems += [("requests", text) for text in _requests(case, answers["requests"], invalid)]
    if case.refusal and not invalid:  # the Priority admission plugin refuses it: no kubelet, no scheduler sees it
        for mode in ("kubelet", "kubelet-replicas", "scheduler"):
            if not any(f.rule == "invalid-priority" and case.refusal in f.message for f in linted.findings[mode]):
                problems.append(
                    (mode, f"the API server refuses the Pod ({case.refusal!r}); invalid-priority is silent")
                )
        return problems
    if invalid:
        for mode in ("kubelet", "kubelet-replicas"):
            unreadable: list[str] = []
            _claims(linted.findings[mode], unreadable)
            problems += [(mode, text) for text in unreadable]
        return problems
    problems += [("kubelet", text) for text in _kubelet(linted.findings["kubelet"], answers["kubelet"])]
    replicas = _replicas(case, linted.findings["kubelet-replicas"], answers["kubelet-replicas"])
    problems += [("kubelet-replicas", text) for text in replicas]
    problems += [("scheduler", text) for text in _scheduler(linted.findings["scheduler"], answers["scheduler"])]
    return problems
