"""
## What it does
Checks the priority of a Pod or a Pod template as the Priority admission plugin sets it when the
Pod is created (`admitPod` in `plugin/pkg/admission/priority/admission.go`):

- a `priorityClassName` that names no PriorityClass of the cluster (the built-in
  `system-node-critical` and `system-cluster-critical` exist in every cluster; other classes are
  known from a cluster state that lists them: `kubectl get priorityclasses`, or a live cluster);
- `spec.priority` written in the manifest with another value than the class gives (without a
  class, the `globalDefault` class's value, or 0 when there is none);
- `spec.preemptionPolicy` written with another value than the class's (`PreemptLowerPriority`
  unless the class says `Never`).

The priority the plugin resolves is also what `insufficient-resources` and `no-node-fits` use to
predict preemption: a critical Pod (`system-node-critical`, `system-cluster-critical`) makes the
kubelet evict other Pods, a Pod of a higher priority makes the scheduler delete Pods of a lower
one. Static Pods are not checked: the kubelet runs them without the API server.

## Why is this bad?
The API server refuses the Pod (Forbidden): `pods "web" is forbidden: no PriorityClass with name
high-priority was found`, or `the integer value of priority (1000) must not be provided in pod
spec; priority admission controller computed 0 from the given PriorityClass name`. `kubectl
apply` fails for a Pod; for a workload the controller's Pods are refused (FailedCreate events on
its ReplicaSet, StatefulSet or Job) and none runs.

## How to fix
Name an existing PriorityClass (`kubectl get priorityclasses`) or create it first, and drop
`spec.priority` and `spec.preemptionPolicy`: the plugin sets both from the class.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pods_noun, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import preemption
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    preemption = later("nodename_lint.preemption", globals())

_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
      - apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata:
          name: batch-low
        value: -10
        preemptionPolicy: Never
"""

_DEPLOYMENT = """
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: reports
    spec:
      replicas: 2
      selector:
        matchLabels: {app: reports}
      template:
        metadata:
          labels: {app: reports}
        spec:
          priorityClassName: {class}
          containers:
            - name: report
              image: busybox:1.37
"""

RULE = Rule(
    id="invalid-priority",
    severity="error",
    summary="A priorityClassName that names no PriorityClass, or spec.priority or spec.preemptionPolicy that differs "
    "from the class: the Priority admission plugin refuses the Pod.",
    doc=__doc__,
    not_audited="it predicts an admission the API server has already made: a live Pod's spec.priority is the "
    "Priority admission plugin's own",
    examples=(
        Example(
            "a PriorityClass the cluster does not have",
            _DEPLOYMENT.replace("{class}", "batch-high"),
            fails=True,
            cluster=_CLUSTER,
        ),
        Example(
            "a PriorityClass of the cluster", _DEPLOYMENT.replace("{class}", "batch-low"), fails=False, cluster=_CLUSTER
        ),
        Example(
            "spec.priority written beside a built-in class",
            _DEPLOYMENT.replace("{class}", "system-cluster-critical\n          priority: 1000"),
            fails=True,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    if obj.is_static_pod:
        return
    # The common case, read field by field (the whole spec is made plain values only past it): the plugin
    # gives the default priority; a null priority or preemptionPolicy is one not written, never refused.
    name = obj.pod_spec_field("priorityClassName")
    if name is not None and not isinstance(name, str):
        return  # the API server refuses the object while decoding it, before admission
    if not name and obj.pod_spec_field("priority") is None and obj.pod_spec_field("preemptionPolicy") is None:
        return
    spec = obj.pod_spec
    if spec is None:
        return

    classes = context.cluster.priority_classes if context.cluster is not None else None
    if classes is None and name not in preemption.BUILT_IN_CLASSES:
        return  # the cluster's classes (and its globalDefault) are not known
    priority = preemption.resolve_priority(spec, classes)
    if not priority.refusal:
        return
    source = f" ({context.cluster.source})" if context.cluster is not None else ""
    # NewForbidden names the object as admission sees it: its name, before a generateName is filled in the prefix
    named = obj.name or obj.generate_name or "Unknown"
    quoted = f'pods \\"{named}\\" is forbidden: {priority.refusal}' if obj.is_pod else priority.refusal
    refused = f"the API server refuses {pods_noun(obj)}" + ("" if obj.is_pod else " (FailedCreate)")
    if priority.refused_at == ("priorityClassName",):
        known = ", ".join(sorted({*preemption.BUILT_IN_CLASSES, *(classes or {})}))
        what = f"PriorityClass {name} does not exist in the cluster{source}; PriorityClasses: {known}"
        fix = "name an existing PriorityClass (kubectl get priorityclasses), or create it first"
    elif priority.refused_at == ("priority",):
        what = f"spec.priority is {spec.get('priority')} and the Priority admission plugin computes {priority.value}"
        what += f" from PriorityClass {priority.class_name}" if priority.class_name else " (no PriorityClass)"
        fix = "remove spec.priority: the Priority admission plugin sets it from the PriorityClass"
    else:
        what = (
            f"spec.preemptionPolicy is {spec.get('preemptionPolicy')} and the Priority admission plugin computes "
            f"{priority.class_policy}"
        )
        what += f" from PriorityClass {priority.class_name}" if priority.class_name else " (no PriorityClass)"
        fix = (
            "remove spec.preemptionPolicy: the Priority admission plugin sets it from the PriorityClass; for a Pod "
            "that must not preempt, name a PriorityClass with preemptionPolicy: Never"
        )
    yield Violation(spec_path(obj, *priority.refused_at), f'{what}: {refused} ("{quoted}")', fix=fix)
