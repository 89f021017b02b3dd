"""The official `kubernetes` client, loaded for what a run uses: its Configuration and its REST layer.

Any `import kubernetes.*` runs kubernetes/__init__.py first, which imports the whole client (every
API class and model), kubernetes.config with oauthlib, requests and google-auth, dynamic, watch and
stream: 0.2 to 0.27 s CPU, as long as an offline lint of 1,000 manifests. A run sends its GETs
through the client's REST layer (the urllib3 pool built from a Configuration: CA, client
certificate, TLS server name), so those two modules are imported under package modules whose
`__init__` has not run. When a credential needs the client's kubeconfig loader (an exec plugin,
an auth provider, anything `static_credentials` does not know), `kube_config()` runs the package
`__init__`s first, as a plain `import kubernetes` would have. If the narrow import fails on some
client version, the normal import is used.

The packages are found as `import kubernetes` finds them (the same sys.path): nothing here adds a
place to import from.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import importlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any

from .kubeconfig import Kubeconfig

_PACKAGES = ("kubernetes", "kubernetes.client")  # parents first
_uninitialised: dict[str, ModuleType] = {}  # package modules whose __init__ has not run yet

# What `static_credentials` reads, as KubeConfigLoader reads it (_load_user_token, _load_user_pass_token,
# _load_cluster_info); any other key (exec, auth-provider, proxy-url, ...) is left to the client's loader.
STATIC_USER_KEYS = frozenset(
    {"token", "tokenFile", "client-certificate", "client-certificate-data", "client-key", "client-key-data"}
    | {"username", "password"}
)
STATIC_CLUSTER_KEYS = frozenset(
    {"server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify", "tls-server-name"}
)


def rest_modules() -> tuple[Any, Any]:
    """kubernetes.client.configuration and kubernetes.client.rest, without the package `__init__`s if they
    have not run yet."""
    if "kubernetes" not in sys.modules:
        try:
            _add_uninitialised_packages()
            return (
                importlib.import_module("kubernetes.client.configuration"),
                importlib.import_module("kubernetes.client.rest"),
            )
        except Exception:  # another layout: forget what was loaded under the bare packages, import normally
            _uninitialised.clear()
            for name in [name for name in sys.modules if name == "kubernetes" or name.startswith("kubernetes.")]:
                del sys.modules[name]
    import kubernetes.client.configuration
    import kubernetes.client.rest

    return kubernetes.client.configuration, kubernetes.client.rest


def kube_config() -> Any:
    """The client's whole `kubernetes.config` (its kubeconfig and in-cluster loaders); importing it completes
    the packages it needs (see `_complete`)."""
    import kubernetes.config

    return kubernetes.config


def _add_uninitialised_packages() -> None:
    """The packages as module objects with their search path, found like `import` finds them, not executed.

    Until its `__init__` runs, each answers a name it lacks (`from kubernetes.client import ApiClient`, by
    the client's own kubeconfig loader or by any other code in this process) by running its `__init__` first.
    """
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            raise ImportError(f"{name} is not a package")
        module = importlib.util.module_from_spec(spec)
        module.__getattr__ = partial(_complete, module)  # type: ignore[method-assign]
        sys.modules[name] = module
        _uninitialised[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)


def _complete(module: ModuleType, name: str) -> Any:
    """Run the package's `__init__` (once), then answer the name as the whole package would."""
    if _uninitialised.pop(module.__name__, None) is not None:
        del module.__dict__["__getattr__"]  # the package's own __init__ may define one (lazy client classes)
        assert module.__spec__ is not None and module.__spec__.loader is not None
        module.__spec__.loader.exec_module(module)
        return getattr(module, name)
    raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")


# --- credentials the client's loader would read without running anything ----------------------------
@dataclass(frozen=True)
class StaticCredentials:
    """What KubeConfigLoader would put in the Configuration for a user with a fixed credential."""

    host: str
    authorization: str | None  # the Authorization header: "Bearer TOKEN" or "Basic ..."
    ca_file: str | None
    cert_file: str | None
    key_file: str | None
    verify_ssl: bool | None  # None: the Configuration's default
    tls_server_name: str | None

    def apply(self, configuration: Any) -> None:
        configuration.host = self.host
        if self.ca_file is not None:
            configuration.ssl_ca_cert = self.ca_file
        if self.cert_file is not None:
            configuration.cert_file = self.cert_file
        if self.key_file is not None:
            configuration.key_file = self.key_file
        if self.verify_ssl is not None:
            configuration.verify_ssl = self.verify_ssl
        if self.tls_server_name is not None:
            configuration.tls_server_name = self.tls_server_name


def static_credentials(resolved: Kubeconfig) -> StaticCredentials | None:
    """The chosen context's server and fixed credential (token, token file, client certificate, basic auth),
    read as the client's KubeConfigLoader reads them; None when the client's loader must do it (exec plugins,
    auth providers, other keys, or an entry it would refuse: its own message then says why)."""
    cluster, user = resolved.cluster_entry, resolved.user_entry
    if not resolved.every_file_has_a_config or not set(cluster) <= STATIC_CLUSTER_KEYS:
        return None
    fields: dict[str, Any] = {}
    if user is not None:
        fields = user.get("user") if isinstance(user, dict) else None  # type: ignore[assignment]
        if not isinstance(fields, dict) or not set(fields) <= STATIC_USER_KEYS:
            return None
    if not all(isinstance(value, str) for value in fields.values()):
        return None
    server, insecure = cluster.get("server"), cluster.get("insecure-skip-tls-verify")
    strings = ("certificate-authority", "certificate-authority-data", "tls-server-name")
    if not isinstance(server, str) or not isinstance(insecure, bool | None):
        return None
    if not all(isinstance(cluster.get(key, ""), str) for key in strings):
        return None
    try:
        authorization = _authorization(fields, resolved.user_folder)
        host = server.rstrip("/")
        ca_file = cert_file = key_file = None
        if host.startswith("https"):  # the client reads the certificates for https servers only
            ca_file = _as_file(cluster, "certificate-authority", resolved.cluster_folder)
            cert_file = _as_file(fields, "client-certificate", resolved.cluster_folder)
            key_file = _as_file(fields, "client-key", resolved.cluster_folder)
    except (OSError, ValueError, UnicodeDecodeError):  # the client's loader says what is wrong
        return None
    verify = None if insecure is None else not insecure
    return StaticCredentials(host, authorization, ca_file, cert_file, key_file, verify, cluster.get("tls-server-name"))


def _authorization(user: dict[str, str], folder: str) -> str | None:
    """token, else the file tokenFile names, else username and password (KubeConfigLoader's order)."""
    token = user.get("token")
    if "token" not in user and "tokenFile" in user:  # a token key, even empty, hides tokenFile
        with open(os.path.normpath(os.path.join(folder, user["tokenFile"])), encoding="utf-8") as handle:
            token = handle.read()
    if token:
        return f"Bearer {token}"
    if "username" in user and "password" in user:
        pair = f"{user['username']}:{user['password']}".encode("latin-1")  # as urllib3.make_headers encodes it
        return "Basic " + base64.b64encode(pair).decode()
    return None


def _as_file(entry: dict[str, Any], key: str, folder: str) -> str | None:
    """KEY-data (base64) written to a private temporary file, else the file KEY names, as FileOrData.as_file."""
    if f"{key}-data" in entry:  # even empty: then the file is not read either
        data = entry[f"{key}-data"]
        return _private_file(base64.standard_b64decode(data.encode())) if data else None
    if key in entry:
        path = os.path.normpath(os.path.join(folder, entry[key]))
        if not os.path.isfile(path):
            raise ValueError(f"no such file: {path}")
        return path
    return None


_written: list[str] = []


def _private_file(content: bytes) -> str:
    """A file only this user can read, removed when the process ends (urllib3 reads it at each connection)."""
    if not _written:
        atexit.register(_remove_written)
    handle, path = tempfile.mkstemp(prefix="nodename-lint-")
    _written.append(path)
    with os.fdopen(handle, "wb") as out:
        out.write(content)
    return path


def _remove_written() -> None:
    for path in _written:
        with contextlib.suppress(OSError):
            os.remove(path)
    _written.clear()
