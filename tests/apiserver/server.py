"""A real HTTPS server on 127.0.0.1 that speaks the part of the Kubernetes API nodename-lint uses.

There is no kube-apiserver binary on the test machines, so this implements, over real TLS with a
self-signed CA (trustme), what the official client and kubectl send: discovery (/api, /api/v1,
/apis, /version), list and get of nodes, namespaces and Pods (cluster-wide and namespaced),
fieldSelector (=, ==, != on the fields the API server supports for each resource), labelSelector,
limit/continue pagination with 410 Gone for an expired continue token, bearer-token auth (401),
RBAC denials per verb and resource (403), and injected faults. Every request is recorded so tests
can prove the tool sent nothing but GET.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trustme

from .watch import History, WatchStream

# resource -> (kind, namespaced, field selectors the real API server accepts)
RESOURCES: dict[str, tuple[str, bool, frozenset[str]]] = {
    "nodes": ("Node", False, frozenset({"metadata.name", "spec.unschedulable"})),
    "namespaces": ("Namespace", False, frozenset({"metadata.name", "status.phase"})),
    "pods": (
        "Pod",
        True,
        frozenset(
            {
                "metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            }
        ),
    ),
    # the workloads `nodename-lint audit` reads (apps/v1 and batch/v1)
    "deployments": ("Deployment", True, frozenset({"metadata.name", "metadata.namespace"})),
    "statefulsets": ("StatefulSet", True, frozenset({"metadata.name", "metadata.namespace"})),
    "daemonsets": ("DaemonSet", True, frozenset({"metadata.name", "metadata.namespace"})),
    "replicasets": ("ReplicaSet", True, frozenset({"metadata.name", "metadata.namespace", "status.replicas"})),
    # the templates of StatefulSet and DaemonSet revisions: what a rollout prediction compares
    "controllerrevisions": ("ControllerRevision", True, frozenset({"metadata.name", "metadata.namespace"})),
    "jobs": ("Job", True, frozenset({"metadata.name", "metadata.namespace", "status.successful"})),
    "cronjobs": ("CronJob", True, frozenset({"metadata.name", "metadata.namespace"})),
    # RuntimeClasses: their overhead counts in a Pod's requests
    "runtimeclasses": ("RuntimeClass", False, frozenset({"metadata.name"})),
    # PriorityClasses: what the Priority admission plugin resolves a Pod's priority from
    "priorityclasses": ("PriorityClass", False, frozenset({"metadata.name"})),
}
# resource -> group/version it is served under ("v1" is the core group at /api/v1)
GROUP_VERSIONS = {
    "nodes": "v1",
    "namespaces": "v1",
    "pods": "v1",
    "deployments": "apps/v1",
    "statefulsets": "apps/v1",
    "daemonsets": "apps/v1",
    "replicasets": "apps/v1",
    "controllerrevisions": "apps/v1",
    "jobs": "batch/v1",
    "cronjobs": "batch/v1",
    "runtimeclasses": "node.k8s.io/v1",
    "priorityclasses": "scheduling.k8s.io/v1",
}
# The PriorityClasses every API server creates at start (pkg/registry/scheduling/rest: SystemPriorityClasses)
BUILT_IN_PRIORITY_CLASSES = tuple(
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": False,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": description,
    }
    for name, value, description in (
        (
            "system-node-critical",
            2000001000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        (
            "system-cluster-critical",
            2000000000,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if "
            "necessary.",
        ),
    )
)
WORKLOAD_RESOURCES = tuple(resource for resource, group in GROUP_VERSIONS.items() if group in ("apps/v1", "batch/v1"))
VERSION = {
    "major": "1",
    "minor": "33",
    "gitVersion": "v1.33.1",
    "gitCommit": "8adc0f041b8e7ad1d30e29cc59c6ae7a15e19828",
    "gitTreeState": "clean",
    "buildDate": "2025-05-15T08:19:08Z",
    "goVersion": "go1.24.2",
    "compiler": "gc",
    "platform": "linux/amd64",
}
TOKEN = "nodename-lint-token"  # the bearer token ApiServer accepts by default
EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    authorization: str | None


@dataclass
class Fault:
    """Misbehave on the next `times` requests that match.

    action: "status:<code>" (a Status error, with Retry-After for 429), "hang" (read the request, never answer),
    "truncate" (promise more bytes than sent, then close), "malformed" (200 with a body that is not JSON),
    "not-utf8" (200 with JSON bytes that are not UTF-8), "gone" (410 Expired, only for requests that carry a
    continue token), "drip" (the real reply, one byte per second), "drip-head" (the status line and headers, a
    byte every 0.3 s: urllib3 has no response yet, and a client's read timeout never trips), "endless" (a
    chunked 200 that never ends), "endless-continue" (the list's first page, `copies` times over, with a new
    continue token on every page: a list that never ends), "dense" (a 200 list whose `items` are `size` bytes of
    `{},`: small on the wire, a Python object every three bytes once decoded), "stall" (a watch accepted, then
    not a byte), "end" (a watch ended at once, without an event; both for watches only). `retry_after` replaces
    the Retry-After header of a status fault; `message` its Status message.
    """

    action: str
    path: str = ""  # a prefix of the request path; "" matches every request
    times: int = 1_000_000
    continue_only: bool = False
    retry_after: str | None = None
    message: str | None = None
    copies: int = 1
    size: int = 0

    def matches(self, request: Request) -> bool:
        if self.times <= 0 or not request.path.startswith(self.path):
            return False
        if self.action in ("stall", "end") and not request.query.get("watch"):  # for watches only
            return False
        return not self.continue_only or bool(request.query.get("continue"))


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.body = status_body(code, reason, message, details)
        self.code = code


def _dig(obj: dict[str, Any], dotted: str) -> str:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_field_selector(text: str, allowed: frozenset[str], resource: str) -> list[tuple[str, str, bool]]:
    """[(field, value, equal)] from `a=b,c!=d`; unsupported fields are a 400 as on a real server."""
    terms = []
    for part in filter(None, text.split(",")):
        match = re.fullmatch(r"([^=!]+)(==|=|!=)(.*)", part)
        if not match:
            raise ApiError(400, "BadRequest", f'invalid field selector: "{part}"')
        name, operator, value = match.groups()
        if name not in allowed:
            raise ApiError(
                400,
                "BadRequest",
                f'Unable to find "/v1, Resource={resource}" that match label selector "", '
                f'field selector "{text}": field label not supported: {name}',
            )
        terms.append((name, value, operator != "!="))
    return terms


_LABEL_TERM = re.compile(
    r"\s*(!?)([A-Za-z0-9./_-]+)(?:\s*(==|=|!=)\s*([A-Za-z0-9._-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*"
)


def parse_label_selector(text: str) -> Callable[[dict[str, str]], bool]:
    """A predicate over labels for `a=b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x)`."""
    checks: list[Callable[[dict[str, str]], bool]] = []
    position = 0
    while position < len(text):
        match = _LABEL_TERM.match(text, position)
        if not match or match.end() == position:
            raise ApiError(400, "BadRequest", f"unable to parse requirement: {text!r}")
        negate, key, operator, value, set_op, values = match.groups()
        if operator:
            equal = operator != "!="
            checks.append(lambda labels, k=key, v=value, eq=equal: (labels.get(k) == v) == eq)
        elif set_op:
            options = {item.strip() for item in values.split(",")}
            if set_op == "in":
                checks.append(lambda labels, k=key, o=options: labels.get(k) in o)
            else:
                checks.append(lambda labels, k=key, o=options: labels.get(k) not in o)
        else:
            checks.append(lambda labels, k=key, n=bool(negate): (k in labels) != n)
        position = match.end()
        if position < len(text):
            if text[position] != ",":
                raise ApiError(400, "BadRequest", f"unable to parse requirement: {text!r}")
            position += 1
    return lambda labels: all(check(labels) for check in checks)


class Store:
    """The objects of one resource, in etcd key order, with an index of Pods by node."""

    def __init__(self, resource: str, objects: Iterable[dict[str, Any]]) -> None:
        self.resource = resource
        self.kind, self.namespaced, self.fields = RESOURCES[resource]
        self.objects = sorted(objects, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        self.encoded = [json.dumps(o, separators=(",", ":")).encode() for o in self.objects]
        self.by_node: dict[str, list[int]] = {}
        self.by_name: dict[str, list[int]] = {}
        self.by_key: dict[tuple[str, str], int] = {}
        for index, obj in enumerate(self.objects):
            self.by_key[(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = index
            self.by_name.setdefault(obj["metadata"]["name"], []).append(index)
            if resource == "pods":
                self.by_node.setdefault(obj.get("spec", {}).get("nodeName", ""), []).append(index)
        self.cache: dict[tuple[str, str, str], list[int]] = {}

    def select(self, namespace: str, field_selector: str, label_selector: str) -> list[int]:
        key = (namespace, field_selector, label_selector)
        if key not in self.cache:
            terms = parse_field_selector(field_selector, self.fields, self.resource)
            if namespace:
                terms.append(("metadata.namespace", namespace, True))
            candidates: Iterable[int] = range(len(self.objects))
            equal_terms = {name: value for name, value, equal in terms if equal}
            if "metadata.name" in equal_terms:
                candidates = self.by_name.get(equal_terms["metadata.name"], [])
            elif "spec.nodeName" in equal_terms:
                candidates = self.by_node.get(equal_terms["spec.nodeName"], [])
            labels = parse_label_selector(label_selector) if label_selector else None
            chosen = []
            for index in candidates:
                obj = self.objects[index]
                if all((_dig(obj, name) == value) == equal for name, value, equal in terms) and (
                    labels is None or labels(obj["metadata"].get("labels") or {})
                ):
                    chosen.append(index)
            if len(self.cache) > 64:
                self.cache.clear()
            self.cache[key] = chosen
        return self.cache[key]


class ApiServer:
    """The loopback API server. Use as a context manager; `url`, `ca_pem` and `requests` for tests.

    Objects change through `put`, `delete` and `label_node`, each a new resourceVersion that watches
    see (watch.py); `history` holds the changes (`history.compact()`, `history.cut()`).
    """

    def __init__(
        self,
        nodes: Iterable[dict[str, Any]] = (),
        namespaces: Iterable[dict[str, Any]] = (),
        pods: Iterable[dict[str, Any]] = (),
        runtimeclasses: Iterable[dict[str, Any]] = (),
        priorityclasses: Iterable[dict[str, Any]] = BUILT_IN_PRIORITY_CLASSES,
        *,
        tokens: Iterable[str] = (TOKEN,),
        ca: trustme.CA | None = None,
        host: str = "127.0.0.1",
        tls: bool = True,
        workloads: Mapping[str, Iterable[dict[str, Any]]] | None = None,
    ) -> None:
        self.stores = {
            "nodes": Store("nodes", nodes),
            "namespaces": Store("namespaces", namespaces),
            "pods": Store("pods", pods),
            "runtimeclasses": Store("runtimeclasses", runtimeclasses),
            "priorityclasses": Store("priorityclasses", priorityclasses),
        }
        for resource in WORKLOAD_RESOURCES:  # served empty unless given: a cluster without Jobs has none
            self.stores[resource] = Store(resource, (workloads or {}).get(resource, ()))
        self.tokens = set(tokens)
        self.forbidden: set[tuple[str, str]] = set()  # (verb, resource), e.g. ("list", "pods")
        self.allowed: set[tuple[str, str]] | None = None  # when set, RBAC allows only these (verb, resource)
        self.faults: list[Fault] = []
        self.requests: list[Request] = []
        self.continue_epoch = 0
        self.ca = ca or trustme.CA()
        self.host = host
        self.tls = tls  # False: plain http:// (for the test that the tool warns before sending a token)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self.history = History(123456)

    # --- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> ApiServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        server = _Server((self.host, 0), _Handler)
        server.api = self
        if self.tls:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self.ca.issue_cert("127.0.0.1", "localhost", "kubernetes.default.svc").configure_cert(context)
            server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
        self._httpd = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        return self.ca.cert_pem.bytes()

    # --- what tests assert --------------------------------------------------------------------
    @property
    def methods(self) -> set[str]:
        return {request.method for request in self.requests}

    def api_requests(self) -> list[Request]:
        """Requests for resources (discovery excluded)."""
        return [r for r in self.requests if r.path.startswith("/api/v1/")]

    # --- changes, as a controller or a kubelet would make them --------------------------------------
    def put(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace an object (by namespace and name); watches see ADDED or MODIFIED."""
        store = self.stores[resource]
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        index = store.by_key.get(key)
        old = store.objects[index] if index is not None else None
        stamped = self.history.record(resource, "ADDED" if old is None else "MODIFIED", old, obj)
        others = [o for i, o in enumerate(store.objects) if i != index]
        self.stores[resource] = Store(resource, [*others, stamped])
        return stamped

    def delete(self, resource: str, name: str, namespace: str = "") -> None:
        """Delete an object; watches that saw it get DELETED."""
        store = self.stores[resource]
        index = store.by_key[(namespace, name)]
        old = store.objects[index]
        self.history.record(resource, "DELETED", old, old)
        self.stores[resource] = Store(resource, [o for i, o in enumerate(store.objects) if i != index])

    def label_node(self, name: str, **labels: str) -> dict[str, Any]:
        """Set labels on a node (`kubectl label node NAME key=value`)."""
        node = self.stores["nodes"].objects[self.stores["nodes"].by_key[("", name)]]
        metadata = {**node["metadata"], "labels": {**node["metadata"].get("labels", {}), **labels}}
        return self.put("nodes", {**node, "metadata": metadata})

    def expire_continue_tokens(self) -> None:
        """Like an etcd compaction: every continue token issued so far now gets 410 Gone."""
        self.continue_epoch += 1

    # --- request handling ---------------------------------------------------------------------
    def record(self, request: Request) -> Fault | None:
        with self._lock:
            self.requests.append(request)
            for fault in self.faults:
                if fault.matches(request):
                    fault.times -= 1
                    return fault
        return None

    def authenticate(self, authorization: str | None) -> str:
        if not self.tokens:
            return "system:anonymous"
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() == "bearer" and token.strip() in self.tokens:  # the scheme is case-insensitive
            return "kubernetes-admin"
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def respond(self, request: Request) -> tuple[int, bytes | WatchStream]:
        """Status code and JSON body for a request that is not a fault (a watch: the stream to serve)."""
        path = request.path.rstrip("/") or "/"
        if path == "/version":
            return 200, json.dumps(VERSION).encode()
        user = self.authenticate(request.authorization)
        if path == "/api":
            return 200, json.dumps(
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "172.18.0.2:6443"}],
                }
            ).encode()
        if path == "/apis":
            groups = sorted({group for group in GROUP_VERSIONS.values() if group != "v1"})
            return 200, json.dumps(
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [
                        {
                            "name": group.split("/")[0],
                            "versions": [{"groupVersion": group, "version": "v1"}],
                            "preferredVersion": {"groupVersion": group, "version": "v1"},
                        }
                        for group in groups
                    ],
                }
            ).encode()
        if path == "/api/v1" or (path.startswith("/apis/") and path.count("/") == 3):
            group_version = "v1" if path == "/api/v1" else path[len("/apis/") :]
            return 200, json.dumps(self._resource_list(group_version)).encode()
        if request.method != "GET":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if path.startswith("/apis/"):  # /apis/GROUP/VERSION/...
            group_version, parts = "/".join(path.split("/")[2:4]), path.split("/")[4:]
        else:
            group_version, parts = "v1", path.split("/")[3:]  # after /api/v1
        namespace = ""
        if len(parts) >= 3 and parts[0] == "namespaces" and parts[2] in RESOURCES:
            namespace, parts = parts[1], parts[2:]
        if not parts or parts[0] not in RESOURCES or len(parts) > 2 or GROUP_VERSIONS[parts[0]] != group_version:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        resource = parts[0]
        if namespace and not RESOURCES[resource][1]:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        verb = "get" if len(parts) == 2 else "watch" if request.query.get("watch") in ("1", "true") else "list"
        self._authorize(user, verb, resource, namespace)
        store = self.stores[resource]
        if verb == "get":
            return self._get(store, namespace, parts[1])
        if verb == "watch":
            return 200, self._watch(resource, namespace, request.query)
        return self._list(store, namespace, request.query)

    def _watch(self, resource: str, namespace: str, query: dict[str, str]) -> WatchStream:
        store = self.stores[resource]
        terms = parse_field_selector(query.get("fieldSelector", ""), store.fields, resource)
        if namespace:
            terms.append(("metadata.namespace", namespace, True))
        labels = parse_label_selector(query["labelSelector"]) if query.get("labelSelector") else None

        def selects(obj: dict[str, Any]) -> bool:
            return all((_dig(obj, name) == value) == equal for name, value, equal in terms) and (
                labels is None or labels(obj["metadata"].get("labels") or {})
            )

        return WatchStream(
            self.history,
            resource,
            store.kind,
            GROUP_VERSIONS[resource],
            selects,
            query,
            lambda: self.stores[resource].objects,
            self._stopping,
        )

    def _resource_list(self, group_version: str) -> dict[str, Any]:
        short = {
            "nodes": ["no"],
            "namespaces": ["ns"],
            "pods": ["po"],
            "deployments": ["deploy"],
            "statefulsets": ["sts"],
            "daemonsets": ["ds"],
            "replicasets": ["rs"],
            "cronjobs": ["cj"],
            "priorityclasses": ["pc"],
        }
        resources = []
        for name, (kind, namespaced, _) in RESOURCES.items():
            if GROUP_VERSIONS[name] != group_version:
                continue
            resources.append(
                {
                    "name": name,
                    "singularName": kind.lower(),
                    "namespaced": namespaced,
                    "kind": kind,
                    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                    "shortNames": short.get(name, []),
                }
            )
        if not resources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return {"kind": "APIResourceList", "groupVersion": group_version, "resources": resources}

    def _authorize(self, user: str, verb: str, resource: str, namespace: str) -> None:
        if (verb, resource) in self.forbidden or (self.allowed is not None and (verb, resource) not in self.allowed):
            scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
            group = GROUP_VERSIONS[resource].rpartition("/")[0]
            raise ApiError(
                403,
                "Forbidden",
                f'{resource} is forbidden: User "{user}" cannot {verb} resource '
                f'"{resource}" in API group "{group}" {scope}',
                {"kind": resource},
            )

    def _get(self, store: Store, namespace: str, name: str) -> tuple[int, bytes]:
        index = store.by_key.get((namespace, name))
        if index is None:
            raise ApiError(
                404, "NotFound", f'{store.resource} "{name}" not found', {"name": name, "kind": store.resource}
            )
        head = json.dumps({"kind": store.kind, "apiVersion": GROUP_VERSIONS[store.resource]})[:-1].encode()
        return 200, head + b"," + store.encoded[index][1:]

    def _list(self, store: Store, namespace: str, query: dict[str, str]) -> tuple[int, bytes]:
        chosen = store.select(namespace, query.get("fieldSelector", ""), query.get("labelSelector", ""))
        start = 0
        token = query.get("continue")
        if token:
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                start, epoch = int(state["start"]), int(state["epoch"])
            except (ValueError, KeyError, TypeError):
                raise ApiError(400, "BadRequest", "continue key is not valid: illegal base64 data") from None
            if epoch != self.continue_epoch:
                raise ApiError(410, "Expired", EXPIRED_CONTINUE)
        limit = int(query.get("limit") or 0)
        end = min(len(chosen), start + limit) if limit > 0 else len(chosen)
        metadata: dict[str, Any] = {"resourceVersion": str(self.history.version)}
        if end < len(chosen):
            metadata["continue"] = base64.urlsafe_b64encode(
                json.dumps({"start": end, "epoch": self.continue_epoch}).encode()
            ).decode()
            metadata["remainingItemCount"] = len(chosen) - end
        head = json.dumps(
            {"kind": f"{store.kind}List", "apiVersion": GROUP_VERSIONS[store.resource], "metadata": metadata}
        )[:-1]
        items = b",".join(store.encoded[index] for index in chosen[start:end])
        return 200, head.encode() + b',"items":[' + items + b"]}"

    def wait_stopping(self, seconds: float) -> None:
        self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    api: ApiServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that reject our certificate or hang up are part of the tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        api = self.server.api
        url = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(url.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        request = Request(self.command, url.path, query, self.headers.get("Authorization"))
        fault = api.record(request)
        if fault is not None and self._fault(fault, request):
            return
        try:
            code, reply = api.respond(request)
            extra: dict[str, str] = {}
        except ApiError as exc:
            code, reply = exc.code, json.dumps(exc.body).encode()
            extra = {"Retry-After": "1"} if code == 429 else {}
        if isinstance(reply, WatchStream):
            reply.serve(self)
            return
        self._send(code, reply, extra)

    def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None, length: int | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Audit-Id", "00000000-0000-0000-0000-000000000000")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _drip(self, data: bytes, interval: float) -> None:
        """Send DATA a byte every INTERVAL seconds (until the server stops), then end the connection."""
        try:
            for index in range(len(data)):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                if self.server.api._stopping.wait(interval):
                    break
        except OSError:
            pass  # the client hung up, as it should
        self.close_connection = True

    def _fault(self, fault: Fault, request: Request) -> bool:
        action = fault.action
        if action == "hang":
            self.server.api.wait_stopping(60)
            self.close_connection = True
            return True
        if action == "drip-head":  # the status line and headers a byte at a time, each well within a read timeout
            self._drip(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 4096, 0.3)
            return True
        if action.startswith("status:"):
            code = int(action.split(":")[1])
            reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}.get(
                code, "InternalError"
            )
            message = fault.message or {
                429: "storage is (re)initializing",
                500: "an error on the server "
                '("etcdserver: request timed out") has prevented the request from '
                "succeeding",
            }.get(code, "server error")
            retry_after = fault.retry_after if fault.retry_after is not None else "0" if code == 429 else None
            self._send(
                code,
                json.dumps(status_body(code, reason, message)).encode(),
                {"Retry-After": retry_after} if retry_after is not None else {},
            )
            return True
        if action == "endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            block = b" " * 65536
            chunk = b"%x\r\n%s\r\n" % (len(block), block)
            self.wfile.write(b"1\r\n{\r\n")
            try:
                while not self.server.api._stopping.is_set():
                    self.wfile.write(chunk)
            except OSError:
                pass  # the client hung up, as it should
            self.close_connection = True
            return True
        if action == "gone":
            self._send(410, json.dumps(status_body(410, "Expired", EXPIRED_CONTINUE)).encode())
            return True
        if action == "dense":
            items = b",".join([b"{}"] * max(1, fault.size // 3))
            self._send(200, b'{"kind":"List","apiVersion":"v1","metadata":{},"items":[' + items + b"]}")
            return True
        if action == "endless-continue":
            first = Request(
                request.method,
                request.path,
                {k: v for k, v in request.query.items() if k != "continue"},
                request.authorization,
            )
            page = json.loads(self.server.api.respond(first)[1])
            page["items"] = page.get("items", []) * fault.copies
            page["metadata"]["continue"] = base64.urlsafe_b64encode(str(time.monotonic_ns()).encode()).decode()
            self._send(200, json.dumps(page).encode())
            return True
        try:
            code, reply = self.server.api.respond(request)
        except ApiError as exc:
            code, reply = exc.code, json.dumps(exc.body).encode()
        if isinstance(reply, WatchStream):  # a watch accepted, then silent, or ended at once
            if action not in ("stall", "end"):
                raise ValueError(f"fault {action!r} does not apply to a watch")
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if action == "end":
                self.wfile.write(b"0\r\n\r\n")
                return True
            self.server.api.wait_stopping(60)
            self.close_connection = True
            return True
        body = reply
        if action == "truncate":
            self._send(code, body[: len(body) // 2], length=len(body))
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return True
        if action == "drip":
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self._drip(body, 1.0)
            return True
        if action == "malformed":
            self._send(200, b'{"kind": "NodeList", "items": [{"metadata": {"name": "kind-worker"}, ]')
            return True
        if action == "not-utf8":
            self._send(200, b'{"kind": "NodeList", "items": [{"metadata": {"name": "kind-\xff\xfeworker"}}]}')
            return True
        raise ValueError(f"unknown fault {action!r}")

    do_GET = _handle
    do_POST = _handle
    do_PUT = _handle
    do_PATCH = _handle
    do_DELETE = _handle


class SilentServer:
    """A TCP server that accepts connections and never says a word (not even a TLS handshake)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.connections: list[socket.socket] = []
        self._stop = threading.Event()

    def __enter__(self) -> SilentServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
                self.connections.append(connection)
            except OSError:
                continue

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        time.sleep(0.15)
        for connection in self.connections:
            connection.close()
        self.sock.close()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.sock.getsockname()[1]}"


def free_port() -> int:
    """A loopback port that nothing listens on (for connection-refused tests)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
