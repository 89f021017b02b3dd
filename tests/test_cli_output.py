"""Text output conventions: colour only on a terminal, NO_COLOR, --output, exit codes, --version."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from .conftest import ROOT, run_cli

ESC = "\x1b["


def _run_on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the CLI with stdout on a pseudo-terminal, as in an interactive shell."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nodename_lint", *args], stdout=follower, stderr=follower, cwd=ROOT, env=env
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_unless_no_color():
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert ESC in _run_on_a_terminal(["examples/deploy"], env)
    assert ESC not in _run_on_a_terminal(["examples/deploy"], {**env, "NO_COLOR": "1"})
    assert ESC not in run_cli("examples/deploy", cwd=ROOT, env={"NO_COLOR": ""}).stdout, "not a terminal"
    assert ESC in run_cli("examples/deploy", "--color", cwd=ROOT).stdout


def test_output_file_and_exit_codes(tmp_path):
    target = tmp_path / "report.json"
    result = run_cli("examples/deploy", "--format", "json", "--output", str(target), cwd=ROOT)
    assert result.returncode == 1 and result.stdout == ""
    report = json.loads(target.read_text())
    assert report["summary"]["errors"] == 1 and report["summary"]["infos"] == 1
    assert run_cli("examples/deploy", "--ignore", "nodename-in-template", cwd=ROOT).returncode == 0
    assert run_cli("examples/deploy", "--ignore", "nodename-in-template", "--fail-on", "info", cwd=ROOT).returncode == 1


def test_version_and_help():
    from nodename_lint import __version__

    assert run_cli("--version").stdout.strip() == f"nodename-lint, version {__version__}"
    helped = run_cli("--help")
    assert helped.returncode == 0 and "rules" in helped.stdout and "explain" in helped.stdout
    assert "--fail-on" in run_cli("lint", "--help").stdout
