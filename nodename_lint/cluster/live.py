"""Cluster state from a live API server, through the official `kubernetes` client.

Only used when the user asks for a live cluster (--context, --kubeconfig, --live, --in-cluster, or
`snapshot`); the `kubernetes` package is imported here and nowhere else. Guarantees:

- read-only: every request goes through `ApiConnection._get`, which can only send GET;
- bounded time: connect and read timeouts on every request, a bounded number of retries for
  429/5xx, pagination restarted at most once after 410 Gone;
- the number of requests grows with what the manifests name (nodes, Pods), not with the cluster:
  node pages, one namespace list, one Pod list per referenced node and per manifest Pod;
- no credential ever reaches the output: every message built from an exception is passed through
  `Redactor`, which knows every secret of the kubeconfig.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import yaml

from ..sources import STDIN, Source, UsageError
from .state import ClusterState

DEFAULT_TIMEOUT = 5.0  # seconds, for connecting and for each read
PAGE_SIZE = 500  # kubectl's --chunk-size default
PARALLEL_REQUESTS = 4  # Pod lists in flight at once
RETRIES = 3  # extra attempts after 429, 500, 502, 503, 504
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_BACKOFF = 2.0  # seconds; also caps a server's Retry-After
NON_TERMINATED = "status.phase!=Succeeded,status.phase!=Failed"
RUNTIME_CLASSES = "/apis/node.k8s.io/v1/runtimeclasses"
RBAC_EXAMPLE = "examples/rbac/nodename-lint-readonly.yaml"
SECRET_USER_FIELDS = ("token", "password", "client-key-data")
SECRET_PROVIDER_FIELDS = ("id-token", "refresh-token", "client-secret", "access-token")
_DICT_REPR = re.compile(r"/?\{(?:[^{}]|\{[^{}]*\})*\}")


class ClusterUnavailable(UsageError):
    """The cluster cannot be read in a way the run could trust (exit code 2)."""


@dataclass(frozen=True)
class LiveOptions:
    """How to reach the cluster, as given on the command line."""

    kubeconfig: str | None = None
    context: str | None = None
    in_cluster: bool = False
    request_timeout: float = DEFAULT_TIMEOUT


@dataclass
class Referenced:
    """What the manifests name: the nodes they pin Pods to and the Pods they define."""

    nodes: set[str] = field(default_factory=set)
    pods: set[tuple[str, str]] = field(default_factory=set)  # (namespace, name)
    # a Pod the scheduler places asks for host ports: the ports in use on every node matter
    every_node: bool = False


class Forbidden(Exception):
    """A 403 for one verb on one resource: the run continues without that data."""

    def __init__(self, verb: str, resource: str, message: str) -> None:
        super().__init__(message)
        self.verb, self.resource, self.message = verb, resource, message

    def reason(self) -> str:
        return (f"the API server refused to {self.verb} {self.resource} ({self.message}); "
                f"grant {self.verb} on {self.resource} (see {RBAC_EXAMPLE})")


class Redactor:
    """Replaces every credential of the kubeconfig in a message; used on all exception texts."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()

    def add(self, value: Any) -> None:
        if isinstance(value, str) and len(value.strip()) >= 4:
            self.secrets.add(value.strip())
            for line in value.splitlines():  # a PEM key may be quoted one line at a time
                if len(line.strip()) >= 16 and "-----" not in line:
                    self.secrets.add(line.strip())

    def add_user(self, user: dict[str, Any], base_folder: str) -> None:
        """Every secret of a kubeconfig user entry (also when it is nested wrongly)."""
        if isinstance(user.get("user"), dict):
            self.add_user(user["user"], base_folder)
        for key in SECRET_USER_FIELDS:
            self.add(user.get(key))
        if isinstance(user.get("client-key-data"), str):
            with contextlib.suppress(ValueError):  # not base64: the raw text was added above
                self.add(base64.b64decode(user["client-key-data"]).decode("utf-8", "replace"))
        if isinstance(user.get("username"), str) and isinstance(user.get("password"), str):
            self.add(base64.b64encode(f"{user['username']}:{user['password']}".encode()).decode())
        key_file = user.get("client-key")
        if isinstance(key_file, str):
            try:
                with open(os.path.join(base_folder, os.path.expanduser(key_file)), encoding="utf-8") as handle:
                    self.add(handle.read())
            except (OSError, UnicodeDecodeError):
                pass
        provider = user.get("auth-provider")
        if isinstance(provider, dict) and isinstance(provider.get("config"), dict):
            for key in SECRET_PROVIDER_FIELDS:
                self.add(provider["config"].get(key))
        plugin = user.get("exec")
        if isinstance(plugin, dict):
            for variable in plugin.get("env") or []:
                if isinstance(variable, dict):
                    self.add(variable.get("value"))

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "<redacted>")
        return text


# --- kubeconfig resolution, as kubectl does it ----------------------------------------------------
@dataclass
class Kubeconfig:
    """The merged kubeconfig files and the context chosen from them."""

    paths: list[str]
    context: str
    cluster: str
    namespace: str | None
    insecure: bool


def kubeconfig_paths(flag: str | None) -> list[str]:
    """--kubeconfig, else every file of KUBECONFIG that exists, else ~/.kube/config."""
    if flag:
        if not os.path.isfile(flag):
            raise ClusterUnavailable(f"--kubeconfig {flag}: no such file")
        return [flag]
    env = os.environ.get("KUBECONFIG")
    if env:
        paths = [path for path in env.split(os.pathsep) if path and os.path.isfile(os.path.expanduser(path))]
        if not paths:
            raise ClusterUnavailable(f"none of the files in KUBECONFIG exists ({env})")
        return [os.path.expanduser(path) for path in paths]
    default = os.path.expanduser(os.path.join("~", ".kube", "config"))
    if not os.path.isfile(default):
        raise ClusterUnavailable(f"no kubeconfig: {default} does not exist and KUBECONFIG is not set "
                                 "(use --kubeconfig FILE, or --in-cluster inside a Pod)")
    return [default]


def resolve_kubeconfig(paths: list[str], wanted_context: str | None, redact: Redactor) -> Kubeconfig:
    """Merge the files like kubectl: the first file to define a name or current-context wins."""
    contexts: dict[str, dict[str, Any]] = {}
    clusters: dict[str, dict[str, Any]] = {}
    current = ""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except OSError as exc:
            raise ClusterUnavailable(f"kubeconfig {path}: cannot read it: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
            raise ClusterUnavailable(f"kubeconfig {path}{where}: not valid YAML") from None
        if data is None:
            continue
        if not isinstance(data, dict):
            raise ClusterUnavailable(f"kubeconfig {path}: not a kubeconfig (expected a mapping with clusters, users, contexts)")
        base = os.path.dirname(os.path.abspath(path))
        for entry in data.get("users") or []:
            if isinstance(entry, dict):
                redact.add_user(entry, base)
        for section, target, key in (("contexts", contexts, "context"), ("clusters", clusters, "cluster")):
            for entry in data.get(section) or []:
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    value = entry.get(key)
                    target.setdefault(entry["name"], value if isinstance(value, dict) else {})
        if not current and isinstance(data.get("current-context"), str):
            current = data["current-context"]
    where = os.pathsep.join(paths)
    name = wanted_context or current
    available = ", ".join(sorted(contexts)) or "none"
    if not name:
        raise ClusterUnavailable(f"kubeconfig {where} has no current-context; pick one with --context NAME "
                                 f"(contexts: {available})")
    if name not in contexts:
        raise ClusterUnavailable(f"context {name!r} is not in kubeconfig {where} (contexts: {available})")
    context = contexts[name]
    cluster_name = context.get("cluster")
    cluster = clusters.get(cluster_name) if isinstance(cluster_name, str) else None
    if cluster is None or not isinstance(cluster_name, str):
        raise ClusterUnavailable(f"context {name!r} in kubeconfig {where} names cluster {cluster_name!r}, "
                                 "which is not defined there")
    namespace = context.get("namespace") if isinstance(context.get("namespace"), str) else None
    return Kubeconfig(paths, name, cluster_name, namespace or None, cluster.get("insecure-skip-tls-verify") is True)


# --- the connection -------------------------------------------------------------------------------
class ApiConnection:
    """One API server, reached with GET requests only, with timeouts, retries and clear errors."""

    def __init__(self, options: LiveOptions) -> None:
        from kubernetes import client, config  # the one place the client is imported

        self.timeout = options.request_timeout
        self.redact = Redactor()
        self.namespace: str | None = None
        configuration = client.Configuration()
        try:
            if options.in_cluster:
                config.load_incluster_config(client_configuration=configuration)
                self.source = "in-cluster service account"
                self._redact_in_cluster()
            else:
                resolved = resolve_kubeconfig(kubeconfig_paths(options.kubeconfig), options.context, self.redact)
                self.namespace = resolved.namespace
                self.source = f"context {resolved.context}"
                config.load_kube_config(config_file=os.pathsep.join(resolved.paths), context=resolved.context,
                                        client_configuration=configuration, persist_config=False)
                if resolved.insecure:
                    print(f"nodename-lint: warning: TLS verification is off for cluster {resolved.cluster} "
                          "(insecure-skip-tls-verify: true in the kubeconfig); the server's identity is not checked",
                          file=sys.stderr)
        except ClusterUnavailable:
            raise
        except Exception as exc:  # ConfigException and friends: their texts may quote the kubeconfig
            # the client names kubeconfig entries by their whole dict: drop those, then redact what is left
            detail = _DICT_REPR.sub("", _one_line(exc))
            raise ClusterUnavailable(self.redact(f"cannot use the cluster credentials: {detail}")) from None
        for value in configuration.api_key.values():
            self.redact.add(value)
            self.redact.add(value.split(" ", 1)[-1])
        configuration.retries = False  # retries are ours: bounded, and only for GET
        configuration.debug = False  # the client's debug log prints request headers (the token)
        self.host = configuration.host
        self.api = client.ApiClient(configuration)

    def _redact_in_cluster(self) -> None:
        from kubernetes.config.incluster_config import SERVICE_TOKEN_FILENAME

        try:
            with open(SERVICE_TOKEN_FILENAME, encoding="utf-8") as handle:
                self.redact.add(handle.read())
        except OSError:
            pass

    # --- single requests ----------------------------------------------------------------------
    def _get(self, path: str, query: dict[str, str]) -> dict[str, Any]:
        """GET path?query as JSON. Raises Forbidden for 403 and ClusterUnavailable for anything untrustworthy."""
        attempt = 0
        while True:
            status, headers, body = self._send(path, query)
            if status not in RETRY_STATUSES or attempt >= RETRIES:
                break
            delay = min(MAX_BACKOFF, 0.1 * 2 ** attempt)
            retry_after = headers.get("Retry-After", "")
            if retry_after.isdigit():
                delay = min(MAX_BACKOFF, float(retry_after))
            time.sleep(delay)
            attempt += 1
        what = _describe(path, query)
        if 200 <= status < 300:
            try:
                data = json.loads(body)
            except ValueError as exc:  # JSONDecodeError, or UnicodeDecodeError for bytes that are not UTF-8
                problem = (f"{exc.msg} at byte {exc.pos}" if isinstance(exc, json.JSONDecodeError)
                           else f"not UTF-8 at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else str(exc))
                raise ClusterUnavailable(f"the API server at {self.host} sent a reply that is not valid JSON for {what} "
                                         f"({problem}); the cluster state cannot be trusted") from None
            if not isinstance(data, dict):
                raise ClusterUnavailable(f"the API server at {self.host} sent an unexpected reply for {what}")
            return data
        message = _status_message(body) or headers.get("Reason", "") or f"HTTP {status}"
        if status == 401:
            raise ClusterUnavailable(f"the API server at {self.host} rejected the credentials of {self.source} "
                                     f"(401 Unauthorized): the token or certificate is wrong or expired; log in again "
                                     f"or pick another context")
        if status == 403:
            raise Forbidden("list" if not _is_get(path) else "get", _resource(path), self.redact(message))
        if status == 410:
            raise Gone(message)
        retried = f" after {attempt + 1} attempts" if attempt else ""
        raise ClusterUnavailable(self.redact(f"the API server at {self.host} answered {what} with HTTP {status}"
                                             f"{retried}: {message}"))

    def _send(self, path: str, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        import urllib3

        method, url, headers, _, _ = self.api.param_serialize(
            "GET", path, query_params=list(query.items()), header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                response = self.api.call_api(method, url, headers, _request_timeout=(self.timeout, self.timeout))
                body = response.read()
        except Exception as exc:
            raise ClusterUnavailable(self.redact(self._network_error(exc, _describe(path, query)))) from None
        return response.status, dict(response.headers or {}), body

    def _network_error(self, exc: BaseException, what: str) -> str:
        """One line that says what went wrong on the way to the server."""
        import urllib3.exceptions as u3

        host = urlsplit(self.host).hostname or self.host
        text = _one_line(exc)
        chain = _exception_chain(exc)
        if any(isinstance(e, u3.NameResolutionError) for e in chain) or "Name or service not known" in text \
                or "Temporary failure in name resolution" in text:
            return (f"cannot resolve the API server name {host!r} of {self.source} ({self.host}): "
                    "check the server in the kubeconfig or your DNS")
        if "certificate verify failed" in text:
            detail = text.split("certificate verify failed:")[-1].split("(_ssl")[0].strip(" )")
            return (f"TLS verification of the API server {self.host} failed ({detail}): its certificate does not match "
                    f"the certificate-authority or the server address of {self.source}; fix them in the kubeconfig")
        if "SSLError" in text or any(isinstance(e, u3.SSLError) for e in chain):
            return f"the TLS handshake with the API server {self.host} of {self.source} failed: {text}"
        if any(isinstance(e, ConnectionRefusedError) for e in chain) or "Connection refused" in text:
            return (f"cannot connect to the API server {self.host} of {self.source}: connection refused; "
                    "is the cluster running?")
        if any(isinstance(e, u3.ConnectTimeoutError) and not isinstance(e, u3.NewConnectionError) for e in chain):
            return (f"the API server {self.host} of {self.source} did not accept a connection within "
                    f"{self.timeout:g}s (--request-timeout)")
        if any(isinstance(e, (u3.ReadTimeoutError, TimeoutError)) for e in chain):
            return (f"the API server {self.host} did not answer {what} within {self.timeout:g}s (--request-timeout); "
                    "the cluster state cannot be read")
        if any(isinstance(e, u3.NewConnectionError) for e in chain):
            return f"cannot connect to the API server {self.host} of {self.source}: {text}"
        if any(isinstance(e, (u3.ProtocolError, u3.IncompleteRead)) for e in chain):
            return (f"the API server {self.host} broke off its reply to {what} ({text}); "
                    "the cluster state cannot be trusted")
        return f"cannot read {what} from the API server {self.host}: {text}"

    # --- lists --------------------------------------------------------------------------------
    def list_all(self, path: str, field_selector: str = "",
                 keep: Callable[[dict[str, Any]], Any] | None = None) -> list[Any]:
        """Every item of a list, page by page; a 410 on a continue token restarts the list once.

        `keep` turns each item into what is kept as its page arrives (audit trims Pods so), so a
        big list never sits in memory whole.
        """
        for restart in (False, True):
            items: list[Any] = []
            query = {"limit": str(PAGE_SIZE)}
            if field_selector:
                query["fieldSelector"] = field_selector
            try:
                while True:
                    page = self._get(path, query)
                    page_items = (item for item in page.get("items") or [] if isinstance(item, dict))
                    items.extend(map(keep, page_items) if keep else page_items)
                    token = (page.get("metadata") or {}).get("continue")
                    if not token:
                        return items
                    query = {**query, "continue": token}
            except Gone as exc:
                if restart:
                    raise ClusterUnavailable(f"the API server expired the list of {_describe(path, query)} twice "
                                             f"(410 Gone: {exc}); the cluster changes too fast to read a consistent list") from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.api.close()


class Gone(Exception):
    """410 Gone: the continue token expired."""


# --- what the rules need --------------------------------------------------------------------------
def referenced(sources: Iterable[Source], default_namespace: str, render_options: Any = None) -> Referenced:
    """Nodes and Pods the manifests name: a quick pre-scan that parses but runs no rule.

    Charts and kustomizations are built here too (RENDER_OPTIONS), so the nodes their objects name are read.
    """
    from ..documents import iter_documents
    from ..model import objects_in
    from ..podspec import pinned_node
    from ..render import RenderOptions
    from ..render.build import render
    from ..sources import read_blocks

    found = Referenced()
    for source in sources:
        if source.path == STDIN:
            _buffer_stdin()
        try:
            if source.render:
                documents = render(source, render_options or RenderOptions(), default_namespace).documents
            else:
                documents = list(iter_documents(read_blocks(source)))
        except (OSError, UnicodeDecodeError):
            continue  # the lint run reports it
        finally:
            if source.path == STDIN:
                sys.stdin.buffer.seek(0)  # the lint run reads it again
        for document in documents:
            if document.error is not None:
                continue
            for obj in objects_in(source.display, document, default_namespace=default_namespace,
                                  is_static_pod=source.is_static_pod):
                try:
                    node = pinned_node(obj)
                    if node:
                        found.nodes.add(node)
                    elif not found.every_node and _scheduled_with_host_ports(obj):
                        found.every_node = True
                    if obj.is_pod and not source.is_static_pod and isinstance(obj.name, str) and obj.name:
                        found.pods.add((obj.namespace or default_namespace, obj.name))
                except Exception:  # an unreadable object is the lint run's to report
                    continue
    return found


def _scheduled_with_host_ports(obj: Any) -> bool:
    """A Pod or template the scheduler places (no-node-fits checks it) that asks for host ports."""
    from ..scheduling import host_ports

    spec = obj.pod_spec
    return bool(spec) and not obj.is_static_pod and obj.kind != "DaemonSet" \
        and bool(host_ports(spec, default_from_host_network=True))


def _buffer_stdin() -> None:
    """Read stdin once into memory so the lint run can read it again after the pre-scan."""
    import io

    if not isinstance(getattr(sys.stdin, "buffer", None), io.BytesIO):
        data = sys.stdin.buffer.read()
        sys.stdin = io.TextIOWrapper(io.BytesIO(data))


class LiveCluster:
    """A connection plus what the run reads with it."""

    def __init__(self, options: LiveOptions) -> None:
        self.connection = ApiConnection(options)

    @property
    def namespace(self) -> str | None:
        """The kubeconfig context's namespace: kubectl's default for objects that set none."""
        return self.connection.namespace

    @property
    def source(self) -> str:
        return self.connection.source

    def _read(self, unavailable: dict[str, str], kind: str, read: Callable[[], Any]) -> Any:
        try:
            return read()
        except Forbidden as exc:
            unavailable[kind] = exc.reason()
            return None

    def state_for(self, wanted: Referenced) -> ClusterState:
        """Nodes, namespaces, and only the Pods the rules need for these manifests."""
        conn = self.connection
        unavailable: dict[str, str] = {}
        try:
            nodes = self._read(unavailable, "nodes", lambda: conn.list_all("/api/v1/nodes"))
            namespaces = self._read(unavailable, "namespaces", lambda: conn.list_all("/api/v1/namespaces"))
            existing = {(n.get("metadata") or {}).get("name") for n in nodes} if nodes is not None else None
            pod_nodes = sorted(wanted.nodes if existing is None else wanted.nodes & existing)
            pods = self._read(unavailable, "pods",
                              lambda: self._pods(None if wanted.every_node else pod_nodes, sorted(wanted.pods)))
            runtime_classes = self._read(unavailable, "runtime_classes", lambda: conn.list_all(RUNTIME_CLASSES))
        finally:
            conn.close()
        known = frozenset(pod_nodes) if pods is not None and not wanted.every_node else None
        return self._state(nodes, namespaces, pods, known, unavailable, runtime_classes)

    def whole_state(self) -> ClusterState:
        """Every node, namespace and non-terminated Pod: for a client that reads once and lints many
        documents not known in advance (the language server)."""
        conn = self.connection
        unavailable: dict[str, str] = {}
        try:
            nodes = self._read(unavailable, "nodes", lambda: conn.list_all("/api/v1/nodes"))
            namespaces = self._read(unavailable, "namespaces", lambda: conn.list_all("/api/v1/namespaces"))
            pods = self._read(unavailable, "pods", lambda: conn.list_all("/api/v1/pods", NON_TERMINATED))
            runtime_classes = self._read(unavailable, "runtime_classes", lambda: conn.list_all(RUNTIME_CLASSES))
        finally:
            conn.close()
        return self._state(nodes, namespaces, pods, None, unavailable, runtime_classes)

    def _state(self, nodes: Any, namespaces: Any, pods: Any, pod_nodes: frozenset[str] | None,
               unavailable: dict[str, str], runtime_classes: Any) -> ClusterState:
        from .from_file import StateError, state_from_objects

        if "pods" in unavailable:
            unavailable["live-pods"] = unavailable["pods"]  # nodename-immutable reads the same Pods
        try:
            return state_from_objects(self.source, nodes=nodes, namespaces=namespaces, pods=pods,
                                      pod_nodes=pod_nodes, unavailable=unavailable or None,
                                      runtime_classes=runtime_classes)
        except StateError as exc:
            raise ClusterUnavailable(f"the API server at {self.connection.host} returned an object nodename-lint "
                                     f"cannot read ({exc}); the cluster state cannot be trusted") from None

    def _pods(self, nodes: list[str] | None, identities: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """The non-terminated Pods on each node (None: on every node, in one list), then the manifests'
        Pods not found there."""
        pods: dict[tuple[str, str], dict[str, Any]] = {}
        lists = [("/api/v1/pods", NON_TERMINATED)] if nodes is None else \
            [("/api/v1/pods", f"spec.nodeName={node},{NON_TERMINATED}") for node in nodes]
        for found in self._parallel(lists):
            pods.update((_pod_key(pod), pod) for pod in found)
        lookups = [(f"/api/v1/namespaces/{namespace}/pods", f"metadata.name={name}")
                   for namespace, name in identities if (namespace, name) not in pods]
        for found in self._parallel(lookups):
            pods.update((_pod_key(pod), pod) for pod in found)
        return list(pods.values())

    def _parallel(self, lists: list[tuple[str, str]]) -> list[list[dict[str, Any]]]:
        """Several lists at once (a few connections, like kubectl); the first error cancels the rest."""
        from concurrent.futures import ThreadPoolExecutor

        if len(lists) <= 1:
            return [self.connection.list_all(*query) for query in lists]
        pool = ThreadPoolExecutor(max_workers=PARALLEL_REQUESTS)
        try:
            return list(pool.map(lambda query: self.connection.list_all(*query), lists))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def snapshot(self) -> ClusterState:
        """Every node, namespace and non-terminated Pod, for `nodename-lint snapshot`."""
        from .from_file import StateError, state_from_objects

        conn = self.connection
        try:
            nodes = conn.list_all("/api/v1/nodes")
            namespaces = conn.list_all("/api/v1/namespaces")
            pods = conn.list_all("/api/v1/pods", NON_TERMINATED, keep=trim_pod)  # trimmed as pages arrive
            runtime_classes = conn.list_all(RUNTIME_CLASSES)
        except Forbidden as exc:
            raise ClusterUnavailable(f"cannot snapshot {self.source}: {exc.reason()}") from None
        finally:
            conn.close()
        try:
            return state_from_objects(self.source, nodes=nodes, namespaces=namespaces, pods=pods,
                                      runtime_classes=runtime_classes)
        except StateError as exc:
            raise ClusterUnavailable(f"the API server at {conn.host} returned an object nodename-lint cannot read "
                                     f"({exc}); the cluster state cannot be trusted") from None


def _pod_key(pod: dict[str, Any]) -> tuple[str, str]:
    metadata = pod.get("metadata") or {}
    return (metadata.get("namespace") or "", metadata.get("name") or "")


# --- snapshot trimming: keep what the rules read, drop the rest ---------------------------------
def _pick(source: Any, keys: Iterable[str]) -> dict[str, Any]:
    if not isinstance(source, dict):
        return {}
    return {key: source[key] for key in keys if source.get(key) not in (None, {}, [])}


def trim_node(node: dict[str, Any]) -> dict[str, Any]:
    status = node.get("status") or {}
    conditions = [_pick(c, ("type", "status")) for c in status.get("conditions") or [] if isinstance(c, dict)]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": _pick(node.get("metadata"), ("name", "labels")),
        "spec": _pick(node.get("spec"), ("taints", "unschedulable")),
        "status": {**_pick(status, ("allocatable",)), **({"conditions": conditions} if conditions else {})},
    }


def trim_namespace(namespace: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _pick(namespace.get("metadata"), ("name",)),
            "status": _pick(namespace.get("status"), ("phase",))}


def trim_pod(pod: dict[str, Any]) -> dict[str, Any]:
    spec = pod.get("spec") or {}

    def containers(key: str, fields: tuple[str, ...]) -> dict[str, Any]:
        listed = [_pick(c, fields) for c in spec.get(key) or [] if isinstance(c, dict)]
        return {key: listed} if listed else {}

    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": _pick(pod.get("metadata"), ("name", "namespace")),
        "spec": {**_pick(spec, ("nodeName", "overhead", "resources")),
                 **containers("initContainers", ("name", "resources", "restartPolicy", "ports")),
                 **containers("containers", ("name", "resources", "ports"))},
        "status": _pick(pod.get("status"), ("phase",)),
    }


def trim_runtime_class(runtime_class: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": _pick(runtime_class.get("metadata"), ("name",)),
            **_pick(runtime_class, ("handler", "overhead", "scheduling"))}


def write_snapshot(snapshot: dict[str, Any], output: str | None, source: str) -> None:
    """JSON when the file name ends in .json, else YAML with one object per line, to a file or stdout.

    Each item is a JSON flow mapping on its own line: valid YAML, written a hundred times faster
    than a block-style dump, and a change to one object is a one-line diff in a snapshot branch.
    """
    if output and output.endswith(".json"):
        text = json.dumps(snapshot, separators=(",", ":")) + "\n"
    else:
        lines = [f"# nodename-lint snapshot of {source}; lint against it with --cluster-state FILE",
                 "apiVersion: v1", "kind: List", 'metadata: {resourceVersion: ""}',
                 "items:" if snapshot["items"] else "items: []"]
        lines += [f"- {json.dumps(item, ensure_ascii=False, separators=(', ', ': '))}" for item in snapshot["items"]]
        text = "\n".join(lines) + "\n"
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)


# --- small helpers --------------------------------------------------------------------------------
def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = getattr(current, "reason", None) if isinstance(getattr(current, "reason", None), BaseException) \
            else (current.__cause__ or current.__context__)
    return chain


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _status_message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


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

