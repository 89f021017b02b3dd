"""
## What it does
Checks the `metadata.namespace` and `metadata.name` of every object that runs Pods (Pod,
Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController,
PodTemplate): the namespace must be a lowercase RFC 1123 label (at most 63 characters), the
name a lowercase RFC 1123 subdomain (at most 253).

## Why is this bad?
The API server validates both in `ValidateObjectMeta` (apimachinery
`pkg/api/validation/objectmeta.go`: `ValidateNamespaceName` is `NameIsDNSLabel`, and these
kinds validate their names with `NameIsDNSSubdomain`) and refuses the whole object: `kubectl
apply` fails with `metadata.namespace: Invalid value` or `metadata.name: Invalid value`.

A namespace such as `kube-system/secrets` or `../../apis` is also a path: nodename-lint never
puts such a value into a request to a live cluster (the object is reported here instead), so a
manifest cannot steer what the tool reads.

## How to fix
Write the namespace as `kubectl get namespaces` prints it, and a name of lowercase letters,
digits, `-` and `.`.
"""

from collections.abc import Iterator

from nodename_lint.documents import template_hint
from nodename_lint.model import Manifest
from nodename_lint.podspec import dns1123_label_error, dns1123_subdomain_error
from nodename_lint.rule import Context, Example, Rule, Violation

RULE = Rule(
    id="invalid-object-name",
    severity="error",
    summary="metadata.namespace or metadata.name is not a valid name: the API rejects the object.",
    doc=__doc__,
    examples=(
        Example(
            "a namespace that is a path",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
              namespace: kube-system/secrets
            spec:
              containers:
                - name: shell
                  image: busybox:1.37
            """,
            fails=True,
        ),
        Example(
            "an upper-case name",
            """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: Web_Frontend
            spec:
              selector:
                matchLabels: {app: web}
              template:
                metadata:
                  labels: {app: web}
                spec:
                  containers:
                    - name: nginx
                      image: nginx:1.27.3-alpine
            """,
            fails=True,
        ),
        Example(
            "valid names",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug.worker-2
              namespace: kube-system
            spec:
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
    if obj.pod_spec_path is None:
        return
    for key, kind, validate in (
        ("namespace", "namespace", dns1123_label_error),
        ("name", f"{obj.kind} name", dns1123_subdomain_error),
    ):
        value = obj.metadata.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            yield Violation(
                ("metadata", key),
                f"metadata.{key} must be a string, not {type(value).__name__} "
                f"{value!r}: the API server refuses the object when decoding it",
                fix=f"quote the {kind}",
            )
            continue
        error = validate(value)
        if error is not None:
            yield Violation(
                ("metadata", key),
                f'metadata.{key}: Invalid value: "{value}": {error}; the API server refuses the object',
                fix=template_hint(value)
                or f"write the {kind} in lowercase letters, digits and '-'" + ("" if key == "namespace" else " or '.'"),
            )
