"""--fix and --diff through the real command line: what is written, what is not, exit codes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from nodename_lint.fix import runner
from tests.conftest import require_tool, run_cli

GOLDEN = Path(__file__).parent / "golden"


def copy_case(tmp_path: Path, case: str, name: str = "manifest.yaml") -> Path:
    target = tmp_path / name
    shutil.copyfile(GOLDEN / f"{case}.before.yaml", target)
    return target


def after(case: str) -> bytes:
    return (GOLDEN / f"{case}.after.yaml").read_bytes()


def test_diff_prints_a_patch_and_writes_nothing(tmp_path: Path) -> None:
    target = copy_case(tmp_path, "template-comments")
    before, mtime = target.read_bytes(), target.stat().st_mtime_ns
    completed = run_cli("--diff", "manifest.yaml", cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.startswith("--- manifest.yaml\n+++ manifest.yaml\n@@ ")
    assert "-      nodeName: worker-2   # the only node with the SSD\n" in completed.stdout
    assert "would fix 1 problem in 1 file" in completed.stderr
    assert (target.read_bytes(), target.stat().st_mtime_ns) == (before, mtime)
    # the diff is a real patch: applying it gives exactly what --fix writes
    patch = require_tool("patch", "apt-get install patch")
    subprocess.run([patch, "-s", "-p0"], input=completed.stdout.encode(), cwd=tmp_path, check=True)
    assert target.read_bytes() == after("template-comments")


def test_diff_of_a_clean_file_is_empty_with_exit_0(tmp_path: Path) -> None:
    target = tmp_path / "clean.yaml"
    target.write_bytes(after("template-comments"))
    completed = run_cli("--diff", str(target))
    assert (completed.returncode, completed.stdout) == (0, "")


def test_fix_writes_then_reports_what_remains(tmp_path: Path) -> None:
    target = copy_case(tmp_path, "invalid-node-name")
    completed = run_cli("--fix", "--format", "json", str(target))
    assert target.read_bytes() == after("invalid-node-name")
    assert "fixed 3 problems in 1 file" in completed.stderr
    assert "invalid-node-name not fixed: 'Worker_2' is not a valid node name" in completed.stderr
    assert completed.returncode == 1  # Worker_2 is still an error
    assert '"rule": "invalid-node-name"' in completed.stdout and "Worker_2" in completed.stdout
    assert completed.stdout.count('"rule": "invalid-node-name"') == 1


def test_fix_exit_code_follows_the_remaining_findings(tmp_path: Path) -> None:
    target = copy_case(tmp_path, "template-comments")
    completed = run_cli("--fix", str(target))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert target.read_bytes() == after("template-comments")


def test_fix_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    target = copy_case(tmp_path, "mirror-pod")
    run_cli("--fix", str(target))
    first = target.read_bytes()
    inode = target.stat().st_ino
    completed = run_cli("--fix", str(target))
    assert "fixed 0 problems in 0 files" in completed.stderr
    assert target.read_bytes() == first == after("mirror-pod")
    assert target.stat().st_ino == inode  # not even rewritten


def test_fix_keeps_mode_and_crlf_and_replaces_atomically(tmp_path: Path) -> None:
    target = copy_case(tmp_path, "crlf")
    os.chmod(target, 0o640)
    inode = target.stat().st_ino
    run_cli("--fix", str(target))
    assert target.read_bytes() == after("crlf")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # a new file renamed over the old one, not rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.yaml"]  # no temporary file left


def test_fix_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = copy_case(tmp_path, "template-flow", "real.yaml")
    link = tmp_path / "link.yaml"
    link.symlink_to(real.name)
    run_cli("--fix", str(link))
    assert link.is_symlink() and real.read_bytes() == after("template-flow")


def test_fix_keeps_a_utf8_byte_order_mark(tmp_path: Path) -> None:
    target = tmp_path / "bom.yaml"
    target.write_bytes(b"\xef\xbb\xbf" + (GOLDEN / "template-flow.before.yaml").read_bytes())
    run_cli("--fix", str(target))
    assert target.read_bytes() == b"\xef\xbb\xbf" + after("template-flow")


def test_a_failed_write_leaves_the_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = copy_case(tmp_path, "template-flow")
    before = target.read_bytes()

    def failing_replace(source: str, destination: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner.os, "replace", failing_replace)
    with pytest.raises(OSError):
        runner.write_atomic(str(target), b"new content")
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.yaml"]


def test_fix_refuses_stdin_and_diff_accepts_it() -> None:
    text = (GOLDEN / "template-comments.before.yaml").read_text()
    refused = run_cli("--fix", "-", stdin=text)
    assert refused.returncode == 2
    assert "--fix cannot rewrite standard input" in refused.stderr and "Traceback" not in refused.stderr
    shown = run_cli("--diff", "-", stdin=text)
    assert shown.returncode == 1
    assert shown.stdout.startswith("--- <stdin>\n+++ <stdin>\n")
    assert "+      nodeSelector:   # the only node with the SSD\n" in shown.stdout


def test_a_fix_that_would_not_read_back_exactly_is_refused(tmp_path: Path) -> None:
    # the anchor lives on the nodeName line: removing it would orphan the alias below
    target = tmp_path / "anchored.yaml"
    target.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
        "    spec:\n      nodeName: &node worker-2\n      containers: [{name: a, image: b, args: [*node]}]\n"
    )
    before = target.read_bytes()
    completed = run_cli("--fix", str(target))
    assert target.read_bytes() == before
    assert "nodename-in-template not fixed" in completed.stderr and "change it by hand" in completed.stderr
    assert completed.returncode == 1


def test_linting_never_imports_the_fix_machinery_or_ruamel(tmp_path: Path) -> None:
    target = copy_case(tmp_path, "template-affinity-new")
    script = (
        "import sys\nfrom click.testing import CliRunner\nfrom nodename_lint.cli import main\n"
        f"CliRunner().invoke(main, [{str(target)!r}])\n"
        "assert not [m for m in sys.modules if m.startswith(('ruamel', 'nodename_lint.fix'))], 'fix code loaded'\n"
        f"CliRunner().invoke(main, ['--diff', {str(target)!r}])\n"
        "assert 'ruamel.yaml' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_unknown_node_fix_with_a_cluster_state_file(tmp_path: Path) -> None:
    target = copy_case(tmp_path, "unknown-node")
    state = GOLDEN / "unknown-node.cluster.yaml"
    without_state = run_cli("--diff", str(target))
    assert "kind-wroker" not in without_state.stdout  # no cluster state: unknown-node cannot run, so no fix
    completed = run_cli("--fix", "--cluster-state", str(state), str(target))
    assert target.read_bytes() == after("unknown-node")
    assert (
        "unknown-node not fixed: node kind-wrker3 is equally close to kind-worker, kind-worker2 and "
        "kind-worker4: set the one you mean" in completed.stderr
    )
    assert completed.returncode == 1  # kind-wrker3 still names no node
    assert "unknown-node" in completed.stdout and "kind-wrker3" in completed.stdout


TYPO_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  nodeName: kind-wroker
  containers:
    - name: shell
      image: busybox
      resources: {requests: {cpu: CPU}}
"""


@pytest.mark.parametrize(("cpu", "code"), [("100m", 0), ("3500m", 1)], ids=["clean-once-fixed", "fixed-node-too-small"])
def test_fix_against_a_live_context_reports_what_a_second_run_reports(
    tmp_path: Path, api_server, kubeconfig: Path, cpu: str, code: int
) -> None:
    """Issue 23: `--fix --context` reported the findings from before the fix (exit 1; a second run exited 0).

    The fixed node name (kind-worker) was not among the nodes the first read fetched Pods for: its
    3500m request only fails against kind-worker's 3150m free once the cluster is read for it."""
    target = tmp_path / "pod.yaml"
    target.write_text(TYPO_POD.replace("CPU", cpu), encoding="utf-8")
    args = ("--kubeconfig", str(kubeconfig), "--context", "kind-kind", str(target))
    fixing = run_cli("--fix", *args)
    assert "fixed 1 problem in 1 file" in fixing.stderr, fixing.stderr
    assert "nodeName: kind-worker\n" in target.read_text(encoding="utf-8")
    second = run_cli(*args)
    assert (fixing.returncode, fixing.stdout) == (second.returncode, second.stdout) == (code, second.stdout)
    assert "unknown-node" not in fixing.stdout
    assert ("insufficient-resources" in fixing.stdout) == (code == 1), fixing.stdout
    assert api_server.methods == {"GET"}
