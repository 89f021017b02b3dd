"""Clusters of 5,000 nodes in several shapes, as `kubectl get nodes,namespaces,pods -A -o json` prints them.

bench/cluster_scale.py writes one shape (3 labels a node, 20 namespaces, Pods spread evenly, lean
objects). The cost of --cluster-state depends on the data as much as on the code paths: how many
labels a node carries, how the Pods are spread over the nodes and namespaces, how much of each
object no rule reads, how many manifests have findings. Each shape here varies those, with a fixed
seed, and writes the dump and 1,000 manifests into OUT/SHAPE/ (dump.json, manifests/):

- `labels`: cloud nodes of 40 labels and 6 annotations each (node-feature-discovery style), 30 Pods
  on every node, 60 namespaces; full kubectl objects (uid, timestamps, owner references, env,
  volumes, statuses); a quarter of the manifests have findings.
- `skewed`: a third of the nodes carry 80 Pods each, the rest 5 (150,000 Pods), 1,500 namespaces,
  a fifth of the Pods terminated (Succeeded Jobs), Pods of 3 containers (an init container, a
  sidecar); two thirds of the manifests have findings (typos, requests that fit nowhere, taints).
- `tainted`: every third node tainted, nodes of 12 labels, 30 Pods on every node with host ports on
  some, 400 namespaces, 5 % of the manifests with findings; most manifests unpinned Deployments
  whose nodeSelector, affinity and tolerations send no-node-fits over all 5,000 nodes.

- `random-N` (any whole N): a shape none of the code was tuned on, each parameter drawn from the ranges
  of `random_shape` with the seed N (the same N gives the same shape on every machine), to check that
  the figures of the three above are not the only ones that hold.

    python bench/cluster_shapes.py OUT [--shapes labels,skewed,tainted,random-1] [--nodes 5000] [--pods 150000]
                                       [--order api|node]

The items come in the order an etcd-backed API server lists them (`--order api`): each kind sorted by
name, a namespace's Pods together. `--order node` writes the Pods node by node into OUT/SHAPE-node/
(see `items`): the loader's indexes cost more in one order or the other (by namespace, by node).

bench/scale.py --sections shapes writes them and measures offline, the dump and its snapshot on each.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d")
INSTANCE_TYPES = ("m6i.2xlarge", "m6i.4xlarge", "c6i.4xlarge", "r6i.2xlarge", "g5.4xlarge")
WORDS = ("api", "web", "worker", "cache", "queue", "search", "auth", "billing", "report", "ingest", "sync", "feed")
CREATED = "2026-11-02T09:14:27Z"


@dataclass(frozen=True)
class Shape:
    """How one cluster is built (see the module docstring)."""

    name: str
    node_labels: int  # labels a node carries, beyond the well-known ones
    namespaces: int
    dense_share: float  # share of the nodes that carry `dense_pods` Pods; the rest share what is left
    dense_pods: int
    terminated_share: float  # Pods in phase Succeeded
    containers: int  # containers per Pod (the first an init container when > 2)
    host_port_share: float  # Pods with a hostPort
    tainted_every: int  # every n-th node tainted (0: none)
    finding_share: float  # manifests written to have a cluster finding
    unpinned_share: float  # manifests that are unpinned Deployments (no-node-fits over every node)


SHAPES = {
    shape.name: shape
    for shape in (
        Shape("labels", 40, 60, 0.0, 0, 0.02, 1, 0.0, 0, 0.25, 0.3),
        Shape("skewed", 6, 1500, 1 / 3, 80, 0.2, 3, 0.01, 10, 0.66, 0.3),
        Shape("tainted", 12, 400, 0.0, 0, 0.05, 2, 0.05, 3, 0.05, 0.7),
    )
}


def random_shape(seed: int) -> Shape:
    """A shape drawn at random with SEED: labels from 3 to 90 a node, 10 to 3,000 namespaces, up to a quarter
    of the nodes dense, up to 40% of the Pods terminated, 1 to 3 containers, up to 30% of the Pods with a host
    port, no node or every 2nd or 5th tainted, 10% to 90% of the manifests with findings and unpinned."""
    rng = random.Random(f"shape-{seed}")
    return Shape(
        f"random-{seed}",
        node_labels=rng.choice((3, 20, 60, 90)),
        namespaces=rng.choice((10, 200, 3000)),
        dense_share=rng.choice((0.0, 0.1, 0.25)),
        dense_pods=rng.choice((50, 100)),
        terminated_share=rng.choice((0.0, 0.1, 0.4)),
        containers=rng.choice((1, 2, 3)),
        host_port_share=rng.choice((0.0, 0.1, 0.3)),
        tainted_every=rng.choice((0, 2, 5)),
        finding_share=rng.choice((0.1, 0.5, 0.9)),
        unpinned_share=rng.choice((0.1, 0.5, 0.9)),
    )


def shape_named(name: str) -> Shape:
    """One of SHAPES, or `random-N` (random_shape(N))."""
    prefix, _, seed = name.partition("-")
    if name not in SHAPES and prefix == "random" and seed.isdigit():
        return random_shape(int(seed))
    return SHAPES[name]


def node_name(index: int) -> str:
    return f"ip-10-{index // 250 % 256}-{index % 250}-{index // 64000}.ec2.internal"


def namespace_name(index: int) -> str:
    return f"{WORDS[index % len(WORDS)]}-{index:04d}"


def node_labels(index: int, shape: Shape) -> dict[str, str]:
    name = node_name(index)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": ZONES[index % len(ZONES)],
        "topology.kubernetes.io/region": "us-east-1",
        "node.kubernetes.io/instance-type": INSTANCE_TYPES[index % len(INSTANCE_TYPES)],
        "pool": f"pool-{index % 7}",
    }
    for n in range(shape.node_labels):
        labels[f"feature.node.kubernetes.io/cpu-cpuid.FEATURE{n:02d}"] = "true" if (index + n) % 5 else "false"
    return labels


def node(index: int, shape: Shape) -> dict[str, Any]:
    name = node_name(index)
    taints = []
    if shape.tainted_every and index % shape.tainted_every == 0:
        taints.append({"key": "dedicated", "value": f"team-{index % 4}", "effect": "NoSchedule"})
    if index % 97 == 0:
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": CREATED})
    annotations = {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": f"i-{index:017x}"}),
    }
    if shape.node_labels >= 20:
        annotations.update({f"nfd.node.kubernetes.io/extended-resources-{n}": "" for n in range(3)})
    conditions = [
        {
            "type": kind,
            "status": "False",
            "lastHeartbeatTime": CREATED,
            "lastTransitionTime": CREATED,
            "reason": f"KubeletHasNo{kind}",
            "message": f"kubelet has no {kind.lower()}",
        }
        for kind in ("MemoryPressure", "DiskPressure", "PIDPressure")
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "False" if index % 211 == 0 else "True",
            "lastHeartbeatTime": CREATED,
            "lastTransitionTime": CREATED,
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }
    )
    spec: dict[str, Any] = {"podCIDR": f"100.64.{index % 256}.0/24", "providerID": f"aws:///us-east-1a/i-{index:017x}"}
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": annotations,
            "creationTimestamp": CREATED,
            "labels": node_labels(index, shape),
            "name": name,
            "resourceVersion": str(1_000_000 + index),
            "uid": f"00000000-0000-4000-8000-{index:012x}",
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": f"10.{index // 250 % 256}.{index % 250}.1", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "95491690346", "memory": "31094068Ki", "pods": "110"},
            "capacity": {"cpu": "8", "ephemeral-storage": "104845292Ki", "memory": "32393008Ki", "pods": "110"},
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [
                {"names": [f"registry.example.com/base/image-{n}@sha256:{n:064x}"], "sizeBytes": 10_000_000 + n}
                for n in range(4)
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.1.112-124.190.amzn2023.x86_64",
                "kubeProxyVersion": "v1.31.2",
                "kubeletVersion": "v1.31.2",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.6.20241031",
            },
        },
    }


def pods_per_node(shape: Shape, nodes: int, pods: int) -> list[int]:
    """How many Pods each node runs: `dense_pods` on the dense share, the rest spread over the others."""
    dense = int(nodes * shape.dense_share)
    counts = [shape.dense_pods] * dense
    rest = pods - shape.dense_pods * dense
    others = nodes - dense
    counts += [rest // others + (1 if i < rest % others else 0) for i in range(others)]
    return counts


def container(name: str, rng: random.Random, host_port: bool, init: bool = False) -> dict[str, Any]:
    ports = [{"containerPort": 8080, "name": "http", "protocol": "TCP"}]
    if host_port:
        ports[0]["hostPort"] = 9100
    result: dict[str, Any] = {
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        ],
        "image": f"registry.example.com/{name}:1.{rng.randrange(30)}.{rng.randrange(10)}",
        "imagePullPolicy": "IfNotPresent",
        "name": name,
        "resources": {
            "limits": {"memory": f"{rng.choice((256, 512, 1024))}Mi"},
            "requests": {"cpu": f"{rng.choice((50, 100, 250))}m", "memory": f"{rng.choice((64, 128, 256))}Mi"},
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access",
                "readOnly": True,
            }
        ],
    }
    if not init:
        result["ports"] = ports
    return result


def pod(index: int, node_index: int, shape: Shape, rng: random.Random) -> dict[str, Any]:
    namespace = namespace_name(rng.randrange(shape.namespaces))
    app = f"{WORDS[index % len(WORDS)]}-{index % 997}"
    terminated = rng.random() < shape.terminated_share
    names = [app, "istio-proxy", "log-shipper"][: shape.containers]
    init = names[2:] if len(names) > 2 else []
    containers = [
        container(name, rng, rng.random() < shape.host_port_share and i == 0) for i, name in enumerate(names[:2])
    ]
    spec: dict[str, Any] = {
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "nodeName": node_name(node_index),
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Never" if terminated else "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": f"node.kubernetes.io/{key}", "operator": "Exists", "tolerationSeconds": 300}
            for key in ("not-ready", "unreachable")
        ],
        "volumes": [
            {
                "name": "kube-api-access",
                "projected": {
                    "defaultMode": 420,
                    "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}],
                },
            }
        ],
    }
    if init:
        spec["initContainers"] = [container(name, rng, False, init=True) for name in init]
    phase = "Succeeded" if terminated else "Running"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": CREATED,
            "generateName": f"{app}-7d9f8c6b5-",
            "labels": {"app.kubernetes.io/name": app, "pod-template-hash": "7d9f8c6b5", "team": namespace},
            "name": f"{app}-7d9f8c6b5-{index:06x}",
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "ReplicaSet",
                    "name": f"{app}-7d9f8c6b5",
                    "uid": f"10000000-0000-4000-8000-{index % 997:012x}",
                }
            ],
            "resourceVersion": str(2_000_000 + index),
            "uid": f"20000000-0000-4000-8000-{index:012x}",
        },
        "spec": spec,
        "status": {
            "conditions": [
                {"lastTransitionTime": CREATED, "status": "True", "type": kind}
                for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{index:064x}",
                    "image": item["image"],
                    "imageID": f"{item['image']}@sha256:{index:064x}",
                    "name": item["name"],
                    "ready": not terminated,
                    "restartCount": 0,
                    "started": not terminated,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}
                    if terminated
                    else {"running": {"startedAt": CREATED}},
                }
                for item in containers
            ],
            "hostIP": f"10.{node_index // 250 % 256}.{node_index % 250}.1",
            "phase": phase,
            "podIP": f"100.64.{node_index % 256}.{index % 250 + 2}",
            "qosClass": "Burstable",
            "startTime": CREATED,
        },
    }


ORDERS = ("api", "node")


def items(shape: Shape, nodes: int, pods: int, order: str = "api") -> Iterator[str]:
    """The List's items as JSON text: the Nodes, the Namespaces, then the Pods, each kind in `order`.

    `api`: as an etcd-backed API server lists them and kubectl prints them, each kind sorted by its storage
    key (a Node's name; a Pod's namespace, then name), so a namespace's Pods come together and a node's are
    spread over the whole list. `node`: the Nodes and Namespaces by index and the Pods node by node, as
    this generator first wrote them (and as a server whose storage keeps no order may list them: kine,
    k3s's SQL store). Either order holds the same objects: the Pods are drawn node by node in both.
    """
    rng = random.Random(f"{shape.name}-2026")
    node_items = [node(index, shape) for index in range(nodes)]
    namespaces = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace_name(index), "uid": f"30000000-0000-4000-8000-{index:012x}"},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }
        for index in range(shape.namespaces)
    ]
    if order == "api":
        node_items.sort(key=lambda item: item["metadata"]["name"])
        namespaces.sort(key=lambda item: item["metadata"]["name"])
    for item in (*node_items, *namespaces):
        yield _compact(item)
    drawn: list[tuple[str, str, str]] = []
    index = 0
    for node_index, count in enumerate(pods_per_node(shape, nodes, pods)):
        for _ in range(count):
            item = pod(index, node_index, shape, rng)
            text = _compact(item)
            if order != "api":
                yield text
            else:  # kept as text (a third of the memory of the objects) until every Pod is drawn
                drawn.append((item["metadata"]["namespace"], item["metadata"]["name"], text))
            index += 1
    drawn.sort()
    for _, _, text in drawn:
        yield text


def _compact(item: dict[str, Any]) -> str:
    return json.dumps(item, separators=(",", ":"))


def write_dump(path: Path, shape: Shape, nodes: int, pods: int, order: str = "api") -> None:
    """The List as kubectl prints it (compact here: kubectl indents, which only adds blanks to skip)."""
    with path.open("w", encoding="utf-8") as out:
        out.write('{"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [')
        for n, text in enumerate(items(shape, nodes, pods, order)):
            out.write(("," if n else "") + text)
        out.write("]}")


def manifest(index: int, shape: Shape, nodes: int, rng: random.Random) -> str:
    """A manifest; with the shape's share, one written to have a cluster finding."""
    target = node_name(rng.randrange(nodes))
    namespace = namespace_name(rng.randrange(shape.namespaces))
    cpu = "250m"
    extra = ""
    if (index * 37) % 100 < shape.finding_share * 100:  # an exact share, spread over the files
        problem = index % 4
        if problem == 0:  # a typo: unknown-node with "did you mean"
            target = target.replace("ec2", "ec3")
        elif problem == 1:  # a request that fits no node: insufficient-resources, no-node-fits
            cpu = "12"
        elif problem == 2:  # a namespace that does not exist
            namespace = f"missing-{index}"
        else:  # a taint not tolerated (every tainted_every-th node) or a label no node has
            target = node_name((index * 7) % nodes // max(shape.tainted_every, 1) * max(shape.tainted_every, 1))
            extra = "pool: pool-99"
    if (index * 53 + 11) % 100 < shape.unpinned_share * 100:
        selector = extra or f"topology.kubernetes.io/zone: {ZONES[index % len(ZONES)]}"
        toleration = (
            "      tolerations:\n        - {key: dedicated, operator: Equal, value: team-1, effect: NoSchedule}\n"
            if index % 2
            else ""
        )
        affinity = (
            "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
            "            nodeSelectorTerms:\n              - matchExpressions:\n"
            "                  - {key: node.kubernetes.io/instance-type, operator: In,\n"
            "                     values: [m6i.4xlarge, c6i.4xlarge]}\n"
            if index % 3 == 0
            else ""
        )
        return (
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-{index}\n  namespace: {namespace}\n"
            f"spec:\n  replicas: 3\n  selector:\n    matchLabels: {{app: svc-{index}}}\n"
            f"  template:\n    metadata:\n      labels: {{app: svc-{index}}}\n    spec:\n"
            f"      nodeSelector: {{{selector}}}\n{toleration}{affinity}"
            f"      containers:\n        - name: app\n          image: registry.example.com/svc:1.0\n"
            f'          resources:\n            requests: {{cpu: "{cpu}", memory: 256Mi}}\n'
        )
    port = "\n      ports: [{containerPort: 9100, hostPort: 9100}]" if index % 5 == 0 else ""
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: debug-{index}\n  namespace: {namespace}\n"
        f"spec:\n  nodeName: {target}\n  containers:\n    - name: shell\n      image: busybox:1.36\n"
        f'      resources:\n        requests: {{cpu: "{cpu}", memory: 128Mi}}{port}\n'
    )


def write_shape(
    out: Path, shape: Shape, nodes: int = 5000, pods: int = 150_000, manifests: int = 1000, order: str = "api"
) -> Path:
    """OUT/SHAPE/dump.json and OUT/SHAPE/manifests/ (replaced when present); OUT/SHAPE-node/ for the `node`
    order, whose findings are those of the same shape in the API server's order."""
    folder = out / (shape.name if order == "api" else f"{shape.name}-{order}")
    (folder / "manifests").mkdir(parents=True, exist_ok=True)
    for old in (folder / "manifests").iterdir():
        old.unlink()
    write_dump(folder / "dump.json", shape, nodes, pods, order)
    rng = random.Random(f"{shape.name}-manifests")
    for index in range(manifests):
        (folder / "manifests" / f"m{index:04d}.yaml").write_text(manifest(index, shape, nodes, rng), encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help=f"comma-separated, of: {', '.join(SHAPES)}, random-N"
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--manifests", type=int, default=1000)
    parser.add_argument(
        "--order",
        choices=ORDERS,
        default="api",
        help="the Pods sorted by namespace and name as the API server lists them (default), or node by node",
    )
    options = parser.parse_args()
    for name in options.shapes.split(","):
        shape = shape_named(name)
        folder = write_shape(options.out, shape, options.nodes, options.pods, options.manifests, options.order)
        print(shape)
        print(f"{name}: {(folder / 'dump.json').stat().st_size / 1e6:.0f} MB dump, {folder}")


if __name__ == "__main__":
    main()
