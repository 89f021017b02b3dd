"""
## What it does
Flags a Pod spec that sets both `spec.nodeName` and `spec.schedulingGates`.

## Why is this bad?
Scheduling gates hold a Pod back from the scheduler until every gate is removed; `nodeName`
says the scheduler is not involved at all. The API server refuses the combination on create:
`spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared`. For a
workload, every Pod the controller tries to create is refused (FailedCreate events).

## How to fix
Drop `nodeName` and let the scheduler place the Pod once the gates are cleared (use a
nodeSelector or node affinity to constrain it), or drop the gates if the Pod really must be
pinned.
"""

from collections.abc import Iterator

from nodename_lint.model import Manifest
from nodename_lint.podspec import dotted, pinned_node, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation

RULE = Rule(
    id="nodename-with-scheduling-gates",
    severity="error",
    summary="spec.nodeName together with spec.schedulingGates: the API server rejects the Pod on create.",
    doc=__doc__,
    examples=(
        Example(
            "a gated Pod that also names its node",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: gated
            spec:
              nodeName: worker-1
              schedulingGates:
                - name: example.com/quota
              containers:
                - name: app
                  image: busybox:1.37
            """,
            fails=True,
        ),
        Example(
            "use instead: gates with a nodeSelector",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: gated
            spec:
              nodeSelector:
                kubernetes.io/hostname: worker-1
              schedulingGates:
                - name: example.com/quota
              containers:
                - name: app
                  image: busybox:1.37
            """,
            fails=False,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    if pinned_node(obj) is None or not obj.pod_spec_field("schedulingGates"):
        return
    path = spec_path(obj, "nodeName")
    who = "the Pod" if obj.is_pod else f"every Pod {obj.kind} {obj.shown_name} creates (FailedCreate)"
    yield Violation(
        path,
        f"{dotted(path)}: Forbidden: cannot be set until all schedulingGates have been cleared; "
        f"the API server refuses {who}",
        fix="remove nodeName and constrain the Pod with a nodeSelector or node affinity, or remove the schedulingGates",
    )
