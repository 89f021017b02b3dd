"""pytest fixtures: a running loopback API server with a kind cluster, and a kubeconfig with several contexts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from . import TOKEN, ApiServer, cluster_entry, free_port, kind_cluster, write_kubeconfig

CONTEXTS = ("kind-kind", "kind-wrong-token", "stopped-cluster", "other-ca")


@pytest.fixture
def api_server() -> Iterator[ApiServer]:
    """A three-node kind cluster served over HTTPS on 127.0.0.1."""
    with ApiServer(**kind_cluster()) as server:
        yield server


@pytest.fixture
def kubeconfig(tmp_path: Path, api_server: ApiServer) -> Path:
    """A kubeconfig like a developer's: the kind cluster (current), a stale token, a stopped cluster, a wrong CA."""
    return write_kubeconfig(
        tmp_path / "kubeconfig",
        clusters={
            "kind-kind": cluster_entry(api_server.url, api_server.ca_pem),
            "stopped": cluster_entry(f"https://127.0.0.1:{free_port()}", api_server.ca_pem),
            "other-ca": cluster_entry(api_server.url, trustme.CA().cert_pem.bytes()),
        },
        users={"kind-kind": {"token": TOKEN}, "stale": {"token": "expired-token-0123456789"}},
        contexts={
            "kind-kind": ("kind-kind", "kind-kind"),
            "kind-wrong-token": ("kind-kind", "stale"),
            "stopped-cluster": ("stopped", "kind-kind"),
            "other-ca": ("other-ca", "kind-kind"),
        },
        current="kind-kind",
    )


class Timer:
    """Wall time of a block, to assert that a failing cluster ends the run in bounded time."""

    def __enter__(self) -> Timer:
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.monotonic() - self.start
