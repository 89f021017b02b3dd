"""Shared test helpers: lint YAML text in-process, run the real CLI in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from nodename_lint.engine import Linter
from nodename_lint.findings import Finding
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context
from tests.apiserver.fixtures import api_server as api_server  # the fixtures every API server test uses
from tests.apiserver.fixtures import kubeconfig as kubeconfig

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def lint_yaml(
    text: str,
    *,
    rules: list[str] | None = None,
    cluster=None,
    static_pod: bool = False,
    namespace: str = "default",
    static_pod_node: str | None = None,
) -> list[Finding]:
    """Findings for YAML text with the given rules (default: every rule) at default severities."""
    catalogue = all_rules()
    context = Context(cluster=cluster, default_namespace=namespace, static_pod_node=static_pod_node)
    linter = Linter(dict.fromkeys(rules or catalogue), context)
    result = linter.lint_text(textwrap.dedent(text).lstrip("\n"), is_static_pod=static_pod)
    run = linter.collect([result])
    assert not run.internal_errors, run.internal_errors  # a rule that raised must never pass as "silent"
    return run.findings


def run_cli(
    *args: str,
    cwd: Path | str | None = None,
    stdin: str | bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m nodename_lint ARGS` as a user would; text in, text out."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    data = stdin.encode() if isinstance(stdin, str) else stdin
    completed = subprocess.run(
        [sys.executable, "-m", "nodename_lint", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        env=full_env,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(
        completed.args,
        completed.returncode,
        completed.stdout.decode("utf-8", "replace"),
        completed.stderr.decode("utf-8", "replace"),
    )


# --- tests that need a tool ------------------------------------------------------------------------
# CI runs with CI=true: there a missing tool or an unreachable package index is a failure, never a
# skip. The only skips CI allows are listed here with their reason (CONTRIBUTING.md, "Skipped tests").
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
SHARED_MISSING = "../shared is not present (it exists only in the development workspace)"
ALLOWED_CI_SKIPS = {  # reason -> why CI may skip it
    SHARED_MISSING: "the shared corpus sits beside the repository in the development workspace, not in a clone",
}


def unavailable(reason: str) -> NoReturn:
    """This test cannot run here: skip with the reason on a developer's machine, fail under CI=true."""
    if IN_CI:
        pytest.fail(f"{reason}; under CI=true every tool and service a test needs must be there", pytrace=False)
    pytest.skip(reason)


def require_tool(name: str, install: str) -> str:
    """The path of a program a test needs; skips locally when it is missing (saying how to install it),
    fails under CI=true."""
    path = shutil.which(name)
    if path is None:
        unavailable(f"{name} is not installed ({install})")
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI=true a skip whose reason is not in ALLOWED_CI_SKIPS fails the test."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if reason not in ALLOWED_CI_SKIPS:
            report.outcome = "failed"
            report.longrepr = f"skipped under CI=true, which allows no skip but ALLOWED_CI_SKIPS: {reason}"


@pytest.fixture
def shared_dir() -> Path:
    """../shared beside the repository; absent in a user's clone, so tests using it skip."""
    if not SHARED.is_dir():
        pytest.skip(SHARED_MISSING)
    return SHARED


@pytest.fixture(scope="session")
def oracle() -> Path:
    """The k8s oracle binary (../shared/k8s-oracle, built once and cached): skipped without ../shared (a
    user's clone), a failure under CI=true when it cannot be built."""
    from tests.differential.oracle import OracleError, build  # startup: only the oracle tests need it

    if not SHARED.is_dir():
        pytest.skip(SHARED_MISSING)
    try:
        return build(SHARED)
    except OracleError as exc:
        unavailable(f"the k8s oracle could not be built: {exc}")
