"""Priority and preemption (issue 22): the Priority admission plugin, the kubelet's critical Pod admission
and the scheduler's DefaultPreemption, as nodename_lint/preemption.py follows them.

The model's pieces are tested on their own first; then hand-built cases run through nodename-lint and
through ../shared/k8s-oracle (the Kubernetes v1.35.4 code), each with what nodename-lint must say, what
the oracle must answer, and that the two agree as the differential test compares them
(tests/differential/preemption.py); last, generated cases whose Pod is always critical.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from nodename_lint.cluster.from_file import load_state_text
from nodename_lint.cluster.records import PriorityClassInfo, RunningPod
from nodename_lint.preemption import (
    Preemptor,
    importance_order,
    pods_to_evict,
    resolve_priority,
)
from nodename_lint.scheduling import Shortage, evictable_requests, qos_class

from .conftest import lint_yaml, run_cli
from .differential.compare import _claims, scheduler_event
from .differential.generator import BUILT_IN_CLASSES, admitted, priority_class_object
from .differential.oracle import run_batch
from .differential.preemption import kubelet_evictions, scheduler_nomination
from .test_oracle_regressions import _pod_of, deployment

CLASSES = {
    "high": PriorityClassInfo(1000),
    "low": PriorityClassInfo(-10),
    "waiting": PriorityClassInfo(5000, preemption_policy="Never"),
    "team-default": PriorityClassInfo(100, global_default=True),
    "other-default": PriorityClassInfo(50, global_default=True),  # a race left two: the lower one wins
}


# --- the Priority admission plugin ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "classes", "expected"),
    [
        ({"priorityClassName": "system-node-critical"}, None, (2000001000, "system-node-critical", "")),
        ({"priorityClassName": "high"}, CLASSES, (1000, "high", "")),
        ({}, CLASSES, (50, "other-default", "")),  # getDefaultPriorityClass: the lowest globalDefault value
        ({}, {}, (0, "", "")),
        ({}, None, (0, "", "")),  # classes unknown: no globalDefault assumed
        ({"priorityClassName": "high"}, None, (None, "high", "")),  # not known: no refusal claimed
        ({"priorityClassName": "gold"}, CLASSES, (None, "gold", "no PriorityClass with name gold was found")),
        (
            {"priorityClassName": "system-cluster-critical", "priority": 1000},
            None,
            (
                2000000000,
                "system-cluster-critical",
                "the integer value of priority (1000) must not be provided in pod spec; priority admission "
                "controller computed 2000000000 from the given PriorityClass name",
            ),
        ),
        ({"priorityClassName": "high", "priority": 1000}, CLASSES, (1000, "high", "")),  # the same value: admitted
        (
            {"preemptionPolicy": "Never"},  # no class: the plugin computes PreemptLowerPriority
            {},
            (
                0,
                "",
                "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission "
                "controller computed PreemptLowerPriority from the given PriorityClass name",
            ),
        ),
        ({"priorityClassName": "waiting", "preemptionPolicy": "Never"}, CLASSES, (5000, "waiting", "")),
    ],
)
def test_the_priority_admission_plugin(
    spec: dict[str, Any], classes: dict[str, PriorityClassInfo] | None, expected: tuple[Any, str, str]
) -> None:
    found = resolve_priority(spec, classes)
    assert (found.value, found.class_name, found.refusal) == expected


def test_a_never_class_makes_the_pod_wait_instead_of_preempting() -> None:
    assert resolve_priority({"priorityClassName": "waiting"}, CLASSES).policy == "Never"
    assert resolve_priority({"priorityClassName": "high"}, CLASSES).policy == "PreemptLowerPriority"


# --- what the kubelet and the scheduler read of a running Pod ------------------------------------------
def container(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> dict[str, Any]:
    resources = {key: value for key, value in (("requests", requests), ("limits", limits)) if value}
    return {"name": "c", "image": "busybox", **({"resources": resources} if resources else {})}


@pytest.mark.parametrize(
    ("spec", "qos"),
    [
        ({"containers": [container()]}, "BestEffort"),
        ({"containers": [container({"cpu": "1"})]}, "Burstable"),
        ({"containers": [container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1000m", "memory": "1Gi"})]}, "Guaranteed"),
        ({"containers": [container(limits={"cpu": "1", "memory": "1Gi"}), container({"cpu": "1"})]}, "Burstable"),
        ({"containers": [container({"cpu": "1"})], "resources": {}}, "BestEffort"),  # pod level decides, empty
        (
            {"containers": [container({"cpu": "1"})], "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
            "Burstable",
        ),
        ({"containers": [container({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})]}, "BestEffort"),
    ],
)
def test_qos_class_is_compute_pod_qos(spec: dict[str, Any], qos: str) -> None:
    assert qos_class(spec) == qos


def test_what_evicting_a_pod_frees_is_get_resource_request() -> None:
    """Pod-level resources hide the containers' other requests; the overhead counts only on a resource the
    Pod requests; pod-level hugepages default from the containers' (defaultHugePagePodLimits)."""
    plain = {
        "containers": [container({"cpu": "1", "ephemeral-storage": "1Gi"})],
        "overhead": {"cpu": "250m", "memory": "64Mi"},
    }
    assert evictable_requests(plain) == {"cpu": 1250, "ephemeral-storage": 1 << 30}
    pod_level = {
        "containers": [
            container({"cpu": "1", "ephemeral-storage": "1Gi", "hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "4Mi"})
        ],
        "resources": {"requests": {"cpu": "2"}},
    }
    assert evictable_requests(pod_level) == {"cpu": 2000, "hugepages-2Mi": 4 << 20}


def running(key: str, priority: int, qos: str, **requests: int) -> RunningPod:
    return RunningPod(key, priority, priority >= 2000000000, qos, None, dict(requests))


def test_the_kubelet_evicts_best_effort_first_then_by_distance() -> None:
    """getPodsToPreempt: Guaranteed Pods cover what the BestEffort and Burstable ones together cannot, then the
    Burstable ones what is still missing, then the BestEffort ones; in each class the Pod closest to what is
    missing goes first. So 2500m missing takes the 3-cpu Guaranteed Pod alone (the Burstable ones hold 2000m),
    and 1500m takes the Burstable Pod of 1500m."""
    pods = [
        running("a/guaranteed", 0, "Guaranteed", cpu=3000),
        running("a/burstable-small", 0, "Burstable", cpu=500),
        running("a/burstable-big", 0, "Burstable", cpu=1500),
        running("a/best-effort", 0, "BestEffort"),
        running("a/critical", 2000001000, "Burstable", cpu=3000),
    ]
    found = pods_to_evict(Preemptor("a/p", True, 2000000000), [Shortage("cpu", 2000, 8500, 8000)], pods)
    assert [pod.key for pod in found.evicts] == ["a/guaranteed"]
    found = pods_to_evict(Preemptor("a/p", True, 2000000000), [Shortage("cpu", 1000, 8500, 8000)], pods)
    assert [pod.key for pod in found.evicts] == ["a/burstable-big"]
    short = pods_to_evict(Preemptor("a/p", True, 2000000000), [Shortage("cpu", 9000, 8500, 8000)], pods)
    assert short.message.endswith("no set of running pods found to reclaim resources: [(res: cpu, q: 4500), ]")
    assert short.unmet == (("cpu", 4500),) and short.candidates == 4


def test_pods_without_a_start_time_sort_as_go_sorts_them() -> None:
    """MoreImportantPod takes a Pod without status.startTime as started now, read anew at each call, so
    that Go's insertion sort (up to 12 Pods) moves each such Pod before the equal ones it meets."""
    pods = [running(f"a/p{index}", 0, "Burstable") for index in range(4)]
    assert [pod.key for pod in importance_order(pods)] == ["a/p3", "a/p2", "a/p1", "a/p0"]
    started = [
        RunningPod("a/late", 0, False, "Burstable", "2026-03-02T08:00:00Z", {}),
        RunningPod("a/early", 0, False, "Burstable", "2026-03-01T08:00:00Z", {}),
        RunningPod("a/high", 10, False, "Burstable", None, {}),
        RunningPod("a/now", 0, False, "Burstable", None, {}),
    ]
    assert [pod.key for pod in importance_order(started)] == ["a/high", "a/early", "a/late", "a/now"]


# --- hand-built cases, judged by the Kubernetes code ----------------------------------------------------
def node(
    name: str = "kind-worker", *, cpu: str = "4", pods: str = "110", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **(labels or {})},
        },
        "spec": {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods},
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"operatingSystem": "linux"},
        },
    }


def bound(
    name: str,
    node_name: str = "kind-worker",
    *,
    cpu: str = "1",
    priority: int = 0,
    guaranteed: bool = False,
    mirror: bool = False,
    started: str | None = None,
    host_port: int | None = None,
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu}}
    if guaranteed:
        resources = {"requests": {"cpu": cpu, "memory": "64Mi"}, "limits": {"cpu": cpu, "memory": "64Mi"}}
    entry: dict[str, Any] = {"name": "main", "image": "busybox", "resources": resources}
    if host_port:
        entry["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if mirror:
        metadata["annotations"] = {"kubernetes.io/config.mirror": "abc", "kubernetes.io/config.source": "file"}
    status: dict[str, Any] = {"phase": "Running", **({"startTime": started} if started else {})}
    spec = {
        "nodeName": node_name,
        "priority": priority,
        "preemptionPolicy": "PreemptLowerPriority",
        "containers": [entry],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def probe(
    *, node_name: str | None = "kind-worker", cpu: str = "2", host_port: int | None = None, **spec: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": "app", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
    if host_port:
        entry["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    body = {**({"nodeName": node_name} if node_name else {}), **spec, "containers": [entry]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": "default"}, "spec": body}


def priority_class(name: str, value: int, policy: str = "PreemptLowerPriority") -> dict[str, Any]:
    return priority_class_object(name, (value, False, policy))


CRITICAL = {"priorityClassName": "system-cluster-critical"}
CLASS_OBJECTS = [priority_class("high", 1000), priority_class("waiting", 5000, "Never")]


@dataclass
class Case:
    name: str
    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    manifest: dict[str, Any]
    mode: str  # the oracle's: kubelet, scheduler, kubelet-replicas
    says: dict[str, list[str]]  # rule -> what its message contains ([]: the rule is silent)
    answer: dict[str, Any]  # what the oracle answers (these keys)
    static: bool = False  # a static Pod file of --static-pod-node kind-worker
    classes: list[dict[str, Any]] = field(default_factory=lambda: list(CLASS_OBJECTS))

    def findings(self) -> list[Any]:
        state = load_state_text(json.dumps({"kind": "List", "items": [*self.nodes, *self.pods, *self.classes]}), "s")
        node = "kind-worker" if self.static else None
        return lint_yaml(json.dumps(self.manifest), cluster=state, static_pod=self.static, static_pod_node=node)

    def oracle_request(self) -> dict[str, Any]:
        classes = {c["metadata"]["name"]: (c["value"], False, c["preemptionPolicy"]) for c in self.classes}
        pod = admitted(_pod_of(self.manifest), {**BUILT_IN_CLASSES, **classes})
        if self.static:  # the kubelet's own copy of a static Pod: no API, no priority resolved, source file
            pod = copy.deepcopy(self.manifest)
            pod["metadata"]["annotations"] = {"kubernetes.io/config.source": "file"}
            pod["spec"]["nodeName"] = "kind-worker"
        request = {"id": self.name, "mode": self.mode, "nodes": self.nodes, "pods": self.pods, "pod": pod}
        if self.mode == "kubelet-replicas":
            request["replicas"] = self.manifest["spec"]["replicas"]
        return request


FULL = [bound("a", cpu="1500m"), bound("b", cpu="1500m"), bound("c", cpu="500m", priority=1000)]

CASES = [
    Case(
        "a critical Pod evicts one of two equal Pods",
        [node()],
        FULL,
        probe(**CRITICAL),
        "kubelet",
        {
            "insufficient-resources": [
                "the kubelet evicts default/b to admit it",
                "which of several Pods of the same size goes depends on the order the kubelet lists its Pods in",
            ]
        },
        {"admit": True, "evicts": ["default/b"]},
    ),
    Case(
        "all the Pods it may evict are not enough",
        [node()],
        FULL,
        probe(cpu="5", **CRITICAL),
        "kubelet",
        {
            "insufficient-resources": [
                "with UnexpectedAdmissionError",
                "Pod was rejected: Unexpected error while attempting to recover from admission failure: preemption: "
                "error finding a set of pods to preempt: no set of running pods found to reclaim resources: "
                '[(res: cpu, q: 1000), ]")',
                "lower the cpu request to at most 4 cpu",
            ]
        },
        {"admit": False, "reason": "UnexpectedAdmissionError"},
    ),
    Case(
        "a mirror Pod of a lower priority is evicted (Preemptable compares the priorities of two critical Pods)",
        [node()],
        [bound("kube-scheduler-kind-worker", cpu="2", mirror=True), bound("etcd", cpu="1500m", priority=2000001000)],
        probe(cpu="1", **CRITICAL),
        "kubelet",
        {"insufficient-resources": ["the kubelet evicts default/kube-scheduler-kind-worker to admit it"]},
        {"admit": True, "evicts": ["default/kube-scheduler-kind-worker"]},
    ),
    Case(
        "critical Pods of at least its priority are never evicted",
        [node()],
        [
            bound("kube-apiserver-kind-worker", cpu="2", mirror=True, priority=2000001000),
            bound("etcd", cpu="1500m", priority=2000001000),
        ],
        probe(cpu="1", **CRITICAL),
        "kubelet",
        {"insufficient-resources": ["finds no Pod there it may evict", "[(res: cpu, q: 500), ]"]},
        {
            "admit": False,
            "reason": "UnexpectedAdmissionError",
            "message": "Unexpected error while attempting to recover from admission failure: preemption: error "
            "finding a set of pods to preempt: no set of running pods found to reclaim resources: "
            "[(res: cpu, q: 500), ]",
        },
    ),
    Case(
        "Guaranteed Pods go last",
        [node(cpu="2")],
        [bound("guaranteed", cpu="1", guaranteed=True), bound("burstable", cpu="900m")],
        probe(cpu="1", **CRITICAL),
        "kubelet",
        {"insufficient-resources": ["the kubelet evicts default/burstable to admit it"]},
        {"admit": True, "evicts": ["default/burstable"]},
    ),
    Case(
        "the Pod count: one Pod goes",
        [node(pods="2")],
        [bound("x", cpu="100m"), bound("y", cpu="200m", priority=1000)],
        probe(cpu="100m", **CRITICAL),
        "kubelet",
        {"insufficient-resources": ["the node already runs 2 of the 2 Pods it allows", "the kubelet evicts"]},
        {"admit": True},
    ),
    Case(
        "another failure is reported instead of the shortage, and nothing is evicted",
        [node()],
        FULL,
        probe(nodeSelector={"disktype": "ssd"}, **CRITICAL),
        "kubelet",
        {
            "insufficient-resources": [],
            "node-selector-mismatch": ["would be rejected by the kubelet on kind-worker with NodeAffinity:"],
        },
        {"admit": False, "reason": "NodeAffinity"},
    ),
    Case(
        "a static Pod is critical",
        [node()],
        FULL,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "static-web", "namespace": "default"},
            "spec": probe(node_name=None)["spec"],
        },
        "kubelet",
        {
            "insufficient-resources": [
                "static Pod static-web does not fit on kind-worker (--static-pod-node)",
                "the kubelet evicts default/b",
            ]
        },
        {"admit": True, "evicts": ["default/b"]},
        static=True,
    ),
    Case(
        "a priority below the system's is not critical: OutOfcpu",
        [node()],
        FULL,
        probe(priorityClassName="high"),
        "kubelet",
        {"insufficient-resources": ["with OutOfcpu"]},
        {"admit": False, "reason": "OutOfcpu"},
    ),
    # --- the scheduler ---------------------------------------------------------------------------------
    Case(
        "the scheduler deletes the least important Pods it must",
        [node()],
        FULL,
        probe(node_name=None, priorityClassName="high"),
        "scheduler",
        {
            "no-node-fits": [
                'it first gets FailedScheduling "0/1 nodes are available: 1 Insufficient cpu."',
                "the scheduler nominates node kind-worker and deletes default/a there",
            ]
        },
        {"fits": False, "nominated": "kind-worker", "victims": ["default/a"]},
    ),
    Case(
        "the node whose most important victim is the least important",
        [node("kind-worker"), node("kind-worker2")],
        [bound("a", cpu="3"), bound("b", "kind-worker2", cpu="3", priority=500)],
        probe(node_name=None, priorityClassName="high"),
        "scheduler",
        {"no-node-fits": ["nominates node kind-worker and deletes default/a there"]},
        {"fits": False, "nominated": "kind-worker", "victims": ["default/a"]},
    ),
    Case(
        "two nodes tie: either may be nominated",
        [node("kind-worker"), node("kind-worker2")],
        [bound("a", cpu="3"), bound("b", "kind-worker2", cpu="3")],
        probe(node_name=None, priorityClassName="high"),
        "scheduler",
        {
            "no-node-fits": [
                "nominates one of the nodes kind-worker (deleting default/a), kind-worker2 (deleting default/b)"
            ]
        },
        {"fits": False},
    ),
    Case(
        "the Pods of lower priority are not enough: the dry run's own FitError",
        [node()],
        [bound("a", cpu="2", priority=2000), bound("b", cpu="1500m")],
        probe(node_name=None, cpu="2500m", priorityClassName="high"),
        "scheduler",
        {
            "no-node-fits": [
                'FailedScheduling "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, '
                'preemption: 0/1 nodes are available: 1 Insufficient cpu."'
            ]
        },
        {
            "fits": False,
            "message": "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 "
            "nodes are available: 1 Insufficient cpu.",
        },
    ),
    Case(
        "a PriorityClass with preemptionPolicy Never waits",
        [node()],
        FULL,
        probe(node_name=None, priorityClassName="waiting"),
        "scheduler",
        {"no-node-fits": ["preemption: not eligible due to preemptionPolicy=Never."]},
        {
            "fits": False,
            "message": "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not "
            "eligible due to preemptionPolicy=Never.",
        },
    ),
    Case(
        "a victim holding the host port",
        [node()],
        [bound("proxy", cpu="100m", host_port=8080), bound("other", cpu="100m", priority=1000)],
        probe(node_name=None, cpu="100m", host_port=8080, priorityClassName="high"),
        "scheduler",
        {"no-node-fits": ["node(s) didn't have free ports for the requested pod ports", "deletes default/proxy there"]},
        {"fits": False, "nominated": "kind-worker", "victims": ["default/proxy"]},
    ),
    Case(
        "the more important Pods are given back first",
        [node()],
        [
            bound("old", cpu="1500m", started="2026-01-01T00:00:00Z"),
            bound("new", cpu="1500m", started="2026-02-01T00:00:00Z"),
            bound("top", cpu="1", priority=900),
        ],
        probe(node_name=None, cpu="1500m", priorityClassName="high"),
        "scheduler",
        {"no-node-fits": ["deletes default/new there"]},
        {"fits": False, "nominated": "kind-worker", "victims": ["default/new"]},
    ),
    Case(
        "replicas of a critical Deployment each evict",
        [node()],
        [bound("a", cpu="1"), bound("b", cpu="1"), bound("c", cpu="1"), bound("d", cpu="1")],
        deployment(probe(cpu="1", **CRITICAL), 3),
        "kubelet-replicas",
        {"insufficient-resources": ["the kubelet evicts default/d, default/c, default/b to admit them"]},
        {"admit": True},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_nodename_lint_says_it(case: Case) -> None:
    found = case.findings()
    for rule, says in case.says.items():
        messages = " | ".join(f"{f.message} (fix: {f.fix})" for f in found if f.rule == rule)
        if not says:
            assert not messages, messages
        for text in says:
            assert text in messages, f"{rule}: {messages}"


@pytest.fixture(scope="module")
def answers(oracle: Path) -> dict[str, dict[str, Any]]:
    requests = [case.oracle_request() for case in CASES]
    found = {answer["id"]: answer for answer in run_batch(oracle, requests, processes=2)}
    for case in CASES:  # the asynchronous preemption's last victim may come after the oracle's wait: ask alone
        if case.mode == "scheduler" and found[case.name].get("nominated"):
            again = run_batch(oracle, [case.oracle_request()], processes=1)[0]
            if len(again.get("victims") or ()) > len(found[case.name].get("victims") or ()):
                found[case.name] = again
    return found


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_kubernetes_code_says_it(case: Case, answers: dict[str, dict[str, Any]]) -> None:
    answer = answers[case.name]
    assert not answer.get("invalid"), answer["invalid"]
    for key, expected in case.answer.items():
        value = answer.get(key)
        assert (sorted(value) if isinstance(value, list) else value) == (
            sorted(expected) if isinstance(expected, list) else expected
        ), answer


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_they_agree(case: Case, answers: dict[str, dict[str, Any]]) -> None:
    """As the differential test compares them: the reason, the quoted text, the evictions, the nomination."""
    answer = answers[case.name]
    findings = case.findings()
    if case.mode == "scheduler":
        problems = scheduler_nomination(findings, answer)
        events = scheduler_event(findings)
        if not answer["fits"]:
            problems += [f"{event!r} is not {answer['message']!r}" for event in events if event != answer["message"]]
        assert problems == []
        return
    problems: list[str] = []
    claims = _claims(findings, problems)
    if case.mode == "kubelet":
        problems += kubelet_evictions(findings, answer)
        if answer["admit"]:
            assert claims == [], [claim.message for claim in claims]
        else:
            assert claims and all(answer["reason"] in claim.reported for claim in claims)
            for claim in claims:
                assert claim.quote in (None, "Pod was rejected: " + answer["message"])
    assert problems == []


def test_the_oracles_replicas_keep_the_evicted_pods(answers: dict[str, dict[str, Any]]) -> None:
    """Why the differential harness chains kubelet admissions for a critical Pod's replicas: the oracle's
    kubelet-replicas mode records an eviction but leaves the Pod running for the next replica."""
    answer = answers["replicas of a critical Deployment each evict"]
    assert answer["admit"] is True and answer["admitted"] == 3


# --- generated cases whose Pod is always critical ----------------------------------------------------
def test_generated_critical_pods_agree_with_the_kubernetes_code(oracle: Path) -> None:
    """Cases of the differential generator with a critical Pod under test (system-node-critical, no
    spec.priority or preemptionPolicy written): every path, compared as the differential test compares."""
    from .differential.run import differential_run

    def critical(case: Any) -> Any:
        spec = case.pod["spec"]
        spec["priorityClassName"] = "system-node-critical"
        spec.pop("priority", None)
        spec.pop("preemptionPolicy", None)
        return case

    run = differential_run(oracle, 2201, 150, prepare=critical)
    outcomes = run.outcomes()
    assert (
        outcomes["kubelet evicts"] and outcomes["kubelet UnexpectedAdmissionError"] and outcomes["scheduler nominates"]
    )
    problems = [(case_id, text) for case_id, found in run.problems.items() for text in found]
    assert problems == [], problems[:5]


# --- the cluster state carries the PriorityClasses -----------------------------------------------------
def test_a_snapshot_keeps_the_priority_classes_and_the_pods_preemption_weighs(tmp_path: Path) -> None:
    items = [node(), *FULL, bound("mirror", cpu="1", mirror=True, started="2026-01-01T00:00:00Z"), *CLASS_OBJECTS]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    snapshot = tmp_path / "snapshot.json"
    assert run_cli("snapshot", "--cluster-state", str(dump), "-o", str(snapshot)).returncode == 0
    from_dump, from_snapshot = load_state_text(dump.read_text(), "d"), load_state_text(snapshot.read_text(), "s")
    assert from_snapshot.priority_classes == from_dump.priority_classes
    assert from_snapshot.priority_classes and from_snapshot.priority_classes["waiting"].preemption_policy == "Never"
    assert from_snapshot.running_pods("kind-worker") == from_dump.running_pods("kind-worker")
    assert any(pod.critical and pod.start_time for pod in from_snapshot.running_pods("kind-worker") or ())
    manifest = tmp_path / "probe.yaml"
    manifest.write_text(json.dumps(probe(node_name=None, priorityClassName="high")))
    outputs = [
        run_cli(str(manifest), "--cluster-state", str(state), "--select", "no-node-fits").stdout.replace(
            str(state), "S"
        )
        for state in (dump, snapshot)
    ]
    # a and b (no start time) go; the mirror Pod, started, is given back first and fits
    assert "nominates node kind-worker and deletes default/b, default/a there" in outputs[0]
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("form", ["json", "yaml"])  # a dump's typed structs, and plain values
def test_only_nodes_with_a_pod_of_lower_priority_are_weighed_for_preemption(
    form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SelectVictimsOnNode answers "No preemption victims" for a node with no Pod of a lower priority
    before it weighs anything: the Pods of such a node are never made RunningPods (of a big cluster of
    priority-0 Pods, a priority-0 Pod that fits nowhere weighed all of them), and the answer is the same."""
    import yaml

    from nodename_lint import preemption

    items = [
        node("n1"),
        node("n2"),
        bound("low", "n1", cpu="1500m"),
        bound("mid", "n1", cpu="2", priority=1000),
        bound("high", "n2", cpu="3", priority=1000),
        *CLASS_OBJECTS,
    ]
    listed = {"apiVersion": "v1", "kind": "List", "items": items}
    weighed: list[str] = []
    real_running_pod = preemption.running_pod

    def counted(pod: Any, classes: Any) -> RunningPod:
        weighed.append(f"{pod.namespace}/{pod.name}")
        return real_running_pod(pod, classes)

    monkeypatch.setattr(preemption, "running_pod", counted)

    def says(spec: dict[str, Any]) -> str:
        text = json.dumps(listed) if form == "json" else yaml.safe_dump(listed)
        state = load_state_text(text, "S")
        found = lint_yaml(json.dumps(probe(node_name=None, cpu="2", **spec)), rules=["no-node-fits"], cluster=state)
        assert len(found) == 1, found
        return found[0].message

    assert "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod." in says({})
    assert weighed == []  # priority 0: no node holds a Pod below it
    assert "the scheduler nominates node n1 and deletes default/low there" in says({"priorityClassName": "high"})
    assert sorted(weighed) == ["default/low", "default/mid"]  # n2 holds only Pods of priority 1000


def test_the_importance_order_is_gos_insertion_sort() -> None:
    """importance_order gives what sort.Slice's insertion sort makes of MoreImportantPod, step by step."""
    from random import Random

    from nodename_lint.preemption import more_important

    def insertion_sort(pods: list[RunningPod]) -> list[RunningPod]:
        ordered = list(pods)
        for index in range(1, len(ordered)):
            position = index
            while position > 0 and more_important(ordered[position], ordered[position - 1]):
                ordered[position], ordered[position - 1] = ordered[position - 1], ordered[position]
                position -= 1
        return ordered

    rnd = Random(22)
    starts = (None, "2026-03-01T10:00:00Z", "2026-03-01T09:00:00Z", "2026-03-02T00:00:00+00:00")
    for _ in range(500):
        pods = [
            RunningPod(f"a/p{index}", rnd.choice((0, 0, 5, -1)), False, "Burstable", rnd.choice(starts), {})
            for index in range(rnd.randrange(13))
        ]
        assert importance_order(pods) == insertion_sort(pods)


# --- hostile states --------------------------------------------------------------------------------
def test_a_priority_class_of_the_wrong_shape_is_the_files_error(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    items = [node(), {**priority_class("high", 1000), "value": "1e3"}]
    state.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1))
    manifest = tmp_path / "probe.yaml"
    manifest.write_text(json.dumps(probe(priorityClassName="high")))
    result = run_cli(str(manifest), "--cluster-state", str(state))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "bad cluster state (items[1]): PriorityClass high: value is not a 32-bit integer" in result.stderr
    assert f"{state}:" in result.stderr


@pytest.mark.parametrize("damage", ["[[[5]]]", "[[[[[5]]]]]"])  # the length kept: read from the snapshot's tail
def test_a_damaged_snapshot_node_is_the_files_error_when_read(tmp_path: Path, damage: str) -> None:
    """A node's Pods for preemption are decoded when a rule first weighs them: damage there is the file's
    error (exit 2, its name and the node), not a rule's internal error."""
    dump, snapshot = tmp_path / "dump.json", tmp_path / "snapshot.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node(), *FULL, *CLASS_OBJECTS]}))
    assert run_cli("snapshot", "--cluster-state", str(dump), "-o", str(snapshot)).returncode == 0
    text = snapshot.read_text()
    assert '"Burstable"' in text
    snapshot.write_text(text.replace('"Burstable"', damage, 1))
    manifest = tmp_path / "probe.yaml"
    manifest.write_text(json.dumps(probe(**CRITICAL)))
    result = run_cli(str(manifest), "--cluster-state", str(snapshot))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert (
        "not a valid nodename-lint cluster snapshot" in result.stderr
        and "(the Pods of node 'kind-worker')" in result.stderr
    )


def test_annotations_nested_too_deeply_are_no_crash(tmp_path: Path) -> None:
    """A dump's annotations stay raw until preemption reads them; nested deeply and not a mapping, they
    make no mirror Pod, and no traceback."""
    deep = bound("deep", cpu="3")
    deep["metadata"]["annotations"] = "DEEP"
    dump = tmp_path / "dump.json"
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [node(), deep, *CLASS_OBJECTS]})
    dump.write_text(text.replace('"DEEP"', "[" * 900 + "]" * 900))  # within what the state readers take
    manifest = tmp_path / "probe.yaml"
    manifest.write_text(json.dumps(probe(**CRITICAL)))
    result = run_cli(str(manifest), "--cluster-state", str(dump), "--select", "insufficient-resources")
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "the kubelet evicts default/deep to admit it" in result.stdout


def test_too_many_pods_on_a_node_to_weigh_is_said_not_computed() -> None:
    """getPodsToPreemptByDistance costs candidates x evictions steps: beyond MAX_EVICTION_CANDIDATES Pods the
    verdict stays (the Pod is admitted) and the Pods evicted are not computed."""
    from nodename_lint.preemption import MAX_EVICTION_CANDIDATES

    many = [bound(f"p{index}", cpu="10m") for index in range(MAX_EVICTION_CANDIDATES + 1)]
    state = load_state_text(json.dumps({"kind": "List", "items": [node(pods="5000"), *many]}), "s")
    found = [
        f
        for f in lint_yaml(json.dumps(probe(cpu="3", **CRITICAL)), cluster=state)
        if f.rule == "insufficient-resources"
    ]
    assert len(found) == 1 and found[0].severity == "warning"
    assert f"evicts some of the {MAX_EVICTION_CANDIDATES + 1} Pods there it may evict" in found[0].message


# --- live ------------------------------------------------------------------------------------------
def test_a_live_run_reads_the_priority_classes_and_every_nodes_pods_for_preemption(tmp_path: Path) -> None:
    """A manifest the scheduler places that names a PriorityClass may preempt on any node: the live run lists
    the Pods of every node (one list) and the PriorityClasses, GET only, and names the victims."""
    from tests.apiserver import TOKEN, ApiServer, cluster_entry, kind_cluster, write_kubeconfig
    from tests.apiserver.server import BUILT_IN_PRIORITY_CLASSES

    classes = [*BUILT_IN_PRIORITY_CLASSES, priority_class("business-critical", 1000000)]
    deployment_text = json.dumps(
        deployment(probe(node_name=None, cpu="3950m", priorityClassName="business-critical"), 1)
    )
    (tmp_path / "web.yaml").write_text(deployment_text)
    with ApiServer(**kind_cluster(), priorityclasses=classes) as server:
        kubeconfig = write_kubeconfig(
            tmp_path / "kubeconfig",
            clusters={"kind": cluster_entry(server.url, server.ca_pem)},
            users={"kind": {"token": TOKEN}},
            contexts={"kind": ("kind", "kind")},
            current="kind",
        )
        result = run_cli(str(tmp_path / "web.yaml"), "--kubeconfig", str(kubeconfig), "--select", "no-node-fits")
        calls = [(r.path, r.query.get("fieldSelector", "")) for r in server.requests]
        methods = server.methods
    assert methods == {"GET"}
    assert ("/api/v1/pods", "status.phase!=Succeeded,status.phase!=Failed") in calls
    assert ("/apis/scheduling.k8s.io/v1/priorityclasses", "") in calls
    assert "priority 1000000 (PriorityClass business-critical)" in result.stdout
    assert "the scheduler nominates node kind-worker2 and deletes kube-system/kindnet-8hn2v there" in result.stdout


# --- the webhook's watched state ------------------------------------------------------------------------
def test_the_webhooks_state_counts_the_pods_but_does_not_say_which_go() -> None:
    """The webhook keeps each node's Pods as sums (cluster/watched.py), without their priorities: a critical
    Pod that needs evictions is neither said to evict nothing (UnexpectedAdmissionError) nor to evict named
    Pods; a request beyond the allocatable is still rejected, as no eviction makes room for it."""
    from nodename_lint.cluster.watched import KEEP, PodSums, WatchedState, pod_entry

    state = WatchedState(source="context kind-kind")
    state.install("nodes", [KEEP["nodes"](node())])
    state.install("pods", PodSums())
    for pod in FULL:
        state.apply("pods", False, pod_entry(pod))

    def says(cpu: str) -> list[tuple[str, str]]:
        found = lint_yaml(json.dumps(probe(cpu=cpu, **CRITICAL)), rules=["insufficient-resources"], cluster=state)
        return [(f.severity, f.message) for f in found]

    [(severity, message)] = says("2")
    assert severity == "warning"
    assert (
        "does not fit on kind-worker as it stands (it requests 2 cpu and 500m cpu of 4 cpu allocatable is free), but "
        "its priority 2000000000 (PriorityClass system-cluster-critical) makes it critical: the kubelet evicts Pods "
        "that are not critical and of a lower priority to admit it, or rejects it with UnexpectedAdmissionError if "
        "they do not free enough (the cluster state context kind-kind counts the Pods on kind-worker but does not "
        "hold them one by one)"
    ) in message
    [(severity, message)] = says("5")
    assert severity == "error" and "UnexpectedAdmissionError" in message
    assert "no eviction makes room for a request larger than the allocatable" in message
