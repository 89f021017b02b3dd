"""The k8s oracle (../shared/k8s-oracle): built once and cached by its own build.sh, run as a few
processes that each take a batch of JSON lines.

The scheduler mode spends most of its ~100-200 ms a case waiting (informer sync, the event, the
status patch), not computing, so the batch is spread over several processes: on 2 cores eight of
them run 2,000 scheduler cases in well under a minute.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

BUILD_TIMEOUT = 1800  # a cold build takes 2-6 minutes of 2 cores
CASE_TIMEOUT = 30  # seconds a case may take at most (the scheduler's own wait is 20 s)


class OracleError(RuntimeError):
    """The oracle could not be built or did not answer."""


def build(shared: Path) -> Path:
    """The oracle binary: `bash build.sh` prints its path (at once when it is cached)."""
    script = shared / "k8s-oracle" / "build.sh"
    try:
        completed = subprocess.run(
            ["bash", str(script)], capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise OracleError(f"{script} took more than {BUILD_TIMEOUT} s") from exc
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines or not os.access(lines[-1], os.X_OK):
        raise OracleError(f"{script} failed ({completed.returncode}): {completed.stderr[-3000:]}")
    return Path(lines[-1])


def run_batch(binary: Path, requests: list[dict[str, Any]], processes: int = 8) -> list[dict[str, Any]]:
    """The oracle's answers to `requests`, in order, from `processes` oracle processes at once."""
    if not requests:
        return []
    processes = max(1, min(processes, len(requests)))
    chunks = [requests[index::processes] for index in range(processes)]
    answers: list[list[dict[str, Any]] | None] = [None] * processes
    failures: list[str] = []

    def run(index: int) -> None:
        chunk = chunks[index]
        data = "".join(json.dumps(request, separators=(",", ":")) + "\n" for request in chunk).encode()
        try:
            completed = subprocess.run(
                [str(binary)], input=data, capture_output=True, timeout=CASE_TIMEOUT * len(chunk), check=False
            )
        except subprocess.TimeoutExpired:
            failures.append(f"oracle process {index} took more than {CASE_TIMEOUT} s a case")
            return
        lines = completed.stdout.decode().splitlines()
        if completed.returncode != 0 or len(lines) != len(chunk):
            failures.append(
                f"oracle process {index} exited {completed.returncode} after {len(lines)} of {len(chunk)} answers: "
                f"{completed.stderr.decode(errors='replace')[-2000:]}"
            )
            return
        answers[index] = [json.loads(line) for line in lines]

    threads = [threading.Thread(target=run, args=(index,)) for index in range(processes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise OracleError("; ".join(failures))
    ordered: list[dict[str, Any]] = [{}] * len(requests)
    for index, chunk_answers in enumerate(answers):
        assert chunk_answers is not None
        ordered[index::processes] = chunk_answers
    for request, answer in zip(requests, ordered, strict=True):
        if answer.get("id") != request["id"]:
            raise OracleError(f"the oracle answered {answer.get('id')!r} to {request['id']!r}")
        if answer.get("error"):
            raise OracleError(f"the oracle failed on {request['id']}: {answer['error']}")
    return ordered
