"""Documentation made from the rule catalogue (README's rule table, docs/audit.md's lists, which rule supersedes
which); nodename_lint.regenerate writes it into the pages."""

from __future__ import annotations

from .registry import all_rules
from .rule import AUDIT_ADDITIONS


def rule_table_markdown() -> str:
    rows = [
        "| id | default severity | needs cluster | --fix | what the cluster does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in all_rules().values():
        needs = ", ".join(sorted(rule.needs)) if rule.needs else "no"
        rows.append(f"| `{rule.id}` | {rule.severity} | {needs} | {'yes' if rule.fix else 'no'} | {rule.summary} |")
    return "\n".join(rows) + "\n"


def audit_not_run_markdown() -> str:
    """The rules audit does not run, with the reason each declares (Rule.not_audited)."""
    rules = sorted(all_rules().values(), key=lambda rule: rule.id)
    return "".join(f"- `{rule.id}`: {rule.not_audited}\n" for rule in rules if rule.not_audited)


def audit_additions_markdown() -> str:
    """What audit adds to each rule's finding on a bare Pod (Rule.audit_adds)."""
    rows = ["| rule | what audit adds after `In the cluster:` |", "| --- | --- |"]
    for rule in sorted(all_rules().values(), key=lambda rule: rule.id):
        if rule.audit_adds:
            rows.append(f"| `{rule.id}` | {AUDIT_ADDITIONS[rule.audit_adds]} |")
    return "\n".join(rows) + "\n"


def supersedes_markdown() -> str:
    """Which rule supersedes which (Rule.supersedes, completed by the registry)."""
    rules = sorted(all_rules().values(), key=lambda rule: rule.id)
    lines = [
        f"- `{rule.id}` supersedes {', '.join(f'`{other}`' for other in sorted(rule.supersedes))}\n"
        for rule in rules
        if rule.supersedes
    ]
    return "".join(lines) or "No rule supersedes another today.\n"
