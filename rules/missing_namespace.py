"""
## What it does
Flags an object in a namespace the cluster does not have: its `metadata.namespace`, or the
namespace it gets when it sets none (the kubeconfig context's namespace, `--namespace`, else
`default`). It stays silent when a Namespace of that name is among the linted manifests: the
same `kubectl apply` creates it first.

Built-in namespaced kinds are always checked; an object of another kind only when it sets
`metadata.namespace` (a custom resource may be cluster-scoped). Static Pods have their own rule,
`static-pod-missing-namespace`: the kubelet runs them anyway.

## Why is this bad?
The NamespaceLifecycle admission plugin (`plugin/pkg/admission/namespace/lifecycle`) refuses
every object in a namespace that does not exist: `kubectl apply` fails with
`namespaces "x" not found` and nothing is created, so no Pod ever runs.

## How to fix
Create the namespace first (`kubectl create namespace x`, or add a Namespace manifest to the
same apply), or fix `metadata.namespace` to one that exists (`kubectl get namespaces`).
"""

from collections.abc import Iterator

from nodename_lint.model import Manifest
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
        kind: Namespace
        metadata:
          name: default
      - apiVersion: v1
        kind: Namespace
        metadata:
          name: kube-system
"""

_SERVICE = """
    apiVersion: v1
    kind: Service
    metadata:
      name: web
      namespace: {namespace}
    spec:
      selector: {app: web}
      ports:
        - port: 80
"""

RULE = Rule(
    id="missing-namespace",
    severity="error",
    summary="The object's namespace does not exist and no linted manifest creates it: the API server refuses it "
    '(namespaces "x" not found).',
    doc=__doc__,
    not_audited="it predicts an admission the API server has already made: a live object's namespace exists",
    needs=frozenset({"namespaces"}),
    examples=(
        Example(
            "a namespace that was never created", _SERVICE.replace("{namespace}", "shop"), fails=True, cluster=_CLUSTER
        ),
        Example(
            "created by the same apply",
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n---\n"
            + _SERVICE.replace("{namespace}", "shop").replace("\n    ", "\n").strip()
            + "\n",
            fails=False,
            cluster=_CLUSTER,
        ),
        Example("an existing namespace", _SERVICE.replace("{namespace}", "default"), fails=False, cluster=_CLUSTER),
    ),
)

# Namespaced kinds of the built-in API groups: checked even without metadata.namespace.
_NAMESPACED = frozenset(
    {
        "Pod",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
        "ReplicationController",
        "PodTemplate",
        "Service",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "PersistentVolumeClaim",
        "Endpoints",
        "EndpointSlice",
        "Ingress",
        "NetworkPolicy",
        "Role",
        "RoleBinding",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "LimitRange",
        "ResourceQuota",
        "Lease",
        "Event",
        "ControllerRevision",
        "CSIStorageCapacity",
        "ResourceClaim",
        "ResourceClaimTemplate",
    }
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    cluster = context.cluster
    namespace = obj.namespace
    if cluster is None or cluster.namespaces is None or namespace is None or obj.is_static_pod:
        return
    written = obj.metadata.get("namespace")
    if namespace in cluster.namespaces or (obj.kind not in _NAMESPACED and not written):
        return
    where = "" if written else " (the namespace it gets without metadata.namespace)"
    yield Violation(
        ("metadata", "namespace") if written else ("metadata",),
        f"namespace {namespace}{where} does not exist in the cluster ({cluster.source}) and no linted manifest creates "
        f"it: the API server refuses {obj.kind} {obj.shown_name} "
        f'(NamespaceLifecycle: namespaces "{namespace}" not found) and nothing is created',
        fix=f"create the namespace first (kubectl create namespace {namespace}, or a Namespace manifest in the same "
        "apply), or use one from kubectl get namespaces",
        unless_applied=("Namespace", namespace),
        cause=f"namespace {namespace}",
    )
