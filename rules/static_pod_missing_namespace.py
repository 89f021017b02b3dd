"""
## What it does
Flags a static Pod manifest (a file in the kubelet's `staticPodPath`, e.g.
`/etc/kubernetes/manifests`) whose namespace does not exist in the cluster. A static Pod without
`metadata.namespace` is in `default`, whatever the run's default namespace.

## Why is this bad?
The kubelet starts the containers from the file on its node, with no API server involved. It
then creates a mirror Pod so the static Pod shows up in the API, and that fails: `Failed
creating a mirror pod for ... namespaces "X" not found`. The Pod runs, but `kubectl get pods`
never shows it, so nobody can see its status, logs in tooling, or that it is there at all.

## How to fix
Create the namespace (`kubectl create namespace X`), or put the static Pod in a namespace that
exists (`kube-system` for control-plane components).
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
          name: kind-control-plane
      - apiVersion: v1
        kind: Namespace
        metadata:
          name: default
      - apiVersion: v1
        kind: Namespace
        metadata:
          name: kube-system
"""

_POD = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: node-agent
      namespace: {namespace}
    spec:
      containers:
        - name: agent
          image: busybox:1.37
"""

RULE = Rule(
    id="static-pod-missing-namespace",
    severity="error",
    summary="A static Pod names a namespace the cluster lacks: "
    "it runs, but its mirror Pod is refused and kubectl never shows it.",
    doc=__doc__,
    not_audited="it is about static Pod files on a node, which the API never holds",
    needs=frozenset({"namespaces"}),
    examples=(
        Example(
            "a namespace that was never created",
            _POD.replace("{namespace}", "monitoring"),
            fails=True,
            cluster=_CLUSTER,
            static_pod=True,
        ),
        Example(
            "kube-system exists",
            _POD.replace("{namespace}", "kube-system"),
            fails=False,
            cluster=_CLUSTER,
            static_pod=True,
        ),
    ),
)


@RULE.static_pod_check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    cluster = context.cluster
    if cluster is None or cluster.namespaces is None or not obj.is_pod:
        return
    written = obj.metadata.get("namespace")
    namespace = written if isinstance(written, str) and written else "default"
    if namespace in cluster.namespaces:
        return
    path = ("metadata", "namespace") if written else ("metadata",)
    yield Violation(
        path,
        f"namespace {namespace} does not exist in the cluster ({cluster.source}): the kubelet runs the static Pod's "
        f'containers on its node, but the API server refuses its mirror Pod (namespaces "{namespace}" not found), '
        "so kubectl never shows it",
        fix=f"create the namespace (kubectl create namespace {namespace}) or use one that exists, such as kube-system",
        cause=f"namespace {namespace}",
    )
