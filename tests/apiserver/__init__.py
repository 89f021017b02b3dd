"""A loopback Kubernetes API server for tests and benchmarks, and kubeconfig files that point at it."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from .objects import kind_cluster, kind_namespace, kind_node, kind_pod
from .server import TOKEN, ApiServer, Fault, Request, SilentServer, free_port

__all__ = [
    "TOKEN",
    "ApiServer",
    "Fault",
    "Request",
    "SilentServer",
    "cluster_entry",
    "free_port",
    "kind_cluster",
    "kind_namespace",
    "kind_node",
    "kind_pod",
    "kubeconfig_for",
    "write_kubeconfig",
]


def cluster_entry(server: str, ca_pem: bytes | None = None, **extra: Any) -> dict[str, Any]:
    """A kubeconfig `clusters[].cluster` with the CA inline, as kind writes it."""
    entry: dict[str, Any] = {"server": server, **extra}
    if ca_pem is not None:
        entry["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return entry


def kubeconfig_for(path: Path, server: ApiServer) -> Path:
    """A kubeconfig whose one context, current, reaches `server` with the token it accepts."""
    return write_kubeconfig(
        path,
        clusters={"test": cluster_entry(server.url, server.ca_pem)},
        users={"test": {"token": TOKEN}},
        contexts={"test": ("test", "test")},
        current="test",
    )


def write_kubeconfig(
    path: Path,
    clusters: dict[str, dict[str, Any]],
    users: dict[str, dict[str, Any]],
    contexts: dict[str, tuple[str, str]],
    current: str | None = None,
) -> Path:
    """A kubeconfig file in kubectl's layout; contexts map name -> (cluster, user)."""
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": name, "cluster": entry} for name, entry in clusters.items()],
        "users": [{"name": name, "user": entry} for name, entry in users.items()],
        "contexts": [
            {"name": name, "context": {"cluster": cluster, "user": user}} for name, (cluster, user) in contexts.items()
        ],
    }
    if current is not None:
        config["current-context"] = current
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path
