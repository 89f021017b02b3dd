"""One differential run: draw the cases for a seed, ask the oracle in batches, lint, compare."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

from .compare import Disagreement, compare, lint_case
from .generator import Case, cases
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
        for answers in self.answers.values():
            if answers["kubelet"].get("invalid"):
                continue
            kubelet, replicas, scheduler = answers["kubelet"], answers["kubelet-replicas"], answers["scheduler"]
            found[f"kubelet {kubelet.get('reason') or 'admits'}"] += 1
            found["replicas " + ("all admitted" if replicas["admit"] else f"{replicas['admitted']} admitted")] += 1
            found["scheduler " + ("fits" if scheduler["fits"] else "FailedScheduling")] += 1
        return found

    def disagreements(self, path: str) -> list[tuple[Case, str]]:
        by_id = {case.id: case for case in self.cases}
        return [
            (by_id[case_id], text) for case_id, found in self.problems.items() for where, text in found if where == path
        ]


def differential_run(binary: Path, run_seed: int, count: int, processes: int = 8) -> Run:
    started = time.perf_counter()
    run = Run(run_seed, draw_cases(run_seed, count))
    run.seconds["draw"] = time.perf_counter() - started
    for mode in MODES:
        started = time.perf_counter()
        answers = run_batch(binary, [case.oracle_request(mode) for case in run.cases], processes)
        for case, answer in zip(run.cases, answers, strict=True):
            run.answers.setdefault(case.id, {})[mode] = answer
        run.seconds[f"oracle {mode}"] = time.perf_counter() - started
    started = time.perf_counter()
    for case in run.cases:
        problems = compare(case, lint_case(case), run.answers[case.id])
        if problems:
            run.problems[case.id] = problems
    run.seconds["lint and compare"] = time.perf_counter() - started
    return run
