"""Scale check for the rollout prediction: 1,000 Deployments re-linted against the cluster they run in.

Writes a kubectl JSON dump of 5,000 nodes and 150,000 Pods (the shapes of cluster_scale.py), each
Pod owned by one of 3,000 ReplicaSets (50 Pods each, as a real dump holds them: ownerReferences and
a pod-template-hash label), with the ReplicaSets (their templates as the API server stores them)
or without them, and 1,000 manifests of those Deployments, unchanged; then times, each in a fresh
process: loading each dump, linting offline, and linting against each dump.

    python bench/rollout_scale.py OUT_DIR [--nodes 5000] [--pods 150000] [--manifests 1000]
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from cluster_scale import cluster_options, node, pod, timed

APPS = 3000  # ReplicaSets, one Deployment each
HASH = "5d8f7c9b6d"


def owned_pod(index: int, nodes: int, rng: random.Random) -> dict:
    item = pod(index, nodes, rng)
    app = f"app-{index % APPS}"
    item["metadata"].update(
        name=f"{app}-{HASH}-{index:05x}",
        namespace=f"team-{index % APPS % 20}",
        labels={"app": app, "pod-template-hash": HASH},
        ownerReferences=[
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"{app}-{HASH}",
                "uid": f"c0ffee00-0000-4000-8000-{index % APPS:012d}",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    )
    return item


def replicaset(app: int, replicas: int) -> dict:
    labels = {"app": f"app-{app}", "pod-template-hash": HASH}
    container = {
        "name": "app",
        "image": "nginx",
        "imagePullPolicy": "Always",
        "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"app-{app}-{HASH}",
            "namespace": f"team-{app % 20}",
            "ownerReferences": [{"kind": "Deployment", "name": f"app-{app}", "controller": True}],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"creationTimestamp": None, "labels": labels},
                "spec": {
                    "containers": [container],
                    "dnsPolicy": "ClusterFirst",
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "securityContext": {},
                    "terminationGracePeriodSeconds": 30,
                },
            },
        },
    }


def deployment(app: int, replicas: int) -> str:
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{app}\n  namespace: team-{app % 20}\n"
        f"spec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: app-{app}}}\n"
        f"  template:\n    metadata:\n      labels: {{app: app-{app}}}\n    spec:\n      containers:\n"
        f'        - name: app\n          image: nginx\n          resources:\n            requests: {{cpu: "250m", '
        "memory: 128Mi}\n"
    )


def main() -> None:
    options = cluster_options()
    rng = random.Random(2026)
    out: Path = options.out
    replicas = options.pods // APPS
    items = (
        [node(i) for i in range(options.nodes)]
        + [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i}"}} for i in range(20)]
        + [owned_pod(i, options.nodes, rng) for i in range(options.pods)]
    )
    (out / "pods.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    items += [replicaset(app, replicas) for app in range(APPS)]
    (out / "pods-rs.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), "utf-8")
    for app in range(options.manifests):
        (out / "manifests" / f"d{app:04d}.yaml").write_text(deployment(app, replicas), encoding="utf-8")
    load = "import sys; from nodename_lint.cluster.from_file import load_state_file as l; l(sys.argv[1])"
    lint = ["-m", "nodename_lint", str(out / "manifests"), "--format", "json"]
    for name, args in (
        ("load pods.json", ["-c", load, str(out / "pods.json")]),
        ("load pods-rs.json", ["-c", load, str(out / "pods-rs.json")]),
        ("lint offline", lint),
        ("lint --cluster-state pods.json", [*lint, "--cluster-state", str(out / "pods.json")]),
        ("lint --cluster-state pods-rs.json", [*lint, "--cluster-state", str(out / "pods-rs.json")]),
    ):
        print(f"{name:34} {min(timed(args) for _ in range(2)):6.2f} s")


if __name__ == "__main__":
    main()
