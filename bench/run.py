"""Benchmark nodename-lint against the YAML parse floor and against peers, in one run.

Every measurement is a fresh process (what a user or a CI job pays); the commands of a table run
in interleaved rounds, so a burst of load from elsewhere hits every row alike. The tables show
medians of wall time and of CPU time (user + system, pool workers included: steadier than wall
time on a shared machine), documents per second, the ratio to the floor, how many times faster
than each peer nodename-lint is, and the peak RSS (os.wait4: the process or its largest worker).

Workloads: ../shared/corpus (skipped when absent) and a generated corpus of 10,000 documents
(bench/generate.py, fixed seed). Rows: the floor (bench/floor.py: read and compose with
CSafeLoader, nothing else); nodename-lint offline in one process and with two workers;
nodename-lint with a small and a large cluster state file; yamllint (relaxed) and checkov
(--framework kubernetes), run on a subset of the documents when the workload is large and
scaled per document. Then one small file against `python -c "import yaml, click"`, and the cost
per manifest with each cluster state: (lint the workload - load the state and lint one file) /
documents, which must not grow with the cluster.

Peers are not dependencies of nodename-lint: install them into a separate venv and point at it:

    python3 -m venv /tmp/bench-peers && /tmp/bench-peers/bin/pip install yamllint checkov
    python bench/run.py --peers /tmp/bench-peers/bin

A peer that is not installed is skipped with a note. `--quick` runs fewer rounds; `--startup-only` the
one-small-file table alone (`python bench/run.py --startup-only --pin 0 --repeat 5`). The package's
bytecode is compiled first, as `pip install` does (PYTHONDONTWRITEBYTECODE may be set).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED_CORPUS = HERE.parent.parent / "shared" / "corpus"
sys.path.insert(0, str(HERE))

from floor import compose_all  # noqa: E402  (bench/ is not a package)

LINT = [sys.executable, "-m", "nodename_lint"]
SMALL_MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  nodeName: worker-1
  containers:
    - name: shell
      image: busybox:1.36
"""

YAMLLINT_CONFIG = "relaxed"


# --pin CPU: every measured command runs on that one core (os.sched_setaffinity in the child before
# exec, as `taskset -c CPU` does), so `--jobs` defaults to 1 worker and no run borrows a second core.
PINNED_CPU: int | None = None


def _pin() -> None:
    assert PINNED_CPU is not None
    os.sched_setaffinity(0, {PINNED_CPU})


@dataclass
class Measure:
    """Wall times, CPU times and peak RSS of repeated runs of one command."""

    label: str
    command: list[str]
    documents: int  # documents the command processes (a peer may run on a subset)
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    peak_rss_kb: int = 0
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu_seconds)

    def per_document(self) -> float:
        return self.median / self.documents

    def run(self, cwd: Path | None = None) -> None:
        """One run: wall time, CPU time (user + system, workers included) and peak RSS via wait4."""
        start = time.perf_counter()
        process = subprocess.Popen(
            self.command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_pin if PINNED_CPU is not None else None,
        )
        stderr = process.stderr.read() if process.stderr else b""
        _, status, usage = os.wait4(process.pid, 0)
        self.seconds.append(time.perf_counter() - start)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode not in (0, 1):  # 1 = findings, for the linters
            raise RuntimeError(
                f"{self.label}: `{' '.join(self.command)}` exited {process.returncode}: "
                f"{stderr.decode(errors='replace')[-1500:]}"
            )
        # wait4 reports the child with its reaped children (the pool's workers): the largest RSS, all CPU
        self.peak_rss_kb = max(self.peak_rss_kb, usage.ru_maxrss)
        self.cpu_seconds.append(usage.ru_utime + usage.ru_stime)


def measure_interleaved(rows: list[Measure], repeat: int, cwd: Path | None = None) -> list[Measure]:
    """Run every command once per round, `repeat` rounds: a burst of load hits all rows alike."""
    for _ in range(repeat):
        for row in rows:
            row.run(cwd)
    for row in rows:
        print(
            f"  {row.label:<52} {row.median:8.3f} s wall, {row.cpu_median:7.3f} s cpu  "
            f"(runs: {', '.join(f'{s:.2f}' for s in row.seconds)})",
            file=sys.stderr,
        )
    return rows


def count_documents(paths: list[str]) -> int:
    output = subprocess.run(
        [sys.executable, str(HERE / "floor.py"), *paths], capture_output=True, text=True, check=True
    ).stdout
    return int(output.strip())


def subset(corpus: Path, documents: int, target: Path) -> Path:
    """Copy whole files of `corpus` (in discovery order) into `target` until it holds ~`documents`."""
    from nodename_lint.sources import discover

    if target.exists():
        shutil.rmtree(target)
    held = 0
    for source in discover([str(corpus)]):
        if held >= documents:
            break
        relative = Path(source.path).relative_to(corpus)
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source.path, target / relative)
        held += compose_all([source.path])
    return target


def lint_flags() -> str:
    return subprocess.run([*LINT, "lint", "--help"], capture_output=True, text=True).stdout


def bench_workload(name: str, corpus: Path, states: list[Path], args: argparse.Namespace) -> list[Measure]:
    print(f"workload {name}: {corpus}", file=sys.stderr)
    documents = count_documents([str(corpus)])
    lint = [*LINT, "--format", "json", "--no-color"]
    rows = [
        Measure("floor: read + CSafeLoader compose", [sys.executable, str(HERE / "floor.py"), str(corpus)], documents),
        Measure("nodename-lint offline, 1 process", [*lint, "--jobs", "1", str(corpus)], documents),
        Measure("nodename-lint offline, 2 workers", [*lint, "--jobs", "2", str(corpus)], documents),
    ]
    rows += [
        Measure(
            f"nodename-lint --cluster-state {state.name}",
            [*lint, "--jobs", "1", "--cluster-state", str(state), str(corpus)],
            documents,
        )
        for state in states
    ]
    measure_interleaved(rows, args.repeat)
    peers = Path(args.peers) if args.peers else None
    peer_corpus, peer_documents = corpus, documents
    if documents > args.peer_documents:
        peer_corpus = subset(corpus, args.peer_documents, args.work / f"{name.split()[0]}-subset")
        peer_documents = count_documents([str(peer_corpus)])
    peer_rows = []
    for peer, command in (
        ("yamllint", ["-d", YAMLLINT_CONFIG, "-f", "parsable", str(peer_corpus)]),
        (
            "checkov",
            [
                "--framework",
                "kubernetes",
                "-d",
                str(peer_corpus),
                "--quiet",
                "--compact",
                "--skip-download",
                "-o",
                "json",
            ],
        ),
    ):
        executable = (peers / peer) if peers else shutil.which(peer)
        if executable is None or not Path(executable).exists():
            print(f"  (skipped {peer}: not installed; see the docstring of bench/run.py)", file=sys.stderr)
            continue
        row = Measure(peer, [str(executable), *command], peer_documents)
        if peer_documents != documents:
            row.note = f"on {peer_documents:,} docs, scaled"
        peer_rows.append(row)
    measure_interleaved(peer_rows, args.peer_repeat, cwd=args.work)
    return rows + peer_rows


def table(name: str, rows: list[Measure], total_documents: int) -> str:
    """The workload's table; rows measured on a subset are scaled per document to the whole workload."""
    floor = rows[0]
    peers = [row for row in rows if not row.label.startswith(("floor", "nodename-lint"))]
    header = [name, "wall s", "cpu s", "docs/s", "x floor", *(f"{p.label} / this" for p in peers), "peak RSS MB"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        scale = total_documents / row.documents
        cells = [
            row.label + (f" ({row.note})" if row.note else ""),
            f"{row.median * scale:.2f}",
            f"{row.cpu_median * scale:.2f}",
            f"{row.documents / row.median:,.0f}",
            f"{row.per_document() / floor.per_document():.2f}",
        ]
        cells += [f"{peer.per_document() / row.per_document():.1f}" for peer in peers]
        cells.append(f"{row.peak_rss_kb / 1024:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def small_file_latency(manifest: Path, args: argparse.Namespace) -> tuple[str, Measure]:
    """What a pre-commit hook pays for one small file, next to importing yaml and click (and that row)."""
    rows = measure_interleaved(
        [
            Measure("python -c 'import yaml, click'", [sys.executable, "-c", "import yaml, click"], 1),
            Measure("nodename-lint --version", [*LINT, "--version"], 1),
            Measure("nodename-lint small.yaml", [*LINT, str(manifest)], 1),
        ],
        args.repeat * 4,
    )
    baseline = rows[0]
    lines = [
        "| one small file | wall ms | over `import yaml, click` | cpu ms | over `import yaml, click` | peak RSS MB |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.label} | {row.median * 1000:.0f} | {(row.median - baseline.median) * 1000:+.0f} | "
            f"{row.cpu_median * 1000:.0f} | {(row.cpu_median - baseline.cpu_median) * 1000:+.0f} | "
            f"{row.peak_rss_kb / 1024:.0f} |"
        )
    return "\n".join(lines), rows[-1]


def cluster_cost(
    manifest: Path,
    states: list[Path],
    workloads: list[tuple[str, list[Measure]]],
    one_file: Measure,
    args: argparse.Namespace,
) -> str:
    """Per-manifest cost: (lint the workload - lint one file, with the same state or none) / documents."""
    loads = measure_interleaved(
        [
            Measure(f"load {state.name} + lint small.yaml", [*LINT, "--cluster-state", str(state), str(manifest)], 1)
            for state in states
        ],
        args.repeat,
    )
    lines = [
        "| cluster state | nodes / Pods | load alone, wall s | "
        + " | ".join(f"per manifest, {name}: µs wall (cpu)" for name, _ in workloads)
        + " |",
        "|---|---|---|" + "---|" * len(workloads),
    ]
    for state, load in zip(states, loads, strict=True):
        cells = [state.name, _state_size(state), f"{load.median:.2f}"]
        for _, rows in workloads:
            row = next(r for r in rows if r.label.endswith(state.name))
            wall = (row.median - load.median) / row.documents * 1e6
            cpu = (row.cpu_median - load.cpu_median) / row.documents * 1e6
            cells.append(f"{wall:.0f} ({cpu:.0f})")
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["none (offline)", "", ""]
    for _, rows in workloads:
        offline = rows[1]
        wall = (offline.median - one_file.median) / offline.documents * 1e6
        cpu = (offline.cpu_median - one_file.cpu_median) / offline.documents * 1e6
        cells.append(f"{wall:.0f} ({cpu:.0f})")
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _state_size(state: Path) -> str:
    text = state.read_text()
    return f"{text.count('kind: Node')} / {text.count('kind: Pod')}"


def precompile() -> None:
    """Write the bytecode caches a regular `pip install` writes (PYTHONDONTWRITEBYTECODE may be set)."""
    import nodename_lint
    import nodename_lint.rules

    for folder in {os.path.dirname(nodename_lint.__file__), *nodename_lint.rules.__path__}:
        subprocess.run([sys.executable, "-m", "compileall", "-q", folder], check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark nodename-lint (see the module docstring).")
    parser.add_argument("--peers", help="folder with yamllint and checkov executables (default: PATH)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds for nodename-lint and the floor")
    parser.add_argument("--peer-repeat", type=int, default=3, help="rounds for the peers")
    parser.add_argument(
        "--peer-documents",
        type=int,
        default=1000,
        help="largest workload the peers run on whole; above it they run on a subset and are scaled",
    )
    parser.add_argument("--documents", type=int, default=10_000, help="size of the generated corpus")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "nodename-lint-bench",
        help="scratch folder for the generated corpus and state files",
    )
    parser.add_argument("--quick", action="store_true", help="2 rounds, 1 for the peers")
    parser.add_argument("--pin", type=int, metavar="CPU", help="run every command on this one core (taskset -c CPU)")
    parser.add_argument(
        "--startup-only", action="store_true", help="only the one-small-file table (4 x --repeat interleaved rounds)"
    )
    args = parser.parse_args()
    global PINNED_CPU
    PINNED_CPU = args.pin
    if args.quick:
        args.repeat, args.peer_repeat = 2, 1
    args.work.mkdir(parents=True, exist_ok=True)
    precompile()
    if args.startup_only:
        manifest = args.work / "small.yaml"
        manifest.write_text(SMALL_MANIFEST)
        print(_header(args, f"{4 * args.repeat} interleaved rounds"), small_file_latency(manifest, args)[0], sep="")
        return
    generated = args.work / "generated"
    # a subprocess, so that this process stays small: a forked child starts with its parent's peak RSS
    subprocess.run(
        [sys.executable, str(HERE / "generate.py"), str(generated), "--documents", str(args.documents)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    states = [args.work / "cluster-small.yaml", args.work / "cluster-large.yaml"]
    manifest = args.work / "small.yaml"
    manifest.write_text(SMALL_MANIFEST)
    corpora = []
    if SHARED_CORPUS.is_dir():
        corpora.append(("shared/corpus", SHARED_CORPUS))
    else:
        print(f"(skipped workload shared/corpus: {SHARED_CORPUS} is absent)", file=sys.stderr)
    corpora.append((f"generated {args.documents:,} docs", generated))
    workloads = [(name, bench_workload(name, corpus, states, args)) for name, corpus in corpora]
    tables = [table(name, rows, rows[0].documents) for name, rows in workloads]
    latency, one_file = small_file_latency(manifest, args)
    tables.append(latency)
    tables.append(cluster_cost(manifest, states, workloads, one_file, args))
    print(_header(args, f"{args.repeat} interleaved rounds ({args.peer_repeat} for peers)"))
    print("\n\n".join(tables))


def _header(args: argparse.Namespace, rounds: str) -> str:
    return (
        f"\n{os.cpu_count()} cores{f' (each command pinned to CPU {args.pin})' if args.pin is not None else ''}, "
        f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f} at the end; medians of {rounds}\n"
    )


if __name__ == "__main__":
    main()
