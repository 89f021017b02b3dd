"""What ruff and yamllint users expect: --exit-zero, --statistics, --quiet, --show-source, durations,
completion, one document per stream, progress on a terminal only, paths without `./`."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodename_lint.clitypes import parse_duration

from .conftest import ROOT, run_cli

DEPLOY = ROOT / "examples" / "deploy"
CLEAN_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: a, image: nginx}]\n"


def test_exit_zero_keeps_the_report_but_not_the_failure() -> None:
    failing = run_cli(str(DEPLOY))
    assert failing.returncode == 1
    result = run_cli(str(DEPLOY), "--exit-zero")
    assert result.returncode == 0 and result.stdout == failing.stdout
    assert run_cli(str(DEPLOY), "--exit-zero", "--select", "no-such-rule").returncode == 2, "usage errors stay 2"


def test_statistics_prints_count_rule_summary_lines() -> None:
    result = run_cli(
        "examples/cluster/manifests",
        "--cluster-state",
        "examples/cluster/state.yaml",
        "--statistics",
        "--quiet",
        cwd=ROOT,
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 1 and lines
    parsed = [re.fullmatch(r"(\d+)  (\S+) +(.+)", line) for line in lines]
    assert all(parsed), lines
    counts = [(int(match.group(1)), match.group(2)) for match in parsed if match]
    assert counts == sorted(counts, key=lambda item: (-item[0], item[1])), "most frequent first"
    full = run_cli(
        "examples/cluster/manifests", "--cluster-state", "examples/cluster/state.yaml", "--format", "json", cwd=ROOT
    )
    import json

    findings = json.loads(full.stdout)["findings"]
    by_rule = {rule: count for count, rule in counts}
    assert by_rule == {rule: sum(1 for f in findings if f["rule"] == rule) for rule in {f["rule"] for f in findings}}
    assert "unknown-node" in by_rule
    assert any(match and "PodGC deletes it" in match.group(3) for match in parsed), "the rule's summary"


def test_quiet_prints_only_findings(tmp_path: Path) -> None:
    result = run_cli(str(DEPLOY), "-q")
    assert result.returncode == 1
    assert "Found" not in result.stdout and " skipped: " not in result.stdout
    assert result.stdout.count("error[nodename-in-template]") == 1
    (tmp_path / "pod.yaml").write_text(CLEAN_POD)
    clean = run_cli(str(tmp_path), "--quiet")
    assert clean.returncode == 0 and clean.stdout == "" and clean.stderr == ""


def test_show_source_puts_a_caret_under_the_column() -> None:
    result = run_cli("examples/deploy/web-deployment.yaml", "--show-source", cwd=ROOT)
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("examples/deploy/web-deployment.yaml:17:7:"))
    assert lines[at + 1] == "  17 |       nodeName: worker-2"
    assert lines[at + 2] == "     |       ^"
    assert lines[at + 3].startswith("  fix: ")


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("5", 5.0),
        ("2.5", 2.5),
        ("5s", 5.0),
        ("1m", 60.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("1h", 3600.0),
        (".5s", 0.5),
    ],
)
def test_request_timeout_takes_kubectl_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["5x", "s", "1m5", "", "-1s", "1 m"])
def test_request_timeout_refuses_what_kubectl_refuses(text: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)
    result = run_cli(str(tmp_path), "--context", "x", "--request-timeout", text)
    assert result.returncode == 2 and "--request-timeout" in result.stderr and "Traceback" not in result.stderr


def _complete(words: str, env: dict[str, str] | None = None) -> list[str]:
    """What bash completion offers after WORDS (click's bash_complete protocol, as the shell calls it)."""
    completing = len(words.split()) - (0 if words.endswith(" ") else 1)
    result = run_cli(
        env={
            "COMP_WORDS": words,
            "COMP_CWORD": str(completing),
            "_NODENAME_LINT_COMPLETE": "bash_complete",
            **(env or {}),
        }
    )
    if result.returncode != 0:
        raise AssertionError(result.stderr)
    return [line.split(",", 1)[1] for line in result.stdout.splitlines() if line]


def test_completion_of_subcommands_rule_ids_and_contexts(tmp_path: Path) -> None:
    # run_cli runs `python -m nodename_lint`, which completes as the nodename-lint script does
    assert {"lint", "rules", "explain", "snapshot"} <= set(_complete("nodename-lint "))
    assert _complete("nodename-lint expl") == ["explain"]
    assert _complete("nodename-lint explain unknown-n") == ["unknown-node"]
    assert _complete("nodename-lint deploy --select nodename-on-pod,untol") == ["nodename-on-pod,untolerated-taint"]
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncontexts:\n- {name: kind-kind, context: {cluster: a}}\n"
        "- {name: prod-eu, context: {cluster: b}}\n"
    )
    assert _complete("nodename-lint deploy --context ", {"KUBECONFIG": str(kubeconfig)}) == ["kind-kind", "prod-eu"]
    assert _complete(f"nodename-lint deploy --kubeconfig {kubeconfig} --context pr", {"KUBECONFIG": ""}) == ["prod-eu"]
    assert _complete("nodename-lint deploy --context ", {"KUBECONFIG": str(tmp_path / "missing")}) == []


def test_completion_is_documented() -> None:
    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    for shell in ("bash_source", "zsh_source", "fish_source"):
        assert f"_NODENAME_LINT_COMPLETE={shell} nodename-lint" in usage


@pytest.mark.parametrize("formats", [["json", "sarif"], ["text", "json"], ["sarif", "github"]])
def test_a_json_or_sarif_document_must_be_alone_on_stdout(formats: list[str]) -> None:
    args = [arg for name in formats for arg in ("--format", name)]
    result = run_cli(str(DEPLOY), *args)
    assert result.returncode == 2 and result.stdout == ""
    assert "--output-" in result.stderr and "Traceback" not in result.stderr


def test_text_and_github_may_share_stdout_and_json_may_go_to_a_file(tmp_path: Path) -> None:
    assert run_cli(str(DEPLOY), "--format", "text", "--format", "github").returncode == 1
    result = run_cli(str(DEPLOY), "--format", "json", "--output-sarif", str(tmp_path / "r.sarif"))
    assert result.returncode == 1 and result.stdout.startswith("{")


def test_paths_are_printed_without_a_dot_slash_prefix(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deploy.yaml").write_text((DEPLOY / "web-deployment.yaml").read_text())
    for args in ([], ["."], ["./"], ["./sub"], ["./sub/deploy.yaml"], ["sub/"]):
        result = run_cli(*args, "-q", cwd=tmp_path)
        assert result.stdout.startswith("sub/deploy.yaml:17:7: error[nodename-in-template]"), (args, result.stdout)


def _wait_until_opened(pid: int, path: Path, limit: float = 60.0) -> None:
    """Wait until process PID has PATH open (Linux /proc): its lint has reached the file."""
    deadline = time.monotonic() + limit
    target = os.path.realpath(path)
    while time.monotonic() < deadline:
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            links = []  # the process is starting or gone; a descriptor closed while listing
        if target in links:
            return
        time.sleep(0.01)


def _lint_on_a_terminal(*args: str, hold_fifo: Path | None = None) -> str:
    """Run the CLI with stderr on a pseudo-terminal, as in an interactive shell; returns what the terminal got.

    With HOLD_FIFO (a FIFO among the ARGS), the run waits a second on it before going on: a long run,
    whatever the speed of the machine.
    """
    writer = os.open(hold_fifo, os.O_RDWR) if hold_fifo else None  # a writer exists: the lint's read waits
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nodename_lint", *args],
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        env={**os.environ, "NO_COLOR": "1"},
    )
    os.close(terminal)
    if writer is not None:
        _wait_until_opened(process.pid, hold_fifo)  # start-up alone may outlast a fixed wait on a loaded machine
        time.sleep(1.0)
        os.write(writer, CLEAN_POD.encode())
        os.close(writer)
    received = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        received += chunk
    process.wait(timeout=120)
    os.close(controller)
    return received.decode("utf-8", "replace")


def test_progress_on_a_terminal_for_long_runs_only(tmp_path: Path) -> None:
    many = tmp_path / "many"
    many.mkdir()
    text = (DEPLOY / "web-deployment.yaml").read_text()
    for index in range(40):
        (many / f"d{index:02}.yaml").write_text(text)
    fifo = tmp_path / "slow-source"
    os.mkfifo(fifo)
    shown = _lint_on_a_terminal(str(fifo), str(many), "--jobs", "1", hold_fifo=fifo)
    assert re.search(r"\rnodename-lint: \d+/41 files \(\d+%\)", shown), shown[-500:]
    assert shown.endswith("\r"), "the progress line is erased at the end"
    assert "files (" not in _lint_on_a_terminal(str(fifo), str(many), "--jobs", "1", "--quiet", hold_fifo=fifo)
    # Two files lint in milliseconds even on a loaded machine; 40 could outlast DELAY there.
    few = [str(many / "d00.yaml"), str(many / "d01.yaml")]
    assert "files (" not in _lint_on_a_terminal(*few, "--jobs", "1"), "a short run shows nothing"
    piped = subprocess.Popen(
        [sys.executable, "-m", "nodename_lint", str(fifo), str(many)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    writer = os.open(fifo, os.O_WRONLY)
    time.sleep(1.0)
    os.write(writer, CLEAN_POD.encode())
    os.close(writer)
    _, stderr = piped.communicate(timeout=120)
    assert b"files (" not in stderr, "never in a pipe or a log"


def test_explain_and_sarif_give_each_rule_its_documentation_url() -> None:
    import json

    from nodename_lint.registry import all_rules

    log = json.loads(run_cli(str(DEPLOY), "--format", "sarif").stdout)
    help_uris = {rule["id"]: rule["helpUri"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert set(help_uris) == set(all_rules())
    for rule_id in ("unknown-node", "invalid-suppression"):
        url = f"https://github.com/nodename-lint/nodename-lint/blob/main/docs/rules/{rule_id}.md"
        assert help_uris[rule_id] == url
        assert f"Documentation: {url}" in run_cli("explain", rule_id).stdout
        assert (ROOT / "docs" / "rules" / f"{rule_id}.md").is_file(), "the URL points at a page of the repository"


def test_quiet_silences_notes_but_not_errors(tmp_path: Path) -> None:
    """ruff's -q: diagnostics and nothing else. A skipped file and a skipped rule are notes; a bad
    option is an error and is still said."""
    (tmp_path / "pod.yaml").write_text(CLEAN_POD)
    (tmp_path / "root").symlink_to("/")
    state = tmp_path / "nodes.json"
    state.write_text('{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n"}}]}')
    loud = run_cli(str(tmp_path), "--cluster-state", str(state), cwd=tmp_path)
    assert "root: skipped: a symlink to /" in loud.stderr and "not linted: it is the cluster state" in loud.stdout
    assert " skipped: " in loud.stdout  # the rules needing Pods or namespaces
    quiet = run_cli(str(tmp_path), "--cluster-state", str(state), "-q", cwd=tmp_path)
    assert quiet.stderr == "" and " skipped: " not in quiet.stdout and "Found" not in quiet.stdout
    bad = run_cli(str(tmp_path), "-q", "--fail-on", "nonsense", cwd=tmp_path)
    assert bad.returncode == 2 and "nonsense" in bad.stderr
