"""What the webhook tests share: serving certificates, AdmissionReviews, a TLS client, a running webhook."""

from __future__ import annotations

import contextlib
import http.client
import json
import ssl
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme

from nodename_lint.config import Config, load_config, resolve_severities
from nodename_lint.registry import all_rules
from nodename_lint.webhook.app import WebhookOptions, build
from nodename_lint.webhook.server import WebhookServer

KINDS = {
    "Pod": ("", "v1", "pods"),
    "Deployment": ("apps", "v1", "deployments"),
    "ReplicaSet": ("apps", "v1", "replicasets"),
    "DaemonSet": ("apps", "v1", "daemonsets"),
    "Job": ("batch", "v1", "jobs"),
    "ConfigMap": ("", "v1", "configmaps"),
}


@dataclass
class Certs:
    ca: trustme.CA
    cert_file: Path
    key_file: Path

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca.cert_pem.bytes().decode())


def make_certs(folder: Path) -> Certs:
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost", "nodename-lint-webhook.nodename-lint.svc")
    cert_file, key_file = folder / "tls.crt", folder / "tls.key"
    cert_file.write_bytes(b"".join(pem.bytes() for pem in issued.cert_chain_pems))
    key_file.write_bytes(issued.private_key_pem.bytes())
    return Certs(ca, cert_file, key_file)


def command(certs: Certs, port: int, *args: str) -> list[str]:
    """`nodename-lint webhook` on a loopback port, as a process."""
    return [
        sys.executable, "-m", "nodename_lint", "webhook", "--tls-cert-file", str(certs.cert_file),
        "--tls-private-key-file", str(certs.key_file), "--port", str(port), "--bind-address", "127.0.0.1", *args,
    ]  # fmt: skip


def pod(name: str = "p", node: str | None = "kind-worker", *, cpu: str = "100m", **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "a", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]}
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", **extra},
        "spec": spec,
    }


def deployment(name: str = "web", node: str | None = "kind-worker", replicas: int = 3) -> dict[str, Any]:
    template = pod(name, node)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": template["spec"]},
        },
    }


def review(
    obj: dict[str, Any] | None,
    operation: str = "CREATE",
    *,
    old: dict[str, Any] | None = None,
    dry_run: bool = False,
    kind: str | None = None,
    uid: str | None = None,
) -> dict[str, Any]:
    kind = kind or (obj or old or {}).get("kind", "Pod")
    group, version, resource = KINDS[kind]
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()),
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "name": (obj or old or {}).get("metadata", {}).get("name", ""),
        "namespace": "default",
        "operation": operation,
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": obj,
        "oldObject": old,
        "dryRun": dry_run,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


class Client:
    """One kept-alive HTTPS connection, as the API server holds one to a webhook."""

    def __init__(self, port: int, certs: Certs) -> None:
        self.connection = http.client.HTTPSConnection("127.0.0.1", port, context=certs.client_context(), timeout=10)

    def post(self, body: bytes | dict[str, Any], path: str = "/validate") -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.connection.request("POST", path, data, {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        payload = response.read()
        try:
            return response.status, json.loads(payload)
        except ValueError:
            return response.status, payload.decode()

    def get(self, path: str) -> tuple[int, str]:
        self.connection.request("GET", path)
        response = self.connection.getresponse()
        return response.status, response.read().decode()

    def answer(self, obj: dict[str, Any] | None, operation: str = "CREATE", **options: Any) -> dict[str, Any]:
        """The AdmissionReview response to a review of `obj`."""
        sent = review(obj, operation, **options)
        status, body = self.post(sent)
        assert status == 200, body
        assert body["apiVersion"] == "admission.k8s.io/v1" and body["kind"] == "AdmissionReview"
        assert body["response"]["uid"] == sent["request"]["uid"]
        return body["response"]

    def close(self) -> None:
        self.connection.close()


@contextlib.contextmanager
def running(
    certs: Certs,
    *,
    state: Any = None,
    live: Any = None,
    config: Config | None = None,
    watch: dict[str, Any] | None = None,
    **server: Any,
) -> Iterator[WebhookServer]:
    """A webhook served in this process on a free loopback port (its cluster source started); `watch` sets
    the watches' bounds (short ones for tests), `server` the server's."""
    config = config or Config()
    severities = resolve_severities(all_rules(), config, [], [])
    options = WebhookOptions(str(certs.cert_file), str(certs.key_file), 0, "127.0.0.1", live, state)
    webhook, cluster = build(options, config, severities)
    for key, value in server.items():
        setattr(webhook, key, value)
    for key, value in (watch or {}).items():
        setattr(cluster, key, value)
    start = getattr(cluster, "start", None)
    if start is not None:
        start()
    thread = threading.Thread(target=webhook.serve, daemon=True)
    thread.start()
    try:
        yield webhook
    finally:
        webhook.stop()
        close = getattr(cluster, "close", None)
        if close is not None:
            close()
        thread.join(timeout=5)


def config_file(folder: Path, text: str) -> Config:
    path = folder / ".nodename-lint.yaml"
    path.write_text(text)
    return load_config(str(path), list(all_rules()))


def wait_for(condition: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)
