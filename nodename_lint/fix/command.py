"""The --fix and --diff part of a lint run: refuse what cannot be done, fix, print the diff."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

import click

from ..engine import Linter
from ..render.sandbox import file_kind
from ..safe_text import note
from ..sources import STDIN, Source, UsageError, is_inside


def keep_stdin_for_diff(sources: Iterable[Source]) -> None:
    """Hold stdin in memory when a live run (which parses it first) will also --diff it.

    --diff reads the raw bytes of each source again (it keeps their encoding), and a pipe can be
    read only once; `runner._read_stdin` rewinds the copy. Only this case swaps sys.stdin.
    """
    import io
    import sys

    if any(source.path == STDIN for source in sources) and not sys.stdin.buffer.seekable():
        sys.stdin = io.TextIOWrapper(io.BytesIO(sys.stdin.buffer.read()))


def check_fix_request(sources: Iterable[Source], *, write: bool) -> None:
    """Raise UsageError before anything is read when --fix/--diff cannot run.

    Only regular files (and stdin for --diff): `--fix <(cat f.yaml)` would drain a pipe it cannot
    write back, a FIFO without a writer would hang, and /dev/zero never ends.
    """
    option = "--fix" if write else "--diff"
    for source in sources:
        if source.path == STDIN:
            if write:
                raise UsageError(
                    "--fix cannot rewrite standard input: pass the files instead, or use --diff to see the changes"
                )
            continue
        if source.render:
            continue  # a chart or kustomization folder: built, never written (fix_sources says so)
        try:
            mode = os.stat(source.path).st_mode
        except OSError:
            continue  # the lint run reports why it cannot be read
        if not stat.S_ISREG(mode):
            raise UsageError(
                f"{option} works on regular files only: {source.display} is {file_kind(mode)}; "
                "lint it without the option, or save it to a file first"
            )


def fix_sources(linter: Linter, sources: Iterable[Source], *, write: bool, show_diff: bool, roots: list[str]) -> bool:
    """Fix every source (writing only with `write`); returns whether anything would change.

    A file whose real path (symlinks resolved) is outside ROOTS, the folders given, is never written.
    The diff goes to stdout, what was fixed and what was left (with the reason) to stderr.
    """
    from .runner import fix_source  # startup: --fix/--diff alone load the runner, checked requests fail before

    changed_files = fixes = 0
    built: list[Source] = []
    for source in sources:
        if source.render:  # a template or an overlay is not the object: a fix there could break the render
            built.append(source)
            continue
        writable = write and (source.path == STDIN or is_inside(source.path, roots))
        outcome = fix_source(linter, source, write=writable)
        if write and not writable and outcome.changed:
            note(
                f"{source.display}: not fixed: it is a symlink to {os.path.realpath(source.path)}, outside the "
                "folders given; fix that file where it lives"
            )
            continue
        if show_diff and outcome.changed:
            click.echo(outcome.diff(), nl=False)
        for message in outcome.notes:
            note(message)
        if outcome.changed:
            changed_files += 1
            fixes += len(outcome.applied)
    verb = "fixed" if write else "would fix"
    note(f"{verb} {fixes} problem{'s' * (fixes != 1)} in {changed_files} file{'s' * (changed_files != 1)}")
    for source in built:  # after the count, which they do not contradict: what is built is never rewritten
        note(f"{source.display}: {_NOT_REWRITTEN[source.render]}")
    return changed_files > 0


_NOT_REWRITTEN = {
    "helm": "a Helm chart's templates are never rewritten by --fix: what the lint run reports in the chart "
    "is left to change by hand at the template line",
    "kustomize": "a kustomization's build is never rewritten by --fix (the manifest files among the paths are "
    "fixed as files): what the lint run reports in the build is left to change by hand at the line it names",
}
