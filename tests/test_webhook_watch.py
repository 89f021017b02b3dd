"""The webhook end to end against the loopback API server: lists and watches keep its state current while
reviews run, over real TLS on both sides, with GET requests only.

The API server's watches (tests/apiserver/watch.py) replay changes from a resourceVersion, send bookmarks,
answer 410 Gone for a compacted version, and can be cut or left silent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nodename_lint.cluster.connection import LiveOptions
from tests.apiserver import ApiServer, Fault, kind_node, kind_pod
from tests.apiserver.server import Store
from tests.webhook import Certs, Client, make_certs, pod, running, wait_for

FAST = {"watch_seconds": (2, 3), "idle_seconds": 5.0, "backoff": (0.05, 0.2)}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def live(api_server: ApiServer, kubeconfig: Path) -> LiveOptions:
    api_server.history.bookmark_seconds = 0.3
    return LiveOptions(kubeconfig=str(kubeconfig), request_timeout=2.0)


@pytest.fixture
def webhook(certs: Certs, live: LiveOptions) -> Iterator[Any]:
    with running(certs, live=live, watch=FAST) as served:
        cluster = served.reviewer.cluster
        wait_for(cluster.ready)
        yield served


def only_reads(server: ApiServer) -> None:
    """The read-only guarantee, watches included: GET only, and only lists, watches and node GETs."""
    assert server.methods == {"GET"}
    for request in server.api_requests() + [r for r in server.requests if r.path.startswith("/apis/node.k8s.io")]:
        if request.query.get("watch"):
            assert request.query["watch"] == "1" and request.query["allowWatchBookmarks"] == "true"
            assert request.query["resourceVersion"] and int(request.query["timeoutSeconds"]) > 0
        else:
            parts = request.path.strip("/").split("/")
            assert parts[-1] in ("nodes", "namespaces", "pods", "runtimeclasses") or parts[-2] == "nodes", request


def test_it_is_ready_after_the_first_full_lists_then_watches(
    certs: Certs, live: LiveOptions, api_server: ApiServer
) -> None:
    api_server.faults.append(Fault("status:500", "/api/v1/pods"))
    with running(certs, live=live, watch=FAST) as served:
        client = Client(served.port, certs)
        time.sleep(0.5)
        status, text = client.get("/readyz")
        assert status == 503 and "[-]cluster-state not loaded yet" in text
        answer = client.answer(pod("ghost", "kind-wroker"))  # the API server would not send it, but if it did
        assert answer["allowed"] is True and "not loaded yet" in answer["warnings"][0]
        assert "nodename_lint_webhook_ready 0.0" in client.get("/metrics")[1]
        api_server.faults.clear()
        wait_for(lambda: client.get("/readyz")[0] == 200)
        assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is False
    watches = {r.path for r in api_server.requests if r.query.get("watch")}
    assert watches == {"/api/v1/nodes", "/api/v1/namespaces", "/api/v1/pods", "/apis/node.k8s.io/v1/runtimeclasses"}
    only_reads(api_server)


def test_nodes_added_deleted_and_relabelled_while_reviews_run(
    webhook: Any, certs: Certs, api_server: ApiServer
) -> None:
    answers: list[tuple[int, Any]] = []
    stop = threading.Event()

    def keep_reviewing() -> None:
        client = Client(webhook.port, certs)
        while not stop.is_set():
            answers.append((200, client.answer(pod("steady", "kind-worker"))))

    reviewers = [threading.Thread(target=keep_reviewing) for _ in range(4)]
    for thread in reviewers:
        thread.start()
    client = Client(webhook.port, certs)
    try:
        assert client.answer(pod("new", "kind-worker3"))["allowed"] is False  # not there yet
        api_server.put("nodes", kind_node("kind-worker3", index=3))
        wait_for(lambda: client.answer(pod("new", "kind-worker3"))["allowed"] is True)
        api_server.delete("nodes", "kind-worker2")
        wait_for(lambda: client.answer(pod("gone", "kind-worker2"))["allowed"] is False)
        selective = pod("ssd", "kind-worker")
        selective["spec"]["nodeSelector"] = {"disktype": "ssd"}
        assert client.answer(selective)["warnings"][0].startswith("node-selector-mismatch: ")
        api_server.label_node("kind-worker", disktype="ssd")
        wait_for(lambda: "warnings" not in client.answer(selective))
    finally:
        stop.set()
        for thread in reviewers:
            thread.join()
    assert len(answers) > 10 and all(answer["allowed"] is True for _, answer in answers)
    statuses = webhook.reviewer.cluster.statuses
    assert statuses["nodes"].events.get("ADDED") == 1 and statuses["nodes"].events.get("DELETED") == 1
    assert statuses["nodes"].relists == 0
    only_reads(api_server)


def test_pods_keep_the_usage_current(webhook: Any, certs: Certs, api_server: ApiServer) -> None:
    client = Client(webhook.port, certs)
    assert "warnings" not in client.answer(pod("half", "kind-worker2", cpu="2"))
    api_server.put("pods", kind_pod("hog-1", "default", "kind-worker2", cpu="3"))
    wait_for(lambda: "OutOfcpu" in str(client.answer(pod("half", "kind-worker2", cpu="2")).get("warnings")))
    api_server.put("pods", kind_pod("hog-1", "default", "kind-worker2", cpu="3", phase="Succeeded"))
    wait_for(lambda: "warnings" not in client.answer(pod("half", "kind-worker2", cpu="2")))
    api_server.put("pods", kind_pod("hog-2", "default", "kind-worker2", cpu="3"))
    wait_for(lambda: "warnings" in client.answer(pod("half", "kind-worker2", cpu="2")))
    api_server.delete("pods", "hog-2", "default")
    wait_for(lambda: "warnings" not in client.answer(pod("half", "kind-worker2", cpu="2")))
    only_reads(api_server)


def test_bookmarks_carry_the_version_and_an_ended_watch_resumes_without_a_relist(
    webhook: Any, api_server: ApiServer
) -> None:
    time.sleep(3.5)  # the server ends each watch after 2-3 s, with bookmarks every 0.3 s
    statuses = webhook.reviewer.cluster.statuses
    assert all(status.events.get("BOOKMARK", 0) >= 3 for status in statuses.values())
    assert all(status.relists == 0 and status.losses == 0 for status in statuses.values())
    api_server.put("namespaces", {"metadata": {"name": "team-a"}})
    wait_for(lambda: "team-a" in webhook.reviewer.cluster.state.namespaces)
    node_watches = [r.query for r in api_server.requests if r.query.get("watch") and r.path == "/api/v1/nodes"]
    assert len(node_watches) >= 2 and node_watches[-1]["resourceVersion"] >= node_watches[0]["resourceVersion"]
    only_reads(api_server)


def test_a_lost_watch_warns_instead_of_denying_until_the_relist_completes(
    webhook: Any, certs: Certs, api_server: ApiServer
) -> None:
    client = Client(webhook.port, certs)
    assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is False
    api_server.faults.append(Fault("status:500", "/api/v1/nodes"))  # the relist cannot complete yet
    api_server.history.cut()  # every watch connection drops
    api_server.put("namespaces", {"metadata": {"name": "moved-on"}})
    api_server.history.compact()  # and the versions the watches had are gone: 410
    wait_for(lambda: webhook.reviewer.cluster.degraded())
    answer = client.answer(pod("ghost", "kind-wroker"))
    assert answer["allowed"] is True  # never a denial from a state that may be behind
    assert answer["warnings"][0].startswith("nodename-lint denies nothing now: the watch of nodes is lost")
    assert any(w.startswith("unknown-node: ") for w in answer["warnings"])
    status, text = client.get("/readyz")
    assert status == 200 and "[-]watch: the watch of nodes is lost" in text and "(degraded: warnings only)" in text
    assert "nodename_lint_webhook_degraded 1.0" in client.get("/metrics")[1]
    api_server.faults.clear()
    wait_for(lambda: not webhook.reviewer.cluster.degraded())
    assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is False
    metrics = client.get("/metrics")[1]
    assert 'nodename_lint_webhook_relists_total{kind="nodes"} 1.0' in metrics
    assert "nodename_lint_webhook_degraded 0.0" in metrics
    assert "moved-on" in webhook.reviewer.cluster.state.namespaces
    only_reads(api_server)


def test_a_watch_resumed_from_a_compacted_version_resumes_denials_only_after_its_relist(
    webhook: Any, certs: Certs, api_server: ApiServer
) -> None:
    """kube-apiserver accepts a watch from a compacted version (200), then sends the 410 as an ERROR event:
    the state must not count as current in between (CI caught denials back in that window)."""
    client = Client(webhook.port, certs)
    cluster = webhook.reviewer.cluster
    nodes = cluster.statuses["nodes"]
    api_server.history.bookmark_seconds = 3600  # the open watches' bookmarks, due every 0.3 s, are the last
    time.sleep(0.5)
    api_server.history.expired_delay = 0.3  # against SETTLE_SECONDS (1 s): the ERROR comes first even when slow
    api_server.put("namespaces", {"metadata": {"name": "moved-on"}})
    api_server.history.compact()
    seen: list[tuple[bool, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            seen.append((nodes.synced, nodes.relists))
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        api_server.history.cut()  # every watch resumes from its last version, now compacted
        wait_for(lambda: nodes.relists == 1 and not cluster.degraded())  # every kind relisted
    finally:
        stop.set()
        sampler.join()
    lost = next(i for i, (synced, _) in enumerate(seen) if not synced)
    assert all(relists == 1 for synced, relists in seen[lost:] if synced), "synced again before the relist"
    assert nodes.events.get("ERROR", 0) >= 1
    assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is False
    only_reads(api_server)


def test_a_watch_refused_with_410_relists(webhook: Any, api_server: ApiServer) -> None:
    """410 Gone as the reply to the watch request itself (not as an ERROR event): a relist, then a watch."""
    cluster = webhook.reviewer.cluster
    api_server.faults.append(Fault("gone", "/apis/node.k8s.io/v1/runtimeclasses", times=1))
    api_server.history.cut()
    wait_for(lambda: cluster.statuses["runtime_classes"].relists == 1 and not cluster.degraded())
    assert all(cluster.statuses[kind].relists == 0 for kind in ("nodes", "namespaces", "pods"))
    only_reads(api_server)


def test_relists_take_a_fresh_read_budget_each(certs: Certs, kubeconfig: Path, api_server: ApiServer) -> None:
    """A lint run's read budget is for one run; the webhook lists again and again for weeks, so each of its
    (re)lists may read what one run may. Here a run may read 4 pages: the first lists take all 4."""
    api_server.history.bookmark_seconds = 0.3
    live = LiveOptions(kubeconfig=str(kubeconfig), request_timeout=2.0, max_pages=4)
    with running(certs, live=live, watch=FAST) as served:
        cluster = served.reviewer.cluster
        wait_for(cluster.ready)
        for relists in (1, 2, 3):
            api_server.faults.append(Fault("gone", "/apis/node.k8s.io/v1/runtimeclasses", times=1))
            api_server.history.cut()
            wait_for(lambda n=relists: cluster.statuses["runtime_classes"].relists == n and not cluster.degraded())
    only_reads(api_server)


def test_a_server_that_ends_every_watch_at_once_is_not_hammered(webhook: Any, api_server: ApiServer) -> None:
    api_server.faults.append(Fault("end", "/api/v1/namespaces"))
    api_server.history.cut()
    time.sleep(2)
    watches = [r for r in api_server.requests if r.path == "/api/v1/namespaces" and r.query.get("watch")]
    assert len(watches) < 15  # backing off (0.05 s doubling to 0.2 s here), not hundreds
    assert webhook.reviewer.cluster.degraded()
    api_server.faults.clear()
    wait_for(lambda: not webhook.reviewer.cluster.degraded())
    only_reads(api_server)


def test_a_silent_watch_is_lost_after_the_idle_bound_and_resumes(
    certs: Certs, live: LiveOptions, api_server: ApiServer
) -> None:
    api_server.faults.append(Fault("stall", "/api/v1/namespaces", times=1))
    with running(certs, live=live, watch={**FAST, "idle_seconds": 1.0}) as served:
        cluster = served.reviewer.cluster
        wait_for(cluster.ready)
        wait_for(lambda: cluster.statuses["namespaces"].losses == 1)
        wait_for(lambda: not cluster.degraded())
        assert cluster.statuses["namespaces"].relists == 0  # resumed from its version: nothing to read again
    only_reads(api_server)


def test_a_node_the_state_lacks_is_looked_up_with_one_get_before_a_denial(
    webhook: Any, certs: Certs, api_server: ApiServer
) -> None:
    """The watch has not told yet (here: the API server never will), and the node is there: allowed. A node
    that is not there: denied, after one GET. A GET that fails: a warning, never a denial."""
    store = api_server.stores["nodes"]
    api_server.stores["nodes"] = Store("nodes", [*store.objects, kind_node("kind-worker9", index=9)])
    client = Client(webhook.port, certs)
    assert client.answer(pod("new", "kind-worker9"))["allowed"] is True
    assert client.answer(pod("again", "kind-worker9"))["allowed"] is True  # the state has it now: no second GET
    gets = [r for r in api_server.requests if r.path == "/api/v1/nodes/kind-worker9"]
    assert len(gets) == 1
    assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is False
    assert len([r for r in api_server.requests if r.path == "/api/v1/nodes/kind-wroker"]) == 1
    api_server.faults.append(Fault("status:503", "/api/v1/nodes/kind-wroker"))
    answer = client.answer(pod("ghost", "kind-wroker"))
    assert answer["allowed"] is True and "could not be asked whether the node exists" in answer["warnings"][0]
    assert len([r for r in api_server.requests if r.path == "/api/v1/nodes/kind-wroker"]) == 2  # never retried
    only_reads(api_server)


def test_a_kind_the_server_refuses_skips_its_rules(certs: Certs, live: LiveOptions, api_server: ApiServer) -> None:
    from tests.test_webhook_manifests import granted

    api_server.allowed = granted() - {("watch", "nodes")}
    with running(certs, live=live, watch=FAST) as served:
        cluster = served.reviewer.cluster
        client = Client(served.port, certs)
        wait_for(lambda: cluster.ready() and cluster.statuses["nodes"].refused)
        assert client.answer(pod("ghost", "kind-wroker"))["allowed"] is True  # unknown-node cannot run
        assert client.get("/readyz")[0] == 200
    assert "grant watch on nodes" in cluster.statuses["nodes"].refused
    only_reads(api_server)
