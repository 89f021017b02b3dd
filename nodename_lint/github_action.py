"""The GitHub Action's lint step (action.yml runs `python -m nodename_lint.github_action`).

It turns the action's inputs (INPUT_* variables) into one `nodename-lint` run that writes four
reports at once: annotations on stdout (the runner turns them into PR annotations), SARIF for
code scanning, a Markdown job summary appended to $GITHUB_STEP_SUMMARY, and JSON whose counts
become step outputs. With only-changed, the pull request's base commit comes from the event
payload (or GITHUB_BASE_REF): annotations, summary, outputs and exit status cover only the files
the pull request changes, while the SARIF file keeps every finding (a partial upload would close
the alerts of the other files).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .cli import main as cli
from .commands.options import EXIT_USAGE
from .safe_text import note
from .sources import UsageError
from .writing import make_parent_folders

TRUE_VALUES = ("true", "yes", "1", "on")
NO_COMMIT = "0" * 40


def action_input(name: str) -> str:
    """An input as action.yml passes it: INPUT_FAIL_ON for `fail-on`; empty when not given."""
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()


def _commit_exists(ref: str) -> bool:
    return (
        subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], capture_output=True, check=False
        ).returncode
        == 0
    )


def pull_request_base(event: dict, base_ref: str) -> str | None:
    """The commit the pull request (or push) is compared with, as git knows it here; None when unknown.

    The payload's pull_request.base.sha first, then origin/$GITHUB_BASE_REF, then the push's `before`.
    """
    candidates = [((event.get("pull_request") or {}).get("base") or {}).get("sha")]
    if base_ref:
        candidates += [f"origin/{base_ref}", base_ref]
    before = event.get("before")
    if before and before != NO_COMMIT:
        candidates.append(before)
    return next((ref for ref in candidates if ref and _commit_exists(ref)), None)


def lint_arguments(sarif_file: str, markdown_file: str, json_file: str) -> list[str]:
    """The nodename-lint command line for the action's inputs; the paths come last, after `--`."""
    args = [
        "--format",
        "github",
        "--output-sarif",
        sarif_file,
        "--output-markdown",
        markdown_file,
        "--output-json",
        json_file,
    ]
    for name in ("config", "fail-on", "cluster-state", "context", "kubeconfig"):
        value = action_input(name)
        if value:
            args += [f"--{name}", value]
    if action_input("only-changed").lower() in TRUE_VALUES:
        event_path = os.environ.get("GITHUB_EVENT_PATH", "")
        event = (
            json.loads(Path(event_path).read_text(encoding="utf-8"))
            if event_path and os.path.isfile(event_path)
            else {}
        )
        base = pull_request_base(event, os.environ.get("GITHUB_BASE_REF", ""))
        if base is None:
            print(
                "::warning title=nodename-lint::only-changed: the pull request's base commit is not in this "
                "checkout (use actions/checkout with fetch-depth: 0); reporting every file"
            )
        else:
            args += ["--changed-since", base]
    return [*args, "--", *input_paths()]


def input_paths() -> list[str]:
    """The `paths` input: one path per line, kept whole (spaces included); `.` when empty.

    After `--`, a line such as `x.yaml --fix` is a file name, never an option.
    """
    raw = os.environ.get("INPUT_PATHS", "")
    return [line.strip() for line in raw.splitlines() if line.strip()] or ["."]


def _run_cli(args: list[str]) -> int:
    try:
        cli.main(args, prog_name="nodename-lint")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    return 0


def _append(path: str, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def main() -> int:
    sarif_file = action_input("sarif-file") or os.path.join(os.environ.get("RUNNER_TEMP", "."), "nodename-lint.sarif")
    with tempfile.TemporaryDirectory(prefix="nodename-lint-") as scratch:
        markdown_file, json_file = os.path.join(scratch, "summary.md"), os.path.join(scratch, "report.json")
        try:  # a sarif-file in the workspace: a pull request may have put a symlink on its way
            make_parent_folders(sarif_file)
            code = _run_cli(lint_arguments(sarif_file, markdown_file, json_file))
        except (UsageError, OSError) as exc:
            note(str(exc) if isinstance(exc, UsageError) else f"{sarif_file}: cannot create its folder: {exc.strerror}")
            code = EXIT_USAGE
        outputs = {"exit-code": str(code)}
        if os.path.isfile(json_file) and os.path.getsize(json_file):  # no reports after a usage error
            summary = json.loads(Path(json_file).read_text(encoding="utf-8"))["summary"]
            outputs.update(
                {
                    "sarif-file": os.path.abspath(sarif_file),
                    "findings": str(summary["findings"]),
                    "errors": str(summary["errors"]),
                    "warnings": str(summary["warnings"]),
                    "infos": str(summary["infos"]),
                }
            )
            _append(os.environ.get("GITHUB_STEP_SUMMARY", ""), Path(markdown_file).read_text(encoding="utf-8"))
    _append(os.environ.get("GITHUB_OUTPUT", ""), "".join(f"{name}={value}\n" for name, value in outputs.items()))
    return code


if __name__ == "__main__":
    sys.exit(main())
