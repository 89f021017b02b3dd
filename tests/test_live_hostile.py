"""Live mode against hostile manifests and a hostile (or broken) API server (issue 10).

Manifest values never steer a request: the loopback server records every request, and each test
asserts the exact set a run may send. A server cannot keep the run alive, fill its memory, crash
it, inject workflow commands through its error texts, or make it print a credential.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.apiserver import TOKEN, ApiServer, Fault, cluster_entry, kind_cluster, write_kubeconfig
from tests.apiserver.fixtures import Timer
from tests.conftest import run_cli

NON_TERMINATED = "status.phase!=Succeeded,status.phase!=Failed"


def _pod(name: str, namespace: str | None = None, node: str | None = None) -> str:
    metadata = {"name": name, **({"namespace": namespace} if namespace is not None else {})}
    spec = {**({"nodeName": node} if node is not None else {}), "containers": [{"name": "app", "image": "nginx:1.27"}]}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}) + "\n"


# Values a pull request can write, each of which once reached a request path or selector.
HOSTILE = {
    "secrets": _pod("a", namespace="kube-system/secrets#"),
    "proxy": _pod("b", namespace="default/services/http:evil:80/proxy/x"),
    "traversal": _pod("c", namespace="../../apis/rbac.authorization.k8s.io/v1/clusterroles"),
    "query": _pod("d", namespace="default?watch=true&x="),
    "selector-name": _pod("e,metadata.namespace=kube-system", namespace="default"),
    "selector-node": _pod("f", node="kind-worker,spec.schedulerName=x"),
    "encoded": _pod("g", namespace="kube-system%2Fsecrets"),
    "long": _pod("h", namespace="a" * 64),
}


def _lint(folder: Path, kubeconfig: Path, *args: str):
    with Timer() as timer:
        result = run_cli(str(folder), "--kubeconfig", str(kubeconfig), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result, timer.seconds


def test_manifest_values_never_steer_a_request(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    folder = tmp_path / "deploy"
    folder.mkdir()
    for name, text in {**HOSTILE, "fine": _pod("web", namespace="shop", node="kind-worker")}.items():
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    result, _ = _lint(folder, kubeconfig, "--format", "json")
    calls = {(r.path, r.query.get("fieldSelector", "")) for r in api_server.requests}
    assert calls == {
        ("/api/v1/nodes", ""),
        ("/api/v1/namespaces", ""),
        ("/apis/node.k8s.io/v1/runtimeclasses", ""),
        ("/apis/scheduling.k8s.io/v1/priorityclasses", ""),  # listed on every run, like RuntimeClasses
        ("/api/v1/pods", f"spec.nodeName=kind-worker,{NON_TERMINATED}"),
        ("/api/v1/namespaces/shop/pods", "metadata.name=web"),
        ("/api/v1/namespaces/default/pods", "metadata.name=f"),  # a valid Pod; only its node name is bad
    }, "only valid names are read"
    assert api_server.methods == {"GET"}
    findings = {(Path(f["file"]).stem, f["rule"]) for f in json.loads(result.stdout)["findings"]}
    for name in HOSTILE:
        rule = "invalid-node-name" if name == "selector-node" else "invalid-object-name"
        assert (name, rule) in findings, f"{name}.yaml is reported as a bad manifest"


def test_a_reply_dripping_one_byte_a_second_ends_at_the_request_timeout(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
    api_server.faults = [Fault("drip", path="/api/v1/nodes")]
    result, seconds = _lint(tmp_path / "pod.yaml", kubeconfig, "--request-timeout", "2")
    assert result.returncode == 2 and seconds < 10, (seconds, result.stderr)
    assert "did not answer GET /api/v1/nodes within 2s (--request-timeout)" in result.stderr


def test_an_endless_reply_ends_at_the_size_cap(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
    api_server.faults = [Fault("endless", path="/api/v1/nodes")]
    result, seconds = _lint(
        tmp_path / "pod.yaml", kubeconfig, "--request-timeout", "30", "--max-response-bytes", str(4 << 20)
    )
    assert result.returncode == 2 and seconds < 25, (seconds, result.stderr)
    assert "sent more than 4,194,304 bytes for GET /api/v1/nodes (--max-response-bytes)" in result.stderr


def test_retry_after_is_parsed_strictly(tmp_path: Path, api_server: ApiServer, kubeconfig: Path) -> None:
    (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
    for value in ("\u00b2", "\u00b9", "1e9", "-1", "99999999999999999999"):  # headers are Latin-1
        api_server.requests.clear()
        api_server.faults = [Fault("status:429", path="/api/v1/nodes", times=1, retry_after=value)]
        result, seconds = _lint(tmp_path / "pod.yaml", kubeconfig, "--request-timeout", "2")
        assert result.returncode in (0, 1) and seconds < 10, (value, result.stderr)
        assert [r.path for r in api_server.requests][:2] == ["/api/v1/nodes"] * 2, "retried with the default backoff"


def test_server_error_texts_cannot_inject_workflow_commands(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
    api_server.faults = [Fault("status:403", path="/api/v1/pods", message="no\n::stop-commands::pwned\r\n::error::x")]
    forbidden, _ = _lint(tmp_path / "pod.yaml", kubeconfig, "--format", "github", "--format", "text")
    api_server.faults = [Fault("status:502", path="/api/v1/nodes", message="bad\n::add-mask::x\x1b[2J")]
    failed, _ = _lint(tmp_path / "pod.yaml", kubeconfig, "--format", "github")
    assert failed.returncode == 2
    for output in (forbidden.stdout, forbidden.stderr, failed.stdout, failed.stderr):
        assert not [line for line in output.splitlines() if line.startswith("::") and " file=" not in line], output
        assert "\x1b" not in output
    assert "(no\\x0a::stop-commands::pwned\\x0d\\x0a::error::x)" in forbidden.stdout, "the skip reason, escaped"
    assert "HTTP 502 after 4 attempts: bad\\x0a::add-mask::x\\x1b[2J" in failed.stderr


def test_exec_plugin_stderr_and_kubeconfig_secrets_never_reach_the_output(
    tmp_path: Path, api_server: ApiServer
) -> None:
    secret_env, secret_token = "env-secret-5f3c2a1b0e9d8c7b", "tok-a1b2c3d4e5f6a7b8c9d0"
    plugin = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "sh",
        "args": ["-c", 'echo "plugin failed: $PLUGIN_SECRET and $KUBE_TOKEN" >&2; exit 1'],
        "env": [{"name": "PLUGIN_SECRET", "value": secret_env}, {"name": "KUBE_TOKEN", "value": secret_token}],
        "interactiveMode": "Never",
    }
    config = write_kubeconfig(
        tmp_path / "kubeconfig",
        clusters={"c": cluster_entry(api_server.url, api_server.ca_pem)},
        users={"u": {"exec": plugin}},
        contexts={"test": ("c", "u")},
        current="test",
    )
    (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
    for output_format in ("text", "github", "json"):
        result, _ = _lint(tmp_path / "pod.yaml", config, "--format", output_format)
        assert result.returncode == 2, result.stderr
        for text in (result.stdout, result.stderr):
            assert secret_env not in text and secret_token not in text, text
        assert (
            "nodename-lint: kubernetes client: exec: process returned 1. plugin failed: <redacted> and <redacted>"
            in result.stderr
        )


def test_plain_http_server_gets_a_warning_before_the_token(tmp_path: Path) -> None:
    with ApiServer(**kind_cluster(), tls=False) as server:
        config = write_kubeconfig(
            tmp_path / "kubeconfig",
            clusters={"c": cluster_entry(server.url)},
            users={"u": {"token": TOKEN}},
            contexts={"test": ("c", "u")},
            current="test",
        )
        (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
        result, _ = _lint(tmp_path / "pod.yaml", config)
    assert result.returncode in (0, 1), result.stderr
    assert (
        f"nodename-lint: warning: the API server {server.url} of context test is plain http://: its bearer token "
        "is sent unencrypted"
    ) in result.stderr
    assert TOKEN not in result.stderr


# --- what one run reads: pages, objects, decoded JSON values (ReadBudget) ----------------------------
def _connection(kubeconfig: Path, **budget: int):
    from nodename_lint.cluster.connection import ApiConnection, LiveOptions

    return ApiConnection(LiveOptions(kubeconfig=str(kubeconfig), **budget))


def test_endless_continue_tokens_end_at_the_page_budget(api_server: ApiServer, kubeconfig: Path) -> None:
    """A list that hands out a new `continue` token on every page paged until MemoryError."""
    import pytest

    from nodename_lint.cluster.errors import ClusterUnavailable

    api_server.faults = [Fault("endless-continue", path="/api/v1/nodes")]
    connection = _connection(kubeconfig, max_pages=40)
    with pytest.raises(ClusterUnavailable) as raised:
        connection.list_all("/api/v1/nodes")
    connection.close()
    assert "sent more than 40 list pages in this run (at GET /api/v1/nodes" in str(raised.value)
    assert len(api_server.requests) == 41 and api_server.methods == {"GET"}


def test_the_page_budget_is_for_the_whole_run(api_server: ApiServer, kubeconfig: Path) -> None:
    from nodename_lint.cluster.live import LiveCluster, LiveOptions, Referenced
    from nodename_lint.sources import UsageError

    api_server.faults = [Fault("endless-continue", path="/api/v1/pods")]
    live = LiveCluster(LiveOptions(kubeconfig=str(kubeconfig), max_pages=30))
    wanted = Referenced(nodes={"kind-worker", "kind-worker2", "kind-control-plane"})
    try:
        live.state_for(wanted)  # three Pod lists at once, each endless
    except UsageError as exc:
        assert "sent more than 30 list pages in this run" in str(exc)
    else:
        raise AssertionError("the endless lists ended")
    assert len(api_server.requests) <= 30 + 1 + 4  # the pages, then at most one more per list thread in flight


def test_an_endless_list_of_objects_ends_at_the_object_budget(api_server: ApiServer, kubeconfig: Path) -> None:
    import pytest

    from nodename_lint.cluster.errors import ClusterUnavailable

    api_server.faults = [Fault("endless-continue", path="/api/v1/namespaces", copies=100)]  # 500 a page
    connection = _connection(kubeconfig, max_objects=2_000)
    with pytest.raises(ClusterUnavailable) as raised:
        connection.list_all("/api/v1/namespaces")
    connection.close()
    assert "listed more than 2,000 objects in this run (at GET /api/v1/namespaces" in str(raised.value)
    assert len(api_server.requests) == 5


def test_the_decoded_values_of_a_run_are_bounded(api_server: ApiServer, kubeconfig: Path) -> None:
    import pytest

    from nodename_lint.cluster.errors import ClusterUnavailable

    connection = _connection(kubeconfig, max_values=2_000)
    connection.list_all("/api/v1/nodes")  # three kind nodes: a few hundred values
    with pytest.raises(ClusterUnavailable) as raised:
        for _ in range(20):
            connection.list_all("/api/v1/nodes")
    connection.close()
    assert "sent more than 2,000 JSON values in this run (at GET /api/v1/nodes)" in str(raised.value)


def test_a_reply_packed_with_objects_is_refused_before_it_is_decoded(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    """4 MB of `{},` under a 4 MiB cap is 1.4 million dicts once decoded; the cap allows one value per 16 bytes."""
    (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
    api_server.faults = [Fault("dense", path="/api/v1/nodes", size=4_000_000)]
    result, seconds = _lint(tmp_path / "pod.yaml", kubeconfig, "--max-response-bytes", str(4 << 20))
    assert result.returncode == 2 and seconds < 20, (seconds, result.stderr)
    assert "sent 4,000,056 bytes holding up to 2,666,672 JSON values for GET /api/v1/nodes, more than 262,144" in (
        result.stderr
    )
    assert "(one per 16 bytes of --max-response-bytes)" in result.stderr
    audit = run_cli("audit", "--kubeconfig", str(kubeconfig), "--max-response-bytes", str(4 << 20))
    assert audit.returncode == 2 and "JSON values for GET /api/v1/nodes" in audit.stderr, audit.stderr


def test_a_reply_under_the_default_cap_cannot_decode_to_gigabytes(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    """96 MB of `{},` (the default cap is 256 MiB) decoded to 32 million dicts: over 2 GB, MemoryError here."""
    import resource
    import subprocess
    import sys

    (tmp_path / "pod.yaml").write_text(_pod("web", node="kind-worker"), encoding="utf-8")
    api_server.faults = [Fault("dense", path="/api/v1/pods", size=96_000_000)]
    limit = 1536 << 20

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with Timer() as timer:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "nodename_lint",
                "snapshot",
                "--kubeconfig",
                str(kubeconfig),
                "--request-timeout",
                "60",
            ],
            capture_output=True,
            text=True,
            timeout=180,
            preexec_fn=cap_memory,
        )
    assert result.returncode == 2 and timer.seconds < 120, (result.returncode, result.stderr[-3000:])
    assert "JSON values for GET /api/v1/pods (fieldSelector status.phase!=Succeeded,status.phase!=Failed)" in (
        result.stderr
    ), result.stderr[-3000:]
    assert "Traceback" not in result.stderr
