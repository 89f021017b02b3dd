"""One differential run: draw the cases for a seed, ask the oracle in batches, lint, compare."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

from .compare import Disagreement, compare, lint_case
from .generator import Case, admitted, cases
from .oracle import run_batch

MODES = ("kubelet", "kubelet-replicas", "scheduler", "requests")


def draw_cases(run_seed: int, count: int) -> list[Case]:
    """`count` cases, the same ones for the same seed (hypothesis' generate phase only: no database,
    no shrinking, since the cases are judged in one batch after they are all drawn)."""
    drawn: list[Case] = []

    @seed(run_seed)
    @settings(
        max_examples=count,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(cases())
    def collect(case: Case) -> None:
        drawn.append(case)

    collect()
    for index, case in enumerate(drawn):
        case.id = f"{run_seed}-{index}"
    return drawn


@dataclass
class Run:
    seed: int
    cases: list[Case]
    answers: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # case id -> mode -> answer
    problems: dict[str, list[Disagreement]] = field(default_factory=dict)  # case id -> disagreements
    seconds: dict[str, float] = field(default_factory=dict)  # wall-clock time of each step
    report: Path | None = None  # where the disagreeing cases were written

    def invalid(self) -> int:
        """Cases whose Pod the API server refuses (only crashes and requests are compared for them)."""
        return sum(1 for answers in self.answers.values() if answers["kubelet"].get("invalid"))

    def outcomes(self) -> Counter[str]:
        """What the oracle answered, by path: how well the cases cover what the kubelet and the scheduler do."""
        found: Counter[str] = Counter()
        for case in self.cases:
            answers = self.answers[case.id]
            if answers["kubelet"].get("invalid") or case.refusal:
                continue
            kubelet, replicas, scheduler = answers["kubelet"], answers["kubelet-replicas"], answers["scheduler"]
            found[f"kubelet {kubelet.get('reason') or 'admits'}"] += 1
            found["kubelet evicts"] += bool(kubelet.get("evicts"))
            found["replicas " + ("all admitted" if replicas["admit"] else f"{replicas['admitted']} admitted")] += 1
            found["replicas evict"] += bool(replicas.get("evicts"))
            found["scheduler " + ("fits" if scheduler["fits"] else "FailedScheduling")] += 1
            found["scheduler nominates"] += bool(scheduler.get("nominated"))
        found["refused by the Priority admission plugin"] = sum(1 for case in self.cases if case.refusal)
        return found

    def disagreements(self, path: str) -> list[tuple[Case, str]]:
        by_id = {case.id: case for case in self.cases}
        return [
            (by_id[case_id], text) for case_id, found in self.problems.items() for where, text in found if where == path
        ]


def differential_run(
    binary: Path, run_seed: int, count: int, processes: int = 8, prepare: Callable[[Case], Case] | None = None
) -> Run:
    """Draw `count` cases for the seed (each changed by `prepare`, for a focused run), ask the oracle, lint
    and compare."""
    started = time.perf_counter()
    drawn = draw_cases(run_seed, count)
    run = Run(run_seed, [prepare(case) for case in drawn] if prepare else drawn)
    run.seconds["draw"] = time.perf_counter() - started
    for mode in MODES:
        started = time.perf_counter()
        answers = run_batch(binary, [case.oracle_request(mode) for case in run.cases], processes)
        for case, answer in zip(run.cases, answers, strict=True):
            run.answers.setdefault(case.id, {})[mode] = answer
        if mode == "kubelet-replicas":  # a critical Pod's replicas: one kubelet admission after another
            critical = [case for case in run.cases if case.critical and not case.refusal]
            for case, answer in zip(critical, critical_replicas(binary, critical, processes), strict=True):
                run.answers[case.id][mode] = answer
        run.seconds[f"oracle {mode}"] = time.perf_counter() - started
    started = time.perf_counter()
    linted = {}
    for case in run.cases:
        linted[case.id] = lint_case(case)
        problems = compare(case, linted[case.id], run.answers[case.id])
        if problems:
            run.problems[case.id] = problems
    run.seconds["lint and compare"] = time.perf_counter() - started
    started = time.perf_counter()
    for case in late_victims(binary, run):
        problems = compare(case, linted[case.id], run.answers[case.id])
        run.problems.pop(case.id, None)
        if problems:
            run.problems[case.id] = problems
    run.seconds["victims asked again"] = time.perf_counter() - started
    return run


def late_victims(binary: Path, run: Run) -> list[Case]:
    """Ask the oracle again, one case at a time, for the nominations whose victims disagree.

    The scheduler deletes the victims asynchronously (SchedulerAsyncPreemption, prepareCandidateAsync:
    the last one after the others) and the oracle gives them a fixed time to show; with eight oracle
    processes on two busy cores the last deletion can come after it. A deletion never undoes itself, so
    the answer with more victims is the more complete one. The cases asked again (their answers
    replaced when more complete)."""
    again = [
        case
        for case in run.cases
        if run.answers[case.id]["scheduler"].get("nominated")
        and any(where == "scheduler" for where, _ in run.problems.get(case.id, ()))
    ]
    answers = run_batch(binary, [case.oracle_request("scheduler") for case in again], processes=1)
    for case, answer in zip(again, answers, strict=True):
        before = run.answers[case.id]["scheduler"]
        if len(answer.get("victims") or ()) > len(before.get("victims") or ()):
            run.answers[case.id]["scheduler"] = answer
    return again


def critical_replicas(binary: Path, critical: list[Case], processes: int) -> list[dict[str, Any]]:
    """The kubelet-replicas answer for critical Pods, made of the oracle's kubelet answers one replica after
    another: an admitted replica joins the node's Pods (Running), and the Pods its admission evicted leave
    them. The oracle's own kubelet-replicas mode records the evictions but keeps the evicted Pods (its
    ORACLE-CHANGE in place of killPodFunc, which in the kubelet stops them before Admit returns)."""
    pods = {case.id: list(case.pods) for case in critical}
    evicted: dict[str, list[str]] = {case.id: [] for case in critical}
    done: dict[str, dict[str, Any]] = {}
    for replica in range(max((case.replicas for case in critical), default=0)):
        pending = [case for case in critical if case.id not in done and replica < case.replicas]
        requests = []
        for case in pending:
            pod = admitted(case.manifest("kubelet"), case.classes)
            pod["metadata"]["name"] = f"{pod['metadata']['name']}-{replica}"
            pod["metadata"]["uid"] = f"uid-replica-{replica}"
            request = {"id": f"{case.id}/replica-{replica}", "mode": "kubelet", "nodes": case.nodes, "pod": pod}
            requests.append({**request, "pods": pods[case.id]})
        for case, request, answer in zip(pending, requests, run_batch(binary, requests, processes), strict=True):
            if not answer["admit"]:
                done[case.id] = {**answer, "admitted": replica, "evicts": evicted[case.id]}
                continue
            gone = set(answer.get("evicts") or ())
            evicted[case.id] += sorted(gone)
            kept = [
                p
                for p in pods[case.id]
                if f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}" not in gone
            ]
            pods[case.id] = [*kept, {**request["pod"], "status": {"phase": "Running"}}]
    return [
        done.get(case.id) or {"admit": True, "admitted": case.replicas, "evicts": evicted[case.id]} for case in critical
    ]
