"""Inline suppressions: `# nodename-lint: ignore[rule,...]` comments and the ignore annotation."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

from .documents import Document
from .model import Manifest

IGNORE_ANNOTATION = "nodename-lint.io/ignore"
ALL = "*"
# within one line: a directive covers its own line and the next
_DIRECTIVE = re.compile(r"#[^\S\n]*nodename-lint:[^\S\n]*ignore(?:\[([^\]\n]*)\])?")


@lru_cache(maxsize=256)  # a List repeats the same few directives on each of its items
def rule_set(text: str | None) -> frozenset[str]:
    if text is None or not text.strip() or text.strip() in ("all", ALL):
        return frozenset({ALL})
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def comment_directives(document: Document) -> dict[int, frozenset[str]]:
    """Stream line (1-based) -> rule ids ignored by a directive comment on that line.

    Found once per document and kept on it: a List of 100,000 items is one document with as many
    findings, and rescanning its text per finding made a run quadratic.
    """
    if document.directives is None:
        document.directives = directives_in(document.text, document.line_offset + 1)
    return document.directives


def directives_in(text: str, first_line: int = 1) -> dict[int, frozenset[str]]:
    """Directive comments of TEXT by line (e.g. a Helm template, for the documents it renders to)."""
    return {line: rule_set(match.group(1)) for line, match in _first_directives(text, first_line)}


def _first_directives(text: str, first_line: int) -> Iterator[tuple[int, re.Match[str]]]:
    """(line, match) of the first directive comment of each line of TEXT that has one, in order.

    The search goes on at the next line: an unclosed `ignore[` reads to its line's end, and every
    further directive on that line read it again (n squared steps on a line of them).
    """
    line, counted_to = first_line, 0
    match = _DIRECTIVE.search(text)
    while match is not None:
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        yield line, match
        line_end = text.find("\n", match.end())
        if line_end < 0:
            return
        match = _DIRECTIVE.search(text, line_end)


def ignored_by_comment(directives: dict[int, frozenset[str]], line: int, rule: str) -> bool:
    """A directive on the finding's line or on the line above silences it."""
    for candidate in (line, line - 1):
        rules = directives.get(candidate)
        if rules and (ALL in rules or rule in rules):
            return True
    return False


def comment_edit(line: str, rule: str) -> tuple[int, str] | None:
    """(column, text) to insert into LINE (without its line break) so that its ignore comment names
    RULE: a new comment at the end, or RULE added to the one there; None when that already ignores all."""
    match = _DIRECTIVE.search(line) if "nodename-lint:" in line else None
    if match is None:
        return len(line), f"  # nodename-lint: ignore[{rule}]"
    if match.group(1) is None or ALL in rule_set(match.group(1)):
        return None
    return match.end(1), f",{rule}"


def annotation_ignores(obj: Manifest) -> frozenset[str]:
    """Rule ids the object's (or its Pod template's) ignore annotation silences (read once per object)."""
    ignores: frozenset[str] = obj.memo("annotation_ignores", _annotation_ignores)
    return ignores


def _annotation_ignores(obj: Manifest) -> frozenset[str]:
    ignored: set[str] = set()
    for metadata in (obj.metadata, obj.pod_template_metadata):
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict) and IGNORE_ANNOTATION in annotations:
            value = annotations[IGNORE_ANNOTATION]
            ignored |= rule_set(value if isinstance(value, str) else None)
    return frozenset(ignored)


def unknown_ids(rules: frozenset[str], known: Iterable[str]) -> list[str]:
    """The ids of a suppression that name no rule (a typo silences nothing)."""
    known = set(known)
    return sorted(rule for rule in rules if rule != ALL and rule not in known)


def unknown_comment_ids(document: Document, known: Iterable[str]) -> Iterator[tuple[int, int, list[str]]]:
    """(line, column, unknown ids) of each directive comment that names a rule id that does not exist."""
    text = document.text
    if "nodename-lint:" not in text:
        return
    known = set(known)
    for line, match in _first_directives(text, document.line_offset + 1):
        unknown = unknown_ids(rule_set(match.group(1)), known)
        if unknown:
            yield line, match.start() - text.rfind("\n", 0, match.start()), unknown


def describe_unknown_ids(unknown: list[str], known: list[str]) -> tuple[str, str]:
    """The message and the fix of an invalid-suppression finding."""
    import difflib

    names = ", ".join(repr(rule_id) for rule_id in unknown)
    guesses = [difflib.get_close_matches(rule_id, known, n=1, cutoff=0.6) for rule_id in unknown]
    hint = "; ".join(f"did you mean {close[0]!r}?" for close in guesses if close)
    message = (
        f"the suppression names {'an unknown rule id' if len(unknown) == 1 else 'unknown rule ids'} {names}, "
        "so it silences nothing" + (f"; {hint}" if hint else "")
    )
    return message, "correct the id (see `nodename-lint rules`) or remove it from the suppression"
