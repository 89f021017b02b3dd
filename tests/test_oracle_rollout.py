"""Issue 22: the rollout a workload's apply starts, checked against the Kubernetes code itself.

Each generated case (tests/differential/generator.py) becomes a workload that already runs R Pods of
an older template on the case's node (tests/differential/rollout.py says how, and which Pod each
strategy makes the kubelet or the scheduler meet first, beside which Pods). nodename-lint lints the
new manifest against the dump as a user runs it; the oracle (../shared/k8s-oracle) judges that first
new Pod. Compared, as in test_oracle_differential.py: no rule crashes; the verdict (admitted or
rejected, how many replicas a Recreate admits; bound or FailedScheduling); the reason; and every
text a finding quotes, byte for byte.

An unpinned workload of several replicas is judged only when its first new Pod finds no node: once
it is bound, the rollout moves on to Pods the oracle never meets (nodename-lint plays the rest
itself, tests/test_rollout.py).

Replay a run with `NODENAME_ORACLE_SEED=<seed> python -m pytest tests/test_oracle_rollout.py`;
`NODENAME_ORACLE_ROLLOUT_CASES` sets the number of cases (default 1,200: 200 of each kind).
"""

from __future__ import annotations

import json
import os
import secrets
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from nodename_lint.cluster.from_file import load_state_text
from nodename_lint.engine import Linter
from nodename_lint.rule import Context

from .conftest import SHARED, SHARED_MISSING, unavailable
from .differential.compare import SEVERITIES, _claims, _kubelet, _replicas, _scheduler
from .differential.generator import POD_NAME
from .differential.oracle import OracleError, build, run_batch
from .differential.rollout import KINDS, RolloutCase, rollout_case
from .differential.run import critical_replicas, draw_cases

CASES = int(os.environ.get("NODENAME_ORACLE_ROLLOUT_CASES") or 1200)
SEED = int(os.environ.get("NODENAME_ORACLE_SEED") or secrets.randbelow(2**32))
REPLAY = (
    f"NODENAME_ORACLE_SEED={SEED} NODENAME_ORACLE_ROLLOUT_CASES={CASES} python -m pytest tests/test_oracle_rollout.py"
)
SHOWN = 5
STALL = "which stalls"  # every finding about a rollout that does not complete says so
# What the kubelet refuses a Pod for when the room is short (its requests, the Pod count, a host port)
_ROOM = ("OutOfcpu", "OutOfmemory", "OutOfephemeral-storage", "OutOfpods", "NodePorts")


@dataclass
class RolloutRun:
    seed: int
    cases: list[RolloutCase]
    problems: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # case id -> (path, what differs)
    outcomes: Counter[str] = field(default_factory=Counter)
    report: Path | None = None


def _lint(case: RolloutCase, pinned: bool) -> tuple[list[Any], list[str]]:
    state = load_state_text(case.cluster_dump(), "file cluster.json")
    linter = Linter(SEVERITIES, Context(cluster=state))
    result = linter.lint_text(json.dumps(case.manifest(pinned)), display="probe.json")
    run = linter.collect([result])
    return run.findings, run.internal_errors


def _judge(
    case: RolloutCase, pinned: bool, answer: dict[str, Any], run: RolloutRun, controller: dict[str, Any] | None
) -> None:
    """`controller`: for a DaemonSet, whether its controller creates the Pod at all (controller_request)."""
    path = f"{case.kind} {'pinned' if pinned else 'unpinned'}"
    findings, errors = _lint(case, pinned)
    problems = [("crash", error) for error in errors]
    if answer.get("invalid"):
        run.outcomes["invalid"] += 1
    elif case.case.refusal:  # the Priority admission plugin refuses the new Pods: no kubelet, no scheduler sees them
        run.outcomes["refused by the Priority admission plugin"] += 1
        if not any(f.rule == "invalid-priority" and case.case.refusal in f.message for f in findings):
            problems.append((path, f"the API server refuses it ({case.case.refusal!r}); invalid-priority is silent"))
    elif pinned and controller is not None and not controller.get("fits"):
        refusal = _daemon_refusal(controller["message"])
        if refusal is None:
            _judge_kubelet(case, findings, answer, run, problems, path)
        else:
            rule, why = refusal
            run.outcomes[f"{path}: no Pod ({why})"] += 1
            said = f"the DaemonSet controller will not run DaemonSet {POD_NAME} on {case.case.node}"
            if not any(f.rule == rule and said in f.message for f in findings):
                problems.append((path, f"the DaemonSet controller creates no Pod ({why}); {rule} does not say so"))
            unreadable: list[str] = []
            for claim in _claims(findings, unreadable):  # a kubelet verdict: there is no Pod for a kubelet to meet
                problems.append((path, f"no Pod is created, but {claim.rule} says {claim.message}"))
            problems += [(path, text) for text in unreadable]
    elif pinned and case.kind == "recreate":
        problems += [(path, text) for text in _replicas(_with_replicas(case), findings, answer)]
        run.outcomes[f"{path}: {answer['admitted'] if not answer['admit'] else 'all'} admitted"] += 1
    elif pinned:
        _judge_kubelet(case, findings, answer, run, problems, path)
    elif case.replicas > 1 and answer["fits"]:
        run.outcomes[f"{path}: fits (later Pods not judged)"] += 1
    else:
        problems += [(path, text) for text in _scheduler(findings, answer)]
        run.outcomes[f"{path}: {'fits' if answer['fits'] else 'FailedScheduling'}"] += 1
    if problems:
        run.problems.setdefault(case.id, []).extend(problems)


def _judge_kubelet(
    case: RolloutCase,
    findings: list[Any],
    answer: dict[str, Any],
    run: RolloutRun,
    problems: list[tuple[str, str]],
    path: str,
) -> None:
    problems += [(path, text) for text in _kubelet(findings, answer)]
    run.outcomes[f"{path}: {answer.get('reason') or 'admits'}"] += 1
    # refused for the room the old Pods hold (or would hold): the finding tells the rollout that stalls
    refused = not answer["admit"] and case.old_stay and answer["reason"] in _ROOM
    if refused and not any(STALL in f.message for f in findings):
        problems.append((path, "the surge Pod is refused and nodename-lint does not say the rollout stalls"))


def _daemon_refusal(message: str) -> tuple[str, str] | None:
    """(the rule that must say so, why) when the scheduler's first failing filter on the pinned node is one
    the DaemonSet controller also runs (RolloutCase.controller_request); None when it is another."""
    if "untolerated taint" in message:
        return "untolerated-taint", "an untolerated taint"
    # the Filter's words, or its PreFilter's when matchFields on metadata.name leave the node out or conflict
    if any(
        words in message
        for words in (
            "didn't match Pod's node affinity/selector",
            "didn't satisfy plugin(s) [NodeAffinity]",
            "pod affinity terms conflict",
        )
    ):
        return "node-selector-mismatch", "the node affinity"
    return None


def _with_replicas(case: RolloutCase) -> Any:
    """The generated case with the workload's replica count, as _replicas reads it."""
    from dataclasses import replace

    return replace(case.case, replicas=case.replicas)


@pytest.fixture(scope="module")
def oracle() -> Path:
    if not SHARED.is_dir():
        pytest.skip(SHARED_MISSING)
    try:
        return build(SHARED)
    except OracleError as exc:
        unavailable(f"the k8s oracle could not be built: {exc}")


@pytest.fixture(scope="module")
def run(oracle: Path, tmp_path_factory: pytest.TempPathFactory) -> RolloutRun:
    cases = [rollout_case(case, index) for index, case in enumerate(draw_cases(SEED, CASES))]
    result = RolloutRun(SEED, cases)
    judged = [(case, True) for case in cases] + [(case, False) for case in cases if not case.pinned_only]
    answers = run_batch(oracle, [case.oracle_request(pinned) for case, pinned in judged])
    # a critical Pod's Recreate replicas: one kubelet admission after another, the Pods each evicts gone
    # (the oracle's kubelet-replicas mode keeps them: run.critical_replicas)
    chained = [
        index
        for index, (case, pinned) in enumerate(judged)
        if pinned and case.kind == "recreate" and case.case.critical and not case.case.refusal
    ]
    replicas = critical_replicas(oracle, [_with_replicas(judged[index][0]) for index in chained], 1)
    for index, answer in zip(chained, replicas, strict=True):
        answers[index] = answer
    daemons = [case for case in cases if case.workload == "DaemonSet" and not case.case.refusal]
    controller = dict(
        zip(
            (case.id for case in daemons),
            run_batch(oracle, [case.controller_request() for case in daemons]),
            strict=True,
        )
    )
    for (case, pinned), answer in zip(judged, answers, strict=True):
        _judge(case, pinned, answer, result, controller.get(case.id) if pinned else None)
    if result.problems:
        result.report = tmp_path_factory.mktemp("oracle") / f"rollout-disagreements-{SEED}.jsonl"
        by_id = {case.id: case for case in cases}
        with result.report.open("w", encoding="utf-8") as out:
            for case_id, problems in result.problems.items():
                out.write(json.dumps({"id": case_id, "problems": problems, "case": by_id[case_id].to_json()}) + "\n")
    return result


def _failure(run: RolloutRun, kinds: tuple[str, ...]) -> str:
    by_id = {case.id: case for case in run.cases}
    found = [
        (by_id[case_id], path, text)
        for case_id, problems in run.problems.items()
        for path, text in problems
        if path.split()[0] in kinds
    ]
    shown = "\n".join(
        f"- case {case.id} ({path}): {text}\n  case: {case.to_json()[:3000]}" for case, path, text in found[:SHOWN]
    )
    return (
        f"{len(found)} disagreement(s) with the Kubernetes code, seed {run.seed} ({len(run.cases)} cases); "
        f"replay: {REPLAY}" + (f"; every disagreeing case is in {run.report}" if run.report else "") + f"\n{shown}"
    )


def test_no_rule_crashes_on_a_workload_that_already_runs(run: RolloutRun) -> None:
    assert not any(path == "crash" for problems in run.problems.values() for path, _ in problems), _failure(
        run, ("crash",)
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_new_pod_of_the_rollout_meets_the_kubernetes_verdict_and_text(run: RolloutRun, kind: str) -> None:
    assert not any(path.split()[0] == kind for problems in run.problems.values() for path, _ in problems), _failure(
        run, (kind,)
    )


def test_the_cases_reach_both_outcomes(run: RolloutRun, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\noracle rollout differential: seed {run.seed}, {len(run.cases)} cases; {dict(run.outcomes)}")
    if CASES < 600:
        return
    for wanted in (
        "surge pinned: admits",
        "surge pinned: OutOfcpu",
        "surge pinned: NodePorts",
        "surge unpinned: FailedScheduling",
        "recreate pinned: all admitted",
        "recreate pinned: 0 admitted",
        "statefulset pinned: admits",
        "daemonset-surge pinned: NodePorts",
        "daemonset pinned: no Pod (an untolerated taint)",
        "daemonset pinned: no Pod (the node affinity)",
    ):
        assert run.outcomes[wanted], f"seed {run.seed}: no case led to {wanted!r}; outcomes: {dict(run.outcomes)}"
