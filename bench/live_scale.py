"""Scale of the live mode: API requests and time against a 5,000-node, 150,000-Pod cluster.

Serves a generated kind-shaped cluster from the loopback HTTPS API server of the tests
(tests/apiserver) and reports, all in one run:

1. the API requests one live lint makes when 1,000 manifests reference 1, 10 and 100 distinct
   nodes, on this cluster and on one ten times smaller (the count must follow the manifests, not
   the cluster);
2. the wall time of `nodename-lint` on the 1,000 manifests offline, against the cluster saved by
   `snapshot`, and live, each a fresh process (best of --repeat).

    python bench/live_scale.py [--nodes 5000] [--pods 150000] [--manifests 1000] [--repeat 3] [--timing-only]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.apiserver import TOKEN, ApiServer, cluster_entry, kind_namespace, kind_node, kind_pod, write_kubeconfig  # noqa: E402

TEAMS = 20
REFERENCED = (1, 10, 100)


def cluster(nodes: int, pods: int, seed: int = 2026) -> dict[str, list[dict]]:
    """kind-shaped nodes (every 10th tainted, half labelled ssd) and Pods spread at random, 3% finished."""
    rng = random.Random(seed)
    node_objects = [
        kind_node(
            f"node-{i:05d}",
            index=i,
            cpu="16",
            memory="64Gi",
            labels={"disktype": "ssd" if i % 2 else "hdd", "topology.kubernetes.io/zone": f"z{i % 3}"},
            taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if i % 10 == 0 else None,
        )
        for i in range(nodes)
    ]
    namespaces = [kind_namespace(name) for name in ("default", "kube-system", *(f"team-{i}" for i in range(TEAMS)))]
    pod_objects = [
        kind_pod(
            f"app-{i}-{rng.randrange(1 << 30):08x}",
            f"team-{i % TEAMS}",
            f"node-{rng.randrange(nodes):05d}",
            cpu=rng.choice(["50m", "100m", "250m"]),
            memory=rng.choice(["64Mi", "128Mi"]),
            phase="Succeeded" if i % 33 == 0 else "Running",
        )
        for i in range(pods)
    ]
    return {"nodes": node_objects, "namespaces": namespaces, "pods": pod_objects}


def write_manifests(folder: Path, count: int, referenced: int, nodes: int, bare_pods: int) -> None:
    """COUNT manifests pinning REFERENCED distinct nodes; the first BARE_PODS are Pods, the rest workloads.

    A third of the workloads are unpinned (nodeSelector), so no-node-fits has work; one manifest in
    fifty names a node that does not exist.
    """
    folder.mkdir(parents=True)
    step = max(1, nodes // referenced)
    for i in range(count):
        target = f"node-{(i % referenced) * step:05d}"
        cpu = ("100m", "500m", "2", "40")[i % 4]
        if i < bare_pods:
            text = (
                f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: debug-{i}\n  namespace: team-{i % TEAMS}\n"
                f"spec:\n  nodeName: {target}\n  containers:\n    - name: c\n      image: busybox\n"
                f'      resources:\n        requests: {{cpu: "{cpu}"}}\n'
            )
        else:
            placement = f"      nodeName: {target}\n" if i % 3 else "      nodeSelector: {disktype: ssd}\n"
            text = (
                f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-{i}\n  namespace: team-{i % TEAMS}\n"
                f"spec:\n  replicas: 3\n  selector:\n    matchLabels: {{app: web-{i}}}\n  template:\n"
                f"    metadata:\n      labels: {{app: web-{i}}}\n    spec:\n{placement}      containers:\n"
                f"        - name: c\n          image: nginx\n          resources:\n"
                f'            requests: {{cpu: "{cpu}", memory: 256Mi}}\n'
            )
        (folder / f"m{i:04d}.yaml").write_text(text, encoding="utf-8")


def cli(*args: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nodename_lint", *args], capture_output=True, cwd=ROOT)
    return time.perf_counter() - start, done


def best(repeat: int, *args: str) -> float:
    times = []
    for _ in range(repeat):
        seconds, done = cli(*args)
        if done.returncode not in (0, 1):
            raise SystemExit(f"nodename-lint {' '.join(args)} failed: {done.stderr.decode()[-500:]}")
        times.append(seconds)
    return min(times)


def request_counts(
    server: ApiServer, kubeconfig: Path, work: Path, nodes: int, manifests: int, bare_pods: int
) -> list[tuple[int, int, Counter]]:
    rows = []
    for referenced in REFERENCED:
        folder = work / f"refs-{nodes}-{referenced}-{bare_pods}"
        write_manifests(folder, manifests, referenced, nodes, bare_pods)
        server.requests.clear()
        cli(str(folder), "--kubeconfig", str(kubeconfig), "-o", str(work / "out.txt"))
        kinds = Counter(_kind(request.path, request.query) for request in server.requests)
        assert {request.method for request in server.requests} == {"GET"}
        rows.append((referenced, len(server.requests), kinds))
    return rows


def _kind(path: str, query: dict[str, str]) -> str:
    if path == "/api/v1/nodes":
        return "node pages"
    if path == "/api/v1/namespaces":
        return "namespaces"
    if "spec.nodeName=" in query.get("fieldSelector", ""):
        return "Pods per node"
    return "Pods by name"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--manifests", type=int, default=1000)
    parser.add_argument("--bare-pods", type=int, default=100, help="manifests that are Pods (each one name lookup)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timing-only", action="store_true", help="skip the request counts")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nodename-lint-live-scale-"))
    print(f"work folder: {work}")

    for scale in (1,) if options.timing_only else (10, 1):
        nodes, pods = options.nodes // scale, options.pods // scale
        start = time.perf_counter()
        objects = cluster(nodes, pods)
        with ApiServer(**objects) as server:
            print(
                f"\ncluster: {nodes} nodes, {pods} Pods (generated and indexed in {time.perf_counter() - start:.1f} s)"
            )
            kubeconfig = write_kubeconfig(
                work / f"kubeconfig-{nodes}",
                clusters={"big": cluster_entry(server.url, server.ca_pem)},
                users={"ci": {"token": TOKEN}},
                contexts={"big": ("big", "ci")},
                current="big",
            )
            for bare in () if options.timing_only else (0, options.bare_pods):
                print(f"API requests of one live lint of {options.manifests} manifests ({bare} of them Pods):")
                for referenced, total, kinds in request_counts(
                    server, kubeconfig, work, nodes, options.manifests, bare
                ):
                    detail = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
                    print(f"  {referenced:>4} referenced nodes: {total:>4} requests ({detail})")
            if scale != 1:
                continue
            folder = work / "timing"
            write_manifests(folder, options.manifests, 100, nodes, options.bare_pods)
            snapshot = work / "state.snapshot.json"
            seconds, _ = cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot))
            print(
                f"snapshot -o {snapshot.name}: {seconds:.1f} s, {snapshot.stat().st_size / 1e6:.1f} MB, "
                f"{len(server.requests)} requests so far"
            )
            report = ["-o", str(work / "out.txt")]
            offline = best(options.repeat, str(folder), *report)
            timings = {"offline": offline}
            timings[f"--cluster-state {snapshot.name}"] = best(
                options.repeat, str(folder), "--cluster-state", str(snapshot), *report
            )
            timings["live (--kubeconfig)"] = best(options.repeat, str(folder), "--kubeconfig", str(kubeconfig), *report)
            load = (
                "import sys; from nodename_lint.cluster.from_file import load_state_file; load_state_file(sys.argv[1])"
            )
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", load, str(snapshot)], check=True, cwd=ROOT)
            timings[f"(loading {snapshot.name} alone)"] = time.perf_counter() - start
            print(f"\nlint {options.manifests} manifests (best of {options.repeat}, fresh process each):")
            for name, seconds in timings.items():
                print(f"  {name:32} {seconds:6.2f} s   {seconds / offline:4.2f}x offline")


if __name__ == "__main__":
    main()
