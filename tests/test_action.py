"""action.yml, run step by step as the GitHub runner runs a composite action.

The workspace is a git repository with a base branch and a pull request merged onto it (as
actions/checkout leaves it); GITHUB_EVENT_PATH holds a pull_request payload; each step gets its
own GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files and runs with `bash --noprofile --norc -eo pipefail`
after `${{ inputs.* }}` and `${{ steps.*.outputs.* }}` are substituted. The install step runs as
written: it skips pip when python3 already imports this very checkout (the editable install of
the test run); one test makes it install for real into a virtualenv.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from .apiserver import ApiServer
from .conftest import ROOT, lint_yaml, unavailable
from .test_precommit import GIT_IDENTITY, snapshot_working_tree
from .test_sarif import BROKEN_DEPLOYMENT, assert_valid_sarif

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
DEBUG_POD = (ROOT / "examples" / "deploy" / "debug-pod.yaml").read_text(encoding="utf-8")
CLEAN_DEPLOYMENT = BROKEN_DEPLOYMENT.replace(
    "      nodeName: worker-2\n", "      nodeSelector:\n        kubernetes.io/hostname: worker-2\n"
)


@dataclass
class ActionRun:
    exit_code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    step_outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    def annotations(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if re.match(r"::(error|warning|notice) ", line)]


def _read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` blocks."""
    outputs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            outputs[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def _substitute(text: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    def evaluate(match: re.Match[str]) -> str:
        expression = match.group(1)
        if m := re.fullmatch(r"inputs\.([\w-]+)", expression):
            return inputs[m.group(1)]
        if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression):
            return steps.get(m.group(1), {}).get(m.group(2), "")
        raise AssertionError(f"the test runner does not know the expression {expression!r}")

    return EXPRESSION.sub(evaluate, text)


def _condition_holds(condition: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> bool:
    """An `if:` of action.yml; the runner used here knows `EXPRESSION != ''` only."""
    expression, _, empty = condition.partition(" != ")
    assert empty == "''", f"the test runner does not know the condition {condition!r}"
    return _substitute("${{ " + expression + " }}", inputs, steps) != ""


def _cache_step(step: dict, inputs: dict[str, str], steps: dict[str, dict[str, str]], cache: Path) -> Path | None:
    """actions/cache as the runner runs it: restore PATH when KEY was saved (exact key only), else return
    the path to save under CACHE/KEY once the job's steps are done (its post step)."""
    assert step["uses"].startswith("actions/cache@"), step["uses"]
    path = Path(_substitute(step["with"]["path"], inputs, steps))
    saved = cache / _substitute(step["with"]["key"], inputs, steps)
    if saved.is_dir():
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(saved, path, symlinks=True)
        return None
    return path


def run_action(
    workspace: Path, tmp_path: Path, event: dict, action_path: Path = ROOT, cache: Path | None = None, **given: str
) -> ActionRun:
    action = yaml.safe_load((action_path / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    declared = action["inputs"]
    unknown = set(given) - {name.replace("-", "_") for name in declared}
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs = {name: given.get(name.replace("-", "_"), spec.get("default", "")) for name, spec in declared.items()}
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    event_path = runner / "event.json"
    event_path.write_text(json.dumps(event), encoding="utf-8")
    base_env = {
        **os.environ,
        **GIT_IDENTITY,
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTION_PATH": str(action_path),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_BASE_REF": event["pull_request"]["base"]["ref"],
        "GITHUB_HEAD_REF": event["pull_request"]["head"]["ref"],
        "RUNNER_TEMP": str(runner),
    }
    base_env.pop("NO_COLOR", None)
    steps: dict[str, dict[str, str]] = {}
    stdout, stderr, summary, exit_code = [], [], [], 0
    to_save: list[tuple[Path, Path]] = []  # (path, where the cache keeps it) for the post steps
    for index, step in enumerate(action["runs"]["steps"]):
        if "if" in step and not _condition_holds(step["if"], inputs, steps):
            continue
        if "uses" in step:
            missed = _cache_step(step, inputs, steps, cache or tmp_path / "cache")
            if missed is not None:
                to_save.append(
                    (missed, (cache or tmp_path / "cache") / _substitute(step["with"]["key"], inputs, steps))
                )
            continue
        assert step["shell"] == "bash"
        output_file, summary_file = runner / f"output-{index}", runner / f"summary-{index}"
        output_file.write_text("", encoding="utf-8")  # the runner gives every step fresh files
        summary_file.write_text("", encoding="utf-8")
        script = runner / f"step-{index}.sh"
        script.write_text(_substitute(step["run"], inputs, steps), encoding="utf-8")
        env = {**base_env, "GITHUB_OUTPUT": str(output_file), "GITHUB_STEP_SUMMARY": str(summary_file)}
        env.update({name: _substitute(str(value), inputs, steps) for name, value in (step.get("env") or {}).items()})
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        stdout.append(completed.stdout)
        stderr.append(completed.stderr)
        summary.append(summary_file.read_text(encoding="utf-8"))
        if "id" in step:
            steps[step["id"]] = _read_outputs(output_file)
        if completed.returncode != 0:
            exit_code = completed.returncode
            break  # the runner skips the remaining steps of a failed composite action
    for path, saved in to_save:  # actions/cache saves after the job, if the path is there
        if path.is_dir() and not saved.exists():
            shutil.copytree(path, saved, symlinks=True)
    outputs = {name: _substitute(spec["value"], inputs, steps) for name, spec in action["outputs"].items()}
    return ActionRun(exit_code, "".join(stdout), "".join(stderr), outputs, "".join(summary), steps)


def expected_annotation(command: str, path: str, manifest: str, rule: str, line: int, column: int) -> str:
    """The workflow command GitHub documents for one finding, built apart from the tool's reporter and the
    action: the finding's message and fix come from linting `manifest` in-process, the escaping (%, CR,
    LF in the message) and layout from GitHub's "workflow commands" reference."""
    [finding] = [f for f in lint_yaml(manifest) if f.rule == rule]
    assert (finding.line, finding.column) == (line, column)
    message = f"{finding.message}\nfix: {finding.fix}".replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::{command} file={path},line={line},col={column},title=nodename-lint {rule}::{message}"


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, dict]:
    """main has a Deployment pinned to a node (an error nobody touches in this PR); the PR adds a
    diagnostic Pod (an info) and edits web.yaml cleanly. HEAD is the merge commit, as on GitHub."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    _git(workspace, "init", "-q", "-b", "main")
    _write(workspace, {"deploy/legacy.yaml": BROKEN_DEPLOYMENT, "deploy/web.yaml": CLEAN_DEPLOYMENT})
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-q", "-m", "base")
    base_sha = _git(workspace, "rev-parse", "HEAD")
    _git(workspace, "checkout", "-q", "-b", "add-debug-pod")
    _write(
        workspace,
        {
            "deploy/debug-pod.yaml": DEBUG_POD,
            "deploy/web.yaml": CLEAN_DEPLOYMENT.replace("namespace: shop", "namespace: store"),
        },
    )
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-q", "-m", "add a debug pod")
    head_sha = _git(workspace, "rev-parse", "HEAD")
    _git(workspace, "checkout", "-q", "--detach", "main")
    _git(workspace, "merge", "-q", "--no-ff", "-m", "Merge add-debug-pod into main", "add-debug-pod")
    event = {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "base": {"ref": "main", "sha": base_sha},
            "head": {"ref": "add-debug-pod", "sha": head_sha},
        },
    }
    return workspace, event


def test_action_annotates_summarises_and_fails_on_errors(pull_request, tmp_path: Path):
    workspace, event = pull_request
    run = run_action(workspace, tmp_path, event, paths="deploy", sarif_file="results/nodename-lint.sarif")
    assert f"nodename-lint is already installed from {ROOT}" in run.stdout
    assert run.exit_code == 1, run.stderr
    assert run.annotations() == [
        expected_annotation("notice", "deploy/debug-pod.yaml", DEBUG_POD, "nodename-on-pod", 8, 3),
        expected_annotation("error", "deploy/legacy.yaml", BROKEN_DEPLOYMENT, "nodename-in-template", 13, 7),
    ]
    assert "bypasses the scheduler" in run.annotations()[0]
    assert "the 1 replica of Deployment web skips the scheduler" in run.annotations()[1]
    sarif_path = workspace / "results" / "nodename-lint.sarif"
    assert run.outputs == {
        "sarif-file": str(sarif_path),
        "findings": "2",
        "errors": "1",
        "warnings": "0",
        "infos": "1",
        "exit-code": "1",
    }
    log = assert_valid_sarif(sarif_path.read_text(encoding="utf-8"))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["deploy/debug-pod.yaml", "deploy/legacy.yaml"]
    assert "Found 2 problems (1 error, 0 warnings, 1 info)" in run.summary
    assert (
        "| :x: error | [`nodename-in-template`](https://github.com/nodename-lint/nodename-lint/blob/main/docs/"
        "rules/nodename-in-template.md) | <code>deploy/legacy.yaml:13:7</code> |"
    ) in run.summary


def test_the_sarif_file_is_never_written_through_a_symlink_of_the_pull_request(pull_request, tmp_path: Path):
    """The example workflow's `sarif-file: nodename-lint.sarif` let a PR overwrite any file the runner can write."""
    workspace, event = pull_request
    home = tmp_path / "runner-home"
    home.mkdir()
    (home / ".bashrc").write_text("original\n", encoding="utf-8")
    os.symlink(home / ".bashrc", workspace / "nodename-lint.sarif")
    os.symlink(home, workspace / "results")
    for sarif_file in ("nodename-lint.sarif", "results/.bashrc", "results/new/nodename-lint.sarif"):
        run = run_action(workspace, tmp_path, event, paths="deploy", sarif_file=sarif_file)
        assert run.exit_code == 2 and run.outputs["exit-code"] == "2", (sarif_file, run.stderr)
        assert "is a symlink inside a repository, and nodename-lint never writes through one" in run.stderr
        assert "Traceback" not in run.stderr and run.outputs.get("sarif-file", "") == ""
        assert (home / ".bashrc").read_text(encoding="utf-8") == "original\n"
        assert [path.name for path in home.iterdir()] == [".bashrc"], "no folder made through the link either"


def test_only_changed_reports_the_files_of_the_pull_request(pull_request, tmp_path: Path):
    workspace, event = pull_request
    run = run_action(workspace, tmp_path, event, only_changed="true")
    assert run.exit_code == 0, "the only error is in a file the pull request does not touch"
    assert [a.split(" ", 1)[1].split(",")[0] for a in run.annotations()] == ["file=deploy/debug-pod.yaml"]
    assert run.outputs["findings"] == "1" and run.outputs["exit-code"] == "0"
    assert os.path.dirname(run.outputs["sarif-file"]) == str(tmp_path / "runner"), "default: in RUNNER_TEMP"
    # code scanning takes an upload as the whole repository: a SARIF file without legacy.yaml's finding
    # would mark that alert fixed, so the SARIF file keeps every finding; only annotations are filtered
    log = assert_valid_sarif(Path(run.outputs["sarif-file"]).read_text(encoding="utf-8"))
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("nodename-on-pod", "deploy/debug-pod.yaml"),
        ("nodename-in-template", "deploy/legacy.yaml"),
    ]
    assert "1 finding in files unchanged since" in run.summary

    strict = run_action(workspace, tmp_path, event, only_changed="true", fail_on="info")
    assert strict.exit_code == 1 and strict.outputs["exit-code"] == "1"


def test_only_changed_without_the_base_commit_reports_everything_and_says_why(pull_request, tmp_path: Path):
    workspace, event = pull_request
    event["pull_request"]["base"] = {"ref": "release-9", "sha": "1" * 40}
    run = run_action(workspace, tmp_path, event, only_changed="true")
    assert (
        "::warning title=nodename-lint::only-changed: the pull request's base commit is not in this checkout"
        in run.stdout
    )
    assert run.outputs["findings"] == "2" and run.exit_code == 1


def test_config_and_usage_errors_reach_the_log_not_a_traceback(pull_request, tmp_path: Path):
    workspace, event = pull_request
    _write(workspace, {"lint.yaml": "rules:\n  nodename-in-template: warning\n"})
    run = run_action(workspace, tmp_path, event, config="lint.yaml")
    assert run.exit_code == 0 and run.outputs["warnings"] == "1"
    assert any(a.startswith("::warning file=deploy/legacy.yaml,line=13") for a in run.annotations())

    missing = run_action(workspace, tmp_path, event, paths="manifests")
    assert missing.exit_code == 2 and missing.outputs["exit-code"] == "2"
    assert "nodename-lint: manifests: no such file or folder" in missing.stderr
    assert "Traceback" not in missing.stderr and missing.outputs["sarif-file"] == ""


def test_install_step_installs_the_action_checkout_into_a_virtualenv(
    pull_request, tmp_path: Path, api_server: ApiServer, kubeconfig: Path
):
    """The real install: pip installs a copy of this checkout (and its dependencies from the index) with the
    Helm engine, kept by actions/cache: the next job restores the virtualenv and installs nothing.

    That install runs the Action against a live cluster, and `--fix`.
    """
    workspace, event = pull_request
    action_path = tmp_path / "action"
    snapshot_working_tree(action_path)
    markers = tmp_path / "markers"
    plant_hostile_modules(workspace, markers)  # the venv and pip modules of the install are not the PR's
    live: dict[str, Any] = {
        "action_path": action_path,
        "paths": "deploy",
        "kubeconfig": str(kubeconfig),
        "context": "kind-kind",
    }
    run = run_action(workspace, tmp_path, event, **live)
    assert sorted(path.name for path in markers.iterdir()) == [], run.stderr
    python = run.step_outputs["install"].get("python", "")
    if not python and any(word in run.stderr for word in ("NewConnectionError", "Could not find a version")):
        unavailable("pip could not reach the package index")
    assert python == str(tmp_path / "runner" / "nodename-lint-venv" / "bin" / "python"), run.stderr
    assert "already installed" not in run.stdout
    engine = "import importlib.util as u, sys; sys.exit(u.find_spec('helm_python') is None)"
    assert subprocess.run([python, "-I", "-c", engine], check=False).returncode == 0, "the Helm engine is installed"
    key = run.step_outputs["where"]["key"]
    assert key.startswith("nodename-lint-0.") and (tmp_path / "cache" / key / "bin" / "python").exists()
    assert run.exit_code == 1, run.stderr
    # worker-2 is no node of the live kind cluster: a cluster rule's finding, from the official client
    assert any(
        a.startswith("::error file=deploy/legacy.yaml,line=13,col=7,title=nodename-lint unknown-node::")
        for a in run.annotations()
    ), run.stdout
    assert "rules skipped" not in run.summary, "the live cluster was read: every rule ran"
    assert [request.path for request in api_server.requests][:2] == ["/api/v1/nodes", "/api/v1/namespaces"]
    assert api_server.methods == {"GET"}

    shutil.rmtree(tmp_path / "runner" / "nodename-lint-venv")  # the next job, on a fresh runner
    warm = run_action(workspace, tmp_path, event, **live)
    restored = f"nodename-lint is already installed in {tmp_path / 'runner' / 'nodename-lint-venv'} (restored from"
    assert restored in warm.stdout, warm.stdout + warm.stderr
    assert (warm.exit_code, warm.annotations()) == (run.exit_code, run.annotations())
    assert sorted(path.name for path in markers.iterdir()) == [], warm.stderr

    fixed = workspace / "deploy" / "legacy.yaml"
    installed = Path(python).parent / "nodename-lint"
    completed = subprocess.run(
        [str(installed), "--fix", str(fixed)], capture_output=True, text=True, timeout=120, check=False
    )
    assert "fixed 1 problem in 1 file" in completed.stderr, completed.stderr
    assert "kubernetes.io/hostname: worker-2" in fixed.read_text(encoding="utf-8")
    assert "nodeName" not in fixed.read_text(encoding="utf-8")


def test_cluster_state_input_runs_the_cluster_rules(pull_request, tmp_path: Path):
    workspace, event = pull_request
    (workspace / "cluster-state.yaml").write_text(
        (ROOT / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    _write(workspace, {"deploy/debug-pod.yaml": DEBUG_POD.replace("kind-worker", "kind-wroker")})
    run = run_action(workspace, tmp_path, event, paths="deploy", cluster_state="cluster-state.yaml")
    assert run.exit_code == 1
    assert any(
        a.startswith("::error file=deploy/debug-pod.yaml,line=8,col=3,title=nodename-lint unknown-node::")
        for a in run.annotations()
    ), run.stdout
    assert (
        "[`unknown-node`](https://github.com/nodename-lint/nodename-lint/blob/main/docs/rules/unknown-node.md)"
        in run.summary
    )


def test_example_workflow_uses_the_inputs_and_outputs_action_yml_declares():
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    workflow = yaml.safe_load((ROOT / "examples" / "github-workflow.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["lint"]["steps"]
    [lint] = [step for step in steps if step.get("uses", "").startswith("nodename-lint/nodename-lint@")]
    assert set(lint["with"]) <= set(action["inputs"])
    assert all(" " not in line for line in lint["with"]["paths"].split("\n")), "paths: one per line, not spaces"
    assert "sarif-file" not in lint["with"], "the default, in RUNNER_TEMP, is outside the pull request's checkout"
    [upload] = [step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload["with"]["sarif_file"] == "${{ steps." + lint["id"] + ".outputs.sarif-file }}"
    assert "sarif-file" in action["outputs"]
    assert workflow["permissions"]["security-events"] == "write"


# --- a pull request written by an attacker (issue 10) ------------------------------------------------
HOSTILE_MODULES = (
    "json.py",
    "yaml.py",
    "click.py",
    "nodename_lint/__init__.py",
    "kubernetes/__init__.py",
    "venv.py",
    "pip/__init__.py",
    "pathlib.py",
    "encodings/__init__.py",
    "multiprocessing/__init__.py",
)


def plant_hostile_modules(workspace: Path, markers: Path) -> None:
    """Modules a pull request can add next to its manifests; each leaves a marker file when imported."""
    markers.mkdir(exist_ok=True)
    for name in HOSTILE_MODULES:
        module = workspace / name
        module.parent.mkdir(parents=True, exist_ok=True)
        marker = markers / name.replace("/", "-")
        module.write_text(f"open({str(marker)!r}, 'w').write('imported from the pull request')\n", encoding="utf-8")


def test_modules_in_the_pull_request_never_run(pull_request, tmp_path: Path):
    """Both steps of action.yml run with the workspace as the current folder: nothing in it may be imported."""
    workspace, event = pull_request
    markers = tmp_path / "markers"
    plant_hostile_modules(workspace, markers)
    run = run_action(workspace, tmp_path, event, paths="deploy")
    assert sorted(path.name for path in markers.iterdir()) == [], run.stderr
    assert run.exit_code == 1 and run.outputs["findings"] == "2", run.stderr
    assert "nodename-lint is already installed" in run.stdout, "the probe found the real package, not the planted one"


def test_paths_input_is_one_path_per_line_and_never_an_option(pull_request, tmp_path: Path):
    workspace, event = pull_request
    pinned = DEBUG_POD.replace("kind-worker", "Kind_Worker")
    _write(workspace, {"deploy/x.yaml --fix": pinned, "deploy/with space.yaml": pinned})
    run = run_action(workspace, tmp_path, event, paths="deploy/x.yaml --fix\n  deploy/with space.yaml  \n\n")
    assert (workspace / "deploy" / "x.yaml --fix").read_text(encoding="utf-8") == pinned, "--fix must not run"
    files = sorted({a.split("file=", 1)[1].split(",line=")[0] for a in run.annotations()})
    assert files == ["deploy/with space.yaml", "deploy/x.yaml --fix"], run.stdout + run.stderr
    assert run.exit_code == 1 and run.outputs["errors"] == "2"


def test_job_summary_shows_hostile_names_and_values_as_text(pull_request, tmp_path: Path):
    workspace, event = pull_request
    hostile = DEBUG_POD.replace("kind-worker", '"<img src=https://evil.example/x.png></details>"')
    _write(workspace, {"deploy/a`b|c</details>.yaml": hostile})
    run = run_action(workspace, tmp_path, event, paths="deploy/a`b|c</details>.yaml")
    assert run.exit_code == 1, run.stderr
    assert "<img" not in run.summary and "</details>" not in run.summary, run.summary
    assert "&lt;img src=https://evil.example/x.png&gt;&lt;/details&gt;" in run.summary
    assert "<code>deploy/a&#96;b&#124;c&lt;/details&gt;.yaml:8:3</code>" in run.summary
    rows = [line for line in run.summary.splitlines() if line.startswith("| :")]
    assert rows and all(line.replace("\\|", "").count("|") == 6 for line in rows), run.summary
