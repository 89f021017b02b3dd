"""The --fix and --diff part of a lint run: refuse what cannot be done, fix, print the diff."""

from __future__ import annotations

from collections.abc import Iterable

import click

from ..engine import Linter
from ..sources import STDIN, Source, UsageError


def check_fix_request(sources: Iterable[Source], *, write: bool) -> None:
    """Raise UsageError before anything is read when --fix/--diff cannot run."""
    if write and any(source.path == STDIN for source in sources):
        raise UsageError(
            "--fix cannot rewrite standard input: pass the files instead, or use --diff to see the changes"
        )


def fix_sources(linter: Linter, sources: Iterable[Source], *, write: bool, show_diff: bool) -> bool:
    """Fix every source (writing only with `write`); returns whether anything would change.

    The diff goes to stdout, what was fixed and what was left (with the reason) to stderr.
    """
    from .runner import fix_source  # startup: --fix/--diff alone load the runner, checked requests fail before

    changed_files = fixes = 0
    for source in sources:
        if source.render:  # a template or an overlay is not the object: a fix there could break the render
            kind = "Helm chart templates are" if source.render == "helm" else "a kustomization's build is"
            click.echo(f"nodename-lint: {source.display}: not fixed: {kind} never changed by --fix; "
                       "change the template or overlay at the line the lint run reports", err=True)
            continue
        outcome = fix_source(linter, source, write=write)
        if show_diff and outcome.changed:
            click.echo(outcome.diff(), nl=False)
        for note in outcome.notes:
            click.echo(f"nodename-lint: {note}", err=True)
        if outcome.changed:
            changed_files += 1
            fixes += len(outcome.applied)
    verb = "fixed" if write else "would fix"
    click.echo(f"nodename-lint: {verb} {fixes} problem{'s' * (fixes != 1)} in {changed_files} "
               f"file{'s' * (changed_files != 1)}", err=True)
    return changed_files > 0
