"""
## What it does
Flags a Pod or a workload template pinned with `spec.nodeName` (or a static Pod whose node is
named with `--static-pod-node`) whose operating system differs from the node's: the Pod's own
`kubernetes.io/os` label, then `spec.os.name`, checked in the kubelet's order. The node's OS is
the kubelet's own (`runtime.GOOS`), which it reports in `status.nodeInfo.operatingSystem`; a Node
without that is read by its `kubernetes.io/os` label, and one with neither is not checked.

## Why is this bad?
The kubelet's first predicate checks are about the operating system
(`predicateAdmitHandler.Admit` in `pkg/kubelet/lifecycle/predicate.go`), before resources and
affinity. `rejectPodAdmissionBasedOnOSSelector` refuses a Pod whose `kubernetes.io/os` label
differs from the kubelet's OS (reason `PodOSSelectorNodeLabelDoesNotMatch`; a node label that is
missing or differs is replaced by the kubelet's OS first), then
`rejectPodAdmissionBasedOnOSField` one whose `spec.os.name` differs from the kubelet's OS
(reason `PodOSNotSupported`). The scheduler would never place such a Pod there, but `nodeName`
bypasses the scheduler: the Pod goes to phase Failed and is never retried or moved.

## How to fix
Pin to a node of the Pod's operating system (`kubectl get nodes -L kubernetes.io/os`), fix
`spec.os.name` or the Pod's `kubernetes.io/os` label, or drop `nodeName` and select the OS with
a `nodeSelector` on `kubernetes.io/os`.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pods_noun, rejection_fate, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import scheduling
    from nodename_lint.cluster import admitted as admission
    from nodename_lint.cluster import targets
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    admission = later("nodename_lint.cluster.admitted", globals())
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
          labels: {kubernetes.io/os: linux}
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
      - apiVersion: v1
        kind: Node
        metadata:
          name: win-node-1
          labels: {kubernetes.io/os: windows}
        status:
          allocatable: {cpu: "4", memory: 8039064Ki, pods: "110"}
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: iis
    spec:
      nodeName: {node}
      os:
        name: windows
      containers:
        - name: iis
          image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022
"""

RULE = Rule(
    id="node-os-mismatch",
    severity="error",
    summary="The Pod's OS (kubernetes.io/os label, spec.os) differs from the pinned node's: the kubelet refuses it "
    "with PodOSNotSupported.",
    doc=__doc__,
    needs=frozenset({"nodes"}),
    examples=(
        Example(
            "a Windows Pod pinned to a Linux node", _POD.replace("{node}", "kind-worker"), fails=True, cluster=_CLUSTER
        ),
        Example("a Windows Pod on a Windows node", _POD.replace("{node}", "win-node-1"), fails=False, cluster=_CLUSTER),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    target = targets.admission_target(obj, context)
    if target is None:
        return
    name, node, cluster = target
    spec = obj.pod_spec or {}
    labels = admission.pod_labels(obj)
    reason = scheduling.os_rejection(spec, labels, node)
    if reason is None:
        return
    node_os = scheduling.kubelet_os(node)
    where = "status.nodeInfo.operatingSystem" if node.operating_system else scheduling.OS_LABEL
    first = scheduling.reported_first(
        targets.admission_reasons(obj, node, cluster), reason
    )  # node pressure comes first
    if reason == scheduling.OS_FIELD_REASON:
        pod_os = spec["os"]["name"]
        path = spec_path(obj, "os", "name")
        what = f"spec.os.name is {pod_os}"
        fix = f"pin to a {pod_os} node (kubectl get nodes -L {scheduling.OS_LABEL}), or set spec.os.name to {node_os}"
    else:
        pod_os = labels[scheduling.OS_LABEL]
        metadata = ("metadata",) if obj.is_pod else (*(obj.pod_spec_path or ())[:-1], "metadata")
        path = (*metadata, "labels", scheduling.OS_LABEL)
        what = f"the Pod's label {scheduling.OS_LABEL} is {pod_os}"
        fix = (
            f"pin to a {pod_os} node (kubectl get nodes -L {scheduling.OS_LABEL}), or fix the Pod's "
            f"{scheduling.OS_LABEL} label"
        )
    fate = "the kubelet never runs the static Pod" if obj.is_static_pod else rejection_fate(obj)
    yield Violation(
        path,
        f"{pods_noun(obj)} would be rejected by the kubelet on {name} with {reason}{first}: {what} and the node runs "
        f"{node_os} ({where}); {fate}"
        + ("" if first else f' (kubelet: "Pod was rejected: {scheduling.OS_MESSAGES[reason]}")'),
        fix=fix + ", or drop nodeName and use a nodeSelector on kubernetes.io/os",
    )
