"""Lint large inputs on every core: a process pool over files, in chunks, results in input order.

Parsing dominates a run and is CPU-bound, so a monorepo is split into contiguous chunks of files
that worker processes lint; the parent merges the per-file results in input order, so the report
is byte-for-byte what one process prints. Small inputs (a pre-commit hook's few files) never
start a pool: below AUTO_MIN_BYTES the run stays in this process and imports nothing extra.

Workers receive the Linter (rules, severities, cluster state) once, through the pool initializer;
with the "fork" start method it is inherited rather than pickled. Where processes cannot be
started (no fork/semaphores, a sandbox), the run falls back to one process; if a worker dies,
the chunks it had not returned are linted in this process, exactly as a single-process run would.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .sources import STDIN, Source

if TYPE_CHECKING:
    from .engine import FileResult, Linter
    from .findings import RunResult

AUTO_MIN_BYTES = 2 << 20  # below this much input a pool costs more than it saves
CHUNKS_PER_WORKER = 4  # several chunks per worker even out files of very different sizes

_worker_linter: Linter | None = None
# What starting a pool raises where processes cannot be started (no semaphores or fork, a sandbox).
_CANNOT_START = (ImportError, OSError, NotImplementedError, ValueError, RuntimeError)


def available_cores() -> int:
    """Cores this process may run on (the affinity mask, as in a container), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def worker_count(sources: list[Source], jobs: int | None) -> int:
    """How many worker processes to use: `jobs` when given, else one per core for large inputs.

    1 means no pool. stdin is always read in this process and does not count.
    """
    files = [source for source in sources if source.path != STDIN]
    if jobs is not None:
        return max(1, min(jobs, len(files)))
    cores = available_cores()
    if cores < 2 or len(files) < 2 or _total_bytes(files, AUTO_MIN_BYTES) < AUTO_MIN_BYTES:
        return 1
    return min(cores, len(files))


def _total_bytes(files: list[Source], enough: int) -> int:
    """Size of the files, stopping as soon as it reaches `enough` (a stat per file, no reads)."""
    total = 0
    for source in files:
        total += _size(source)
        if total >= enough:
            break
    return total


def lint_files(
    linter: Linter,
    sources: list[Source],
    jobs: int | None = None,
    start_method: str | None = None,
    progress: Callable[[], None] | None = None,
) -> RunResult:
    """Lint every source and run the folder-wide checks; findings as `linter.lint_sources` gives them.

    PROGRESS is called in this process once per linted file.
    """
    workers = worker_count(sources, jobs)
    if workers < 2:
        return linter.lint_sources(sources, progress)
    return linter.collect(_pooled(linter, sources, workers, start_method), progress)


def chunked(sources: list[Source], pieces: int) -> list[list[Source]]:
    """Contiguous chunks of about equal size in bytes; stdin always gets a chunk of its own."""
    sizes = [_size(source) for source in sources]
    target = max(1, sum(sizes) // max(1, pieces))
    chunks: list[list[Source]] = []
    current: list[Source] = []
    held = 0
    for source, size in zip(sources, sizes, strict=True):
        if source.path == STDIN or (current and current[0].path == STDIN):
            if current:
                chunks.append(current)
            current, held = [], 0
        current.append(source)
        held += size
        if held >= target:
            chunks.append(current)
            current, held = [], 0
    if current:
        chunks.append(current)
    return chunks


def _size(source: Source) -> int:
    """Bytes of a file; 0 for stdin and for a file that cannot be read (linting reports why)."""
    if source.path == STDIN:
        return 0
    try:
        return os.stat(source.path).st_size
    except OSError:
        return 0


def _default_start_method(available: list[str]) -> str:
    """fork (cheap, the linter is inherited) while this process has one thread, else spawn.

    Forking after threads ran (the live client lists Pods from a thread pool) can copy a lock
    some thread held, and the child would wait on it for ever.
    """
    import sys
    import threading

    # Helm's Go runtime (helm-python-sdk) runs threads Python does not see, and cannot live on in a fork.
    go_runtime = "helm_python" in sys.modules
    return "fork" if "fork" in available and threading.active_count() == 1 and not go_runtime else "spawn"


def _pooled(linter: Linter, sources: list[Source], workers: int, start_method: str | None) -> Iterator[FileResult]:
    """Per-file results in input order, linted by a pool (or here, where a pool cannot run)."""
    import multiprocessing

    chunks = chunked(sources, workers * CHUNKS_PER_WORKER)
    method = start_method or _default_start_method(multiprocessing.get_all_start_methods())
    with _safe_path_for_children(method):
        yield from _run_pool(linter, sources, chunks, workers, method)


@contextmanager
def _safe_path_for_children(method: str) -> Iterator[None]:
    """Keep the current folder off the sys.path of spawned workers while they start.

    A spawned worker is `python -c ...` started in this folder, and `-c` puts the folder first on
    sys.path: a `multiprocessing/` or `json.py` in the repository being linted would be imported.
    PYTHONSAFEPATH (Python 3.11+) leaves it out; forked workers start no interpreter.
    """
    if method == "fork" or os.environ.get("PYTHONSAFEPATH"):
        yield
        return
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        del os.environ["PYTHONSAFEPATH"]


def _run_pool(
    linter: Linter, sources: list[Source], chunks: list[list[Source]], workers: int, method: str
) -> Iterator[FileResult]:
    """The pool itself: chunks to workers, results back in input order; a dead worker's share done here."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        executor = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context(method), initializer=_init_worker, initargs=(linter,)
        )
    except _CANNOT_START:
        yield from _lint_here(linter, sources)
        return
    with executor:
        try:
            futures = [None if chunk[0].path == STDIN else executor.submit(_lint_chunk, chunk) for chunk in chunks]
        except _CANNOT_START:  # processes start on the first submit
            futures = [None] * len(chunks)
        for chunk, future in zip(chunks, futures, strict=True):
            try:
                results = _lint_here(linter, chunk) if future is None else future.result()
            except BrokenProcessPool:  # a worker died (killed, out of memory): do its share here
                results = _lint_here(linter, chunk)
            yield from results


def _lint_here(linter: Linter, chunk: list[Source]) -> list[FileResult]:
    return [linter.lint_source(source) for source in chunk]


def _init_worker(linter: Linter) -> None:
    global _worker_linter
    _worker_linter = linter


def _lint_chunk(chunk: list[Source]) -> list[FileResult]:
    assert _worker_linter is not None, "the pool initializer sets the linter"
    return _lint_here(_worker_linter, chunk)
