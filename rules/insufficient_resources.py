"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` to a node that cannot fit it:
its requests exceed the node's allocatable cpu, memory, ephemeral-storage, Pod count or an
extended resource, minus what the non-terminated Pods already there request. It predicts the
kubelet's rejection with its exact reason (`OutOfcpu`, `OutOfmemory`, `OutOfephemeral-storage`,
`OutOfpods`, `OutOf<resource>`) and message, and says whether the Pod can never fit that node or
does not fit now. For a template, all replicas land on the node: they are counted.

Requests are computed as the kubelet does (`PodRequests`): containers summed, sidecars
(restartable init containers) added, the largest init container counted, `spec.overhead` added,
Pod-level `spec.resources.requests` taking precedence; a limit without a request counts as the
request (API defaulting, `SetDefaults_Pod`). Pod-level limits default the pod-level requests as
`defaultPodRequests` does: to the containers' aggregated requests where containers request the
resource, else to the limit. When the cluster state has RuntimeClasses, the overhead of the
Pod's `runtimeClassName` is added (the RuntimeClass admission plugin sets `spec.overhead`) and
the message says which class was counted.

The kubelet checks pods, cpu, memory and ephemeral-storage in that order, then extended
resources and hugepages in Go map order (`noderesources.Fits`): when several of those are short,
the message says the Pod is rejected with one of them, not which one. When an earlier check
decides what the Pod shows (node pressure, the OS; for a later replica, a host port an earlier
one took), the message says so and quotes no kubelet text.

Static Pods are checked against the node named with `--static-pod-node NAME` (the node whose
kubelet reads the folder). A static Pod is critical: the kubelet's critical Pod admission handler
evicts other Pods to make room when that is enough (`HandleAdmissionFailure`), so only a static
Pod larger than the node's allocatable is certain to be refused.

Quantities are read exactly as apimachinery does, and added up exactly (`Quantity.Add`): a Pod's
total is rounded up once (cpu to millicores, the rest to whole units), as `PodRequests` and
`MilliValue()`/`Value()` do. A request that is not a valid quantity is left to the API server,
which rejects the manifest; this rule then skips the object.

A pinned workload that already runs on the node is not counted against itself: the kubelet meets
its new Pods only as its controller makes them (an unchanged template makes none; a Deployment's
default maxSurge starts a new Pod beside the old ones, `ResolveFenceposts`; a StatefulSet recreates
each Pod in its old one's place, `updateStatefulSet`; a DaemonSet replaces its Pod in place unless
maxSurge is set). The message then says what the rollout does and which strategy lets it complete
(docs/cluster-state.md, "A workload that already runs").

## Why is this bad?
With `nodeName` the scheduler never checks resources, but the kubelet does on admission. The Pod
goes straight to phase Failed with the reason in kubectl's STATUS column (`OutOfcpu`) and
`Pod was rejected: Node didn't have enough resource: cpu, requested: 100000, used: 950,
capacity: 4000`. It is never retried or moved to another node. A controller keeps creating
replacements that are rejected the same way, and failed Pods pile up.

## How to fix
Lower the request, pick a node with room (`kubectl describe node` shows allocatable and
allocated resources), or drop `nodeName` and let the scheduler place the Pod.
"""

from collections.abc import Iterator

from nodename_lint.model import Manifest
from nodename_lint.podspec import spec_path
from nodename_lint.rule import Context, Example, Rule, Violation

_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110", ephemeral-storage: 61255492Ki}
      - apiVersion: v1
        kind: Pod
        metadata:
          name: web-5d8f7c9b6d-2lq8x
          namespace: default
        spec:
          nodeName: kind-worker
          containers:
            - name: nginx
              image: nginx:1.27.3-alpine
              resources:
                requests: {cpu: 950m, memory: 512Mi}
        status:
          phase: Running
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: bigcpu
    spec:
      nodeName: kind-worker
      containers:
        - name: stress
          image: busybox:1.37
          resources:
            requests:
              cpu: "{cpu}"
"""

RULE = Rule(
    id="insufficient-resources",
    severity="error",
    summary="The pinned node cannot fit the Pod's requests: the kubelet rejects it with OutOfcpu, OutOfmemory, ...",
    doc=__doc__,
    needs=frozenset({"nodes"}),
    examples=(
        Example("100 cpu on a 4-cpu node", _POD.replace("{cpu}", "100"), fails=True, cluster=_CLUSTER),
        Example("a request that fits", _POD.replace("{cpu}", "500m"), fails=False, cluster=_CLUSTER),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    from nodename_lint.cluster.records import NodeUsage
    from nodename_lint.cluster.targets import (
        admission_reasons,
        admission_target,
        pods_noun,
        rejection_fate,
        replica_count,
        runtime_overhead,
    )
    from nodename_lint.quantity import describe
    from nodename_lint.rollout import workload_rollout
    from nodename_lint.scheduling import (
        NATIVE_ORDER,
        RequestError,
        add_into,
        pod_requests,
        reported_first,
        request_path,
        shortages,
    )

    target = admission_target(obj, context)
    if target is None:
        return
    name, node, cluster = target
    spec = obj.pod_spec or {}
    overhead, counted = runtime_overhead(obj, cluster)
    try:
        requests = pod_requests(spec, overhead=overhead)
    except RequestError:
        return
    rollout = workload_rollout(obj, cluster)  # the workload's own running Pods: what the apply does with them
    if rollout is not None:
        if not rollout.blocks:
            return
        cluster = rollout.view
    usage = cluster.usage(name)
    replicas = rollout.to_place if rollout else replica_count(obj)
    noun = rollout.noun(replicas) if rollout else pods_noun(obj)
    current = NodeUsage(usage.pods, dict(usage.requested)) if usage else NodeUsage(0, {})
    for admitted in range(min(replicas, 100_000)):  # noqa: B007  (read after the loop: how many fit)
        found = shortages(requests, node, current, kubelet=True)
        if found:
            break
        current.pods += 1
        add_into(current.requested, requests)
    else:
        return
    shortage = found[0]
    resource = shortage.resource
    reason = shortage.kubelet_reason
    # pressure or the OS may come first; for a later replica, a host port its siblings took
    first = reported_first(admission_reasons(obj, node, cluster, replicas_before=admitted), reason)
    exact = resource in ("pods", *NATIVE_ORDER) or len(found) == 1
    if not exact:  # scalar resources: Go map order
        reason = f"one of {', '.join(s.kubelet_reason for s in found)} (the kubelet checks these in no fixed order)"
    reason += first
    if obj.is_static_pod:
        if not shortage.never_fits:
            return  # the critical Pod admission handler evicts other Pods to make room
        head = (
            f"static Pod {obj.shown_name} would be rejected by the kubelet on {name} (--static-pod-node) with {reason}"
        )
    elif replicas == 1:
        head = f"{noun} would be rejected by the kubelet on {name} with {reason}"
    elif admitted == 0:
        head = f"none of {noun} fits on {name}: each would be rejected by the kubelet with {reason}"
    else:
        head = (
            f"only {admitted} of {noun} fit on {name}: replica {admitted + 1} would be rejected by the "
            f"kubelet with {reason}"
        )
    others = "the Pods already there" + (f" and the first {admitted} replicas" if admitted else "")
    if resource == "pods":
        detail = f"the node already runs {shortage.used} of the {shortage.capacity} Pods it allows"
        fix = "pick another node, or drop nodeName and let the scheduler choose"
    elif shortage.never_fits:
        detail = (
            f"it requests {describe(resource, shortage.requested)} and the node has "
            f"{describe(resource, shortage.capacity)} allocatable, so it can never fit there"
        )
        fix = (
            f"lower the {resource} request below {describe(resource, shortage.capacity)} or pin to a node with "
            f"more allocatable {resource}"
        )
    else:
        free = shortage.capacity - shortage.used
        if replicas > 1:  # what each replica may request for all of them to fit
            free = (shortage.capacity - (usage.requested.get(resource, 0) if usage else 0)) // replicas
        detail = (
            f"it requests {describe(resource, shortage.requested)} but only "
            f"{describe(resource, shortage.capacity - shortage.used)} of {describe(resource, shortage.capacity)} "
            f"allocatable is free now ({describe(resource, shortage.used)} "
            f"requested by {others}), so it does not fit now"
        )
        fix = f"lower the {resource} request to at most {describe(resource, max(free, 0))} or pick another node"
    if replicas > 1:
        fix += ", or run fewer replicas, or use a nodeSelector instead of nodeName so the scheduler spreads them"
    if usage is None:
        detail += (
            f" (the Pods already on {name} are not in the cluster state {cluster.source}: only allocatable was "
            "compared)"
        )
    detail += counted
    fate = rejection_fate(obj)
    if obj.is_static_pod:
        fate = (
            "even evicting every other Pod cannot make room, so the kubelet never runs it and its mirror Pod "
            "shows Failed"
        )
    path = spec_path(obj, "nodeName") if resource == "pods" else spec_path(obj, *request_path(spec, resource))
    # without the node's Pods the kubelet's "used" is unknown, so its message cannot be quoted; nor can
    # it when another check decides what the Pod shows
    quoted = usage is not None and exact and not first
    quote = f' (kubelet: "Pod was rejected: {shortage.kubelet_message}")' if quoted else ""
    message = f"{head}: {detail}; {fate}{quote}"
    yield Violation(path, rollout.explain(message) if rollout else message, fix=rollout.fix(fix) if rollout else fix)
