"""One API server, reached with GET requests only: timeouts, size cap, retries, paging.

- read-only: every request goes through `ApiConnection._send`, which can only send GET;
- bounded: each request ends within --request-timeout from connecting to its last byte, a reply
  stops at --max-response-bytes, 429/5xx are retried a bounded number of times, and a list restarts
  at most once after 410 Gone; a run reads at most MAX_PAGES pages and MAX_OBJECTS objects, and
  decodes at most MAX_VALUES JSON values (a reply at most one per VALUE_BYTES of the size cap), so a
  server that hands out `continue` tokens forever or packs an object into every three bytes ends
  the run with a message instead of filling memory (ReadBudget);
- no credential ever reaches the output: every message built from an exception goes through the
  Redactor, which knows every secret of the kubeconfig.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import queue
import re
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import urlencode, urlsplit

from .. import __version__
from ..safe_text import note
from .errors import (
    ClusterUnavailable,
    Forbidden,
    Gone,
    NotFound,
    ReplyTooLarge,
    network_error,
    one_line_of,
    status_message,
)
from .kubeconfig import kubeconfig_paths, resolve_kubeconfig
from .official import kube_config, rest_modules, static_credentials
from .redaction import Redactor, route_client_logging

DEFAULT_TIMEOUT = 5.0  # seconds: the whole of each request, from connecting to the last byte
DEFAULT_MAX_RESPONSE_BYTES = 256 << 20  # a page of 500 nodes is a few MB; an endless reply stops here
READ_BLOCK = 16 << 10  # bytes per read: a compressed block cannot inflate far past the cap
_RETRY_AFTER = re.compile(r"[0-9]{1,6}")  # delay-seconds, ASCII digits only (RFC 9110 section 10.2.3)
PAGE_SIZE = 500  # kubectl's --chunk-size default
RETRIES = 3  # extra attempts after 429, 500, 502, 503, 504
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_BACKOFF = 2.0  # seconds; also caps a server's Retry-After
USER_AGENT = f"nodename-lint/{__version__} (kubernetes-client/python)"
Decode = Callable[[bytes], dict[str, Any]]  # a reply's JSON with only some fields, e.g. trimming.decode_node_page
_DICT_REPR = re.compile(r"/?\{(?:[^{}]|\{[^{}]*\})*\}")
# What one run reads at most, whatever the server answers. Kubernetes' own scale limits are 5,000
# nodes and 150,000 Pods; a lint names at most one Pod list per pinned node.
MAX_PAGES = 10_000  # list pages (requests with `limit`), all lists of the run together
MAX_OBJECTS = 1_000_000  # list items, all lists together
MAX_VALUES = 500_000_000  # JSON values decoded (about 20 bytes each in an API server's replies)
VALUE_BYTES = 16  # a reply may hold one JSON value per this many bytes of --max-response-bytes
WATCH_GRACE = 30.0  # seconds a watch stream may stay open past its own timeoutSeconds


class Listed(list[Any]):
    """The items of a list, and the resourceVersion the list is consistent with (where a watch starts)."""

    resource_version: str = ""


@dataclass(frozen=True)
class LiveOptions:
    """How to reach the cluster, as given on the command line (the budgets are not options)."""

    kubeconfig: str | None = None
    context: str | None = None
    in_cluster: bool = False
    request_timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_pages: int = MAX_PAGES
    max_objects: int = MAX_OBJECTS
    max_values: int = MAX_VALUES


class ReadBudget:
    """What the rest of the run may still read from the server: pages, objects, decoded JSON values.

    Shared by the threads of one connection. A decoded value costs 50 to 100 bytes of memory: a
    reply of 234 MB of `{},` decodes to 78 million dicts (over 4 GB), so a reply's values are
    counted on its bytes before it is decoded.
    """

    def __init__(self, options: LiveOptions, host: str) -> None:
        self.host = host
        self.pages, self.objects, self.values = options.max_pages, options.max_objects, options.max_values
        self.reply_values = max(1, options.max_response_bytes // VALUE_BYTES)
        self.max_pages, self.max_objects, self.max_values = self.pages, self.objects, self.values
        self.lock = threading.Lock()

    def decode(self, body: bytes, what: str) -> None:
        """Take a reply's JSON values (at most: every value but the first follows `[`, `{` or `,`)."""
        values = 1 + body.count(b"[") + body.count(b"{") + body.count(b",")
        if values > self.reply_values:
            raise ClusterUnavailable(
                f"the API server at {self.host} sent {len(body):,} bytes holding up to {values:,} JSON values for "
                f"{what}, more than {self.reply_values:,} (one per {VALUE_BYTES} bytes of --max-response-bytes): "
                "decoded, such a reply would take gigabytes of memory; the cluster state cannot be read"
            )
        with self.lock:
            self.values -= values
            left = self.values
        if left < 0:
            raise ClusterUnavailable(
                f"the API server at {self.host} sent more than {self.max_values:,} JSON values in this run "
                f"(at {what}): nodename-lint decodes no more in one run; the cluster state cannot be read"
            )

    def page(self, items: int, what: str) -> None:
        """Take one list page of ITEMS objects."""
        with self.lock:
            self.pages -= 1
            self.objects -= items
            pages, objects = self.pages, self.objects
        if pages < 0:
            raise ClusterUnavailable(
                f"the API server at {self.host} sent more than {self.max_pages:,} list pages in this run "
                f"(at {what}, each with a `continue` token for the next): nodename-lint reads no more pages "
                "in one run; the cluster state cannot be read"
            )
        if objects < 0:
            raise ClusterUnavailable(
                f"the API server at {self.host} listed more than {self.max_objects:,} objects in this run "
                f"(at {what}; Kubernetes itself supports 150,000 Pods and 5,000 nodes): nodename-lint reads "
                "no more in one run; the cluster state cannot be read"
            )


# --- the connection -------------------------------------------------------------------------------
class ApiConnection:
    """One API server, reached with GET requests only, with timeouts, retries and clear errors."""

    def __init__(self, options: LiveOptions) -> None:
        configuration_module, rest = rest_modules()  # the official client, without what a run does not use

        self.timeout = options.request_timeout
        self.max_response_bytes = options.max_response_bytes
        self.redact = Redactor()
        route_client_logging(self.redact)
        self.namespace: str | None = None
        self.fixed_authorization: str | None = None  # set when the credential cannot change during the run
        configuration = configuration_module.Configuration()
        try:
            if options.in_cluster:
                kube_config().load_incluster_config(client_configuration=configuration)
                self.source = "in-cluster service account"
                self._redact_in_cluster()
            else:
                resolved = resolve_kubeconfig(kubeconfig_paths(options.kubeconfig), options.context, self.redact)
                self.namespace = resolved.namespace
                self.source = f"context {resolved.context}"
                static = static_credentials(resolved)
                if static is not None:  # what the client's loader would set, without importing it
                    static.apply(configuration)
                    self.fixed_authorization = static.authorization or ""
                else:
                    kube_config().load_kube_config(
                        config_file=os.pathsep.join(resolved.paths),
                        context=resolved.context,
                        client_configuration=configuration,
                        persist_config=False,
                    )
                if resolved.insecure:
                    note(
                        f"warning: TLS verification is off for cluster {resolved.cluster} "
                        "(insecure-skip-tls-verify: true in the kubeconfig); the server's identity is not checked"
                    )
        except ClusterUnavailable:
            raise
        except Exception as exc:  # ConfigException and friends: their texts may quote the kubeconfig
            # the client names kubeconfig entries by their whole dict: drop those, then redact what is left
            detail = _DICT_REPR.sub("", one_line_of(exc))
            raise ClusterUnavailable(self.redact(f"cannot use the cluster credentials: {detail}")) from None
        for value in [*configuration.api_key.values(), self.fixed_authorization]:
            if value:
                self.redact.add(value)
                self.redact.add(value.split(" ", 1)[-1])
        configuration.retries = False  # retries are ours: bounded, and only for GET
        configuration.debug = False  # the client's debug log prints request headers (the token)
        self.host = configuration.host.rstrip("/")
        self.configuration = configuration
        if urlsplit(self.host).scheme == "http" and (configuration.api_key or self.fixed_authorization):
            note(
                f"warning: the API server {self.host} of {self.source} is plain http://: its bearer token is sent "
                "unencrypted and anyone on the way can read and reuse it; use an https:// server address"
            )
        # the client's REST layer: its urllib3 pool carries the Configuration's TLS settings and proxy
        self.pool = rest.RESTClientObject(configuration).pool_manager
        self.pool.pool_classes_by_scheme = {  # a request given up on can cut its socket
            scheme: _reporting_pool(pool) for scheme, pool in self.pool.pool_classes_by_scheme.items()
        }
        self.runners = _Runners()
        self.options = options
        self.budget = ReadBudget(options, self.host)
        self.open_watches: set[Any] = set()  # responses of the watches being read, for abandon_watches

    def _redact_in_cluster(self) -> None:
        from kubernetes.config.incluster_config import SERVICE_TOKEN_FILENAME

        try:
            with open(SERVICE_TOKEN_FILENAME, encoding="utf-8") as handle:
                self.redact.add(handle.read())
        except OSError:
            pass

    # --- single requests ----------------------------------------------------------------------
    def _get(
        self,
        path: str,
        query: dict[str, str],
        decode: Decode | None = None,
        retries: int = RETRIES,
        budget: ReadBudget | None = None,
    ) -> dict[str, Any]:
        """GET path?query as JSON. Raises Forbidden for 403 and ClusterUnavailable for anything untrustworthy.

        The reply is taken from BUDGET, by default the run's."""
        attempt = 0
        while True:
            status, headers, body = self._send(path, query)
            if status not in RETRY_STATUSES or attempt >= retries:
                break
            delay = min(MAX_BACKOFF, 0.1 * 2**attempt)
            retry_after = headers.get("Retry-After", "").strip()
            if _RETRY_AFTER.fullmatch(retry_after):  # str.isdigit() would take "²", which int() refuses
                delay = min(MAX_BACKOFF, float(retry_after))
            time.sleep(delay)
            attempt += 1
        what = _describe(path, query)
        if 200 <= status < 300:
            (budget or self.budget).decode(body, what)
            try:
                data = _decode(body, decode)
            except ValueError as exc:  # JSONDecodeError, or UnicodeDecodeError for bytes that are not UTF-8
                problem = (
                    f"{exc.msg} at byte {exc.pos}"
                    if isinstance(exc, json.JSONDecodeError)
                    else f"not UTF-8 at byte {exc.start}"
                    if isinstance(exc, UnicodeDecodeError)
                    else str(exc)
                )
                raise ClusterUnavailable(
                    f"the API server at {self.host} sent a reply that is not valid JSON for {what} "
                    f"({problem}); the cluster state cannot be trusted"
                ) from None
            except RecursionError:
                raise ClusterUnavailable(
                    f"the API server at {self.host} sent a reply nested too deeply for {what}; "
                    "the cluster state cannot be trusted"
                ) from None
            if not isinstance(data, dict):
                raise ClusterUnavailable(f"the API server at {self.host} sent an unexpected reply for {what}")
            return data
        self._refuse(status, headers, body, path, query, attempt)

    def _refuse(
        self, status: int, headers: Any, body: bytes, path: str, query: dict[str, str], attempt: int = 0
    ) -> NoReturn:
        """Raise what a reply other than 2xx means: Forbidden (403, the run goes on without that data), Gone
        (410), NotFound (404 of one object), ClusterUnavailable (anything else)."""
        message = status_message(body) or headers.get("Reason", "") or f"HTTP {status}"
        if status == 401:
            raise ClusterUnavailable(
                f"the API server at {self.host} rejected the credentials of {self.source} "
                f"(401 Unauthorized): the token or certificate is wrong or expired; log in again "
                f"or pick another context"
            )
        if status == 403:
            verb = "watch" if query.get("watch") else "get" if _is_get(path) else "list"
            raise Forbidden(verb, _resource(path), self.redact(message))
        if status == 410:
            raise Gone(message)
        what = _describe(path, query)
        if status == 404 and _is_get(path):
            raise NotFound(self.redact(f"the API server at {self.host} answered {what} with 404: {message}"))
        retried = f" after {attempt + 1} attempts" if attempt else ""
        raise ClusterUnavailable(
            self.redact(f"the API server at {self.host} answered {what} with HTTP {status}{retried}: {message}")
        )

    def _send(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """One GET, bounded in total time (--request-timeout) and in size (--max-response-bytes).

        urllib3's timeouts bound each socket read, so a server that sends a byte a second would never
        trip them: the request runs in a daemon thread that this one waits for at most the timeout,
        and the reply is read in blocks, counted against the size cap as they arrive.
        """
        what = _describe(path, query)
        request = _Request(
            self, self.host + path + (f"?{urlencode(list(query.items()))}" if query else ""), self._headers()
        )
        if not self.runners.run(request, self.timeout):
            request.abandon()
            raise ClusterUnavailable(
                f"the API server {self.host} did not answer {what} within {self.timeout:g}s "
                "(--request-timeout); the cluster state cannot be read"
            )
        if isinstance(request.error, ReplyTooLarge):
            raise ClusterUnavailable(
                f"the API server {self.host} sent more than {self.max_response_bytes:,} bytes for "
                f"{what} (--max-response-bytes); the cluster state cannot be read"
            ) from None
        if request.error is not None:
            raise ClusterUnavailable(
                self.redact(network_error(request.error, what, self.host, self.source, self.timeout))
            ) from None
        assert request.reply is not None
        return request.reply

    def _headers(self) -> dict[str, str]:
        """Accept JSON, who asks, and the credential header: fixed, or the client's (a bearer token that an
        exec plugin refreshes when it expires), what every client version sends, without its generated code."""
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self.fixed_authorization is not None:
            if self.fixed_authorization:
                headers["Authorization"] = self.fixed_authorization
            return headers
        settings: Any = self.configuration.auth_settings()  # a TypedDict in newer clients, a dict before
        for setting in settings.values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        return headers

    # --- lists --------------------------------------------------------------------------------
    def list_all(
        self,
        path: str,
        field_selector: str = "",
        keep: Callable[[dict[str, Any]], Any] | None = None,
        decode: Decode | None = None,
        budget: ReadBudget | None = None,
    ) -> Listed:
        """Every item of a list, page by page; a 410 on a continue token restarts the list once.

        `keep` turns each item into what is kept as its page arrives (audit trims Pods so), so a
        big list never sits in memory whole; `decode` reads a page's JSON with only the fields
        kept (a page of another shape is decoded whole, and kept as it is). Its pages are taken from
        BUDGET, by default the run's (a server that runs for weeks gives each list its own: `fresh_budget`).
        """
        budget = budget or self.budget
        for restart in (False, True):
            items = Listed()
            query = {"limit": str(PAGE_SIZE)}
            if field_selector:
                query["fieldSelector"] = field_selector
            try:
                while True:
                    page = self._get(path, query, decode, budget=budget)
                    if "continue" not in query:  # the version the whole list is consistent with
                        items.resource_version = str((page.get("metadata") or {}).get("resourceVersion") or "")
                    listed = page.get("items") or []
                    budget.page(len(listed) if isinstance(listed, list) else 0, _describe(path, query))
                    page_items = (item for item in listed if isinstance(item, dict))
                    items.extend(map(keep, page_items) if keep else page_items)
                    token = (page.get("metadata") or {}).get("continue")
                    if not token:
                        return items
                    query = {**query, "continue": token}
            except Gone as exc:
                if restart:
                    raise ClusterUnavailable(
                        f"the API server expired the list of {_describe(path, query)} twice "
                        f"(410 Gone: {exc}); the cluster changes too fast to read a consistent list"
                    ) from None
        raise AssertionError("unreachable")

    def fresh_budget(self) -> ReadBudget:
        """A whole run's budget for one list or one object: the webhook lists again and again for weeks,
        and each (re)list may read what one lint run may."""
        return ReadBudget(self.options, self.host)

    def get_object(self, path: str) -> dict[str, Any] | None:
        """One object (GET /api/v1/nodes/NAME), None when it does not exist (404); asked once, never retried
        (the caller has a deadline of its own)."""
        try:
            return self._get(path, {}, retries=0, budget=self.fresh_budget())
        except NotFound:
            return None

    # --- watches ------------------------------------------------------------------------------
    def watch(
        self,
        path: str,
        resource_version: str,
        timeout_seconds: int,
        field_selector: str = "",
        idle: float = 150.0,
        on_open: Callable[[], None] | None = None,
    ) -> Iterator[bytes]:
        """The events of a watch from `resource_version` with bookmarks, one JSON line each, until the
        server ends the watch (after `timeout_seconds`).

        Bounded like every request: a reply other than 200 raises as for a list (Gone for 410, Forbidden
        for 403); no byte for `idle` seconds (the API server sends a bookmark every minute), an event over
        --max-response-bytes or a stream still open 30 s past its own timeout raise ClusterUnavailable.
        `on_open` is called once the server has accepted the watch (200), before any event arrives.
        `abandon_watches()` from another thread cuts every open watch.
        """
        query = {
            "watch": "1",
            "allowWatchBookmarks": "true",
            "resourceVersion": resource_version,
            "timeoutSeconds": str(timeout_seconds),
        }
        if field_selector:
            query["fieldSelector"] = field_selector
        what = _describe(path, query)
        deadline = time.monotonic() + timeout_seconds + WATCH_GRACE
        try:
            response = self._open(self.host + path + f"?{urlencode(list(query.items()))}", self.timeout, idle)
        except Exception as exc:  # socket, TLS and urllib3 errors, told apart by type
            raise ClusterUnavailable(self.redact(network_error(exc, what, self.host, self.source, idle))) from None
        self.open_watches.add(response)
        try:
            if response.status != 200:
                body = b"".join(_bounded(response, self.max_response_bytes, deadline))
                self._refuse(response.status, response.headers or {}, body, path, query)
            if on_open is not None:
                on_open()
            pending = b""
            for block in _bounded(response, None, deadline):
                *lines, pending = (pending + block).split(b"\n")
                yield from (line for line in lines if line.strip())
                if len(pending) > self.max_response_bytes:
                    raise ReplyTooLarge()
        except ReplyTooLarge:
            raise ClusterUnavailable(
                f"the API server {self.host} sent more than {self.max_response_bytes:,} bytes in one event of "
                f"{what} (--max-response-bytes)"
            ) from None
        except (ClusterUnavailable, Forbidden, Gone):
            raise
        except Exception as exc:
            raise ClusterUnavailable(self.redact(network_error(exc, what, self.host, self.source, idle))) from None
        finally:
            self.open_watches.discard(response)
            _cut(response)

    def abandon_watches(self) -> None:
        """Cut every open watch (the process is stopping): each watch() raises in its own thread."""
        for response in list(self.open_watches):
            _cut(response)

    def _open(self, url: str, connect: float, read: float) -> Any:
        """The one place a request is sent, and it can only be a GET: urllib3's response, its body unread."""
        import urllib3

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
            # the client's own pool: its TLS settings (CA, client certificate, proxy); retries are ours
            return self.pool.request(
                "GET",
                url,
                headers=self._headers(),
                preload_content=False,
                retries=False,
                enforce_content_length=True,  # a cut-off reply is an error (urllib3 1.x let it pass)
                timeout=urllib3.Timeout(connect=connect, read=read),
            )

    def close(self) -> None:
        self.runners.close()
        self.pool.clear()


class _Runners:
    """The daemon threads that run one connection's requests, each reused for the next request once done.

    Starting a thread per request cost 0.13 ms of CPU, 0.03 s for a lint's 212 requests. A request
    its caller gave up on keeps its thread until the abandoned socket ends it; the next request then
    gets another thread. Once the connection is closed, no thread waits for more: a process that
    read a cluster has no thread left behind (it may start worker processes by fork). A request still
    running when the process exits is ended before the interpreter is (`_end_requests_at_exit`).
    """

    def __init__(self) -> None:
        self.requests: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()  # None: end the thread
        self.idle = 0  # threads waiting for a request that no caller has claimed yet
        self.closed = False
        self.lock = threading.Lock()

    def run(self, request: _Request, timeout: float) -> bool:
        """Run the request in a runner thread; False if it has not ended within the timeout."""
        with self.lock:
            claimed = self.idle > 0
            self.idle -= claimed
        if not claimed:
            threading.Thread(target=self._serve, name="nodename-lint-request", daemon=True).start()
        with _RUNNING_LOCK:
            _RUNNING.add(request)
        self.requests.put(request)
        return request.done.wait(timeout)

    def close(self) -> None:
        with self.lock:
            self.closed, idle, self.idle = True, self.idle, 0
        for _ in range(idle):
            self.requests.put(None)

    def _serve(self) -> None:
        while (request := self.requests.get()) is not None:
            request.thread, request.started = threading.current_thread(), time.monotonic()
            try:
                request.run()
            finally:
                with self.lock:
                    stay = not self.closed
                    self.idle += stay  # before `done`: the caller's next request finds this thread idle
                request.leaving = not stay
                with _RUNNING_LOCK:
                    _RUNNING.discard(request)
                request.done.set()
            del request  # an idle thread must not keep its last reply (a page of a list) alive
            if not stay:
                return


class _Request:
    """One GET as run by a runner thread for ApiConnection._send: the reply or the error, for the caller to read."""

    def __init__(self, connection: ApiConnection, url: str, headers: dict[str, str]) -> None:
        self.connection, self.url, self.headers = connection, url, headers
        self.done = threading.Event()
        self.reply: tuple[int, dict[str, str], bytes] | None = None
        self.error: BaseException | None = None
        self.response: Any = None  # urllib3's response once the headers are in
        self.abandoned = False
        self.sockets: list[socket.socket] = []  # each a duplicate of a socket the request uses, to cut it with
        self.thread: threading.Thread | None = None  # the runner thread, once one took the request
        self.started: float | None = None  # when it took it (time.monotonic)
        self.leaving = False  # its thread ends once the request is done (the connection was closed)

    def run(self) -> None:
        conn = self.connection
        if self.abandoned:  # given up on before a thread took it (the process is exiting): nothing is sent
            self.error = ConnectionAbortedError("the request was given up on before it was sent")
            return
        _SENDING.request = self  # the connection's socket is reported here (_reporting_pool)
        try:
            response = conn._open(self.url, conn.timeout, conn.timeout)
            self.response = response
            blocks = []
            for block in _bounded(response, conn.max_response_bytes):
                if self.abandoned:
                    return
                blocks.append(block)
            self.reply = (response.status, dict(response.headers or {}), b"".join(blocks))
        except BaseException as exc:  # handed to the caller's thread, which classifies it
            self.error = exc
        finally:
            _SENDING.request = None
            if self.response is not None and self.reply is not None:
                self.response.release_conn()  # read to the end: the connection can serve the next request
            elif self.response is not None:
                self.response.close()
            for duplicate in self.sockets:
                duplicate.close()  # the duplicate alone: the connection stays open for the next request

    def uses(self, sock: socket.socket) -> None:
        """The request sends or reads through SOCK (a new connection's, or a reused one's): keep a duplicate,
        which can shut it down from another thread; at once if the request was given up on already."""
        try:
            duplicate = os.dup(sock.fileno())
        except OSError:  # closed already: nothing to cut
            return
        try:
            self.sockets.append(socket.socket(fileno=duplicate))
        except OSError:
            os.close(duplicate)
        if self.abandoned:
            self.abandon()

    def abandon(self) -> None:
        """The caller gave up: shut down the connection's socket, so that the thread stops at once wherever it
        waits (the TLS handshake, the reply's headers, its body) rather than at its own timeout."""
        self.abandoned = True
        for duplicate in list(self.sockets):
            with contextlib.suppress(OSError):
                duplicate.shutdown(socket.SHUT_RDWR)
        if self.response is not None:  # also through the reply: its socket was not duplicated when out of descriptors
            _cut(self.response)


# The requests that runner threads hold, of every connection: ended before the interpreter is (below)
_RUNNING: set[_Request] = set()
_RUNNING_LOCK = threading.Lock()
_SENDING = threading.local()  # `request`: the _Request the runner thread is sending, told of its sockets


@functools.cache
def _reporting_pool(pool: type) -> type:
    """A subclass of one of urllib3's pool classes (plain, or a SOCKS proxy's: the manager's own, so a proxy
    still carries every request) whose connections tell the request being sent (`_SENDING`) which socket
    carries it: a socket connected for it, or the one of a connection it reuses. Giving up on the request
    can then shut that socket down during the TLS handshake or the wait for the headers too, where urllib3
    has no response to close yet, instead of leaving its thread until the socket's own timeout; a server
    that sends its headers a byte at a time, each within the read timeout, would hold the thread for good."""
    connection: type = pool.ConnectionCls  # type: ignore[attr-defined]

    def _new_conn(self: Any) -> Any:
        sock = connection._new_conn(self)  # type: ignore[attr-defined]
        _report(sock)
        return sock

    def _get_conn(self: Any, timeout: float | None = None) -> Any:
        conn = pool._get_conn(self, timeout)  # type: ignore[attr-defined]
        if conn.sock is not None:  # a connection kept from an earlier request
            _report(conn.sock)
        return conn

    reporting = type(f"Reporting{connection.__name__}", (connection,), {"_new_conn": _new_conn})
    return type(f"Reporting{pool.__name__}", (pool,), {"ConnectionCls": reporting, "_get_conn": _get_conn})


def _report(sock: Any) -> None:
    request = getattr(_SENDING, "request", None)
    if request is not None:
        request.uses(sock)


_EXIT_GRACE = 0.25  # seconds: how long a request's thread may take to notice its socket was shut down


@atexit.register
def _end_requests_at_exit() -> None:
    """Give up on the requests still running, and wait for each whose thread could wake while the interpreter
    tears itself down.

    A runner is a daemon thread: one still inside a request when the interpreter finalizes (a server
    that never finished its TLS handshake, whose socket timeout wakes the thread as the run reports
    it) may take the GIL or stderr's lock as the interpreter tears them down, and CPython then aborts
    the process (SIGABRT) instead of exiting with the run's code. Runs before that teardown (atexit),
    while the threads may still run. Each request's socket is shut down, and its thread stops at once.
    A request still connecting has no socket to shut down yet: its connect timeout wakes it, so it is
    waited for only when that comes within a second (the run gave up on it at its timeout); one
    interrupted early (Ctrl-C) wakes long after the process is gone, and is not waited for.
    """
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for request in running:
        request.abandon()
    now = time.monotonic()
    try:
        for request in running:
            thread, started = request.thread, request.started
            if thread is None or started is None:  # taken at once, and returns without sending anything
                until = now + _EXIT_GRACE
            elif not thread.is_alive():  # a forked process's copy: no thread runs it here
                continue
            elif request.sockets:  # shut down: its thread stops at once
                until = started + request.connection.timeout + _EXIT_GRACE
            elif (wakes := started + request.connection.timeout) - now < 1.0:  # connecting: wakes at its timeout
                until = wakes + _EXIT_GRACE
            else:
                continue
            request.done.wait(max(0.0, until - time.monotonic()))
            if request.leaving and thread is not None:  # its last steps, then the thread ends
                thread.join(max(0.0, until - time.monotonic()))
    except KeyboardInterrupt:  # asked twice: leave at once
        return


def _cut(response: Any) -> None:
    """Shut a response's connection, so that a thread blocked reading it returns at once."""
    with contextlib.suppress(Exception):
        if hasattr(response, "shutdown"):  # urllib3 2.3+
            response.shutdown()
        else:  # close() would wait for the reading thread's buffer lock: shut the socket itself
            response._connection.sock.shutdown(socket.SHUT_RDWR)


def _bounded(response: Any, limit: int | None, deadline: float | None = None) -> Iterator[bytes]:
    """A response's body in blocks as they arrive, stopping with ReplyTooLarge past `limit` bytes (None: a
    stream, whose events the caller bounds), and with TimeoutError once `deadline` (time.monotonic) passed."""
    declared = (response.headers or {}).get("Content-Length", "")
    if limit is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge()
    size = 0
    for block in response.stream(READ_BLOCK):
        size += len(block)
        if limit is not None and size > limit:
            raise ReplyTooLarge()
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError("the stream outlived its own timeout")
        yield block


def _decode(body: bytes, decode: Decode | None = None) -> Any:
    """A reply's JSON: `decode` if given and the reply has its shape, else msgspec (1.5x as fast as json.loads
    on a page of 500 nodes); json.loads for what msgspec refuses, which either accepts it as before or raises
    the error with the position that is reported."""
    import msgspec

    try:
        return decode(body) if decode is not None else msgspec.json.decode(body)
    except msgspec.DecodeError:  # ValidationError too: another shape is decoded whole
        pass
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        return json.loads(body)


def _resource_parts(path: str) -> list[str]:
    """The path after /api/v1 or /apis/GROUP/VERSION."""
    parts = path.strip("/").split("/")
    return parts[3:] if parts[:1] == ["apis"] else parts[2:]


def _is_get(path: str) -> bool:
    """A path to one object (/api/v1/nodes/NAME) rather than a collection."""
    parts = _resource_parts(path)
    if parts[:1] == ["namespaces"] and len(parts) >= 3:
        parts = parts[2:]
    return len(parts) == 2


def _resource(path: str) -> str:
    parts = _resource_parts(path)
    if parts[:1] == ["namespaces"] and len(parts) >= 3:
        return parts[2]
    return parts[0] if parts else path


def _describe(path: str, query: dict[str, str]) -> str:
    selector = query.get("fieldSelector")
    return f"GET {path}" + (f" (fieldSelector {selector})" if selector else "")
