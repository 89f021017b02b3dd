"""Random but realistic cases for the differential oracle: a cluster (Nodes, the Pods already bound to
them) and a Pod under test, drawn with hypothesis.

A case is what a user has: a manifest as written, and a cluster as `kubectl get nodes,namespaces,pods
-A -o json` dumps it. The oracle gets the same objects, with the Pod under test as the API server
stores it (`admitted`): the admission plugins the oracle does not run are applied here, as a real API
server does before any kubelet or scheduler sees the Pod:

- DefaultTolerationSeconds (`plugin/pkg/admission/defaulttolerationseconds`): the NoExecute
  not-ready and unreachable tolerations for 300 s, unless the Pod tolerates those taints already.

What the generator covers. Nodes: allocatable and capacity in mixed quantity forms (millicores,
decimals, micro units, exponents, binary and decimal suffixes, plain integers and JSON numbers), the
pods limit (small ones too, or none), ephemeral-storage, extended resources (advertised, advertised
as 0, not advertised), hugepages, labels (zone, disk type, arch, numeric labels for Gt/Lt, or none at
all), taints of every effect (node-state and pressure taints included), cordon, Ready and pressure
conditions, the OS in the `kubernetes.io/os` label and in `status.nodeInfo.operatingSystem`. Pods
already bound (as the API stores them: defaulted): requests of containers, init containers and
sidecars, overhead, pod-level resources, host ports with protocol and hostIP, hostNetwork, every
phase, priorities, a stray one on a node that does not exist. The Pod under test: containers, init
containers, restartable sidecars, requests and limits (a limit alone stands for the request) in
forms that round up, overhead, pod-level resources, nodeSelector, required node affinity with every
operator and matchFields, tolerations (tolerationSeconds too), host ports with protocol and hostIP,
hostNetwork, spec.os and the OS label, priority class names.

Two limits keep each case within what the oracle models exactly:

- Priority: PriorityClasses (the built-in ones, which every API server creates and a dump lists,
  and some of the cluster's own: a globalDefault one, one with preemptionPolicy Never, a negative
  one), Pods already bound with any of them (some the mirror Pods of static Pods, some with a start
  time), and a Pod under test that names one of them, none, or one the cluster lacks, sometimes
  with spec.priority or spec.preemptionPolicy written. The oracle resolves only the built-in
  classes, so `admitted` applies the Priority admission plugin (`admitPod`, plugin/pkg/admission/
  priority) as `priority_admission` reads it; a Pod that plugin refuses (`Case.refusal`) reaches no
  kubelet and no scheduler, and only the refusal is compared. Static Pods under test are left to
  tests/test_preemption.py (the harness lints manifests applied through the API). `PREEMPTION` is
  the switch: off, the Pod under test is never critical and never above a Pod already bound, so
  that nothing preempts.
- A Pod already bound with an overhead never spells its pod-level request with a binary suffix and a
  fraction (`2.5Gi`): Go keeps that quantity as an `inf.Dec`, which `addResourceList`
  (component-helpers/resource, v1.35) adds the overhead into in place, so that the kubelet frees the
  overhead twice when it evicts the Pod. nodename-lint sums it once: a known difference, from a
  Kubernetes bug (docs/cluster-state.md, "Priority and preemption"), found with seed 1086795823. The
  same amount is written as a whole number instead (`_without_aliased_requests`), no draw changed.
- A Node whose `kubernetes.io/os` label is missing always has `status.nodeInfo.operatingSystem`
  linux: a kubelet always reports its OS there (`runtime.GOOS`), and the oracle takes the kubelet's OS
  from the label, linux when it is missing (its `ORACLE-CHANGE`); a Node with neither tells
  nodename-lint nothing of its OS.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import cache
from random import Random
from typing import Any

from hypothesis import strategies as st

# On: the Pod under test may be critical and Pods of any priority are bound (see the module's doc).
PREEMPTION = True

KI, MI, GI = 1024, 1024**2, 1024**3
NODE_NAMES = ("kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3")
GHOST_NODE = "kind-worker9"  # named by affinity terms and by a stray Pod, never a Node
NAMESPACES = ("default", "kube-system")
POD_NAME = "probe"
EXTENDED = ("example.com/gpu", "nvidia.com/gpu")
HUGEPAGES = ("hugepages-2Mi", "hugepages-1Gi")
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
TAINT_KEYS = (
    "dedicated",
    "example.com/gpu",
    "node-role.kubernetes.io/control-plane",
    NOT_READY_TAINT,
    UNREACHABLE_TAINT,
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/pid-pressure",
)
TAINT_VALUES = ("", "batch", "gpu")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
OS_LABEL = "kubernetes.io/os"
HOSTNAME_LABEL = "kubernetes.io/hostname"
OPERATING_SYSTEMS = ("linux", "windows")
# label key -> the values Nodes carry and selectors ask for
LABELS: dict[str, tuple[str, ...]] = {
    "disktype": ("ssd", "hdd"),
    "topology.kubernetes.io/zone": ("zone-a", "zone-b"),
    "kubernetes.io/arch": ("amd64", "arm64"),
    "example.com/gpu-count": ("0", "2", "8", "16", "many"),  # integers for Gt/Lt, and one that is not
    "node-role.kubernetes.io/control-plane": ("",),
}


# --- drawing ----------------------------------------------------------------------------------------
# A case takes a few hundred choices. Drawn one by one through hypothesis they would cost more than the
# oracle itself (about 60 us each), so hypothesis draws the shape of a case (how many nodes and Pods)
# and the seed of a Random (one draw), which makes the other choices.
def choice(rnd: Random, values: tuple[Any, ...]) -> Any:
    return rnd.choice(values)


def chance(rnd: Random, one_in: int) -> bool:
    """True once in `one_in` times."""
    return rnd.randrange(one_in) == 0


# --- quantities in the forms people and kubectl write them ----------------------------------------
def _decimal(numerator: int, denominator: int) -> str | None:
    """numerator/denominator as an exact decimal string ("1.5", "0.25"), None when it is not one."""
    whole, rest = divmod(numerator, denominator)
    digits = ""
    for _ in range(6):
        if not rest:
            break
        rest *= 10
        digit, rest = divmod(rest, denominator)
        digits += str(digit)
    if rest:
        return None
    return f"{whole}.{digits}" if digits else str(whole)


def _forms(resource: str, amount: int) -> tuple[Any, ...]:
    """Exact spellings of an amount: cpu in millicores, counts, the rest in bytes."""
    if resource == "cpu":
        forms: list[Any] = [f"{amount}m", f"{amount * 1000}u", f"{amount}e-3"]
        cores = _decimal(amount, 1000)
        if cores is not None:
            forms.append(cores)
            if cores.startswith("0."):
                forms.append(cores[1:])  # ".5"
        if amount % 1000 == 0:
            forms.append(amount // 1000)  # a JSON number, as YAML `cpu: 2` reaches the API
        return tuple(forms)
    if resource in ("pods", *EXTENDED):
        return (str(amount), amount)
    forms = [str(amount)]
    for suffix, unit in (("Ki", KI), ("Mi", MI), ("Gi", GI), ("k", 10**3), ("M", 10**6), ("G", 10**9)):
        scaled = _decimal(amount, unit)
        if scaled is not None and amount >= unit:
            forms.append(f"{scaled}{suffix}")
    if amount % 10**6 == 0:
        forms.append(f"{amount // 10**6}e6")
    forms.append(amount)
    return tuple(forms)


@cache
def _spellings(resource: str, amounts: tuple[int, ...], odd: tuple[tuple[str, int], ...] = ()) -> tuple[Any, ...]:
    """(spelling, amount) for every amount and each of its spellings, plus odd spellings that round up."""
    return tuple((form, amount) for amount in amounts for form in _forms(resource, amount)) + odd


def spelled(rnd: Random, resource: str, amounts: tuple[int, ...], *, odd: bool = False) -> tuple[Any, int]:
    """(a quantity as written, its amount rounded up as the API counts it)."""
    return choice(rnd, _spellings(resource, amounts, ODD_QUANTITIES.get(resource, ()) if odd else ()))


# Rounding forms: the API rounds a request up (MilliValue, Value), so these ask for a little more.
ODD_QUANTITIES: dict[str, tuple[tuple[str, int], ...]] = {
    "cpu": (("0.1m", 1), ("1.0001", 1001), ("333.3m", 334), ("1e-4", 1)),
    "memory": (("1.1", 2), ("100.5Mi", 105381888), ("0.5Ki", 512), ("1e3", 1000), ("2.5e9", 2500000000)),
    "ephemeral-storage": (("1.5Gi", 1610612736), ("999.9M", 999900000)),
}


# --- nodes -----------------------------------------------------------------------------------------
NODE_CPU = (1000, 1900, 2000, 3800, 4000, 4000, 8000, 16000)
NODE_MEMORY = (2 * GI, 4 * GI, 8039064 * KI, 8 * GI, 16 * GI, 32 * GI, 7 * 10**9)
NODE_PODS = (1, 2) + (110,) * 14
NODE_EPHEMERAL = (GI, 10 * GI, 61255492 * KI, 100 * GI)
NODE_SCALARS = {
    "hugepages-2Mi": (0, 64 * MI, GI),
    "hugepages-1Gi": (0, GI, 2 * GI),
    "example.com/gpu": (0, 1, 2, 4),
    "nvidia.com/gpu": (0, 1, 2, 4),
}


def node_resources(rnd: Random) -> dict[str, str]:
    """A Node's allocatable, as the API returns it (strings)."""
    allocatable: dict[str, Any] = {
        "cpu": spelled(rnd, "cpu", NODE_CPU)[0],
        "memory": spelled(rnd, "memory", NODE_MEMORY)[0],
    }
    if not chance(rnd, 30):  # a Node without a pods limit admits no Pod at all
        allocatable["pods"] = spelled(rnd, "pods", NODE_PODS)[0]
    if not chance(rnd, 10):
        allocatable["ephemeral-storage"] = spelled(rnd, "ephemeral-storage", NODE_EPHEMERAL)[0]
    for name, amounts in NODE_SCALARS.items():
        if chance(rnd, 3):
            allocatable[name] = spelled(rnd, name, amounts)[0]
    return {key: str(value) for key, value in allocatable.items()}


PRESSURE = ((),) * 60 + (
    ("MemoryPressure",),
    ("DiskPressure",),
    ("PIDPressure",),
    ("MemoryPressure", "DiskPressure"),
    ("DiskPressure", "PIDPressure"),
)
TAINTS = tuple(
    {"key": key, "effect": effect, **({"value": value} if value else {})}
    for key in TAINT_KEYS
    for effect in EFFECTS
    for value in TAINT_VALUES
)


def node(rnd: Random, name: str) -> dict[str, Any]:
    labels: dict[str, str] = {}
    if not chance(rnd, 20):  # every real Node has labels; a Node without any is a corner of the kubelet's
        labels[HOSTNAME_LABEL] = name
        for key, values in LABELS.items():
            value = choice(rnd, (None, *values))
            if value is not None:
                labels[key] = value
    operating_system = choice(rnd, ("linux",) * 7 + ("windows",))
    node_info: dict[str, Any] = {"architecture": labels.get("kubernetes.io/arch", "amd64")}
    placement = choice(rnd, ("label and status", "label and status", "label and status", "label", "status"))
    if placement == "status" or (placement == "label" and not labels):
        node_info["operatingSystem"] = "linux"  # no label: the OS the kubelet reports (see the module's doc)
    else:
        labels[OS_LABEL] = operating_system
        if placement == "label and status":
            node_info["operatingSystem"] = operating_system
    taints: list[dict[str, Any]] = []
    for _ in range(choice(rnd, (0, 0, 0, 0, 1, 1, 2))):
        found = choice(rnd, TAINTS)
        if all((t["key"], t["effect"]) != (found["key"], found["effect"]) for t in taints):
            taints.append(dict(found))
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if chance(rnd, 10):
        spec["unschedulable"] = True
    allocatable = node_resources(rnd)
    conditions = [{"type": "Ready", "status": choice(rnd, ("True",) * 8 + ("False", "Unknown"))}]
    pressure = choice(rnd, PRESSURE)
    for condition in ("MemoryPressure", "DiskPressure", "PIDPressure"):
        conditions.append({"type": condition, "status": "True" if condition in pressure else "False"})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, **({"labels": labels} if labels else {})},
        "spec": spec,
        "status": {
            "capacity": dict(allocatable),
            "allocatable": allocatable,
            "conditions": conditions,
            "nodeInfo": node_info,
        },
    }


# --- containers ------------------------------------------------------------------------------------
POD_CPU = (50, 100, 100, 100, 250, 250, 250, 500, 500, 1000) * 4 + (2000, 2000, 4000, 20000)
POD_MEMORY = (64 * MI, 128 * MI, 128 * MI, 256 * MI, 256 * MI, 256 * MI, 512 * MI, 512 * MI, GI, 10**9) * 2 + (
    2 * GI,
    4 * GI,
    64 * GI,
)
POD_EPHEMERAL = (100 * MI, 500 * MI, 500 * MI, GI, 5 * GI, 70 * GI)
POD_SCALARS = {
    "hugepages-2Mi": (2 * MI, 64 * MI, 128 * MI, 2 * GI),
    "hugepages-1Gi": (GI, 2 * GI, 4 * GI),
    "example.com/gpu": (1, 2, 3, 8),
    "nvidia.com/gpu": (1, 2, 3, 8),
}
CONTAINER_PORTS = (80, 443, 8080, 9090, 53)
HOST_IPS = ("0.0.0.0", "127.0.0.1", "10.0.0.5")
PROTOCOLS = ("TCP", "UDP", "SCTP")
NATIVE_AMOUNTS = {"cpu": POD_CPU, "memory": POD_MEMORY, "ephemeral-storage": POD_EPHEMERAL}


def resources(rnd: Random, totals: dict[str, int], *, halved: bool = False) -> dict[str, Any]:
    """A container's resources: requests and limits of the native resources (a limit alone stands
    for the request), extended resources and hugepages with limits equal to requests (the API requires
    it). Adds each amount into `totals` (an upper bound of the Pod's aggregate requests)."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for resource, amounts in NATIVE_AMOUNTS.items():
        where = choice(rnd, (None, None, "requests", "requests", "limits", "both", "both and more"))
        if resource == "ephemeral-storage" and not chance(rnd, 4):
            where = None
        if where is None:
            continue
        if halved:  # the Pods already bound are smaller
            amounts = tuple(amount // 2 or 1 for amount in amounts)
        written, amount = spelled(rnd, resource, amounts, odd=not halved)
        if where != "limits":
            requests[resource] = written
        if where == "both and more":
            limits[resource] = spelled(rnd, resource, tuple(a for a in amounts if a >= amount) or (amount,))[0]
        elif where != "requests":
            limits[resource] = written
        totals[resource] = totals.get(resource, 0) + max(amount, 0)
    scalar = choice(rnd, (None,) * 20 + tuple(POD_SCALARS))
    if scalar is not None:
        written, amount = spelled(rnd, scalar, POD_SCALARS[scalar])
        limits[scalar] = requests[scalar] = written
        if scalar.startswith("hugepages-") and "memory" not in requests and "cpu" not in requests:
            requests["memory"] = limits.setdefault("memory", "256Mi")  # hugepages need a cpu or memory request
            totals["memory"] = totals.get("memory", 0) + 256 * MI
    return _block(requests, limits)


def _block(requests: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    """A `resources` block with what is set of requests and limits."""
    return {key: value for key, value in (("requests", requests), ("limits", limits)) if value}


PORT_CHOICES = tuple(
    {
        "containerPort": container_port,
        **({"hostPort": host_port} if host_port else {}),
        **({"hostIP": host_ip} if host_ip and host_port else {}),
        **({"protocol": protocol} if protocol else {}),
    }
    for container_port in CONTAINER_PORTS
    for host_port in (None, None, 80, 80, 80, 8080, 8080, 53, 9090)  # a few ports, so that they meet
    for host_ip in (None, None, None, *HOST_IPS)
    for protocol in (None, None, *PROTOCOLS)
)


def ports(rnd: Random, *, host_network: bool) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    seen: set[tuple[Any, Any]] = set()
    for _ in range(choice(rnd, (0, 1, 1, 2))):
        port = dict(choice(rnd, PORT_CHOICES))
        if host_network:  # with hostNetwork a host port equals the container port (or is left out)
            port.pop("hostIP", None)
            if "hostPort" in port:
                port["hostPort"] = port["containerPort"]
        # the API refuses two ports with the same host port and protocol (AccumulateUniqueHostPorts)
        key = (port.get("hostPort") or port["containerPort"], port.get("protocol", "TCP"))
        if key not in seen:
            seen.add(key)
            found.append(port)
    return found


def container(
    rnd: Random, name: str, totals: dict[str, int], *, host_network: bool, with_ports: bool, halved: bool
) -> dict[str, Any]:
    found: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.10"}
    found_resources = resources(rnd, totals, halved=halved)
    if found_resources:
        found["resources"] = found_resources
    if with_ports:
        listed = ports(rnd, host_network=host_network)
        if listed:
            found["ports"] = listed
    return found


def pod_spec(rnd: Random, *, host_network: bool, halved: bool, pod_level: bool) -> dict[str, Any]:
    """containers, initContainers (ordinary and sidecars), overhead and pod-level resources."""
    totals: dict[str, int] = {}
    spec: dict[str, Any] = {
        "containers": [
            container(rnd, f"c{index}", totals, host_network=host_network, with_ports=index == 0, halved=halved)
            for index in range(choice(rnd, (1, 1, 2, 3)))
        ]
    }
    init = []
    for index in range(choice(rnd, (0, 0, 0, 1, 2))):
        sidecar = chance(rnd, 2)
        entry = container(rnd, f"init{index}", totals, host_network=host_network, with_ports=sidecar, halved=halved)
        if sidecar:
            entry["restartPolicy"] = "Always"
        init.append(entry)
    if init:
        spec["initContainers"] = init
    if chance(rnd, 10):
        spec["overhead"] = {"cpu": choice(rnd, ("250m", "100m", 1)), "memory": choice(rnd, ("120Mi", "64Mi"))}
    if pod_level and chance(rnd, 8):
        spec["resources"] = pod_level_resources(rnd, totals)
    return spec


def pod_level_resources(rnd: Random, totals: dict[str, int]) -> dict[str, Any]:
    """spec.resources at or above what the containers ask for (the API refuses less), for cpu and memory."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for resource, step in (("cpu", 500), ("memory", 512 * MI)):
        where = choice(rnd, (None, "requests", "limits", "both"))
        if where is None:
            continue
        least = -(-totals.get(resource, 0) // step) * step  # rounded up to a step
        amount = least + choice(rnd, (0, 1, 4)) * step
        if where != "limits":
            requests[resource] = choice(rnd, _forms(resource, amount or step))
        if where != "requests":
            limits[resource] = choice(rnd, _forms(resource, (amount or step) + choice(rnd, (0, step))))
    return _block(requests, limits)


# --- the Pods already bound ------------------------------------------------------------------------
PHASES = ("Running", "Running", "Running", "Pending", "Succeeded", "Failed", "Unknown", None)
# a few start times, so that Pods of one priority tie (MoreImportantPod) or not; None: not started
START_TIMES = (
    None,
    None,
    "2026-03-01T10:00:00Z",
    "2026-03-01T10:00:00Z",
    "2026-03-01T09:30:00Z",
    "2026-03-02T08:00:00Z",
)
MIRROR_ANNOTATIONS = {"kubernetes.io/config.mirror": "5b8a5d7c", "kubernetes.io/config.source": "file"}


def _stored(spec: dict[str, Any]) -> None:
    """API defaulting of a stored Pod (SetDefaults_Pod, defaultHostNetworkPorts, defaultPodRequests):
    a limit without a request became the request, a hostNetwork port its own host port."""
    blocks = [entry.get("resources") for entry in spec["containers"] + spec.get("initContainers", [])]
    blocks.append(spec.get("resources"))
    for block in blocks:
        if block and "limits" in block:
            block["requests"] = {**block["limits"], **block.get("requests", {})}
    if spec.get("hostNetwork"):
        for entry in spec["containers"] + spec.get("initContainers", []):
            for port in entry.get("ports", []):
                port["hostPort"] = port["containerPort"]


def bound_pod(
    rnd: Random, index: int, node_names: list[str], classes: Classes, min_priority: int, *, crowded: bool = False
) -> dict[str, Any]:
    """A Pod already bound: smaller than the Pod under test, or as large in a crowded cluster (where the
    Pod under test often fits only by preemption)."""
    host_network = chance(rnd, 10)
    spec = pod_spec(rnd, host_network=host_network, halved=not crowded, pod_level=True)
    _without_aliased_requests(spec)
    if host_network:
        spec["hostNetwork"] = True
    _stored(spec)
    spec["nodeName"] = choice(rnd, (*node_names, *node_names, *node_names, GHOST_NODE))
    names = tuple(name for name, (value, _, _) in classes.items() if PREEMPTION or value >= min_priority)
    class_name = choice(rnd, (None, None, *names))
    if class_name:
        spec["priorityClassName"] = class_name
    stored = priority_admission(spec, classes)  # as the API stored it: the class resolved (or the default)
    if not PREEMPTION and stored.priority < min_priority:
        spec.pop("priorityClassName", None)
        stored = Admission(min_priority, "", PREEMPT_LOWER)
    if stored.class_name:
        spec["priorityClassName"] = stored.class_name
    spec["priority"] = stored.priority
    spec["preemptionPolicy"] = stored.policy
    phase = choice(rnd, PHASES)
    metadata: dict[str, Any] = {
        "name": f"running-{index}",
        "namespace": choice(rnd, NAMESPACES),
        "labels": {"app": f"app-{index}"},
    }
    if PREEMPTION and chance(rnd, 8):  # a static Pod's mirror: critical whatever its priority
        metadata["annotations"] = dict(MIRROR_ANNOTATIONS)
    status: dict[str, Any] = {"phase": phase} if phase else {}
    started = choice(rnd, START_TIMES)
    if started and phase in ("Running", "Unknown"):
        status["startTime"] = started
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def _without_aliased_requests(spec: dict[str, Any]) -> None:
    """A pod-level request with a binary suffix and a fraction written as its whole amount, when the Pod
    has an overhead (see the module's doc: the known difference this keeps out of the cases)."""
    from nodename_lint.quantity import parse_quantity

    if not spec.get("overhead"):
        return
    requests = (spec.get("resources") or {}).get("requests") or {}
    for resource, value in requests.items():
        if isinstance(value, str) and "." in value and value.endswith(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")):
            requests[resource] = str(int(parse_quantity(value)))


# --- PriorityClasses and the Priority admission plugin ---------------------------------------------
PREEMPT_LOWER, PREEMPT_NEVER = "PreemptLowerPriority", "Never"
Classes = dict[str, tuple[int, bool, str]]  # name -> (value, globalDefault, preemptionPolicy)
# the classes every API server creates (and `kubectl get priorityclasses` lists)
BUILT_IN_CLASSES: Classes = {
    "system-node-critical": (2000001000, False, PREEMPT_LOWER),
    "system-cluster-critical": (2000000000, False, PREEMPT_LOWER),
}
# the cluster's own, each in some clusters only: a globalDefault one in a quarter of them
CLUSTER_CLASSES: Classes = {
    "high-priority": (1000, False, PREEMPT_LOWER),
    "batch-low": (-10, False, PREEMPT_LOWER),
    "no-preempt": (5000, False, PREEMPT_NEVER),
    "team-default": (100, True, PREEMPT_LOWER),
}
MISSING_CLASS = "gold"  # named by a Pod, in no cluster


def cluster_classes(rnd: Random) -> Classes:
    classes = dict(BUILT_IN_CLASSES)
    for name, entry in CLUSTER_CLASSES.items():
        if chance(rnd, 4) == entry[1]:  # the globalDefault one once in 4 clusters, the others 3 in 4
            classes[name] = entry
    return classes


def priority_class_object(name: str, entry: tuple[int, bool, str]) -> dict[str, Any]:
    value, default, policy = entry
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
        "preemptionPolicy": policy,
    }


@dataclass(frozen=True)
class Admission:
    """What the Priority admission plugin makes of a new Pod: its priority, class and preemptionPolicy, or
    the Forbidden message it refuses the Pod with."""

    priority: int
    class_name: str
    policy: str
    refusal: str = ""


def priority_admission(spec: dict[str, Any], classes: Classes) -> Admission:
    """admitPod on create: the named class, else the globalDefault one of the lowest value, else 0 and
    PreemptLowerPriority; spec.priority and spec.preemptionPolicy, when written, must be what it computes."""
    name = spec.get("priorityClassName") or ""
    if name and name not in classes:
        return Admission(0, name, PREEMPT_LOWER, f"no PriorityClass with name {name} was found")
    if not name:
        defaults = sorted((value, class_name) for class_name, (value, default, _) in classes.items() if default)
        name = defaults[0][1] if defaults else ""
    value, _, policy = classes[name] if name else (0, False, PREEMPT_LOWER)
    written = spec.get("priority")
    if written is not None and written != value:
        computed = f"priority admission controller computed {value} from the given PriorityClass name"
        return Admission(
            value,
            name,
            policy,
            f"the integer value of priority ({written}) must not be provided in pod spec; {computed}",
        )
    chosen = spec.get("preemptionPolicy")
    if chosen is not None and chosen != policy:
        computed = f"priority admission controller computed {policy} from the given PriorityClass name"
        return Admission(
            value,
            name,
            policy,
            f"the string value of PreemptionPolicy ({chosen}) must not be provided in pod spec; {computed}",
        )
    return Admission(value, name, policy)


# --- the Pod under test ----------------------------------------------------------------------------
def _tolerations() -> tuple[dict[str, Any], ...]:
    found = []
    for key in ("", *TAINT_KEYS):
        for operator in ("Exists", "Equal", None) if key else ("Exists",):
            for value in TAINT_VALUES if operator != "Exists" else ("",):
                for effect in ("", *EFFECTS):
                    for seconds in (None, 0, -1, 30, 300) if effect == "NoExecute" else (None,):
                        toleration: dict[str, Any] = {}
                        if key:
                            toleration["key"] = key
                        if operator:
                            toleration["operator"] = operator
                        if value:
                            toleration["value"] = value
                        if effect:
                            toleration["effect"] = effect
                        if seconds is not None:
                            toleration["tolerationSeconds"] = seconds
                        found.append(toleration)
    return tuple(found)


TOLERATIONS = _tolerations()
EXPRESSION_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _pool(key: str, node_names: tuple[str, ...]) -> tuple[str, ...]:
    return {OS_LABEL: OPERATING_SYSTEMS, HOSTNAME_LABEL: (*node_names, GHOST_NODE)}.get(key) or LABELS[key]


def _label(rnd: Random, nodes: list[dict[str, Any]], target: str) -> tuple[str, str]:
    """A label to select on: mostly one the pinned node or another node has, else any."""
    node_names = tuple(node["metadata"]["name"] for node in nodes)
    source = choice(rnd, ("target", "target", "other", "any"))
    if source != "any":
        candidates = [node for node in nodes if (node["metadata"]["name"] == target) == (source == "target")]
        labels = (
            tuple(sorted(choice(rnd, tuple(candidates))["metadata"].get("labels", {}).items())) if candidates else ()
        )
        if labels:
            return choice(rnd, labels)
    key = choice(rnd, (*LABELS, OS_LABEL, OS_LABEL, HOSTNAME_LABEL))
    return key, choice(rnd, _pool(key, node_names))


def requirement(rnd: Random, nodes: list[dict[str, Any]], target: str) -> dict[str, Any]:
    node_names = tuple(node["metadata"]["name"] for node in nodes)
    key, value = _label(rnd, nodes, target)
    operator = choice(rnd, ("In", "In", "In", *EXPRESSION_OPERATORS))
    found: dict[str, Any] = {"key": key, "operator": operator}
    if operator in ("In", "NotIn"):
        pool = _pool(key, node_names)
        found["values"] = [value]
        if chance(rnd, 3) and len(pool) > 1:
            found["values"].append(choice(rnd, tuple(v for v in pool if v != found["values"][0])))
    elif operator in ("Gt", "Lt"):
        found["values"] = [choice(rnd, ("0", "1", "4"))]  # a non-negative integer (validation)
    return found


def selector_term(rnd: Random, nodes: list[dict[str, Any]], target: str) -> dict[str, Any]:
    node_names = tuple(node["metadata"]["name"] for node in nodes)
    term: dict[str, Any] = {}
    expressions = [requirement(rnd, nodes, target) for _ in range(choice(rnd, (0, 1, 1, 2)))]
    if expressions:
        term["matchExpressions"] = expressions
    if chance(rnd, 4) or (not expressions and not chance(rnd, 6)):
        term["matchFields"] = [
            {  # exactly one value (validation)
                "key": "metadata.name",
                "operator": choice(rnd, ("In", "In", "NotIn")),
                "values": [choice(rnd, (target, target, *node_names, GHOST_NODE))],
            }
            for _ in range(choice(rnd, (1, 1, 2)))
        ]
    return term


def _toleration(rnd: Random, taints: list[dict[str, Any]]) -> dict[str, Any]:
    """Any toleration, or often one for a taint the pinned node has."""
    if not taints or chance(rnd, 2):
        return dict(choice(rnd, TOLERATIONS))
    taint = choice(rnd, tuple(taints))
    found: dict[str, Any] = {"key": taint["key"]}
    if chance(rnd, 2):
        found["operator"] = "Exists"
    elif taint.get("value"):
        found["value"] = taint["value"]
    if not chance(rnd, 3):
        found["effect"] = taint["effect"]
        if taint["effect"] == "NoExecute" and chance(rnd, 3):
            found["tolerationSeconds"] = choice(rnd, (0, 30, 300))
    return found


def pod_under_test(rnd: Random, nodes: list[dict[str, Any]], target: str, classes: Classes) -> dict[str, Any]:
    taints = next(node for node in nodes if node["metadata"]["name"] == target)["spec"].get("taints", [])
    host_network = chance(rnd, 8)
    labels = {"app": POD_NAME}
    if chance(rnd, 10):
        labels[OS_LABEL] = choice(rnd, OPERATING_SYSTEMS)
    pod_os = choice(rnd, (None,) * 12 + OPERATING_SYSTEMS)
    spec = pod_spec(rnd, host_network=host_network, halved=False, pod_level=pod_os != "windows")
    if host_network:
        spec["hostNetwork"] = True
    if pod_os:
        spec["os"] = {"name": pod_os}
    if chance(rnd, 3):
        spec["nodeSelector"] = {}
        for _ in range(choice(rnd, (1, 1, 2))):
            key, value = _label(rnd, nodes, target)
            spec["nodeSelector"][key] = value
    if chance(rnd, 3):
        terms = [selector_term(rnd, nodes, target) for _ in range(choice(rnd, (1, 1, 2, 3)))]
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    tolerations = [_toleration(rnd, taints) for _ in range(choice(rnd, (0, 0, 1, 1, 2, 3)))]
    if tolerations:
        spec["tolerations"] = tolerations
    # no class (a third), a built-in critical one (a quarter), one of the cluster's, rarely one it lacks
    own = tuple(name for name in classes if name not in BUILT_IN_CLASSES)
    kind = choice(rnd, ("none",) * 7 + ("critical",) * 5 + ("cluster",) * 7 + ("missing",))
    if not PREEMPTION:
        kind = "none"
    if kind == "critical":
        spec["priorityClassName"] = choice(rnd, tuple(BUILT_IN_CLASSES))
    elif kind == "cluster" and own:
        spec["priorityClassName"] = choice(rnd, own)
    elif kind == "missing":
        spec["priorityClassName"] = choice(rnd, (MISSING_CLASS, *(name for name in CLUSTER_CLASSES if name not in own)))
    if PREEMPTION and chance(rnd, 30):
        spec["priority"] = choice(rnd, (0, 1000, 2000000000))
    if PREEMPTION and chance(rnd, 30):
        spec["preemptionPolicy"] = choice(rnd, (PREEMPT_LOWER, PREEMPT_NEVER))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD_NAME, "namespace": "default", "labels": labels},
        "spec": spec,
    }


# --- a whole case ----------------------------------------------------------------------------------
@dataclass
class Case:
    """One generated case: the cluster, the Pod as written (unpinned), the node the pinned forms
    name, the replicas of the pinned Deployment."""

    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    pod: dict[str, Any]
    node: str
    replicas: int
    classes: Classes = field(default_factory=lambda: dict(BUILT_IN_CLASSES))
    id: str = ""

    @property
    def admission(self) -> Admission:
        return priority_admission(self.pod["spec"], self.classes)

    @property
    def refusal(self) -> str:
        """The Priority admission plugin's Forbidden message ("" when it admits the Pod)."""
        return self.admission.refusal

    @property
    def critical(self) -> bool:
        """kubelettypes.IsCriticalPod of the Pod under test (no static Pod here: a priority that high)."""
        return self.admission.priority >= 2000000000

    def manifest(self, mode: str) -> dict[str, Any]:
        """What the user lints: the Pod unpinned (`scheduler`), pinned (`kubelet`), or the Deployment of
        `replicas` pinned replicas (`kubelet-replicas`)."""
        pod = copy.deepcopy(self.pod)
        if mode == "scheduler":
            return pod
        pod["spec"] = {"nodeName": self.node, **pod["spec"]}
        if mode == "kubelet":
            return pod
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": POD_NAME, "namespace": "default"},
            "spec": {
                "replicas": self.replicas,
                "selector": {"matchLabels": {"app": POD_NAME}},
                "template": {"metadata": {"labels": pod["metadata"]["labels"]}, "spec": pod["spec"]},
            },
        }

    def cluster_dump(self) -> str:
        """The cluster as `kubectl get nodes,namespaces,pods -A -o json` prints it."""
        namespaces = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": "Active"}}
            for name in NAMESPACES
        ]
        classes = [priority_class_object(name, entry) for name, entry in self.classes.items()]
        items = [*self.nodes, *namespaces, *self.pods, *classes]
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})

    def oracle_request(self, mode: str) -> dict[str, Any]:
        """The oracle's JSON line for one mode: the same objects, the Pod as the API server stores it."""
        pod = admitted(self.manifest("scheduler" if mode in ("scheduler", "requests") else "kubelet"), self.classes)
        request: dict[str, Any] = {"id": f"{self.id}/{mode}", "mode": mode, "nodes": self.nodes, "pods": self.pods}
        request["pod"] = pod
        if mode == "kubelet-replicas":
            request["replicas"] = self.replicas
        return request

    def to_json(self) -> str:
        return json.dumps(
            {
                "nodes": self.nodes,
                "pods": self.pods,
                "pod": self.pod,
                "node": self.node,
                "replicas": self.replicas,
                "classes": self.classes,
            }
        )


def admitted(pod: dict[str, Any], classes: Classes | None = None) -> dict[str, Any]:
    """The Pod after the admission plugins the oracle does not run (see the module's doc): the Priority
    plugin's priority and preemptionPolicy (a Pod it refuses keeps what it wrote), DefaultTolerationSeconds."""
    pod = copy.deepcopy(pod)
    spec = pod["spec"]
    admission = priority_admission(spec, BUILT_IN_CLASSES if classes is None else classes)
    if not admission.refusal:
        if admission.class_name:
            spec["priorityClassName"] = admission.class_name
        spec["priority"] = admission.priority
        spec["preemptionPolicy"] = admission.policy
    tolerations = list(spec.get("tolerations") or [])
    for key in (NOT_READY_TAINT, UNREACHABLE_TAINT):
        if not any(t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "") for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    spec["tolerations"] = tolerations
    return pod


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A cluster of 1-4 Nodes with 1-6 Pods already bound, and a Pod under test."""
    names = tuple(name for name in NODE_NAMES if draw(st.booleans())) or (draw(st.sampled_from(NODE_NAMES)),)
    bound_count = draw(st.integers(1, 6))  # a dump always has Pods (kube-system's at least)
    replicas = draw(st.sampled_from((1, 2, 3, 5)))
    rnd = Random(draw(st.integers(0, 2**64 - 1)))  # a plain Random: hypothesis' own would record each call
    nodes = [node(rnd, name) for name in names]
    target = choice(rnd, names)
    classes = cluster_classes(rnd) if PREEMPTION else dict(BUILT_IN_CLASSES)
    pod = pod_under_test(rnd, nodes, target, classes)
    priority = priority_admission(pod["spec"], classes).priority  # the Pod under test's (see PREEMPTION)
    crowded = PREEMPTION and chance(rnd, 3)
    bound_count += rnd.randrange(6) if crowded else 0
    bound = [bound_pod(rnd, index, list(names), classes, priority, crowded=crowded) for index in range(bound_count)]
    return Case(nodes=nodes, pods=bound, pod=pod, node=target, replicas=replicas, classes=classes)
