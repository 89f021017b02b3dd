"""A workload re-linted against the cluster it already runs in (issue 22): its own Pods are what the
apply replaces or keeps, so the rules predict the rollout, not a phantom shortage.

The cluster holds, as the API server stores them (every defaulted field written out):
- Deployment web: one replica on n1 (nodeSelector to n1, hostPort 8080, 3 of 4 cpu), ReplicaSet web-5d8f7c9b6d;
- StatefulSet db: three replicas pinned to n2 with nodeName, 1 cpu each of 4, ControllerRevision db-6b9f7c8d5;
- DaemonSet agent: its Pod pinned to n3 with nodeName, hostPort 9100, 3 of 4 cpu, ControllerRevision
  agent-5c6d7f8b9.
Each case runs from a YAML dump, a JSON dump, a snapshot converted from it, and live through the loopback
API server, and the four must agree.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodename_lint.cluster.templates import deployment_of_replicaset, template_digest
from nodename_lint.rollout import daemonset_strategy, deployment_strategy, scaled_value, statefulset_strategy
from tests.apiserver import ApiServer, kind_namespace, kind_node, kubeconfig_for
from tests.conftest import run_cli

USAGE_RULES = {"no-node-fits", "insufficient-resources", "host-port-conflict"}


# --- the cluster, as the API server stores it ------------------------------------------------------------
def api_container(name: str, image: str, cpu: str, port: int | None = None) -> dict[str, Any]:
    """A container after the API server's defaulting (SetDefaults_Container, the ports' protocol)."""
    container: dict[str, Any] = {
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": name,
        "resources": {"requests": {"cpu": cpu}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if port:
        container["ports"] = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
    return container


def api_spec(container: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A template's Pod spec after SetDefaults_PodSpec."""
    return {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        **fields,
    }


def owned(kind: str, name: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "apps/v1",
            "kind": kind,
            "name": name,
            "uid": f"00000000-0000-4000-8000-{len(name):012d}",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def api_pod(name: str, node: str, spec: dict[str, Any], labels: dict[str, str], owner: tuple[str, str]) -> dict:
    """A Pod of a controller, scheduled, as the API returns it."""
    pod_spec = copy.deepcopy(spec)
    pod_spec.update(
        nodeName=node,
        enableServiceLinks=True,
        priority=0,
        serviceAccount="default",
        serviceAccountName="default",
        tolerations=[
            {"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": 300}
            for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
        ],
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": labels,
            "ownerReferences": owned(*owner),
            "creationTimestamp": "2026-11-29T20:03:10Z",
        },
        "spec": pod_spec,
        "status": {"phase": "Running", "qosClass": "Burstable"},
    }


WEB_SPEC = api_spec(api_container("web", "nginx:1.27", "3", 8080), nodeSelector={"kubernetes.io/hostname": "n1"})
DB_SPEC = api_spec(api_container("db", "postgres:17", "1"), nodeName="n2")
AGENT_SPEC = api_spec(api_container("agent", "prom/node-exporter:v1.9.1", "3", 9100), nodeName="n3")


def cluster_objects(*, replicasets: bool = True, revisions: bool = True) -> dict[str, list[dict[str, Any]]]:
    web_labels = {"app": "web", "pod-template-hash": "5d8f7c9b6d"}
    objects: dict[str, list[dict[str, Any]]] = {
        "nodes": [
            {"apiVersion": "v1", "kind": "Node", **kind_node(name, index=i)}
            for i, name in enumerate(("n1", "n2", "n3"))
        ],
        "namespaces": [{"apiVersion": "v1", "kind": "Namespace", **kind_namespace("default")}],
        "pods": [
            api_pod("web-5d8f7c9b6d-x7k2p", "n1", WEB_SPEC, web_labels, ("ReplicaSet", "web-5d8f7c9b6d")),
            *(
                api_pod(
                    f"db-{i}",
                    "n2",
                    DB_SPEC,
                    {"app": "db", "controller-revision-hash": "db-6b9f7c8d5", "apps.kubernetes.io/pod-index": str(i)},
                    ("StatefulSet", "db"),
                )
                for i in range(3)
            ),
            api_pod(
                "agent-q8w2n",
                "n3",
                AGENT_SPEC,
                {"app": "agent", "controller-revision-hash": "5c6d7f8b9", "pod-template-generation": "1"},
                ("DaemonSet", "agent"),
            ),
        ],
        "replicasets": [],
        "controllerrevisions": [],
    }
    if replicasets:
        objects["replicasets"].append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": "web-5d8f7c9b6d",
                    "namespace": "default",
                    "labels": web_labels,
                    "annotations": {"deployment.kubernetes.io/revision": "1"},
                    "ownerReferences": owned("Deployment", "web"),
                },
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": web_labels},
                    "template": {"metadata": {"creationTimestamp": None, "labels": web_labels}, "spec": WEB_SPEC},
                },
                "status": {"replicas": 1, "availableReplicas": 1, "readyReplicas": 1},
            }
        )
    if revisions:
        for name, owner, labels, spec in (
            ("db-6b9f7c8d5", ("StatefulSet", "db"), {"app": "db"}, DB_SPEC),
            ("agent-5c6d7f8b9", ("DaemonSet", "agent"), {"app": "agent"}, AGENT_SPEC),
        ):
            template = {"metadata": {"creationTimestamp": None, "labels": labels}, "spec": spec, "$patch": "replace"}
            objects["controllerrevisions"].append(
                {
                    "apiVersion": "apps/v1",
                    "kind": "ControllerRevision",
                    "metadata": {"name": name, "namespace": "default", "ownerReferences": owned(*owner)},
                    "data": {"spec": {"template": template}},
                    "revision": 1,
                }
            )
    return objects


# --- the manifests, as a user writes them -----------------------------------------------------------------
WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeSelector:
        kubernetes.io/hostname: n1
      containers:
        - name: web
          image: nginx:1.27
          ports:
            - containerPort: 8080
              hostPort: 8080
          resources:
            requests:
              cpu: 3000m
"""
WEB_CHANGED = WEB.replace("nginx:1.27", "nginx:1.28")
WEB_RECREATE = WEB_CHANGED.replace("  replicas: 1\n", "  replicas: 1\n  strategy:\n    type: Recreate\n")
WEB_NO_SURGE = WEB_CHANGED.replace(
    "  replicas: 1\n", "  replicas: 1\n  strategy:\n    rollingUpdate: {maxSurge: 0, maxUnavailable: 1}\n"
)
WEB_SCALED = WEB.replace("replicas: 1", "replicas: 2")
DB = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 3
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      nodeName: n2
      containers:
        - name: db
          image: postgres:17
          resources:
            requests:
              cpu: "1"
"""
DB_NEW_IMAGE = DB.replace("postgres:17", "postgres:17.2")
DB_BIGGER = DB.replace('cpu: "1"', "cpu: 1500m")
AGENT = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      nodeName: n3
      containers:
        - name: agent
          image: prom/node-exporter:v1.9.1
          ports:
            - containerPort: 9100
              hostPort: 9100
          resources:
            requests:
              cpu: "3"
"""
AGENT_CHANGED = AGENT.replace("v1.9.1", "v1.9.2")
AGENT_SURGE = AGENT_CHANGED.replace(
    "  selector:\n", "  updateStrategy:\n    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}\n  selector:\n", 1
)


# --- running the CLI against the same cluster four ways --------------------------------------------------
def _as_list(objects: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    items = [item for kind in objects.values() for item in kind]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _findings(stdout: str) -> list[dict[str, Any]]:
    return [f for f in json.loads(stdout)["findings"] if f["rule"] in USAGE_RULES]


def _lint(tmp_path: Path, manifest: str, *state_args: str) -> list[dict[str, Any]]:
    path = tmp_path / "workload.yaml"
    path.write_text(manifest, encoding="utf-8")
    result = run_cli(str(path), *state_args, "--format", "json", "--ignore", "nodename-in-template")
    assert result.returncode in (0, 1), result.stderr
    found = _findings(result.stdout)
    for finding in found:  # what may differ between the ways: the state's name in messages
        finding["message"] = finding["message"].replace(state_args[-1], "<state>")
        finding.pop("file", None)
    return found


_FROM_FILES: dict[str, list[dict[str, Any]]] = {}  # the live tests compare with these: each case runs once


def _every_way(tmp_path: Path, manifest: str, objects: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The usage rules' findings from a YAML dump, a JSON dump and its snapshot; they must be the same."""
    key = json.dumps([manifest, objects], sort_keys=True)
    if key not in _FROM_FILES:
        _FROM_FILES[key] = _from_files(tmp_path, manifest, objects)
    return copy.deepcopy(_FROM_FILES[key])


def _from_files(tmp_path: Path, manifest: str, objects: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    listed = _as_list(objects)
    dump_yaml = tmp_path / "state.yaml"
    dump_yaml.write_text(yaml.safe_dump(listed, sort_keys=False), encoding="utf-8")
    dump_json = tmp_path / "state.json"
    dump_json.write_text(json.dumps(listed), encoding="utf-8")
    snapshot = tmp_path / "state.snapshot.json"
    converted = run_cli("snapshot", "--cluster-state", str(dump_json), "-o", str(snapshot))
    assert converted.returncode == 0, converted.stderr
    results = [_lint(tmp_path, manifest, "--cluster-state", str(state)) for state in (dump_yaml, dump_json, snapshot)]
    assert results[0] == results[1] == results[2]
    return results[0]


def _live(tmp_path: Path, manifest: str, objects: dict[str, list[dict[str, Any]]]) -> tuple[list[dict], ApiServer]:
    workloads = {resource: objects[resource] for resource in ("replicasets", "controllerrevisions")}
    server = ApiServer(objects["nodes"], objects["namespaces"], objects["pods"], workloads=workloads)
    with server:
        kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", server)
        found = _lint(tmp_path, manifest, "--kubeconfig", str(kubeconfig))
    assert server.methods == {"GET"}
    return found, server


# --- Deployment ---------------------------------------------------------------------------------------------
def test_an_unchanged_deployment_creates_no_pod_so_no_shortage(tmp_path: Path) -> None:
    """The running replica holds the port and 3 of 4 cpu; before, no-node-fits said it stays Pending."""
    assert _every_way(tmp_path, WEB, cluster_objects()) == []


def test_a_changed_template_under_the_default_rolling_update_stalls(tmp_path: Path) -> None:
    found = _every_way(tmp_path, WEB_CHANGED, cluster_objects())
    assert [f["rule"] for f in found] == ["no-node-fits"]
    message, fix = found[0]["message"], found[0]["fix"]
    assert message.startswith(
        "applying this changed Pod template starts a rolling update of Deployment web, which stalls"
    )
    assert "\"0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, " in message
    assert "the old Pod web-5d8f7c9b6d-x7k2p (on n1) keeps running the old template" in message
    assert "maxSurge 25% of 1 replica rounds up to 1" in message  # ResolveFenceposts' rounding, both ways
    assert "maxUnavailable 25% of 1 replica rounds down to 0" in message
    assert "maxSurge: 0 and maxUnavailable: 1" in fix and "type: Recreate" in fix


@pytest.mark.parametrize("manifest", [WEB_RECREATE, WEB_NO_SURGE], ids=["Recreate", "maxSurge-0"])
def test_a_strategy_that_frees_the_room_first_lets_the_new_pod_fit(tmp_path: Path, manifest: str) -> None:
    assert _every_way(tmp_path, manifest, cluster_objects()) == []


def test_scaling_up_an_unchanged_deployment_counts_the_running_replica(tmp_path: Path) -> None:
    found = _every_way(tmp_path, WEB_SCALED, cluster_objects())
    assert [f["rule"] for f in found] == ["no-node-fits"]
    assert found[0]["message"].startswith("applying this manifest scales Deployment web from 1 Pod to 2")
    assert "the 1 Pod it runs now keep running and were counted" in found[0]["message"]


def test_without_replicasets_the_running_pods_are_taken_for_its_own_and_the_outcome_is_conditional(
    tmp_path: Path,
) -> None:
    """A dump without ReplicaSets cannot tell an unchanged template: the message says so, and which Pods."""
    found = _every_way(tmp_path, WEB, cluster_objects(replicasets=False))
    assert [f["rule"] for f in found] == ["no-node-fits"]
    message = found[0]["message"]
    assert message.startswith(
        "if this Pod template differs from the one Deployment web runs (the cluster state cannot tell"
    )
    assert "replicasets,controllerrevisions" in message  # what to save
    assert "if the template is unchanged, applying it creates no Pod" in message
    assert "web-5d8f7c9b6d-x7k2p were taken for Deployment web's own Pods by the name of their ReplicaSet" in message


def test_a_rollout_no_strategy_helps_quotes_the_event_with_the_old_pod_it_keeps(tmp_path: Path) -> None:
    """5 cpu never fit a 4-cpu node, so no strategy helps; but the default strategy keeps the old replica
    running (maxUnavailable 0), and the new Pod's FailedScheduling event counts it: its host port is the
    first filter that fails on n1 (was: the event of a cluster without the old Pod, "Insufficient cpu")."""
    found = _every_way(tmp_path, WEB_CHANGED.replace("cpu: 3000m", "cpu: 5"), cluster_objects())
    assert [f["rule"] for f in found] == ["no-node-fits"]
    message = found[0]["message"]
    assert (
        "FailedScheduling \"0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, "
        "2 node(s) didn't match Pod's node affinity/selector." in message
    )
    assert "the old Pod web-5d8f7c9b6d-x7k2p (on n1) keeps running and is counted" in message
    assert "no update strategy helps: the new Pods do not fit even once the old ones are gone" in message


# --- StatefulSet ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("manifest", [DB, DB_NEW_IMAGE], ids=["unchanged", "new-image-same-size"])
def test_a_statefulset_replaces_each_pod_in_its_own_place(tmp_path: Path, manifest: str) -> None:
    """n2 runs the three replicas at 1 of 4 cpu each: a same-size template fits where each old Pod was."""
    assert _every_way(tmp_path, manifest, cluster_objects()) == []


def test_a_bigger_statefulset_template_stalls_with_a_replica_down(tmp_path: Path) -> None:
    found = _every_way(tmp_path, DB_BIGGER, cluster_objects())
    assert [f["rule"] for f in found] == ["insufficient-resources"]
    message = found[0]["message"]
    assert "rolling update of StatefulSet db, which stalls" in message
    assert "only 2 of the 3 new Pods of StatefulSet db fit on n2" in message
    # db-2 and db-1 are replaced (1.5 cpu each where 1 was), then db-0 is deleted and 1.5 cpu no longer fits
    assert "so db-0 is deleted, its replacement finds no room, and that replica stays down" in message
    assert "lower the cpu request to at most 1333m cpu" in found[0]["fix"]


def test_a_critical_template_completes_its_rollout_by_evicting_a_lower_priority_pod(tmp_path: Path) -> None:
    """n2 runs db's three replicas at 1 cpu and a 500m Pod of priority 0. A template of 1200m replaces db-2 and
    db-1; db-0's replacement finds 3.9 of 4 cpu requested, and, critical, the kubelet's critical Pod
    admission evicts the 500m Pod to admit it (getPodsToPreempt): the rollout completes. Before, the play
    ignored the eviction and said the rollout stalls (a seed of tests/test_oracle_rollout.py found it on a
    Deployment's surge Pod)."""
    objects = cluster_objects()
    cache = api_pod("cache", "n2", api_spec(api_container("cache", "redis:7", "500m")), {"app": "cache"}, ("X", "x"))
    del cache["metadata"]["ownerReferences"]
    objects["pods"].append(cache)
    bigger = DB.replace('cpu: "1"', "cpu: 1200m")
    pinned = "      nodeName: n2\n"
    critical = bigger.replace(pinned, pinned + "      priorityClassName: system-node-critical\n")
    found = _every_way(tmp_path, critical, objects)
    assert [f["rule"] for f in found] == ["insufficient-resources"], found
    message = found[0]["message"]
    assert message.startswith("applying this changed Pod template starts a rolling update of StatefulSet db: "), message
    assert "the kubelet evicts default/cache to admit it" in message and "stalls" not in message
    assert message.endswith("; the rollout then completes"), message
    assert found[0]["severity"] == "warning"
    # not critical, the same template stalls at db-0, and nothing is evicted
    stalled = _every_way(tmp_path, bigger, objects)
    assert "which stalls" in stalled[0]["message"] and "evicts" not in stalled[0]["message"]


def test_a_statefulset_the_scheduler_places_stalls_where_its_recreated_pod_finds_no_node(tmp_path: Path) -> None:
    scheduled = DB_BIGGER.replace("nodeName: n2", "nodeSelector: {kubernetes.io/hostname: n2}")
    found = _every_way(tmp_path, scheduled, cluster_objects())
    assert [f["rule"] for f in found] == ["no-node-fits"]
    message = found[0]["message"]
    assert "rolling update of StatefulSet db, which stalls: no node of the cluster can take the new Pod" in message
    assert (
        "\"0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. no new "
        "claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        '2 Preemption is not helpful for scheduling."' in message
    )
    assert "so db-0 is deleted, its replacement finds no room" in message


# --- DaemonSet ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("manifest", [AGENT, AGENT_CHANGED], ids=["unchanged", "changed-default-no-surge"])
def test_a_daemonset_pod_is_replaced_in_its_place(tmp_path: Path, manifest: str) -> None:
    """maxSurge defaults to 0: the old Pod is deleted first and the new one takes its port and cpu."""
    assert _every_way(tmp_path, manifest, cluster_objects()) == []


def test_a_port_the_old_pod_shares_with_another_pod_stays_held_when_the_old_pod_goes(tmp_path: Path) -> None:
    """Another Pod on n3 holds host port 9100 too (the kubelet admitted both: a Pod not yet admitted, or one
    on another hostIP before a change): the DaemonSet's old Pod going does not free it."""
    objects = cluster_objects()
    other = api_pod("a-exporter", "n3", api_spec(api_container("exporter", "exporter:1", "100m", 9100)), {}, ("", ""))
    other["metadata"].pop("ownerReferences")
    objects["pods"].insert(0, other)  # before the DaemonSet's Pod, in a dump as in the API's order
    found = _every_way(tmp_path, AGENT_CHANGED, objects)
    assert [f["rule"] for f in found] == ["host-port-conflict"]
    assert "host port TCP 9100 is already used by Pod default/a-exporter" in found[0]["message"]


def test_a_daemonset_with_surge_stalls_beside_its_old_pod(tmp_path: Path) -> None:
    found = _every_way(tmp_path, AGENT_SURGE, cluster_objects())
    assert sorted(f["rule"] for f in found) == ["host-port-conflict", "insufficient-resources"]
    for finding in found:
        assert finding["message"].startswith("applying this changed Pod template starts a rolling update of DaemonSet")
        assert "the old Pod agent-q8w2n (on n3) keeps running the old template" in finding["message"]
        assert "maxSurge: 0 (the default) and maxUnavailable: 1" in finding["fix"]
    ports = next(f for f in found if f["rule"] == "host-port-conflict")
    assert "host port TCP 9100 is already used by Pod default/agent-q8w2n" in ports["message"]


# --- live ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("manifest", "rules"),
    [
        (WEB, []),
        (WEB_CHANGED, ["no-node-fits"]),
        (WEB_RECREATE, []),
        (DB, []),
        (DB_BIGGER, ["insufficient-resources"]),
        (AGENT_CHANGED, []),
        (AGENT_SURGE, ["host-port-conflict", "insufficient-resources"]),
    ],
    ids=["web", "web-changed", "web-recreate", "db", "db-bigger", "agent-changed", "agent-surge"],
)
def test_live_mode_predicts_the_same_rollout(tmp_path: Path, manifest: str, rules: list[str]) -> None:
    objects = cluster_objects()
    found, server = _live(tmp_path, manifest, objects)
    assert sorted(f["rule"] for f in found) == rules
    assert found == _every_way(tmp_path, manifest, objects)  # word for word as from a dump
    holders = [r for r in server.requests if r.path.startswith("/apis/apps/v1/")]
    assert holders and all(
        "/namespaces/default/" in r.path and "metadata.name=" in r.query["fieldSelector"] for r in holders
    )


def test_a_snapshot_of_the_live_cluster_predicts_the_same_rollouts(tmp_path: Path) -> None:
    objects = cluster_objects()
    workloads = {resource: objects[resource] for resource in ("replicasets", "controllerrevisions")}
    with ApiServer(objects["nodes"], objects["namespaces"], objects["pods"], workloads=workloads) as server:
        saved = run_cli(
            "snapshot",
            "--kubeconfig",
            str(kubeconfig_for(tmp_path / "kubeconfig", server)),
            "-o",
            str(tmp_path / "s.json"),
        )
    assert saved.returncode == 0, saved.stderr
    assert "/apis/apps/v1/controllerrevisions" in {r.path for r in server.requests}
    for manifest, rules in ((WEB, []), (WEB_CHANGED, ["no-node-fits"]), (DB_BIGGER, ["insufficient-resources"])):
        found = _lint(tmp_path, manifest, "--cluster-state", str(tmp_path / "s.json"))
        assert [f["rule"] for f in found] == rules
        assert [f["message"] for f in found] == [f["message"] for f in _every_way(tmp_path, manifest, objects)]


def test_a_live_rollout_run_sends_only_get_and_list_requests(tmp_path: Path) -> None:
    """Every kind of rollout at once, linted live and saved as a snapshot: the API server sees GET requests
    only, each a discovery read, a LIST of a collection or a GET of one object (no watch), and its objects
    are as they were."""
    objects = cluster_objects()
    workloads = {resource: objects[resource] for resource in ("replicasets", "controllerrevisions")}
    manifest = "---\n".join((WEB_CHANGED, DB_BIGGER, AGENT_SURGE))
    server = ApiServer(objects["nodes"], objects["namespaces"], objects["pods"], workloads=workloads)
    with server:
        before = {name: json.dumps(store.objects, sort_keys=True) for name, store in server.stores.items()}
        kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", server)
        found = _lint(tmp_path, manifest, "--kubeconfig", str(kubeconfig))
        saved = run_cli("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "s.json"))
        after = {name: json.dumps(store.objects, sort_keys=True) for name, store in server.stores.items()}
    assert saved.returncode == 0, saved.stderr
    assert sorted(f["rule"] for f in found) == [
        "host-port-conflict",
        "insufficient-resources",
        "insufficient-resources",
        "no-node-fits",
    ]
    assert server.methods == {"GET"}
    verbs = set()
    for request in server.requests:
        assert request.query.get("watch") not in ("1", "true"), request
        parts = [part for part in request.path.split("/") if part]
        if parts[-1] in ("version", "api", "apis", "v1") or (request.path.startswith("/apis/") and len(parts) == 3):
            verbs.add("discovery")
        elif parts[-1] in (
            "nodes",
            "namespaces",
            "pods",
            "runtimeclasses",
            "priorityclasses",
            "replicasets",
            "controllerrevisions",
        ):
            verbs.add("list")
        else:
            assert parts[-2] in ("nodes", "namespaces", "pods"), request  # a GET of one named object
            verbs.add("get")
    assert "list" in verbs
    assert {"/apis/apps/v1/namespaces/default/replicasets", "/apis/apps/v1/controllerrevisions"} <= {
        r.path for r in server.requests
    }
    assert after == before


def test_live_mode_reads_only_the_templates_of_the_workloads_own_pods(tmp_path: Path) -> None:
    _, server = _live(tmp_path, WEB_CHANGED, cluster_objects())
    calls = [(r.path, r.query.get("fieldSelector", "")) for r in server.requests if r.path.startswith("/apis/apps/")]
    assert calls == [("/apis/apps/v1/namespaces/default/replicasets", "metadata.name=web-5d8f7c9b6d")]


def test_live_mode_without_rbac_on_replicasets_says_the_outcome_is_conditional(tmp_path: Path) -> None:
    objects = cluster_objects()
    server = ApiServer(objects["nodes"], objects["namespaces"], objects["pods"])
    server.forbidden.add(("list", "replicasets"))
    with server:
        kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", server)
        found = _lint(tmp_path, WEB, "--kubeconfig", str(kubeconfig))
    assert [f["rule"] for f in found] == ["no-node-fits"]
    assert "grant list on replicasets" in found[0]["message"]
    assert "if the template is unchanged, applying it creates no Pod" in found[0]["message"]


# --- the parts ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "total", "up", "expected"),
    [
        ("25%", 1, True, 1),
        ("25%", 1, False, 0),
        ("25%", 4, False, 1),
        ("30%", 5, True, 2),  # 1.5 rounds up
        ("30%", 5, False, 1),  # and down
        ("0%", 10, True, 0),
        (2, 10, True, 2),
        ("100%", 3, False, 3),
        ("2", 10, True, None),  # a string must be a percentage
        (True, 1, True, None),
        (-1, 1, True, None),
    ],
)
def test_scaled_values_round_as_the_controllers_do(value: Any, total: int, up: bool, expected: int | None) -> None:
    assert scaled_value(value, total, up) == expected


def test_deployment_fenceposts() -> None:
    default = deployment_strategy({}, 1)
    assert default is not None and (default.surge, default.unavailable) == (1, 0)
    both_zero = deployment_strategy({"strategy": {"rollingUpdate": {"maxSurge": "10%", "maxUnavailable": "10%"}}}, 1)
    assert both_zero is not None and (both_zero.surge, both_zero.unavailable) == (1, 0)  # 10% of 1: up 1, down 0
    zero = deployment_strategy({"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}}}, 5)
    assert zero is not None and (zero.surge, zero.unavailable) == (0, 1)  # both 0: ResolveFenceposts takes 1
    recreate = deployment_strategy({"strategy": {"type": "Recreate"}}, 3)
    assert recreate is not None and recreate.type == "Recreate"
    assert deployment_strategy({"strategy": {"rollingUpdate": {"maxSurge": "x"}}}, 3) is None


def test_statefulset_and_daemonset_defaults() -> None:
    sts = statefulset_strategy({})
    assert sts is not None and (sts.type, sts.partition) == ("RollingUpdate", 0)
    partitioned = statefulset_strategy({"updateStrategy": {"rollingUpdate": {"partition": 2}}})
    assert partitioned is not None and partitioned.partition == 2
    on_delete = statefulset_strategy({"updateStrategy": {"type": "OnDelete"}})
    assert on_delete is not None and on_delete.type == "OnDelete"
    daemon = daemonset_strategy({})
    assert daemon is not None and (daemon.surge, daemon.unavailable) == (0, 1)  # SetDefaults_DaemonSet
    surge = daemonset_strategy({"updateStrategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}})
    assert surge is not None and (surge.surge, surge.unavailable) == (1, 0)  # rounded up against 1 node


MANIFEST_TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "hostNetwork": False,  # Go omits false: the stored object has no hostNetwork
        "containers": [
            {
                "name": "web",
                "image": "nginx",  # no tag: imagePullPolicy defaults to Always
                "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": 0.5, "memory": "1024Mi"}, "limits": {"memory": "1Gi"}},
                "livenessProbe": {"httpGet": {"port": 8080}},
                "ports": [{"containerPort": 8080}],
                "volumeMounts": [{"name": "config", "mountPath": "/etc/web", "readOnly": False}],
            }
        ],
        "volumes": [{"name": "config", "configMap": {"name": "web"}}, {"name": "scratch"}],
    },
}
STORED_TEMPLATE = {  # what the API server keeps for it (and copies into the ReplicaSet, with the hash label)
    "metadata": {"creationTimestamp": None, "labels": {"app": "web", "pod-template-hash": "7c9f5d6b8"}},
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx",
                "imagePullPolicy": "Always",
                "env": [{"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
                "livenessProbe": {
                    "httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"},
                    "timeoutSeconds": 1,
                    "periodSeconds": 10,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}],
            }
        ],
        "volumes": [
            {"name": "config", "configMap": {"name": "web", "defaultMode": 420}},
            {"name": "scratch", "emptyDir": {}},
        ],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    },
}


def test_the_api_servers_defaults_do_not_make_a_template_differ() -> None:
    assert template_digest(MANIFEST_TEMPLATE) == template_digest(STORED_TEMPLATE)
    restarted = copy.deepcopy(STORED_TEMPLATE)  # `kubectl rollout restart`; apply keeps it
    restarted["metadata"]["annotations"] = {"kubectl.kubernetes.io/restartedAt": "2026-11-30T08:00:00Z"}
    assert template_digest(restarted) == template_digest(MANIFEST_TEMPLATE)


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t["spec"]["containers"][0].update(image="nginx:1.28"),
        lambda t: t["spec"]["containers"][0]["resources"]["requests"].update(cpu="501m"),
        lambda t: t["spec"]["containers"][0]["env"].append({"name": "MODE", "value": "fast"}),
        lambda t: t["spec"]["containers"][0].update(imagePullPolicy="IfNotPresent"),
        lambda t: t["metadata"]["labels"].update(version="2"),
        lambda t: t["metadata"].update(annotations={"checksum/config": "abc"}),
        lambda t: t["spec"].update(nodeSelector={"disktype": "ssd"}),
        lambda t: t["spec"].update(terminationGracePeriodSeconds=60),
        lambda t: t["spec"]["volumes"][0]["configMap"].update(defaultMode=256),
    ],
    ids=["image", "cpu", "env", "pull-policy", "label", "annotation", "selector", "grace", "mode"],
)
def test_a_real_change_makes_the_template_differ(change: Any) -> None:
    changed = copy.deepcopy(STORED_TEMPLATE)
    change(changed)
    assert template_digest(changed) != template_digest(MANIFEST_TEMPLATE)


def test_replicaset_names_of_a_deployment() -> None:
    assert deployment_of_replicaset("web-5d8f7c9b6d") == "web"
    assert deployment_of_replicaset("web-api-5d8f7c9b6d") == "web-api"  # the hash alphabet has no "-"
    assert deployment_of_replicaset("web-api") is None  # nor vowels
    assert deployment_of_replicaset("web-") is None and deployment_of_replicaset("5d8f7c9b6d") is None


# --- what an API server or a dump may hold: nothing steers a request, nothing crashes -------------------------------
def test_hostile_owner_references_never_become_a_request(tmp_path: Path) -> None:
    objects = cluster_objects(replicasets=False)
    for pod, name in zip(
        objects["pods"], ("web-5d8f/../../secrets", "db,x=y", "db?watch=1", "a" * 300, "."), strict=True
    ):
        pod["metadata"]["ownerReferences"][0]["name"] = name
        pod["metadata"]["labels"]["controller-revision-hash"] = name
    objects["pods"].append(api_pod("odd", "n1", WEB_SPEC, {"controller-revision-hash": "../x"}, ("StatefulSet", "db")))
    _, server = _live(tmp_path, WEB, objects)  # the run ends normally (exit 0 or 1)
    assert not [r for r in server.requests if r.path.startswith("/apis/apps/")]  # no name was fit for a request
    assert all("secrets" not in r.path and ".." not in r.path for r in server.requests)


def test_a_template_nested_too_deeply_is_only_a_template_that_differs() -> None:
    deep: Any = {}
    for _ in range(5000):
        deep = {"a": deep}
    assert template_digest({"spec": {"containers": [deep]}}) == ""


workload_kinds = st.sampled_from(["Deployment", "StatefulSet", "DaemonSet"])
cpus = st.sampled_from(["100m", "500m", "1", "1500m", "2", "3"])
strategies = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["RollingUpdate", "Recreate", "OnDelete", "Bogus"])},
        optional={
            "rollingUpdate": st.fixed_dictionaries(
                {},
                optional={
                    "maxSurge": st.one_of(st.integers(0, 3), st.sampled_from(["0%", "25%", "50%", "100%", "x", True])),
                    "maxUnavailable": st.one_of(st.integers(0, 3), st.sampled_from(["0%", "25%", "100%", None])),
                    "partition": st.one_of(st.integers(0, 4), st.just("2")),
                },
            )
        },
    ),
)


@st.composite
def running_workloads(draw: Any) -> tuple[str, dict[str, Any], dict[str, Any], int]:
    """A workload manifest, and a cluster where its Pods were placed from that very template."""
    kind = draw(workload_kinds)
    nodes = [f"n{i}" for i in range(draw(st.integers(1, 3)))]
    capacity = {name: draw(st.sampled_from([2000, 4000, 8000])) for name in nodes}
    pinned = draw(st.sampled_from(nodes)) if kind == "DaemonSet" or draw(st.booleans()) else None
    cpu = draw(cpus)
    port = draw(st.sampled_from([None, 8080]))
    container: dict[str, Any] = {
        "name": "app",
        "image": draw(st.sampled_from(["app:1", "app"])),
        "resources": {"requests": {"cpu": cpu}},
    }
    if port:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    spec: dict[str, Any] = {"containers": [container], **({"nodeName": pinned} if pinned else {})}
    replicas = 1 if kind == "DaemonSet" else draw(st.integers(1, 4))
    workload_spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "w"}},
        "template": {"metadata": {"labels": {"app": "w"}}, "spec": spec},
    }
    if kind != "DaemonSet":
        workload_spec["replicas"] = replicas
    strategy = draw(strategies)
    if strategy is not None:
        workload_spec["strategy" if kind == "Deployment" else "updateStrategy"] = strategy
    manifest = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": "w", "namespace": "default"},
        "spec": workload_spec,
    }
    # place the replicas as the cluster did: first node with room for cpu and the port
    millis = {"100m": 100, "500m": 500, "1": 1000, "1500m": 1500, "2": 2000, "3": 3000}[cpu]
    used = {name: draw(st.sampled_from([0, 500, 1000])) for name in nodes}
    ports: set[str] = set()
    holder = {"ReplicaSet": "w-5d8f7c9b6d", "StatefulSet": "w-6b9f7c8d5", "DaemonSet": "w-5c6d7f8b9"}
    owner = {
        "Deployment": ("ReplicaSet", holder["ReplicaSet"]),
        "StatefulSet": ("StatefulSet", "w"),
        "DaemonSet": ("DaemonSet", "w"),
    }[kind]
    labels = {"app": "w", "controller-revision-hash": "w-6b9f7c8d5" if kind == "StatefulSet" else "5c6d7f8b9"}
    pods, placed = [], 0
    for index in range(replicas):
        for name in [pinned] if pinned else nodes:
            if used[name] + millis <= capacity[name] and not (port and name in ports):
                used[name] += millis
                ports.add(name) if port else None
                pod_name = f"w-{index}" if kind == "StatefulSet" else f"w-5d8f7c9b6d-{index}x"
                pods.append(api_pod(pod_name, name, spec, labels, owner))
                placed += 1
                break
    nodes_objects = [
        {"kind": "Node", **kind_node(name, cpu=f"{capacity[name]}m", index=i)} for i, name in enumerate(nodes)
    ]
    others = [
        {
            "kind": "Pod",
            "metadata": {"name": f"other-{name}", "namespace": "default"},
            "spec": {
                "nodeName": name,
                "containers": [
                    {
                        "name": "c",
                        "resources": {
                            "requests": {
                                "cpu": f"{used[name] - sum(1 for p in pods if p['spec']['nodeName'] == name) * millis}m"
                            }
                        },
                    }
                ],
            },
            "status": {"phase": "Running"},
        }
        for name in nodes
    ]
    template = {"metadata": {"labels": {"app": "w"}}, "spec": spec}
    if kind == "Deployment":
        holder_object = {
            "kind": "ReplicaSet",
            "metadata": {
                "name": holder["ReplicaSet"],
                "namespace": "default",
                "ownerReferences": owned("Deployment", "w"),
            },
            "spec": {"template": template},
        }
    else:
        name = holder["StatefulSet"] if kind == "StatefulSet" else holder["DaemonSet"]
        holder_object = {
            "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": owned(kind, "w")},
            "data": {"spec": {"template": template}},
        }
    state = {"apiVersion": "v1", "kind": "List", "items": [*nodes_objects, *others, *pods, holder_object]}
    return kind, manifest, state, replicas - placed


@given(running_workloads(), cpus, st.booleans())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_relinting_what_runs_finds_nothing_and_a_change_never_crashes(
    case: tuple[str, dict[str, Any], dict[str, Any], int], new_cpu: str, change_image: bool
) -> None:
    from nodename_lint.cluster.from_file import load_state_text

    from .conftest import lint_yaml

    _, manifest, state, missing = case
    cluster = load_state_text(json.dumps(state), "state.json")
    text = yaml.safe_dump(manifest)
    findings = lint_yaml(text, rules=sorted(USAGE_RULES), cluster=cluster)  # no rule may raise (lint_yaml asserts)
    if not missing:  # every replica runs this very template: applying it creates no Pod
        assert findings == [], [f.message for f in findings]
    changed = copy.deepcopy(manifest)
    container = changed["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["requests"]["cpu"] = new_cpu
    if change_image:
        container["image"] = "app:2"
    running = any(item["kind"] == "Pod" and item["metadata"]["name"].startswith("w-") for item in state["items"])
    for finding in lint_yaml(yaml.safe_dump(changed), rules=sorted(USAGE_RULES), cluster=cluster):
        if running:  # a workload that runs: what its rollout does, never a count of its own Pods against it
            assert finding.message.startswith(("applying this", "if this Pod template")), finding.message


def test_an_old_pod_the_kubelet_evicted_and_its_controller_then_deleted_frees_its_room_once() -> None:
    """A critical new Pod may evict one of the workload's own old Pods (their priority is lower); when the
    controller deletes that Pod later, the view must not give its requests back twice."""
    from nodename_lint.cluster.from_file import load_state_text
    from nodename_lint.cluster.records import RunningPod
    from nodename_lint.rollout import OwnPod, RolloutView

    state = load_state_text(json.dumps(_as_list(cluster_objects())), "state.json")
    view = RolloutView.of(state, {"cpu": 1000}, [], "a new Pod")
    base = view.usage("n2")
    assert base is not None and base.requested["cpu"] == 3000
    pod = next(p for p in state.pods or () if p.name == "db-2")
    view.evict("n2", [RunningPod("default/db-2", 0, False, "Burstable", None, {"cpu": 1000})])
    view.remove(OwnPod(pod, "n2", False))
    after = view.usage("n2")
    assert after is not None and after.requested["cpu"] == 2000 and after.pods == base.pods - 1
