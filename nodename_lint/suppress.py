"""Inline suppressions: `# nodename-lint: ignore[rule,...]` comments and the ignore annotation."""

from __future__ import annotations

import re

from .documents import Document
from .model import Manifest

IGNORE_ANNOTATION = "nodename-lint.io/ignore"
ALL = "*"
# within one line: a directive covers its own line and the next
_DIRECTIVE = re.compile(r"#[^\S\n]*nodename-lint:[^\S\n]*ignore(?:\[([^\]\n]*)\])?")


def _rule_set(text: str | None) -> frozenset[str]:
    if text is None or not text.strip() or text.strip() in ("all", ALL):
        return frozenset({ALL})
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def comment_directives(document: Document) -> dict[int, frozenset[str]]:
    """Stream line (1-based) -> rule ids ignored by a directive comment on that line.

    Found once per document and kept on it: a List of 100,000 items is one document with as many
    findings, and rescanning its text per finding made a run quadratic.
    """
    if document.directives is None:
        document.directives = _find_directives(document.text, document.line_offset)
    return document.directives


def _find_directives(text: str, line_offset: int) -> dict[int, frozenset[str]]:
    found: dict[int, frozenset[str]] = {}
    line, counted_to = line_offset + 1, 0
    for match in _DIRECTIVE.finditer(text):
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        found.setdefault(line, _rule_set(match.group(1)))
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
