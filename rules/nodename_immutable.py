"""
## What it does
Flags a Pod manifest whose `spec.nodeName` differs from the node of the live Pod with the same
namespace and name.

## Why is this bad?
`spec.nodeName` cannot change on an existing Pod. `kubectl apply` fails with `The Pod "NAME" is
invalid: spec: Forbidden: pod updates may not change fields other than
`spec.containers[*].image`, ...` (ValidatePodUpdate), and the running Pod stays where it is.

## How to fix
Delete the Pod and create it again (`kubectl delete pod NAME` then `kubectl apply -f FILE`, or
`kubectl replace --force -f FILE`), or keep the node it runs on. For Pods a controller owns,
change the controller's template instead.
"""

from collections.abc import Iterator

from nodename_lint.model import Manifest
from nodename_lint.podspec import pinned_node, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation

_CLUSTER = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker
      - apiVersion: v1
        kind: Node
        metadata:
          name: kind-worker2
      - apiVersion: v1
        kind: Pod
        metadata:
          name: pinned
          namespace: default
        spec:
          nodeName: kind-worker
          containers:
            - name: nginx
              image: nginx:1.27.3-alpine
        status:
          phase: Running
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: pinned
    spec:
      nodeName: {node}
      containers:
        - name: nginx
          image: nginx:1.27.4-alpine
"""

RULE = Rule(
    id="nodename-immutable",
    severity="error",
    summary="The live Pod with this name runs on another node: nodeName cannot change, so apply fails.",
    doc=__doc__,
    not_audited="it compares a manifest with the live object, which here is the object itself",
    needs=frozenset({"live-pods"}),
    examples=(
        Example(
            "moving a running Pod to another node", _POD.replace("{node}", "kind-worker2"), fails=True, cluster=_CLUSTER
        ),
        Example("the same node, a new image", _POD.replace("{node}", "kind-worker"), fails=False, cluster=_CLUSTER),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    cluster = context.cluster
    if cluster is None or not obj.is_pod or obj.is_static_pod:
        return
    node = pinned_node(obj)
    namespace = obj.namespace or "default"
    live = cluster.live_pod(namespace, obj.name) if node else None
    if live is None or live.node_name == node:
        return
    where = f"runs on {live.node_name}" if live.node_name else "exists without a node (Pending)"
    yield Violation(
        spec_path(obj, "nodeName"),
        f"Pod {namespace}/{obj.name} already {where} ({cluster.source}); applying nodeName {node} fails with "
        f'`The Pod "{obj.name}" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`, ...` and the Pod stays where it is",
        fix=f"delete and recreate the Pod (kubectl delete pod {obj.name} -n {namespace}, then apply), "
        f"or keep nodeName {live.node_name}"
        if live.node_name
        else "delete and recreate the Pod",
    )
