"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` (or a static Pod whose node is
named with `--static-pod-node`) that asks for a host port a running Pod on that node already
uses, or whose replicas would all need the same host port on the one node they are pinned to.

Ports are compared as `nodeports.Fits` does (`HostPortInfo.CheckConflict` in the scheduler
framework): by protocol (TCP when unset) and port, where a hostIP of `0.0.0.0` (or none)
conflicts with the same protocol and port on any address. The ports counted are those of the
containers and sidecars (`GetHostPorts`); with `hostNetwork: true` every container port is
also a host port (`defaultHostNetworkPorts` in the API's defaulting).

The same check runs in `no-node-fits` for Pods the scheduler places ("node(s) didn't have free
ports for the requested pod ports"). A Pod manifest is not compared with the live Pod of its own
name, nor a static Pod with its own mirror Pod (`<name>-<node>`). A workload's running replicas
are what its rollout keeps or replaces: an unchanged template creates no Pod, and a changed one
meets its old Pods' ports as far as the update strategy keeps them (a Deployment's maxSurge, 25%
by default and rounded up by `ResolveFenceposts`, starts the new Pod before the old one goes; a
DaemonSet's default maxSurge 0 replaces the old Pod in place), and the finding says so, with the
strategy that lets the rollout complete (docs/cluster-state.md, "A workload that already runs").
A port the old Pod shares with another Pod stays held when the old Pod goes (the kubelet's
`NodeInfo.UsedPorts` is built from every Pod on the node). The new Pod's verdict is checked
against the kubelet's `AdmissionCheck` itself (`tests/test_oracle_rollout.py`).

## Why is this bad?
The kubelet's admission runs `AdmissionCheck` (`pkg/scheduler/eventhandlers.go`), whose
`nodeports.Fits` refuses a Pod whose host port is taken: the Pod goes to phase Failed with
reason `NodePorts` and "Predicate NodePorts failed: node(s) didn't have free ports for the
requested pod ports". It is never retried or moved; a controller keeps creating replacements
that fail the same way. `AdmissionCheck` looks at resources and node affinity first (and the
eviction manager and the OS checks run before it): when one of those rejects the Pod, or the second
replica beside the first one, that is the reason the Pod shows, and the message says so.

## How to fix
Use another host port or another node, or drop `hostPort` and reach the Pod through a Service.
For several replicas, do not pin them to one node: a DaemonSet runs one per node.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pods_noun, rejection_fate, replica_count, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import rollout as rollouts
    from nodename_lint import scheduling
    from nodename_lint.cluster import targets
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    rollouts = later("nodename_lint.rollout", globals())
    scheduling = later("nodename_lint.scheduling", globals())
    targets = later("nodename_lint.cluster.targets", globals())

_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
      - apiVersion: v1
        kind: Pod
        metadata:
          name: ingress-nginx-controller-7d9c5
          namespace: ingress-nginx
        spec:
          nodeName: kind-worker
          containers:
            - name: controller
              image: registry.k8s.io/ingress-nginx/controller:v1.12.0
              ports:
                - {containerPort: 80, hostPort: 80, protocol: TCP}
        status:
          phase: Running
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: web
    spec:
      nodeName: kind-worker
      containers:
        - name: nginx
          image: nginx:1.27.3-alpine
          ports:
            - containerPort: 80
              hostPort: {port}
"""

RULE = Rule(
    id="host-port-conflict",
    severity="error",
    summary="A hostPort is already used on the pinned node: the kubelet refuses the Pod with NodePorts.",
    doc=__doc__,
    needs=frozenset({"nodes", "pods"}),
    examples=(
        Example(
            "host port 80 is taken by the ingress controller",
            _POD.replace("{port}", "80"),
            fails=True,
            cluster=_CLUSTER,
        ),
        Example("a free host port", _POD.replace("{port}", "8080"), fails=False, cluster=_CLUSTER),
    ),
)

_KUBELET = ' (kubelet: "Pod was rejected: Predicate NodePorts failed: {reason}")'


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    target = targets.admission_target(obj, context)
    if target is None:
        return
    name, node, cluster = target
    spec = obj.pod_spec or {}
    wanted = scheduling.host_ports(spec, default_from_host_network=True)
    if not wanted:  # before other_pods_ports: the ports in use on a node are costly to collect
        return
    rollout = rollouts.workload_rollout(obj, cluster)  # the workload's own running Pods: what the apply does with them
    if rollout is not None:
        if not rollout.blocks:
            return
        cluster = rollout.view
    in_use = targets.other_pods_ports(obj, name, cluster)
    if in_use is None:
        return
    fate = "the kubelet never runs the static Pod" if obj.is_static_pod else rejection_fate(obj)
    conflict = scheduling.port_conflict(wanted, in_use)
    replicas = rollout.to_place if rollout else replica_count(obj)
    noun = rollout.noun(1) if rollout else pods_noun(obj)
    if conflict is not None:
        path, port, holder = conflict
        first = scheduling.reported_first(targets.admission_reasons(obj, node, cluster), "NodePorts")
        message = (
            f"{noun} would be rejected by the kubelet on {name} with NodePorts{first}: host port "
            f"{scheduling.port_text(port)} is already used by {holder if ' ' in holder else 'Pod ' + holder}; "
            f"{fate}{'' if first else _KUBELET.format(reason=scheduling.PORTS_REASON)}"
        )
        fix = "use another hostPort or another node, or drop hostPort and expose the Pod with a Service"
    elif replicas > 1:
        path, port = wanted[0]
        # what the second replica shows: an earlier check (its requests beside the first one's) may decide
        first = scheduling.reported_first(targets.admission_reasons(obj, node, cluster, replicas_before=1), "NodePorts")
        noun = rollout.noun(replicas) if rollout else pods_noun(obj)
        message = (
            f"only 1 of {noun} can run on {name}: the replicas all need host port {scheduling.port_text(port)}, so "
            f"replicas 2 to {replicas} would be rejected by the kubelet with NodePorts{first}; "
            f"{fate}{'' if first else _KUBELET.format(reason=scheduling.PORTS_REASON)}"
        )
        fix = (
            "run one replica per node (a DaemonSet, or drop nodeName and let the scheduler spread them), "
            "or drop hostPort and expose the Pods with a Service"
        )
    else:
        return
    yield Violation(
        spec_path(obj, *_port_field(spec, path)),
        rollout.explain(message) if rollout else message,
        fix=rollout.fix(fix) if rollout else fix,
    )


def _port_field(spec: dict, path: tuple) -> tuple:
    """The hostPort key of a port entry, or its containerPort when hostNetwork made it a host port."""
    entry = spec[path[0]][path[1]]["ports"][path[3]]
    return (*path, "hostPort" if "hostPort" in entry else "containerPort")
