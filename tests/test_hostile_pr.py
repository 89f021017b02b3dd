"""A pull request written by an attacker gets a report, and nothing else (issue 10).

Each test plants what a pull request can contain (file names, symlinks, config files, manifest
values) and runs the real command line over it; tests/test_action.py runs action.yml's own steps
over a workspace with planted Python modules, tests/test_live_hostile.py covers the live mode.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .conftest import run_cli

PINNED_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  nodeName: worker-1\n  containers: []\n"
# A workflow command a runner would obey if it started a line of stdout or stderr.
INJECTED = "::stop-commands::pwned"
LEGITIMATE_COMMAND = re.compile(r"::(error|warning|notice) file=[^:]*,line=\d+,col=\d+,title=nodename-lint [a-z-]+::")


def assert_no_injected_command(*outputs: str) -> None:
    """No line starts a workflow command other than the annotations --format github writes."""
    for output in outputs:
        for line in output.splitlines():
            assert not line.startswith("::") or LEGITIMATE_COMMAND.match(line), f"injected command: {line!r}"
            assert INJECTED not in line or not line.startswith(INJECTED)


def test_file_names_cannot_inject_workflow_commands_on_stdout_or_stderr(tmp_path: Path):
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / f"evil\n{INJECTED}\n.yaml").write_text(
        PINNED_POD.replace("worker-1", f'"w\\n{INJECTED}"'), encoding="utf-8"
    )
    os.mkfifo(deploy / f"fifo\n{INJECTED}.yaml")
    os.symlink("missing", deploy / f"dangling\r\n{INJECTED}.yaml")
    (tmp_path / f"{INJECTED}.yaml").write_text(PINNED_POD, encoding="utf-8")
    for output_format in ("github", "text", "markdown"):
        completed = run_cli("--format", output_format, "deploy", f"{INJECTED}.yaml", cwd=tmp_path)
        assert completed.returncode == 1, completed.stderr
        assert_no_injected_command(completed.stdout, completed.stderr)
        assert "deploy/evil\\x0a" in completed.stdout, "the file is reported, its name escaped"
        assert "fifo\\x0a::stop-commands::pwned.yaml: skipped: not a regular file" in completed.stderr
        assert "dangling\\x0d\\x0a::stop-commands::pwned.yaml: skipped" in completed.stderr


def test_a_rule_that_raises_makes_the_run_exit_2_naming_the_rule_and_object(tmp_path: Path, monkeypatch, capsys):
    import json

    from nodename_lint.commands.options import EXIT_USAGE
    from nodename_lint.commands.run import run_lint
    from nodename_lint.registry import all_rules
    from nodename_lint.rule import ObjectRuleCheck

    def broken(obj, context):
        raise KeyError("a bug")
        yield

    monkeypatch.setattr(all_rules()["nodename-on-pod"], "checks", [ObjectRuleCheck("object", broken)])
    (tmp_path / "pod.yaml").write_text(PINNED_POD, encoding="utf-8")
    sarif, report = tmp_path / "out.sarif", tmp_path / "out.json"
    code = run_lint(
        paths=[str(tmp_path / "pod.yaml")],
        formats=["text"],
        output=None,
        fail_on=None,
        config_path=None,
        select=[],
        ignore=[],
        namespace=None,
        static_pod_dirs=[],
        color=False,
        outputs={"sarif": str(sarif), "json": str(report)},
    )
    assert code == EXIT_USAGE, "a crash must not read as clean"
    stderr = capsys.readouterr().err
    assert "internal error in rule nodename-on-pod on Pod default/a at " in stderr and "pod.yaml:1" in stderr
    assert "KeyError" in stderr
    assert json.loads(sarif.read_text())["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert json.loads(report.read_text())["summary"]["notes"][0].startswith("internal error in rule nodename-on-pod")


def test_the_test_helpers_fail_on_a_rule_that_raises(monkeypatch):
    import pytest

    from nodename_lint.registry import all_rules
    from nodename_lint.rule import ObjectRuleCheck

    from .conftest import lint_yaml

    def broken(obj, context):
        raise ValueError("a bug")
        yield

    monkeypatch.setattr(all_rules()["nodename-on-pod"], "checks", [ObjectRuleCheck("object", broken)])
    with pytest.raises(AssertionError, match="internal error in rule nodename-on-pod"):
        lint_yaml(PINNED_POD, rules=["nodename-on-pod"])


# --- leaving the repository ----------------------------------------------------------------------------
def _outside(tmp_path: Path) -> Path:
    """A folder beside the repository with a manifest the run must never read or write."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(PINNED_POD.replace("name: a", "name: outside-secret"), encoding="utf-8")
    return outside


def test_folder_discovery_does_not_follow_symlinks_out_of_the_folders_given(tmp_path: Path):
    outside = _outside(tmp_path)
    repo = tmp_path / "repo"
    (repo / "k8s").mkdir(parents=True)
    (repo / "k8s" / "pod.yaml").write_text(PINNED_POD, encoding="utf-8")
    os.symlink(outside, repo / "k8s" / "rootfs")  # k8s/rootfs -> a folder outside
    os.symlink(outside / "secret.yaml", repo / "k8s" / "linked.yaml")
    os.symlink("pod.yaml", repo / "k8s" / "alias.yaml")  # inside: followed (and linted once)
    completed = run_cli("--format", "json", "k8s", cwd=repo)
    assert "outside-secret" not in completed.stdout
    import json

    assert {f["file"] for f in json.loads(completed.stdout)["findings"]} == {"k8s/alias.yaml"}
    assert f"k8s/rootfs: skipped: a symlink to {outside}, outside the folders given; not followed" in completed.stderr
    assert f"k8s/linked.yaml: skipped: a symlink to {outside / 'secret.yaml'}, outside" in completed.stderr


def test_fix_does_not_write_through_a_symlink_out_of_the_folders_given(tmp_path: Path):
    outside = _outside(tmp_path)
    (outside / "secret.yaml").write_text(PINNED_POD.replace("worker-1", "WORKER-1"), encoding="utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside / "secret.yaml", repo / "linked.yaml")
    completed = run_cli("--fix", "linked.yaml", cwd=repo)
    assert "WORKER-1" in (outside / "secret.yaml").read_text(encoding="utf-8"), completed.stderr
    assert "linked.yaml: not fixed: it is a symlink to" in completed.stderr


def test_config_paths_stay_inside_the_config_folder(tmp_path: Path):
    outside = _outside(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pod.yaml").write_text(PINNED_POD, encoding="utf-8")
    os.symlink(outside, repo / "escape")
    absolute, climbing = "static-pod-dirs:\n  - nodes\n  - /proc/self\n", "static-pod-dirs:\n  - ../../../proc/self\n"
    cases = {
        absolute: "3: invalid config at static-pod-dirs/1: the path is absolute",
        climbing: "2: invalid config at static-pod-dirs/0: the path leaves",
        "exclude: [charts/*, ../*]\n": "1: invalid config at exclude/1: the path leaves",
        "static-pod-dirs: [escape]\n": f"1: invalid config at static-pod-dirs/0: the path resolves to {outside}",
    }
    for config, message in cases.items():
        (repo / ".nodename-lint.yaml").write_text(config, encoding="utf-8")
        completed = run_cli("pod.yaml", cwd=repo)
        assert completed.returncode == 2 and f".nodename-lint.yaml:{message}" in completed.stderr, completed.stderr
        assert "outside-secret" not in completed.stdout
    (repo / ".nodename-lint.yaml").unlink()
    completed = run_cli("pod.yaml", "--static-pod-dir", str(outside), "--format", "json", cwd=repo)
    assert '"files": 2' in completed.stdout, "a command-line flag is trusted"


SECRET = "ghp_0123456789abcdefSECRET"


def _repository_with_a_secret_beside_it(tmp_path: Path) -> tuple[Path, Path]:
    """A git work tree holding a Pod, and a credentials file of the runner outside it."""
    secrets = tmp_path / "home"
    secrets.mkdir()
    (secrets / ".git-credentials").write_text(f"https://x-access-token:{SECRET}@github.com\n", encoding="utf-8")
    (secrets / "kubeconfig").write_text(f"users:\n- name: ci\n  user: {{token: {SECRET}}}\n", encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pod.yaml").write_text(PINNED_POD, encoding="utf-8")
    return repo, secrets


def test_a_config_file_linked_out_of_the_repository_is_not_read(tmp_path: Path):
    """`.nodename-lint.yaml -> ~/.git-credentials` was read, and the error quoted the whole file."""
    repo, secrets = _repository_with_a_secret_beside_it(tmp_path)
    for target in (".git-credentials", "kubeconfig"):
        config = repo / ".nodename-lint.yaml"
        config.unlink(missing_ok=True)
        os.symlink(secrets / target, config)
        for args in (["pod.yaml"], ["--config", ".nodename-lint.yaml", "pod.yaml"], ["--format", "github", "."]):
            completed = run_cli(*args, cwd=repo)
            assert completed.returncode == 2, completed.stderr
            assert SECRET not in completed.stdout + completed.stderr
            assert (
                f"the config file is a symlink to {secrets / target}, outside the repository ({repo})"
                in completed.stderr
            ), completed.stderr
    # a link to another file of the repository (a monorepo's shared config) is read as before
    config.unlink()
    (repo / "shared.yaml").write_text("rules: {nodename-on-pod: off}\n", encoding="utf-8")
    os.symlink("shared.yaml", config)
    completed = run_cli("pod.yaml", "--format", "json", cwd=repo)
    assert completed.returncode == 0 and '"rule": "nodename-on-pod"' not in completed.stdout, completed.stderr


def test_config_errors_never_quote_the_file_beyond_the_offending_key(tmp_path: Path):
    repo, _ = _repository_with_a_secret_beside_it(tmp_path)
    config = repo / ".nodename-lint.yaml"
    for text in (
        f"https://x-access-token:{SECRET}@github.com\n",  # not a mapping: it was printed whole
        f"- {SECRET}\n",
        f"rules: {{unknown-node: {SECRET}}}\n",
        f"rules: {{unknown-node: {{severity: {SECRET}}}}}\n",
        f"fail-on: {SECRET}\n",
        f"namespace: {SECRET}\n",
        f"exclude: {SECRET}\n",
        f"exclude: [/{SECRET}]\n",
        f"static-pod-dirs: [../{SECRET}]\n",
        f"users: [{{token: {SECRET}}}]\n",
        f"helm: {{chart: {{values: [../../{SECRET}.yaml]}}}}\n",
        f"helm: {{chart: {{release: {SECRET}}}}}\n",
        f"rules: !!int {SECRET}\n",
    ):
        config.write_text(text, encoding="utf-8")
        completed = run_cli("pod.yaml", cwd=repo)
        assert completed.returncode == 2 and ".nodename-lint.yaml:" in completed.stderr, (text, completed.stderr)
        assert SECRET not in completed.stdout + completed.stderr, (text, completed.stderr)


def _chart_quoting_values(repo: Path) -> Path:
    """A chart whose Pod's nodeName is its `users` value: a finding would quote what a values file holds."""
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "templates" / "pod.yaml").write_text(PINNED_POD.replace("worker-1", "{{ .Values.users }}"))
    return chart


def test_a_config_values_file_linked_out_of_the_repository_is_refused(tmp_path: Path):
    repo, secrets = _repository_with_a_secret_beside_it(tmp_path)
    chart = _chart_quoting_values(repo)
    os.symlink(secrets / "kubeconfig", chart / "prod.yaml")
    (repo / ".nodename-lint.yaml").write_text("helm:\n  chart: {values: [prod.yaml]}\n", encoding="utf-8")
    completed = run_cli("chart", cwd=repo)
    assert completed.returncode == 2 and SECRET not in completed.stdout + completed.stderr, completed.stderr
    assert ".nodename-lint.yaml:2: the values file at helm/chart/values/0 is outside" in completed.stderr


def test_helm_values_given_on_the_command_line_are_not_read_through_a_link_out_of_the_repository(tmp_path: Path):
    """`--helm-values values/prod.yaml` where the pull request made prod.yaml a link to the runner's kubeconfig."""
    repo, home = _repository_with_a_secret_beside_it(tmp_path)
    _chart_quoting_values(repo)
    (repo / "values").mkdir()
    os.symlink(home / "kubeconfig", repo / "values" / "prod.yaml")
    os.symlink(home, repo / "linked")
    for values in ("values/prod.yaml", "linked/kubeconfig", str(repo / "values" / "prod.yaml")):
        completed = run_cli("chart", "--helm-values", values, "--format", "json", cwd=repo)
        assert completed.returncode == 2 and SECRET not in completed.stdout + completed.stderr, completed.stderr
        assert f"--helm-values {values}: a symlink to {home / 'kubeconfig'}, outside the repository" in (
            completed.stderr
        )
    # the user's own file elsewhere, named by its path, is theirs to use
    completed = run_cli("chart", "--helm-values", str(home / "kubeconfig"), "--format", "json", cwd=repo)
    assert completed.returncode in (0, 1), completed.stderr


NODE_NAMED_LIKE_A_TOKEN = "ghp-0123456789abcdef-secret"
STATE_OF_THE_RUNNER = f"""\
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata: {{name: {NODE_NAMED_LIKE_A_TOKEN}}}
    status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
"""


def test_a_cluster_state_linked_out_of_the_repository_is_refused(tmp_path: Path):
    """`--cluster-state state.yaml` (the workflow's flag) where the pull request made state.yaml a link to a file
    of the runner: it was read, and a did-you-mean quoted what it holds. The flag is the user's; the link is not."""
    repo, home = _repository_with_a_secret_beside_it(tmp_path)
    (home / "state.yaml").write_text(STATE_OF_THE_RUNNER, encoding="utf-8")
    (repo / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        f"spec: {{nodeName: {NODE_NAMED_LIKE_A_TOKEN[:-1]}u, containers: [{{name: c, image: x}}]}}\n",
        encoding="utf-8",
    )
    os.symlink(home / "state.yaml", repo / "state.yaml")
    os.symlink(home, repo / "linked")
    for named in ("state.yaml", "linked/state.yaml", str(repo / "state.yaml")):
        for args in (["pod.yaml"], ["snapshot", "-o", str(tmp_path / "out.json")], ["audit"]):
            completed = run_cli(*args, "--cluster-state", named, cwd=repo)
            shown = completed.stdout + completed.stderr
            assert completed.returncode == 2 and NODE_NAMED_LIKE_A_TOKEN not in shown, (args, shown)
            assert f"--cluster-state {named}: a symlink to {home / 'state.yaml'}, outside the repository" in shown
    # the user's own file elsewhere, named by its path, is theirs to use
    completed = run_cli("pod.yaml", "--cluster-state", str(home / "state.yaml"), cwd=repo)
    assert completed.returncode == 1 and f"did you mean {NODE_NAMED_LIKE_A_TOKEN}" in completed.stdout


def test_reports_are_never_written_through_a_symlink_of_the_repository(tmp_path: Path):
    """`nodename-lint.sarif -> ~/.bashrc` in a pull request made the run overwrite the runner's file."""
    repo, home = _repository_with_a_secret_beside_it(tmp_path)
    victim = home / ".bashrc"
    victim.write_text("original\n", encoding="utf-8")
    os.symlink(victim, repo / "nodename-lint.sarif")
    os.symlink(home, repo / "reports")
    state = str(Path(__file__).resolve().parent.parent / "examples" / "cluster" / "state.yaml")
    for args in (
        ["pod.yaml", "--output-sarif", "nodename-lint.sarif"],
        ["pod.yaml", "--format", "json", "--output", "nodename-lint.sarif"],
        ["pod.yaml", "--output-json", "reports/.bashrc"],
        ["pod.yaml", "--output-markdown", "reports/new.md"],
        ["pod.yaml", "--output-text", str(repo / "reports" / ".bashrc")],
        ["pod.yaml", "--output-github", "nodename-lint.sarif"],
        ["audit", "--cluster-state", state, "--output-sarif", "nodename-lint.sarif"],
        ["snapshot", "--cluster-state", state, "--output", "nodename-lint.sarif"],
        ["snapshot", "--cluster-state", state, "--output", "reports/snapshot.json"],
    ):
        completed = run_cli(*args, cwd=repo)
        assert completed.returncode == 2, (args, completed.stderr)
        assert "is a symlink inside a repository, and nodename-lint never writes through one" in completed.stderr
        assert victim.read_text(encoding="utf-8") == "original\n", args
        assert sorted(path.name for path in home.iterdir()) == [".bashrc", ".git-credentials", "kubeconfig"], args
    # a file of the repository, and a path outside every repository (the user's own), are written
    assert run_cli("pod.yaml", "--output-sarif", "report.sarif", cwd=repo).returncode == 0
    assert (repo / "report.sarif").read_text(encoding="utf-8").startswith("{")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere / "target.json", elsewhere / "link.json")
    assert run_cli("pod.yaml", "--output-json", str(elsewhere / "link.json"), cwd=repo).returncode == 0
    assert (elsewhere / "target.json").read_text(encoding="utf-8").startswith("{")


# --- special files -----------------------------------------------------------------------------------
def test_fix_and_diff_accept_regular_files_only(tmp_path: Path):
    (tmp_path / "pod.yaml").write_text(PINNED_POD, encoding="utf-8")
    os.mkfifo(tmp_path / "fifo.yaml")  # no writer: opening it would hang
    for args in (["--fix", "/dev/zero"], ["--diff", "/dev/zero"], ["--diff", "fifo.yaml"], ["--fix", "fifo.yaml"]):
        completed = run_cli(*args, cwd=tmp_path)
        assert completed.returncode == 2, (args, completed.stderr)
        assert "works on regular files only" in completed.stderr and "is a " in completed.stderr
    import subprocess
    import sys

    piped = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m nodename_lint --fix <(cat pod.yaml)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert piped.returncode == 2 and "--fix works on regular files only" in piped.stderr, piped.stderr


def test_cluster_state_refuses_devices_and_stops_at_its_size_cap(tmp_path: Path, monkeypatch):
    import subprocess
    import sys

    import pytest

    from nodename_lint.cluster import from_file
    from nodename_lint.sources import UsageError

    completed = run_cli("--cluster-state", "/dev/zero", "-", stdin=PINNED_POD)
    assert completed.returncode == 2 and "/dev/zero: not a cluster state: it is a character device" in completed.stderr
    state = Path(__file__).resolve().parent.parent / "examples" / "cluster" / "state.yaml"
    piped = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m nodename_lint --cluster-state <(cat {state}) -"],
        input=PINNED_POD,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert piped.returncode == 1 and "unknown-node" in piped.stdout, "a pipe of a real state is read"
    monkeypatch.setattr(from_file, "MAX_STATE_BYTES", 1000)
    big = tmp_path / "big.yaml"
    big.write_text("x" * 1001, encoding="utf-8")
    with pytest.raises(UsageError, match="more than 1,000 bytes, the limit"):
        from_file.load_state_file(str(big))
    endless = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        with pytest.raises(UsageError, match="the limit for a cluster state"):
            from_file.load_state_file(f"/dev/fd/{endless.stdout.fileno()}")
    finally:
        endless.kill()
        endless.wait()


# --- code execution ----------------------------------------------------------------------------------
def test_spawned_workers_never_import_modules_from_the_linted_folder(tmp_path: Path, monkeypatch):
    """A worker started with "spawn" (after the live client ran threads) is `python -c` in this folder."""
    from nodename_lint.parallel import lint_files
    from nodename_lint.sources import discover

    from .fix.helpers import default_linter
    from .test_action import plant_hostile_modules

    workspace, markers = tmp_path / "workspace", tmp_path / "markers"
    workspace.mkdir()
    plant_hostile_modules(workspace, markers)
    for name in ("a", "b", "c"):
        (workspace / f"{name}.yaml").write_text(PINNED_POD.replace("name: a", f"name: {name}"), encoding="utf-8")
    monkeypatch.chdir(workspace)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    result = lint_files(default_linter(), list(discover(["."])), jobs=2, start_method="spawn")
    assert sorted(path.name for path in markers.iterdir()) == []
    assert result.files == 3 and len(result.findings) == 3
    assert "PYTHONSAFEPATH" not in os.environ, "restored after the pool"
