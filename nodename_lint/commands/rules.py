"""`nodename-lint rules`: the rule table."""

from __future__ import annotations

import click

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


@click.command("rules", short_help="List the rules.")
@click.option("--markdown", is_flag=True, help="Print the rule table as Markdown (as in README).")
def rules_command(markdown: bool) -> None:
    """List every rule: id, default severity, offline or cluster, fixable, summary."""
    from ..registry import all_rules

    if markdown:
        from ..docs import rule_table_markdown

        click.echo(rule_table_markdown(), nl=False)
        return
    catalogue = all_rules()
    width = max(len(rule_id) for rule_id in catalogue)
    for rule in catalogue.values():
        scope = "cluster" if rule.is_cluster_rule else "offline"
        fixable = "fix" if rule.fix else "   "
        click.echo(f"{rule.id:<{width}}  {rule.severity:<7}  {scope:<7}  {fixable}  {rule.summary}")
