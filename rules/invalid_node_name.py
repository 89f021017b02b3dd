"""
## What it does
Checks that `spec.nodeName` (in a Pod or a Pod template) is a valid node name: a string that is
a lowercase RFC 1123 subdomain of at most 253 characters.

## Why is this bad?
The API server validates `spec.nodeName` with `ValidateNodeName` (`ValidatePodSpec` in
`pkg/apis/core/validation/validation.go`) and refuses the whole object: `kubectl apply` fails
with `spec.nodeName: Invalid value` and nothing is created. A workload is refused the same way:
its Pod template is validated with the same `ValidatePodSpec` (`ValidatePodTemplateSpec`), so
the Deployment itself is refused with `spec.template.spec.nodeName: Invalid value` and no Pod
is ever created. A number or a list where the name should be fails even earlier, when the
request is decoded. With a cluster state, the closest existing node names are suggested
(`unknown-node` stays silent for such a name: the object never reaches the scheduler or PodGC).

## How to fix
Write the node's name exactly as `kubectl get nodes` prints it: node names are lowercase.
`nodename-lint --fix` lowercases the name when that makes it valid; with a cluster state it does
so only when a node of that name exists.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nodename_lint.documents import template_hint
from nodename_lint.model import Manifest
from nodename_lint.podspec import dns1123_subdomain_error, dotted, is_dns1123_subdomain, node_name_value, spec_path
from nodename_lint.rule import Context, Example, Rule, Violation, later

if TYPE_CHECKING:  # mypy reads these; a run binds the cluster modules on first use (rule.later)
    from nodename_lint.cluster import names
    from nodename_lint.fix.edits import FixStep
else:  # startup: offline runs never load the cluster code (tests/test_cluster_rules.py)
    names = later("nodename_lint.cluster.names", globals())


RULE = Rule(
    id="invalid-node-name",
    severity="error",
    summary="spec.nodeName is not a valid node name (lowercase RFC 1123 subdomain): the API rejects the object.",
    doc=__doc__,
    fix="lowercases the name when the result is valid (and, with cluster state, names a real node).",
    examples=(
        Example(
            "an upper-case node name",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
            spec:
              nodeName: Worker_2
              containers:
                - name: shell
                  image: busybox:1.37
            """,
            fails=True,
        ),
        Example(
            "a valid node name",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
            spec:
              nodeName: worker-2.example.com
              containers:
                - name: shell
                  image: busybox:1.37
            """,
            fails=False,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    value = node_name_value(obj)
    if value is None or value == "":
        return
    error = dns1123_subdomain_error(value) if isinstance(value, str) else None
    if isinstance(value, str) and error is None:
        return  # a valid name (the common case): no message to build
    path = spec_path(obj, "nodeName")
    field = dotted(path)
    refused = f"the API server refuses {obj.kind} {obj.shown_name} itself and nothing is created"
    if not isinstance(value, str):
        yield Violation(
            path,
            f"{field} must be a string, not {type(value).__name__} {value!r}: {refused} when decoding it",
            fix="quote the node name as kubectl get nodes prints it",
        )
        return
    lowered = value.lower()
    fix = (
        f"node names are lowercase: use {lowered!r}"
        if is_dns1123_subdomain(lowered)
        else "use the node's name exactly as kubectl get nodes prints it"
    )
    cluster = context.cluster
    if cluster is not None and cluster.nodes is not None:
        suggestions = names.closest_node_names(value, cluster.nodes)
        if suggestions:
            fix = f"did you mean {' or '.join(suggestions)}? ({fix})"
    yield Violation(
        path,
        f'{field}: Invalid value: "{value}": {error}; {refused} (kubectl apply fails)',
        fix=template_hint(value) or fix,
    )


@RULE.fixer
def fix(obj: Manifest, context: Context) -> Iterator[FixStep]:
    # startup: only --fix and --diff load the edits
    from nodename_lint.fix.edits import SetValue, Unfixable

    value = node_name_value(obj)
    if not isinstance(value, str) or value == "" or is_dns1123_subdomain(value):
        return
    lowered = value.lower()
    cluster = context.cluster
    if not is_dns1123_subdomain(lowered):
        yield Unfixable(
            f"{value!r} is not a valid node name in lowercase either; write the name kubectl get nodes prints"
        )
    elif cluster is not None and cluster.nodes is not None and lowered not in cluster.nodes:
        yield Unfixable(f"no node named {lowered!r} in the cluster state from {cluster.source}")
    else:
        yield SetValue(spec_path(obj, "nodeName"), lowered)
