"""`nodename-lint webhook`: the parts put together, served until SIGTERM or SIGINT."""

from __future__ import annotations

import contextlib
import signal
import ssl
import threading
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..registry import all_rules
from ..safe_text import note
from ..sources import UsageError
from .metrics import Metrics
from .review import ClusterSource, FixedCluster, Policy, Reviewer
from .server import Certificates, WebhookServer

M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


@dataclass(frozen=True)
class WebhookOptions:
    cert_file: str
    key_file: str
    port: int = 8443
    host: str = ""
    live: Any = None  # cluster.connection.LiveOptions, or None with a fixed state
    state: Any = None  # the ClusterState of --cluster-state


def policy_of(config: Config) -> Policy:
    return Policy(
        deny=frozenset(config.webhook_deny) if config.webhook_deny is not None else Policy.deny,
        warn_on=config.webhook_warn_on or Policy.warn_on,
    )


def build(options: WebhookOptions, config: Config, severities: dict[str, Any]) -> tuple[WebhookServer, ClusterSource]:
    """The server and its cluster source, not started; UsageError for what the command line got wrong."""
    try:
        certificates = Certificates(options.cert_file, options.key_file)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(
            f"cannot load the TLS certificate {options.cert_file} and key {options.key_file}: {exc}"
        ) from None
    cluster: ClusterSource
    if options.live is not None:
        from ..cluster.watch import WatchedCluster

        cluster = WatchedCluster(options.live)
    else:
        cluster = FixedCluster(options.state)
    reviewer = Reviewer(cluster, severities, policy_of(config))
    try:
        server = WebhookServer(reviewer, Metrics(cluster), certificates, host=options.host, port=options.port)
    except OSError as exc:
        raise UsageError(f"cannot listen on port {options.port}: {exc.strerror or exc}") from None
    return server, cluster


def fewer_malloc_arenas() -> None:
    """At most two glibc malloc arenas (MALLOC_ARENA_MAX=2), set before any thread starts.

    glibc gives each thread that allocates an arena of its own, and each keeps what was freed in it: the
    pages of the lists read by one thread and the state kept by another left the watched webhook at 26 MB
    over the same webhook without a cluster at 150,000 Pods, against 21 to 23 MB with two arenas (the
    snapshot of that state: 22 MB; bench/webhook.py --memory-only). Nothing changes where the C library
    is not glibc.
    """
    # startup: ctypes only when the webhook starts serving
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(M_ARENA_MAX, 2)


def serve(options: WebhookOptions, config: Config, severities: dict[str, Any]) -> None:
    """Serve until SIGTERM or SIGINT, then stop the watches and return."""
    fewer_malloc_arenas()
    server, cluster = build(options, config, severities)
    start = getattr(cluster, "start", None)
    if start is not None:
        start()
    denying = ", ".join(sorted(rule for rule in policy_of(config).deny if rule in all_rules())) or "nothing"
    where = getattr(cluster, "source", None) or (options.state.source if options.state is not None else "")
    note(f"webhook: serving https on port {server.port} (cluster state: {where}; denies {denying})")

    def stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.stop, daemon=True).start()  # shutdown() waits for serve() to return

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    try:
        server.serve()
    finally:
        close = getattr(cluster, "close", None)
        if close is not None:
            close()
        note("webhook: stopped")
