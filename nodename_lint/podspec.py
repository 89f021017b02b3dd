"""Small readers shared by rules: the pinned node of an object and Kubernetes name validation."""

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
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL)
DNS1123_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def is_dns1123_label(value: str) -> bool:
    """A namespace name as the API server accepts it (apimachinery IsDNS1123Label)."""
    return len(value) <= DNS1123_LABEL_MAX and _DNS1123_LABEL_RE.fullmatch(value) is not None


def dns1123_label_error(value: str) -> str | None:
    """The API server's validation message for a bad namespace name, or None when it is valid."""
    if len(value) > DNS1123_LABEL_MAX:
        return f"must be no more than {DNS1123_LABEL_MAX} characters"
    if _DNS1123_LABEL_RE.fullmatch(value) is None:
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


def workload_noun(obj: Manifest) -> str:
    """How messages name the Pods an object creates ("every replica of Deployment web")."""
    if obj.kind == "DaemonSet":
        return f"the Pods of DaemonSet {obj.shown_name}"
    if obj.kind in ("Job", "CronJob"):
        return f"every Pod of {obj.kind} {obj.shown_name}"
    return f"every replica of {obj.kind} {obj.shown_name}"
