"""
## What it does
Reports a suppression that names a rule id that does not exist: a `# nodename-lint: ignore[...]`
comment or a `nodename-lint.io/ignore` annotation with a misspelt or retired id, like ruff's
invalid-noqa. The finding says which ids are unknown and suggests the closest existing one.

## Why is this bad?
A suppression with a typo silences nothing: the finding it was meant for is still reported, or,
worse, someone "fixes" it by disabling the rule for the whole repository. And once the real
problem is gone, an unknown id in a comment is noise nobody dares to remove.

## How to fix
Correct the id (`nodename-lint rules` lists them), or remove the suppression. Use
`# nodename-lint: ignore` without a list, or the annotation value `all`, to silence every rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nodename_lint.model import Manifest, Path
from nodename_lint.rule import Context, Example, Rule, Violation
from nodename_lint.suppress import IGNORE_ANNOTATION, describe_unknown_ids, rule_set, unknown_ids

# The engine reports the comments itself (they are lines, not paths of an object); this check reads the annotation.
RULE = Rule(
    id="invalid-suppression",
    severity="warning",
    summary="A suppression comment or annotation names a rule id that does not exist: it silences nothing.",
    doc=__doc__,
    examples=(
        Example(
            "a misspelt id in a comment",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
            spec:
              # nodename-lint: ignore[nodename-on-pods]
              nodeName: kind-worker
              containers:
                - name: shell
                  image: busybox:1.37
            """,
            fails=True,
        ),
        Example(
            "a misspelt id in the annotation",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
              annotations:
                nodename-lint.io/ignore: "nodename-on-pod,unknown-nodes"
            spec:
              containers:
                - name: shell
                  image: busybox:1.37
            """,
            fails=True,
        ),
        Example(
            "existing ids, and `all`",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
              annotations:
                nodename-lint.io/ignore: all
            spec:
              # nodename-lint: ignore[nodename-on-pod, unknown-node]
              nodeName: kind-worker
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
    places: list[tuple[Path, dict[str, Any]]] = [(("metadata",), obj.metadata)]
    if obj.is_workload_template and obj.pod_spec_path:
        places.append(((*obj.pod_spec_path[:-1], "metadata"), obj.pod_template_metadata))
    for metadata_path, metadata in places:
        annotations = metadata.get("annotations")
        if not isinstance(annotations, dict) or IGNORE_ANNOTATION not in annotations:
            continue
        from nodename_lint.registry import all_rules

        known = list(all_rules())
        value = annotations[IGNORE_ANNOTATION]
        unknown = unknown_ids(rule_set(value if isinstance(value, str) else None), known)
        if unknown:
            message, fix = describe_unknown_ids(unknown, known)
            yield Violation((*metadata_path, "annotations", IGNORE_ANNOTATION), message, fix)
