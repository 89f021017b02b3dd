"""Shared test helpers: lint YAML text in-process, run the real CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nodename_lint.engine import Linter
from nodename_lint.findings import Finding
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context
from tests.apiserver.fixtures import api_server as api_server  # the fixtures every API server test uses
from tests.apiserver.fixtures import kubeconfig as kubeconfig

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def lint_yaml(text: str, *, rules: list[str] | None = None, cluster=None, static_pod: bool = False,
              namespace: str = "default") -> list[Finding]:
    """Findings for YAML text with the given rules (default: every rule) at default severities."""
    catalogue = all_rules()
    linter = Linter(dict.fromkeys(rules or catalogue), Context(cluster=cluster, default_namespace=namespace))
    result = linter.lint_text(textwrap.dedent(text).lstrip("\n"), is_static_pod=static_pod)
    return linter.collect([result]).findings


def run_cli(*args: str, cwd: Path | str | None = None, stdin: str | bytes | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m nodename_lint ARGS` as a user would; text in, text out."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    completed = subprocess.run(
        [sys.executable, "-m", "nodename_lint", *args], cwd=cwd, input=data, capture_output=True, env=full_env,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        completed.args, completed.returncode, completed.stdout.decode("utf-8", "replace"),
        completed.stderr.decode("utf-8", "replace"),
    )


@pytest.fixture
def shared_dir() -> Path:
    """../shared beside the repository; absent in a user's clone, so tests using it skip."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not present (it exists only in the development workspace)")
    return SHARED
