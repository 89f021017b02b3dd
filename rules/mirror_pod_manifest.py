"""
## What it does
Flags a Pod manifest saved from a mirror Pod: it carries the annotation
`kubernetes.io/config.mirror` or an ownerReference of kind Node (what `kubectl get pod -o yaml`
shows for the static Pods of the control plane).

## Why is this bad?
A mirror Pod is only the API's reflection of a static Pod that the kubelet runs from a file in
its `staticPodPath` (`/etc/kubernetes/manifests`). Applying the saved copy does not change the
static Pod: it creates an ordinary Pod pinned to the node, next to the real one, and the API may
refuse the Node ownerReference. Deleting the mirror Pod does not stop the static Pod either:
the kubelet recreates the reflection a few seconds later. Only the file on the node controls it.

## How to fix
Edit the static Pod's file on the node. To turn this copy back into a static Pod manifest, drop
`status`, the `kubernetes.io/config.*` annotations, `ownerReferences`, `uid`,
`resourceVersion`, `creationTimestamp`, `managedFields`, the `-<node>` suffix of the name and
`spec.nodeName` (`nodename-lint --fix` does this).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.model import Manifest
from nodename_lint.podspec import pinned_node
from nodename_lint.rule import Context, Example, Rule, Violation
from nodename_lint.yamlnodes import lookup

if TYPE_CHECKING:  # for annotations only; see the function-level imports
    from nodename_lint.fix.edits import FixStep


MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
CONFIG_ANNOTATION_PREFIX = "kubernetes.io/config."
# Fields the API server and the kubelet fill in; a static Pod manifest has none of them.
SERVER_SET_METADATA = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "ownerReferences")

RULE = Rule(
    id="mirror-pod-manifest",
    severity="warning",
    summary="A manifest saved from a mirror Pod: applying it creates an ordinary Pod, not the static Pod.",
    doc=__doc__,
    not_audited="a mirror Pod in the API is the real one, not a saved copy",
    fix="turns the file into the static Pod manifest it came from: drops status, the kubernetes.io/config.* "
    "annotations, ownerReferences, uid, resourceVersion, creationTimestamp, managedFields, the node-name "
    "suffix of the name and the defaulted nodeName.",
    examples=(
        Example(
            "kube-scheduler saved with kubectl get pod -o yaml",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: kube-scheduler-kind-control-plane
              namespace: kube-system
              annotations:
                kubernetes.io/config.hash: 6d2b3c
                kubernetes.io/config.mirror: 6d2b3c
                kubernetes.io/config.source: file
              ownerReferences:
                - apiVersion: v1
                  kind: Node
                  name: kind-control-plane
                  uid: 0b1c2d3e-0000-4000-8000-000000000001
                  controller: true
            spec:
              nodeName: kind-control-plane
              containers:
                - name: kube-scheduler
                  image: registry.k8s.io/kube-scheduler:v1.32.2
            """,
            fails=True,
        ),
        Example(
            "the static Pod manifest itself",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: kube-scheduler
              namespace: kube-system
            spec:
              containers:
                - name: kube-scheduler
                  image: registry.k8s.io/kube-scheduler:v1.32.2
            """,
            fails=False,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    if not obj.is_pod:
        return
    if MIRROR_ANNOTATION in obj.annotations:
        path: tuple = ("metadata", "annotations", MIRROR_ANNOTATION)
        evidence = f"annotation {MIRROR_ANNOTATION}"
    else:
        owner = _node_owner(obj)
        if owner is None:
            return
        path = ("metadata", "ownerReferences", owner[0], "kind")
        evidence = "an ownerReference to a Node"
    node = pinned_node(obj) or "its node"
    yield Violation(
        path,
        f"this Pod was saved from the mirror Pod of a static Pod ({evidence}): applying it creates an ordinary "
        f"Pod pinned to {node} next to the static one, and changes nothing in the static Pod, which only its "
        "file in /etc/kubernetes/manifests on the node controls",
        fix="edit the static Pod's file on the node instead; nodename-lint --fix turns this copy back into that "
        "static Pod manifest",
    )


@RULE.fixer
def fix(obj: Manifest, context: Context) -> Iterator[FixStep]:
    # startup: only --fix and --diff load the edits
    from nodename_lint.fix.edits import Delete, SetValue

    if not obj.is_pod:
        return
    if lookup(obj.node, "status") is not None:
        yield Delete(("status",))
    for key in SERVER_SET_METADATA:
        if key in obj.metadata:
            yield Delete(("metadata", key))
    for key in obj.annotations:
        if key.startswith(CONFIG_ANNOTATION_PREFIX):
            yield Delete(("metadata", "annotations", key))
    owner = _node_owner(obj)
    node = pinned_node(obj) or (owner[1] if owner else None)
    suffix = f"-{node.lower()}" if node else ""
    if suffix and obj.name.endswith(suffix) and len(obj.name) > len(suffix):
        yield SetValue(("metadata", "name"), obj.name[: -len(suffix)])  # the kubelet appended -<node>
    if pinned_node(obj):
        yield Delete(("spec", "nodeName"))  # the kubelet sets it to its own node


def _node_owner(obj: Manifest) -> tuple[int, str | None] | None:
    """(index, node name) of the first ownerReference to a Node, the kubelet's mark on a mirror Pod."""
    owners = obj.metadata.get("ownerReferences")
    for index, owner in enumerate(owners if isinstance(owners, list) else ()):
        if isinstance(owner, dict) and owner.get("kind") == "Node":
            name = owner.get("name")
            return index, name if isinstance(name, str) and name else None
    return None
