"""Issue 22: each disagreement the differential oracle found, pinned as a case.

A case is a small cluster, a manifest, what a rule must say about it (or that it stays silent), and
the answer the Kubernetes code gives for it. `test_nodename_lint_says_it` runs anywhere;
`test_the_kubernetes_code_says_it` asks ../shared/k8s-oracle for the recorded answer, so that the
expectations here are the cluster's and not a reading of its source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from nodename_lint.cluster.from_file import load_state_text
from nodename_lint.cluster.objects import state_from_objects
from nodename_lint.cluster.records import PodInfo
from nodename_lint.scheduling import pod_requests, running_pods_requests

from .conftest import SHARED, SHARED_MISSING, lint_yaml, unavailable
from .differential.generator import admitted
from .differential.oracle import OracleError, build, run_batch


def node(
    name: str = "kind-worker",
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    conditions: dict[str, str] | None = None,
    operating_system: str = "linux",
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": {"taints": taints or []},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "10Gi"},
            "conditions": [{"type": "Ready", "status": "True"}]
            + [{"type": kind, "status": status} for kind, status in (conditions or {}).items()],
            "nodeInfo": {"operatingSystem": operating_system},
        },
    }
    found["metadata"]["labels"] = (
        {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"} if labels is None else labels
    )
    return found


def running(name: str, node_name: str = "kind-worker", cpu: str = "100m", ports: list | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
    if ports:
        container["ports"] = ports
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"nodeName": node_name, "containers": [container]},
        "status": {"phase": "Running"},
    }


def pod(
    *, node_name: str | None = "kind-worker", requests: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests}
    containers = spec.pop("containers", [container])
    body = {**({"nodeName": node_name} if node_name else {}), **spec, "containers": containers}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": "default"}, "spec": body}


def deployment(template: dict[str, Any], replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "probe", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "probe"}},
            "template": {"metadata": {"labels": {"app": "probe"}}, "spec": template["spec"]},
        },
    }


@dataclass
class Case:
    name: str
    nodes: list[dict[str, Any]]
    manifest: dict[str, Any]
    rule: str
    says: list[str]  # what the rule's message contains ([]: the rule is silent)
    mode: str  # the oracle's: kubelet, kubelet-replicas, scheduler
    answer: dict[str, Any]  # what the oracle answers (these keys; "reason" may be a set of reasons)
    pods: list[dict[str, Any]] = field(default_factory=lambda: [running("kube-proxy-x")])
    not_says: list[str] = field(default_factory=list)

    def findings(self) -> list[Any]:
        if self.nodes:
            state = load_state_text(json.dumps({"kind": "List", "items": [*self.nodes, *self.pods]}), "state.json")
        else:  # a file without Nodes is refused; a live cluster may have none
            state = state_from_objects("context test", nodes=[], namespaces=None, pods=self.pods)
        return [f for f in lint_yaml(json.dumps(self.manifest), cluster=state) if f.rule == self.rule]


def _pod_of(manifest: dict[str, Any]) -> dict[str, Any]:
    if manifest["kind"] == "Pod":
        return manifest
    template = manifest["spec"]["template"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "probe", **template["metadata"]},
        "spec": template["spec"],
    }


FULL_NODE = [running("hog", cpu="3")]
HOSTPORT_80 = [{"containerPort": 80, "hostPort": 80}]
NO_HUGEPAGES_FOR = {"hugepages-2Mi": "4Mi", "hugepages-1Gi": "1Gi", "memory": "64Mi"}
CONFLICT = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["a"]},
                        {"key": "metadata.name", "operator": "In", "values": ["b"]},
                    ]
                }
            ]
        }
    }
}
TWICE_1_1_BYTES = [
    {"name": f"c{i}", "image": "busybox", "resources": {"requests": {"memory": "1.1"}}} for i in range(2)
]
NOT_HELPFUL = (
    "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)

CASES = [
    # --- the FailedScheduling text: FitError.Error() with the PostFilter plugins' part -----------------
    Case(
        "a request above the allocatable: preemption cannot help",
        [node()],
        pod(node_name=None, requests={"cpu": "5"}),
        "no-node-fits",
        [f'FailedScheduling "0/1 nodes are available: 1 Insufficient cpu. {NOT_HELPFUL}"'],
        "scheduler",
        {"fits": False, "message": f"0/1 nodes are available: 1 Insufficient cpu. {NOT_HELPFUL}"},
    ),
    Case(
        "a node that is full now: preemption finds no victim",
        [node()],
        pod(node_name=None, requests={"cpu": "2"}),
        "no-node-fits",
        [
            'FailedScheduling "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: '
            '0/1 nodes are available: 1 No preemption victims found for incoming pod."'
        ],
        "scheduler",
        {
            "fits": False,
            "message": "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
            "0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        },
        pods=FULL_NODE,
    ),
    Case(
        "preemptionPolicy Never",
        [node()],
        pod(node_name=None, requests={"cpu": "5"}, preemptionPolicy="Never"),
        "no-node-fits",
        [
            'FailedScheduling "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: '
            'not eligible due to preemptionPolicy=Never."'
        ],
        "scheduler",
        {
            "fits": False,
            "message": "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
            "not eligible due to preemptionPolicy=Never.",
        },
    ),
    Case(
        "a PreFilter failure ends with DynamicResources' error",
        [node()],
        pod(node_name=None, affinity=CONFLICT),
        "no-node-fits",
        ['FailedScheduling "0/1 nodes are available: pod affinity terms conflict. not found"'],
        "scheduler",
        {"fits": False, "message": "0/1 nodes are available: pod affinity terms conflict. not found"},
    ),
    Case(
        "no node at all",
        [],
        pod(node_name=None),
        "no-node-fits",
        ['FailedScheduling "no nodes available to schedule pods"'],
        "scheduler",
        {"fits": False, "message": "no nodes available to schedule pods"},
        pods=[],
    ),
    Case(
        "the not-ready NoExecute taint is tolerated by default (DefaultTolerationSeconds)",
        [node(taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}])],
        pod(node_name=None),
        "no-node-fits",
        [],
        "scheduler",
        {"fits": True},
    ),
    # --- the kubelet's texts and order -------------------------------------------------------------------
    Case(
        "the Evicted message ends with a space",
        [node(conditions={"DiskPressure": "True"})],
        pod(requests={"cpu": "100m"}),
        "node-pressure",
        ['(kubelet: "Pod was rejected: The node had condition: [DiskPressure]. ")'],
        "kubelet",
        {"admit": False, "reason": "Evicted", "message": "The node had condition: [DiskPressure]. "},
    ),
    Case(
        "a node without the OS label: the kubelet's own OS (status.nodeInfo)",
        [node(labels={"kubernetes.io/hostname": "kind-worker"})],
        pod(os={"name": "windows"}),
        "node-os-mismatch",
        ["with PodOSNotSupported: spec.os.name is windows and the node runs linux (status.nodeInfo.operatingSystem)"],
        "kubelet",
        {"admit": False, "reason": "PodOSNotSupported"},
    ),
    Case(
        "a node without the OS label: the kubelet adds it before NodeAffinity",
        [node(labels={"kubernetes.io/hostname": "kind-worker"})],
        pod(nodeSelector={"kubernetes.io/os": "linux"}),
        "node-selector-mismatch",
        [],
        "kubelet",
        {"admit": True},
    ),
    Case(
        "a node without any label: the label the kubelet adds goes nowhere",
        [node(labels={})],
        pod(nodeSelector={"kubernetes.io/os": "linux"}),
        "node-selector-mismatch",
        ["with NodeAffinity: node kind-worker has no label kubernetes.io/os"],
        "kubelet",
        {"admit": False, "reason": "NodeAffinity"},
    ),
    Case(
        "two hugepages sizes short: the kubelet reports either (Go map order)",
        [node()],
        pod(
            containers=[
                {
                    "name": "app",
                    "image": "busybox",
                    "resources": {"requests": NO_HUGEPAGES_FOR, "limits": NO_HUGEPAGES_FOR},
                }
            ],
            nodeSelector={"disktype": "ssd"},
        ),
        "node-selector-mismatch",
        [
            "with NodeAffinity (it reports one of OutOfhugepages-1Gi, OutOfhugepages-2Mi first, in no fixed order: "
            "see insufficient-resources)"
        ],
        "kubelet",
        {"admit": False, "reason": {"OutOfhugepages-1Gi", "OutOfhugepages-2Mi"}},
        not_says=['kubelet: "Pod was rejected: Predicate NodeAffinity'],  # not the text the Pod gets
    ),
    Case(
        "an earlier reason hides NodeAffinity: its text is not quoted",
        [node()],
        pod(requests={"cpu": "8"}, nodeSelector={"disktype": "ssd"}),
        "node-selector-mismatch",
        ["with NodeAffinity (it reports OutOfcpu first: see insufficient-resources)"],
        "kubelet",
        {"admit": False, "reason": "OutOfcpu"},
        not_says=['kubelet: "Pod was rejected: Predicate NodeAffinity'],
    ),
    Case(
        "hostNetwork: the container port is a host port, checked before NoExecute taints",
        [node(taints=[{"key": "dedicated", "value": "batch", "effect": "NoExecute"}])],
        pod(hostNetwork=True, containers=[{"name": "app", "image": "busybox", "ports": [{"containerPort": 80}]}]),
        "untolerated-taint",
        ["with TaintToleration (it reports NodePorts first: see host-port-conflict)"],
        "kubelet",
        {"admit": False, "reason": "NodePorts"},
        pods=[running("ingress", ports=HOSTPORT_80)],
    ),
    Case(
        "hostNetwork: host-port-conflict names NodePorts as what the Pod shows",
        [node(taints=[{"key": "dedicated", "value": "batch", "effect": "NoExecute"}])],
        pod(hostNetwork=True, containers=[{"name": "app", "image": "busybox", "ports": [{"containerPort": 80}]}]),
        "host-port-conflict",
        [
            "would be rejected by the kubelet on kind-worker with NodePorts: host port TCP 80",
            "(kubelet: \"Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports",
        ],
        "kubelet",
        {"admit": False, "reason": "NodePorts"},
        pods=[running("ingress", ports=HOSTPORT_80)],
        not_says=["it reports"],
    ),
    Case(
        "the second replica is rejected for its cpu before its host port",
        [node()],
        deployment(
            pod(
                containers=[
                    {"name": "app", "image": "busybox", "resources": {"requests": {"cpu": "3"}}, "ports": HOSTPORT_80}
                ]
            ),
            3,
        ),
        "host-port-conflict",
        [
            "replicas 2 to 3 would be rejected by the kubelet with NodePorts (it reports OutOfcpu first: "
            "see insufficient-resources)"
        ],
        "kubelet-replicas",
        {
            "admitted": 1,
            "reason": "OutOfcpu",
            "message": "Node didn't have enough resource: cpu, requested: 3000, used: 3100, capacity: 4000",
        },
        not_says=['kubelet: "Pod was rejected: Predicate NodePorts'],
    ),
    Case(
        "a NoExecute node-state taint rejects the Pod at admission",
        [node(taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoExecute"}])],
        pod(),
        "untolerated-taint",
        ["with TaintToleration: the node has taint node.kubernetes.io/unschedulable:NoExecute"],
        "kubelet",
        {"admit": False, "reason": "TaintToleration"},
    ),
    # --- QoS: a pod-level resources block decides alone, even empty (seed 1911005) ------------------------
    Case(
        "an empty pod-level resources block makes a Pod with requests BestEffort",
        [node(conditions={"MemoryPressure": "True"})],
        pod(requests={"cpu": "100m", "memory": "64Mi"}, resources={}),
        "node-pressure",
        ["with Evicted: node kind-worker has MemoryPressure and the Pod is BestEffort: spec.resources is there"],
        "kubelet",
        {"admit": False, "reason": "Evicted", "message": "The node had condition: [MemoryPressure]. "},
    ),
    Case(
        "... and without it the Pod is Burstable and admitted",
        [node(conditions={"MemoryPressure": "True"})],
        pod(requests={"cpu": "100m", "memory": "64Mi"}),
        "node-pressure",
        [],
        "kubelet",
        {"admit": True},
    ),
    # --- quantities add up exactly and are rounded once ----------------------------------------------------
    Case(
        "two requests of 1.1 bytes make 3",
        [node(memory="3")],
        pod(containers=TWICE_1_1_BYTES),
        "insufficient-resources",
        [],
        "kubelet",
        {"admit": True},
    ),
    Case(
        "... and do not fit 2",
        [node(memory="2")],
        pod(containers=TWICE_1_1_BYTES),
        "insufficient-resources",
        ["Node didn't have enough resource: memory, requested: 3, used: 0, capacity: 2\")"],
        "kubelet",
        {"admit": False, "reason": "OutOfmemory"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_nodename_lint_says_it(case: Case) -> None:
    found = case.findings()
    if not case.says:
        assert found == [], [f.message for f in found]
        return
    assert found, f"{case.rule} is silent"
    message = " | ".join(f.message for f in found)
    for text in case.says:
        assert text in message, message
    for text in case.not_says:
        assert text not in message, message


def test_requests_add_up_exactly_and_round_once() -> None:
    """SetDefaults_ResourceList rounds each quantity to a thousandth of its unit (a millicore of cpu);
    PodRequests adds a Pod's up exactly; the node's usage adds each Pod's rounded total (NodeInfo.update)."""
    twice = [{"name": f"c{i}", "resources": {"requests": {"memory": "1.1", "cpu": "0.1m"}}} for i in range(2)]
    assert pod_requests({"containers": twice}) == {"memory": 3, "cpu": 2}
    one_pod = PodInfo("default", "a", "n1", "Running", {"containers": twice})
    assert running_pods_requests([one_pod]) == {"memory": 3, "cpu": 2}
    alone = {"containers": twice[:1]}
    two_pods = [PodInfo("default", name, "n1", "Running", alone) for name in ("a", "b")]
    assert running_pods_requests(two_pods) == {"memory": 4, "cpu": 2}


@pytest.fixture(scope="module")
def oracle_answers() -> dict[str, dict[str, Any]]:
    if not SHARED.is_dir():
        pytest.skip(SHARED_MISSING)
    try:
        binary = build(SHARED)
    except OracleError as exc:
        unavailable(f"the k8s oracle could not be built: {exc}")
    requests = []
    for case in CASES:
        request: dict[str, Any] = {
            "id": case.name,
            "mode": case.mode,
            "nodes": case.nodes,
            "pods": case.pods,
            "pod": admitted(_pod_of(case.manifest)),
        }
        if case.mode == "kubelet-replicas":
            request["replicas"] = case.manifest["spec"]["replicas"]
        requests.append(request)
    return {answer["id"]: answer for answer in run_batch(binary, requests)}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_kubernetes_code_says_it(case: Case, oracle_answers: dict[str, dict[str, Any]]) -> None:
    answer = oracle_answers[case.name]
    assert not answer.get("invalid"), answer["invalid"]
    for key, expected in case.answer.items():
        if isinstance(expected, set):
            assert answer.get(key) in expected, answer
        else:
            assert answer.get(key) == expected, answer
