"""Credentials never reach any output: stdout, stderr, every report format, snapshots, error paths (issue 7)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import trustme

from nodename_lint.report import FORMATS
from tests.apiserver import ApiServer, cluster_entry, free_port, kind_cluster, write_kubeconfig
from tests.conftest import run_cli

TOKEN = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
PASSWORD = "pa55-Wd-4b1c6e2f9a7d"
USERNAME = "alice"

BROKEN_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: pinned
spec:
  nodeName: kind-wroker
  containers:
    - name: app
      image: nginx:1.27
      resources: {requests: {cpu: "500"}}
"""


@pytest.fixture
def secrets_setup(tmp_path: Path):
    ca = trustme.CA()
    client = ca.issue_cert("alice@example.com")
    key_pem = client.private_key_pem.bytes()
    cert_pem = client.cert_chain_pems[0].bytes()
    (tmp_path / "client.key").write_bytes(key_pem)
    (tmp_path / "client.crt").write_bytes(cert_pem)
    with ApiServer(**kind_cluster(), tokens=[TOKEN], ca=ca) as server:
        good = cluster_entry(server.url, ca.cert_pem.bytes())
        config = write_kubeconfig(
            tmp_path / "kubeconfig",
            clusters={
                "good": good,
                "stopped": cluster_entry(f"https://127.0.0.1:{free_port()}", ca.cert_pem.bytes()),
                "wrong-ca": cluster_entry(server.url, trustme.CA().cert_pem.bytes()),
            },
            users={
                "everything": {
                    "token": TOKEN,
                    "username": USERNAME,
                    "password": PASSWORD,
                    "client-certificate-data": base64.b64encode(cert_pem).decode(),
                    "client-key-data": base64.b64encode(key_pem).decode(),
                },
                "basic": {"username": USERNAME, "password": PASSWORD},
                "key-file": {"client-certificate": "client.crt", "client-key": "client.key", "token": TOKEN},
            },
            contexts={
                "ok": ("good", "everything"),
                "basic-401": ("good", "basic"),
                "refused": ("stopped", "key-file"),
                "tls": ("wrong-ca", "everything"),
                "key-file": ("good", "key-file"),
            },
            current="ok",
        )
        text = config.read_text()
        # a common mistake: the token one level too high, which the client quotes back in its error
        config.write_text(
            text.replace(
                "users:\n", f"users:\n- name: misnested\n  token: {TOKEN}\n  password: {PASSWORD}\n", 1
            ).replace("contexts:\n", "contexts:\n- name: misnested\n  context: {cluster: good, user: misnested}\n", 1)
        )
        secrets = [
            TOKEN,
            PASSWORD,
            base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode(),
            base64.b64encode(key_pem).decode(),
        ]
        secrets += [line for line in key_pem.decode().splitlines() if "-----" not in line and len(line) > 16]
        yield server, config, secrets


def _assert_clean(texts: dict[str, str], secrets: list[str]) -> None:
    for where, text in texts.items():
        for secret in secrets:
            assert secret not in text, f"a credential leaked into {where}"


@pytest.mark.parametrize(
    "context,expected_code",
    [
        ("ok", 1),
        ("key-file", 1),
        ("basic-401", 2),
        ("refused", 2),
        ("tls", 2),
        ("misnested", 2),
    ],
)
def test_no_credential_in_any_output(tmp_path: Path, secrets_setup, context: str, expected_code: int) -> None:
    _, config, secrets = secrets_setup
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(BROKEN_POD)
    reports = {name: tmp_path / f"report.{name}" for name in FORMATS}
    args = [str(manifest), "--kubeconfig", str(config), "--context", context, "--request-timeout", "2"]
    for name in FORMATS:
        args += ["--format", name, f"--output-{name}", str(reports[name])]
    result = run_cli(*args)
    assert result.returncode == expected_code, result.stderr
    assert "Traceback" not in result.stderr
    outputs = {"stdout": result.stdout, "stderr": result.stderr}
    outputs.update({f"{name} report": path.read_text() for name, path in reports.items() if path.exists()})
    if expected_code == 1:
        assert len(outputs) == 2 + len(FORMATS)  # every format was written
        assert "kind-wroker" in outputs["json report"]
    else:
        assert result.stderr.startswith("nodename-lint: ")
    # stdout as well, with every format printed there
    plain = run_cli(*[a for a in args if not a.startswith("--output-") and not a.startswith(str(tmp_path / "report"))])
    outputs.update({"stdout (all formats)": plain.stdout, "stderr (all formats)": plain.stderr})
    _assert_clean(outputs, secrets)


def test_no_credential_in_snapshot_output(tmp_path: Path, secrets_setup) -> None:
    server, config, secrets = secrets_setup
    for context in ("ok", "basic-401", "misnested"):
        target = tmp_path / f"{context}.yaml"
        result = run_cli("snapshot", "--kubeconfig", str(config), "--context", context, "-o", str(target))
        texts = {"stdout": result.stdout, "stderr": result.stderr}
        if target.exists():
            texts["snapshot"] = target.read_text()
        _assert_clean(texts, secrets)
    assert server.methods == {"GET"}


def test_no_credential_when_python_warnings_and_logging_are_loud(tmp_path: Path, secrets_setup) -> None:
    """PYTHONWARNINGS=always and Python dev mode (every warning shown): still nothing secret on stderr."""
    _, config, secrets = secrets_setup
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(BROKEN_POD)
    result = run_cli(
        str(manifest),
        "--kubeconfig",
        str(config),
        "--context",
        "basic-401",
        env={"PYTHONWARNINGS": "always", "PYTHONDEVMODE": "1"},
    )
    assert result.returncode == 2
    _assert_clean({"stdout": result.stdout, "stderr": result.stderr}, secrets)
