"""
## What it does
Notes every Pod that sets `spec.nodeName` itself (static Pod files excluded: the kubelet fills
their `nodeName` anyway).

## Why is this bad?
With `nodeName` set the scheduler takes no part: the kubelet on the named node admits the Pod
directly. NoSchedule taints and cordon are ignored, there is no `Scheduled` event, and if the
node lacks resources or does not match the Pod's nodeSelector the kubelet rejects it: the Pod
goes straight to Failed (OutOfcpu, OutOfmemory, NodeAffinity) and never moves to another node.
That is what a diagnostic Pod pinned to a node wants; for anything else it is a trap, and a
manifest copied to another cluster names a node that is not there.

## How to fix
For a diagnostic Pod that must run on that node, keep it (and silence this note with
`# nodename-lint: ignore[nodename-on-pod]`). Otherwise express the wish with a `nodeSelector`
on `kubernetes.io/hostname` or a node affinity, so the scheduler checks the node first.
"""

from collections.abc import Iterator

from nodename_lint.model import Manifest
from nodename_lint.podspec import HOSTNAME_LABEL, dotted, pinned_node, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation

RULE = Rule(
    id="nodename-on-pod",
    severity="info",
    summary="A Pod sets spec.nodeName: the scheduler is bypassed and the kubelet admits it directly.",
    doc=__doc__,
    audit_adds="nodename-managers",
    examples=(
        Example(
            "a Pod pinned to a node",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: pinned-pod
            spec:
              nodeName: worker-2
              containers:
                - name: nginx
                  image: nginx:1.27.3-alpine
            """,
            fails=True,
        ),
        Example(
            "use instead: a nodeSelector, checked by the scheduler",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: pinned-pod
            spec:
              nodeSelector:
                kubernetes.io/hostname: worker-2
              containers:
                - name: nginx
                  image: nginx:1.27.3-alpine
            """,
            fails=False,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    node = pinned_node(obj)
    if node is None or not obj.is_pod or obj.is_static_pod:
        return
    path = spec_path(obj, "nodeName")
    yield Violation(
        path,
        f"{dotted(path)}: {node} bypasses the scheduler: the kubelet on {node} admits this Pod directly, "
        "ignoring NoSchedule taints and cordon; if it lacks resources or the nodeSelector does not match, "
        "the Pod goes to Failed (OutOfcpu, NodeAffinity) and is never moved",
        fix=f"fine for a diagnostic Pod; otherwise use nodeSelector {{{HOSTNAME_LABEL}: {node}}} or a node affinity",
    )
