"""Failing clusters (issue 7): each fault ends within the timeout, with one clear line, and only GET is ever sent.

Exit code 2 wherever the cluster state cannot be trusted; a 403 on one resource lints with what
could be read and names the rules it skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import pytest
import trustme

from tests.apiserver import (
    TOKEN,
    ApiServer,
    Fault,
    SilentServer,
    cluster_entry,
    kind_cluster,
    kind_node,
    write_kubeconfig,
)
from tests.apiserver.fixtures import Timer
from tests.conftest import run_cli

TIMEOUT = "1s"  # --request-timeout for these tests, written as kubectl takes it
# One request may wait TIMEOUT; a run may retry a few times with short backoff. Python start-up
# and importing the client take about two seconds on a slow CI machine.
BOUND = 12.0

PINNED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: pinned
spec:
  nodeName: kind-worker
  containers:
    - name: app
      image: nginx:1.27
"""


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    path = tmp_path / "pod.yaml"
    path.write_text(PINNED_POD, encoding="utf-8")
    return path


def _lint(manifests: Path, config: Path, *args: str) -> tuple[int, str, str, float]:
    with Timer() as timer:
        result = run_cli(str(manifests), "--kubeconfig", str(config), "--request-timeout", TIMEOUT, *args)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode >= 0, f"killed by signal {-result.returncode}:\n{result.stderr}"
    return result.returncode, result.stdout, result.stderr, timer.seconds


def _one_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("nodename-lint: ")
    return lines[0]


def _kubeconfig_for(tmp_path: Path, server: str, ca_pem: bytes | None, token: str = TOKEN) -> Path:
    return write_kubeconfig(
        tmp_path / "kubeconfig",
        clusters={"c": cluster_entry(server, ca_pem)},
        users={"u": {"token": token}},
        contexts={"test": ("c", "u")},
        current="test",
    )


def test_connection_refused(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    code, _, err, seconds = _lint(manifests, kubeconfig, "--context", "stopped-cluster")
    assert code == 2 and seconds < BOUND
    assert "connection refused; is the cluster running?" in _one_error(err)
    assert "context stopped-cluster" in err


def test_server_name_that_does_not_resolve(manifests: Path, tmp_path: Path) -> None:
    config = _kubeconfig_for(tmp_path, "https://api.nodename-lint-test.invalid:6443", None)
    code, _, err, seconds = _lint(manifests, config)
    assert code == 2 and seconds < BOUND
    assert "cannot resolve the API server name 'api.nodename-lint-test.invalid'" in _one_error(err)


def test_tls_verification_failure_is_never_skipped(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    code, _, err, seconds = _lint(manifests, kubeconfig, "--context", "other-ca")
    assert code == 2 and seconds < BOUND
    line = _one_error(err)
    assert "TLS verification of the API server" in line and "certificate-authority" in line
    assert api_server.requests == []  # the request never got past the handshake


def test_server_certificate_for_another_name(manifests: Path, tmp_path: Path) -> None:
    """The CA is right but the certificate names another host: still a TLS failure."""
    ca = trustme.CA()
    with ApiServer(**kind_cluster(), ca=ca, host="127.0.0.2") as server:
        config = _kubeconfig_for(tmp_path, f"https://127.0.0.2:{server.port}", ca.cert_pem.bytes())
        code, _, err, _ = _lint(manifests, config)
    assert code == 2 and "TLS verification" in _one_error(err)


@pytest.mark.parametrize("context", ["kind-wrong-token"])
def test_wrong_or_expired_token(manifests: Path, kubeconfig: Path, api_server: ApiServer, context: str) -> None:
    code, _, err, seconds = _lint(manifests, kubeconfig, "--context", context)
    assert code == 2 and seconds < BOUND
    assert "rejected the credentials of context kind-wrong-token (401 Unauthorized)" in _one_error(err)
    assert "expired-token" not in err
    assert api_server.methods == {"GET"} and len(api_server.requests) == 1  # a 401 is not retried


def test_forbidden_pods_but_not_nodes(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    api_server.forbidden = {("list", "pods")}
    code, out, err, seconds = _lint(manifests, kubeconfig, "--format", "json")
    assert seconds < BOUND and "Traceback" not in err
    reasons = {entry["rule"]: entry["reason"] for entry in json.loads(out)["summary"]["skipped_rules"]}
    pod_rules = {rule for rule, reason in reasons.items() if "refused to list pods" in reason}
    assert "nodename-immutable" in pod_rules  # needs the live Pods
    assert not {"unknown-node", "insufficient-resources", "untolerated-taint"} & set(reasons)  # nodes were readable
    assert all('cannot list resource "pods"' in reasons[rule] for rule in pod_rules)
    assert code in (0, 1)
    assert api_server.methods == {"GET"}


def test_forbidden_is_named_in_the_text_summary(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    api_server.forbidden = {("list", "pods"), ("list", "namespaces")}
    _, out, _, _ = _lint(manifests, kubeconfig)
    assert "refused to list pods" in out and "refused to list namespaces" in out
    assert "grant list on pods" in out


@pytest.mark.parametrize("status", [429, 500])
def test_transient_errors_are_retried(manifests: Path, kubeconfig: Path, api_server: ApiServer, status: int) -> None:
    api_server.faults = [Fault(f"status:{status}", path="/api/v1/nodes", times=2)]
    code, _, err, seconds = _lint(manifests, kubeconfig)
    assert code in (0, 1) and seconds < BOUND, err
    assert [r.path for r in api_server.requests][:3] == ["/api/v1/nodes"] * 3
    assert api_server.methods == {"GET"}


@pytest.mark.parametrize("status", [429, 500])
def test_persistent_errors_give_up_after_bounded_retries(
    manifests: Path, kubeconfig: Path, api_server: ApiServer, status: int
) -> None:
    api_server.faults = [Fault(f"status:{status}", path="/api/v1/nodes")]
    code, _, err, seconds = _lint(manifests, kubeconfig)
    assert code == 2 and seconds < BOUND
    assert f"answered GET /api/v1/nodes with HTTP {status} after 4 attempts" in _one_error(err)
    assert len(api_server.requests) == 4 and api_server.methods == {"GET"}


def test_server_that_never_answers(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    api_server.faults = [Fault("hang", path="/api/v1/nodes")]
    code, _, err, seconds = _lint(manifests, kubeconfig)
    assert code == 2 and seconds < BOUND
    assert "did not answer GET /api/v1/nodes within 1s (--request-timeout)" in _one_error(err)
    assert api_server.methods == {"GET"}


def test_a_request_given_up_on_does_not_hold_up_the_next(tmp_path: Path, api_server: ApiServer) -> None:
    """Requests run in reused threads: after one timed out, the next read in the same process (the language
    server reads the cluster again after a failed read) finds a thread to run its requests."""
    from nodename_lint.cluster.errors import ClusterUnavailable
    from nodename_lint.cluster.live import LiveCluster, LiveOptions, Referenced

    config = _kubeconfig_for(tmp_path, api_server.url, api_server.ca_pem)
    options = LiveOptions(kubeconfig=str(config), request_timeout=1.0)
    api_server.faults = [Fault("hang", path="/api/v1/nodes", times=1)]
    with Timer() as timer, pytest.raises(ClusterUnavailable, match="did not answer GET /api/v1/nodes within 1s"):
        LiveCluster(options).state_for(Referenced(nodes={"kind-worker"}))
    assert timer.seconds < 3
    with Timer() as timer:  # the hung thread still waits for its reply
        state = LiveCluster(options).state_for(Referenced(nodes={"kind-worker"}))
    assert sorted(state.nodes) == ["kind-control-plane", "kind-worker", "kind-worker2"] and timer.seconds < 3


def test_interrupting_a_run_whose_request_still_connects_exits_at_once(manifests: Path, tmp_path: Path) -> None:
    """A request still connecting when the run is interrupted (Ctrl-C) has no socket to shut down yet, and its
    connect timeout would wake it long after the process is gone: the exit does not wait for it. A listener
    whose accept queue is full drops every new SYN, so a connect there hangs until its timeout (8 s)."""
    import signal
    import socket
    import subprocess
    import sys

    with contextlib.ExitStack() as stack:
        listener = stack.enter_context(socket.socket())
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        for _ in range(4):  # fill the accept queue
            filler = stack.enter_context(socket.socket())
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(listener.getsockname())
        with socket.socket() as probe:  # the premise: a connect now hangs
            probe.settimeout(0.5)
            with pytest.raises(TimeoutError):
                probe.connect(listener.getsockname())
        url = f"https://127.0.0.1:{listener.getsockname()[1]}"
        config = _kubeconfig_for(tmp_path, url, trustme.CA().cert_pem.bytes())
        command = [sys.executable, "-m", "nodename_lint", str(manifests), "--kubeconfig", str(config)]
        run = subprocess.Popen(
            [*command, "--request-timeout", "8s"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        time.sleep(2.0)  # started, and its first request connecting
        with Timer() as timer:
            run.send_signal(signal.SIGINT)
            _, stderr = run.communicate(timeout=30)
    assert run.returncode >= 0 and b"Traceback" not in stderr, stderr
    assert timer.seconds < 3, timer.seconds  # not the 6 s its connect timeout had left


def test_the_pools_that_report_sockets_are_the_managers_own_classes(tmp_path: Path, api_server: ApiServer) -> None:
    """Each request's socket is reported by subclasses of the pool classes the client's manager already has: a
    SOCKS proxy's manager (urllib3.contrib.socks) has its own, whose connections reach the server through the
    proxy, and plain classes in their place would connect past the proxy."""
    from urllib3.connection import HTTPSConnection
    from urllib3.connectionpool import HTTPSConnectionPool

    from nodename_lint.cluster.connection import ApiConnection, LiveOptions, _reporting_pool

    class ThroughAProxy(HTTPSConnection):
        pass

    class ProxiedPool(HTTPSConnectionPool):
        ConnectionCls = ThroughAProxy

    reporting = _reporting_pool(ProxiedPool)
    assert issubclass(reporting, ProxiedPool) and issubclass(reporting.ConnectionCls, ThroughAProxy)
    config = _kubeconfig_for(tmp_path, api_server.url, api_server.ca_pem)
    connection = ApiConnection(LiveOptions(kubeconfig=str(config)))
    from urllib3.poolmanager import pool_classes_by_scheme as defaults

    assert {scheme: pool.__mro__[1] for scheme, pool in connection.pool.pool_classes_by_scheme.items()} == defaults
    assert connection.list_all("/api/v1/nodes")  # a request still goes through them
    connection.close()


def test_server_that_accepts_and_never_shakes_hands(manifests: Path, tmp_path: Path) -> None:
    with SilentServer() as silent:
        config = _kubeconfig_for(tmp_path, silent.url, trustme.CA().cert_pem.bytes())
        code, _, err, seconds = _lint(manifests, config)
    assert code == 2 and seconds < BOUND
    line = _one_error(err)
    assert "within 1s (--request-timeout)" in line


# Run as the command line is, with a check registered before nodename-lint loads: atexit runs it last, after
# every exit hook of nodename-lint, when what follows is the interpreter's own teardown. It counts the threads
# still inside a request then (connection._Request.run).
_EXIT_PROBE = """\
import atexit, sys

def probe():
    inside = 0
    for ident, frame in sys._current_frames().items():
        while frame is not None:
            code = frame.f_code
            if code.co_name == "run" and code.co_filename.endswith("connection.py"):
                inside += 1
                break
            frame = frame.f_back
    sys.stderr.write(f"requests running at exit: {inside}\\n")

atexit.register(probe)
from nodename_lint.cli import main
sys.argv[0] = "nodename-lint"
main()
"""


@pytest.mark.parametrize("server", ["silent", "hang", "drip-head"])
def test_a_request_given_up_on_is_over_before_the_interpreter_exits(
    server: str, manifests: Path, tmp_path: Path, api_server: ApiServer
) -> None:
    """A request the run gave up on runs in a daemon thread; one still inside it when the interpreter tears
    itself down may take the GIL or stderr's lock at the wrong moment, and CPython aborts (SIGABRT, seen once
    in CI against the silent server). At exit each is cut and waited for: a server that never shakes hands,
    one that never answers, one that sends its headers a byte at a time (each within the read timeout, so the
    request would never end by itself: its socket must be cut, though urllib3 has no response to close)."""
    import subprocess
    import sys

    probe = tmp_path / "probe.py"
    probe.write_text(_EXIT_PROBE, encoding="utf-8")
    with contextlib.ExitStack() as stack:
        if server == "silent":
            peer = stack.enter_context(SilentServer())
            url, ca = peer.url, trustme.CA().cert_pem.bytes()
        else:
            api_server.faults = [Fault(server, path="/api/v1/nodes")]
            url, ca = api_server.url, api_server.ca_pem
        config = _kubeconfig_for(tmp_path, url, ca)
        with Timer() as timer:
            result = subprocess.run(
                [sys.executable, str(probe), str(manifests), "--kubeconfig", str(config), "--request-timeout", "1s"],
                capture_output=True,
                text=True,
                timeout=60,
                env={**os.environ, "NO_COLOR": "1"},
            )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == "requests running at exit: 0", result.stderr
    assert "within 1s (--request-timeout)" in _one_error("\n".join(lines[:-1]))
    assert timer.seconds < BOUND  # the dripping headers are cut, not waited for: they would never end


def test_truncated_json(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    api_server.faults = [Fault("truncate", path="/api/v1/nodes")]
    code, _, err, seconds = _lint(manifests, kubeconfig)
    assert code == 2 and seconds < BOUND
    assert "broke off its reply to GET /api/v1/nodes" in _one_error(err)
    assert api_server.methods == {"GET"}


def test_malformed_json(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    api_server.faults = [Fault("malformed", path="/api/v1/namespaces")]
    code, _, err, seconds = _lint(manifests, kubeconfig)
    assert code == 2 and seconds < BOUND
    assert "sent a reply that is not valid JSON for GET /api/v1/namespaces" in _one_error(err)
    assert api_server.methods == {"GET"}


def test_reply_that_is_not_utf8(manifests: Path, kubeconfig: Path, api_server: ApiServer) -> None:
    """JSON must be UTF-8 (RFC 8259): other bytes are a clear error, not a crash in the error message."""
    api_server.faults = [Fault("not-utf8", path="/api/v1/nodes")]
    code, _, err, seconds = _lint(manifests, kubeconfig)
    assert code == 2 and seconds < BOUND, err
    assert "sent a reply that is not valid JSON for GET /api/v1/nodes" in _one_error(err)
    assert "not UTF-8" in _one_error(err) and "Traceback" not in err


def _big_cluster() -> dict[str, list[dict]]:
    """More nodes than one page (500), so the node list needs a continue token."""
    cluster = kind_cluster()
    cluster["nodes"] += [kind_node(f"worker-{index:04d}", index=index) for index in range(3, 703)]
    return cluster


def test_expired_continue_token_restarts_the_list_once(manifests: Path, tmp_path: Path) -> None:
    with ApiServer(**_big_cluster()) as server:
        server.faults = [Fault("gone", path="/api/v1/nodes", continue_only=True, times=1)]
        config = _kubeconfig_for(tmp_path, server.url, server.ca_pem)
        code, _, err, _ = _lint(manifests, config)
    assert code in (0, 1), err
    node_calls = [bool(r.query.get("continue")) for r in server.requests if r.path == "/api/v1/nodes"]
    assert node_calls == [False, True, False, True]  # page 1, 410, page 1 again, page 2
    assert server.methods == {"GET"}


def test_continue_token_that_keeps_expiring(manifests: Path, tmp_path: Path) -> None:
    with ApiServer(**_big_cluster()) as server:
        server.faults = [Fault("gone", path="/api/v1/nodes", continue_only=True)]
        config = _kubeconfig_for(tmp_path, server.url, server.ca_pem)
        code, _, err, seconds = _lint(manifests, config)
    assert code == 2 and seconds < BOUND
    assert "expired the list of GET /api/v1/nodes twice (410 Gone" in _one_error(err)
    assert server.methods == {"GET"}


def test_a_real_compaction_expires_continue_tokens(tmp_path: Path) -> None:
    """The server side of 410: a token issued before expire_continue_tokens() is refused, as after an etcd
    compaction."""
    import ssl
    import urllib.error
    import urllib.request

    with ApiServer(**_big_cluster()) as server:
        context = ssl.create_default_context(cadata=server.ca_pem.decode())
        headers = {"Authorization": f"Bearer {TOKEN}"}

        def get(query: str) -> tuple[int, dict]:
            request = urllib.request.Request(f"{server.url}/api/v1/nodes?{query}", headers=headers)
            try:
                with urllib.request.urlopen(request, context=context, timeout=5) as response:
                    return response.status, json.load(response)
            except urllib.error.HTTPError as exc:
                return exc.code, json.load(exc)

        status, first = get("limit=500")
        assert status == 200 and len(first["items"]) == 500 and first["metadata"]["remainingItemCount"] == 203
        server.expire_continue_tokens()
        status, body = get(f"limit=500&continue={first['metadata']['continue']}")
    assert status == 410 and body["reason"] == "Expired"
