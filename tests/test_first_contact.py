"""Issue 23, first contact: what a newcomer meets in the first minutes, each from its reproduction."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, require_tool, run_cli

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


KUSTOMIZED_DEPLOYMENT = (ROOT / "examples" / "deploy" / "web-deployment.yaml").read_text(encoding="utf-8")


def test_fix_in_a_kustomization_says_what_it_fixed_without_contradiction(tmp_path: Path) -> None:
    """The note said `app: not fixed` and then `fixed 1 problem in 1 file`, for the one file of the build."""
    require_tool("kubectl", "apt-get install kubectl (kubectl kustomize builds the overlay)")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n- web.yaml\n", encoding="utf-8")
    (tmp_path / "app" / "web.yaml").write_text(KUSTOMIZED_DEPLOYMENT, encoding="utf-8")
    before = run_cli("app", cwd=tmp_path)
    assert before.returncode == 1 and "nodename-in-template" in before.stdout, before.stdout + before.stderr
    fixed = run_cli("app", "--fix", cwd=tmp_path)
    assert "not fixed" not in fixed.stderr, fixed.stderr
    lines = [line for line in fixed.stderr.splitlines() if line.startswith("nodename-lint: ")]
    assert lines[0] == "nodename-lint: fixed 1 problem in 1 file", lines
    assert lines[1].startswith("nodename-lint: app: a kustomization's build is never rewritten by --fix")
    assert fixed.returncode == 0 and "nodename-in-template" not in fixed.stdout
    assert "kubernetes.io/hostname: worker-2" in (tmp_path / "app" / "web.yaml").read_text(encoding="utf-8")


def test_the_full_configuration_example_works_when_pasted(tmp_path: Path) -> None:
    """docs/configuration.md's example exited 2: its static-pod-dirs folder does not exist in a new repository."""
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    example = re.search(r"```yaml\n(rules:.*?)```", page, re.S)
    assert example is not None
    (tmp_path / ".nodename-lint.yaml").write_text(example.group(1), encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(DEBUG_POD, encoding="utf-8")
    result = run_cli(cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "No problems found in 1 object of 1 file." in result.stdout, "nodename-on-pod: off was read"
    assert "static-pod-dirs: nodes/control-plane/manifests does not exist: no static Pod to check there" in (
        result.stderr
    )
    (tmp_path / "nodes" / "control-plane" / "manifests").mkdir(parents=True)
    (tmp_path / "nodes" / "control-plane" / "manifests" / "etcd.yaml").write_text(DEBUG_POD, encoding="utf-8")
    with_folder = run_cli("--format", "json", cwd=tmp_path)
    assert with_folder.returncode == 0 and with_folder.stderr == "", with_folder.stderr
    assert '"files": 2' in with_folder.stdout, "the folder, once there, is read"


def test_select_and_ignore_naming_one_rule_is_a_usage_error() -> None:
    """`--select X --ignore X` ran no rule and passed."""
    for command in ([], ["audit", "--cluster-state", "examples/cluster/state.yaml"]):
        args = [*command, "--select", "nodename-on-pod,unknown-node", "--ignore", "unknown-node"]
        if not command:
            args.append("examples/deploy")
        result = run_cli(*args, cwd=ROOT)
        assert result.returncode == 2, result.stdout
        assert "--select and --ignore both name unknown-node: the rule would not run" in result.stderr
        assert result.stdout == ""


def test_explain_suggests_the_rule_id_meant() -> None:
    result = run_cli("explain", "unknown-nodes")
    assert result.returncode == 2
    assert result.stderr == (
        "nodename-lint: unknown rule id 'unknown-nodes' (did you mean 'unknown-node'?) (see `nodename-lint rules`)\n"
    )
    assert "did you mean" not in run_cli("explain", "zzz").stderr


def test_an_unwritable_report_path_fails_before_the_run(tmp_path: Path) -> None:
    """A bad --output-sarif path failed only after the text report was printed (and a live cluster read)."""
    result = run_cli("examples/deploy", "--output-sarif", str(tmp_path / "missing" / "out.sarif"), cwd=ROOT)
    assert result.returncode == 2
    assert result.stdout == "", "nothing was linted"
    assert f"{tmp_path / 'missing' / 'out.sarif'}: cannot write the sarif report: its folder does not exist" in (
        result.stderr
    )
    (tmp_path / "folder.json").mkdir()
    as_folder = run_cli("examples/deploy", "--output-json", str(tmp_path / "folder.json"), cwd=ROOT)
    assert as_folder.returncode == 2 and "is a directory" in as_folder.stderr and as_folder.stdout == ""
    audit = run_cli(
        "audit", "--cluster-state", "examples/cluster/state.yaml", "--output-sarif", "/nope/a.sarif", cwd=ROOT
    )
    assert audit.returncode == 2 and audit.stdout == "" and "its folder does not exist" in audit.stderr


def test_audit_takes_quiet_exit_zero_and_statistics() -> None:
    """A scheduled audit job needs lint's -q, --exit-zero and --statistics, with the same meaning."""
    args = ("audit", "--cluster-state", "examples/cluster/state.yaml")
    full = run_cli(*args, cwd=ROOT)
    assert full.returncode == 1 and "Found 11 problems" in full.stdout
    quiet = run_cli(*args, "-q", cwd=ROOT)
    assert quiet.returncode == 1 and "Found" not in quiet.stdout and "note:" not in quiet.stdout
    assert quiet.stdout.count("error[unknown-node]") == full.stdout.count("error[unknown-node]") > 0
    counted = run_cli(*args, "--statistics", "-q", "--exit-zero", cwd=ROOT)
    assert counted.returncode == 0
    rows = [line.split(None, 2) for line in counted.stdout.splitlines()]
    assert sum(int(count) for count, _, _ in rows) == 11
    assert any(rule == "unknown-node" for _, rule, _ in rows)
    assert run_cli(*args, "--exit-zero", "--select", "no-such-rule", cwd=ROOT).returncode == 2


def test_help_groups_the_options_with_examples_and_a_docs_link() -> None:
    """`nodename-lint --help` showed no lint option; `lint --help` was 87 ungrouped lines without an example."""
    from nodename_lint.cli import main

    lint = main.commands["lint"]
    options = {opt for param in lint.params for opt in getattr(param, "opts", []) if opt.startswith("--")}
    for args in (["--help"], ["lint", "--help"]):
        shown = run_cli(*args).stdout
        headings = [line for line in shown.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
        assert headings[:4] == ["Output:", "Exit code:", "Rules:", "Cluster (the cluster rules need one):"], headings
        assert {"Helm charts and kustomizations:", "Fix:", "Input:", "Examples:"} <= set(headings)
        assert [option for option in options if option not in shown] == []
        assert "  nodename-lint deploy/ --context kind-kind " in shown
        assert "Documentation: https://github.com/nodename-lint/nodename-lint/blob/main/docs/usage.md" in shown
        sections = shown.split("\n\n")
        for option in ("--fix", "--helm-values", "--cluster-state", "--select", "--format"):
            assert sum(f"  {option} " in section for section in sections) == 1, option
    group = run_cli("--help").stdout
    assert group.startswith("Usage: nodename-lint [OPTIONS] [PATH]...\n       nodename-lint COMMAND [ARGS]...\n")
    assert "Commands:\n  audit     Audit a running cluster's own objects.\n" in group
    audit = run_cli("audit", "--help").stdout
    assert "Documentation: https://github.com/nodename-lint/nodename-lint/blob/main/docs/audit.md" in audit
    for page in ("usage.md", "audit.md"):
        assert (ROOT / "docs" / page).is_file()
