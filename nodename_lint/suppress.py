"""Inline suppressions: `# nodename-lint: ignore[rule,...]` comments and the ignore annotation."""

from __future__ import annotations

import re

from .documents import Document
from .model import Manifest

IGNORE_ANNOTATION = "nodename-lint.io/ignore"
ALL = "*"
_DIRECTIVE = re.compile(r"#\s*nodename-lint:\s*ignore(?:\[([^\]]*)\])?")


def _rule_set(text: str | None) -> frozenset[str]:
    if text is None or not text.strip() or text.strip() in ("all", ALL):
        return frozenset({ALL})
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def comment_directives(document: Document) -> dict[int, frozenset[str]]:
    """Stream line (1-based) -> rule ids ignored by a directive comment on that line."""
    return directives_in(document.text, document.line_offset + 1)


def directives_in(text: str, first_line: int = 1) -> dict[int, frozenset[str]]:
    """Directive comments of TEXT by line (e.g. a Helm template, for the documents it renders to)."""
    if "nodename-lint:" not in text:
        return {}
    found: dict[int, frozenset[str]] = {}
    for number, line in enumerate(text.split("\n"), start=first_line):
        if "nodename-lint:" in line:
            match = _DIRECTIVE.search(line)
            if match:
                found[number] = _rule_set(match.group(1))
    return found


def ignored_by_comment(directives: dict[int, frozenset[str]], line: int, rule: str) -> bool:
    """A directive on the finding's line or on the line above silences it."""
    for candidate in (line, line - 1):
        rules = directives.get(candidate)
        if rules and (ALL in rules or rule in rules):
            return True
    return False


def annotation_ignores(obj: Manifest) -> frozenset[str]:
    """Rule ids the object's (or its Pod template's) ignore annotation silences."""
    ignored: set[str] = set()
    for metadata in (obj.metadata, obj.pod_template_metadata):
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict) and IGNORE_ANNOTATION in annotations:
            value = annotations[IGNORE_ANNOTATION]
            ignored |= _rule_set(value if isinstance(value, str) else None)
    return frozenset(ignored)
