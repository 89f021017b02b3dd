"""Documentation generated from the rule catalogue (README's rule table); nodename_lint.regenerate writes it."""

from __future__ import annotations

from .registry import all_rules


def rule_table_markdown() -> str:
    rows = [
        "| id | default severity | needs cluster | --fix | what the cluster does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in all_rules().values():
        needs = ", ".join(sorted(rule.needs)) if rule.needs else "no"
        rows.append(f"| `{rule.id}` | {rule.severity} | {needs} | {'yes' if rule.fix else 'no'} | {rule.summary} |")
    return "\n".join(rows) + "\n"
