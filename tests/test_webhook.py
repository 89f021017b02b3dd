"""`nodename-lint webhook` against a fixed cluster state, over real TLS: verdicts, policy, and bad input.

The watched state (a live API server, watches, 410 Gone, lost watches) is tested in test_webhook_watch.py,
the install manifests in test_webhook_manifests.py.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodename_lint.cluster.from_file import load_state_file
from nodename_lint.webhook.review import NOT_AT_ADMISSION, WARNING_BUDGET
from tests.conftest import ROOT, run_cli
from tests.webhook import Certs, Client, command, config_file, deployment, make_certs, pod, review, running

STATE = ROOT / "examples" / "cluster" / "state.yaml"
MANIFESTS = ROOT / "examples" / "cluster" / "manifests"


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def state() -> Any:
    return load_state_file(str(STATE))


@pytest.fixture
def client(certs: Certs, state: Any) -> Iterator[Client]:
    with running(certs, state=state) as webhook:
        connection = Client(webhook.port, certs)
        yield connection
        connection.close()


def test_every_option_of_the_commands_is_documented() -> None:
    from nodename_lint.cli import main

    page = (ROOT / "docs" / "webhook.md").read_text(encoding="utf-8")
    webhook = main.commands["webhook"]
    for subcommand in (webhook, webhook.commands["manifests"]):  # type: ignore[attr-defined]
        for param in subcommand.params:
            for option in getattr(param, "opts", []):
                if option.startswith("--") and option != "--help":
                    assert f"`{option}" in page, option
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "nodename-lint webhook --tls-cert-file" in readme and "nodename-lint webhook manifests" in readme
    assert "docs/webhook.md" in readme


def _changed(**request: Any) -> dict[str, Any]:
    """A review of a Pod with some fields of its request replaced."""
    sent = review(pod())
    return {**sent, "request": {**sent["request"], **request}}


# --- verdicts ---------------------------------------------------------------------------------------
def test_a_pod_on_a_node_that_does_not_exist_is_denied_with_the_rules_message_and_fix(client: Client) -> None:
    answer = client.answer(pod("ghost", "kind-wroker"))
    assert answer["allowed"] is False
    status = answer["status"]
    assert status["code"] == 403 and status["reason"] == "Forbidden"
    assert status["message"].startswith("unknown-node: node kind-wroker does not exist in the cluster")
    assert "did you mean kind-worker?; fix: set spec.nodeName to kind-worker" in status["message"]


def test_a_template_with_nodename_and_an_invalid_node_name_are_denied(client: Client) -> None:
    answer = client.answer(deployment("web", "kind-worker"))
    assert answer["allowed"] is False and answer["status"]["message"].startswith("nodename-in-template: ")
    answer = client.answer(pod("bad", "Kind_Worker"))
    assert answer["allowed"] is False and answer["status"]["message"].startswith("invalid-node-name: ")


def test_what_the_kubelet_or_the_scheduler_would_do_comes_back_as_warnings(client: Client) -> None:
    answer = client.answer(pod("bigcpu", "kind-worker", cpu="100"))
    assert answer["allowed"] is True and "status" not in answer
    assert [w.split(":")[0] for w in answer["warnings"]] == ["insufficient-resources"]
    assert "OutOfcpu" in answer["warnings"][0]
    answer = client.answer(pod("evicted", "kind-worker3"))  # maintenance:NoExecute
    assert answer["allowed"] is True and any(w.startswith("untolerated-taint: ") for w in answer["warnings"])
    answer = client.answer(pod("nowhere", None, cpu="64"))
    assert answer["allowed"] is True and [w.split(":")[0] for w in answer["warnings"]] == ["no-node-fits"]


def test_a_pod_that_fits_is_allowed_without_a_word(client: Client) -> None:
    answer = client.answer(pod("fine", None))
    assert answer == {"uid": answer["uid"], "allowed": True}
    # pinned by hand to a good node: nodename-on-pod is info, below the default warn-on (warning)
    assert "warnings" not in client.answer(pod("pinned", "kind-worker"))


def test_a_dry_run_is_answered_the_same_way(client: Client) -> None:
    for obj in (pod("ghost", "kind-wroker"), pod("bigcpu", "kind-worker", cpu="100"), pod("fine", None)):
        real, dry = client.answer(obj), client.answer(obj, dry_run=True)
        assert {**real, "uid": ""} == {**dry, "uid": ""}


def test_what_it_does_not_review_is_allowed_untouched(client: Client) -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"nodeName": "x"}}
    for answer in (
        client.answer(config_map),
        client.answer(None, "DELETE", old=pod("ghost", "kind-wroker")),
        client.answer(pod("ghost", "kind-wroker"), "CONNECT"),
    ):
        assert set(answer) == {"uid", "allowed"} and answer["allowed"] is True


def test_an_update_is_not_denied_for_what_the_object_already_had(client: Client) -> None:
    old, new = deployment("legacy", "kind-worker", 3), deployment("legacy", "kind-worker", 4)
    answer = client.answer(new, "UPDATE", old=old)
    assert answer["allowed"] is True
    assert any(
        w.startswith("nodename-in-template: ") and "had this before this update" in w for w in answer["warnings"]
    )
    # an update that brings the problem in is denied
    answer = client.answer(new, "UPDATE", old=deployment("legacy", None, 3))
    assert answer["allowed"] is False and answer["status"]["message"].startswith("nodename-in-template: ")


def test_a_controllers_object_is_warned_about_never_denied(client: Client) -> None:
    owned = pod("web-5d4f8-x", "kind-wroker")
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f8", "uid": "u", "controller": True}
    ]
    answer = client.answer(owned)
    assert answer["allowed"] is True and answer["warnings"][0].startswith("unknown-node: ")


def test_the_objects_ignore_annotation_is_honoured(client: Client) -> None:
    ignored = pod("ghost", "kind-wroker", annotations={"nodename-lint.io/ignore": "unknown-node"})
    assert client.answer(ignored)["allowed"] is True


def test_same_rules_ids_and_messages_as_the_cli(certs: Certs, state: Any, tmp_path: Path) -> None:
    """Every object of the cluster example: the webhook reports exactly what `nodename-lint --cluster-state`
    reports for it (the rules that apply at admission), with the same ids, messages and fixes."""
    config = config_file(tmp_path, "webhook:\n  warn-on: info\n")
    lint = run_cli(
        str(MANIFESTS),
        "--cluster-state",
        str(STATE),
        "--format",
        "json",
        "--config",
        str(tmp_path / ".nodename-lint.yaml"),
    )
    expected: dict[tuple[str, str], set[str]] = {}
    for finding in json.loads(lint.stdout)["findings"]:
        obj = finding["object"]
        if finding["rule"] not in NOT_AT_ADMISSION and obj:
            expected.setdefault((obj["kind"], obj["name"]), set()).add(
                f"{finding['rule']}: {finding['message']}; fix: {finding['fix']}"
            )
    seen = 0
    with running(certs, state=state, config=config) as webhook:
        client = Client(webhook.port, certs)
        for path in sorted(MANIFESTS.glob("*.yaml")):
            for obj in yaml.safe_load_all(path.read_text()):
                answer = client.answer(obj)
                said = set(answer.get("warnings", [])) | set(answer.get("status", {}).get("message", "").splitlines())
                assert said == expected.get((obj["kind"], obj["metadata"]["name"]), set()), path
                seen += bool(said)
    assert seen >= 8


def test_a_rule_that_raises_is_a_warning_never_a_denial(certs: Certs, state: Any) -> None:
    from nodename_lint.registry import all_rules
    from nodename_lint.rule import ObjectRuleCheck

    def broken(obj: Any, context: Any) -> Iterator[Any]:
        raise RuntimeError("boom")

    checks = all_rules()["unknown-node"].checks
    kept = list(checks)
    checks[:] = [ObjectRuleCheck("object", broken)]
    try:
        with running(certs, state=state) as webhook:
            answer = Client(webhook.port, certs).answer(pod("ghost", "kind-wroker"))
    finally:
        checks[:] = kept
    assert answer["allowed"] is True
    assert any("internal error in rule unknown-node" in w and "RuntimeError: boom" in w for w in answer["warnings"])


# --- the configuration --------------------------------------------------------------------------------
def test_which_rules_deny_and_which_warn_is_configurable(certs: Certs, state: Any, tmp_path: Path) -> None:
    text = "rules:\n  nodename-in-template: off\nwebhook:\n  deny: [insufficient-resources]\n  warn-on: error\n"
    with running(certs, state=state, config=config_file(tmp_path, text)) as webhook:
        client = Client(webhook.port, certs)
        answer = client.answer(pod("bigcpu", "kind-worker", cpu="100"))
        assert answer["allowed"] is False and answer["status"]["message"].startswith("insufficient-resources: ")
        answer = client.answer(pod("ghost", "kind-wroker"))  # not in deny: a warning
        assert answer["allowed"] is True and answer["warnings"][0].startswith("unknown-node: ")
        assert "warnings" not in client.answer(deployment("web", "kind-worker"))  # the rule is off
        assert "warnings" not in client.answer(pod("drained", "kind-worker4"))  # node-not-ready: below warn-on


def test_the_webhook_section_is_schema_checked(tmp_path: Path) -> None:
    (tmp_path / ".nodename-lint.yaml").write_text("webhook:\n  deny: [unknown-nodes]\n  warn-on: warn\n  denny: []\n")
    result = run_cli(
        "webhook",
        "--tls-cert-file",
        "x",
        "--tls-private-key-file",
        "y",
        "--cluster-state",
        str(STATE),
        "--config",
        str(tmp_path / ".nodename-lint.yaml"),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert ".nodename-lint.yaml:2: unknown rule id 'unknown-nodes' (did you mean 'unknown-node'?)" in result.stderr
    assert "invalid value for webhook/warn-on (did you mean 'warning'?): use one of error" in result.stderr
    assert "unknown key 'denny' in webhook (did you mean 'deny'?)" in result.stderr


# --- the endpoints ------------------------------------------------------------------------------------
def test_health_readiness_and_metrics(client: Client) -> None:
    assert client.get("/healthz") == (200, "ok\n")
    status, text = client.get("/readyz")
    assert status == 200 and "[+]cluster-state loaded" in text and text.endswith("readyz check passed\n")
    client.answer(pod("ghost", "kind-wroker"))
    client.answer(pod("bigcpu", "kind-worker", cpu="100"))
    client.answer(pod("fine", None))
    client.post(b"{")
    status, metrics = client.get("/metrics")
    assert status == 200
    for line in (
        'nodename_lint_webhook_reviews_total{verdict="denied"} 1.0',
        'nodename_lint_webhook_reviews_total{verdict="warned"} 1.0',
        'nodename_lint_webhook_reviews_total{verdict="allowed"} 1.0',
        'nodename_lint_webhook_reviews_total{verdict="invalid"} 1.0',
        'nodename_lint_webhook_rule_verdicts_total{rule="unknown-node",verdict="denied"} 1.0',
        'nodename_lint_webhook_rule_verdicts_total{rule="insufficient-resources",verdict="warned"} 1.0',
        "nodename_lint_webhook_review_duration_seconds_count 4.0",
        'nodename_lint_webhook_review_duration_seconds_bucket{le="0.005"}',
        "nodename_lint_webhook_ready 1.0",
        "nodename_lint_webhook_degraded 0.0",
    ):
        assert line in metrics, line
    assert client.get("/nope")[0] == 404 and client.get("/validate")[0] == 405


def test_warnings_stay_within_what_the_api_server_passes_on(client: Client) -> None:
    """Many findings: the API server would cut every warning to 256 characters past 4096 in all; the webhook
    keeps within that itself and says how many more there are."""
    busy = pod("busy", "kind-worker3", cpu="100")
    busy["spec"]["nodeSelector"] = {f"label-{i}": "x" * 50 for i in range(30)}
    busy["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80}]
    busy["spec"]["containers"] *= 1
    answer = client.answer(busy)
    assert sum(len(w) for w in answer["warnings"]) <= WARNING_BUDGET
    assert all(w.isprintable() for w in answer["warnings"])


# --- bad input ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"{", "not an AdmissionReview"),
        (b"\xff\xfe{}", "not an AdmissionReview"),
        (b"[]", "not an AdmissionReview"),
        (json.dumps(_changed(object={"deep": 0})).encode().replace(b"0", b"[" * 100_000 + b"]" * 100_000), "deeply"),
        (json.dumps({**review(pod()), "apiVersion": "admission.k8s.io/v1beta1"}).encode(), "expected apiVersion"),
        (json.dumps({**review(pod()), "kind": "TokenReview"}).encode(), "expected apiVersion"),
        (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).encode(), "has no request"),
        (json.dumps(_changed(uid=7)).encode(), "uid"),
        (json.dumps(_changed(object=[1])).encode(), "not an object"),
    ],
    ids=["truncated", "not-utf8", "a-list", "deep", "v1beta1", "wrong-kind", "no-request", "uid-number", "object-list"],
)
def test_a_request_it_cannot_read_is_a_400_never_an_allow(client: Client, body: bytes, said: str) -> None:
    status, answer = client.post(body)
    assert status == 400 and said in answer["error"] and "allowed" not in json.dumps(answer)
    assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is False  # and it goes on serving


def test_a_body_over_3_mib_is_refused_unread(certs: Certs, client: Client) -> None:
    big = json.dumps(review(pod(annotations={"x": "y" * (3 << 20)}))).encode()
    raw = _tls(certs, client.connection.port)
    raw.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(big))
    reply = raw.recv(1000)  # answered before any of the body was sent, and the connection closed
    assert reply.startswith(b"HTTP/1.1 413") and b"the body is over 3145728 bytes" in reply
    raw = _tls(certs, client.connection.port)
    raw.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert raw.recv(100).startswith(b"HTTP/1.1 411")


def test_a_slow_client_is_cut_off(certs: Certs, state: Any) -> None:
    """A client that sends its request a byte at a time loses the connection once the read bound passes,
    however steadily it sends; the server answers others meanwhile."""
    with running(certs, state=state, read_seconds=1.0) as webhook:
        slow = _tls(certs, webhook.port)
        request = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + b" " * 5000
        start = time.monotonic()
        with pytest.raises(OSError):
            for byte in request:
                slow.sendall(bytes([byte]))
                time.sleep(0.05)
                assert time.monotonic() - start < 5
            slow.recv(1)
            raise ConnectionResetError
        assert time.monotonic() - start < 3
        assert Client(webhook.port, certs).answer(pod("ghost", "kind-wroker"))["allowed"] is False


def test_a_client_that_never_finishes_the_handshake_is_cut_off(certs: Certs, state: Any) -> None:
    with running(certs, state=state, read_seconds=1.0, idle_seconds=1.0) as webhook:
        silent = socket.create_connection(("127.0.0.1", webhook.port))
        silent.settimeout(5)
        start = time.monotonic()
        assert silent.recv(1) == b""  # closed by the server
        assert time.monotonic() - start < 3


def test_plain_http_is_refused(client: Client) -> None:
    plain = socket.create_connection(("127.0.0.1", client.connection.port))
    plain.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
    reply = plain.recv(1000)
    assert reply.startswith(b"HTTP/1.1 400 Bad Request") and b"plain HTTP is refused; use https://" in reply
    assert plain.recv(10) == b""
    assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is False


def test_a_renewed_certificate_is_served_without_a_restart(
    certs: Certs, state: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nodename_lint.webhook.server as server_module

    monkeypatch.setattr(server_module, "RELOAD_SECONDS", 0.0)
    own = make_certs(tmp_path)
    with running(own, state=state) as webhook:
        assert Client(webhook.port, own).get("/healthz")[0] == 200
        (tmp_path / "renewed").mkdir()
        renewed = make_certs(tmp_path / "renewed")
        own.cert_file.write_bytes(renewed.cert_file.read_bytes())
        own.key_file.write_bytes(renewed.key_file.read_bytes())
        assert Client(webhook.port, renewed).get("/healthz")[0] == 200
        with pytest.raises(ssl.SSLCertVerificationError):
            Client(webhook.port, own).get("/healthz")


# --- the command line ---------------------------------------------------------------------------------
def test_the_command_serves_until_sigterm(certs: Certs, tmp_path: Path) -> None:
    from tests.apiserver import free_port

    port = free_port()
    process = subprocess.Popen(
        command(certs, port, "--cluster-state", str(STATE)),
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        line = process.stderr.readline()
        assert f"webhook: serving https on port {port}" in line, line
        assert "denies invalid-node-name, nodename-in-template, unknown-node" in line
        assert Client(port, certs).answer(pod("ghost", "kind-wroker"))["allowed"] is False
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    assert "webhook: stopped" in process.stderr.read()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--cluster-state", str(STATE)], "give --tls-cert-file and --tls-private-key-file"),
        (["--tls-cert-file", "c", "--tls-private-key-file", "k"], "say which cluster the webhook checks against"),
        (
            ["--tls-cert-file", "missing.crt", "--tls-private-key-file", "k", "--cluster-state", str(STATE)],
            "cannot load the TLS certificate missing.crt",
        ),
        (
            ["--tls-cert-file", "c", "--tls-private-key-file", "k", "--cluster-state", str(STATE), "--context", "x"],
            "cannot be combined",
        ),
    ],
    ids=["no-tls", "no-cluster", "bad-cert", "two-clusters"],
)
def test_usage_errors_are_one_line_and_exit_2(args: list[str], said: str) -> None:
    result = run_cli("webhook", *args)
    assert result.returncode == 2 and said in result.stderr and "Traceback" not in result.stderr


def _tls(certs: Certs, port: int) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return certs.client_context().wrap_socket(raw, server_hostname="127.0.0.1")
