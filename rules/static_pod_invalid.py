"""
## What it does
Checks files that the kubelet reads as static Pods: every non-hidden file directly inside a
folder given with `--static-pod-dir`, and every file whose path contains
`etc/kubernetes/manifests/`. It reports what would make the kubelet refuse the file or refuse
to mirror the Pod into the API:

- anything but a Pod in the file (another kind, a List): the kubelet refuses the file;
- several documents: the kubelet decodes only the first (`tryDecodeSinglePod` in
  `pkg/kubelet/config/common.go` turns the file into JSON, which keeps the first document) and
  silently ignores the others;
- references to API objects, every case of `HasAPIObjectReference` (`pkg/api/pod/util.go`): a
  ServiceAccount, Secrets (volumes, env, envFrom, imagePullSecrets, the secretRef of cephfs,
  cinder, flexVolume, rbd, scaleIO, iscsi, storageos and CSI volumes, azureFile), ConfigMaps,
  `spec.resourceClaims`, PersistentVolumeClaims (also through generic ephemeral volumes),
  inline CSI volumes, glusterfs (Endpoints), projected service account tokens,
  ClusterTrustBundles and podCertificate projections;
- ephemeral containers or scheduling gates;
- a name whose mirror Pod name `<name>-<node>` can never be valid;
- two files of one folder with the same Pod namespace and name.

## Why is this bad?
The kubelet loads one Pod per file ("Could not process manifest file" otherwise) and skips a
Pod whose name repeats one it already loaded from that folder (files are read in name order).
Only files directly inside the folder are read: the kubelet does not recurse into subfolders
("Not recursing into manifest path"), so a file in `manifests/disabled/` is never run and gets no
static Pod findings.

Static Pods run without the API server, so they may not reference API objects. The behaviour
changed by version: from 1.34 the kubelet refuses such a file (feature gate
PreventStaticPodAPIReferences, beta and on by default in 1.34-1.36, always on from 1.37): "static
pods may not reference secrets". Before 1.34 the kubelet refused only ClusterTrustBundle
projections and resourceClaims, and ran the others while the NodeRestriction admission plugin
refused their mirror Pod ("node ... can not create pods that reference ..."), so they ran
without ever showing in `kubectl get pods`.

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
    not_audited="it is about static Pod files on a node, which the API never holds",
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
    "serviceaccounts": "ServiceAccount",
    "secrets": "Secret",
    "configmaps": "ConfigMap",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "clustertrustbundles": "ClusterTrustBundle",
    "resourceclaims": "ResourceClaim",
    "csidrivers": "CSI driver",
    "endpoints": "Endpoints",
    "podcertificates": "PodCertificateRequest",
}
# What kubelets before 1.34 (PreventStaticPodAPIReferences off) refuse themselves (tryDecodeSinglePod).
_OLD_KUBELET_ERRORS = {
    "clustertrustbundles": "static pods may not use ClusterTrustBundle projected volume sources",
    "resourceclaims": "static pods may not use ResourceClaims",
}
_FIX = (
    "remove this {kind} reference: a static Pod runs without the API server; put what it needs in files on the "
    "node and mount them with hostPath"
)


def _refusal(what: str) -> str:
    """What the kubelet does with a static Pod that references `what`, by version."""
    resource = what.split(" ")[0]
    if resource in _OLD_KUBELET_ERRORS:
        older = f'kubelets before 1.34 refuse it too ("{_OLD_KUBELET_ERRORS[resource]}")'
    else:
        older = (
            'kubelets before 1.34 run it, but the API server refuses its mirror Pod (NodeRestriction: "node '
            f'... can not create pods that reference {what}"), so kubectl never shows it'
        )
    return (
        f'the kubelet refuses this static Pod ("static pods may not reference {what}": '
        f"PreventStaticPodAPIReferences, on by default from 1.34 and always from 1.37); {older}"
    )


@RULE.file_check
def check_file(objects: Sequence[Manifest], context: Context) -> Iterator[tuple[Manifest, Violation]]:
    """One Pod per file, nothing else."""
    for position, obj in enumerate(objects):
        if obj.node is not obj.document.root:
            yield (
                obj,
                Violation(
                    (),
                    "a static Pod file holds a List: the kubelet loads exactly one Pod "
                    "per file and refuses this one (Could not process manifest file)",
                    fix="put each Pod in a file of its own",
                ),
            )
            return
        if position == 0 and obj.kind != "Pod":
            yield (
                obj,
                Violation(
                    ("kind",),
                    f"a static Pod file holds a {obj.kind}: the kubelet loads only Pods from "
                    "its staticPodPath and refuses this file (Could not process manifest file); nothing runs",
                    fix="apply this object with kubectl instead, or write it as a Pod",
                ),
            )
        elif position > 0:
            yield (
                obj,
                Violation(
                    (),
                    f"a static Pod file holds several documents: the kubelet decodes only the first one "
                    f"({objects[0].kind} {objects[0].shown_name}) and silently ignores this "
                    f"{obj.kind} {obj.shown_name}, which never runs",
                    fix="put each Pod in a file of its own",
                ),
            )
    if objects and objects[0].is_pod:
        yield from ((objects[0], v) for v in _pod_violations(objects[0]))


def _pod_violations(obj: Manifest) -> Iterator[Violation]:
    spec = obj.pod_spec or {}
    for path, what in _api_references(spec):
        yield Violation(spec_path(obj, *path), _refusal(what), fix=_FIX.format(kind=_KINDS[what.split(" ")[0]]))
    for field, why in (
        ("ephemeralContainers", "static Pods cannot have ephemeral containers"),
        ("schedulingGates", "scheduling gates make no sense for a Pod the scheduler never sees"),
    ):
        if spec.get(field):
            yield Violation(
                spec_path(obj, field),
                f"{why}: the mirror Pod is refused by the API server, so the Pod never shows in kubectl",
                fix=f"remove spec.{field}",
            )
    name = obj.name
    if not name:
        yield Violation(
            ("metadata",), "the static Pod has no metadata.name: the kubelet cannot load it", fix="set metadata.name"
        )
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


# Volume sources that need no API object (the allowed cases of HasAPIObjectReference); their
# secretRef fields are caught by VisitPodSecretNames before.
_LOCAL_VOLUMES = frozenset(
    {
        "awsElasticBlockStore",
        "azureDisk",
        "cephfs",
        "cinder",
        "downwardAPI",
        "emptyDir",
        "fc",
        "flexVolume",
        "flocker",
        "gcePersistentDisk",
        "gitRepo",
        "hostPath",
        "image",
        "iscsi",
        "nfs",
        "photonPersistentDisk",
        "portworxVolume",
        "quobyte",
        "rbd",
        "scaleIO",
        "storageos",
        "vsphereVolume",
    }
)
# Volume sources whose secretRef / nodePublishSecretRef VisitPodSecretNames visits.
_SECRET_REF_VOLUMES = {
    "cephfs": "secretRef",
    "cinder": "secretRef",
    "flexVolume": "secretRef",
    "rbd": "secretRef",
    "scaleIO": "secretRef",
    "iscsi": "secretRef",
    "storageos": "secretRef",
    "csi": "nodePublishSecretRef",
}
# The other volume sources HasAPIObjectReference refuses, and how it names them.
_API_VOLUMES = {
    "csi": "csidrivers (via CSI volumes)",
    "glusterfs": "endpoints (via glusterFS volumes)",
    "persistentVolumeClaim": "persistentvolumeclaims",
    "ephemeral": "persistentvolumeclaims (via ephemeral volumes)",
    "azureFile": "secrets (via azureFile volumes)",
}
_PROJECTED = {
    "configMap": "configmaps (via projected volumes)",
    "secret": "secrets (via projected volumes)",
    "serviceAccountToken": "serviceaccounts (via projected volumes)",
    "clusterTrustBundle": "clustertrustbundles",
    "podCertificate": "podcertificates",
}


def _api_references(spec: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """(path inside the Pod spec, what) for each reference to an API object, in the order of
    `HasAPIObjectReference` (pkg/api/pod/util.go), which names the first one in the kubelet's error:
    the ServiceAccount, Secrets (VisitPodSecretNames), ConfigMaps (VisitPodConfigmapNames),
    resourceClaims, then each volume. `what` is how it would name the reference on its own."""
    for key in ("serviceAccountName", "serviceAccount"):
        if spec.get(key):
            yield (key,), "serviceaccounts"
            break
    yield from _secret_references(spec)
    yield from _configmap_references(spec)
    if spec.get("resourceClaims"):
        yield ("resourceClaims",), "resourceclaims"
    for index, volume in enumerate(_list(spec.get("volumes"))):
        if not isinstance(volume, dict):
            continue
        source = next((key for key in volume if key != "name"), None)
        if source is None or source in _LOCAL_VOLUMES or source in ("secret", "configMap"):
            continue  # a bare name defaults to emptyDir; secrets and ConfigMaps are reported above
        if source in _API_VOLUMES:
            if not (source == "azureFile" and _mapping(volume.get(source)).get("secretName")):
                yield ("volumes", index, source), _API_VOLUMES[source]
        elif source == "projected":
            for s_index, projection in enumerate(_list(_mapping(volume.get(source)).get("sources"))):
                kind = next((key for key in _mapping(projection) if key in _PROJECTED), None)
                if kind in ("clusterTrustBundle", "podCertificate", "serviceAccountToken"):
                    yield ("volumes", index, "projected", "sources", s_index, kind), _PROJECTED[kind]


def _secret_references(spec: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """VisitPodSecretNames: imagePullSecrets, container env and envFrom, and the volumes that name a Secret."""
    for index, _ in enumerate(_list(spec.get("imagePullSecrets"))):
        yield ("imagePullSecrets", index), "secrets"
    yield from _container_references(spec, "secretKeyRef", "secretRef", "secrets")
    for index, volume in enumerate(_list(spec.get("volumes"))):
        volume = _mapping(volume)
        if "secret" in volume:
            yield ("volumes", index, "secret"), "secrets"
        elif _mapping(volume.get("azureFile")).get("secretName"):
            yield ("volumes", index, "azureFile", "secretName"), "secrets"
        for source, field in _SECRET_REF_VOLUMES.items():
            if field in _mapping(volume.get(source)):
                yield ("volumes", index, source, field), "secrets"
        for s_index, projection in enumerate(_list(_mapping(volume.get("projected")).get("sources"))):
            if "secret" in _mapping(projection):
                yield ("volumes", index, "projected", "sources", s_index, "secret"), "secrets"


def _configmap_references(spec: dict[str, Any]) -> Iterator[tuple[Path, str]]:
    """VisitPodConfigmapNames: container env and envFrom, configMap volumes and projections."""
    yield from _container_references(spec, "configMapKeyRef", "configMapRef", "configmaps")
    for index, volume in enumerate(_list(spec.get("volumes"))):
        volume = _mapping(volume)
        if "configMap" in volume:
            yield ("volumes", index, "configMap"), "configmaps"
        for s_index, projection in enumerate(_list(_mapping(volume.get("projected")).get("sources"))):
            if "configMap" in _mapping(projection):
                yield ("volumes", index, "projected", "sources", s_index, "configMap"), "configmaps"


def _container_references(
    spec: dict[str, Any], key_ref: str, env_from_ref: str, what: str
) -> Iterator[tuple[Path, str]]:
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for c_index, container in enumerate(_list(spec.get(group))):
            container = _mapping(container)
            for e_index, env in enumerate(_list(container.get("envFrom"))):
                if env_from_ref in _mapping(env):
                    yield (group, c_index, "envFrom", e_index, env_from_ref), what
            for e_index, env in enumerate(_list(container.get("env"))):
                if key_ref in _mapping(_mapping(env).get("valueFrom")):
                    yield (group, c_index, "env", e_index, "valueFrom", key_ref), what


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


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
            yield (
                pod,
                Violation(
                    ("metadata", "name"),
                    f"{pod.namespace}/{pod.name} is already defined by {first[key].path}: the kubelet loads the files "
                    "of its staticPodPath in name order and ignores this duplicate",
                    fix="give each static Pod a unique name, or delete the stale copy",
                ),
            )
        else:
            first[key] = pod
