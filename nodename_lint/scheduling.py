"""What the kubelet and the scheduler compute for a Pod on a node, following the Kubernetes code.

- Effective requests: `PodRequests` in kubernetes/component-helpers `resource/helpers.go`, after
  the API server's defaulting (`SetDefaults_Pod` in `pkg/apis/core/v1/defaults.go`: a container
  limit without a request becomes the request; `defaultPodRequests`: with pod-level limits, a
  pod-level request a container requests defaults to the containers' aggregated requests, the
  others to the pod-level limit).
- Toleration matching: `Toleration.ToleratesTaint` in k8s.io/api `core/v1/toleration.go`; the
  eviction delay: `getMinTolerationTime` in `pkg/controller/tainteviction/taint_eviction.go`.
- Required node affinity: `GetRequiredNodeAffinity(pod).Match(node)` in component-helpers
  `scheduling/corev1/nodeaffinity` (nodeSelector AND one of the required terms).
- Kubelet admission, in the order of its admit handlers: the eviction manager's `Admit`
  (`pkg/kubelet/eviction/eviction_manager.go`: node pressure, reason Evicted), then
  `predicateAdmitHandler.Admit` (`pkg/kubelet/lifecycle/predicate.go`): the Pod's
  `kubernetes.io/os` label, `spec.os`, then `AdmissionCheck` (`pkg/scheduler/eventhandlers.go`:
  resources, node affinity, host ports) and NoExecute taints (not for static Pods). Only the
  first failure is reported.
- Scheduler filters for a Pod without nodeName, in the default profile's order: NodeUnschedulable,
  TaintToleration, NodeAffinity, NodeResourcesFit; the first failing plugin decides per node.

Rules call these with plain dicts (the Pod spec as written) and cluster-state NodeInfo objects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any, NamedTuple

from .cluster.records import NodeInfo, NodeUsage, PodInfo, plain_container_requests, plain_json
from .model import Path
from .podspec import NODE_NAME_FIELD, REQUIRED_NODE_AFFINITY, required_node_selector_terms
from .quantity import QuantityError, parse_quantity, request_units, stored_units, written_units
from .sources import DamagedState

NATIVE_ORDER = ("cpu", "memory", "ephemeral-storage")
POD_LEVEL_RESOURCES = ("cpu", "memory")  # plus hugepages-*: IsSupportedPodLevelResource
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
# Taints the node lifecycle controller manages for NotReady, unreachable and cordoned nodes: the
# node-not-ready rule reports them, the DefaultTolerationSeconds admission plugin tolerates the
# NoExecute ones for 300 s on every Pod.
NODE_STATE_TAINTS = frozenset({NOT_READY_TAINT, UNREACHABLE_TAINT, UNSCHEDULABLE_TAINT})
_INT64 = re.compile(r"[+-]?[0-9]+")


class RequestError(ValueError):
    """A request or limit in the manifest that is not a valid quantity (the API server rejects it)."""

    def __init__(self, path: Path, error: QuantityError) -> None:
        super().__init__(str(error))
        self.path = path
        self.error = error


# --- effective requests ---------------------------------------------------------------------------
# A request while a Pod's requests are summed: exact (an int when whole, else a Fraction), rounded up
# once the Pod's sum is made (PodRequests adds Quantities; MilliValue/Value round the result).
Units = int | Fraction


def add_into(total: dict[str, Any], more: dict[str, Any]) -> None:
    for resource, amount in more.items():
        total[resource] = total.get(resource, 0) + amount


def _max_into(total: dict[str, Units], other: dict[str, Units]) -> None:
    for resource, amount in other.items():
        if amount > total.get(resource, 0):
            total[resource] = amount


def _resource_list(resources: Any, path: Path, lenient: bool, *, stored: bool = True) -> dict[str, Units]:
    """Requests of one `resources` block, limits standing in for missing requests (API defaulting)."""
    if not isinstance(resources, dict):
        return {}
    limits = _quantities(resources.get("limits"), (*path, "limits"), lenient, stored=stored)
    return {**limits, **_quantities(resources.get("requests"), (*path, "requests"), lenient, stored=stored)}


def _containers(spec: dict[str, Any], key: str) -> Iterable[tuple[int, dict[str, Any]]]:
    containers = spec.get(key)
    if isinstance(containers, list):
        for index, container in enumerate(containers):
            if isinstance(container, dict):
                yield index, container


def pod_requests(
    spec: dict[str, Any], *, lenient: bool = False, overhead: dict[str, Any] | None = None
) -> dict[str, int]:
    """The Pod's effective requests (PodRequests): cpu in millicores, the rest in units.

    Raises RequestError (with the path inside the Pod spec) for an invalid quantity unless
    `lenient`, which skips it (for Pods already running, which the API server accepted).
    `overhead` replaces spec.overhead: what the RuntimeClass admission plugin sets from the
    Pod's RuntimeClass.
    """
    blocks = plain_container_requests(spec) if lenient and overhead is None else None
    if blocks is not None:
        running: dict[str, int] = {}
        _add_requests(running, blocks)
        return running
    total = _aggregate(spec, lenient, stored=True)
    pod_level = _pod_level_requests(spec.get("resources"), lambda: _aggregate(spec, lenient, stored=False), lenient)
    for resource, amount in pod_level.items():
        if is_pod_level_resource(resource):
            total[resource] = amount
    own_overhead = {"requests": spec.get("overhead")}
    counted_overhead = own_overhead if overhead is None else {"requests": overhead}
    add_into(total, _resource_list(counted_overhead, ("overhead",), lenient))
    return {resource: math.ceil(amount) for resource, amount in total.items() if amount}


def _aggregate(spec: dict[str, Any], lenient: bool, *, stored: bool) -> dict[str, Units]:
    """AggregateContainerRequests of a spec. `stored`: with each quantity as the API stores it (rounded
    up to a thousandth of its unit), else as written (what defaultPodRequests sums)."""
    containers = (
        _resource_list(container.get("resources"), ("containers", index, "resources"), lenient, stored=stored)
        for index, container in _containers(spec, "containers")
    )
    init_containers = (
        (
            _resource_list(container.get("resources"), ("initContainers", index, "resources"), lenient, stored=stored),
            container.get("restartPolicy") == "Always",
        )
        for index, container in _containers(spec, "initContainers")
    )
    return aggregate_requests(containers, init_containers)


def aggregate_requests(
    containers: Iterable[dict[str, Units]], init_containers: Iterable[tuple[dict[str, Units], bool]]
) -> dict[str, Units]:
    """AggregateContainerRequests: the containers and sidecars summed, at least the largest init
    container (with the sidecars declared before it). Each container's requests come parsed, each
    init container's with whether it is a sidecar (restartPolicy Always), in the spec's order."""
    total: dict[str, Units] = {}
    for own in containers:
        add_into(total, own)
    sidecars: dict[str, Units] = {}
    init_max: dict[str, Units] = {}
    for own, sidecar in init_containers:
        if sidecar:  # a sidecar runs alongside the containers
            add_into(total, own)
            add_into(sidecars, own)
            current = dict(sidecars)
        else:
            current = dict(own)
            add_into(current, sidecars)
        _max_into(init_max, current)
    _max_into(total, init_max)
    return total


def is_pod_level_resource(resource: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return resource in POD_LEVEL_RESOURCES or resource.startswith("hugepages-")


def _pod_level_requests(resources: Any, containers: Callable[[], dict[str, Units]], lenient: bool) -> dict[str, Units]:
    """spec.resources.requests after `defaultHugePagePodLimits` and `defaultPodRequests`
    (pkg/apis/core/v1/defaults.go).

    With pod-level requests or limits, a hugepages size the containers ask for and the pod level
    names neither as request nor as limit gets a pod-level limit of the containers' aggregate. Then,
    with pod-level limits, a resource without a pod-level request defaults to the containers'
    aggregated request (`containers()`, the quantities as written: SetDefaults_Pod runs before the
    ResourceLists are rounded) when it is overcommittable (cpu, memory: not hugepages) and a
    container requests it, else to the pod-level limit. Without pod-level limits nothing is
    defaulted.
    """
    if not isinstance(resources, dict):
        return {}
    requests = _quantities(resources.get("requests"), ("resources", "requests"), lenient)
    limits = _quantities(resources.get("limits"), ("resources", "limits"), lenient)
    if requests or limits:
        for resource, amount in containers().items():
            if resource.startswith("hugepages-") and resource not in requests and resource not in limits:
                limits[resource] = stored_units(resource, amount)
    if limits:
        for resource, amount in containers().items():
            if resource not in requests and resource in POD_LEVEL_RESOURCES:
                requests[resource] = stored_units(resource, amount)
        for resource, amount in limits.items():
            if resource not in requests and is_pod_level_resource(resource):
                requests[resource] = amount
    return requests


def evictable_requests(spec: dict[str, Any]) -> dict[str, int]:
    """What evicting a running Pod frees for the kubelet's critical Pod admission: `GetResourceRequest`
    (pkg/api/v1/resource/helpers.go) of each resource (and 1 of `pods`, which the caller adds).

    It differs from the Pod's requests in two ways: with pod-level resources (`IsPodLevelResourcesSet`)
    only the pod-level cpu, memory and hugepages count (`SkipContainerLevelResources`), and the
    overhead is added only to a resource the Pod requests. A stored Pod: invalid quantities skipped.
    """
    resources = spec.get("resources")
    pod_level = isinstance(resources, dict) and any(
        isinstance(block, dict) and any(isinstance(name, str) and is_pod_level_resource(name) for name in block)
        for block in (resources.get("requests"), resources.get("limits"))
    )
    if pod_level:
        total = {
            resource: amount
            for resource, amount in _pod_level_requests(
                resources, lambda: _aggregate(spec, True, stored=False), True
            ).items()
            if is_pod_level_resource(resource)
        }
    else:
        total = _aggregate(spec, True, stored=True)
    for resource, amount in _resource_list({"requests": spec.get("overhead")}, ("overhead",), True).items():
        if total.get(resource):
            total[resource] += amount
    return {resource: math.ceil(amount) for resource, amount in total.items() if amount}


def _quantities(block: Any, path: Path, lenient: bool, *, stored: bool = True) -> dict[str, Units]:
    """One requests or limits mapping, parsed (invalid quantities: RequestError, or skipped when lenient);
    `stored`: as the API stores each quantity (request_units), else as written."""
    found: dict[str, Units] = {}
    for resource, raw in block.items() if isinstance(block, dict) else ():
        if raw is None or not isinstance(resource, str):
            continue
        try:
            found[resource] = request_units(resource, raw) if stored else written_units(resource, raw)
        except QuantityError as exc:
            if not lenient:
                raise RequestError((*path, resource), exc) from None
    return found


def running_pods_requests(pods: Iterable[PodInfo]) -> dict[str, int]:
    """The summed effective requests of Pods already in the cluster: a node's usage.

    The same sums as add_into(total, pod_requests(pod.spec, lenient=True)) for each Pod, without
    a dict per plain Pod: this runs for every Pod on the nodes no-node-fits compares (82,000 of a
    150,000-Pod dump), and most are plain. Read from the spec as loaded (a dict, or a JSON dump's
    structs), so that summing never makes plain values of a dump's structs (that took longer
    than the sums); a dump's Pods are summed once for each distinct set of containers' resources.
    """
    total: dict[str, int] = {}
    # a dump's Pods with the same requests share one dict (memoized): each is added once, times its Pods,
    # in the order of its first Pod (so the resources come in the order adding Pod by Pod gives them); the
    # dicts are kept here, so no id is reused while counted
    counted: dict[int, list[Any]] = {}
    memoized = _DUMP_REQUESTS
    for pod in pods:
        spec = pod.loaded_spec
        if spec.__class__ is not dict:
            key = spec.usage_key()
            found = memoized.get(key)
            if found is None:
                found = _dump_pod_requests(pod, key)
            entry = counted.get(id(found))
            if entry is None:
                counted[id(found)] = [found, 1]
            else:
                entry[1] += 1
            continue
        if counted:  # a Pod made plain values among the dump's: what came before it is added first
            _add_counted(total, counted)
        if (blocks := plain_container_requests(spec)) is not None:
            _add_requests(total, blocks)
        else:
            add_into(total, pod_requests(spec, lenient=True))
    _add_counted(total, counted)
    return total


def _add_counted(total: dict[str, int], counted: dict[int, list[Any]]) -> None:
    """Add each counted requests dict times its count into `total`, in order, and empty `counted`."""
    for found, count in counted.values():
        for resource, amount in found.items():
            total[resource] = total.get(resource, 0) + amount * count
    counted.clear()


# pod_requests of a JSON dump's Pods by what it reads of them (json_dump._Spec.usage_key); a cluster's Pods
# repeat the specs of their workloads
_DUMP_REQUESTS: dict[Hashable, dict[str, int]] = {}
_DUMP_REQUESTS_LIMIT = 20_000  # distinct specs kept (a few MB); past it, summed each time


def _dump_pod_requests(pod: PodInfo, key: Hashable) -> dict[str, int]:
    """pod_requests(pod.spec, lenient=True) of a JSON dump's Pod (json_dump structs) not seen before, kept
    under its `usage_key`, without making its spec plain values: from its containers' (and init
    containers') resources as the file has them, each distinct block parsed once (`_stored_requests`).
    The generic sums took 28 µs a Pod of three containers, and a third of a cluster's Pods have
    sidecars or init containers. A spec with overhead or pod-level resources takes the generic sums."""
    try:
        found = _raw_requests(pod.loaded_spec, key)
    except DamagedState as exc:  # a container's resources that are not UTF-8 text
        raise DamagedState(f"the spec of Pod {pod.namespace}/{pod.name} is {exc}") from None
    if found is None:  # overhead or pod-level resources
        found = pod_requests(pod.spec, lenient=True)
    if len(_DUMP_REQUESTS) < _DUMP_REQUESTS_LIMIT:
        _DUMP_REQUESTS[key] = found
    return found


def _raw_requests(spec: Any, key: Hashable) -> dict[str, int] | None:
    """The requests of a JSON dump's spec (json_dump._Spec) read from its containers' raw `resources` under
    its `usage_key`; None for a spec with overhead or pod-level resources."""
    if (plain := spec.plain_container_requests(key)) is not None:
        found: dict[str, int] = {}
        _add_requests(found, plain)
        return found
    if (blocks := spec.resource_blocks(key)) is not None:
        containers, init_containers = blocks
        total = aggregate_requests(
            map(_stored_requests, containers),
            ((_stored_requests(resources), sidecar) for resources, sidecar in init_containers),
        )
        return {resource: math.ceil(amount) for resource, amount in total.items() if amount}
    return None


# _resource_list of a container's `resources` by its bytes in a JSON dump (a cluster's workloads
# repeat a few blocks), lenient and as the API stores each quantity
_STORED_REQUESTS: dict[bytes, dict[str, Units]] = {}


def _stored_requests(resources: bytes) -> dict[str, Units]:
    found = _STORED_REQUESTS.get(resources)
    if found is None:
        found = _resource_list(plain_json(resources), (), lenient=True)
        if len(_STORED_REQUESTS) < _DUMP_REQUESTS_LIMIT:
            _STORED_REQUESTS[resources] = found
    return found


def _add_requests(total: dict[str, int], blocks: Iterable[Any]) -> None:
    """Add one Pod's `requests` mappings (`blocks`) into `total`; invalid quantities are skipped (lenient).

    Whole amounts are added as they come; the others are summed for the Pod and rounded up once,
    as its PodRequests is (ceil(whole + rest) = whole + ceil(rest)).
    """
    rest: dict[str, Fraction] | None = None
    for requests in blocks:
        if isinstance(requests, dict):
            for resource, raw in requests.items():
                try:
                    amount = request_units(resource, raw)
                except QuantityError:
                    continue
                if isinstance(amount, int):
                    if amount:
                        total[resource] = total.get(resource, 0) + amount
                else:
                    rest = rest or {}
                    rest[resource] = rest.get(resource, 0) + amount
    for resource, amount in (rest or {}).items():
        total[resource] = total.get(resource, 0) + math.ceil(amount)


def request_path(spec: dict[str, Any], resource: str) -> Path:
    """Where to point at a resource's request: pod-level, else the container asking the most."""
    pod_level = spec.get("resources")
    if isinstance(pod_level, dict):
        for key in ("requests", "limits"):
            block = pod_level.get(key)
            if isinstance(block, dict) and resource in block:
                return ("resources", key, resource)
    best: tuple[Units, Path] = (-1, ())
    for key in ("containers", "initContainers"):
        for index, container in _containers(spec, key):
            amount = _resource_list(container.get("resources"), (), lenient=True).get(resource)
            if amount is not None and amount > best[0]:
                resources = container.get("resources") or {}
                where = "requests" if resource in (resources.get("requests") or {}) else "limits"
                best = (amount, (key, index, "resources", where, resource))
    return best[1] or ("containers",)


# --- taints and tolerations -----------------------------------------------------------------------
def tolerates(toleration: Any, taint: dict[str, Any]) -> bool:
    """Toleration.ToleratesTaint: effect and key must match when set; Equal compares values."""
    if not isinstance(toleration, dict):
        return False
    effect, key = toleration.get("effect") or "", toleration.get("key") or ""
    if effect and effect != taint.get("effect"):
        return False
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def tolerations_of(spec: dict[str, Any]) -> list[Any]:
    tolerations = spec.get("tolerations")
    return tolerations if isinstance(tolerations, list) else []


DEFAULT_TOLERATION_SECONDS = 300


def admitted_tolerations(spec: dict[str, Any]) -> list[Any]:
    """The Pod's tolerations as the API server stores them: the DefaultTolerationSeconds admission
    plugin (`plugin/pkg/admission/defaulttolerationseconds`, on by default) adds the NoExecute
    not-ready and unreachable tolerations for 300 s unless a toleration with that key (or no key)
    and effect NoExecute (or no effect) is there already."""
    tolerations = tolerations_of(spec)
    added = [
        {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
        for key in (NOT_READY_TAINT, UNREACHABLE_TAINT)
        if not any(
            isinstance(t, dict) and (t.get("key") or "") in (key, "") and (t.get("effect") or "") in ("NoExecute", "")
            for t in tolerations
        )
    ]
    return tolerations + added if added else tolerations


def untolerated(
    taints: Iterable[dict[str, Any]], tolerations: list[Any], effects: Iterable[str]
) -> list[dict[str, Any]]:
    """The taints with one of `effects` that no toleration tolerates."""
    wanted = set(effects)
    return [
        taint for taint in taints if taint.get("effect") in wanted and not any(tolerates(t, taint) for t in tolerations)
    ]


def eviction_delay(taints: Iterable[dict[str, Any]], tolerations: list[Any]) -> int | None:
    """Seconds until the taint eviction controller evicts a Pod that tolerates these NoExecute taints.

    None: tolerated forever. Follows getMinTolerationTime over the first matching toleration of
    each taint; a tolerationSeconds <= 0 evicts at once (0).
    """
    used: list[dict[str, Any]] = []
    for taint in taints:
        match = next((t for t in tolerations if tolerates(t, taint)), None)
        if match is not None:
            used.append(match)
    seconds = [
        value
        for value in (t.get("tolerationSeconds") for t in used)
        if isinstance(value, int) and not isinstance(value, bool)
    ]
    if not seconds:
        return None
    return max(0, min(seconds))


def taint_text(taint: dict[str, Any]) -> str:
    """A taint as kubectl taint writes it: key=value:Effect."""
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + str(value) if value else ''}:{taint.get('effect')}"


# --- node affinity --------------------------------------------------------------------------------
class AffinityMismatch(NamedTuple):
    """Why the required node affinity does not match a node, and where in the Pod spec."""

    path: Path
    detail: str


def _expression_mismatch(
    expression: Any, labels: Mapping[str, str], node_name: str, field: bool, detail: bool = True
) -> str | None:
    """None when one matchExpressions/matchFields requirement matches the node, else why not ("" without
    `detail`: the scheduler's filter asks only whether it matches, for every node of a cluster)."""
    if not isinstance(expression, dict):
        return "the requirement is not a mapping"
    key, operator = expression.get("key"), expression.get("operator")
    listed = expression.get("values")
    values = [str(v) for v in listed] if isinstance(listed, list) else []
    actual: str | None
    if field:
        present, actual = key == NODE_NAME_FIELD, node_name
    else:  # a key that is not a string (a list, a number) names no label, and must not be hashed
        actual = labels.get(key) if isinstance(key, str) else None
        present = actual is not None
    if operator == "In":
        matches, why = present and actual in values, "{shown}, not one of {values}"
    elif operator == "NotIn":
        matches, why = not present or actual not in values, "{shown}, which NotIn excludes"
    elif operator == "Exists" and not field:
        matches, why = present, "{shown}"
    elif operator == "DoesNotExist" and not field:
        matches, why = not present, "{shown}, which DoesNotExist excludes"
    elif operator in ("Gt", "Lt") and not field:
        if actual is None or not _INT64.fullmatch(actual) or len(values) != 1 or not _INT64.fullmatch(values[0]):
            matches, why = False, "{shown}, not an integer {operator} {values}"
        else:
            bound = int(values[0])
            matches = int(actual) > bound if operator == "Gt" else int(actual) < bound
            why = "{shown}, not " + ("greater" if operator == "Gt" else "less") + f" than {bound}"
    else:
        return f"operator {operator!r} is not valid here" if detail else ""
    if matches:
        return None
    if not detail:
        return ""
    what = NODE_NAME_FIELD if field else f"label {key}"
    shown = f"{what} is {actual!r}" if present else f"the node has no {what}"
    return why.format(shown=shown, values=values, operator=operator)


def _term_mismatch(term: Any, node: NodeInfo, path: Path, detail: bool = True) -> AffinityMismatch | None:
    if not isinstance(term, dict) or not (term.get("matchExpressions") or term.get("matchFields")):
        return AffinityMismatch(path, "an empty node selector term matches no node")
    for key, is_field in (("matchExpressions", False), ("matchFields", True)):
        requirements = term.get(key)
        for index, expression in enumerate(requirements if isinstance(requirements, list) else []):
            why = _expression_mismatch(expression, node.labels, node.name, is_field, detail)
            if why is not None:
                return AffinityMismatch((*path, key, index), why) if detail else _MISMATCH
    return None


_MISMATCH = AffinityMismatch((), "")  # what a check without `detail` returns: that it does not match


def affinity_mismatch(spec: dict[str, Any], node: NodeInfo, detail: bool = True) -> AffinityMismatch | None:
    """Why nodeSelector or the required node affinity rejects `node` (None when both match). Without
    `detail`, only whether it does: a shared value without a path or a message."""
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        for key, wanted in selector.items():
            actual = node.labels.get(key)
            if actual is None:
                if not detail:
                    return _MISMATCH
                return AffinityMismatch(("nodeSelector", key), f"node {node.name} has no label {key}")
            if actual != str(wanted):
                if not detail:
                    return _MISMATCH
                return AffinityMismatch(
                    ("nodeSelector", key), f"label {key} is {actual!r} on node {node.name}, not {str(wanted)!r}"
                )
    terms = required_node_selector_terms(spec)
    if terms is None:
        return None
    path: Path = (*REQUIRED_NODE_AFFINITY, "nodeSelectorTerms")
    if not detail:
        return None if any(_term_mismatch(term, node, path, False) is None for term in terms) else _MISMATCH
    mismatches = [_term_mismatch(term, node, (*path, index)) for index, term in enumerate(terms)]
    if any(m is None for m in mismatches):
        return None
    if len(mismatches) == 1:
        first = mismatches[0]
        assert first is not None
        return AffinityMismatch(first.path, f"{first.detail} on node {node.name}")
    details = "; ".join(f"term {i + 1}: {m.detail}" for i, m in enumerate(mismatches) if m is not None)
    return AffinityMismatch(path, f"none of the required node affinity terms matches node {node.name} ({details})")


# --- resources ------------------------------------------------------------------------------------
class Shortage(NamedTuple):
    """InsufficientResource: what the kubelet reports as OutOf<resource> and the scheduler as Insufficient."""

    resource: str
    requested: int
    used: int
    capacity: int

    @property
    def kubelet_reason(self) -> str:
        return f"OutOf{self.resource}"

    @property
    def kubelet_message(self) -> str:
        return (
            f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
            f"used: {self.used}, capacity: {self.capacity}"
        )

    @property
    def scheduler_reason(self) -> str:
        return "Too many pods" if self.resource == "pods" else f"Insufficient {self.resource}"

    @property
    def never_fits(self) -> bool:
        """True when the node could not take it even empty."""
        return self.requested > self.capacity


def is_extended_resource(name: str) -> bool:
    """IsExtendedResourceName: a domain-qualified name outside kubernetes.io, not `requests.*`."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def fit_order(requests: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """The positive requests in the order noderesources.Fits compares them after the pods count: cpu,
    memory, ephemeral-storage, then the scalar resources sorted (what `shortages` walks; worked out once
    when one Pod is compared with every node)."""
    scalars = sorted(r for r in requests if r not in NATIVE_ORDER and r != "pods")
    return tuple(
        (resource, amount) for resource in (*NATIVE_ORDER, *scalars) if (amount := requests.get(resource, 0)) > 0
    )


def shortages(
    requests: dict[str, int],
    node: NodeInfo,
    usage: NodeUsage | None,
    *,
    kubelet: bool,
    order: tuple[tuple[str, int], ...] | None = None,
) -> list[Shortage]:
    """noderesources.Fits in order: pods count, cpu, memory, ephemeral-storage, scalar resources.

    `usage` None compares with allocatable alone. The kubelet first drops extended resources
    the node does not advertise at all (removeMissingExtendedResources). `order`: fit_order(requests).
    """
    capacity = node.capacity
    used_pods = usage.pods if usage else 0
    requested = usage.requested if usage else {}
    found: list[Shortage] = []
    if used_pods + 1 > capacity.get("pods", 0):
        found.append(Shortage("pods", 1, used_pods, capacity.get("pods", 0)))
    for resource, amount in fit_order(requests) if order is None else order:
        if kubelet and is_extended_resource(resource) and resource not in node.allocatable:
            continue
        available = capacity.get(resource, 0)
        if amount > available - requested.get(resource, 0):
            found.append(Shortage(resource, amount, requested.get(resource, 0), available))
    return found


def kubelet_reasons(
    spec: dict[str, Any],
    node: NodeInfo,
    usage: NodeUsage | None,
    *,
    labels: dict[str, Any] | None = None,
    static: bool = False,
    ports_in_use: dict[HostPort, str] | None = None,
    overhead: dict[str, Any] | None = None,
) -> list[str]:
    """The kubelet's admission failures in its order; the Pod shows the first one.

    Evicted (node pressure), PodOSSelectorNodeLabelDoesNotMatch, PodOSNotSupported, OutOf<resource>,
    NodeAffinity, NodePorts, TaintToleration (NoExecute, not for static Pods). An invalid request
    counts as none (the API server rejects it). `labels` are the Pod's own labels, `ports_in_use`
    the host ports of the Pods already on the node, `overhead` what its RuntimeClass adds.
    """
    reasons = []
    if pressure_rejection(spec, node, static=static):
        reasons.append(EVICTED_REASON)
    os_reason = os_rejection(spec, labels or {}, node)
    if os_reason:
        reasons.append(os_reason)
    try:
        requests = pod_requests(spec, overhead=overhead)
    except RequestError:
        requests = {}
    short = shortages(requests, node, usage, kubelet=True)
    if short:
        reasons.append(kubelet_resource_reason(short))
    if affinity_mismatch(spec, kubelet_node(node)) is not None:
        reasons.append("NodeAffinity")
    if ports_in_use and port_conflict(host_ports(spec, default_from_host_network=True), ports_in_use) is not None:
        reasons.append("NodePorts")
    if not static and untolerated(node.taints, admitted_tolerations(spec), ("NoExecute",)):
        reasons.append("TaintToleration")
    return reasons


ONE_OF = "one of "


def kubelet_resource_reason(found: list[Shortage]) -> str:
    """The reason the kubelet reports for these shortages (in noderesources.Fits' order): the first.

    Pods, cpu, memory and ephemeral-storage are checked in that order, extended resources and
    hugepages after them in the order of a Go map (`podRequest.ScalarResources`), which is random:
    when the first shortage is one of several such, the reason is "one of OutOfa, OutOfb".
    """
    first = found[0]
    if first.resource in ("pods", *NATIVE_ORDER) or len(found) == 1:
        return first.kubelet_reason
    return ONE_OF + ", ".join(shortage.kubelet_reason for shortage in found)


def reason_alternatives(reason: str) -> list[str]:
    """The reasons a kubelet_reasons entry stands for: itself, or each of "one of A, B"."""
    return reason.removeprefix(ONE_OF).split(", ") if reason.startswith(ONE_OF) else [reason]


# --- node pressure: the eviction manager's Admit ---------------------------------------------------
EVICTED_REASON = "Evicted"
PRESSURE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")
MEMORY_PRESSURE_TAINT = "node.kubernetes.io/memory-pressure"
# The NoSchedule taints the node lifecycle controller sets for each condition (TaintNodesByCondition).
PRESSURE_TAINTS = {
    "MemoryPressure": MEMORY_PRESSURE_TAINT,
    "DiskPressure": "node.kubernetes.io/disk-pressure",
    "PIDPressure": "node.kubernetes.io/pid-pressure",
}
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000  # scheduling.SystemCriticalPriority
CRITICAL_PRIORITY_CLASSES = frozenset({"system-node-critical", "system-cluster-critical"})


def pressure_conditions(node: NodeInfo) -> list[str]:
    """The node's pressure conditions that are True, in the order the kubelet reports them."""
    return [condition for condition in PRESSURE_CONDITIONS if node.conditions.get(condition) == "True"]


def is_critical(spec: dict[str, Any], *, static: bool) -> bool:
    """kubelettypes.IsCriticalPod: a static Pod, or a priority of at least SystemCriticalPriority.

    A manifest gets its priority from priorityClassName (the Priority admission plugin); the
    two built-in critical classes are at or above SystemCriticalPriority.
    """
    priority = spec.get("priority")
    if isinstance(priority, int) and not isinstance(priority, bool) and priority >= SYSTEM_CRITICAL_PRIORITY:
        return True
    return static or spec.get("priorityClassName") in CRITICAL_PRIORITY_CLASSES


def is_best_effort(spec: dict[str, Any]) -> bool:
    """GetPodQOS == BestEffort (`status.qosClass` is set by the API server from the same function)."""
    return qos_class(spec) == "BestEffort"


def qos_class(spec: dict[str, Any]) -> str:
    """ComputePodQOS (pkg/apis/core/v1/helper/qos): from pod-level resources when the Pod has them,
    else from every container's; cpu and memory only, quantities compared exactly."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    pod_level = spec.get("resources")
    if isinstance(pod_level, dict):
        _positive_into(requests, pod_level.get("requests"))
        if pod_level.get("limits") and not {"cpu", "memory"} <= _positive_into(limits, pod_level.get("limits")):
            guaranteed = False
    else:
        for key in ("containers", "initContainers"):
            listed = spec.get(key)
            for container in listed if isinstance(listed, list) else ():
                resources = container.get("resources") if isinstance(container, dict) else None
                resources = resources if isinstance(resources, dict) else {}
                _positive_into(requests, resources.get("requests"))
                if not {"cpu", "memory"} <= _positive_into(limits, resources.get("limits")):
                    guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    guaranteed = guaranteed and all(limits.get(name) == amount for name, amount in requests.items())
    return "Guaranteed" if guaranteed and len(requests) == len(limits) else "Burstable"


def _positive_into(total: dict[str, Any], block: Any) -> set[str]:
    """Add the positive cpu and memory quantities of `block` into `total`; the names added."""
    found: set[str] = set()
    for name, raw in block.items() if isinstance(block, dict) else ():
        if name not in ("cpu", "memory"):
            continue
        try:
            amount = parse_quantity(raw)
        except QuantityError:
            continue
        if amount > 0:
            total[name] = total.get(name, 0) + amount
            found.add(name)
    return found


def pressure_rejection(spec: dict[str, Any], node: NodeInfo, *, static: bool) -> list[str]:
    """The conditions for which the eviction manager's Admit rejects the Pod ([] when it admits it).

    Critical Pods are always admitted. MemoryPressure alone rejects only BestEffort Pods that do
    not tolerate the memory-pressure taint; any other pressure condition rejects every Pod.
    """
    conditions = pressure_conditions(node)
    if not conditions or is_critical(spec, static=static):
        return []
    if conditions == ["MemoryPressure"]:
        taint = {"key": MEMORY_PRESSURE_TAINT, "effect": "NoSchedule"}
        if not is_best_effort(spec) or any(tolerates(t, taint) for t in tolerations_of(spec)):
            return []
    return conditions


def pressure_message(conditions: list[str]) -> str:
    """nodeConditionMessageFmt with Go's %v of the condition list."""
    return f"The node had condition: [{' '.join(conditions)}]. "


# --- operating system: predicateAdmitHandler's first checks ----------------------------------------
OS_LABEL = "kubernetes.io/os"
OS_LABEL_REASON = "PodOSSelectorNodeLabelDoesNotMatch"
OS_FIELD_REASON = "PodOSNotSupported"
OS_MESSAGES = {
    OS_LABEL_REASON: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    OS_FIELD_REASON: "Failed to admit pod as the OS field doesn't match node OS",
}


def kubelet_os(node: NodeInfo) -> str:
    """The kubelet's own OS (runtime.GOOS): what it reports in status.nodeInfo.operatingSystem, else
    the kubernetes.io/os label it sets at registration ("" when the Node says neither)."""
    return node.operating_system or node.labels.get(OS_LABEL, "")


def kubelet_node(node: NodeInfo) -> NodeInfo:
    """The node as the kubelet's later admission checks see it.

    rejectPodAdmissionBasedOnOSSelector (`pkg/kubelet/lifecycle/predicate.go`) runs first and, when
    the node's kubernetes.io/os label is missing or differs from runtime.GOOS, writes GOOS into the
    node's labels: into the Node's own map when it has labels (so NodeAffinity then sees it), into a
    new map when it has none.
    """
    goos = kubelet_os(node)
    if not goos or not node.labels or node.labels.get(OS_LABEL) == goos:
        return node
    return replace(node, labels={**node.labels, OS_LABEL: goos})


def os_rejection(spec: dict[str, Any], labels: dict[str, Any], node: NodeInfo) -> str | None:
    """rejectPodAdmissionBasedOnOSSelector, then rejectPodAdmissionBasedOnOSField: the Pod's
    kubernetes.io/os label, then spec.os.name, against the kubelet's runtime.GOOS (kubelet_os).

    Nothing is reported for a Node that tells neither its OS nor its label.
    """
    node_os = kubelet_os(node)
    if not node_os:
        return None
    if OS_LABEL in labels and str(labels[OS_LABEL]) != node_os:
        return OS_LABEL_REASON
    pod_os = spec.get("os")
    if isinstance(pod_os, dict) and pod_os.get("name") is not None and str(pod_os.get("name")) != node_os:
        return OS_FIELD_REASON
    return None


# --- host ports: nodeports.Fits --------------------------------------------------------------------
HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort) as HostPortInfo sanitizes them
BIND_ALL = "0.0.0.0"


def host_ports(spec: dict[str, Any], *, default_from_host_network: bool = False) -> list[tuple[Path, HostPort]]:
    """GetHostPorts: the host ports of the containers and the sidecars (restartable init containers).

    `default_from_host_network` applies the API's defaulting to a manifest (SetDefaults_Pod,
    defaultHostNetworkPorts): with hostNetwork a container port is also its host port.
    """
    found: list[tuple[Path, HostPort]] = []
    host_network = default_from_host_network and spec.get("hostNetwork") is True
    for key in ("initContainers", "containers"):
        for index, container in _containers(spec, key):
            if key == "initContainers" and container.get("restartPolicy") != "Always":
                continue
            ports = container.get("ports")
            for p_index, port in enumerate(ports if isinstance(ports, list) else []):
                if not isinstance(port, dict):
                    continue
                number = port.get("hostPort") or (port.get("containerPort") if host_network else None)
                if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
                    continue
                address = port.get("hostIP") or BIND_ALL
                protocol = port.get("protocol") or "TCP"
                found.append(((key, index, "ports", p_index), (str(address), str(protocol), number)))
    return found


def port_conflict(
    wanted: list[tuple[Path, HostPort]], in_use: dict[HostPort, str]
) -> tuple[Path, HostPort, str] | None:
    """HostPortInfo.CheckConflict for each wanted port: (path, port, holder) of the first conflict.

    0.0.0.0 conflicts with the same protocol and port on any address; another address conflicts
    with itself and with 0.0.0.0.
    """
    for path, (address, protocol, number) in wanted:
        if address == BIND_ALL:
            holder = next(
                (who for (_, proto, port), who in in_use.items() if proto == protocol and port == number), None
            )
        else:
            holder = in_use.get((BIND_ALL, protocol, number)) or in_use.get((address, protocol, number))
        if holder is not None:
            return path, (address, protocol, number), holder
    return None


def port_text(port: HostPort) -> str:
    address, protocol, number = port
    return f"{protocol} {number}" + (f" on {address}" if address != BIND_ALL else "")


# The rule that explains each kubelet reason, for "(it reports X first: see RULE)".
_REASON_RULES = {
    EVICTED_REASON: "node-pressure",
    OS_LABEL_REASON: "node-os-mismatch",
    OS_FIELD_REASON: "node-os-mismatch",
    "NodeAffinity": "node-selector-mismatch",
    "NodePorts": "host-port-conflict",
    "TaintToleration": "untolerated-taint",
    "UnexpectedAdmissionError": "insufficient-resources",  # a critical Pod the kubelet cannot make room for
}


def reason_rule(reason: str) -> str | None:
    """The rule that explains a kubelet reason (a rejected Pod's status.reason), None for reasons no rule predicts."""
    if reason.startswith(("OutOf", ONE_OF)):
        return "insufficient-resources"
    return _REASON_RULES.get(reason)


def reported_first(reasons: list[str], own: str) -> str:
    """ " (it reports OutOfcpu first: ...)" when an earlier check hides `own` in the Pod's status."""
    if not reasons or own in reason_alternatives(reasons[0]):
        return ""
    if reasons[0].startswith(ONE_OF):
        return f" (it reports {reasons[0]} first, in no fixed order: see {reason_rule(reasons[0])})"
    return f" (it reports {reasons[0]} first: see {reason_rule(reasons[0])})"


# --- the scheduler's filters ----------------------------------------------------------------------
UNSCHEDULABLE_REASON = "node(s) were unschedulable"
PORTS_REASON = "node(s) didn't have free ports for the requested pod ports"
TAINT_REASON = "node(s) had untolerated taint(s)"
AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"


class FilterFailure(NamedTuple):
    """Why the default scheduler's filters reject a node: the first failing plugin's reasons, and
    whether its status is Unschedulable (NodePorts, and NodeResourcesFit unless a request exceeds the
    node's allocatable: preemption may help there) or UnschedulableAndUnresolvable (the others)."""

    reasons: list[str]
    preemption_may_help: bool = False


def scheduler_rejection(
    spec: dict[str, Any],
    requests: dict[str, int],
    node: NodeInfo,
    usage: Callable[[], NodeUsage | None],
    wanted_ports: list[tuple[Path, HostPort]] | None = None,
    ports: Callable[[], dict[HostPort, str] | None] | None = None,
    tolerations: list[Any] | None = None,
) -> FilterFailure | None:
    """Why the default scheduler's filters reject `node` (None when it fits).

    Filters in the default profile's order: NodeUnschedulable, TaintToleration, NodeAffinity,
    NodePorts, NodeResourcesFit (`fitsRequest`: every short resource, `Unresolvable` when the request
    exceeds the allocatable). `usage` and `ports` are called only when the node passes the filters
    before them: summing the Pods of a node is the costly part, and most nodes of a big cluster never
    need it. `wanted_ports` are the Pod's host ports (host_ports with defaulting); `tolerations`
    its admitted_tolerations, given when the caller asks about many nodes.
    """
    if tolerations is None:
        tolerations = admitted_tolerations(spec)
    return node_filter_rejection(spec, node, tolerations) or usage_rejection(requests, node, usage, wanted_ports, ports)


def node_filter_rejection(spec: dict[str, Any], node: NodeInfo, tolerations: list[Any]) -> FilterFailure | None:
    """The filters of scheduler_rejection that read the node alone (NodeUnschedulable, TaintToleration,
    NodeAffinity): of a schedulable node without taints, only the labels node_filter_labels names, and
    its name when that is None."""
    if node.unschedulable and not any(
        tolerates(t, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}) for t in tolerations
    ):
        return FilterFailure([UNSCHEDULABLE_REASON])
    if node.taints and untolerated(node.taints, tolerations, ("NoSchedule", "NoExecute")):
        return FilterFailure([TAINT_REASON])
    if affinity_mismatch(spec, node, detail=False) is not None:
        return FilterFailure([AFFINITY_REASON])
    return None


def node_filter_labels(spec: dict[str, Any]) -> tuple[Any, ...] | None:
    """The label keys affinity_mismatch (without detail) reads of a node for this spec: the nodeSelector's
    keys and the string keys of the required terms' matchExpressions; None when it reads the node's name
    too (a term with matchFields). Nodes with the same values for these keys (absent: None) match alike."""
    keys: list[Any] = []
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        keys.extend(selector)
    for term in required_node_selector_terms(spec) or ():
        if not isinstance(term, dict):
            continue
        if term.get("matchFields"):
            return None
        expressions = term.get("matchExpressions")
        for expression in expressions if isinstance(expressions, list) else ():
            if isinstance(expression, dict) and isinstance(expression.get("key"), str):
                keys.append(expression["key"])
    return tuple(keys)


def usage_rejection(
    requests: dict[str, int],
    node: NodeInfo,
    usage: Callable[[], NodeUsage | None],
    wanted_ports: list[tuple[Path, HostPort]] | None = None,
    ports: Callable[[], dict[HostPort, str] | None] | None = None,
    order: tuple[tuple[str, int], ...] | None = None,
) -> FilterFailure | None:
    """The filters of scheduler_rejection that read the node's Pods (NodePorts, NodeResourcesFit);
    `order`: fit_order(requests), when one Pod is compared with many nodes."""
    if wanted_ports and ports is not None:
        in_use = ports()
        if in_use and port_conflict(wanted_ports, in_use) is not None:
            return FilterFailure([PORTS_REASON], preemption_may_help=True)
    found = shortages(requests, node, usage(), kubelet=False, order=order)
    if not found:
        return None
    return FilterFailure(
        [shortage.scheduler_reason for shortage in found],
        preemption_may_help=not any(shortage.never_fits and shortage.resource != "pods" for shortage in found),
    )


AFFINITY_CONFLICT = "pod affinity terms conflict"  # no node is in every term's matchFields metadata.name list


def absent_nodes_reason(plugins: str = "NodeAffinity") -> str:
    """The status findNodesThatFitPod gives the nodes a PreFilter result left out."""
    return f"node(s) didn't satisfy plugin(s) [{plugins}]"


def no_node_available_message(total: int, counts: dict[str, int], prefilter: str = "") -> str:
    """FitError.Error() without its PostFilter part: reasons sorted as the scheduler sorts them.

    A PreFilter rejection (`prefilter`) replaces the per-node counts.
    """
    if prefilter:
        return f"0/{total} nodes are available: {prefilter}."
    reasons = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"0/{total} nodes are available: {', '.join(reasons)}."


NO_CLAIMS_TO_DEALLOCATE = "no new claims to deallocate"
NO_VICTIMS = "No preemption victims found for incoming pod"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"


def failed_scheduling_message(
    total: int,
    counts: dict[str, int],
    prefilter: str = "",
    *,
    preemption_may_help: int = 0,
    spec: Any = None,
    preemption: str | None = None,
) -> str:
    """The whole FailedScheduling event (and PodScheduled condition) text: FitError.Error() with the
    messages of the default profile's PostFilter plugins, joined by RunPostFilterPlugins.

    - A PreFilter rejection: DynamicResources' PostFilter runs first and cannot read the state its
      own PreFilter never wrote (`getStateData`: "not found"), an error that ends the PostFilter.
    - Otherwise DynamicResources finds no claim to free ("no new claims to deallocate"), then
      DefaultPreemption (`Evaluator.Preempt`) reports: with `preemptionPolicy: Never` that the Pod
      is not eligible (`PodEligibleToPreemptOthers`), else a second FitError over the nodes where
      preemption may help (`preemption_may_help`, the filters' Unschedulable status), whose dry run
      finds no victim (`SelectVictimsOnNode`), and the others ("Preemption is not helpful").
      That assumes no Pod on those nodes has a lower priority than this Pod; `preemption`, the
      message of a dry run (preemption.postfilter_text), replaces that assumption.

    Without any node, schedulePod fails before the plugins run (ErrNoNodesAvailable).
    """
    if not total:  # schedulePod's ErrNoNodesAvailable, before any plugin runs
        return "no nodes available to schedule pods"
    head = no_node_available_message(total, counts, prefilter)
    if prefilter:
        return f"{head} not found"
    if preemption is None:
        preemption = preemption_message(total, preemption_may_help, spec)
    return f"{head} {NO_CLAIMS_TO_DEALLOCATE}, {preemption}"


def preemption_message(total: int, preemption_may_help: int, spec: Any) -> str:
    """DefaultPreemption's PostFilter message when it nominates no node ("preemption: " + ...)."""
    if isinstance(spec, dict) and spec.get("preemptionPolicy") == "Never":
        return "preemption: not eligible due to preemptionPolicy=Never."
    counts = {NO_VICTIMS: preemption_may_help, PREEMPTION_NOT_HELPFUL: total - preemption_may_help}
    return "preemption: " + no_node_available_message(total, {reason: n for reason, n in counts.items() if n})
