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
   that state (`nodename-lint snapshot`, then `--cluster-state`), after the same reviews, each also
   over the same webhook fed an empty cluster (what the state itself takes);
5. the CPU time of one review (thread time, so other processes on a shared machine do not count),
   the Reviewer run in this process on the same states: what one core spends on a review.

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
from tests.webhook import Client, command, deployment, make_certs, pod, review  # noqa: E402


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
        command(certs, port, *args),
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


def memory(pid: int, baseline: float = 0.0) -> str:
    """RSS and its peak in MB, and what the state adds to the same webhook holding nothing (`baseline`)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    rss, peak = (int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM"))
    return f"RSS {rss:.0f} MB (peak {peak:.0f} MB), {rss - baseline:.0f} MB over the same webhook with no cluster"


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


def cpu_per_review(reviewer: Any, bodies: dict[str, bytes], reviews: int) -> None:
    """The CPU time of each review in this thread (time.thread_time: other processes on the machine do not
    count), as one core spends it: the review alone, without TLS and HTTP."""
    for name, body in bodies.items():
        for _ in range(20):
            reviewer.review(body)
        times = []
        for _ in range(reviews):
            start = time.thread_time()
            reviewer.review(body)
            times.append(time.thread_time() - start)
        print(
            f"  {name:45} p50 {statistics.median(times) * 1e3:5.2f} ms  p99 {percentile(times, 0.99) * 1e3:5.2f} ms"
            f"  max {max(times) * 1e3:6.2f} ms"
        )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def served(name: str, args: list[str], certs: Any, bodies: dict[str, bytes], options: Any, baseline: float) -> None:
    port = free_port()
    process = start_webhook(args, certs, port)
    try:
        ready = wait_ready(port, certs)
        print(f"\nwebhook fed by {name}: ready in {ready:.1f} s, {memory(process.pid, baseline)}")
        if options.memory_only:
            return
        print(f"sequential reviews on one connection ({options.reviews} of each), as the client sees them:")
        before = cpu_seconds(process.pid)
        sequential(port, certs, bodies, options.reviews)
        per_request = (cpu_seconds(process.pid) - before) / (len(bodies) * (options.reviews + 20))
        print(f"  the webhook's CPU per request, TLS and HTTP included: {per_request * 1e3:.2f} ms")
        print(f"concurrent reviews (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
        concurrent(port, certs, list(bodies.values()), options.concurrency, options.each)
        print(f"memory after the reviews: {memory(process.pid, baseline)}")
    finally:
        process.terminate()
        process.wait(timeout=30)


def idle_memory(args: list[str], certs: Any) -> float:
    """RSS in MB of a webhook with nothing to hold (what its imports take), to tell the state's own share."""
    port = free_port()
    process = start_webhook(args, certs, port)
    try:
        wait_ready(port, certs)
        return (
            int(
                dict(
                    line.split(":", 1)
                    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines()
                    if ":" in line
                )["VmRSS"].split()[0]
            )
            / 1024
        )
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--reviews", type=int, default=2000, help="sequential reviews of each kind")
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--each", type=int, default=10, help="reviews per concurrent connection")
    parser.add_argument("--memory-only", action="store_true", help="readiness and memory, no latency runs")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nodename-lint-webhook-bench-"))
    certs = make_certs(work)
    bodies = {name: json.dumps(review(obj)).encode() for name, obj in cases(options.nodes).items()}
    baselines = {}
    with ApiServer() as empty:  # the webhook with nothing to hold, fed each way
        kubeconfig = _kubeconfig(work / "empty-kubeconfig", empty)
        snapshot = _snapshot(kubeconfig, work / "empty.snapshot.json")
        baselines["watches"] = idle_memory(["--kubeconfig", str(kubeconfig)], certs)
        baselines["snapshot"] = idle_memory(["--cluster-state", str(snapshot)], certs)
    objects = cluster(options.nodes, options.pods)
    with ApiServer(**objects) as server:
        del objects
        kubeconfig = _kubeconfig(work / "kubeconfig", server)
        print(f"cluster: {options.nodes} nodes, {options.pods} Pods; the webhook pinned to CPU 0; {work}")
        snapshot = _snapshot(kubeconfig, work / "state.snapshot.json")
        print(f"the snapshot of that state: {snapshot.stat().st_size / 1e6:.1f} MB")
        feeds = {"watches": ["--kubeconfig", str(kubeconfig)], "snapshot": ["--cluster-state", str(snapshot)]}
        for name, args in feeds.items():
            served(name, args, certs, bodies, options, baselines[name])
        if options.memory_only:
            return
        print("\nCPU time of one review (the Reviewer in this process, same state, no TLS or HTTP):")
        from nodename_lint.cluster.connection import LiveOptions
        from nodename_lint.cluster.from_file import load_state_file
        from nodename_lint.cluster.watch import WatchedCluster
        from nodename_lint.config import Config, resolve_severities
        from nodename_lint.registry import all_rules
        from nodename_lint.webhook.review import FixedCluster, Policy, Reviewer

        severities = resolve_severities(all_rules(), Config(), [], [])
        watched = WatchedCluster(LiveOptions(kubeconfig=str(kubeconfig)))
        watched.start()
        while not watched.ready():
            time.sleep(0.2)
        for name, source in (("watches", watched), ("snapshot", FixedCluster(load_state_file(str(snapshot))))):
            print(f" fed by {name}:")
            cpu_per_review(Reviewer(source, severities, Policy()), bodies, options.reviews)
        watched.close()
        methods = {request.method for request in server.requests}
        print(f"\nAPI requests: {len(server.requests)}, methods {sorted(methods)}")


def _kubeconfig(path: Path, server: ApiServer) -> Path:
    return write_kubeconfig(
        path,
        clusters={"big": cluster_entry(server.url, server.ca_pem)},
        users={"ci": {"token": TOKEN}},
        contexts={"big": ("big", "ci")},
        current="big",
    )


def _snapshot(kubeconfig: Path, output: Path) -> Path:
    command = [sys.executable, "-m", "nodename_lint", "snapshot", "--kubeconfig", str(kubeconfig), "-o", str(output)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return output


if __name__ == "__main__":
    main()
