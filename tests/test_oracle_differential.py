"""Issue 22: nodename-lint's predictions checked against the Kubernetes code itself.

Random but realistic cases (tests/differential/generator.py) go to the k8s oracle
(../shared/k8s-oracle: the kubelet's admission, the kube-scheduler and PodRequests of Kubernetes
v1.35.4) and to nodename-lint, which runs every rule as `nodename-lint MANIFEST --cluster-state DUMP`
would. Each case is judged on four paths: the Pod pinned with nodeName (the kubelet admits it or
not), the Pod without nodeName (the scheduler binds it or writes FailedScheduling), a pinned
Deployment of 1-5 replicas (how many the kubelet admits), and the Pod's effective requests. Compared:
no rule crashes; the verdict; the reason; and every text a finding quotes, byte for byte.

The seed is drawn anew for each run and is in every failure message; replay a run with

    NODENAME_ORACLE_SEED=<seed> python -m pytest tests/test_oracle_differential.py

and set `NODENAME_ORACLE_CASES` for another number of cases (default 2,000 for each path). The
disagreeing cases are also written, one JSON object a line, to the file the failure names.

Priority and preemption are compared too: the Pods the kubelet evicts to admit a critical Pod (the
oracle's `evicts`), the node the scheduler nominates and the victims it deletes (`nominated`,
`victims`), and the Pods the Priority admission plugin refuses (the generator applies that plugin,
which the oracle does not run; `invalid-priority` must report them). For a critical Pod's replicas
the harness chains the oracle's kubelet admissions itself (run.critical_replicas). What the
generator leaves out, and why, is said in its module: static Pods under test, and Nodes that tell
nothing of their OS.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from .differential.run import Run, differential_run

CASES = int(os.environ.get("NODENAME_ORACLE_CASES") or 2000)
SEED = int(os.environ.get("NODENAME_ORACLE_SEED") or secrets.randbelow(2**32))
REPLAY = f"NODENAME_ORACLE_SEED={SEED} NODENAME_ORACLE_CASES={CASES} python -m pytest tests/test_oracle_differential.py"
SHOWN = 5  # disagreements spelled out in a failure message (all of them go to the file)
MAX_INVALID = 0.05  # the share of cases whose Pod the API server refuses: beyond it the generator is off
# What the kubelet and the scheduler must have answered at least once in 2,000 cases: the generator
# reaches every check (each appears dozens of times in a run).
EXPECTED_OUTCOMES = {
    "kubelet admits",
    "kubelet Evicted",
    "kubelet PodOSSelectorNodeLabelDoesNotMatch",
    "kubelet PodOSNotSupported",
    "kubelet OutOfcpu",
    "kubelet OutOfmemory",
    "kubelet OutOfephemeral-storage",
    "kubelet OutOfpods",
    "kubelet OutOfhugepages-2Mi",
    "kubelet OutOfhugepages-1Gi",
    "kubelet NodeAffinity",
    "kubelet NodePorts",
    "kubelet TaintToleration",
    "replicas 0 admitted",
    "replicas 1 admitted",
    "replicas all admitted",
    "scheduler fits",
    "scheduler FailedScheduling",
    # priority and preemption: the kubelet's critical Pod admission, DefaultPreemption, the Priority plugin
    "kubelet UnexpectedAdmissionError",
    "kubelet evicts",
    "replicas evict",
    "scheduler nominates",
    "refused by the Priority admission plugin",
}


@pytest.fixture(scope="module")
def run(oracle: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    result = differential_run(oracle, SEED, CASES)
    if result.problems:
        path = tmp_path_factory.mktemp("oracle") / f"disagreements-{SEED}.jsonl"
        by_id = {case.id: case for case in result.cases}
        with path.open("w", encoding="utf-8") as out:
            for case_id, problems in result.problems.items():
                case = by_id[case_id]
                requests = {mode: case.oracle_request(mode) for mode in ("kubelet", "scheduler")}
                out.write(json.dumps({"id": case_id, "problems": problems, "case": case.to_json(), **requests}) + "\n")
        result.report = path
    return result


def _failure(run: Run, path: str) -> str:
    found = run.disagreements(path)
    shown = "\n".join(f"- case {case.id}: {text}\n  case: {case.to_json()[:3000]}" for case, text in found[:SHOWN])
    return (
        f"{len(found)} disagreement(s) with the Kubernetes code on the {path} path, seed {run.seed} "
        f"({len(run.cases)} cases); replay: {REPLAY}"
        + (f"; every disagreeing case is in {run.report}" if run.report else "")
        + f"\n{shown}"
    )


def test_no_rule_crashes_on_any_case(run: Run) -> None:
    assert not run.disagreements("crash"), _failure(run, "crash")


def test_requests_are_pod_requests(run: Run) -> None:
    assert not run.disagreements("requests"), _failure(run, "requests")


def test_a_pinned_pod_meets_the_kubelets_verdict_reason_and_text(run: Run) -> None:
    assert not run.disagreements("kubelet"), _failure(run, "kubelet")


def test_a_pinned_deployment_has_as_many_replicas_admitted_as_the_kubelet_admits(run: Run) -> None:
    assert not run.disagreements("kubelet-replicas"), _failure(run, "kubelet-replicas")


def test_an_unpinned_pod_meets_the_schedulers_verdict_and_event(run: Run) -> None:
    assert not run.disagreements("scheduler"), _failure(run, "scheduler")


def test_the_cases_reach_every_check(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = run.outcomes()
    with capsys.disabled():  # the figures belong in every CI log, not only a failing one
        seconds = ", ".join(f"{step} {value:.1f}s" for step, value in run.seconds.items())
        refused = f"{run.invalid()} refused by the API"
        print(f"\noracle differential: seed {run.seed}, {len(run.cases)} cases per path, {refused}; {seconds}")
    assert len(run.cases) >= CASES, f"seed {run.seed}: only {len(run.cases)} cases were drawn"
    assert run.invalid() <= MAX_INVALID * len(run.cases), f"seed {run.seed}: {run.invalid()} Pods the API refuses"
    if CASES >= 2000:
        missing = sorted(outcome for outcome in EXPECTED_OUTCOMES if not outcomes[outcome])
        assert not missing, f"seed {run.seed}: no case led to {missing}; outcomes: {dict(outcomes)}"
