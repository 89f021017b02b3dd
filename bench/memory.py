"""Peak memory of `nodename-lint -` on a multi-document stream of growing size (1 GB by default).

The stream is written into the linter's stdin as it reads (nothing on disk): a block of about
1 MB of generated Deployments, Services and ConfigMaps plus one Pod pinned with spec.nodeName (so
there are findings to keep), repeated. Documents are streamed, so peak RSS must stay flat as the
stream grows; only the findings (one per block) accumulate.

    python bench/memory.py [--sizes 16,1024]   # sizes in MB
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import configmap, deployment, pinned_pod, service  # bench/ is not a package

BLOCK_BYTES = 1 << 20


def stream_block(seed: int = 2026) -> bytes:
    """About 1 MB of documents, each starting with `---`, exactly one of them a pinned Pod."""
    rng = random.Random(seed)
    parts = [pinned_pod(rng, 0).replace("compte", "compute")]  # one valid pinned Pod: one info finding
    size = len(parts[0])
    index = 0
    while size < BLOCK_BYTES:
        team, app = rng.choice(("payments", "search", "data")), f"app-{index}"
        for text in (deployment(rng, team, app), service(rng, team, app), configmap(rng, team, app)):
            parts.append(text)
            size += len(text) + 4
        index += 1
    return "".join("---\n" + part for part in parts).encode()


def run(megabytes: int, block: bytes) -> tuple[float, float, int, int]:
    """(wall s, cpu s, peak RSS KB, documents) of linting a stream of `megabytes` MB from stdin."""
    blocks = max(1, megabytes * (1 << 20) // len(block))
    process = subprocess.Popen(
        [sys.executable, "-m", "nodename_lint", "--format", "json", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def feed() -> None:
        assert process.stdin is not None
        for _ in range(blocks):
            process.stdin.write(block)
        process.stdin.close()

    start = time.perf_counter()
    writer = threading.Thread(target=feed)
    writer.start()
    assert process.stdout is not None
    report = process.stdout.read()
    writer.join()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"nodename-lint exited {code}")
    documents = blocks * block.count(b"---\n")
    findings = report.count(b'"rule":')
    if findings < blocks:
        raise RuntimeError(f"expected a finding per block, got {findings} for {blocks} blocks")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,1024", help="stream sizes in MB, comma-separated")
    args = parser.parse_args()
    block = stream_block()
    print("| stdin stream | documents | wall s | cpu s | MB/s (cpu) | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for megabytes in (int(size) for size in args.sizes.split(",")):
        wall, cpu, peak_kb, documents = run(megabytes, block)
        print(
            f"| {megabytes:,} MB | {documents:,} | {wall:.1f} | {cpu:.1f} | {megabytes / cpu:.1f} | "
            f"{peak_kb / 1024:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
