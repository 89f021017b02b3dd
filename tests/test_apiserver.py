"""The loopback API server itself: what the GET-only assertions rely on, and API details kubectl would notice."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

from tests.apiserver import TOKEN, ApiServer


def _call(server: ApiServer, method: str, path: str, token: str = TOKEN) -> tuple[int, dict]:
    context = ssl.create_default_context(cadata=server.ca_pem.decode())
    request = urllib.request.Request(
        f"{server.url}{path}",
        method=method,
        headers={"Authorization": f"Bearer {token}"},
        data=b"{}" if method != "GET" else None,
    )
    try:
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_writes_are_recorded_and_refused(api_server: ApiServer) -> None:
    """The GET-only assertions can fail: a write reaches the record (and is refused, so nothing changes)."""
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        status, body = _call(api_server, method, "/api/v1/namespaces/default/pods/web-5d4f8c7b9-abcde")
        assert status == 405 and body["reason"] == "MethodNotAllowed"
    assert api_server.methods == {"POST", "PUT", "PATCH", "DELETE"}


def test_selectors_and_errors_as_the_api_server_gives_them(api_server: ApiServer) -> None:
    status, body = _call(api_server, "GET", "/api/v1/pods?fieldSelector=status.phase%3DSucceeded")
    assert status == 200 and [p["metadata"]["name"] for p in body["items"]] == ["done-job-x7k2p"]
    assert body["kind"] == "PodList" and "kind" not in body["items"][0]  # list items carry no kind, as on a real server
    status, body = _call(
        api_server, "GET", "/api/v1/namespaces/kube-system/pods?fieldSelector=spec.nodeName%3Dkind-worker"
    )
    assert {p["metadata"]["name"] for p in body["items"]} == {"kindnet-4kd8w", "kube-proxy-9xq2c"}
    status, body = _call(
        api_server, "GET", "/api/v1/nodes?labelSelector=kubernetes.io/hostname%20notin%20(kind-worker)"
    )
    assert [n["metadata"]["name"] for n in body["items"]] == ["kind-control-plane", "kind-worker2"]
    status, body = _call(api_server, "GET", "/api/v1/nodes?fieldSelector=spec.nodeName%3Dx")
    assert status == 400 and "field label not supported: spec.nodeName" in body["message"]
    status, body = _call(api_server, "GET", "/api/v1/nodes/kind-worker")
    assert status == 200 and body["kind"] == "Node" and body["apiVersion"] == "v1"
    status, body = _call(api_server, "GET", "/api/v1/nodes/nope")
    assert status == 404 and body["message"] == 'nodes "nope" not found'
    status, body = _call(api_server, "GET", "/api/v1/nodes", token="wrong")
    assert status == 401 and body["reason"] == "Unauthorized"
    api_server.forbidden = {("get", "nodes")}
    status, body = _call(api_server, "GET", "/api/v1/nodes/kind-worker")
    assert status == 403 and 'cannot get resource "nodes"' in body["message"]
    assert _call(api_server, "GET", "/version")[1]["gitVersion"].startswith("v1.")
    assert _call(api_server, "GET", "/api")[1]["versions"] == ["v1"]
