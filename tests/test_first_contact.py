"""Issue 23, first contact: what a newcomer meets in the first minutes, each from its reproduction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, run_cli

DEBUG_POD = (ROOT / "examples" / "deploy" / "debug-pod.yaml").read_text(encoding="utf-8")


def run_merged(*args: str, cwd: Path) -> str:
    """stdout and stderr into one stream, as both show on a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "nodename_lint", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    ).stdout


def test_an_offline_run_ends_with_one_short_skipped_line() -> None:
    """Every offline run ended with a 325-character `Skipped ...` line naming the twelve cluster rules."""
    result = run_cli("examples/deploy", cwd=ROOT)
    last = result.stdout.splitlines()[-1]
    assert last == "12 cluster rules skipped: no cluster state (--cluster-state FILE or --context NAME)"
    assert len(last) < 100
    json_report = run_cli("examples/deploy", "--format", "json", cwd=ROOT).stdout
    assert json_report.count('"reason": "no cluster state (--cluster-state FILE or --context NAME)"') == 12


def test_a_note_is_said_once_on_a_terminal(tmp_path: Path) -> None:
    """Notes went to stderr and into the text report on stdout: twice on a terminal."""
    (tmp_path / "pod.yaml").write_text(DEBUG_POD, encoding="utf-8")
    (tmp_path / "state.yaml").write_text(
        (ROOT / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    said = "state.yaml: not linted: it is the cluster state given with --cluster-state"
    shown = run_merged(".", "--cluster-state", "state.yaml", cwd=tmp_path)
    assert shown.count(said) == 1, shown
    # a report that is a document (or one written to a file) leaves the notes to stderr, still once
    as_json = run_cli(".", "--cluster-state", "state.yaml", "--format", "json", cwd=tmp_path)
    assert as_json.stderr.count(said) == 1 and as_json.stdout.count(said) == 1  # its "notes" field
    to_file = run_cli(".", "--cluster-state", "state.yaml", "-o", "report.txt", cwd=tmp_path)
    assert to_file.stderr.count(said) == 1


def test_a_folder_without_manifests_warns_and_the_flag_fails_it(tmp_path: Path) -> None:
    """`No problems found in 0 objects`, exit 0, and nothing else: a wrong path passed CI."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "values.yaml").write_text("replicaCount: 2\n", encoding="utf-8")  # YAML, no Kubernetes object
    for path, files in (("empty", 0), ("values.yaml", 1)):
        warned = run_cli(path, cwd=tmp_path)
        assert warned.returncode == 0, warned.stderr
        assert (
            f"nodename-lint: warning: no Kubernetes objects found in {path} ({files} file{'s' * (files != 1)} read): "
            "check the paths (--fail-if-no-objects-found makes this fail the run)" in warned.stderr
        )
        quiet = run_cli(path, "-q", cwd=tmp_path)
        assert quiet.returncode == 0 and "no Kubernetes objects found" in quiet.stderr, "said even with -q"
        failing = run_cli(path, "--fail-if-no-objects-found", "--exit-zero", "--format", "json", cwd=tmp_path)
        assert failing.returncode == 1 and f"no Kubernetes objects found in {path}" in failing.stderr
    (tmp_path / "pod.yaml").write_text(DEBUG_POD, encoding="utf-8")
    found = run_cli("pod.yaml", "--fail-if-no-objects-found", cwd=tmp_path)
    assert found.returncode == 0 and found.stderr == "", "an info finding, no warning"
