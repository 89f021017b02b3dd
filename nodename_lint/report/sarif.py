"""`--format sarif`: SARIF 2.1.0 for code-scanning tools (GitHub's upload-sarif and others).

Files are named relative to the repository root (uriBaseId %SRCROOT%), so the results match the
repository's files wherever the tool ran. partialFingerprints hash the rule, the file, the object
and the text of the flagged line, not the line number, so a finding keeps its identity when
unrelated lines above it move.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from .. import __version__
from ..findings import Finding, RunResult
from ..registry import all_rules
from ..rule import Rule
from ..safe_text import one_line
from ..sources import repository_root
from .encoding import indented_json
from .locations import PROJECT_URL, relative_uri, repository_path, root_uri, rule_doc_url

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "nodenameLint/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def render(result: RunResult, *, color: bool = False) -> str:
    root = repository_root()
    catalogue = all_rules()
    rule_index = {rule_id: index for index, rule_id in enumerate(catalogue)}
    fingerprints = _Fingerprints(root)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "nodename-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": PROJECT_URL,
                "rules": [_descriptor(rule) for rule in catalogue.values()],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": root_uri(root)}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(finding, rule_index, root, fingerprints) for finding in result.findings],
        "invocations": [_invocation(result, rule_index)],
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return indented_json(log, len(result.findings))


def _descriptor(rule: Rule) -> dict[str, Any]:
    documentation = rule.documentation()
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _section(rule.doc, "What it does") or rule.summary},
        "help": {"text": documentation, "markdown": documentation},
        "helpUri": rule_doc_url(rule.id),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["kubernetes", "cluster" if rule.is_cluster_rule else "offline"]},
    }


def _section(doc: str, heading: str) -> str:
    """The text under `## HEADING` of a rule's Markdown documentation, as one paragraph."""
    match = re.search(rf"^##\s+{re.escape(heading)}\s*$(.*?)(?=^##\s|\Z)", doc, re.M | re.S)
    return " ".join(match.group(1).split()) if match else ""


def _result(finding: Finding, rule_index: dict[str, int], root: str, fingerprints: _Fingerprints) -> dict[str, Any]:
    # code scanning shows these texts as they are: ESC, BEL or a bidi override becomes a visible escape
    message = one_line(finding.message + (f" Fix: {finding.fix}" if finding.fix else ""))
    file, line, column = finding.code_host_location()  # a rendered stream's finding goes to its template
    path = repository_path(file, root) if finding.in_file else None
    uri = path and relative_uri(path)
    location: dict[str, Any] = {}
    if finding.in_file:  # an audit finding names a cluster object only: no file, no region
        artifact: dict[str, Any] = (
            {"uri": uri, "uriBaseId": SRCROOT} if uri else {"description": {"text": one_line(finding.file)}}
        )
        location["physicalLocation"] = {
            "artifactLocation": artifact,
            "region": {"startLine": line, "startColumn": column},
        }
    if finding.object is not None:
        name = finding.object.describe() if finding.in_file else finding.object.key()
        location["logicalLocations"] = [
            {"name": one_line(finding.object.shown_name), "fullyQualifiedName": one_line(name), "kind": "object"}
        ]
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprints.of(finding, uri)},
    }
    if finding.rule in rule_index:
        result["ruleIndex"] = rule_index[finding.rule]
    if finding.template:
        result["properties"] = {"template": one_line(finding.template)}
    return result


def _invocation(result: RunResult, rule_index: dict[str, int]) -> dict[str, Any]:
    """The run's own messages: rules that did not run and why, internal errors."""
    invocation: dict[str, Any] = {"executionSuccessful": not result.internal_errors}
    skipped = [
        {
            "level": "note",
            "message": {"text": one_line(f"{rule_id} did not run: {reason}")},
            "associatedRule": {"id": rule_id, "index": rule_index[rule_id]},
        }
        for rule_id, reason in result.skipped_rules.items()
    ]
    if skipped:
        invocation["toolConfigurationNotifications"] = skipped
    if result.notes:
        invocation["toolExecutionNotifications"] = [
            {"level": "warning", "message": {"text": one_line(note)}} for note in result.notes
        ]
    return invocation


class _Fingerprints:
    """Stable identities: hash of rule, file, object and flagged line text, plus an occurrence count."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.lines: dict[str, list[str]] = {}
        self.seen: dict[str, int] = {}

    def of(self, finding: Finding, uri: str | None) -> str:
        obj = finding.object
        identity = f"{obj.kind}/{obj.namespace or ''}/{obj.name}" if obj is not None else ""
        line_text = self._line_text(*finding.code_host_location()[:2]) if uri else ""
        key = "\0".join((finding.rule, uri or finding.file, identity, line_text))
        # surrogatepass: a name from a JSON cluster state may hold a lone surrogate, which only the bytes hashed keep
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        occurrence = self.seen.get(digest, 0) + 1
        self.seen[digest] = occurrence
        return f"{digest}:{occurrence}"

    def _line_text(self, file: str, line: int) -> str:
        """The flagged line without surrounding blanks; empty for stdin or an unreadable file."""
        if file not in self.lines:
            try:
                with open(file, encoding="utf-8-sig", errors="replace") as handle:
                    self.lines[file] = handle.read().splitlines()
            except OSError:
                self.lines[file] = []
        lines = self.lines[file]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""
