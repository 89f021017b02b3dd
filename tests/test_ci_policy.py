"""Under CI=true no test skips because a tool is missing, and no skip passes unless its reason is listed.

Each case runs real pytest on a small test file with this suite's conftest as a plugin, once as on a
developer's machine and once as in CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from .conftest import ROOT, SHARED_MISSING

CASES = f"""
import pytest
from tests.conftest import require_tool


def test_needs_a_missing_tool():
    require_tool("no-such-tool-for-nodename-lint", "apt-get install nothing")


def test_skips_for_an_unlisted_reason():
    pytest.skip("the network is slow today")


def test_skips_for_the_listed_reason():
    pytest.skip({SHARED_MISSING!r})
"""


def outcomes(tmp_path: Path, ci: str | None) -> dict[str, str]:
    (tmp_path / "test_cases.py").write_text(CASES, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci is not None:
        env["CI"] = ci
    report = tmp_path / "report.xml"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.conftest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            f"--junitxml={report}",
            str(tmp_path / "test_cases.py"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.is_file(), completed.stdout + completed.stderr
    found = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        found[case.get("name", "").removeprefix("test_")] = kinds.pop() if kinds else "passed"
    return found


@pytest.mark.parametrize("ci", [None, "false"])
def test_a_developer_sees_skips_with_their_reasons(tmp_path: Path, ci: str | None) -> None:
    assert outcomes(tmp_path, ci) == {
        "needs_a_missing_tool": "skipped",
        "skips_for_an_unlisted_reason": "skipped",
        "skips_for_the_listed_reason": "skipped",
    }


def test_ci_fails_a_missing_tool_and_every_skip_it_does_not_allow(tmp_path: Path) -> None:
    assert outcomes(tmp_path, "true") == {
        "needs_a_missing_tool": "failure",
        "skips_for_an_unlisted_reason": "failure",
        "skips_for_the_listed_reason": "skipped",
    }
