"""Scale of `nodename-lint audit`: API requests, wall time and peak memory on a big live cluster.

Serves a generated kind-shaped cluster (5,000 nodes, 150,000 Pods by default: 97% owned by
ReplicaSets of Deployments, 2% by DaemonSets, 1% bare, of which a tenth pinned by hand) from the
loopback HTTPS API server of the tests and runs, each as a fresh process (best of --repeat):

1. the reference: `nodename-lint snapshot --workloads -o state.json`, which sends the same
   paginated LISTs and trims the same objects but runs no rule;
2. `nodename-lint audit --kubeconfig ...` (live);
3. `nodename-lint audit --cluster-state state.json` (the snapshot of step 1).

It prints the requests each live run sent (from the server's log), the wall time with its ratio to
the reference, and the peak resident memory of the process.

    python bench/audit_scale.py [--nodes 5000] [--pods 150000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from live_scale import TEAMS, cluster  # noqa: E402  (bench/ is not a package)

from tests.apiserver import TOKEN, ApiServer, cluster_entry, write_kubeconfig  # noqa: E402


def with_owners(objects: dict[str, list[dict[str, Any]]], seed: int = 2026) -> dict[str, list[dict[str, Any]]]:
    """Give the Pods owners: Deployments with a ReplicaSet each (30 Pods apiece), DaemonSets, a few bare Pods."""
    rng = random.Random(seed)
    deployments: list[dict[str, Any]] = []
    replicasets: list[dict[str, Any]] = []
    daemonsets: list[dict[str, Any]] = []
    for index, pod in enumerate(objects["pods"]):
        metadata, namespace = pod["metadata"], pod["metadata"]["namespace"]
        if index % 100 == 0:  # bare; one in ten created with nodeName by kubectl
            owns = {"f:containers": {}, **({"f:nodeName": {}} if index % 1000 == 0 else {})}
            metadata["managedFields"] = [
                {
                    "manager": "kubectl-create",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": owns},
                }
            ]
            continue
        if index % 50 == 1:
            owner = ("DaemonSet", f"agent-{index % 3}")
        else:
            owner = ("ReplicaSet", f"app-{index // (30 * TEAMS)}-5d8f7c9b6d")  # 30 Pods per team and ReplicaSet
        metadata["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True, "uid": f"{owner[1]}-uid"}
        ]
    template = {
        "metadata": {"labels": {"app": "x"}},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ]
        },
    }
    seen: set[tuple[str, str]] = set()
    for pod in objects["pods"]:
        for reference in pod["metadata"].get("ownerReferences", []):
            key = (pod["metadata"]["namespace"], reference["name"])
            if key in seen:
                continue
            seen.add(key)
            namespace, name = key
            if reference["kind"] == "DaemonSet":
                daemonsets.append(
                    {
                        "metadata": {"name": name, "namespace": namespace},
                        "spec": {"selector": {"matchLabels": {"app": name}}, "template": template},
                    }
                )
                continue
            deployment = name.rsplit("-", 1)[0]
            pinned = rng.random() < 0.01  # one Deployment in a hundred pins its template
            spec = {**template, "spec": {**template["spec"], **({"nodeName": "node-00001"} if pinned else {})}}
            deployments.append(
                {
                    "metadata": {"name": deployment, "namespace": namespace},
                    "spec": {"replicas": 30, "selector": {"matchLabels": {"app": deployment}}, "template": spec},
                }
            )
            replicasets.append(
                {
                    "metadata": {
                        "name": name,
                        "namespace": namespace,
                        "ownerReferences": [
                            {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment, "controller": True}
                        ],
                    },
                    "spec": {"replicas": 30, "selector": {"matchLabels": {"app": deployment}}, "template": spec},
                }
            )
    objects["workloads"] = {
        "deployments": deployments,
        "replicasets": replicasets,  # type: ignore[assignment]
        "daemonsets": daemonsets,
    }
    return objects


# Runs the CLI and writes its own peak resident memory (KiB) to stderr's last line, whatever the exit code.
# VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across exec, so a child started by this
# process (which holds the whole test cluster) would report this process's size.
MEASURED = """
import sys
from nodename_lint.cli import main
try:
    main(sys.argv[1:], prog_name="nodename-lint")
finally:
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print(f"peak-rss-kib {peak}", file=sys.stderr)
"""


def run(args: list[str], repeat: int) -> tuple[float, int, subprocess.CompletedProcess[str]]:
    """Best wall time over REPEAT fresh processes, and the highest peak RSS (KiB) among them."""
    best, peak = float("inf"), 0
    completed = None
    for _ in range(repeat):
        start = time.perf_counter()
        completed = subprocess.run(
            [sys.executable, "-c", MEASURED, *args], capture_output=True, text=True, cwd=ROOT, check=False
        )
        best = min(best, time.perf_counter() - start)
        if completed.returncode not in (0, 1):
            raise SystemExit(f"{args[0]} failed: {completed.stderr}")
        peak = max(peak, int(completed.stderr.rsplit("peak-rss-kib ", 1)[1].split()[0]))
    assert completed is not None
    return best, peak, completed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    objects = with_owners(cluster(options.nodes, options.pods))
    workloads = objects.pop("workloads")
    with tempfile.TemporaryDirectory() as folder, ApiServer(**objects, workloads=workloads) as server:  # type: ignore[arg-type]
        kubeconfig = write_kubeconfig(
            Path(folder) / "kubeconfig",
            clusters={"big": cluster_entry(server.url, server.ca_pem)},
            users={"big": {"token": TOKEN}},
            contexts={"big": ("big", "big")},
            current="big",
        )
        state = Path(folder) / "state.json"
        deployments, daemonsets = len(workloads["deployments"]), len(workloads["daemonsets"])
        print(
            f"{options.nodes:,} nodes, {options.pods:,} Pods, {deployments:,} Deployments, "
            f"{daemonsets} DaemonSets; best of {options.repeat}"
        )
        rows = []
        runs = (
            (
                "snapshot --workloads (reference)",
                ["snapshot", "--workloads", "--kubeconfig", str(kubeconfig), "-o", str(state)],
            ),
            ("audit live", ["audit", "--kubeconfig", str(kubeconfig), "--format", "json"]),
            ("audit --cluster-state state.json", ["audit", "--cluster-state", str(state), "--format", "json"]),
        )
        for name, args in runs:
            before = len(server.requests)
            seconds, peak, completed = run(args, options.repeat)
            requests = (len(server.requests) - before) // options.repeat
            rows.append((name, requests, seconds, peak))
            if name.startswith("audit live"):
                print(
                    completed.stdout.count('"rule"'),
                    "findings;",
                    completed.stdout.count("nodename-in-template"),
                    "on pinned templates",
                )
        reference = rows[0][2]
        print("| run | requests | wall time | vs reference | peak RSS |")
        print("| --- | --- | --- | --- | --- |")
        for name, requests, seconds, peak in rows:
            shown = str(requests) if requests else "0 (file)"
            print(f"| {name} | {shown} | {seconds:.2f} s | {seconds / reference:.2f}x | {peak / 1024:.0f} MiB |")


if __name__ == "__main__":
    main()
