"""The scheduling math: PodRequests, toleration matching, node affinity, admission order, filters."""

from __future__ import annotations

import random
from typing import Any

import pytest

from nodename_lint.cluster.records import NodeInfo, NodeUsage, PodInfo
from nodename_lint.scheduling import (
    AFFINITY_REASON,
    TAINT_REASON,
    UNSCHEDULABLE_REASON,
    FilterFailure,
    RequestError,
    add_into,
    affinity_mismatch,
    eviction_delay,
    no_node_available_message,
    pod_requests,
    request_path,
    running_pods_requests,
    scheduler_rejection,
    shortages,
    tolerates,
    untolerated,
)


def container(cpu=None, memory=None, restart=None, limits=None):
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    result = {"name": "c", "image": "busybox", "resources": {"requests": requests}}
    if limits:
        result["resources"]["limits"] = limits
    if restart:
        result["restartPolicy"] = restart
    return result


def test_containers_are_summed():
    spec = {"containers": [container("100m", "64Mi"), container("250m")]}
    assert pod_requests(spec) == {"cpu": 350, "memory": 64 * 2**20}


def test_a_nodes_usage_summed_in_place_equals_the_sum_of_each_pods_requests():
    """running_pods_requests (no dict per Pod) gives what adding each Pod's pod_requests(lenient) gave,
    keys in the same order, for plain Pods, invalid and zero quantities, and the shapes that take the full path."""
    specs = [
        {"containers": [container("100m", "64Mi"), container("250m")]},
        {"containers": [container(memory="1Gi"), {"name": "odd", "resources": {"requests": {"nvidia.com/gpu": 1}}}]},
        {"containers": [container("bad", "0"), container("0", "12Mi"), "not a container", {"resources": None}]},
        {"containers": [container("1")], "initContainers": [container("2", restart="Always"), container("3")]},
        {"containers": [container("200m")], "overhead": {"cpu": "50m", "memory": "bad"}},
        {"containers": [container("200m")], "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
        {"containers": "not a list"},
        {},
    ]
    for start in range(len(specs)):
        ordered = specs[start:] + specs[:start]
        expected: dict[str, int] = {}
        for spec in ordered:
            add_into(expected, pod_requests(spec, lenient=True))
        summed = running_pods_requests(
            PodInfo("default", f"p{i}", "n", "Running", spec) for i, spec in enumerate(ordered)
        )
        assert list(summed.items()) == list(expected.items())
    # 350 plain; 1000 + sidecar 2000 beside the init container's 3000: 5000; 200 + overhead 50; pod-level
    # limits default the pod-level request to the containers' 200
    assert expected["cpu"] == 350 + 5000 + 250 + 200


def test_sidecars_add_and_init_containers_take_the_max():
    spec = {
        "initContainers": [
            container("1"),  # plain init: 1 cpu on its own
            container("200m", restart="Always"),  # sidecar: runs alongside everything after it
            container("900m"),  # plain init after the sidecar: 900m + 200m
        ],
        "containers": [container("500m")],
    }
    # containers + sidecars = 700m; init max = max(1000, 200, 1100) = 1100m
    assert pod_requests(spec) == {"cpu": 1100}


def test_overhead_is_added_and_pod_level_requests_win():
    spec = {"containers": [container("500m", "1Gi")], "overhead": {"cpu": "250m"}}
    assert pod_requests(spec) == {"cpu": 750, "memory": 2**30}
    spec["resources"] = {"requests": {"cpu": "2"}}
    assert pod_requests(spec) == {"cpu": 2250, "memory": 2**30}


def test_limits_stand_in_for_missing_requests_and_zero_is_dropped():
    spec = {"containers": [container(cpu="0", limits={"memory": "1Gi", "cpu": "2"})]}
    assert pod_requests(spec) == {"memory": 2**30}  # the explicit cpu request 0 wins over the limit


def test_invalid_quantities_name_their_path():
    spec = {"containers": [container("1.5.3")]}
    with pytest.raises(RequestError) as caught:
        pod_requests(spec)
    assert caught.value.path == ("containers", 0, "resources", "requests", "cpu")
    assert pod_requests(spec, lenient=True) == {}


def test_request_path_points_at_the_largest_request():
    spec = {"containers": [container("100m"), container("2")]}
    assert request_path(spec, "cpu") == ("containers", 1, "resources", "requests", "cpu")


@pytest.mark.parametrize(
    "toleration, taint, expected",
    [
        ({"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "operator": "Equal", "value": "x"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
        ({"operator": "Exists"}, {"key": "any", "effect": "NoExecute"}, True),  # empty key + Exists: everything
        ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, False),
        ({"key": "k"}, {"key": "k", "effect": "NoSchedule"}, True),  # Equal with both values empty
        ({"key": "k", "operator": "Bogus"}, {"key": "k", "effect": "NoSchedule"}, False),
    ],
)
def test_toleration_matching(toleration, taint, expected):
    assert tolerates(toleration, taint) is expected


def test_eviction_delay_follows_the_taint_eviction_controller():
    taint = {"key": "maintenance", "effect": "NoExecute"}
    assert eviction_delay([taint], [{"key": "maintenance", "operator": "Exists"}]) is None
    assert eviction_delay([taint], [{"operator": "Exists", "tolerationSeconds": 60}]) == 60
    assert eviction_delay([taint], [{"operator": "Exists", "tolerationSeconds": -5}]) == 0
    assert untolerated([taint], [], ("NoExecute",)) == [taint]


NODE = NodeInfo(
    name="kind-worker",
    labels={"disktype": "ssd", "gpu-count": "2", "kubernetes.io/hostname": "kind-worker"},
    allocatable={"cpu": "4", "memory": "8Gi", "pods": "3", "example.com/dongle": "1"},
)


@pytest.mark.parametrize(
    "expression, matches",
    [
        ({"key": "disktype", "operator": "In", "values": ["ssd", "nvme"]}, True),
        ({"key": "disktype", "operator": "In", "values": ["hdd"]}, False),
        ({"key": "disktype", "operator": "NotIn", "values": ["hdd"]}, True),
        ({"key": "zone", "operator": "NotIn", "values": ["a"]}, True),  # NotIn matches an absent label
        ({"key": "disktype", "operator": "Exists"}, True),
        ({"key": "zone", "operator": "Exists"}, False),
        ({"key": "zone", "operator": "DoesNotExist"}, True),
        ({"key": "gpu-count", "operator": "Gt", "values": ["1"]}, True),
        ({"key": "gpu-count", "operator": "Lt", "values": ["2"]}, False),
        ({"key": "disktype", "operator": "Gt", "values": ["1"]}, False),  # not an integer
    ],
)
def test_required_node_affinity_operators(expression, matches):
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [expression]}]
                }
            }
        }
    }
    assert (affinity_mismatch(spec, NODE) is None) is matches


def test_match_fields_terms_are_ored_and_node_selector_is_anded():
    terms = [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["kind-worker2"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["kind-worker"]}]},
    ]
    spec = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    }
    assert affinity_mismatch(spec, NODE) is None
    spec["nodeSelector"] = {"disktype": "hdd"}
    mismatch = affinity_mismatch(spec, NODE)
    assert mismatch is not None and mismatch.path == ("nodeSelector", "disktype") and "'ssd'" in mismatch.detail
    empty = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}
    }
    assert affinity_mismatch(empty, NODE) is not None  # an empty term matches no node


def test_kubelet_resource_order_and_messages():
    usage = NodeUsage(pods=3, requested={"cpu": 950})
    found = shortages({"cpu": 100_000, "memory": 2**40}, NODE, usage, kubelet=True)
    assert [s.kubelet_reason for s in found] == ["OutOfpods", "OutOfcpu", "OutOfmemory"]
    cpu = found[1]
    assert cpu.kubelet_message == "Node didn't have enough resource: cpu, requested: 100000, used: 950, capacity: 4000"
    assert cpu.never_fits


def test_kubelet_drops_extended_resources_the_node_lacks_but_the_scheduler_does_not():
    requests = {"nvidia.com/gpu": 1, "example.com/dongle": 2}
    kubelet = shortages(requests, NODE, None, kubelet=True)
    assert [s.resource for s in kubelet] == ["example.com/dongle"]
    scheduler = shortages(requests, NODE, None, kubelet=False)
    assert [s.scheduler_reason for s in scheduler] == ["Insufficient example.com/dongle", "Insufficient nvidia.com/gpu"]


def test_scheduler_filters_stop_at_the_first_failing_plugin():
    cordoned = NodeInfo(name="n1", unschedulable=True, taints=[{"key": "a", "effect": "NoSchedule"}])
    assert scheduler_rejection({}, {}, cordoned, lambda: None) == FilterFailure([UNSCHEDULABLE_REASON])
    tainted = NodeInfo(name="n2", taints=[{"key": "a", "effect": "NoSchedule"}])
    assert scheduler_rejection({}, {}, tainted, lambda: None) == FilterFailure([TAINT_REASON])
    assert scheduler_rejection(
        {"nodeSelector": {"disktype": "hdd"}}, {"cpu": 10**6}, NODE, lambda: None
    ) == FilterFailure([AFFINITY_REASON])
    # NodeResourcesFit: Unschedulable (preemption may help) unless a request exceeds the allocatable
    assert scheduler_rejection({}, {"cpu": 5000}, NODE, lambda: NodeUsage(0, {})) == FilterFailure(
        ["Insufficient cpu"], preemption_may_help=False
    )
    assert scheduler_rejection({}, {"cpu": 1000}, NODE, lambda: NodeUsage(1, {"cpu": 3500})) == FilterFailure(
        ["Insufficient cpu"], preemption_may_help=True
    )
    assert no_node_available_message(4, {AFFINITY_REASON: 3, "Insufficient cpu": 1}) == (
        "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector."
    )


def test_kubelet_reasons_come_in_admission_order():
    from nodename_lint.scheduling import kubelet_reasons, reported_first

    node = NodeInfo(
        name="n",
        labels={"disktype": "hdd"},
        allocatable={"cpu": "1", "pods": "10"},
        taints=[{"key": "maintenance", "effect": "NoExecute"}],
    )
    spec = {"nodeSelector": {"disktype": "ssd"}, "containers": [container("2")]}
    reasons = kubelet_reasons(spec, node, NodeUsage(0, {}))
    assert reasons == ["OutOfcpu", "NodeAffinity", "TaintToleration"]
    assert reported_first(reasons, "NodeAffinity") == " (it reports OutOfcpu first: see insufficient-resources)"
    assert (
        reported_first(reasons[1:], "TaintToleration") == " (it reports NodeAffinity first: see node-selector-mismatch)"
    )
    assert reported_first(reasons[1:], "NodeAffinity") == ""


@pytest.mark.parametrize("key", [["a"], {"a": 1}, 7, None])
def test_a_match_expression_key_that_is_not_a_string_names_no_label(key):
    """The API server refuses such a Pod; the rule says why instead of failing on an unhashable key."""
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": ["x"]}]}
    spec = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    }
    mismatch = affinity_mismatch(spec, NodeInfo(name="n1", labels={"a": "x"}))
    assert mismatch is not None and "the node has no label" in mismatch.detail


def test_request_path_skips_containers_that_do_not_ask_for_the_resource():
    # An injected sidecar first, the request on a later container (issue 22: KeyError).
    sidecar = {"name": "sidecar", "image": "busybox"}
    assert request_path({"containers": [sidecar, container("5")]}, "cpu") == (
        "containers",
        1,
        "resources",
        "requests",
        "cpu",
    )
    spec = {"initContainers": [sidecar, container("5")], "containers": [sidecar]}
    assert request_path(spec, "cpu") == ("initContainers", 1, "resources", "requests", "cpu")
    assert request_path({"containers": [sidecar]}, "cpu") == ("containers",)


def test_the_filters_yes_or_no_agrees_with_the_reason_on_random_affinities() -> None:
    """The scheduler's filter asks affinity_mismatch without `detail` (no message built for each of 5,000
    nodes): it rejects exactly the nodes the detailed check gives a reason for."""
    from nodename_lint.scheduling import affinity_mismatch

    rng = random.Random(26)
    values = ["a", "b", "5", "007", "-3", "+4", "9223372036854775808", "x{y}", ""]
    operators = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus", None, 3]
    rejected = 0
    for _ in range(20_000):
        node = NodeInfo(
            rng.choice(["node-1", "a"]), {k: rng.choice(values) for k in ("zone", "n") if rng.random() < 0.6}
        )
        expression: Any = {
            "key": rng.choice(["zone", "metadata.name", "n", 5, None]),
            "operator": rng.choice(operators),
        }
        if rng.random() < 0.8:
            expression["values"] = rng.sample(values, rng.randrange(3)) if rng.random() < 0.9 else "x"
        key = rng.choice(["matchExpressions", "matchFields"])
        terms: list[Any] = [{key: [expression]}] + [{}] * (rng.random() < 0.1)
        if rng.random() < 0.5:
            terms.append(
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [rng.choice(["a", "b"])]}]}
            )
        spec: dict[str, Any] = {
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
            }
        }
        if rng.random() < 0.5:
            spec["nodeSelector"] = {rng.choice(["zone", "n"]): rng.choice([*values, 5])}
        detailed = affinity_mismatch(spec, node)
        assert (detailed is None) == (affinity_mismatch(spec, node, detail=False) is None), (spec, node)
        rejected += detailed is not None
    assert 5_000 < rejected < 19_000  # both answers occur often
