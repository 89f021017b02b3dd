"""Which Pods a workload already runs, and whether a manifest's Pod template is the one they run.

A Deployment's Pods belong to its ReplicaSets (ownerReference, kind ReplicaSet, named
`<deployment>-<pod-template-hash>`), each holding the Pod template it was made from; a
StatefulSet's and a DaemonSet's Pods belong to the workload itself, and their
`controller-revision-hash` label names the ControllerRevision holding their template (the
revision's name for a StatefulSet, `<daemonset>-<label>` for a DaemonSet: `snapshot` in
pkg/controller/daemon/update.go and `history.NewControllerRevision` in
pkg/controller/history/controller_history.go).

The Deployment controller finds the ReplicaSet of a template with `EqualIgnoreHash`
(pkg/controller/deployment/util/deployment_util.go): `apiequality.Semantic.DeepEqual` of the two
templates, the `pod-template-hash` label left out. Both sides there have been through the API
server's defaulting, a manifest has not: `template_digest` takes the defaults out of both
(`SetObjectDefaults_Deployment` and friends call `SetDefaults_PodSpec`, `SetDefaults_Container`,
`SetDefaults_Probe`, `SetDefaults_Volume`... in pkg/apis/core/v1/defaults.go; `SetDefaults_Pod`,
which turns limits into requests and container ports into host ports, runs on Pods only), reads
every quantity by its value rounded up to milli units (`SetDefaults_ResourceList`, and
`Semantic.DeepEqual` compares Quantities by value), and hashes what is left. Two templates with
the same digest are the same template to the controller, with these exceptions, all of a field
that changed between absent and its zero value: Go omits `""`, `0`, `false`, `{}` and `[]` for
most fields when it encodes an object, so a missing field and its zero value compare equal here;
and the `kubectl.kubernetes.io/restartedAt` annotation `kubectl rollout restart` adds is left out,
since `kubectl apply` of a manifest without it keeps it.

Only the digest is kept: a template holds images and environment variables, and a snapshot never does.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Container, Iterable, Mapping
from typing import Any

from ..quantity import QuantityError, parse_quantity
from ..sources import DamagedState
from .records import OwnerKey, PodInfo, TemplateInfo, plain_json

DEPLOYMENT_HASH_LABEL = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
REVISION_LABEL = "controller-revision-hash"  # apps.ControllerRevisionHashLabelKey (StatefulSet and DaemonSet)
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
# The kinds whose Pods a rollout prediction follows, and the kind of the object holding their templates.
TEMPLATE_HOLDERS = {"Deployment": "ReplicaSet", "StatefulSet": "ControllerRevision", "DaemonSet": "ControllerRevision"}
HOLDER_KINDS = ("ReplicaSet", "ControllerRevision")
# What a user saves for the rollout prediction (docs/cluster-state.md).
SAVE_TEMPLATES = "add replicasets,controllerrevisions to the kubectl get command"
# SafeEncodeString's alphabet (k8s.io/apimachinery/pkg/util/rand): a pod-template-hash is made of it.
_HASH_ALPHABET = frozenset("bcdfghjklmnpqrstvwxz2456789")


def owner_key(kind: str, name: str) -> OwnerKey:
    return f"{kind}/{name}"


def split_key(key: OwnerKey) -> tuple[str, str]:
    kind, _, name = key.partition("/")
    return kind, name


def controller_reference(metadata: Any) -> OwnerKey | None:
    """The "Kind/name" of an object's controller ownerReference (controller: true), if any."""
    references = metadata.get("ownerReferences") if isinstance(metadata, dict) else None
    for reference in references if isinstance(references, list) else ():
        if isinstance(reference, dict) and reference.get("controller") is True:
            kind, name = reference.get("kind"), reference.get("name")
            if isinstance(kind, str) and isinstance(name, str) and kind and name:
                return sys.intern(owner_key(kind, name))  # shared by the Pods of one controller
    return None


def template_key(owner: OwnerKey | None, revision: Any) -> OwnerKey | None:
    """The object that holds the template a controller's Pod was made from (see the module docstring).

    `revision` is the Pod's `controller-revision-hash` label (StatefulSet and DaemonSet Pods).
    """
    if owner is None:
        return None
    kind, name = split_key(owner)
    if kind == "ReplicaSet":
        return owner
    if kind in ("StatefulSet", "DaemonSet") and isinstance(revision, str) and revision:
        return owner_key("ControllerRevision", revision if kind == "StatefulSet" else f"{name}-{revision}")
    return None


InUse = Mapping[str, Container[OwnerKey]]  # namespace -> the "Kind/name" of the templates its Pods run


def templates_in_use(pods: Iterable[PodInfo]) -> dict[str, set[OwnerKey]]:
    """The templates the Pods run, by namespace: the only holders worth reading."""
    used: dict[str, set[OwnerKey]] = {}
    for pod in pods:
        if pod.template is not None:
            keys = used.get(pod.namespace)
            if keys is None:
                keys = used[pod.namespace] = set()
            keys.add(pod.template)
    return used


def pod_owner(metadata: Any) -> tuple[OwnerKey | None, OwnerKey | None]:
    """(owner, template key) of a Pod from its metadata."""
    owner = controller_reference(metadata)
    if owner is None:
        return None, None
    labels = metadata.get("labels")
    revision = labels.get(REVISION_LABEL) if isinstance(labels, dict) else None
    return owner, template_key(owner, revision)


def deployment_of_replicaset(replicaset: str) -> str | None:
    """The Deployment a ReplicaSet's name says it belongs to: the Deployment controller names them
    `<deployment>-<pod-template-hash>` (`getNewReplicaSet` in pkg/controller/deployment/sync.go)."""
    deployment, dash, suffix = replicaset.rpartition("-")
    if dash and deployment and 0 < len(suffix) <= 10 and set(suffix) <= _HASH_ALPHABET:
        return deployment
    return None


def holder_from_object(obj: Any, used: InUse | None = None) -> tuple[str, OwnerKey, TemplateInfo] | None:
    """(namespace, "Kind/name", the template) of a ReplicaSet or ControllerRevision object, None for
    another object, one without a template, or one no Pod runs (`used`: templates_in_use; a
    Deployment keeps ten old ReplicaSets, and keeping them costs)."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    if kind not in HOLDER_KINDS or not isinstance(metadata, dict):
        return None
    name = metadata.get("name")
    namespace = metadata.get("namespace") or "default"
    if not isinstance(name, str) or not name or not isinstance(namespace, str):
        return None
    if used is not None and owner_key(kind, name) not in used.get(namespace, ()):
        return None
    if kind == "ReplicaSet":
        spec = obj.get("spec")
        template = spec.get("template") if isinstance(spec, dict) else None
    else:  # getPatch: {"spec": {"template": {..., "$patch": "replace"}}}
        data = obj.get("data")
        spec = data.get("spec") if isinstance(data, dict) else None
        template = spec.get("template") if isinstance(spec, dict) else None
    if not isinstance(template, dict):
        return None
    info = TemplateInfo(controller_reference(metadata), template=_compact(template))
    return namespace, owner_key(kind, name), info


# --- the digest -----------------------------------------------------------------------------------
def template_digest(template: dict[str, Any], *, owned: bool = False) -> str:
    """The Pod template with the API server's defaults taken out, hashed (see the module docstring).

    `owned`: the template is the caller's to change (an object read for this alone), so it is not
    copied first. "" for a template nested too deeply to read (no API object is): it equals no other.
    """
    try:
        return _digest(template, owned)
    except RecursionError:
        return ""


def _digest(template: dict[str, Any], owned: bool) -> str:
    metadata = template.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    spec = template.get("spec")
    normalized = {
        "labels": _strings(metadata.get("labels"), DEPLOYMENT_HASH_LABEL),
        "annotations": _strings(metadata.get("annotations"), RESTARTED_AT),
        "spec": _clean(_pod_spec(spec if owned else _copy(spec))) if isinstance(spec, dict) else None,
    }
    import hashlib  # startup: OpenSSL's hashes, 3 ms a run against a cluster state, for a run that compares templates

    return hashlib.sha256(_encoded(normalized)).hexdigest()[:32]


def digest_of_json(template: bytes) -> str:
    """template_digest of a template kept as compact JSON (records.TemplateInfo): `_compact`'s, or a JSON dump's
    bytes as the file has them, read as the generic reader reads a file and kept as it keeps a template when
    msgspec refuses them (1e999, which the generic reader reads as inf and `_compact` writes as null)."""
    import msgspec

    try:
        value = msgspec.json.decode(template)
    except msgspec.DecodeError:
        try:
            value = plain_json(_compact(plain_json(template)))
        except DamagedState as exc:  # a dump's ReplicaSet template, kept raw
            raise DamagedState(f"a Pod template of a ReplicaSet is {exc}") from None
    except RecursionError:
        return ""
    return template_digest(value, owned=True) if isinstance(value, dict) else ""


def digest(info: TemplateInfo) -> str:
    """A held template's digest (computed when first asked)."""
    return info.digest(digest_of_json)


def _compact(template: dict[str, Any]) -> bytes:
    """A template as compact JSON to keep until it is compared (a fraction of the objects' memory)."""
    import msgspec

    try:
        return msgspec.json.encode(template)
    except (TypeError, OverflowError, ValueError, RecursionError):
        return json.dumps(template, default=str).encode("utf-8", "surrogatepass")


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    """A copy to change, as plain JSON values (a manifest's odd scalars, such as huge numbers, as text)."""
    import msgspec

    try:
        copied: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(value))
    except (TypeError, OverflowError, ValueError):
        copied = json.loads(json.dumps(value, default=str))
    return copied


def _encoded(value: Any) -> bytes:
    """Canonical JSON: keys sorted, no spaces."""
    import msgspec

    try:
        return msgspec.json.encode(value, order="sorted")
    except (TypeError, OverflowError, ValueError):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode(
            "utf-8", "surrogatepass"
        )


def _strings(mapping: Any, left_out: str) -> dict[str, str] | None:
    """Labels or annotations as the strings the API holds, one key left out; an empty map is no map."""
    if not isinstance(mapping, dict):
        return None
    kept = {
        str(key): json.dumps(value) if isinstance(value, (int, float, bool)) else str(value)
        for key, value in mapping.items()
        if key != left_out and value is not None
    }
    return kept or None


def _clean(value: Any) -> Any:
    """None, "", 0, false, {} and [] dropped from mappings (see the module docstring); lists keep their positions."""
    if isinstance(value, dict):
        cleaned = {str(key): _clean(item) for key, item in value.items()}
        return {key: item for key, item in cleaned.items() if not _is_zero(item)}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, float) and value.is_integer() and math.isfinite(value):
        return int(value)
    return value


def _is_zero(value: Any) -> bool:
    return value is None or (not value and isinstance(value, (str, int, float, dict, list)))


def _drop(mapping: Any, key: str, default: Any) -> None:
    """A defaulted field at its default value is as good as absent."""
    if isinstance(mapping, dict) and mapping.get(key) == default:
        del mapping[key]


def _each(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _at(mapping: Any, *path: str) -> Any:
    for key in path:
        mapping = mapping.get(key) if isinstance(mapping, dict) else None
    return mapping


def _quantities(mapping: Any, key: str) -> None:
    """SetDefaults_ResourceList: each quantity rounded up to milli units, compared by value."""
    block = mapping.get(key) if isinstance(mapping, dict) else None
    if isinstance(block, dict):
        mapping[key] = {resource: _quantity(amount) for resource, amount in block.items()}


_QUANTITIES: dict[tuple[Any, bool], Any] = {}  # the templates of a cluster repeat a few quantities


def _quantity(amount: Any, milli: bool = True) -> Any:
    if amount.__class__ is str:
        key = (amount, milli)
        found = _QUANTITIES.get(key)
        if found is None:
            found = _exact_quantity(amount, milli)
            if len(_QUANTITIES) < 10_000:
                _QUANTITIES[key] = found
        return found
    return _exact_quantity(amount, milli)


def _exact_quantity(amount: Any, milli: bool) -> Any:
    try:
        exact = parse_quantity(amount)
    except QuantityError:
        return amount  # the API server refuses it: as written
    if milli:
        millis = math.ceil(exact * 1000) if exact >= 0 else math.floor(exact * 1000)  # RoundUp: away from zero
        return f"{millis}m"
    return f"{exact.numerator}/{exact.denominator}"


def _divisor(selector: Any) -> None:
    """A resourceFieldRef's divisor is a Quantity: compared by value."""
    if isinstance(selector, dict) and "divisor" in selector:
        selector["divisor"] = _quantity(selector["divisor"], milli=False)


def _pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """SetDefaults_PodSpec and the defaulters the generated SetObjectDefaults_* call for a template's spec
    (changed in place)."""
    for key, default in (
        ("dnsPolicy", "ClusterFirst"),
        ("restartPolicy", "Always"),
        ("terminationGracePeriodSeconds", 30),
        ("schedulerName", "default-scheduler"),
    ):
        _drop(spec, key, default)
    # The v1 conversion keeps the deprecated serviceAccount equal to serviceAccountName (either sets both).
    account = spec.pop("serviceAccount", None)
    if account and not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = account
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in _each(spec.get(key)):
            _container(container)
    for volume in _each(spec.get("volumes")):
        _volume(volume)
    _quantities(spec, "overhead")
    for key in ("limits", "requests"):
        _quantities(spec.get("resources"), key)
    return spec


def _pull_policy(image: Any) -> str:
    """SetDefaults_Container: Always for the tag latest (or no tag and no digest), else IfNotPresent
    (`parsers.ParseImageName`)."""
    if not isinstance(image, str):
        return "IfNotPresent"
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    if not tag and not digest:
        tag = "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _http_get(handler: Any) -> None:
    action = handler.get("httpGet") if isinstance(handler, dict) else None
    _drop(action, "path", "/")
    _drop(action, "scheme", "HTTP")


def _container(container: dict[str, Any]) -> None:
    """SetDefaults_Container, the ports' protocol, fieldRef apiVersion, SetDefaults_Probe, the hooks' httpGet."""
    _drop(container, "imagePullPolicy", _pull_policy(container.get("image")))
    _drop(container, "terminationMessagePath", "/dev/termination-log")
    _drop(container, "terminationMessagePolicy", "File")
    for port in _each(container.get("ports")):
        _drop(port, "protocol", "TCP")
    for variable in _each(container.get("env")):
        _drop(_at(variable, "valueFrom", "fieldRef"), "apiVersion", "v1")
        _divisor(_at(variable, "valueFrom", "resourceFieldRef"))
    resources = container.get("resources")
    for key in ("limits", "requests"):
        _quantities(resources, key)
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(key)
        if isinstance(probe, dict):
            for field, default in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1)):
                _drop(probe, field, default)
            _drop(probe, "failureThreshold", 3)
            _http_get(probe)
    lifecycle = container.get("lifecycle")
    for key in ("postStart", "preStop"):
        _http_get(_at(lifecycle, key))


_VOLUME_DEFAULTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "secret": (("defaultMode", 420),),
    "configMap": (("defaultMode", 420),),
    "downwardAPI": (("defaultMode", 420),),
    "projected": (("defaultMode", 420),),
    "iscsi": (("iscsiInterface", "default"),),
    "rbd": (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring")),
    "azureDisk": (("cachingMode", "ReadWrite"), ("fsType", "ext4"), ("kind", "Shared")),
    "scaleIO": (("storageMode", "ThinProvisioned"), ("fsType", "xfs")),
}


def _volume(volume: dict[str, Any]) -> None:
    """SetDefaults_Volume and the volume sources' defaulters."""
    for source, defaults in _VOLUME_DEFAULTS.items():
        for field, default in defaults:
            _drop(volume.get(source), field, default)
    for item in _each(_at(volume, "downwardAPI", "items")):
        _drop(item.get("fieldRef"), "apiVersion", "v1")
        _divisor(item.get("resourceFieldRef"))
    for projection in _each(_at(volume, "projected", "sources")):
        for item in _each(_at(projection, "downwardAPI", "items")):
            _drop(item.get("fieldRef"), "apiVersion", "v1")
            _divisor(item.get("resourceFieldRef"))
        _drop(projection.get("serviceAccountToken"), "expirationSeconds", 3600)
    empty_dir = volume.get("emptyDir")
    if isinstance(empty_dir, dict) and "sizeLimit" in empty_dir:
        empty_dir["sizeLimit"] = _quantity(empty_dir["sizeLimit"], milli=False)
    claim = _at(volume, "ephemeral", "volumeClaimTemplate", "spec")
    _drop(claim, "volumeMode", "Filesystem")
    for key in ("limits", "requests"):
        _quantities(_at(claim, "resources"), key)
    image = volume.get("image")
    if isinstance(image, dict):
        _drop(image, "pullPolicy", _pull_policy(image.get("reference")))


# --- which of a state's Pods are a workload's ---------------------------------------------------------
def workload_of(owner: OwnerKey, holder: TemplateInfo | None) -> tuple[OwnerKey, bool] | None:
    """(the workload a Pod with this controller belongs to, whether that is certain), or None.

    A StatefulSet's or DaemonSet's Pods name it. A Deployment's Pods name one of its ReplicaSets:
    certain when the ReplicaSet is known (`holder`, whose own controller names the Deployment),
    else taken from the ReplicaSet's name (`deployment_of_replicaset`).
    """
    kind, name = split_key(owner)
    if kind in ("StatefulSet", "DaemonSet"):
        return owner, True
    if kind != "ReplicaSet":
        return None
    if holder is not None:
        return (holder.workload, True) if holder.workload and holder.workload.startswith("Deployment/") else None
    deployment = deployment_of_replicaset(name)
    return (owner_key("Deployment", deployment), False) if deployment else None
