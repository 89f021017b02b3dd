"""`nodename-lint explain RULE`: one rule's whole documentation."""

from __future__ import annotations

import sys

import click

from ..clitypes import complete_rule_ids
from ..safe_text import note
from .options import EXIT_USAGE

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


@click.command("explain")
@click.argument("rule_id", shell_complete=complete_rule_ids)
def explain_command(rule_id: str) -> None:
    """Print the whole documentation of one rule, with its examples."""
    from ..registry import all_rules

    rule = all_rules().get(rule_id)
    if rule is None:
        from ..config import did_you_mean

        note(f"unknown rule id {rule_id!r}{did_you_mean(rule_id, all_rules())} (see `nodename-lint rules`)")
        sys.exit(EXIT_USAGE)
    click.echo(rule.documentation(), nl=False)
