"""Generate the benchmark's synthetic monorepo: 10,000 documents with a fixed seed.

The mix is what a platform team's repository holds: per-service folders with a Deployment
(resources, probes, a logging sidecar, affinity), a Service and a ConfigMap, some of them as one
multi-document file; a share of diagnostic Pods pinned with spec.nodeName; and each control-plane
node's static Pod folder (`etc/kubernetes/manifests/`, one Pod per file). It also writes cluster
state files (`kubectl get nodes,namespaces,pods -A -o yaml` format) of two sizes, whose node
names match the ones the manifests pin, so that cluster rules have real work to do.

    python bench/generate.py OUT_DIR [--documents 10000] [--seed 2026]
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

DEFAULT_DOCUMENTS = 10_000
DEFAULT_SEED = 2026
TEAMS = ("payments", "search", "identity", "checkout", "platform", "data", "ml", "edge", "mobile-api", "billing")
WORDS = (
    "api",
    "worker",
    "gateway",
    "cache",
    "indexer",
    "sync",
    "notifier",
    "scheduler",
    "ingest",
    "render",
    "auth",
    "ledger",
    "report",
    "export",
    "proxy",
    "feed",
    "router",
    "audit",
    "quota",
    "store",
)
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
CONTROL_PLANE_NODES = 3
STATIC_PODS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
# Cluster sizes for the state files: (file name, worker nodes, Pods per node).
CLUSTER_SIZES = (("cluster-small.yaml", 12, 10), ("cluster-large.yaml", 600, 15))
PINNED_NODES = 12  # diagnostic Pods pin one of the first nodes, present in both state files


def worker_name(index: int) -> str:
    return f"ip-10-0-{index // 250}-{index % 250 + 4}.eu-west-1.compute.internal"


def control_plane_name(index: int) -> str:
    return f"cp-{index + 1}.eu-west-1.compute.internal"


def deployment(rng: random.Random, team: str, app: str) -> str:
    cpu = rng.choice(("50m", "100m", "250m", "500m", "1"))
    memory = rng.choice(("64Mi", "128Mi", "256Mi", "512Mi", "1Gi"))
    env = "".join(
        f'            - name: {key}\n              value: "{value}"\n'
        for key, value in rng.sample(
            [
                ("LOG_LEVEL", "info"),
                ("PORT", "8080"),
                ("REGION", "eu-west-1"),
                ("FEATURE_FLAGS", "a,b"),
                ("GOMAXPROCS", "2"),
                ("TZ", "UTC"),
                ("OTEL_EXPORTER", "otlp"),
                ("CACHE_TTL", "30s"),
            ],
            rng.randint(2, 6),
        )
    )
    selector = (
        "" if rng.random() < 0.7 else f"      nodeSelector:\n        topology.kubernetes.io/zone: {rng.choice(ZONES)}\n"
    )
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
  namespace: {team}
  labels:
    app.kubernetes.io/name: {app}
    app.kubernetes.io/part-of: {team}
  annotations:
    deployment.kubernetes.io/revision: "{rng.randint(1, 40)}"
spec:
  replicas: {rng.randint(1, 6)}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: {app}
  strategy:
    type: RollingUpdate
    rollingUpdate: {{maxSurge: 25%, maxUnavailable: 0}}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {app}
        app.kubernetes.io/part-of: {team}
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9090"
    spec:
      serviceAccountName: {app}
      terminationGracePeriodSeconds: 30
{selector}      securityContext:
        runAsNonRoot: true
        fsGroup: 2000
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    app.kubernetes.io/name: {app}
      initContainers:
        - name: log-shipper
          image: registry.example.com/platform/fluent-bit:3.1.{rng.randint(0, 9)}
          restartPolicy: Always
          resources:
            requests: {{cpu: 20m, memory: 32Mi}}
            limits: {{memory: 64Mi}}
          volumeMounts:
            - {{name: logs, mountPath: /var/log/app}}
      containers:
        - name: {app}
          image: registry.example.com/{team}/{app}:{rng.randint(1, 3)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}
          args: ["--port=8080", "--metrics-port=9090"]
          ports:
            - {{name: http, containerPort: 8080}}
            - {{name: metrics, containerPort: 9090}}
          env:
{env}          envFrom:
            - configMapRef:
                name: {app}-config
          resources:
            requests:
              cpu: {cpu}
              memory: {memory}
            limits:
              memory: {memory}
          readinessProbe:
            httpGet: {{path: /healthz, port: http}}
            periodSeconds: 10
          livenessProbe:
            httpGet: {{path: /livez, port: http}}
            initialDelaySeconds: 15
          volumeMounts:
            - {{name: logs, mountPath: /var/log/app}}
            - {{name: config, mountPath: /etc/{app}, readOnly: true}}
      volumes:
        - name: logs
          emptyDir: {{}}
        - name: config
          configMap:
            name: {app}-config
"""


def service(rng: random.Random, team: str, app: str) -> str:
    return f"""apiVersion: v1
kind: Service
metadata:
  name: {app}
  namespace: {team}
  labels:
    app.kubernetes.io/name: {app}
spec:
  type: {rng.choice(("ClusterIP", "ClusterIP", "ClusterIP", "NodePort"))}
  selector:
    app.kubernetes.io/name: {app}
  ports:
    - name: http
      port: 80
      targetPort: http
    - name: metrics
      port: 9090
      targetPort: metrics
"""


def configmap(rng: random.Random, team: str, app: str) -> str:
    lines = "".join(f"    {key} = {rng.randint(1, 1000)}\n" for key in rng.sample(WORDS, rng.randint(3, 10)))
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {app}-config
  namespace: {team}
data:
  LOG_FORMAT: json
  UPSTREAM: http://{rng.choice(WORDS)}.{rng.choice(TEAMS)}.svc.cluster.local
  settings.toml: |
    [server]
{lines}"""


def pinned_pod(rng: random.Random, index: int) -> str:
    node = worker_name(rng.randrange(PINNED_NODES))
    if rng.random() < 0.1:
        node = node.replace("compute", "compte")  # a typo: a node that does not exist
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: node-debugger-{index}
  namespace: {rng.choice(TEAMS)}
  labels:
    purpose: debug
spec:
  nodeName: {node}
  hostPID: true
  restartPolicy: Never
  tolerations:
    - operator: Exists
  containers:
    - name: debugger
      image: registry.example.com/platform/toolbox:1.{rng.randint(0, 9)}
      command: ["sleep", "3600"]
      resources:
        requests: {{cpu: {rng.choice(("100m", "250m", "2", "64"))}, memory: 128Mi}}
      securityContext:
        privileged: true
      volumeMounts:
        - {{name: host, mountPath: /host}}
  volumes:
    - name: host
      hostPath: {{path: /}}
"""


def static_pod(rng: random.Random, component: str, node: int) -> str:
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {component}
  namespace: kube-system
  labels:
    component: {component}
    tier: control-plane
  annotations:
    kubeadm.kubernetes.io/etcd.advertise-client-urls: https://10.0.0.{node + 10}:2379
spec:
  hostNetwork: true
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile: {{type: RuntimeDefault}}
  containers:
    - name: {component}
      image: registry.k8s.io/{component}:v1.31.{rng.randint(0, 4)}
      command:
        - {component}
        - --advertise-address=10.0.0.{node + 10}
        - --cert-dir=/etc/kubernetes/pki
        - --v=2
      resources:
        requests: {{cpu: 250m}}
      livenessProbe:
        httpGet: {{host: 127.0.0.1, path: /livez, port: 6443, scheme: HTTPS}}
        failureThreshold: 8
      volumeMounts:
        - {{name: k8s-certs, mountPath: /etc/kubernetes/pki, readOnly: true}}
  volumes:
    - name: k8s-certs
      hostPath: {{path: /etc/kubernetes/pki, type: DirectoryOrCreate}}
"""


def generate_corpus(out: Path, documents: int = DEFAULT_DOCUMENTS, seed: int = DEFAULT_SEED) -> int:
    """Write the corpus into `out` (replacing it); returns the number of documents written."""
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    written = 0
    for node in range(CONTROL_PLANE_NODES):
        folder = out / "nodes" / control_plane_name(node) / "etc" / "kubernetes" / "manifests"
        folder.mkdir(parents=True)
        for component in STATIC_PODS:
            (folder / f"{component}.yaml").write_text(static_pod(rng, component, node))
            written += 1
    pod_index = 0
    app_index = 0
    while written < documents:
        if rng.random() < 0.08:
            folder = out / "debug" / rng.choice(TEAMS)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"debugger-{pod_index}.yaml").write_text(pinned_pod(rng, pod_index))
            pod_index += 1
            written += 1
            continue
        team = rng.choice(TEAMS)
        app = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{app_index}"
        app_index += 1
        folder = out / "apps" / team / app
        folder.mkdir(parents=True)
        parts = [deployment(rng, team, app), service(rng, team, app), configmap(rng, team, app)]
        parts = parts[: documents - written]
        if rng.random() < 0.5:
            (folder / "all.yaml").write_text("---\n" + "---\n".join(parts))
        else:
            for name, text in zip(("deployment.yaml", "service.yaml", "configmap.yaml"), parts, strict=True):
                (folder / name).write_text(text)
        written += len(parts)
    for name, workers, pods_per_node in CLUSTER_SIZES:
        (out.parent / name).write_text(cluster_state(random.Random(seed), workers, pods_per_node))
    return written


def cluster_state(rng: random.Random, workers: int, pods_per_node: int) -> str:
    """A `kubectl get nodes,namespaces,pods -A -o yaml` List for a cluster of `workers` nodes."""
    items: list[str] = []
    for index in range(workers):
        name = worker_name(index)
        taint = "\n    taints:\n    - {key: dedicated, value: gpu, effect: NoSchedule}" if index % 50 == 7 else ""
        items.append(f"""- apiVersion: v1
  kind: Node
  metadata:
    name: {name}
    labels:
      kubernetes.io/hostname: {name}
      kubernetes.io/os: linux
      topology.kubernetes.io/zone: {ZONES[index % len(ZONES)]}
  spec:
    providerID: aws:///{ZONES[index % len(ZONES)]}/i-{index:017x}{taint}
  status:
    allocatable: {{cpu: 3920m, memory: 15470Mi, pods: "110", ephemeral-storage: 95551679124}}
    capacity: {{cpu: "4", memory: 16Gi, pods: "110"}}
    conditions:
    - {{type: Ready, status: "True"}}
    - {{type: MemoryPressure, status: "False"}}
""")
    for team in (*TEAMS, "kube-system", "default"):
        items.append(f"""- apiVersion: v1
  kind: Namespace
  metadata:
    name: {team}
  status:
    phase: Active
""")
    for index in range(workers * pods_per_node):
        team = rng.choice(TEAMS)
        items.append(f"""- apiVersion: v1
  kind: Pod
  metadata:
    name: {rng.choice(WORDS)}-{index:x}
    namespace: {team}
  spec:
    nodeName: {worker_name(index % workers)}
    containers:
    - name: app
      image: registry.example.com/{team}/app:1.0
      resources:
        requests: {{cpu: {rng.choice(("50m", "100m", "200m"))}, memory: {rng.choice(("64Mi", "128Mi", "256Mi"))}}}
  status:
    phase: Running
""")
    return 'apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: ""\nitems:\n' + "".join(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to (re)create with the corpus; state files go beside it")
    parser.add_argument("--documents", type=int, default=DEFAULT_DOCUMENTS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    count = generate_corpus(args.out, args.documents, args.seed)
    print(f"wrote {count} documents to {args.out}")


if __name__ == "__main__":
    main()
