"""The kubeconfig as kubectl finds and merges it: which files, which context, which cluster.

Resolved here (before the client loads it) so that each mistake gets a clear message naming the
file, and so that every secret is known to the Redactor before any text can quote it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import yaml

from .errors import ClusterUnavailable
from .redaction import Redactor


# --- kubeconfig resolution, as kubectl does it ----------------------------------------------------
@dataclass
class Kubeconfig:
    """The merged kubeconfig files and the context chosen from them."""

    paths: list[str]
    context: str
    cluster: str
    namespace: str | None
    insecure: bool
    cluster_entry: dict[str, Any]  # the `cluster:` mapping of the chosen cluster
    cluster_folder: str  # the folder of the file that defines it: relative paths start there
    user_entry: Any  # the users[] entry the context names (None: none), as written
    user_folder: str
    every_file_has_a_config: bool  # the client's own loader refuses an empty file


def kubeconfig_paths(flag: str | None) -> list[str]:
    """--kubeconfig, else every file of KUBECONFIG that exists, else ~/.kube/config."""
    if flag:
        if not os.path.isfile(flag):
            raise ClusterUnavailable(f"--kubeconfig {flag}: no such file")
        return [flag]
    env = os.environ.get("KUBECONFIG")
    if env:
        paths = [path for path in env.split(os.pathsep) if path and os.path.isfile(os.path.expanduser(path))]
        if not paths:
            raise ClusterUnavailable(f"none of the files in KUBECONFIG exists ({env})")
        return [os.path.expanduser(path) for path in paths]
    default = os.path.expanduser(os.path.join("~", ".kube", "config"))
    if not os.path.isfile(default):
        raise ClusterUnavailable(
            f"no kubeconfig: {default} does not exist and KUBECONFIG is not set "
            "(use --kubeconfig FILE, or --in-cluster inside a Pod)"
        )
    return [default]


def resolve_kubeconfig(paths: list[str], wanted_context: str | None, redact: Redactor) -> Kubeconfig:
    """Merge the files like kubectl: the first file to define a name or current-context wins."""
    contexts: dict[str, dict[str, Any]] = {}
    clusters: dict[str, tuple[dict[str, Any], str]] = {}
    users: dict[str, tuple[dict[str, Any], str]] = {}
    current = ""
    every_file_has_a_config = True
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except OSError as exc:
            raise ClusterUnavailable(f"kubeconfig {path}: cannot read it: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
            raise ClusterUnavailable(f"kubeconfig {path}{where}: not valid YAML") from None
        if data is None:
            every_file_has_a_config = False
            continue
        if not isinstance(data, dict):
            raise ClusterUnavailable(
                f"kubeconfig {path}: not a kubeconfig (expected a mapping with clusters, users, contexts)"
            )
        base = os.path.dirname(os.path.abspath(path))
        for entry in data.get("users") or []:
            if isinstance(entry, dict):
                redact.add_user(entry, base)
                if isinstance(entry.get("name"), str):
                    users.setdefault(entry["name"], (entry, base))
        for entry in data.get("contexts") or []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                value = entry.get("context")
                contexts.setdefault(entry["name"], value if isinstance(value, dict) else {})
        for entry in data.get("clusters") or []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                value = entry.get("cluster")
                clusters.setdefault(entry["name"], (value if isinstance(value, dict) else {}, base))
        if not current and isinstance(data.get("current-context"), str):
            current = data["current-context"]
    where = os.pathsep.join(paths)
    name = wanted_context or current
    available = ", ".join(sorted(contexts)) or "none"
    if not name:
        raise ClusterUnavailable(
            f"kubeconfig {where} has no current-context; pick one with --context NAME (contexts: {available})"
        )
    if name not in contexts:
        raise ClusterUnavailable(f"context {name!r} is not in kubeconfig {where} (contexts: {available})")
    context = contexts[name]
    cluster_name = context.get("cluster")
    if not isinstance(cluster_name, str) or cluster_name not in clusters:
        raise ClusterUnavailable(
            f"context {name!r} in kubeconfig {where} names cluster {cluster_name!r}, which is not defined there"
        )
    cluster, cluster_folder = clusters[cluster_name]
    namespace = context.get("namespace") if isinstance(context.get("namespace"), str) else None
    user_name = context.get("user")
    user, user_folder = users.get(user_name, (None, "")) if isinstance(user_name, str) else (None, "")
    return Kubeconfig(
        paths,
        name,
        cluster_name,
        namespace or None,
        cluster.get("insecure-skip-tls-verify") is True,
        cluster,
        cluster_folder,
        user,
        user_folder,
        every_file_has_a_config,
    )
