"""
## What it does
Checks files that the kubelet reads as static Pods: every non-hidden file directly inside a
folder given with `--static-pod-dir`, and every file whose path contains
`etc/kubernetes/manifests/`. It reports what would make the kubelet refuse the file or refuse
to mirror the Pod into the API:

- anything but exactly one Pod in the file (another kind, a List, several documents);
- references to API objects: a ServiceAccount, Secrets (volumes, env, envFrom,
  imagePullSecrets), ConfigMaps, PersistentVolumeClaims, ClusterTrustBundles or projected
  service account tokens;
- ephemeral containers or scheduling gates;
- a name whose mirror Pod name `<name>-<node>` can never be valid;
- two files of one folder with the same Pod namespace and name.

## Why is this bad?
The kubelet loads one Pod per file ("Could not process manifest file" otherwise) and skips a
Pod whose name repeats one it already loaded from that folder (files are read in name order).
Static Pods run without the API server, so they may not reference API objects: the kubelet
(PreventStaticPodAPIReferences) and the NodeRestriction admission plugin refuse them ("static
pods may not reference secrets"). A Pod the kubelet cannot mirror runs, if at all, without ever
showing in `kubectl get pods`.

## How to fix
Keep one Pod per file, give each a unique name, put configuration in the manifest or on the
node's disk (hostPath) instead of Secrets and ConfigMaps, and remove serviceAccountName,
ephemeralContainers and schedulingGates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from nodename_lint.model import Manifest, Path
from nodename_lint.podspec import DNS1123_SUBDOMAIN_MAX, dns1123_subdomain_error, pinned_node, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation

RULE = Rule(
    id="static-pod-invalid",
    severity="error",
    summary="A static Pod manifest the kubelet would not run or would not mirror into the API.",
    doc=__doc__,
    examples=(
        Example(
            "a static Pod that mounts a Secret",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: agent
              namespace: kube-system
            spec:
              containers:
                - name: agent
                  image: registry.example.com/agent:1.0
              volumes:
                - name: token
                  secret:
                    secretName: agent-token
            """,
            fails=True,
            static_pod=True,
        ),
        Example(
            "a Deployment in the manifests folder",
            """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: agent
            spec:
              selector:
                matchLabels: {app: agent}
              template:
                metadata:
                  labels: {app: agent}
                spec:
                  containers:
                    - name: agent
                      image: registry.example.com/agent:1.0
            """,
            fails=True,
            static_pod=True,
        ),
        Example(
            "a self-contained static Pod",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: agent
              namespace: kube-system
            spec:
              containers:
                - name: agent
                  image: registry.example.com/agent:1.0
                  volumeMounts:
                    - name: config
                      mountPath: /etc/agent
              volumes:
                - name: config
                  hostPath:
                    path: /etc/agent
            """,
            fails=False,
            static_pod=True,
        ),
    ),
)

_KINDS = {
    "serviceaccounts": "ServiceAccount", "secrets": "Secret", "configmaps": "ConfigMap",
    "persistentvolumeclaims": "PersistentVolumeClaim", "clustertrustbundles": "ClusterTrustBundle",
}
_REFUSED = "the kubelet refuses this static Pod (static pods may not reference {what})"


@RULE.file_check
def check_file(objects: Sequence[Manifest], context: Context) -> Iterator[tuple[Manifest, Violation]]:
    """One Pod per file, nothing else."""
    for position, obj in enumerate(objects):
        if obj.node is not obj.document.root:
            yield obj, Violation(
                (), "a static Pod file holds a List: the kubelet loads exactly one Pod "
                "per file and refuses this one (Could not process manifest file)",
                fix="put each Pod in a file of its own",
            )
            return
        if obj.kind != "Pod":
            yield obj, Violation(
                ("kind",), f"a static Pod file holds a {obj.kind}: the kubelet loads only Pods from "
                "its staticPodPath and refuses this file (Could not process manifest file); nothing runs",
                fix="apply this object with kubectl instead, or write it as a Pod",
            )
        elif position > 0:
            yield obj, Violation(
                (), "a static Pod file holds several documents: the kubelet loads exactly one Pod per file and "
                "refuses this file (Could not process manifest file)",
                fix="put each Pod in a file of its own",
            )
    if objects and objects[0].is_pod:
        yield from ((objects[0], v) for v in _pod_violations(objects[0]))


def _pod_violations(obj: Manifest) -> Iterator[Violation]:
    spec = obj.pod_spec or {}
    for path, what in _api_references(spec):
        yield Violation(
            spec_path(obj, *path), _REFUSED.format(what=what) + " and the API server would not accept its mirror Pod",
            fix=f"remove this {_KINDS[what]} reference: a static Pod runs without the API server; put what it needs "
            "in files on the node and mount them with hostPath",
        )
    for field, why in (
        ("ephemeralContainers", "static Pods cannot have ephemeral containers"),
        ("schedulingGates", "scheduling gates make no sense for a Pod the scheduler never sees"),
    ):
        if spec.get(field):
            yield Violation(
                spec_path(obj, field), f"{why}: the mirror Pod is refused by the API server, so the Pod never shows in kubectl",
                fix=f"remove spec.{field}",
            )
    name = obj.name
    if not name:
        yield Violation(("metadata",), "the static Pod has no metadata.name: the kubelet cannot load it",
                        fix="set metadata.name")
        return
    node = pinned_node(obj)
    mirror = f"{name}-{node.lower()}" if node else f"{name}-x"
    error = dns1123_subdomain_error(mirror)
    if error:
        detail = f"mirror Pod name {mirror!r}" if node else f"mirror Pod name {name!r} plus '-<node name>'"
        yield Violation(
            ("metadata", "name"),
            f"the kubelet names the mirror Pod <name>-<node>, and the {detail} is not valid ({error}); "
            "the API server refuses it, so the Pod never shows in kubectl",
            fix=f"use a lowercase name short enough to leave room for the node name (at most {DNS1123_SUBDOMAIN_MAX} "
            "characters in all)",
        )


def _api_references(spec: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """(path inside the Pod spec, what) for each reference to an API object."""
    if spec.get("serviceAccountName") or spec.get("serviceAccount"):
        yield ("serviceAccountName" if spec.get("serviceAccountName") else "serviceAccount",), "serviceaccounts"
    for index, _ in enumerate(_list(spec.get("imagePullSecrets"))):
        yield ("imagePullSecrets", index), "secrets"
    for index, volume in enumerate(_list(spec.get("volumes"))):
        if not isinstance(volume, dict):
            continue
        for key, what in (("secret", "secrets"), ("configMap", "configmaps"), ("persistentVolumeClaim", "persistentvolumeclaims")):
            if key in volume:
                yield ("volumes", index, key), what
        projected = volume.get("projected")
        if isinstance(projected, dict):
            for source_index, source in enumerate(_list(projected.get("sources"))):
                if not isinstance(source, dict):
                    continue
                for key, what in (
                    ("secret", "secrets"), ("configMap", "configmaps"),
                    ("serviceAccountToken", "serviceaccounts"), ("clusterTrustBundle", "clustertrustbundles"),
                ):
                    if key in source:
                        yield ("volumes", index, "projected", "sources", source_index, key), what
    for group in ("initContainers", "containers"):
        for c_index, container in enumerate(_list(spec.get(group))):
            if not isinstance(container, dict):
                continue
            for e_index, env in enumerate(_list(container.get("env"))):
                value_from = env.get("valueFrom") if isinstance(env, dict) else None
                if isinstance(value_from, dict):
                    for key, what in (("secretKeyRef", "secrets"), ("configMapKeyRef", "configmaps")):
                        if key in value_from:
                            yield (group, c_index, "env", e_index, "valueFrom", key), what
            for f_index, env_from in enumerate(_list(container.get("envFrom"))):
                if isinstance(env_from, dict):
                    for key, what in (("secretRef", "secrets"), ("configMapRef", "configmaps")):
                        if key in env_from:
                            yield (group, c_index, "envFrom", f_index, key), what


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@RULE.folder_check
def check_static_folder(pods: Sequence[Manifest], context: Context) -> Iterator[tuple[Manifest, Violation]]:
    """Two files of one folder with the same Pod: the kubelet ignores the later file."""
    first: dict[tuple[str | None, str], Manifest] = {}
    for pod in sorted(pods, key=lambda p: p.path):
        key = (pod.namespace, pod.name)
        if not pod.name:
            continue
        if key in first:
            yield pod, Violation(
                ("metadata", "name"),
                f"{pod.namespace}/{pod.name} is already defined by {first[key].path}: the kubelet loads the files "
                "of its staticPodPath in name order and ignores this duplicate",
                fix="give each static Pod a unique name, or delete the stale copy",
            )
        else:
            first[key] = pod
