"""Priority and preemption, following the Kubernetes code: what a Pod's priority is, which Pods the
kubelet evicts to admit a critical Pod, and which the scheduler deletes to place a Pod of higher priority.

- Priority: the Priority admission plugin (`plugin/pkg/admission/priority/admission.go`, `admitPod`
  on create): `priorityClassName` names a PriorityClass (the built-in `system-node-critical`
  2000001000 and `system-cluster-critical` 2000000000, or one of the cluster's), else the
  `globalDefault` class with the lowest value, else 0. A class that does not exist, a
  `spec.priority` or a `spec.preemptionPolicy` that differs from what the class gives, make the API
  server refuse the Pod (Forbidden). A static Pod never meets that plugin: the kubelet takes its
  `spec.priority` as written (nil without one).
- Critical Pods: `kubetypes.IsCriticalPod` (a static or mirror Pod, or a priority of at least
  SystemCriticalPriority, 2000000000). The kubelet's `predicateAdmitHandler` hands a critical Pod's
  failures to `CriticalPodAdmissionHandler.HandleAdmissionFailure` (`pkg/kubelet/preemption/preemption.go`):
  any other failure than a resource shortage is reported as it is (the shortage is not); with
  shortages only, `getPodsToPreempt` picks Pods to evict (`Preemptable`: not critical, or of lower
  priority; BestEffort first, then Burstable, then Guaranteed, each by `getPodsToPreemptByDistance`),
  or the kubelet rejects the Pod with UnexpectedAdmissionError when all of them are not enough.
- Scheduler: DefaultPreemption's PostFilter (`pkg/scheduler/framework/plugins/defaultpreemption`,
  `pkg/scheduler/framework/preemption`): on the nodes whose filters failed with Unschedulable
  (host ports, resources short but not beyond allocatable), `SelectVictimsOnNode` removes every
  Pod of lower priority, checks that the Pod fits, then gives back the most important ones
  (`MoreImportantPod`: higher priority, then the earlier start) while it still fits; the others
  are the victims. `pickOneNodeForPreemption` chooses among the candidate nodes (lowest
  highest-priority victim, lowest sum of priorities, fewest victims, latest start), the victims are
  deleted and the node is nominated; without a candidate the PostFilter's own FitError completes
  the FailedScheduling text.

Not modelled: PodDisruptionBudgets (the scheduler prefers victims and nodes that violate none; the
state does not hold them), Pods already nominated to a node, inter-Pod affinity and topology spread
constraints of the victims, and scheduler extenders.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any, NamedTuple

from .cluster.records import NodeInfo, NodeUsage, PodInfo, PriorityClassInfo, RunningPod, plain_json
from .model import Path
from .scheduling import (
    HostPort,
    Shortage,
    add_into,
    evictable_requests,
    host_ports,
    kubelet_reasons,
    pod_requests,
    qos_class,
    reason_rule,
    scheduler_rejection,
    shortages,
)
from .sources import DamagedState

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000  # scheduling.SystemCriticalPriority
PREEMPT_LOWER = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"
# The classes the API server creates itself (pkg/apis/scheduling SystemPriorityClasses): in every cluster
BUILT_IN_CLASSES: dict[str, PriorityClassInfo] = {
    "system-node-critical": PriorityClassInfo(2_000_001_000),
    "system-cluster-critical": PriorityClassInfo(SYSTEM_CRITICAL_PRIORITY),
}
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SOURCE_ANNOTATION = "kubernetes.io/config.source"
QOS_CLASSES = ("BestEffort", "Burstable", "Guaranteed")
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"
PREEMPTED_REASON = "Preempting"  # events.PreemptContainer: the evicted Pods' status.reason
PREEMPTED_MESSAGE = "Preempted in order to admit critical pod"


# --- priority: the Priority admission plugin -------------------------------------------------------
class Priority(NamedTuple):
    """A Pod's priority as the API server stores it, or why the Priority admission plugin refuses it."""

    value: int | None  # None: not known (a class the cluster state does not list)
    class_name: str  # "" without one (and no globalDefault class)
    policy: str  # PreemptLowerPriority or Never: the Pod's (as written when the plugin refuses it)
    refusal: str = ""  # the plugin's Forbidden message ("" when it admits the Pod)
    refused_at: Path = ()  # the field of the Pod spec the refusal is about
    class_policy: str = PREEMPT_LOWER  # the policy the class gives

    @property
    def text(self) -> str:
        """How messages name it: "priority 1000 (PriorityClass high)"."""
        shown = "unknown" if self.value is None else str(self.value)
        return f"priority {shown}" + (f" (PriorityClass {self.class_name})" if self.class_name else "")


def known_classes(classes: Mapping[str, PriorityClassInfo] | None) -> dict[str, PriorityClassInfo]:
    """The cluster's PriorityClasses with the built-in ones (which every API server creates)."""
    return {**BUILT_IN_CLASSES, **(classes or {})}


def default_class(classes: Mapping[str, PriorityClassInfo] | None) -> tuple[str, PriorityClassInfo] | None:
    """getDefaultPriorityClass: the globalDefault class, the lowest value when a race made several."""
    found = [(info.value, name, info) for name, info in (classes or {}).items() if info.global_default]
    if not found:
        return None
    _, name, info = min(found, key=lambda entry: entry[0])
    return name, info


def resolve_priority(spec: dict[str, Any], classes: Mapping[str, PriorityClassInfo] | None) -> Priority:
    """What the Priority admission plugin makes of a new Pod (`admitPod`, create).

    `classes` None: the state does not list PriorityClasses; the built-in ones are known anyway, a
    Pod without a class gets 0 (no globalDefault assumed) and any other class is unknown.
    """
    name = spec.get("priorityClassName")
    name = name if isinstance(name, str) else ""
    if not name:
        found = default_class(classes)
        name, info = found if found is not None else ("", PriorityClassInfo(0))
    else:
        info_or_none = known_classes(classes).get(name)
        if info_or_none is None:
            if classes is None:
                return Priority(None, name, _written_policy(spec))
            return Priority(
                None,
                name,
                _written_policy(spec),
                f"no PriorityClass with name {name} was found",
                ("priorityClassName",),
            )
        info = info_or_none
    written = spec.get("priority")
    policy = spec.get("preemptionPolicy")
    own = policy if isinstance(policy, str) else info.preemption_policy
    if isinstance(written, int) and not isinstance(written, bool) and written != info.value:
        refusal = (
            f"the integer value of priority ({written}) must not be provided in pod spec; priority admission "
            f"controller computed {info.value} from the given PriorityClass name"
        )
        return Priority(info.value, name, own, refusal, ("priority",), info.preemption_policy)
    if isinstance(policy, str) and policy != info.preemption_policy:
        refusal = (
            f"the string value of PreemptionPolicy ({policy}) must not be provided in pod spec; priority admission "
            f"controller computed {info.preemption_policy} from the given PriorityClass name"
        )
        return Priority(info.value, name, own, refusal, ("preemptionPolicy",), info.preemption_policy)
    return Priority(info.value, name, own, class_policy=info.preemption_policy)


def _written_policy(spec: dict[str, Any]) -> str:
    policy = spec.get("preemptionPolicy")
    return policy if policy in (PREEMPT_LOWER, PREEMPT_NEVER) else PREEMPT_LOWER


def stored_priority(spec: dict[str, Any], classes: Mapping[str, PriorityClassInfo] | None) -> int:
    """corev1helpers.PodPriority of a Pod the API stored: spec.priority, which the plugin always sets
    (resolved here for a hand-written state without it; 0 when its class is not known)."""
    written = spec.get("priority")
    if isinstance(written, int) and not isinstance(written, bool):
        return written
    return resolve_priority(spec, classes).value or 0


# --- the Pods already running ---------------------------------------------------------------------
def _annotations(pod: PodInfo) -> dict[str, Any]:
    loaded = pod.loaded_annotations
    if loaded is None or isinstance(loaded, dict):
        return loaded or {}
    try:  # a JSON dump's raw annotations
        decoded = plain_json(loaded)
    except DamagedState as exc:
        raise DamagedState(f"the annotations of Pod {pod.namespace}/{pod.name} are {exc}") from None
    return decoded if isinstance(decoded, dict) else {}


def is_static_or_mirror(annotations: Mapping[str, Any]) -> bool:
    """kubetypes.IsStaticPod (a config.source other than the API) or IsMirrorPod (the config.mirror key)."""
    source = annotations.get(SOURCE_ANNOTATION)
    return MIRROR_ANNOTATION in annotations or (source is not None and source != "api")


def running_priority(pod: PodInfo, classes: Mapping[str, PriorityClassInfo] | None) -> int:
    """stored_priority of a Pod of the state, read from its spec as loaded (a dump's structs stay structs)."""
    loaded = pod.loaded_spec
    if loaded.__class__ is dict:
        return stored_priority(loaded, classes)
    named = getattr(loaded, "priorityClassName", None)
    fields = {
        "priority": getattr(loaded, "priority", None),
        "priorityClassName": named if named.__class__ is str else "",
    }
    return stored_priority(fields, classes)


def running_pod(pod: PodInfo, classes: Mapping[str, PriorityClassInfo] | None) -> RunningPod:
    """A non-terminated Pod of the state as the kubelet's and the scheduler's preemption weigh it."""
    priority = running_priority(pod, classes)
    spec = pod.spec
    requests = pod_requests(spec, lenient=True)
    evictable = evictable_requests(spec)
    qos = pod.qos_class if pod.qos_class in QOS_CLASSES else qos_class(spec)
    return RunningPod(
        key=f"{pod.namespace}/{pod.name}",
        priority=priority,
        critical=priority >= SYSTEM_CRITICAL_PRIORITY or is_static_or_mirror(_annotations(pod)),
        qos=qos,
        start_time=pod.start_time if isinstance(pod.start_time, str) else None,
        requests=requests,
        evictable=None if evictable == requests else evictable,
        ports=tuple(port for _, port in host_ports(spec)),
    )


# --- the kubelet: critical Pod admission -----------------------------------------------------------
class Preemptor(NamedTuple):
    """The Pod the kubelet admits, as `Preemptable` sees it."""

    key: str  # "namespace/name"
    critical: bool
    priority: int | None  # None: a static Pod without spec.priority


def preemptor_for(spec: dict[str, Any], key: str, priority: Priority, *, static: bool) -> Preemptor:
    """The Pod under test: a static Pod is critical and keeps spec.priority as written (the kubelet
    resolves no PriorityClass); an API Pod has what the Priority admission plugin resolved."""
    if static:
        written = spec.get("priority")
        value = written if isinstance(written, int) and not isinstance(written, bool) else None
        return Preemptor(key, True, value)
    value = priority.value
    return Preemptor(key, value is not None and value >= SYSTEM_CRITICAL_PRIORITY, value)


def preemptable(preemptor: Preemptor, pod: RunningPod) -> bool:
    """kubetypes.Preemptable: a critical Pod may preempt one that is not; else a higher priority."""
    if preemptor.critical and not pod.critical:
        return True
    return preemptor.priority is not None and preemptor.priority > pod.priority


class _Requirement(NamedTuple):
    resource: str
    quantity: int


def _subtract(requirements: list[_Requirement], pods: Iterable[RunningPod]) -> list[_Requirement]:
    """admissionRequirementList.subtract: what is still missing once these Pods are gone."""
    pods = list(pods)
    left = []
    for requirement in requirements:
        quantity = requirement.quantity
        for pod in pods:
            quantity -= pod.freed(requirement.resource)
            if quantity <= 0:
                break
        if quantity > 0:
            left.append(_Requirement(requirement.resource, quantity))
    return left


def _distance(requirements: list[_Requirement], pod: RunningPod) -> float:
    """admissionRequirementList.distance: how far evicting `pod` leaves the requirements."""
    found = 0.0
    for requirement in requirements:
        remaining = float(requirement.quantity - pod.freed(requirement.resource))
        if remaining > 0:
            share = remaining / float(requirement.quantity)
            found += share * share  # math.Pow(x, 2): exactly x*x
    return found


def _by_distance(pods: list[RunningPod], requirements: list[_Requirement]) -> tuple[list[RunningPod], bool]:
    """getPodsToPreemptByDistance: the closest Pod first until the requirements are met; (Pods, tie)
    where tie says a Pod of the same requests could have been taken instead (the kubelet's Pod order,
    from its pod manager's map, decides). Of two Pods as close, the one listed later replaces the
    earlier unless it asks for more memory, or as much memory and more cpu (smallerResourceRequest);
    the chosen Pod's place is taken by the last one, as Go's slice removal does."""
    pods = list(pods)
    sizes = {id(pod): (pod.freed("memory"), pod.freed("cpu")) for pod in pods}
    freed = {r.resource: {id(pod): pod.freed(r.resource) for pod in pods} for r in requirements}
    evict: list[RunningPod] = []
    tie = False
    while requirements:
        if not pods:
            raise _NoSet(requirements)
        best_distance = float(len(requirements) + 1)
        best = 0
        distances = [0.0] * len(pods)
        for requirement in requirements:  # admissionRequirementList.distance of every Pod, a requirement at a time
            quantity, of = requirement.quantity, freed[requirement.resource]
            for index, pod in enumerate(pods):
                remaining = float(quantity - of[id(pod)])
                if remaining > 0:
                    share = remaining / float(quantity)
                    distances[index] += share * share
        for index, distance in enumerate(distances):
            if distance < best_distance or (
                distance == best_distance and sizes[id(pods[index])] <= sizes[id(pods[best])]
            ):
                best_distance, best = distance, index
        chosen = pods[best]
        size = sizes[id(chosen)]
        tie = tie or any(
            index != best and distance == best_distance and sizes[id(pods[index])] == size
            for index, distance in enumerate(distances)
        )
        requirements = _subtract(requirements, [chosen])
        evict.append(chosen)
        pods[best] = pods[-1]
        pods.pop()
    return evict, tie


class _NoSet(Exception):
    def __init__(self, requirements: list[_Requirement]) -> None:
        super().__init__()
        self.requirements = requirements


def _listed(requirements: list[_Requirement]) -> str:
    """admissionRequirementList.toString."""
    return "[" + "".join(f"(res: {r.resource}, q: {r.quantity}), " for r in requirements) + "]"


class Eviction(NamedTuple):
    """HandleAdmissionFailure's answer to a critical Pod's resource shortages."""

    evicts: tuple[RunningPod, ...] = ()  # BestEffort ones first, then Burstable, then Guaranteed
    message: str = ""  # the UnexpectedAdmissionError message when no set of Pods is enough
    exact: bool = True  # the message's order is fixed (not two extended resources in Go map order)
    tie: bool = False  # another Pod of the same requests could be evicted instead of one named
    unmet: tuple[tuple[str, int], ...] = ()  # what is still missing with every evictable Pod gone
    candidates: int = 0  # how many Pods it may evict (Preemptable)
    computed: bool = True  # False: more candidates than MAX_EVICTION_CANDIDATES, which Pods go is not computed
    pods_known: bool = True  # False (and not computed): the node's Pods are counted but not held one by one


# The kubelet admits at most its maxPods (110 by default); a state with more Pods on one node than this
# gets the verdict (whether evicting is enough) but not the Pods evicted, whose choice costs
# candidates x evictions steps.
MAX_EVICTION_CANDIDATES = 1000


def pods_to_evict(preemptor: Preemptor, found: list[Shortage], running: Sequence[RunningPod]) -> Eviction:
    """getPodsToPreempt for these shortages (InsufficientResourceError.GetInsufficientAmount each)."""
    requirements = [_Requirement(s.resource, s.requested - (s.capacity - s.used)) for s in found]
    by_qos: dict[str, list[RunningPod]] = {qos: [] for qos in QOS_CLASSES}
    for pod in running:
        if preemptable(preemptor, pod):
            by_qos[pod.qos].append(pod)
    best_effort, burstable, guaranteed = (by_qos[qos] for qos in QOS_CLASSES)
    unmet = _subtract(requirements, [*best_effort, *burstable, *guaranteed])
    if unmet:
        message = (
            "Unexpected error while attempting to recover from admission failure: preemption: error finding a set "
            f"of pods to preempt: no set of running pods found to reclaim resources: {_listed(unmet)}"
        )
        scalars = [r for r in unmet if r.resource not in ("pods", "cpu", "memory", "ephemeral-storage")]
        return Eviction(
            message=message,
            exact=len(scalars) < 2,
            unmet=tuple((r.resource, r.quantity) for r in unmet),
            candidates=len(best_effort) + len(burstable) + len(guaranteed),
        )
    candidates = len(best_effort) + len(burstable) + len(guaranteed)
    if candidates > MAX_EVICTION_CANDIDATES:  # the choice costs candidates x evictions: beyond any real node
        return Eviction(candidates=candidates, computed=False)
    try:
        guaranteed_out, tie_g = _by_distance(guaranteed, _subtract(requirements, [*best_effort, *burstable]))
        burstable_out, tie_b = _by_distance(burstable, _subtract(requirements, [*best_effort, *guaranteed_out]))
        best_effort_out, tie_e = _by_distance(best_effort, _subtract(requirements, [*burstable_out, *guaranteed_out]))
    except _NoSet as exc:  # cannot happen once the whole set is enough; kept as the kubelet words it
        message = (
            "Unexpected error while attempting to recover from admission failure: preemption: error finding a set "
            f"of pods to preempt: no set of running pods found to reclaim resources: {_listed(exc.requirements)}"
        )
        return Eviction(message=message)
    return Eviction(tuple([*best_effort_out, *burstable_out, *guaranteed_out]), tie=tie_g or tie_b or tie_e)


class KubeletAdmission(NamedTuple):
    """What the kubelet does with one Pod (or one replica of a pinned template)."""

    reasons: list[str]  # what the Pod would show, first first ([] when admitted)
    shortages: list[Shortage]  # what it lacked before any eviction
    eviction: Eviction | None = None  # the critical Pod admission's answer to the shortages

    @property
    def admitted(self) -> bool:
        return not self.reasons


def is_resource_reason(reason: str) -> bool:
    return reason_rule(reason) == "insufficient-resources" and reason != UNEXPECTED_ADMISSION_ERROR


def critical_admissions(
    spec: dict[str, Any],
    requests: dict[str, int],
    node: NodeInfo,
    usage: NodeUsage | None,
    running: list[RunningPod] | None,
    ports: dict[HostPort, str] | None,
    preemptor: Preemptor,
    replicas: int,
    *,
    labels: dict[str, Any],
    static: bool,
    overhead: dict[str, Any] | None,
    until_rejected: bool = False,
) -> list[KubeletAdmission]:
    """What the kubelet does with each of `replicas` copies of a critical Pod reaching it one after the
    other (`predicateAdmitHandler.Admit`, then `HandleAdmissionFailure`): an admitted copy counts for
    the next, a Pod it evicts is gone for the next (killPodFunc waits for it to stop), a rejected copy
    changes nothing.

    `running` None: the node's Pods are not known one by one. With `usage` None too a shortage means
    the request exceeds the allocatable, which no eviction can make up for; with `usage` known (the
    webhook's watched state keeps only the sums) so does a request beyond the allocatable, and any other
    shortage is settled by Pods not known: admitted if they free enough, not computed.
    `until_rejected`: stop after the first rejection.
    """
    usage = NodeUsage(usage.pods, dict(usage.requested)) if usage else None
    running = list(running) if running is not None else None
    ports = dict(ports) if ports is not None else None
    found: list[KubeletAdmission] = []
    own_ports = [port for _, port in host_ports(spec, default_from_host_network=True)]
    others: list[str] | None = None  # the failures other than resources: they change only with the ports in use
    for replica in range(replicas):
        if others is None:
            reasons = kubelet_reasons(
                spec, node, usage, labels=labels, static=static, ports_in_use=ports, overhead=overhead
            )
            others = [reason for reason in reasons if not is_resource_reason(reason)]
        short = shortages(requests, node, usage, kubelet=True)
        if others:  # the OS checks come first; HandleAdmissionFailure returns the other failures as they are
            found.append(KubeletAdmission(others, short))
            if until_rejected:
                break
            continue
        eviction = None
        if short:
            if running is None and usage is not None and all(s.requested <= s.capacity for s in short):
                # the Pods on the node are counted, not known: whether evicting them is enough is not known
                found.append(KubeletAdmission([], short, Eviction(computed=False, pods_known=False)))
                break
            # without the node's Pods a shortage means a request beyond the allocatable: no eviction makes
            # up for it, and the amounts the kubelet would print are not known
            eviction = pods_to_evict(preemptor, short, running) if running is not None else Eviction(exact=False)
            if running is None or eviction.message:
                found.append(KubeletAdmission([UNEXPECTED_ADMISSION_ERROR], short, eviction))
                if until_rejected:
                    break
                continue
            if not eviction.computed:  # admitted, but what is left for the next replica is not known
                found.append(KubeletAdmission([], short, eviction))
                break
            gone = {pod.key for pod in eviction.evicts}
            running = [pod for pod in running if pod.key not in gone]
            if usage is not None:
                usage.pods -= len(gone)
                for pod in eviction.evicts:
                    add_into(usage.requested, {resource: -amount for resource, amount in pod.requests.items()})
            if ports is not None and any(pod.ports for pod in eviction.evicts):
                ports = {port: holder for port, holder in ports.items() if holder not in gone}
                others = None
        found.append(KubeletAdmission([], short, eviction))
        key = preemptor.key if replicas == 1 else f"{preemptor.key}-{replica}"
        if usage is not None:
            usage.pods += 1
            add_into(usage.requested, requests)
        if ports is not None and own_ports:
            ports.update((port, key) for port in own_ports)
            others = None
        if running is not None:
            running.append(
                RunningPod(key, preemptor.priority or 0, preemptor.critical, "Burstable", None, dict(requests))
            )
    return found


# --- the scheduler: DefaultPreemption ------------------------------------------------------------
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"


class Candidate(NamedTuple):
    """A node where deleting `victims` (most important first) makes room for the Pod."""

    node: str
    victims: tuple[RunningPod, ...]


class SchedulerPreemption(NamedTuple):
    """DefaultPreemption's outcome: the nodes it may nominate (several when the scheduler's choice among
    them is random), or the reasons per node of its own FitError."""

    nominated: tuple[Candidate, ...] = ()
    statuses: Mapping[str, list[str]] = MappingProxyType({})  # node -> reasons, for the nodes it tried
    not_eligible: bool = False  # preemptionPolicy: Never
    unknown: int = 0  # candidate nodes whose Pods are not in the state (not dry-run)


def _start(pod: RunningPod) -> datetime | None:
    if pod.start_time is None:
        return None
    try:
        return datetime.fromisoformat(pod.start_time)
    except ValueError:
        return None


def more_important(first: RunningPod, second: RunningPod) -> bool:
    """util.MoreImportantPod: the higher priority, then GetPodStartTime's earlier start. A Pod without
    status.startTime counts as started now, read anew at each call: later than any start time, and
    `first` before `second` when neither has one."""
    if first.priority != second.priority:
        return first.priority > second.priority
    one, other = _start(first), _start(second)
    if one is None:
        return other is None
    return other is None or one < other


def importance_order(pods: Sequence[RunningPod]) -> list[RunningPod]:
    """sort.Slice(potentialVictims, MoreImportantPod) as Go's insertion sort leaves up to 12 Pods
    (MoreImportantPod is not a strict order for Pods without a start time, so the steps matter): by
    priority, highest first; of one priority the started Pods by start time (equal times keep their
    order), then the Pods without a start time in the reverse of their order, as each one moves before
    the ones it meets. Beyond 12 Pods Go's pdqsort may order equally important Pods otherwise.
    (tests/test_preemption.py compares this with the insertion sort step by step.)"""

    def key(indexed: tuple[int, RunningPod]) -> tuple[int, int, float, int]:
        index, pod = indexed
        start = _start(pod)
        if start is None:
            return (-pod.priority, 1, 0.0, -index)
        return (-pod.priority, 0, start.timestamp(), index)

    return [pod for _, pod in sorted(enumerate(pods), key=key)]


def select_victims(
    spec: dict[str, Any],
    requests: dict[str, int],
    node: NodeInfo,
    running: list[RunningPod],
    priority: int,
    wanted_ports: list[tuple[Path, HostPort]],
) -> tuple[RunningPod, ...] | list[str]:
    """SelectVictimsOnNode without PodDisruptionBudgets: the victims, or the reasons the node fails with.

    The Pods are taken in the scheduler cache's order (as its informer listed them: by namespace and
    name), every Pod of lower priority removed, the filters run again, then the Pods given back most
    important first while the Pod still fits.
    """
    pods = sorted(running, key=lambda pod: tuple(pod.key.split("/", 1)))
    eligible = [pod for pod in pods if pod.priority < priority]
    if not eligible:
        return [NO_VICTIMS]
    view = _NodeView(pods)
    for pod in eligible:
        view.remove(pod)
    failure = view.filters(spec, requests, node, wanted_ports)
    if failure is not None:
        return failure
    victims: list[RunningPod] = []
    for pod in importance_order(eligible):
        view.add(pod)
        if view.filters(spec, requests, node, wanted_ports) is not None:
            view.remove(pod)
            victims.append(pod)
    return tuple(victims)


class _NodeView:
    """The NodeInfo copy SelectVictimsOnNode works on: Pods removed and added back (RemovePod, AddPodInfo).

    Its host ports are a set, not a count (HostPortInfo.Add/Remove): removing one of two Pods that hold
    the same port frees the port for the filters.
    """

    def __init__(self, pods: list[RunningPod]) -> None:
        self.count = len(pods)
        self.requested: dict[str, int] = {}
        self.ports: dict[HostPort, str] = {}
        for pod in pods:
            add_into(self.requested, pod.requests)
            self.ports.update((port, pod.key) for port in pod.ports)

    def remove(self, pod: RunningPod) -> None:
        self.count -= 1
        add_into(self.requested, {resource: -amount for resource, amount in pod.requests.items()})
        for port in pod.ports:
            self.ports.pop(port, None)

    def add(self, pod: RunningPod) -> None:
        self.count += 1
        add_into(self.requested, pod.requests)
        self.ports.update((port, pod.key) for port in pod.ports)

    def filters(
        self, spec: dict[str, Any], requests: dict[str, int], node: NodeInfo, wanted_ports: list[tuple[Path, HostPort]]
    ) -> list[str] | None:
        """RunFilterPluginsWithNominatedPods on this node: the first failing filter's reasons."""
        usage = NodeUsage(self.count, self.requested)
        failure = scheduler_rejection(spec, requests, node, lambda: usage, wanted_ports, lambda: self.ports)
        return None if failure is None else failure.reasons


def _earliest_start(victims: tuple[RunningPod, ...]) -> float:
    """GetEarliestPodStartTime as a score: the earliest start among the highest-priority victims
    (infinity for "now": a victim without status.startTime)."""
    top = max(pod.priority for pod in victims)
    starts = [_start(pod) for pod in victims if pod.priority == top]
    known = [start.timestamp() for start in starts if start is not None]
    return min(known) if known else math.inf


def pick_nodes(candidates: list[Candidate]) -> tuple[Candidate, ...]:
    """pickOneNodeForPreemption without PodDisruptionBudgets: the candidates that tie on every score
    (lowest highest-priority victim, lowest sum of priorities, fewest victims, latest earliest start);
    the scheduler takes one of them, in the order of a Go map."""
    scores: list[Callable[[Candidate], float]] = [
        lambda c: -c.victims[0].priority,
        lambda c: -sum(pod.priority + 2**31 for pod in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_start(c.victims),
    ]
    left = list(candidates)
    for score in scores:
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
        if len(left) == 1:
            break
    return tuple(sorted(left, key=lambda c: c.node))


def scheduler_preemption(
    spec: dict[str, Any],
    requests: dict[str, int],
    priority: Priority,
    nodes: Mapping[str, NodeInfo],
    helpful: Iterable[str],
    running: Callable[[str], list[RunningPod] | None],
    lowest: Callable[[str], int | None],
) -> SchedulerPreemption:
    """Evaluator.Preempt for a Pod no node fits: `helpful` are the nodes whose filters failed with
    Unschedulable (findCandidates' potential nodes), `running` the Pods of a node (None: not known),
    `lowest` the lowest priority among them (None: no Pod or not known), which settles most nodes
    without weighing their Pods."""
    if priority.policy == PREEMPT_NEVER:
        return SchedulerPreemption(not_eligible=True)
    wanted_ports = host_ports(spec, default_from_host_network=True)
    candidates: list[Candidate] = []
    statuses: dict[str, list[str]] = {}
    unknown = 0
    for name in helpful:
        least = lowest(name)
        if least is not None and priority.value is not None and least >= priority.value:
            statuses[name] = [NO_VICTIMS]  # SelectVictimsOnNode's first answer: no Pod of a lower priority
            continue
        pods = running(name)
        if pods is None or priority.value is None:
            unknown += 1
            statuses[name] = [NO_VICTIMS]  # as the text assumed before any dry run: see the rule's note
            continue
        found = select_victims(spec, requests, nodes[name], pods, priority.value, wanted_ports)
        if isinstance(found, tuple) and found:
            candidates.append(Candidate(name, found))
        else:
            statuses[name] = list(found) if isinstance(found, list) else [NO_VICTIMS]
    if candidates:
        return SchedulerPreemption(nominated=pick_nodes(candidates), unknown=unknown)
    return SchedulerPreemption(statuses=statuses, unknown=unknown)


def postfilter_text(outcome: SchedulerPreemption, total: int) -> str:
    """DefaultPreemption's message when it nominates no node: "preemption: " + its FitError."""
    if outcome.not_eligible:
        return "preemption: not eligible due to preemptionPolicy=Never."
    counts: dict[str, int] = {}
    for reasons in outcome.statuses.values():
        for reason in reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = total - len(outcome.statuses)
    if absent:
        counts[NOT_HELPFUL] = counts.get(NOT_HELPFUL, 0) + absent
    listed = ", ".join(sorted(f"{count} {reason}" for reason, count in counts.items()))
    return f"preemption: 0/{total} nodes are available: {listed}."


def pod_names(pods: Iterable[RunningPod]) -> str:
    return ", ".join(pod.key for pod in pods)
