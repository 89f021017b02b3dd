"""
## What it does
Checks `spec.runtimeClassName` and `spec.overhead` of a Pod or a Pod template as the RuntimeClass
admission plugin does (`plugin/pkg/admission/runtimeclass/admission.go`):

- `spec.overhead` set by hand without a `runtimeClassName` (no cluster state needed);
- with a cluster state that has RuntimeClasses (`kubectl get runtimeclasses -o yaml`, or a live
  cluster): a `runtimeClassName` that names no RuntimeClass, a hand-set `spec.overhead` that
  differs from the class's `overhead.podFixed` or that the class does not define, and a
  `nodeSelector` that contradicts the class's `scheduling.nodeSelector` (`setScheduling`).

The overhead a RuntimeClass defines is what the plugin writes into `spec.overhead`; the
resource rules (`insufficient-resources`, `no-node-fits`) add it to the Pod's requests and say
which class they counted. The class's `scheduling.nodeSelector` and `scheduling.tolerations` are
merged into the Pod the same way, and `node-selector-mismatch`, `untolerated-taint` and
`no-node-fits` check the Pod with them.

## Why is this bad?
`spec.overhead` is meant to be set by the admission plugin from the RuntimeClass, never by hand.
`validateOverhead` refuses a Pod whose overhead does not match its RuntimeClass ("pod rejected:
Pod's Overhead doesn't match RuntimeClass's defined Overhead") and one with an overhead but no
RuntimeClass overhead ("pod rejected: Pod Overhead set without corresponding RuntimeClass
defined Overhead"); `prepareObjects` refuses a Pod whose class does not exist ("pod rejected:
RuntimeClass "x" not found"). A Pod is refused by `kubectl apply`; for a workload the controller's
Pods are refused (FailedCreate events) and none runs.

## How to fix
Remove `spec.overhead` and let the RuntimeClass set it, and name an existing RuntimeClass
(`kubectl get runtimeclasses`).
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pods_noun, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint import quantity
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    quantity = later("nodename_lint.quantity", globals())

_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
      - apiVersion: node.k8s.io/v1
        kind: RuntimeClass
        metadata:
          name: gvisor
        handler: runsc
        overhead:
          podFixed: {cpu: 250m, memory: 120Mi}
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: sandboxed
    spec:
      runtimeClassName: gvisor
      containers:
        - name: app
          image: busybox:1.37
"""

RULE = Rule(
    id="runtime-class-overhead",
    severity="error",
    summary="spec.overhead set by hand, or a runtimeClassName that names no RuntimeClass: the RuntimeClass admission "
    "plugin refuses the Pod.",
    doc=__doc__,
    not_audited="it predicts an admission the API server has already made: a live Pod's spec.overhead is the "
    "RuntimeClass admission plugin's own",
    examples=(
        Example(
            "overhead set by hand, different from the RuntimeClass's",
            _POD + "      overhead: {cpu: 100m}\n",
            fails=True,
            cluster=_CLUSTER,
        ),
        Example("the RuntimeClass sets the overhead", _POD, fails=False, cluster=_CLUSTER),
        Example(
            "overhead set by hand without a RuntimeClass",
            _POD.replace("      runtimeClassName: gvisor\n", "      overhead: {cpu: 100m}\n"),
            fails=True,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    name = obj.pod_spec_field("runtimeClassName")
    overhead = obj.pod_spec_field("overhead")
    if overhead is None and (not name or context.cluster is None):
        return  # the common case: nothing to check, and offline runs import nothing more

    refused = f"the API server refuses {pods_noun(obj)}" + ("" if obj.is_pod else " (FailedCreate)")
    remove = "remove spec.overhead: the RuntimeClass admission plugin sets it from the RuntimeClass"
    if not name:
        if overhead is not None:
            yield Violation(
                spec_path(obj, "overhead"),
                f'spec.overhead is set by hand without a runtimeClassName: {refused} ("pod rejected: Pod Overhead set '
                'without corresponding RuntimeClass defined Overhead")',
                fix=remove,
            )
        return
    cluster = context.cluster
    if cluster is None or cluster.runtime_classes is None or not isinstance(name, str):
        return
    if name not in cluster.runtime_classes:
        known = ", ".join(sorted(cluster.runtime_classes)) or "none"
        yield Violation(
            spec_path(obj, "runtimeClassName"),
            f"RuntimeClass {name} does not exist in the cluster ({cluster.source}; RuntimeClasses: {known}): {refused} "
            f'("pod rejected: RuntimeClass \\"{name}\\" not found")',
            fix="name an existing RuntimeClass (kubectl get runtimeclasses), or create it first",
        )
        return
    # the plugin's order: setOverhead (Admit), setScheduling (Admit), then validateOverhead (Validate)
    info = cluster.runtime_classes[name]
    if overhead is not None and info.overhead and _amounts(overhead) != _amounts(info.overhead):
        listed = ", ".join(f"{resource} {value}" for resource, value in info.overhead.items())
        yield Violation(
            spec_path(obj, "overhead"),
            f'spec.overhead differs from the overhead of RuntimeClass {name} ({listed}): {refused} ("pod rejected: '
            "Pod's Overhead doesn't match RuntimeClass's defined Overhead\")",
            fix=remove,
        )
        return
    written = obj.pod_spec_field("nodeSelector")
    selector: dict[str, object] = written if isinstance(written, dict) else {}
    for key, value in info.node_selector.items():
        if key in selector and str(selector[key]) != value:
            yield Violation(
                spec_path(obj, "nodeSelector", key),
                f"RuntimeClass {name} schedules its Pods with nodeSelector {key}={value} and the Pod asks for "
                f'{key}={selector[key]}: {refused} ("conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; '
                f'pod.spec.nodeSelector[{key}] = {selector[key]}")',
                fix=f"drop nodeSelector {key} (the RuntimeClass sets it) or use another RuntimeClass",
            )
            return
    if overhead is not None and not info.overhead:
        yield Violation(
            spec_path(obj, "overhead"),
            f'spec.overhead is set by hand and RuntimeClass {name} defines no overhead: {refused} ("pod rejected: Pod '
            'Overhead set without corresponding RuntimeClass defined Overhead")',
            fix=remove,
        )


def _amounts(values: object) -> dict[str, int] | None:
    """Quantities compared by value, as apiequality.Semantic.DeepEqual compares them."""

    try:
        return (
            {str(k): quantity.request_value(str(k), v) for k, v in values.items()} if isinstance(values, dict) else None
        )
    except quantity.QuantityError:
        return None
