"""The webhook's HTTPS server: POST /validate, GET /healthz, /readyz and /metrics.

The standard library's ThreadingHTTPServer with ssl, one thread per connection (the API server keeps a
few connections open and sends reviews over them), each bounded:

- TLS only: a connection that starts with plain HTTP gets a plain 400 saying so, and is closed;
- a connection waits at most `idle_seconds` for a request, and a request must arrive whole (TLS
  handshake, headers, body) within `read_seconds` of its first byte (a slow client is cut off);
- a body needs a Content-Length of at most 3 MiB (larger: 413, without reading it);
- at most `max_connections` at once; past that, a connection is closed at once;
- the certificate and key are read again when their files change (cert-manager renews them).

Why not an async server (aiohttp): bench/webhook_servers.py answers the same reviews with both, pinned
to one core. The CPU per review is alike (1.8 and 1.4 ms, the review itself most of it), the tail and
200 connections at once went better here (p99 19 against 24 ms; 225 against 118 reviews/s), and the
bounds above (a whole request within a deadline, plain HTTP told apart before the handshake) are ours
to set; aiohttp has no bound on the time to send the headers. No dependency either.
"""

from __future__ import annotations

import io
import os
import socket
import socketserver
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ..safe_text import note, one_line
from .metrics import CONTENT_TYPE, Metrics
from .review import MAX_BODY, Reviewer

READ_SECONDS = 5.0  # from a request's first byte to its last: the API server gives a review 3 s in all
IDLE_SECONDS = 90.0  # a kept-alive connection with no request for this long is closed (Go's idle timeout)
WRITE_SECONDS = 5.0
MAX_CONNECTIONS = 512
RELOAD_SECONDS = 10.0  # how often the certificate files are looked at for a renewal
_PLAIN_HTTP = (b"GET ", b"POST", b"PUT ", b"HEAD", b"DELE", b"OPTI", b"PATC", b"CONN", b"TRAC", b"PRI ")


class Certificates:
    """The server's TLS context, made again when the certificate or key file changes."""

    def __init__(self, cert_file: str, key_file: str) -> None:
        self.cert_file, self.key_file = cert_file, key_file
        self.context = self._load()  # errors here are the command line's (a missing or bad file)
        self.stamp = self._stamp()
        self.checked = time.monotonic()
        self.lock = threading.Lock()

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def _stamp(self) -> tuple[Any, ...]:
        try:
            return tuple((s.st_mtime_ns, s.st_size, s.st_ino) for s in map(os.stat, (self.cert_file, self.key_file)))
        except OSError:
            return ()

    def current(self) -> ssl.SSLContext:
        """The context for a new connection: reloaded when the files changed (a half-written pair keeps the old)."""
        now = time.monotonic()
        if now - self.checked < RELOAD_SECONDS:
            return self.context
        with self.lock:
            self.checked = now
            stamp = self._stamp()
            if stamp and stamp != self.stamp:
                try:
                    self.context = self._load()
                    self.stamp = stamp
                    note("webhook: loaded the renewed TLS certificate")
                except (OSError, ssl.SSLError) as exc:
                    note(f"webhook: the TLS certificate changed but cannot be loaded yet ({exc}); keeping the old one")
        return self.context


class _Deadline:
    """When the request being read must be complete: `idle` to its first byte, then `read` for the rest."""

    def __init__(self, idle: float, read: float) -> None:
        self.idle, self.read = idle, read
        self.start()

    def start(self) -> None:
        """A new request: the idle wait starts."""
        self.at = time.monotonic() + self.idle
        self.begun = False

    def first_byte(self) -> None:
        if not self.begun:
            self.begun = True
            self.at = time.monotonic() + self.read

    def left(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutError("the client took too long to send its request")
        return left


class _DeadlineReader(io.RawIOBase):
    """A socket's reads, each given only the time left before the request's deadline: a client sending a
    byte at a time cannot hold a thread longer than the deadline."""

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.sock.settimeout(self.deadline.left())
        count = self.sock.recv_into(buffer)
        if count:
            self.deadline.first_byte()
        return count


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    webhook: WebhookServer

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse DNS lookup of the address (seconds in a container without DNS)."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        """At most max_connections at once: past that, a connection is closed without a thread."""
        if not self.webhook.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.webhook.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up or fails the handshake: nothing to report


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        """TLS on the accepted socket, in this connection's own thread, within the read deadline."""
        webhook = self.server.webhook
        raw: socket.socket = self.request
        if disable_nagle := self.disable_nagle_algorithm:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, disable_nagle)
        self.deadline = _Deadline(webhook.idle_seconds, webhook.read_seconds)
        raw.settimeout(self.deadline.left())
        start = raw.recv(4, socket.MSG_PEEK)
        self.deadline.first_byte()
        if start[:4] in _PLAIN_HTTP:
            raw.settimeout(WRITE_SECONDS)
            raw.sendall(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 60\r\n"
                b"\r\nnodename-lint webhook: plain HTTP is refused; use https://\n"
            )
            raise ConnectionAbortedError("plain HTTP")
        tls = webhook.certificates.current().wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        tls.settimeout(self.deadline.left())
        tls.do_handshake()
        self.connection = self.request = tls
        self.rfile = io.BufferedReader(_DeadlineReader(tls, self.deadline), 65536)
        self.wfile = tls.makefile("wb")

    def handle_one_request(self) -> None:
        self.deadline.start()
        super().handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per denial instead (see do_POST)

    # --- routes -----------------------------------------------------------------------------------
    def do_GET(self) -> None:
        webhook = self.server.webhook
        path = urlsplit(self.path).path
        if path == "/healthz":
            self._reply(200, b"ok\n", "text/plain; charset=utf-8")
        elif path == "/readyz":
            ready, text = webhook.readiness()
            self._reply(200 if ready else 503, text.encode(), "text/plain; charset=utf-8")
        elif path == "/metrics":
            self._reply(200, webhook.metrics.exposition(), CONTENT_TYPE)
        elif path == "/validate":
            self._reply(405, b"POST an AdmissionReview\n", "text/plain; charset=utf-8", {"Allow": "POST"})
        else:
            self._reply(404, b"not found\n", "text/plain; charset=utf-8")

    def do_POST(self) -> None:
        webhook = self.server.webhook
        if urlsplit(self.path).path != "/validate":
            self._reply(404, b"not found\n", "text/plain; charset=utf-8")
            return
        length = self.headers.get("Content-Length", "")
        if self.headers.get("Transfer-Encoding") or not (length.isascii() and length.isdigit()):
            self.close_connection = True
            self._reply(411, b"a Content-Length is required\n", "text/plain; charset=utf-8")
            return
        if int(length) > MAX_BODY:
            self.close_connection = True  # the body is never read
            self._reply(413, f"the body is over {MAX_BODY} bytes\n".encode(), "text/plain; charset=utf-8")
            return
        body = self.rfile.read(int(length))
        if len(body) < int(length):
            self.close_connection = True
            return  # the client hung up mid-body
        started = time.perf_counter()
        try:
            verdict = webhook.reviewer.review(body)
        except Exception as exc:  # a bug must answer 500 (the API server's failurePolicy decides), never allow
            webhook.metrics.failed(time.perf_counter() - started)
            note(f"webhook: internal error reviewing a request: {type(exc).__name__}: {exc}")
            self._reply(500, b'{"error":"internal error in nodename-lint"}', "application/json")
            return
        self._reply(verdict.status, verdict.body, "application/json")
        webhook.metrics.observe(verdict, time.perf_counter() - started)
        if verdict.verdict == "denied":
            denied = ", ".join(rule for rule, what in verdict.rules.items() if what == "denied")
            note(f"webhook: denied {verdict.subject} ({denied})")

    def do_PUT(self) -> None:
        self._reply(405, b"method not allowed\n", "text/plain; charset=utf-8")

    do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_PUT

    def _reply(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.connection.settimeout(WRITE_SECONDS)
        self.send_response_only(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (a malformed request line, headers too long): short, plain, closing."""
        self.close_connection = True
        text = one_line(message or self.responses.get(code, ("error",))[0]) + "\n"
        self._reply(code, text.encode(), "text/plain; charset=utf-8")


class WebhookServer:
    """The server and what it answers with; `serve()` blocks until `stop()`."""

    def __init__(
        self,
        reviewer: Reviewer,
        metrics: Metrics,
        certificates: Certificates,
        *,
        host: str = "",
        port: int = 8443,
        read_seconds: float = READ_SECONDS,
        idle_seconds: float = IDLE_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.reviewer, self.metrics, self.certificates = reviewer, metrics, certificates
        self.read_seconds, self.idle_seconds = read_seconds, idle_seconds
        self.slots = threading.BoundedSemaphore(max_connections)
        family = socket.AF_INET6 if not host and socket.has_dualstack_ipv6() else socket.AF_INET
        server_class = type("_BoundServer", (_Server,), {"address_family": family})
        self.httpd: _Server = server_class((host or ("::" if family == socket.AF_INET6 else "0.0.0.0"), port), _Handler)
        self.httpd.webhook = self

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def readiness(self) -> tuple[bool, str]:
        """Ready once the state is loaded; the text says per check what stands, as kube-apiserver's /readyz."""
        cluster = self.reviewer.cluster
        ready = cluster.ready()
        lines = ["[+]cluster-state loaded" if ready else "[-]cluster-state not loaded yet (the first full lists)"]
        lost = cluster.degraded() if ready else []
        lines += [f"[-]watch: {one_line(reason)}; denials turn into warnings" for reason in lost]
        if ready and not lost and cluster.statuses:
            lines.append("[+]watches follow the cluster")
        verdict = "readyz check passed" if ready else "readyz check failed"
        lines.append(f"{verdict} (degraded: warnings only)" if lost else verdict)
        return ready, "\n".join(lines) + "\n"

    def serve(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
