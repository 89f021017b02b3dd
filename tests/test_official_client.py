"""The fixed credentials a live run reads without the client's kubeconfig loader are what that loader reads.

For each kubeconfig, the Configuration the official `kubernetes.config.load_kube_config` fills and the one
`official.static_credentials` fills must agree on the server, the TLS files (by content), the TLS
settings and the Authorization header; anything the static reader does not know goes to the official loader.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
import trustme
import yaml

from nodename_lint.cluster.kubeconfig import resolve_kubeconfig
from nodename_lint.cluster.official import static_credentials
from nodename_lint.cluster.redaction import Redactor

CA = trustme.CA()
CLIENT = CA.issue_cert("alice@example.com")
CA_PEM, CERT_PEM, KEY_PEM = CA.cert_pem.bytes(), CLIENT.cert_chain_pems[0].bytes(), CLIENT.private_key_pem.bytes()
SERVER = "https://127.0.0.1:6443/"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


STATIC_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {  # name: (cluster, user)
    "token, CA data": ({"server": SERVER, "certificate-authority-data": b64(CA_PEM)}, {"token": "tok-1234567890"}),
    "token file, CA file": (
        {"server": SERVER, "certificate-authority": "certs/ca.crt"},
        {"tokenFile": "secrets/token"},
    ),
    "empty token hides the token file": (
        {"server": SERVER, "certificate-authority": "certs/ca.crt"},
        {"token": "", "tokenFile": "secrets/token", "username": "alice", "password": "pa55-w0rd-éé"},
    ),
    "client certificate data": (
        {"server": SERVER, "certificate-authority-data": b64(CA_PEM), "tls-server-name": "kubernetes"},
        {"client-certificate-data": b64(CERT_PEM), "client-key-data": b64(KEY_PEM)},
    ),
    "client certificate files": (
        {"server": SERVER, "certificate-authority": "certs/ca.crt"},
        {"client-certificate": "certs/client.crt", "client-key": "certs/client.key", "token": "tok-0987654321"},
    ),
    "basic auth, insecure": (
        {"server": SERVER, "insecure-skip-tls-verify": True},
        {"username": "alice", "password": "pa55-w0rd"},
    ),
    "plain http, no user": ({"server": "http://127.0.0.1:8080"}, {}),
    "no credential at all": ({"server": SERVER, "insecure-skip-tls-verify": False}, {}),
}
LOADER_CASES: dict[str, tuple[dict[str, Any], Any]] = {  # what only the client's loader reads (or refuses)
    "exec plugin": ({"server": SERVER}, {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x"}}),
    "auth provider": ({"server": SERVER}, {"auth-provider": {"name": "oidc", "config": {}}}),
    "proxy": ({"server": SERVER, "proxy-url": "http://proxy:3128"}, {"token": "tok-1234567890"}),
    "missing CA file": ({"server": SERVER, "certificate-authority": "nowhere.crt"}, {"token": "tok-1234567890"}),
    "CA data not base64": ({"server": SERVER, "certificate-authority-data": "abc"}, {"token": "tok-1234567890"}),
    "token not a string": ({"server": SERVER}, {"token": 12345}),
    "user not a mapping": ({"server": SERVER}, None),
}


def _write(tmp_path: Path, cluster: dict[str, Any], user: Any) -> Path:
    """The cluster in one file, the user and the context in another folder's file (KUBECONFIG=a:b)."""
    (tmp_path / "a" / "certs").mkdir(parents=True)
    (tmp_path / "b" / "secrets").mkdir(parents=True)
    for folder in ("a", "b"):  # relative paths start at the folder of the file that defines the entry
        (tmp_path / folder / "certs").mkdir(exist_ok=True)
        (tmp_path / folder / "certs" / "ca.crt").write_bytes(CA_PEM if folder == "a" else b"wrong")
        (tmp_path / folder / "certs" / "client.crt").write_bytes(CERT_PEM if folder == "a" else b"wrong")
        (tmp_path / folder / "certs" / "client.key").write_bytes(KEY_PEM if folder == "a" else b"wrong")
    (tmp_path / "b" / "secrets" / "token").write_text("tok-from-file-5f3c2a1b")
    first = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "c", "cluster": cluster}]}
    user_entry = {"name": "u"} if user is None else {"name": "u", "user": user}
    second = {
        "apiVersion": "v1",
        "kind": "Config",
        "users": [user_entry],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    (tmp_path / "a" / "config").write_text(yaml.safe_dump(first), encoding="utf-8")
    (tmp_path / "b" / "config").write_text(yaml.safe_dump(second), encoding="utf-8")
    return tmp_path


def _content(path: str | None) -> bytes | None:
    return None if path is None else Path(path).read_bytes()


@pytest.mark.parametrize("case", sorted(STATIC_CASES))
def test_static_credentials_are_what_the_clients_loader_reads(tmp_path: Path, case: str) -> None:
    from kubernetes import client, config

    folder = _write(tmp_path, *STATIC_CASES[case])
    paths = [str(folder / "a" / "config"), str(folder / "b" / "config")]
    official = client.Configuration()
    config.load_kube_config(
        config_file=os.pathsep.join(paths), context="ctx", client_configuration=official, persist_config=False
    )
    static = static_credentials(resolve_kubeconfig(paths, "ctx", Redactor()))
    assert static is not None
    ours = client.Configuration()
    static.apply(ours)
    for field in ("host", "verify_ssl", "tls_server_name"):
        assert getattr(ours, field) == getattr(official, field), field
    for field in ("ssl_ca_cert", "cert_file", "key_file"):
        assert _content(getattr(ours, field)) == _content(getattr(official, field)), field
    headers = {s["key"]: s["value"] for s in official.auth_settings().values() if s.get("in") == "header"}
    assert static.authorization == headers.get("authorization"), "the Authorization header"
    if static.key_file is not None and "client-key-data" in STATIC_CASES[case][1]:
        assert os.stat(static.key_file).st_mode & 0o077 == 0, "a key written from the kubeconfig is private"


@pytest.mark.parametrize("case", sorted(LOADER_CASES))
def test_other_credentials_are_left_to_the_clients_loader(tmp_path: Path, case: str) -> None:
    folder = _write(tmp_path, *LOADER_CASES[case])
    paths = [str(folder / "a" / "config"), str(folder / "b" / "config")]
    assert static_credentials(resolve_kubeconfig(paths, "ctx", Redactor())) is None
