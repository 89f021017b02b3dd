"""The admission webhook at scale: review latency, 200 concurrent requests, and memory, against a
5,000-node, 150,000-Pod cluster (a script, not a timed test).

The cluster is served by the loopback HTTPS API server of the tests (tests/apiserver, in this process);
`nodename-lint webhook` runs as its own process pinned to one core (CPU 0), reads the cluster with its
lists and watches, and is sent AdmissionReviews over TLS, as the API server sends them: kept-alive
connections, one review at a time per connection. Reported:

1. the time to ready (the first full lists);
2. the latency of each kind of review, sequential on one connection (p50, p99, max), as the client sees
   it (TLS and HTTP included): a Pod pinned to a node that exists, an unpinned Pod (no-node-fits),
   a pinned Deployment (denied), a Pod on a node that does not exist (denied after one GET of the node);
3. 200 connections sending reviews at once: errors, throughput, p99;
4. memory (VmRSS, VmHWM) of the webhook fed by watches, and of the same webhook fed by the snapshot of
   that state (`nodename-lint snapshot`, then `--cluster-state`), after the same reviews.

    python bench/webhook.py [--nodes 5000] [--pods 150000] [--reviews 2000] [--concurrency 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from live_scale import cluster  # noqa: E402  (bench/ is not a package)

from tests.apiserver import TOKEN, ApiServer, cluster_entry, free_port, write_kubeconfig  # noqa: E402
from tests.webhook import Client, deployment, make_certs, pod, review  # noqa: E402


def cases(nodes: int) -> dict[str, dict[str, Any]]:
    pinned = pod("debug", f"node-{nodes // 2:05d}", cpu="100m")
    unpinned = pod("web", None, cpu="500m")
    unpinned["spec"]["nodeSelector"] = {"disktype": "ssd"}
    return {
        "pinned Pod, node exists (allowed)": pinned,
        "unpinned Pod, nodeSelector (no-node-fits)": unpinned,
        "pinned Deployment (denied)": deployment("web", f"node-{nodes // 3:05d}"),
        "Pod on a missing node (denied after a GET)": pod("ghost", f"node-{nodes + 7:05d}"),
    }


def start_webhook(args: list[str], certs: Any, port: int) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nodename_lint",
            "webhook",
            "--tls-cert-file",
            str(certs.cert_file),
            "--tls-private-key-file",
            str(certs.key_file),
            "--port",
            str(port),
            "--bind-address",
            "127.0.0.1",
            *args,
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {0}),  # one core
    )
    threading.Thread(target=lambda: [None for _ in process.stderr or ()], daemon=True).start()  # drain stderr
    return process


def wait_ready(port: int, certs: Any, seconds: float = 600) -> float:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        try:
            if Client(port, certs).get("/readyz")[0] == 200:
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("the webhook did not become ready")


def memory(pid: int) -> str:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    rss, peak = (int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM"))
    return f"RSS {rss:.0f} MB (peak {peak:.0f} MB)"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def sequential(port: int, certs: Any, bodies: dict[str, bytes], reviews: int) -> None:
    client = Client(port, certs)
    for name, body in bodies.items():
        for _ in range(20):  # warm up: caches, connection
            client.post(body)
        times = []
        for _ in range(reviews):
            start = time.perf_counter()
            status, answer = client.post(body)
            times.append(time.perf_counter() - start)
            assert status == 200, answer
        verdict = (
            "denied" if not answer["response"]["allowed"] else f"{len(answer['response'].get('warnings', []))} warnings"
        )
        print(
            f"  {name:45} p50 {statistics.median(times) * 1e3:5.2f} ms  p99 {percentile(times, 0.99) * 1e3:5.2f} ms"
            f"  max {max(times) * 1e3:6.2f} ms  ({verdict})"
        )


def concurrent(port: int, certs: Any, bodies: list[bytes], connections: int, each: int) -> None:
    errors: list[str] = []
    times: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(connections)

    def run(index: int) -> None:
        try:
            client = Client(port, certs)
            client.get("/healthz")
            barrier.wait()
            for count in range(each):
                start = time.perf_counter()
                status, answer = client.post(bodies[(index + count) % len(bodies)])
                elapsed = time.perf_counter() - start
                with lock:
                    times.append(elapsed)
                    if status != 200 or "response" not in answer:
                        errors.append(f"{status} {str(answer)[:100]}")
        except Exception as exc:  # a connection refused or reset: an error of the run
            with lock:
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(index,)) for index in range(connections)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    print(
        f"  {connections} connections x {each} reviews: {len(times)} answered, {len(errors)} errors, "
        f"{len(times) / wall:.0f} reviews/s, p50 {statistics.median(times) * 1e3:.1f} ms, "
        f"p99 {percentile(times, 0.99) * 1e3:.1f} ms"
    )
    for error in errors[:5]:
        print(f"    {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--reviews", type=int, default=2000, help="sequential reviews of each kind")
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--each", type=int, default=10, help="reviews per concurrent connection")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nodename-lint-webhook-bench-"))
    certs = make_certs(work)
    objects = cluster(options.nodes, options.pods)
    bodies = {name: json.dumps(review(obj)).encode() for name, obj in cases(options.nodes).items()}
    with ApiServer(**objects) as server:
        del objects
        kubeconfig = write_kubeconfig(
            work / "kubeconfig",
            clusters={"big": cluster_entry(server.url, server.ca_pem)},
            users={"ci": {"token": TOKEN}},
            contexts={"big": ("big", "ci")},
            current="big",
        )
        print(f"cluster: {options.nodes} nodes, {options.pods} Pods; webhook pinned to CPU 0, {work}")
        snapshot = work / "state.snapshot.json"
        subprocess.run(
            [sys.executable, "-m", "nodename_lint", "snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        for name, args in (
            ("watches", ["--kubeconfig", str(kubeconfig)]),
            ("snapshot", ["--cluster-state", str(snapshot)]),
        ):
            port = free_port()
            process = start_webhook(args, certs, port)
            try:
                ready = wait_ready(port, certs)
                print(f"\nwebhook fed by {name}: ready in {ready:.1f} s, {memory(process.pid)}")
                print(f"sequential reviews on one connection ({options.reviews} of each):")
                sequential(port, certs, bodies, options.reviews)
                print("concurrent reviews:")
                concurrent(port, certs, list(bodies.values()), options.concurrency, options.each)
                print(f"memory after the reviews: {memory(process.pid)}")
            finally:
                process.terminate()
                process.wait(timeout=30)
        print(f"\nsnapshot file: {snapshot.stat().st_size / 1e6:.1f} MB")
        methods = {request.method for request in server.requests}
        print(f"API requests: {len(server.requests)}, methods {sorted(methods)}")


if __name__ == "__main__":
    main()
