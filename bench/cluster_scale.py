"""Scale check for --cluster-state: 5,000 nodes and 150,000 Pods against 1,000 manifests.

Writes a saved cluster state (JSON and YAML, the shapes `kubectl get -o` prints, trimmed as
`nodename-lint snapshot` trims them) and 1,000 manifests (pinned Pods, pinned Deployments and
unpinned Deployments, so every cluster rule has work), then times, each in a fresh process:
loading the state alone, linting offline, and linting with the state.

    python bench/cluster_scale.py OUT_DIR [--nodes 5000] [--pods 150000] [--manifests 1000]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import yaml


def node(index: int) -> dict:
    name = f"node-{index:05d}"
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if index % 10 == 0 else []
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "zone": f"z{index % 3}",
                "disktype": "ssd" if index % 2 else "hdd",
            },
        },
        "spec": {"taints": taints} if taints else {},
        "status": {
            "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(index: int, nodes: int, rng: random.Random) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"app-{index}", "namespace": f"team-{index % 20}"},
        "spec": {
            "nodeName": f"node-{rng.randrange(nodes):05d}",
            "containers": [
                {
                    "name": "app",
                    "image": "nginx",
                    "resources": {
                        "requests": {"cpu": f"{rng.choice([50, 100, 250])}m", "memory": f"{rng.choice([64, 128])}Mi"}
                    },
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def manifest(index: int, nodes: int, rng: random.Random) -> str:
    target = f"node-{rng.randrange(nodes):05d}" if index % 50 else "node-typo"
    cpu = rng.choice(["100m", "500m", "2", "40"])
    if index % 3 == 0:
        return (
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: debug-{index}\nspec:\n  nodeName: {target}\n"
            f"  containers:\n    - name: c\n      image: busybox\n"
            f'      resources:\n        requests: {{cpu: "{cpu}"}}\n'
        )
    pinned = f"      nodeName: {target}\n" if index % 3 == 1 else "      nodeSelector: {disktype: ssd}\n"
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-{index}\nspec:\n  replicas: 3\n"
        f"  selector:\n    matchLabels: {{app: web-{index}}}\n"
        f"  template:\n    metadata:\n      labels: {{app: web-{index}}}\n"
        f"    spec:\n{pinned}      containers:\n        - name: c\n          image: nginx\n"
        f'          resources:\n            requests: {{cpu: "{cpu}", memory: 256Mi}}\n'
    )


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], capture_output=True, check=False)
    return time.perf_counter() - start


def cluster_options() -> argparse.Namespace:
    """OUT, --nodes, --pods and --manifests of a script that writes a cluster's dump and manifests into
    OUT (this one and bench/rollout_scale.py); OUT/manifests/ is made."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--manifests", type=int, default=1000)
    options = parser.parse_args()
    (options.out / "manifests").mkdir(parents=True, exist_ok=True)
    return options


def main() -> None:
    options = cluster_options()
    rng = random.Random(2026)
    out: Path = options.out
    state = {
        "apiVersion": "v1",
        "kind": "List",
        "items": (
            [node(i) for i in range(options.nodes)]
            + [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i}"}} for i in range(20)]
            + [pod(i, options.nodes, rng) for i in range(options.pods)]
        ),
    }
    (out / "state.json").write_text(json.dumps(state), encoding="utf-8")
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    (out / "state.yaml").write_text(yaml.dump(state, Dumper=dumper, sort_keys=False), encoding="utf-8")
    for i in range(options.manifests):
        (out / "manifests" / f"m{i:04d}.yaml").write_text(manifest(i, options.nodes, rng), encoding="utf-8")
    load = "import sys; from nodename_lint.cluster.from_file import load_state_file as l; l(sys.argv[1])"
    lint = ["-m", "nodename_lint", str(out / "manifests"), "--format", "json"]
    snapshot = out / "state.snapshot.json"
    convert = ["-m", "nodename_lint", "snapshot", "--cluster-state", str(out / "state.json"), "-o", str(snapshot)]
    print(f"{'snapshot --cluster-state state.json':34} {timed(convert):6.2f} s")
    for name, args in (
        ("load state.json", ["-c", load, str(out / "state.json")]),
        ("load state.yaml", ["-c", load, str(out / "state.yaml")]),
        ("load state.snapshot.json", ["-c", load, str(snapshot)]),
        ("lint offline", lint),
        ("lint --cluster-state state.json", [*lint, "--cluster-state", str(out / "state.json")]),
        ("lint --cluster-state state.yaml", [*lint, "--cluster-state", str(out / "state.yaml")]),
        ("lint --cluster-state snapshot", [*lint, "--cluster-state", str(snapshot)]),
    ):
        print(f"{name:34} {min(timed(args) for _ in range(2)):6.2f} s")


if __name__ == "__main__":
    main()
