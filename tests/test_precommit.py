"""The pre-commit hook, run by the real `pre-commit` on real `git commit`s.

The hook repository is a snapshot of this working tree (committed into a temporary repository),
so the test exercises the code as it is now, uncommitted edits included. pre-commit builds the
hook's virtualenv with pip from the package index once per test module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, require_tool, unavailable
from .test_sarif import BROKEN_DEPLOYMENT

# What pip needs to install the package (pyproject's readme included), the hook and the action.
PACKAGE_PARTS = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "action.yml", "nodename_lint/", "rules/")
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}
CLEAN_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  nodeSelector:
    kubernetes.io/hostname: worker-2
  containers:
    - name: nginx
      image: nginx:1.27.3-alpine
"""
HELM_VALUES = "replicaCount: 3\nnodeName: Worker_2\nimage:\n  tag: 1.27.3\n"


def _run(args: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check and completed.returncode != 0:
        raise AssertionError(f"{args} failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}")
    return completed


def snapshot_working_tree(repo: Path) -> str:
    """Commit what the package is built from, as it is in this working tree, into a new repository at REPO.

    Returns the commit. Tracked and untracked (not ignored) files count, so uncommitted edits are tested.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *PACKAGE_PARTS],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    for name in listed:
        if name and (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    env = {**os.environ, **GIT_IDENTITY}
    _run(["git", "init", "-q"], repo, env)
    _run(["git", "add", "."], repo, env)
    _run(["git", "commit", "-q", "-m", "snapshot of the working tree"], repo, env)
    return _run(["git", "rev-parse", "HEAD"], repo, env).stdout.strip()


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_tool("git", "apt-get install git")
    pre_commit_home = tmp_path_factory.mktemp("pre-commit-home")
    env = {
        **os.environ,
        **GIT_IDENTITY,
        "PRE_COMMIT_HOME": str(pre_commit_home),
        "NO_COLOR": "1",
        "PRE_COMMIT_COLOR": "never",
    }
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    return env


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, hook_env: dict[str, str]) -> tuple[Path, str]:
    """This working tree's current state as a one-commit repository: (path, commit)."""
    repo = tmp_path_factory.mktemp("hook-repo")
    return repo, snapshot_working_tree(repo)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, hook_env: dict[str, str], hook_repo: tuple[Path, str]) -> Path:
    """A user's repository with the hook installed as README shows (`pre-commit install`)."""
    repo_path, commit = hook_repo
    project = tmp_path_factory.mktemp("project")
    _run(["git", "init", "-q"], project, hook_env)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo_path}\n    rev: {commit}\n    hooks:\n      - id: nodename-lint\n", encoding="utf-8"
    )
    _run([sys.executable, "-m", "pre_commit", "install"], project, hook_env)
    installed = _run([sys.executable, "-m", "pre_commit", "install-hooks"], project, hook_env, check=False)
    if installed.returncode != 0:
        log = installed.stdout + installed.stderr
        if any(word in log for word in ("NewConnectionError", "Could not find a version", "Temporary failure in name")):
            unavailable("pre-commit could not install the hook's dependencies from the package index")
        raise AssertionError(log)
    _run(["git", "add", ".pre-commit-config.yaml"], project, hook_env)
    _run(["git", "commit", "-q", "-m", "pre-commit config"], project, hook_env)
    return project


def _commit(project: Path, env: dict[str, str], name: str, text: str) -> subprocess.CompletedProcess[str]:
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _run(["git", "add", name], project, env)
    return _run(["git", "commit", "-m", f"add {name}"], project, env, check=False)


def test_commit_with_a_mistake_fails_with_the_finding_at_its_line(project: Path, hook_env: dict[str, str]):
    completed = _commit(project, hook_env, "deploy/web.yaml", BROKEN_DEPLOYMENT)
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0, output
    assert "nodename-lint" in output and "Failed" in output
    assert "deploy/web.yaml:13:7: error[nodename-in-template]" in output
    assert "fix: remove nodeName" in output
    head = _run(["git", "log", "--format=%s", "-1"], project, hook_env).stdout.strip()
    assert head == "pre-commit config", "the commit was refused"
    _run(["git", "reset", "-q", "--", "deploy/web.yaml"], project, hook_env)
    (project / "deploy" / "web.yaml").unlink()


def test_clean_manifest_and_non_kubernetes_yaml_pass(project: Path, hook_env: dict[str, str]):
    def hook_line(completed: subprocess.CompletedProcess[str]) -> str:
        output = completed.stdout + completed.stderr
        assert completed.returncode == 0, output
        return next(line for line in output.splitlines() if line.startswith("nodename-lint."))

    assert hook_line(_commit(project, hook_env, "deploy/pod.yaml", CLEAN_POD)).endswith("Passed")
    # Helm values with a key that would be a mistake in a Pod: not a Kubernetes object, so ignored
    assert hook_line(_commit(project, hook_env, "chart/values.yaml", HELM_VALUES)).endswith("Passed")
    # a file of another type is not passed to the hook at all
    assert hook_line(_commit(project, hook_env, "notes.txt", "nodeName: Worker_2\n")).endswith(
        "(no files to check)Skipped"
    )


def test_modules_in_the_repository_never_run_in_the_hook(project: Path, hook_env: dict[str, str], tmp_path: Path):
    """The hook's console script has its own folder, not the repository, on sys.path (issue 10).

    pre-commit is started through its console script here: `git commit` runs `python -m pre_commit`
    in the repository, which imports pre-commit's own modules (yaml) from it; that is pre-commit's
    start-up, not the hook's.
    """
    from .test_action import HOSTILE_MODULES, plant_hostile_modules

    markers = tmp_path / "markers"
    plant_hostile_modules(project, markers)
    (project / "deploy").mkdir(exist_ok=True)
    (project / "deploy" / "hostile.yaml").write_text(BROKEN_DEPLOYMENT, encoding="utf-8")
    pre_commit = os.path.join(os.path.dirname(sys.executable), "pre-commit")
    try:
        completed = _run([pre_commit, "run", "--files", "deploy/hostile.yaml"], project, hook_env, check=False)
    finally:  # the other tests of this module commit in the same repository with `python -m pre_commit`
        (project / "deploy" / "hostile.yaml").unlink()
        for name in HOSTILE_MODULES:
            if "/" in name:
                shutil.rmtree(project / name.split("/")[0])
            else:
                (project / name).unlink()
    assert "deploy/hostile.yaml:13:7: error[nodename-in-template]" in completed.stdout + completed.stderr
    assert sorted(path.name for path in markers.iterdir()) == []


def _hook_project(root: Path, env: dict[str, str], hook_repo: tuple[Path, str], args: list[str]) -> Path:
    """Another user's repository using the same hook (pre-commit reuses the environment it built) with ARGS."""
    repo_path, commit = hook_repo
    root.mkdir()
    _run(["git", "init", "-q"], root, env)
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo_path}\n    rev: {commit}\n    hooks:\n      - id: nodename-lint\n"
        f"        args: {args!r}\n",
        encoding="utf-8",
    )
    return root


def test_hook_is_serial_so_a_cluster_state_loads_once_and_is_never_linted(
    tmp_path: Path, project: Path, hook_env: dict[str, str], hook_repo: tuple[Path, str]
):
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hooks[0]["require_serial"] is True
    gitops = _hook_project(tmp_path / "gitops", hook_env, hook_repo, ["--cluster-state", "cluster/state.yaml"])
    (gitops / "cluster").mkdir()
    shutil.copy(ROOT / "examples" / "cluster" / "state.yaml", gitops / "cluster" / "state.yaml")
    (gitops / "apps").mkdir()
    for index in range(12):  # enough for pre-commit to split the files into one batch per core if it could
        (gitops / "apps" / f"web-{index:02}.yaml").write_text(CLEAN_POD.replace("worker-2", "kind-worker"))
    ghost = CLEAN_POD.replace("  nodeSelector:\n    kubernetes.io/hostname: worker-2\n", "  nodeName: kind-wroker\n")
    (gitops / "apps" / "ghost.yaml").write_text(ghost)
    _run(["git", "add", "."], gitops, hook_env)
    completed = _run([sys.executable, "-m", "pre_commit", "run", "--all-files"], gitops, hook_env, check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "apps/ghost.yaml:6:3: error[unknown-node] node kind-wroker does not exist" in output
    assert "did you mean kind-worker?" in output
    assert "cluster/state.yaml:" not in output.replace("cluster/state.yaml: not linted", ""), "no finding in the state"
    assert "note: cluster/state.yaml: not linted: it is the cluster state given with --cluster-state" in output
    summaries = [line for line in output.splitlines() if line.startswith(("Found ", "No problems"))]
    # one process for every file: .pre-commit-config.yaml and the 13 manifests, the state file left out
    assert len(summaries) == 1 and "of 14 files" in summaries[0], output


def test_the_hook_environment_has_everything_fix_needs(
    tmp_path: Path, project: Path, hook_env: dict[str, str], hook_repo: tuple[Path, str]
):
    """pre-commit installs the package as `pip install .` does: --diff (ruamel.yaml) works without extras."""
    fixing = _hook_project(tmp_path / "fixing", hook_env, hook_repo, ["--diff"])
    (fixing / "web.yaml").write_text(BROKEN_DEPLOYMENT)
    _run(["git", "add", "."], fixing, hook_env)
    completed = _run([sys.executable, "-m", "pre_commit", "run", "--all-files"], fixing, hook_env, check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    assert "-      nodeName: worker-2" in output and "+        kubernetes.io/hostname: worker-2" in output, output


def test_a_staged_chart_is_rendered_by_the_hooks_own_helm_engine(project: Path, hook_env: dict[str, str]):
    """Issue 23: the hook's environment had no Helm engine, so a chart was skipped with a note nobody saw.

    PATH holds only this Python's folder: no helm binary, the engine is the hook's helm-python-sdk."""
    from .test_helm import make_chart

    env = {**hook_env, "PATH": os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"}
    assert shutil.which("helm", path=env["PATH"]) is None
    make_chart(project / "charts" / "web", values="replicas: 1\nnode: worker-1\n")
    _run(["git", "add", "charts"], project, env)
    completed = _run(["git", "commit", "-m", "add a chart"], project, env, check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode != 0, output
    assert "charts/web/templates/deployment.yaml:" in output and "error[nodename-in-template]" in output, output
    assert "helm-render" not in output
    _run(["git", "rm", "-r", "-q", "--cached", "charts"], project, env)
    shutil.rmtree(project / "charts")
