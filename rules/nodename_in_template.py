"""
## What it does
Flags a workload (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
ReplicationController, PodTemplate) whose Pod template sets `spec.nodeName`.

## Why is this bad?
`nodeName` lives in the Pod's own spec, so in a template it is copied into every Pod the
controller creates. The scheduler only picks up Pods with an empty `nodeName`: it skips all of
them, and every replica lands on that one node. If the node goes down, every replica goes down
with it. If the kubelet rejects the Pods (OutOfcpu, OutOfmemory, NodeAffinity), they go straight
to Failed and the controller keeps creating replacements that fail the same way. A DaemonSet with
`nodeName` runs on that node only.

## How to fix
Let the scheduler place the Pods and constrain it instead: a `nodeSelector` on the
`kubernetes.io/hostname` label (or a group label such as `node-role`), or a required
`nodeAffinity`. The scheduler then still checks taints, resources and spreading.
`nodename-lint --fix` removes `nodeName` and adds `kubernetes.io/hostname: <node>` to the
`nodeSelector` (creating it where `nodeName` was); when the `nodeSelector` already names another
hostname it adds a required `nodeAffinity` term on the hostname instead. The rest of the spec stays.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import (
    HOSTNAME_LABEL,
    REQUIRED_NODE_AFFINITY,
    dotted,
    pinned_node,
    pods_noun,
    replica_count,
    spec_path,
)
from nodename_lint.rule import Context, Example, Rule, Violation

if TYPE_CHECKING:  # for annotations only; see the function-level imports
    from nodename_lint.fix.edits import FixStep


RULE = Rule(
    id="nodename-in-template",
    severity="error",
    summary="A workload's Pod template sets spec.nodeName: every replica skips the scheduler and lands on one node.",
    doc=__doc__,
    fix="replaces spec.nodeName with a nodeSelector on kubernetes.io/hostname (merged into an existing "
    "nodeSelector), or with a required nodeAffinity term when the nodeSelector names another hostname.",
    examples=(
        Example(
            "a Deployment pinned to one node",
            """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: web
            spec:
              replicas: 3
              selector:
                matchLabels: {app: web}
              template:
                metadata:
                  labels: {app: web}
                spec:
                  nodeName: worker-2
                  containers:
                    - name: nginx
                      image: nginx:1.27.3-alpine
            """,
            fails=True,
        ),
        Example(
            "use instead: a nodeSelector on the hostname label",
            """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: web
            spec:
              replicas: 3
              selector:
                matchLabels: {app: web}
              template:
                metadata:
                  labels: {app: web}
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
    if node is None or not obj.is_workload_template:
        return
    path = spec_path(obj, "nodeName")
    if obj.kind == "DaemonSet":
        effect = (
            f"the DaemonSet controller runs a Pod on node {node} only, not on every node, and the "
            "scheduler never checks it"
        )
    else:
        one = replica_count(obj) == 1 and obj.kind not in ("Job", "CronJob")
        effect = (
            f"{pods_noun(obj)} {'skips' if one else 'skip'} the scheduler and {'lands' if one else 'land'} on node "
            f"{node}; if {node} goes down {'it goes' if one else 'they all go'} down, and if its kubelet rejects "
            f"{'it' if one else 'them'} (OutOfcpu, NodeAffinity) "
            + (
                "the Job controller creates replacements that fail the same way until backoffLimit fails the Job"
                if obj.kind in ("Job", "CronJob")
                else "the controller keeps creating replacements that fail the same way"
            )
        )
    nodes = context.cluster.nodes if context.cluster is not None else None
    # With a node the cluster lacks, a selector on that name would match nothing: the name comes first.
    unknown = nodes is not None and node not in nodes
    first = f"correct the node name first ({node} is not in the cluster: see unknown-node), then " if unknown else ""
    hostname = "NODE" if unknown else node
    yield Violation(
        path,
        f"{dotted(path)} is set in a Pod template: {effect}",
        fix=f"{first}remove nodeName and use nodeSelector {{{HOSTNAME_LABEL}: {hostname}}} or a required nodeAffinity, "
        "so the scheduler still checks taints and resources",
    )


@RULE.fixer
def fix(obj: Manifest, context: Context) -> Iterator[FixStep]:
    # startup: only --fix and --diff load the edits
    from nodename_lint.fix.edits import Delete, ReplaceEntry, SetValue, Unfixable

    node, spec = pinned_node(obj), obj.pod_spec
    if node is None or spec is None or not obj.is_workload_template:
        return
    nodes = context.cluster.nodes if context.cluster is not None else None
    if nodes is not None and node not in nodes:  # a selector on a misspelt name matches no node: unknown-node first
        yield Unfixable(f"node {node} is not in the cluster state: correct the name first (unknown-node)")
        return
    selector = spec.get("nodeSelector")
    if selector is not None and not isinstance(selector, dict):
        yield Unfixable("spec.nodeSelector is not a mapping")
        return
    hostname = _hostname_label(node, context)
    current = (selector or {}).get(HOSTNAME_LABEL)
    if "nodeSelector" not in spec:  # the new nodeSelector takes nodeName's place (and its comment)
        yield ReplaceEntry(spec_path(obj, "nodeName"), "nodeSelector", {HOSTNAME_LABEL: hostname})
        return
    if current is None:
        yield SetValue(spec_path(obj, "nodeSelector", HOSTNAME_LABEL), hostname)
    elif current != hostname:
        yield from _require_hostname(obj, hostname)
    yield Delete(spec_path(obj, "nodeName"))


def _hostname_label(node: str, context: Context) -> str:
    """The node's kubernetes.io/hostname label from the cluster state; by default the node's name."""
    nodes = context.cluster.nodes if context.cluster is not None else None
    info = nodes.get(node) if nodes else None
    return (info.labels.get(HOSTNAME_LABEL) if info else None) or node


def _require_hostname(obj: Manifest, hostname: str) -> Iterator[FixStep]:
    """Require the hostname in every nodeSelectorTerm: terms are ORed, expressions in a term ANDed."""
    # startup: only --fix and --diff load the edits
    from nodename_lint.fix.edits import Append, SetValue

    expression = {"key": HOSTNAME_LABEL, "operator": "In", "values": [hostname]}
    required = spec_path(obj, *REQUIRED_NODE_AFFINITY)
    terms = obj.get((*required, "nodeSelectorTerms"))
    if not isinstance(terms, list) or not terms:
        yield SetValue((*required, "nodeSelectorTerms"), [{"matchExpressions": [expression]}])
        return
    for index, term in enumerate(terms):
        expressions = (*required, "nodeSelectorTerms", index, "matchExpressions")
        if isinstance(term, dict) and isinstance(term.get("matchExpressions"), list):
            yield Append(expressions, expression)
        else:
            yield SetValue(expressions, [expression])
