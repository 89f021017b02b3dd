"""Charts from a pull request render sealed (issue 21): their tracked files only, no network, a budget.

Each test plants an attack a chart can make on the runner and checks that the run reports the chart
and nothing else: no secret of the checkout, no request, no file outside the chart, no hang, no crash.
"""

from __future__ import annotations

import base64
import http.server
import io
import json
import os
import subprocess
import sys
import tarfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from nodename_lint.engine import Linter
from nodename_lint.registry import all_rules
from nodename_lint.render.sandbox import Budget
from nodename_lint.render.types import RenderOptions
from nodename_lint.rule import Context
from nodename_lint.sources import Source

from .conftest import require_tool, run_cli
from .test_helm import commit_all, findings, lint_json, make_chart
from .test_sarif import git

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  nodeName: {node}
  containers: [{{name: a, image: busybox}}]
"""
TOKEN = "c2VjcmV0LXJ1bm5lci10b2tlbg=="  # what actions/checkout writes as http.<url>.extraheader


HELM_INSTALL = "put a helm binary on PATH; .ci/run installs one"


@pytest.fixture(params=["sdk", "binary"])
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a run that renders with helm-python-sdk, or with the helm binary (the library
    blocked as in test_without_an_engine_the_chart_is_skipped_with_one_note): both render sealed."""
    if request.param == "sdk":
        return {}
    require_tool("helm", HELM_INSTALL)
    blocker = tmp_path_factory.mktemp("no-helm-python")
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['helm_python'] = None\n")
    return {"PYTHONPATH": str(blocker)}


def pinned_pod(name: str = "p", node: str = "worker-1") -> str:
    return POD.format(name=name, node=node)


def chart_with(folder: Path, template: str, **files: str) -> Path:
    return make_chart(folder, files={"templates/attack.yaml": template, **files})


# --- unbounded cost ---------------------------------------------------------------------------------


def test_a_chart_that_exhausts_memory_is_a_finding_and_the_rest_of_the_run_still_reports(
    tmp_path: Path, engine: dict[str, str]
):
    chart_with(tmp_path / "until", "{{ range until 2000000000 }}x{{ end }}\n")
    doubling = '{{ define "grow" }}{{ include "grow" (print . .) }}{{ end }}{{ include "grow" "x" }}\n'
    chart_with(tmp_path / "grow", doubling)
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    (tmp_path / "pod.yaml").write_text(pinned_pod(node="Bad_Node"))
    start = time.monotonic()
    result = run_cli("until", "grow", "web", "pod.yaml", "--format", "json", cwd=tmp_path, env=engine)
    assert result.returncode == 1, result.stderr  # main: rc 134, Go's "fatal error: out of memory", no report
    report = json.loads(result.stdout)
    failures = {f["file"]: f for f in findings(report, "helm-render")}
    assert set(failures) == {"until/Chart.yaml", "grow/Chart.yaml"}
    assert "needed more than 2 GiB of memory" in failures["until/Chart.yaml"]["message"]
    assert (
        "budget (60 s wall time, 30 s CPU time, 2 GiB memory, 64 MiB output)" in failures["grow/Chart.yaml"]["message"]
    )
    assert findings(report, "nodename-in-template")[0]["file"] == "web/templates/deployment.yaml"
    assert findings(report, "invalid-node-name")[0]["file"] == "pod.yaml"
    assert time.monotonic() - start < 100


def run_cli_with_helm_cpu(seconds: int, *args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real command line with each chart's CPU budget set to SECONDS (the default spends half a minute)."""
    code = (
        "import runpy, sys\n"
        "from functools import partial\n"
        "import nodename_lint.render.helm as helm\n"
        f"if hasattr(helm, 'Budget'): helm.Budget = partial(helm.Budget, cpu_seconds={seconds})\n"
        "sys.argv = ['nodename-lint', *sys.argv[1:]]\n"
        "runpy.run_module('nodename_lint', run_name='__main__', alter_sys=True)\n"
    )
    environment = {**os.environ, "NO_COLOR": "1", **env}
    if env.get("PYTHONPATH") and os.environ.get("PYTHONPATH"):
        environment["PYTHONPATH"] = f"{env['PYTHONPATH']}{os.pathsep}{os.environ['PYTHONPATH']}"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=150, env=environment
    )


def test_nested_range_until_and_recursive_tpl_are_each_one_finding_from_the_command_line(
    tmp_path: Path, engine: dict[str, str]
):
    """In-process, nested `range until` ran without end (the 120 s bound covered only the helm binary) and a
    `tpl` that renders itself aborted the whole process (Go's stack overflow is fatal): no report at all."""
    chart_with(tmp_path / "nested", "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n")
    chart_with(tmp_path / "tpl", "a: {{ tpl .Values.x . }}\n", **{"values.yaml": 'x: "{{ tpl .Values.x . }}"\n'})
    (tmp_path / "pod.yaml").write_text(pinned_pod(node="Bad_Node"))
    result = run_cli_with_helm_cpu(3, "nested", "tpl", "pod.yaml", "--format", "json", cwd=tmp_path, env=engine)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    failures = {f["file"]: f["message"] for f in findings(report, "helm-render")}
    assert set(failures) == {"nested/Chart.yaml", "tpl/Chart.yaml"}, failures
    assert "it used more than 3 s of CPU time, so none of it was checked" in failures["nested/Chart.yaml"]
    assert "so none of it was checked" in failures["tpl/Chart.yaml"]
    assert findings(report, "invalid-node-name")[0]["file"] == "pod.yaml"


def lint_chart(folder: Path, budget: Budget) -> list:
    linter = Linter(dict.fromkeys(all_rules()), Context(), RenderOptions(budget=budget))
    return linter.collect([linter.lint_source(Source(str(folder), render="helm"))]).findings


def test_a_chart_that_loops_without_end_stops_at_its_cpu_budget(tmp_path: Path):
    chart_with(tmp_path / "loop", "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n")
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    budget = Budget(wall_seconds=120, cpu_seconds=2)
    [failure] = lint_chart(tmp_path / "loop", budget)
    assert failure.rule == "helm-render" and (failure.file, failure.line) == (f"{tmp_path}/loop/Chart.yaml", 1)
    assert "it used more than 2 s of CPU time, so none of it was checked" in failure.message
    [pinned] = lint_chart(tmp_path / "web", budget)  # the next chart renders in a new helper
    assert pinned.rule == "nodename-in-template"


def test_a_chart_that_writes_without_end_stops_at_its_output_budget(tmp_path: Path):
    chart_with(tmp_path / "flood", '{{ range until 100000 }}{{ repeat 1000 "x" }}{{ end }}\n')
    [failure] = lint_chart(tmp_path / "flood", Budget(output_bytes=1 << 20))
    assert "it wrote more than 1 MiB of output" in failure.message


# --- secrets of the runner ----------------------------------------------------------------------------


def test_the_checkouts_git_config_and_untracked_files_never_reach_the_report(tmp_path: Path, engine: dict[str, str]):
    repo = tmp_path / "repo"
    make_chart(
        repo,
        files={
            "Chart.yaml": "apiVersion: v2\nname: root\nversion: 0.1.0\n",  # a chart at the repository root
            "templates/pod.yaml": textwrap.dedent("""\
                apiVersion: v1
                kind: Pod
                metadata:
                  name: leak
                  annotations:
                    config: {{ .Files.Get ".git/config" | quote }}
                    encoded: {{ .Files.Get ".git/config" | b64enc | quote }}
                    glob: {{ .Files.Glob ".git/*" | len | quote }}
                    kubeconfig: {{ .Files.Get "kubeconfig" | b64enc | quote }}
                spec:
                  nodeName: x{{ .Files.Get ".git/config" | b64enc | trunc 40 }}
                  containers: [{name: a, image: busybox}]
                """),
        },
    )
    commit_all(repo)
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {TOKEN}")
    (repo / "kubeconfig").write_text("users: [{name: ci, user: {token: KUBE-TOKEN-OF-AN-EARLIER-STEP}}]\n")
    config = (repo / ".git" / "config").read_bytes()
    secrets = [TOKEN, base64.b64encode(config).decode()[:40], "KUBE-TOKEN", "S1VCRS1UT0tFTi"[:8]]
    outputs = []
    for fmt in ("json", "sarif", "github", "text"):
        result = run_cli(".", "--format", fmt, cwd=repo, env=engine)
        assert result.returncode == 0, result.stderr  # nodename-on-pod is information
        outputs.append(result.stdout + result.stderr)
    for secret in secrets:
        assert not any(secret in output for output in outputs), secret
    report = json.loads(outputs[0].split("\nnodename-lint:")[0])
    [pod] = findings(report, "nodename-on-pod")
    assert "spec.nodeName: x " in pod["message"] or "node x " in pod["message"], pod["message"]
    assert "left out of the render, as git does not track them (git add them to lint them): kubeconfig" in outputs[0]


# --- values.schema.json $ref ----------------------------------------------------------------------------


def test_schema_references_outside_the_chart_are_never_fetched_nor_read(tmp_path: Path, engine: dict[str, str]):
    requests: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = b'{"enum": ["FETCHED-FROM-THE-NETWORK"]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    outside = tmp_path / "outside.json"
    outside.write_text('{"enum": ["SECRET-ENUM-VALUE-FROM-A-LOCAL-FILE"]}')
    schema = {
        "$schema": f"http://127.0.0.1:{port}/meta-schema.json",
        "type": "object",
        "properties": {
            "a": {"$ref": f"http://127.0.0.1:{port}/remote.json"},
            "b": {"$ref": f"file://{outside}"},
            "c": {"$ref": str(outside).lstrip("/")},  # relative: Helm resolves it from /
            "d": {"allOf": [{"$ref": f"https://127.0.0.1:{port}/tls.json"}]},
            "e": {"$ref": "#/definitions/name"},  # inside the document: followed
        },
        "definitions": {"name": {"type": "string", "maxLength": 3}},
    }
    make_chart(
        tmp_path / "web",
        values="replicas: 1\nnode: ''\na: x\nb: x\nc: x\nd: x\ne: toolong\n",
        files={"values.schema.json": json.dumps(schema)},
    )
    try:
        result = run_cli("web", "--format", "json", cwd=tmp_path, env=engine)
    finally:
        server.shutdown()
    assert requests == []
    output = result.stdout + result.stderr
    assert "SECRET-ENUM-VALUE" not in output and "FETCHED-FROM-THE-NETWORK" not in output
    for name in (f"http://127.0.0.1:{port}/remote.json", f"file://{outside}", f"https://127.0.0.1:{port}/tls.json"):
        assert f'web: values.schema.json: $ref "{name}" not followed' in result.stderr, result.stderr
    assert f'$schema "http://127.0.0.1:{port}/meta-schema.json" not followed' in result.stderr
    [failure] = findings(json.loads(result.stdout), "helm-render")  # the reference inside the document still holds
    assert ("/e" in failure["message"] and "maxLength" in failure["message"]) or "3" in failure["message"]


# --- template text only from the copy --------------------------------------------------------------------


def test_template_text_is_read_from_the_private_copy_only(tmp_path: Path, engine: dict[str, str]):
    """A subchart folder whose Chart.yaml names it otherwise, and a link of that name to /dev/zero."""
    chart = make_chart(tmp_path / "repo" / "web")
    make_chart(chart / "charts" / "real", name="other", files={"templates/pod.yaml": pinned_pod()})
    elsewhere = tmp_path / "elsewhere" / "templates"
    elsewhere.mkdir(parents=True)
    os.symlink("/dev/zero", elsewhere / "pod.yaml")
    os.mkfifo(tmp_path / "fifo")
    os.symlink(tmp_path / "fifo", elsewhere / "_helpers.tpl")
    os.symlink(elsewhere.parent, chart / "charts" / "other")  # left out of the render: outside the chart
    start = time.monotonic()
    report, stderr = lint_json("web", cwd=tmp_path / "repo", env=engine)
    assert time.monotonic() - start < 60
    [pinned] = findings(report, "nodename-on-pod")
    assert (pinned["file"], pinned["line"]) == ("web/charts/real/templates/pod.yaml", 6), pinned
    assert "web: charts/other: left out of the render" in stderr


# --- a Chart.yaml hides nothing ------------------------------------------------------------------------


def test_names_the_copy_leaves_out_reach_no_report_raw(tmp_path: Path):
    """A chart's untracked file named `un<LF>::warning::x<0xff>` and a tracked link named `l<LF>::error::y` to
    /etc/passwd: the notes naming them wrote the 0xff byte as it is into the text report (not UTF-8 any more);
    every name is written as printable_path writes it, in every format."""
    repo = tmp_path / "repo"
    make_chart(repo / "chart", values="replicas: 1\nnode: worker-1\n")
    os.symlink("/etc/passwd", os.fsencode(repo / "chart" / "templates") + b"/l\n::error::link")
    commit_all(repo)
    (Path(os.fsdecode(os.fsencode(repo / "chart") + b"/un\n::warning::untracked\xff"))).write_text("x")
    for fmt in ("text", "json", "sarif", "github", "markdown"):
        done = subprocess.run(
            [sys.executable, "-m", "nodename_lint", "chart", "--format", fmt],
            cwd=repo,
            capture_output=True,
            timeout=120,
            env={**os.environ, "NO_COLOR": "1"},
            check=False,
        )
        assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr  # the chart's pinned template
        for output in (done.stdout, done.stderr):
            text = output.decode("utf-8")  # strict: no raw byte of a name
            assert not any(line.startswith(("::warning::untracked", "::error::link")) for line in text.splitlines())
        shown = done.stdout.decode() + done.stderr.decode()
        assert "un\\x0a::warning::untracked\\xff" in shown.replace("\\\\", "\\"), (fmt, shown)


def test_a_chart_yaml_at_the_root_does_not_hide_the_manifests_beside_it(tmp_path: Path):
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: hide\nversion: 0.1.0\n")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "pod.yaml").write_text(pinned_pod(node="Bad_Node"))
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "config.yaml").write_text("kind: ConfigMap\ndata: {{ .Values.x | toYaml }}\n")
    (tmp_path / "values.yaml").write_text("x: 1\n")
    for named in (".", "deploy/pod.yaml"):
        result = run_cli(named, "--format", "json", cwd=tmp_path)
        assert result.returncode == 1, (named, result.stdout, result.stderr)
        report = json.loads(result.stdout)
        assert [(f["file"], f["rule"]) for f in findings(report, "invalid-node-name")] == [
            ("deploy/pod.yaml", "invalid-node-name")
        ]
        assert not findings(report, "yaml-syntax")
    result = run_cli(".", cwd=tmp_path)  # the note ends the text report on stdout (said once on a terminal)
    assert "files/config.yaml: not linted on its own: it lies in a Helm chart folder and holds template actions" in (
        result.stdout
    )


# --- --changed-since counts what a build read -------------------------------------------------------------


def packaged_chart(name: str, template: str) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        for path, text in {
            f"{name}/Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n",
            f"{name}/templates/pod.yaml": template,
        }.items():
            info = tarfile.TarInfo(path)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return data.getvalue()


def test_changed_since_reports_findings_of_templates_a_values_or_subchart_change_pins(tmp_path: Path):
    make_chart(tmp_path / "web")
    commit_all(tmp_path)
    git(tmp_path, "checkout", "-q", "-b", "pr")
    (tmp_path / "web" / "values.yaml").write_text("replicas: 2\nnode: worker-1\n")  # only values.yaml changes
    report, _ = lint_json("web", "--changed-since", "main", cwd=tmp_path)
    assert [(f["file"], f["rule"]) for f in findings(report)] == [
        ("web/templates/deployment.yaml", "nodename-in-template")
    ]
    git(tmp_path, "commit", "-q", "-am", "pin")
    git(tmp_path, "checkout", "-q", "-b", "pr2")
    (tmp_path / "web" / "charts").mkdir()
    (tmp_path / "web" / "charts" / "sub-0.1.0.tgz").write_bytes(packaged_chart("sub", pinned_pod("sub")))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "a packaged subchart")
    report, stderr = lint_json("web", "--changed-since", "pr", cwd=tmp_path)
    reported = {(f["file"], f["rule"]) for f in findings(report)}
    assert ("web/Chart.yaml", "nodename-on-pod") in reported, stderr  # the packaged subchart's Pod
    git(tmp_path, "checkout", "-q", "-b", "pr3")
    (tmp_path / "README.md").write_text("unrelated\n")
    report, stderr = lint_json("web", "--changed-since", "pr2", cwd=tmp_path)
    assert findings(report) == [] and "2 findings in files unchanged since pr2 not reported" in stderr


def test_both_engines_report_a_chart_at_the_same_places(tmp_path: Path):
    require_tool("helm", HELM_INSTALL)
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    chart_with(tmp_path / "nil", "kind: Pod\nmetadata:\n  name: {{ .Values.x.y }}\n")
    make_chart(
        tmp_path / "deps",
        files={"Chart.yaml": "apiVersion: v2\nname: deps\nversion: 0.1.0\ndependencies:\n  - name: redis\n"},
    )
    places = []
    for engine_env in ({}, {"PYTHONPATH": str(tmp_path / "blocker")}):
        (tmp_path / "blocker").mkdir(exist_ok=True)
        (tmp_path / "blocker" / "sitecustomize.py").write_text("import sys\nsys.modules['helm_python'] = None\n")
        report, _ = lint_json("web", "nil", "deps", cwd=tmp_path, env=engine_env)
        places.append([(f["rule"], f["severity"], f["file"], f["line"], f["column"]) for f in findings(report)])
    assert (
        places[0]
        == places[1]
        == [
            ("helm-render", "warning", "deps/Chart.yaml", 1, 1),
            ("helm-render", "error", "nil/templates/attack.yaml", 3, 18),
            ("nodename-in-template", "error", "web/templates/deployment.yaml", 15, 7),
        ]
    )
