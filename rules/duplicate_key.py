"""
## What it does
Reports a key written twice in the same mapping of an object (two `nodeName:` lines in one Pod
spec, two `resources:` in one container), at the occurrence that wins.

## Why is this bad?
kubectl converts YAML to JSON with sigs.k8s.io/yaml, which keeps the last value of a duplicated
key and silently drops the others: the object that reaches the cluster is not the one the earlier
lines describe, and nothing tells you. An API server that decodes the YAML itself with strict
field validation (`kubectl apply --server-side --validate=strict`, or a client sending YAML)
refuses the object instead (`duplicate field`). Either way the file says two things at once.

## How to fix
Keep one occurrence: delete the other, or merge their contents. Overriding a key brought in by a
merge key (`<<: *defaults`) is not a duplicate and is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from yaml import MappingNode, Node, ScalarNode, SequenceNode

from nodename_lint.model import Manifest, Path
from nodename_lint.podspec import dotted
from nodename_lint.rule import Context, Example, Rule, Violation
from nodename_lint.yamlnodes import is_merge_key, key_text, scalar_value

RULE = Rule(
    id="duplicate-key",
    severity="warning",
    summary="A key appears twice in one mapping: kubectl silently keeps the last value, strict validation rejects it.",
    doc=__doc__,
    not_audited="it is about a file's text, and an object read from the API has none",
    examples=(
        Example(
            "nodeName written twice: the second one wins",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
            spec:
              nodeName: worker-1
              containers:
                - name: shell
                  image: busybox:1.37
              nodeName: worker-2
            """,
            fails=True,
        ),
        Example(
            "overriding a merged key is not a duplicate",
            """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: settings
            data:
              <<: {mode: fast, level: "1"}
              level: "2"
            """,
            fails=False,
        ),
    ),
)


@RULE.check
def check(obj: Manifest, context: Context) -> Iterator[Violation]:
    for path, key, count, winner in duplicates(obj.node):
        where = f"{dotted(path[:-1])}: " if len(path) > 1 else ""
        yield Violation(
            path,
            f"{where}key {key!r} appears {count} times in this mapping: kubectl keeps only this last one "
            f"({describe(winner)}) and silently drops the other{'s' if count > 2 else ''}; an API server "
            "decoding the YAML with strict field validation rejects the object (duplicate field)",
            fix=f"keep one {key!r}: delete the other occurrence{'s' if count > 2 else ''} or merge them",
        )


def duplicates(root: Node) -> Iterator[tuple[Path, str, int, Node]]:
    """(path of the winning key, key, occurrences, winning value) of every duplicated key, in document order.

    Only the values kubectl keeps are searched further (a dropped subtree is reported once, at its
    key); each node is visited once, so aliases cannot multiply the work.
    """
    if not _may_have_duplicates(root):
        return
    seen: set[int] = set()
    stack: list[tuple[Node, Path]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            stack.extend((item, (*path, index)) for index, item in reversed(list(enumerate(node.value))))
            continue
        if not isinstance(node, MappingNode):
            continue
        pairs = node.value
        raw = {key.value for key, _ in pairs if isinstance(key, ScalarNode)}
        if len(raw) == len(pairs):  # the common case: no two keys written alike
            stack.extend((value, (*path, key.value)) for key, value in reversed(pairs))
            continue
        yield from _report(pairs, path, stack)


def _may_have_duplicates(root: Node) -> bool:
    """Whether some mapping has two keys written alike: one set of raw key texts per mapping, scalars
    never pushed, no paths built. This is all a document without duplicates costs (about 5% of a
    lint of the shared corpus); alias expansion is bounded by the document check beforehand. One
    loop per mapping both collects its keys and pushes its collections (a set and a list
    comprehension cost a fifth more).
    """
    stack = [root]
    push, pop = stack.append, stack.pop
    while stack:
        node = pop()
        if node.__class__ is MappingNode:
            pairs = node.value
            keys: set[Any] = set()
            add = keys.add
            try:
                for key, value in pairs:
                    add(key.value)
                    if value.__class__ is not ScalarNode:
                        push(value)
            except TypeError:  # a collection as a key (its value is a list): let the full walk decide
                return True
            if len(keys) != len(pairs):
                return True
        elif node.__class__ is SequenceNode:
            for item in node.value:
                if item.__class__ is not ScalarNode:
                    push(item)
    return False


def _report(
    pairs: list[tuple[Node, Node]], path: Path, stack: list[tuple[Node, Path]]
) -> Iterator[tuple[Path, str, int, Node]]:
    """Group one mapping's keys as JSON will; report the groups of two or more, push the winners."""
    groups: dict[str, list[Node]] = {}
    for key, value in pairs:
        if is_merge_key(key):
            continue  # merge keys are applied where they stand, not duplicated
        text = key_text(key)
        if text is not None:
            groups.setdefault(text, []).append(value)
    for text, values in groups.items():
        if len(values) > 1:
            yield (*path, text), text, len(values), values[-1]
    stack.extend((values[-1], (*path, text)) for text, values in reversed(list(groups.items())))


def describe(node: Node) -> str:
    """A short description of a value for the message: the scalar itself, or its kind."""
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    import json  # startup: only a duplicate key loads the encoder

    value: Any = scalar_value(node) if isinstance(node, ScalarNode) else None
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
