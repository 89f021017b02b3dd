"""`--format json`: a stable machine-readable document (fields documented in README)."""

from __future__ import annotations

from .. import __version__
from ..findings import RunResult
from .encoding import indented_json


def render(result: RunResult, *, color: bool = False) -> str:
    counts = result.counts()
    document = {
        "version": __version__,
        "findings": [finding.to_json() for finding in result.findings],
        "summary": {
            "files": result.files,
            **({"cluster": result.cluster} if result.cluster else {}),
            "objects": result.objects,
            "findings": len(result.findings),
            "errors": counts["error"],
            "warnings": counts["warning"],
            "infos": counts["info"],
            "skipped_rules": [{"rule": rule, "reason": reason} for rule, reason in result.skipped_rules.items()],
            "notes": list(result.notes),
        },
    }
    return indented_json(document, len(result.findings))
