"""`--changed-since REF`: keep only findings in files changed since a git commit (pull-request review),
or of objects built from a changed file.

The whole input is still linted (folder-wide static Pod checks need every file); only the report
is narrowed, so a finding in an untouched file does not block someone else's pull request.
"""

from __future__ import annotations

import os
import subprocess

from .findings import RunResult
from .sources import STDIN_NAME, UsageError


def _git(*args: str, cwd: str | None = None) -> str:
    try:
        completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise UsageError(f"--changed-since needs git: {exc.strerror or exc}") from None
    if completed.returncode != 0:
        detail = completed.stderr.strip().splitlines()
        raise UsageError(f"git {args[0]} failed: {detail[-1] if detail else 'exit ' + str(completed.returncode)}")
    return completed.stdout


def changed_files(ref: str) -> set[str]:
    """Real paths of the files that differ between the merge base of REF and HEAD and the working tree.

    Committed, staged and unstaged changes count, and so do untracked files.
    """
    top = _git("rev-parse", "--show-toplevel").strip()
    try:
        base = _git("merge-base", ref, "HEAD").strip()
    except UsageError:
        raise UsageError(
            f"--changed-since {ref}: git does not know this commit or it shares no history with HEAD; "
            "fetch it (in GitHub Actions: actions/checkout with fetch-depth: 0)"
        ) from None
    names = _git("diff", "--name-only", "-z", base, "--", cwd=top).split("\0")
    names += _git("ls-files", "--others", "--exclude-standard", "-z", cwd=top).split("\0")
    return {os.path.realpath(os.path.join(top, name)) for name in names if name}


def keep_changed_files(result: RunResult, ref: str) -> None:
    """Drop the findings of files that did not change since REF (stdin findings stay); say how many.

    A finding of a rendered object (a chart's template, an overlay's patch) counts as changed when any
    file its build read changed (Finding.inputs): a pull request that only changes values.yaml, or adds a
    packaged subchart, changes what the templates it did not touch render to.
    """
    changed = changed_files(ref)
    kept = [
        f
        for f in result.findings
        if f.file == STDIN_NAME or os.path.realpath(f.file) in changed or not f.inputs.isdisjoint(changed)
    ]
    hidden = len(result.findings) - len(kept)
    result.findings = kept
    if hidden:
        result.notes.append(f"{hidden} finding{'s' if hidden != 1 else ''} in files unchanged since {ref} not reported")
