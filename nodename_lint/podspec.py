"""What every rule may read of an object's Pod spec, offline or against a cluster.

The boundary: an offline rule (no `needs`) runs in a run that loads no cluster code, so it may
import this module, `model`, `rule` and (in a fixer) `fix.edits`, never `scheduling`, `quantity`,
`preemption` or `cluster/` (tests/test_cluster_rules.py). A reader that an offline rule and the cluster code both
need lives here, once: the pinned node, paths inside the spec, the required node affinity's terms
and the node names they allow, how messages name an object's Pods, name validation.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .model import Manifest, Path

NODE_NAME = "nodeName"
HOSTNAME_LABEL = "kubernetes.io/hostname"
DNS1123_SUBDOMAIN_MAX = 253
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
DNS1123_SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


DNS1123_LABEL_MAX = 63
DNS1123_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def is_dns1123_label(value: str) -> bool:
    """A namespace name as the API server accepts it (apimachinery IsDNS1123Label)."""
    return len(value) <= DNS1123_LABEL_MAX and re.fullmatch(_DNS1123_LABEL, value) is not None


def dns1123_label_error(value: str) -> str | None:
    """The API server's validation message for a bad namespace name, or None when it is valid."""
    if len(value) > DNS1123_LABEL_MAX:
        return f"must be no more than {DNS1123_LABEL_MAX} characters"
    if re.fullmatch(_DNS1123_LABEL, value) is None:
        return DNS1123_LABEL_ERROR
    return None


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN.fullmatch(value) is not None


def dns1123_subdomain_error(value: str) -> str | None:
    """The API server's validation message for a bad name, or None when the name is valid."""
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
    if _DNS1123_SUBDOMAIN.fullmatch(value) is None:
        return DNS1123_SUBDOMAIN_ERROR
    return None


def node_name_value(obj: Manifest) -> Any:
    """spec.nodeName of the object's Pod spec as written (None when absent or no Pod spec)."""
    return obj.pod_spec_field(NODE_NAME)


def pinned_node(obj: Manifest) -> str | None:
    """The node an object pins its Pods to: a non-empty string spec.nodeName, else None."""
    value = node_name_value(obj)
    return value if isinstance(value, str) and value else None


def spec_path(obj: Manifest, *rest: str | int) -> Path:
    """A path inside the object's Pod spec, e.g. spec_path(obj, "nodeName")."""
    return (*(obj.pod_spec_path or ()), *rest)


@lru_cache(maxsize=1024)  # the same few paths, for every object of a big List
def dotted(path: Path) -> str:
    """A path the way kubectl explain and API errors write it: spec.template.spec.nodeName."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


# --- how messages name an object's Pods (one wording for offline and cluster rules) ---------------
# Where each controller keeps the number of Pods it runs at once.
_REPLICA_FIELDS = {
    "Deployment": ("spec", "replicas"),
    "ReplicaSet": ("spec", "replicas"),
    "StatefulSet": ("spec", "replicas"),
    "ReplicationController": ("spec", "replicas"),
    "Job": ("spec", "parallelism"),
    "CronJob": ("spec", "jobTemplate", "spec", "parallelism"),
}


_JOB_SPEC = {"Job": ("spec",), "CronJob": ("spec", "jobTemplate", "spec")}
DEFAULT_BACKOFF_LIMIT = 6  # SetDefaults_Job, when backoffLimitPerIndex is not set


def rejection_fate(obj: Manifest) -> str:
    """What follows a kubelet rejection: a Pod stays Failed; a controller keeps replacing it, and a Job's
    controller only until its backoffLimit (job_failure_limit)."""
    if obj.is_pod:
        return "the Pod goes to Failed and is never retried or moved"
    limit = job_failure_limit(obj)
    if limit is None:
        return "rejected Pods go to Failed and the controller keeps creating replacements that fail the same way"
    return (
        "rejected Pods go to Failed and the Job controller creates replacements, each after a longer delay, "
        f"that fail the same way: {limit}"
    )


def job_failure_limit(obj: Manifest) -> str | None:
    """When a Job's controller stops replacing its failed Pods (None for other kinds).

    syncJob (pkg/controller/job/job_controller.go): the Job fails once more Pods failed than backoffLimit
    allows; a Pod the kubelet rejects is one, and so is one PodGC marks Failed before it deletes it; each
    replacement waits longer (10 s, doubling, up to 6 min).
    """
    job_spec = _JOB_SPEC.get(obj.kind)
    if job_spec is None:
        return None
    per_index = obj.get((*job_spec, "backoffLimitPerIndex"))
    if isinstance(per_index, int) and not isinstance(per_index, bool) and per_index >= 0:
        limit = f"each index fails once {per_index + 1} of its Pods have failed (backoffLimitPerIndex {per_index})"
    else:
        written = obj.get((*job_spec, "backoffLimit"))
        allowed = written if isinstance(written, int) and not isinstance(written, bool) and written >= 0 else None
        count = DEFAULT_BACKOFF_LIMIT if allowed is None else allowed
        limit = (
            f"the Job fails with BackoffLimitExceeded once {count + 1} Pods have failed "
            f"(backoffLimit {count}{' by default' if allowed is None else ''})"
        )
    policy = " unless its podFailurePolicy ignores such failures" if obj.get((*job_spec, "podFailurePolicy")) else ""
    each = "; each Job the schedule starts fails the same way" if obj.kind == "CronJob" else ""
    return f"{limit}{policy}{each}"


def replica_count(obj: Manifest) -> int:
    """How many Pods of the object run at once (1 for a Pod or a DaemonSet's one node)."""
    path = _REPLICA_FIELDS.get(obj.kind)
    if path is None:
        return 1
    value = obj.get(path)
    if value is None:
        return 1
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 1


def pods_noun(obj: Manifest, count: int | None = None) -> str:
    """How messages name the Pods of an object: "Pod bigcpu", "the 3 replicas of Deployment web"."""
    if obj.is_pod:
        return f"Pod {obj.shown_name}"
    count = replica_count(obj) if count is None else count
    if obj.kind in ("Job", "CronJob"):
        return f"the Pods of {obj.kind} {obj.shown_name}"
    if obj.kind == "DaemonSet":
        return f"the Pod of DaemonSet {obj.shown_name}"
    return f"the {count} replica{'s' if count != 1 else ''} of {obj.kind} {obj.shown_name}"


# --- required node affinity ---------------------------------------------------------------------
REQUIRED_NODE_AFFINITY: Path = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
NODE_NAME_FIELD = "metadata.name"  # the one field a matchFields requirement may name


def required_node_selector_terms(spec: dict[str, Any]) -> list[Any] | None:
    """The nodeSelectorTerms of the required node affinity (ORed; GetRequiredNodeAffinity in
    component-helpers `scheduling/corev1/nodeaffinity`): None when no required node affinity is set,
    [] when it lists no term (then no node matches)."""
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node_affinity.get(REQUIRED_NODE_AFFINITY[2]) if isinstance(node_affinity, dict) else None
    if not isinstance(required, dict):
        return None
    terms = required.get("nodeSelectorTerms")
    return terms if isinstance(terms, list) else []


def required_node_names(spec: dict[str, Any]) -> frozenset[str] | None:
    """The node names the required node affinity allows through `matchFields` `metadata.name` `In`
    (what NodeAffinity's PreFilter narrows the scheduler's search to): None when some term names no
    node that way (then any node may match). Each term allows the intersection of its `In` values,
    the terms the union; an empty result: the terms conflict, no node matches.
    """
    terms = required_node_selector_terms(spec)
    if not terms:
        return None
    names: set[str] = set()
    for term in terms:
        fields = term.get("matchFields") if isinstance(term, dict) else None
        allowed: set[str] | None = None
        for requirement in fields if isinstance(fields, list) else []:
            if (
                isinstance(requirement, dict)
                and requirement.get("key") == NODE_NAME_FIELD
                and requirement.get("operator") == "In"
            ):
                values = {str(v) for v in requirement.get("values") or [] if v is not None}
                allowed = values if allowed is None else allowed & values
        if allowed is None:
            return None
        names |= allowed
    return frozenset(names)
