"""Helm charts are rendered by the real Helm engine (helm-python-sdk) and linted as charts."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from nodename_lint.render.helm import split_template_output, write_chart
from nodename_lint.render.template_lines import find_line, outline, pick_document

from .conftest import run_cli
from .test_sarif import assert_valid_sarif, git

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    {{- include "web.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    metadata:
      labels:
        app: web
    spec:
      {{- if .Values.node }}
      nodeName: {{ .Values.node }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: web
          image: nginx
"""
HELPERS = '{{- define "web.labels" -}}\napp: web\nchart: {{ .Chart.Name }}\n{{- end }}\n'
NOTES = "Thank you for installing {{ .Chart.Name }}: {{ .Values.node }}\n"


def make_chart(
    folder: Path, *, values: str = "replicas: 2\nnode: ''\n", files: dict[str, str] | None = None, name: str = "web"
) -> Path:
    write_chart(
        str(folder),
        {
            "values.yaml": values,
            "templates/deployment.yaml": DEPLOYMENT,
            "templates/_helpers.tpl": HELPERS,
            "templates/NOTES.txt": NOTES,
            **(files or {}),
        },
        name=name,
    )
    return folder


def lint_json(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[dict, str]:
    result = run_cli(*args, "--format", "json", cwd=cwd, env=env)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout), result.stderr


def commit_all(repo: Path) -> None:
    """Make REPO a git repository with everything in it committed (a chart renders from tracked files)."""
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "all")


def findings(report: dict, rule: str | None = None) -> list[dict]:
    return [f for f in report["findings"] if rule is None or f["rule"] == rule]


def test_a_chart_lints_with_no_template_parse_errors(tmp_path: Path):
    import helm_python

    helm_python.Chart.create("scaffold", str(tmp_path)).close()  # what `helm create` writes
    make_chart(tmp_path / "web")
    report, _ = lint_json("scaffold", "web", cwd=tmp_path)
    assert not findings(report, "yaml-syntax"), findings(report)
    assert report["summary"]["objects"] == 4 + 1, "the scaffold's Deployment, Service, ServiceAccount, test Pod"
    assert not findings(report), "the scaffold and an unpinned chart are clean"


def test_a_pinned_template_is_reported_at_the_template_line(tmp_path: Path):
    make_chart(tmp_path / "charts" / "web", values="replicas: 2\nnode: worker-1\n")
    report, _ = lint_json("charts", cwd=tmp_path)
    [finding] = findings(report, "nodename-in-template")
    assert finding["file"] == "charts/web/templates/deployment.yaml"
    assert (finding["line"], finding["column"]) == (15, 7), "the `nodeName:` line inside the {{- if }} block"
    assert "release-name-web" in finding["message"], "rendered with Helm's default release name"
    assert "nearest enclosing key" not in finding["message"]


def test_values_files_change_the_result_as_helm_template_f_would(tmp_path: Path):
    chart = make_chart(tmp_path / "web", values="replicas: 2\nnode: ''\ntolerations: []\n")
    (tmp_path / "web" / "values-prod.yaml").write_text("node: worker-1\n", encoding="utf-8")
    (tmp_path / "override.yaml").write_text("node: Worker_2\n", encoding="utf-8")
    assert not findings(lint_json("web", cwd=tmp_path)[0])
    # --helm-values: later files win, like helm template -f a -f b
    report, _ = lint_json("web", "--helm-values", str(chart / "values-prod.yaml"), cwd=tmp_path)
    assert [f["rule"] for f in findings(report)] == ["nodename-in-template"]
    report, _ = lint_json(
        "web", "--helm-values", "web/values-prod.yaml", "--helm-values", "override.yaml", cwd=tmp_path
    )
    assert {f["rule"] for f in findings(report)} == {"nodename-in-template", "invalid-node-name"}
    assert all("Worker_2" in f["message"] for f in findings(report, "invalid-node-name"))
    # per-chart values in the config file, relative to the chart folder; release and namespace too
    (tmp_path / ".nodename-lint.yaml").write_text(
        "helm:\n  web:\n    values: [values-prod.yaml]\n    release: prod\n    namespace: shop\n", encoding="utf-8"
    )
    report, _ = lint_json("web", cwd=tmp_path)
    [finding] = findings(report)
    assert finding["object"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "prod-web"}


def test_release_and_namespace_options(tmp_path: Path):
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    report, _ = lint_json("web", "--helm-release", "canary", "--helm-namespace", "edge", cwd=tmp_path)
    [finding] = findings(report)
    assert finding["object"]["name"] == "canary-web" and finding["object"]["namespace"] == "edge"


def test_a_value_written_by_toyaml_is_reported_at_the_nearest_key_naming_the_values(tmp_path: Path):
    make_chart(
        tmp_path / "web",
        files={
            "templates/pod.yaml": textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: debug
        spec:
          {{- toYaml .Values.podSpec | nindent 2 }}
        """)
        },
        values="replicas: 1\nnode: ''\npodSpec:\n  nodeName: Bad_Node\n  containers: [{name: a, image: b}]\n",
    )
    report, _ = lint_json("web", cwd=tmp_path)
    [finding] = findings(report, "invalid-node-name")
    assert finding["file"] == "web/templates/pod.yaml"
    assert finding["line"] == 5, "spec:, the deepest key the template writes itself"
    assert "rendered with values.yaml" in finding["message"]


def test_subcharts_and_library_charts_render_as_helm_renders_them(tmp_path: Path):
    chart = make_chart(
        tmp_path / "app",
        files={
            "Chart.yaml": textwrap.dedent("""\
        apiVersion: v2
        name: app
        version: 0.1.0
        dependencies:
          - name: common
            version: 0.1.0
          - name: worker
            version: 0.1.0
        """)
        },
        values="replicas: 1\nnode: ''\nworker:\n  node: worker-9\n",
    )
    write_chart(
        str(chart / "charts" / "common"),
        {
            "Chart.yaml": "apiVersion: v2\nname: common\nversion: 0.1.0\ntype: library\n",
            "templates/_pod.tpl": '{{- define "common.pod" -}}\napiVersion: v1\nkind: Pod\n{{- end }}\n',
        },
        name="common",
    )
    write_chart(
        str(chart / "charts" / "worker"),
        {
            "templates/job.yaml": textwrap.dedent("""\
        {{ include "common.pod" . }}
        metadata:
          name: worker
        spec:
          nodeName: {{ .Values.node }}
          containers: [{name: w, image: busybox}]
        """)
        },
        name="worker",
    )
    report, stderr = lint_json("app", cwd=tmp_path)
    assert [(f["file"], f["line"], f["rule"]) for f in findings(report, "nodename-on-pod")] == [
        ("app/charts/worker/templates/job.yaml", 5, "nodename-on-pod")
    ], stderr
    assert not findings(report, "yaml-syntax")


def test_a_file_of_a_chart_named_by_a_hook_lints_the_whole_chart(tmp_path: Path):
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    for changed in ("web/values.yaml", "web/templates/_helpers.tpl", "web/templates/deployment.yaml"):
        report, _ = lint_json(changed, cwd=tmp_path)
        assert [f["rule"] for f in findings(report)] == ["nodename-in-template"], changed


def test_a_chart_folder_above_the_repository_root_does_not_claim_its_files(tmp_path: Path):
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: outer\nversion: 0.1.0\n", encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: Bad_Node}\n")
    report, _ = lint_json("pod.yaml", cwd=repo)
    assert ("pod.yaml", "invalid-node-name") in {(f["file"], f["rule"]) for f in findings(report)}


def test_inside_a_chart_folder_paths_are_relative_to_it(tmp_path: Path):
    chart = make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    report, _ = lint_json(".", cwd=chart)
    assert [(f["file"], f["line"]) for f in findings(report)] == [("templates/deployment.yaml", 15)]


def test_a_chart_that_fails_to_render_is_a_helm_render_finding_and_the_rest_is_linted(tmp_path: Path):
    make_chart(
        tmp_path / "broken",
        files={
            "templates/pod.yaml": textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: x
        spec:
          nodeName: {{ required "set node for the debug Pod" .Values.debugNode }}
        """)
        },
    )
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: Bad_Node}\n")
    report, _ = lint_json("broken", "web", "pod.yaml", cwd=tmp_path)
    [failure] = findings(report, "helm-render")
    assert (failure["file"], failure["line"], failure["column"]) == ("broken/templates/pod.yaml", 6, 15)
    # the chart's own `required`, with only its values.yaml: a chart asking for values (test_real_repositories)
    assert failure["severity"] == "warning" and "set node for the debug Pod" in failure["message"]
    assert findings(report, "nodename-in-template")[0]["file"] == "web/templates/deployment.yaml"
    assert findings(report, "invalid-node-name")[0]["file"] == "pod.yaml"


def test_a_comment_in_the_template_suppresses_its_finding(tmp_path: Path):
    make_chart(
        tmp_path / "web",
        values="replicas: 1\nnode: worker-1\n",
        files={
            "templates/deployment.yaml": DEPLOYMENT.replace(
                "      nodeName:", "      # nodename-lint: ignore[nodename-in-template]\n      nodeName:"
            )
        },
    )
    report, _ = lint_json("web", cwd=tmp_path)
    assert not findings(report)


def test_a_hostile_chart_reads_nothing_outside_its_folder_and_contacts_no_cluster(tmp_path: Path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("TOPSECRET", encoding="utf-8")
    chart = make_chart(
        tmp_path / "repo" / "evil",
        files={
            "templates/pod.yaml": textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: evil
        spec:
          nodeName: x{{ .Files.Get "leak.txt" }}{{ .Files.Get "../../outside/secret.txt" }}{{
            .Files.Get "linked/secret.txt" }}
          hostname: {{ lookup "v1" "Namespace" "" "" | len }}-{{ getHostByName "localhost" }}
        """),
            "inside.txt": "fine",
        },
    )
    os.symlink(secret, chart / "leak.txt")
    os.symlink(secret.parent, chart / "linked")
    os.symlink(chart / "inside.txt", chart / "alias.txt")  # a symlink inside the chart is fine
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("this is no kubeconfig: a cluster contact would fail loudly\n", encoding="utf-8")
    report, stderr = lint_json("evil", cwd=tmp_path / "repo", env={"KUBECONFIG": str(kubeconfig)})
    assert "TOPSECRET" not in json.dumps(report) + stderr
    [pinned] = findings(report, "nodename-on-pod")
    assert "spec.nodeName: x " in pinned["message"] or "x bypasses" in pinned["message"], pinned["message"]
    assert f"evil: leak.txt: left out of the render: a symlink to {secret}, outside {chart}" in stderr
    assert "evil: linked: left out of the render" in stderr and "alias.txt" not in stderr
    assert "found symbolic link" not in stderr, "Helm's own log lines stay quiet"


def test_without_an_engine_the_chart_is_a_warning_finding_never_silence(tmp_path: Path):
    """Issue 23: the chart was skipped with a note, and with -q nothing was printed and the exit was 0."""
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['helm_python'] = None\n", encoding="utf-8")
    env = {"PYTHONPATH": str(tmp_path), "PATH": os.path.dirname(os.sys.executable)}
    expected = (
        "web/Chart.yaml:1:1: warning[helm-render] Helm chart not checked: no Helm engine to render it, "
        "so nothing it would install was linted\n"
        "  fix: install the Helm engine: pip install helm-python-sdk, or put helm on PATH "
        "(the GitHub Action and the pre-commit hook install helm-python-sdk)\n"
    )
    quiet = run_cli("web", "-q", cwd=tmp_path, env=env)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, expected, "")
    assert run_cli("web", "--fail-on", "warning", cwd=tmp_path, env=env).returncode == 1
    report, _ = lint_json("web", cwd=tmp_path, env=env)
    assert [(f["rule"], f["severity"], f["file"]) for f in report["findings"]] == [
        ("helm-render", "warning", "web/Chart.yaml")
    ]
    (tmp_path / ".nodename-lint.yaml").write_text("rules: {helm-render: error}\n", encoding="utf-8")
    assert run_cli("web", cwd=tmp_path, env=env).returncode == 1, "a severity set in the config wins"


def test_fix_leaves_templates_alone_and_says_so(tmp_path: Path):
    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    before = (tmp_path / "web" / "templates" / "deployment.yaml").read_text(encoding="utf-8")
    result = run_cli("web", "--fix", cwd=tmp_path)
    assert (tmp_path / "web" / "templates" / "deployment.yaml").read_text(encoding="utf-8") == before
    assert "web: a Helm chart's templates are never rewritten by --fix: what the lint run reports" in result.stderr
    assert "fixed 0 problems in 0 files" in result.stderr and "not fixed" not in result.stderr
    assert "nodename-in-template" in result.stdout and result.returncode == 1


def test_sarif_and_github_annotations_point_at_the_template(tmp_path: Path):
    make_chart(tmp_path / "charts" / "web", values="replicas: 1\nnode: worker-1\n")
    commit_all(tmp_path)
    log = assert_valid_sarif(run_cli("web", "--format", "sarif", cwd=tmp_path / "charts").stdout)
    [result] = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "charts/web/templates/deployment.yaml"
    assert location["region"] == {"startLine": 15, "startColumn": 7}
    github = run_cli("charts", "--format", "github", cwd=tmp_path).stdout
    assert github.startswith("::error file=charts/web/templates/deployment.yaml,line=15,col=7,")


def test_a_rendered_stream_on_stdin_is_reported_at_its_templates_for_code_hosts(tmp_path: Path):
    import helm_python

    (tmp_path / ".git").mkdir()
    chart = make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    with helm_python.Chart.load(str(chart)) as loaded:  # what `helm template web` prints
        stream = "".join(
            f"---\n# Source: {name}\n{text}" for name, text in loaded.render().items() if name.endswith(".yaml")
        )
    text = run_cli("-", cwd=tmp_path, stdin=stream).stdout
    assert "<stdin>:" in text and "(web/templates/deployment.yaml:15:7)" in text
    log = assert_valid_sarif(run_cli("-", "--format", "sarif", cwd=tmp_path, stdin=stream).stdout)
    [result] = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "web/templates/deployment.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 15, "startColumn": 7}
    inside = run_cli("-", "--format", "github", cwd=chart, stdin=stream).stdout  # `helm template .` in the chart
    assert inside.startswith("::error file=web/templates/deployment.yaml,line=15,col=7,")
    (tmp_path / "elsewhere").mkdir()
    elsewhere = run_cli("-", "--format", "json", cwd=tmp_path / "elsewhere", stdin=stream).stdout
    [finding] = json.loads(elsewhere)["findings"]
    assert (finding["templateFile"], finding["templateLine"]) == ("web/templates/deployment.yaml", None)
    github = run_cli("-", "--format", "github", cwd=tmp_path / "elsewhere", stdin=stream).stdout
    assert github.startswith("::error file=elsewhere/web/templates/deployment.yaml,line=1,col=1,"), "no line found"


def test_a_live_run_reads_the_nodes_rendered_charts_name(tmp_path: Path):
    from nodename_lint.cluster.live import referenced
    from nodename_lint.engine import ParsedSource, parse_source
    from nodename_lint.render.types import RenderOptions
    from nodename_lint.sources import discover

    make_chart(tmp_path / "web", values="replicas: 1\nnode: worker-1\n")
    (tmp_path / "prod.yaml").write_text("node: worker-7\n", encoding="utf-8")
    sources = list(discover([str(tmp_path / "web")]))
    assert [source.render for source in sources] == ["helm"]

    def parsed(options: RenderOptions) -> list[ParsedSource]:
        return [parse_source(source, options, "default") for source in sources]

    assert referenced(parsed(RenderOptions()), "default").nodes == {"worker-1"}
    options = RenderOptions(helm_values=(str(tmp_path / "prod.yaml"),))
    assert referenced(parsed(options), "default").nodes == {"worker-7"}, "the values the lint run renders with"


def test_charts_render_in_worker_processes(tmp_path: Path):
    for index in range(3):
        make_chart(tmp_path / f"web{index}", values=f"replicas: 1\nnode: worker-{index}\n")
    single, _ = lint_json("web0", "web1", "web2", "--jobs", "1", cwd=tmp_path)
    pooled, _ = lint_json("web0", "web1", "web2", "--jobs", "2", cwd=tmp_path)
    assert single == pooled and len(findings(single)) == 3


# --- the template outline, without Helm --------------------------------------------------------------


def test_outline_follows_lists_compact_lists_and_documents():
    template = textwrap.dedent("""\
        {{/* a comment
        nodeName: not a key */}}
        apiVersion: v1
        kind: Pod
        spec:
          containers:
          - name: a
            image: x
          - name: b
            resources:
              limits: {cpu: 1}
        ---
        kind: Service
        spec:
          ports:
            - port: 80
        """)
    documents = outline(template)
    assert [d.kind for d in documents] == ["Pod", "Service"]
    pod = pick_document(documents, 0, 2, "Pod")
    assert pod is not None
    assert find_line(pod, ("spec", "containers", 1, "resources", "limits")) == (11, 7, True)
    assert find_line(pod, ("spec", "containers", 0, "image")) == (8, 5, True)
    assert find_line(pod, ("spec", "containers", 2, "image")) == (6, 3, False), "a third item: a range made it"
    assert find_line(pod, ("spec", "nodeName")) == (5, 1, False)
    service = pick_document(documents, 0, 1, "Service")
    assert service is not None and find_line(service, ("spec", "ports", 0, "port")) == (16, 7, True)


def test_helm_template_output_is_split_by_its_source_comments():
    stream = (
        "---\n# Source: web/templates/a.yaml\nkind: A\n---\n# Source: web/templates/b.yaml\nkind: B\n"
        "---\n# Source: web/templates/b.yaml\nkind: B2\n"
    )
    assert split_template_output(stream) == {
        "web/templates/a.yaml": "# Source: web/templates/a.yaml\nkind: A\n",
        "web/templates/b.yaml": (
            "# Source: web/templates/b.yaml\nkind: B\n---\n# Source: web/templates/b.yaml\nkind: B2\n"
        ),
    }


@pytest.mark.parametrize("bad", ["values: x", "release: Not_Valid", "namespace: ''", "other: 1"])
def test_helm_config_is_validated(tmp_path: Path, bad: str):
    make_chart(tmp_path / "web")
    (tmp_path / ".nodename-lint.yaml").write_text(f"helm:\n  web:\n    {bad}\n", encoding="utf-8")
    result = run_cli("web", cwd=tmp_path)
    assert result.returncode == 2 and ".nodename-lint.yaml:" in result.stderr and "helm/web" in result.stderr


def test_a_template_file_name_cannot_inject_lines_into_the_text_report(tmp_path: Path):
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  nodeName: worker-1\n"
    make_chart(tmp_path / "web", files={"templates/a\n::error::injected.yaml": pod})
    result = run_cli("web", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "web/templates/a\\x0a::error::injected.yaml:6:3: info[nodename-on-pod]" in result.stdout
    assert not any(line.startswith("::") for line in (result.stdout + result.stderr).splitlines())


@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_a_values_file_that_is_no_regular_file_or_too_big_is_a_render_error_not_a_hang(tmp_path: Path, kind: str):
    import subprocess
    import sys

    from nodename_lint.render.helm import MAX_CHART_BYTES

    make_chart(tmp_path / "web")
    if kind == "fifo":
        os.mkfifo(tmp_path / "values-x.yaml")  # no writer: a blocking open never returns
    else:
        with open(tmp_path / "values-x.yaml", "wb") as handle:
            handle.truncate(MAX_CHART_BYTES + 1)  # sparse: nothing is written to disk
    (tmp_path / ".nodename-lint.yaml").write_text("helm:\n  web:\n    values: [../values-x.yaml]\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "nodename_lint", "web", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    [finding] = findings(json.loads(done.stdout), "helm-render")
    reason = "not a regular file" if kind == "fifo" else f"larger than {MAX_CHART_BYTES >> 20} MiB"
    assert reason in finding["message"], finding["message"]


def test_a_position_in_helms_message_outside_the_chart_is_not_reported_there(tmp_path: Path):
    from nodename_lint.render.helm import _failure_problem

    (tmp_path / "secret.txt").write_text("TOPSECRET\n", encoding="utf-8")
    chart = make_chart(tmp_path / "web")
    problem = _failure_problem(
        "template: web/../secret.txt:1:1: boom", str(chart), "web", "values.yaml", values_given=False
    )
    assert (problem.file, problem.line) == ("web/Chart.yaml", 1)


# --- issue 23: dependencies, linked subcharts, where a render error is reported ----------------------

PINNED_POD_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ include "lib.name" . }}
spec:
  nodeName: worker-1
  containers: [{name: a, image: busybox}]
"""
LIBRARY_FILES = {
    "Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
    "templates/_name.tpl": '{{- define "lib.name" -}}pinned{{- end }}\n',
}


def dependent_chart(folder: Path, *dependencies: tuple[str, str]) -> Path:
    declared = "".join(f"  - name: {name}\n    version: 0.1.0\n    repository: {repo}\n" for name, repo in dependencies)
    return make_chart(
        folder,
        files={
            "Chart.yaml": f"apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n{declared}",
            "templates/pod.yaml": PINNED_POD_TEMPLATE,
        },
    )


def test_a_chart_whose_dependencies_are_not_vendored_is_a_warning_not_a_partial_render(tmp_path: Path):
    chart = dependent_chart(tmp_path / "app", ("lib", "file://../lib"), ("redis", "https://charts.example.invalid"))
    write_chart(str(chart / "charts" / "lib"), LIBRARY_FILES, name="lib")  # one of the two is vendored
    report, _ = lint_json("app", cwd=tmp_path)
    [warning] = findings(report)
    assert (warning["rule"], warning["severity"], warning["file"]) == ("helm-render", "warning", "app/Chart.yaml")
    assert "its dependencies redis are declared in Chart.yaml but missing in its charts/ folder" in warning["message"]
    assert "the chart was not checked" in warning["message"] and "helm dependency build app" in warning["message"]


def test_file_dependencies_inside_the_repository_are_copied_as_helm_dependency_build_would(tmp_path: Path):
    write_chart(str(tmp_path / "charts" / "partials"), LIBRARY_FILES, name="lib")  # linkerd2's file://../partials
    dependent_chart(tmp_path / "charts" / "app", ("lib", "file://../partials"))
    (tmp_path / "outside-repo").mkdir()
    commit_all(tmp_path)
    report, stderr = lint_json("charts/app", cwd=tmp_path)
    assert [(f["rule"], f["file"], f["line"]) for f in findings(report)] == [
        ("nodename-on-pod", "charts/app/templates/pod.yaml", 6)
    ], stderr
    # a file:// dependency outside the repository is never read: the chart is not checked, and says why
    write_chart(str(tmp_path.parent / f"{tmp_path.name}-elsewhere"), LIBRARY_FILES, name="lib")
    dependent_chart(tmp_path / "charts" / "far", ("lib", f"file://../../../{tmp_path.name}-elsewhere"))
    git(tmp_path, "add", "-A")
    report, stderr = lint_json("charts/far", cwd=tmp_path)
    assert [(f["rule"], f["severity"]) for f in findings(report)] == [("helm-render", "warning")]
    assert "charts/far: Chart.yaml: dependency lib (file://../../../" in stderr and "outside the repository" in stderr


def test_a_subchart_linked_to_a_sibling_chart_in_the_repository_renders(tmp_path: Path):
    write_chart(str(tmp_path / "deploy" / "charts" / "library"), LIBRARY_FILES, name="lib")
    chart = dependent_chart(tmp_path / "deploy" / "charts" / "rook-ceph", ("lib", ""))
    (chart / "charts").mkdir()
    os.symlink("../../library", chart / "charts" / "library")  # rook's charts/library -> ../../library
    commit_all(tmp_path)
    report, stderr = lint_json("deploy", cwd=tmp_path)
    assert [(f["rule"], f["file"]) for f in findings(report)] == [
        ("nodename-on-pod", "deploy/charts/rook-ceph/templates/pod.yaml")
    ], stderr
    assert "left out" not in stderr


def test_a_render_error_is_reported_at_the_template_line_helm_names(tmp_path: Path):
    make_chart(
        tmp_path / "web",
        files={"templates/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.x.y }}\n"},
    )
    make_chart(
        tmp_path / "sub",
        files={
            "charts/folder-name/Chart.yaml": "apiVersion: v2\nname: other-name\nversion: 0.1.0\n",
            "charts/folder-name/templates/b.yaml": "x: {{ .Values.a.b }}\n",
        },
    )
    report, _ = lint_json("web", "sub", cwd=tmp_path)
    placed = {(f["file"], f["line"], f["column"]) for f in findings(report, "helm-render")}
    assert placed == {("web/templates/pod.yaml", 4, 18), ("sub/charts/folder-name/templates/b.yaml", 1, 13)}


def test_a_multi_line_helm_error_reads_as_one_line_of_words(tmp_path: Path):
    make_chart(
        tmp_path / "web",
        files={"templates/pod.yaml": 'kind: Pod\nmetadata:\n  name: {{ fail "boom\\n::error::injected" }}\n'},
    )
    make_chart(tmp_path / "nil", files={"templates/pod.yaml": "kind: Pod\nmetadata:\n  name: {{ .Values.x.y }}\n"})
    result = run_cli("web", "nil", cwd=tmp_path)
    assert result.returncode == 1
    assert "\\x0a" not in result.stdout
    assert not any(line.startswith("::") for line in (result.stdout + result.stderr).splitlines())
    assert (
        "nil/templates/pod.yaml:3:18: error[helm-render] Helm cannot render this chart (rendered with values.yaml, "
        "release 'release-name'), so none of it can be installed: web/templates/pod.yaml:3:18 executing "
        '"web/templates/pod.yaml" at <.Values.x.y>: nil pointer evaluating interface {}.y'
    ) in result.stdout
    assert (
        "web/templates/pod.yaml:3:11: warning[helm-render]" in result.stdout
        and "boom ::error::injected" in result.stdout
    )
