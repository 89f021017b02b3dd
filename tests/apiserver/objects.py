"""Nodes, namespaces and Pods in the exact shapes a kind cluster's API server returns them.

The fields and their nesting follow `kubectl get -o json` on a kind v0.2x cluster (Kubernetes 1.3x):
quantities are strings, labels and conditions are those the kubelet and kubeadm set.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

CREATED = "2026-11-29T20:00:00Z"
KIND_IMAGE_VERSION = "v1.33.1"
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


def _uid(seed: str) -> str:
    return str(uuid.UUID(hashlib.md5(seed.encode()).hexdigest()))


def kind_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "16331828Ki",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
    ready: str = "True",
    control_plane: bool = False,
    index: int = 0,
) -> dict[str, Any]:
    """A Node as kind's kubelet registers it (allocatable equals capacity on kind)."""
    node_labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    if control_plane:
        node_labels["node-role.kubernetes.io/control-plane"] = ""
        node_labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
    node_labels.update(labels or {})
    resources = {
        "cpu": cpu,
        "ephemeral-storage": "102625208Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory,
        "pods": pods,
    }
    spec: dict[str, Any] = {
        "podCIDR": f"10.244.{index % 256}.0/24",
        "podCIDRs": [f"10.244.{index % 256}.0/24"],
        "providerID": f"kind://docker/kind/{name}",
    }
    node_taints = list(taints or ([CONTROL_PLANE_TAINT] if control_plane else []))
    if node_taints:
        spec["taints"] = node_taints
    if unschedulable:
        spec["unschedulable"] = True
    heartbeat = {"lastHeartbeatTime": CREATED, "lastTransitionTime": CREATED}
    conditions = [
        {
            **heartbeat,
            "message": "kubelet has sufficient memory available",
            "reason": "KubeletHasSufficientMemory",
            "status": "False",
            "type": "MemoryPressure",
        },
        {
            **heartbeat,
            "message": "kubelet has no disk pressure",
            "reason": "KubeletHasNoDiskPressure",
            "status": "False",
            "type": "DiskPressure",
        },
        {
            **heartbeat,
            "message": "kubelet has sufficient PID available",
            "reason": "KubeletHasSufficientPID",
            "status": "False",
            "type": "PIDPressure",
        },
        {
            **heartbeat,
            "message": "kubelet is posting ready status" if ready == "True" else "Kubelet stopped posting node status.",
            "reason": "KubeletReady" if ready == "True" else "NodeStatusUnknown",
            "status": ready,
            "type": "Ready",
        },
    ]
    return {
        "metadata": {
            "annotations": {
                "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": CREATED,
            "labels": node_labels,
            "name": name,
            "resourceVersion": str(500 + index),
            "uid": _uid("node/" + name),
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": f"172.18.{index // 250}.{index % 250 + 2}", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": dict(resources),
            "capacity": dict(resources),
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": _uid("boot/" + name),
                "containerRuntimeVersion": "containerd://2.1.1",
                "kernelVersion": "6.8.0-49-generic",
                "kubeProxyVersion": KIND_IMAGE_VERSION,
                "kubeletVersion": KIND_IMAGE_VERSION,
                "machineID": _uid("machine/" + name).replace("-", ""),
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "systemUUID": _uid("system/" + name),
            },
        },
    }


def kind_namespace(name: str) -> dict[str, Any]:
    """A Namespace with the label the API server sets on every namespace."""
    return {
        "metadata": {
            "creationTimestamp": CREATED,
            "labels": {"kubernetes.io/metadata.name": name},
            "name": name,
            "resourceVersion": "20",
            "uid": _uid("namespace/" + name),
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def kind_pod(
    name: str,
    namespace: str,
    node: str | None,
    *,
    cpu: str | None = "100m",
    memory: str | None = "64Mi",
    phase: str = "Running",
    image: str = "registry.k8s.io/pause:3.10",
) -> dict[str, Any]:
    """A Pod as the API returns it after scheduling and defaulting."""
    requests = {key: value for key, value in (("cpu", cpu), ("memory", memory)) if value is not None}
    container = {
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": name.split("-")[0] or "main",
        "resources": {"requests": requests} if requests else {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    spec: dict[str, Any] = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
    }
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": phase, "qosClass": "Burstable" if requests else "BestEffort"}
    if node:
        status["hostIP"] = "172.18.0.2"
        status["startTime"] = CREATED
    return {
        "metadata": {
            "creationTimestamp": CREATED,
            "name": name,
            "namespace": namespace,
            "resourceVersion": "1000",
            "uid": _uid(f"pod/{namespace}/{name}"),
        },
        "spec": spec,
        "status": status,
    }


def kind_cluster() -> dict[str, list[dict[str, Any]]]:
    """A three-node kind cluster (control plane + two workers) with its system Pods."""
    nodes = [
        kind_node("kind-control-plane", control_plane=True, index=0),
        kind_node("kind-worker", index=1),
        kind_node("kind-worker2", index=2),
    ]
    namespaces = [
        kind_namespace(name)
        for name in ("default", "kube-node-lease", "kube-public", "kube-system", "local-path-storage")
    ]
    pods = [
        kind_pod("coredns-674b8bbfcf-8x2lq", "kube-system", "kind-control-plane", cpu="100m", memory="70Mi"),
        kind_pod("etcd-kind-control-plane", "kube-system", "kind-control-plane", cpu="100m", memory="100Mi"),
        kind_pod("kube-apiserver-kind-control-plane", "kube-system", "kind-control-plane", cpu="250m", memory=None),
        kind_pod("kindnet-4kd8w", "kube-system", "kind-worker", cpu="100m", memory="50Mi"),
        kind_pod("kube-proxy-9xq2c", "kube-system", "kind-worker", cpu=None, memory=None),
        kind_pod("web-5d4f8c7b9-abcde", "default", "kind-worker", cpu="750m", memory="256Mi"),
        kind_pod("done-job-x7k2p", "default", "kind-worker", cpu="3", memory="1Gi", phase="Succeeded"),
        kind_pod("kindnet-8hn2v", "kube-system", "kind-worker2", cpu="100m", memory="50Mi"),
    ]
    return {"nodes": nodes, "namespaces": namespaces, "pods": pods}
