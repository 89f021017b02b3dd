"""Kustomizations are built with the real kustomize (kubectl kustomize) and linted as built."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import run_cli, unavailable

BASE = {
    "base/kustomization.yaml": "resources:\n  - deploy.yaml\n  - pod.yaml\n",
    "base/deploy.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          selector:
            matchLabels: {app: web}
          template:
            metadata:
              labels: {app: web}
            spec:
              containers:
                - name: web
                  image: nginx
        """,
    "base/pod.yaml": """\
        apiVersion: v1
        kind: Pod
        metadata:
          name: debug
        spec:
          containers:
            - name: d
              image: busybox
        """,
}


@pytest.fixture(autouse=True)
def kustomize_tool() -> None:
    if not (shutil.which("kustomize") or shutil.which("kubectl")):
        unavailable("neither kustomize nor kubectl (with kustomize) is on PATH: .ci/run installs kubectl")


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def lint(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[list[dict], str]:
    result = run_cli(*args, "--format", "json", cwd=cwd, env=env)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)["findings"], result.stderr


def places(findings: list[dict]) -> list[tuple[str, int, int, str]]:
    return sorted((f["file"], f["line"], f["column"], f["rule"]) for f in findings)


def test_overlay_patches_are_reported_where_they_set_node_name(tmp_path: Path):
    write(
        tmp_path,
        {
            **BASE,
            "overlays/prod/kustomization.yaml": """\
        resources:
          - ../../base
        namespace: prod
        patches:
          - path: pin.yaml
          - path: pod-ops.yaml
            target: {kind: Pod, name: debug}
        """,
            "overlays/prod/pin.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: web
        spec:
          template:
            spec:
              nodeName: worker-1
        """,
            "overlays/prod/pod-ops.yaml": """\
        - op: add
          path: /spec/nodeName
          value: Worker_2
        """,
        },
    )
    findings, stderr = lint(tmp_path, "overlays", "base")
    assert places(findings) == [
        ("overlays/prod/pin.yaml", 8, 7, "nodename-in-template"),
        ("overlays/prod/pod-ops.yaml", 2, 3, "invalid-node-name"),
        ("overlays/prod/pod-ops.yaml", 2, 3, "nodename-on-pod"),
    ], stderr
    pinned = next(f for f in findings if f["rule"] == "nodename-in-template")
    assert pinned["object"]["namespace"] == "prod", "the object as built: the overlay's namespace"


def test_inline_patches_are_reported_in_the_kustomization(tmp_path: Path):
    write(
        tmp_path,
        {
            **BASE,
            "overlays/dev/kustomization.yaml": """\
        resources:
          - ../../base
        patches:
          - patch: |-
              apiVersion: apps/v1
              kind: Deployment
              metadata:
                name: web
              spec:
                template:
                  spec:
                    nodeName: worker-1
          - target:
              kind: Pod
            patch: |-
              - op: add
                path: /spec/nodeName
                value: worker-2
        """,
        },
    )
    findings, _ = lint(tmp_path, "overlays")
    assert places(findings) == [
        ("overlays/dev/kustomization.yaml", 12, 13, "nodename-in-template"),
        ("overlays/dev/kustomization.yaml", 17, 9, "nodename-on-pod"),
    ]


def test_legacy_strategic_merge_and_json6902_fields_and_a_pinned_base(tmp_path: Path):
    files = {
        **BASE,
        "overlays/old/kustomization.yaml": """\
        resources:
          - ../../base
        namePrefix: old-
        patchesStrategicMerge:
          - pod-pin.yaml
        patchesJson6902:
          - target: {group: apps, version: v1, kind: Deployment, name: web}
            path: deploy-ops.yaml
        """,
        "overlays/old/pod-pin.yaml": """\
        apiVersion: v1
        kind: Pod
        metadata:
          name: debug
        spec:
          nodeName: worker-3
        """,
        "overlays/old/deploy-ops.yaml": """\
        - op: add
          path: /spec/template/spec/nodeName
          value: worker-4
        """,
    }
    files["base/deploy.yaml"] = files["base/deploy.yaml"].replace(
        "          containers:", "          nodeName: base-node\n          containers:"
    )
    write(tmp_path, files)
    findings, _ = lint(tmp_path, "overlays", "base")
    assert places(findings) == [
        ("overlays/old/deploy-ops.yaml", 2, 3, "nodename-in-template"),
        ("overlays/old/pod-pin.yaml", 6, 3, "nodename-on-pod"),
    ], "the base is linted as the overlay builds it (its own nodeName is replaced there), not also on its own"
    alone, _ = lint(tmp_path, "base")
    assert places(alone) == [("base/deploy.yaml", 12, 7, "nodename-in-template")], "the base alone: as built alone"
    names = {f["object"]["name"] for f in findings if f["file"].startswith("overlays")}
    assert names == {"old-web", "old-debug"}


def test_a_file_the_kustomization_does_not_list_is_still_linted_on_its_own(tmp_path: Path):
    write(
        tmp_path,
        {**BASE, "base/unlisted.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: u}\nspec: {nodeName: Bad_Node}\n"},
    )
    findings, _ = lint(tmp_path, "base")
    assert places(findings) == [
        ("base/unlisted.yaml", 4, 8, "invalid-node-name"),
        ("base/unlisted.yaml", 4, 8, "nodename-on-pod"),
    ]


def test_a_changed_patch_file_builds_its_kustomization(tmp_path: Path):
    write(
        tmp_path,
        {
            **BASE,
            "overlays/x/kustomization.yaml": "resources: [../../base]\npatches:\n  - path: p.yaml\n"
            "    target: {kind: Pod}\n",
            "overlays/x/p.yaml": "- op: add\n  path: /spec/nodeName\n  value: Bad_Node\n",
        },
    )
    findings, _ = lint(tmp_path, "overlays/x/p.yaml")
    assert ("overlays/x/p.yaml", 2, 3, "invalid-node-name") in places(findings)


def test_without_a_tool_a_note_and_the_files_one_by_one(tmp_path: Path):
    write(
        tmp_path,
        {
            **BASE,
            "overlays/x/kustomization.yaml": "resources: [../../base]\npatches:\n  - path: pin.yaml\n",
            "overlays/x/pin.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec: {nodeName: n-1}\n",
        },
    )
    no_tools = tmp_path / "bin"
    no_tools.mkdir()
    os.symlink(os.sys.executable, no_tools / "python")
    findings, stderr = lint(tmp_path, "overlays", env={"PATH": str(no_tools)})
    assert places(findings) == [("overlays/x/pin.yaml", 4, 8, "nodename-on-pod")], "the patch file on its own"
    assert "overlays/x: kustomization not built (put kustomize or kubectl on PATH" in stderr


def test_a_hostile_kustomization_runs_nothing_and_fetches_nothing(tmp_path: Path):
    marker = tmp_path / "ran"
    write(
        tmp_path,
        {
            "evil/kustomization.yaml": """\
            resources:
              - https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1
            """,
            "exec/kustomization.yaml": "generators:\n  - gen.yaml\n",
            "exec/gen.yaml": f"""\
            apiVersion: example.com/v1
            kind: Generator
            metadata:
              name: g
              annotations:
                config.kubernetes.io/function: |
                  exec:
                    path: /bin/sh
                    args: ["-c", "touch {marker}"]
            """,
            "outside/kustomization.yaml": "resources:\n  - ../../etc-copy/secret.yaml\n",
            "ok/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: Bad_Node}\n",
        },
    )
    write(tmp_path.parent, {"etc-copy/secret.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: TOPSECRET}\n"})
    result = run_cli("evil", "exec", "outside", "ok", "--format", "json", cwd=tmp_path)
    assert not marker.exists(), "an exec function of the repository must never run"
    assert "TOPSECRET" not in result.stdout
    assert "evil: kustomization not built: `resources` in evil/kustomization.yaml names a remote location" in (
        result.stderr
    )
    assert "exec: kustomize build failed" in result.stderr
    assert "outside: kustomization not built: it reads " in result.stderr
    reported = {(f["file"], f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert ("ok/pod.yaml", "invalid-node-name") in reported


def test_the_summary_counts_a_kustomizations_objects_once(tmp_path: Path):
    write(tmp_path, {**BASE, "loose.yaml": BASE["base/pod.yaml"]})
    result = run_cli("base", "loose.yaml", "--format", "json", cwd=tmp_path)
    assert json.loads(result.stdout)["summary"]["objects"] == 2 + 1, "as built, not also file by file"


@pytest.mark.parametrize("with_git", [True, False], ids=["git work tree", "no git: the current folder"])
def test_a_base_outside_the_repository_is_not_built(tmp_path: Path, with_git: bool):
    """Root-only loading lets a kustomization use any kustomization folder on the machine as a base;
    one outside the repository is refused, so nothing of it reaches the report."""
    repo = tmp_path / "repo"
    write(repo, {**BASE, "overlay/kustomization.yaml": "resources:\n  - ../base\n"})
    write(repo, {"sneaky/kustomization.yaml": "resources:\n  - ../../elsewhere\n"})
    write(tmp_path, {"elsewhere/kustomization.yaml": "resources:\n  - pod.yaml\n"})
    write(
        tmp_path,
        {"elsewhere/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: TOPSECRET}\nspec: {nodeName: X_1}\n"},
    )
    if with_git:
        git(repo, "init", "-q")
        git(repo, "add", "-A")
    result = run_cli("overlay", "sneaky", "--format", "json", cwd=repo)
    assert "TOPSECRET" not in result.stdout and "X_1" not in result.stdout
    assert "sneaky: kustomization not built: it reads " in result.stderr and "outside the repository" in result.stderr
    assert "overlay: kustomization not built" not in result.stderr  # a sibling base inside the repository is fine
    objects = json.loads(result.stdout)["summary"]["objects"]
    assert objects == 2  # the overlay's Deployment and Pod, built from ../base


# --- issue 21: a kustomization from a pull request builds sealed ----------------------------------


@pytest.mark.parametrize(
    ("target", "name"),
    [("(a|a)*c", "a" * 40), (r"\pL+", "web")],
    ids=["exponential in a backtracking engine", "an RE2 class Python lacks"],
)
def test_patch_target_regexps_are_read_as_kustomize_reads_them(tmp_path: Path, target: str, name: str):
    """Targets are Go regexps (RE2): linear, with `\\pL`; never Python's backtracking `re`."""
    write(
        tmp_path,
        {
            "kustomization.yaml": f"""\
            resources: [pod.yaml]
            patches:
              - target: {{kind: Pod, name: '{target}'}}
                patch: |-
                  - op: add
                    path: /metadata/labels
                    value: {{patched: "yes"}}
            """,
            "pod.yaml": f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  nodeName: Bad_Node\n",
        },
    )
    result = run_cli(".", "--format", "json", cwd=tmp_path, timeout=60)  # Python's re: 2**40 steps
    assert result.returncode == 1, result.stderr
    assert ("pod.yaml", 5, 3, "invalid-node-name") in places(json.loads(result.stdout)["findings"])


class _RecordingServer(http.server.ThreadingHTTPServer):
    requests: list[str]


class _Recorder(http.server.BaseHTTPRequestHandler):
    server: _RecordingServer

    def do_GET(self) -> None:  # answers a manifest, as an attacker's server would
        self.server.requests.append(self.path)
        body = b"apiVersion: v1\nkind: Pod\nmetadata: {name: fetched}\nspec: {nodeName: FETCHED_1}\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def loopback_server() -> Iterator[_RecordingServer]:
    """An HTTP server on 127.0.0.1 (Go sends loopback requests past any proxy) that records every request."""
    server = _RecordingServer(("127.0.0.1", 0), _Recorder)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_remote_resources_and_bases_are_refused_before_kustomize_runs(tmp_path: Path, loopback_server):
    url = f"http://127.0.0.1:{loopback_server.server_address[1]}"
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: local}\nspec:\n  containers: [{name: c, image: x}]\n"
    plugin = f"apiVersion: builtin\nkind: PatchTransformer\nmetadata: {{name: p}}\npath: {url}/patch.yaml\n"
    cases = {
        "resource": f"resources:\n  - {url}/x.yaml\n",
        "base": f"resources:\n  - {url}/org/repo.git//base?ref=main\n",
        "scp": "resources:\n  - git@127.0.0.1:org/repo//base\n",
        "github": "resources:\n  - github.com/org/repo/base?ref=v1\n",
        "file-repo": f"resources:\n  - file://{tmp_path}/elsewhere\n",
        "patch": f"resources: [pod.yaml]\npatches:\n  - path: {url}/patch.yaml\n",
        "generator-file": f"configMapGenerator:\n  - name: c\n    files: [key={url}/cfg]\n",
        "env": f"secretGenerator:\n  - name: s\n    envs: [{url}/env]\n",
        "inline-plugin": "resources: [pod.yaml]\ntransformers:\n  - |\n" + textwrap.indent(plugin, "    "),
        "plugin-file": "resources: [pod.yaml]\ntransformers: [plugin.yaml]\n",
        "in-a-base": "resources: [../resource]\n",
    }
    files = {f"{name}/kustomization.yaml": text for name, text in cases.items()}
    files.update({f"{name}/pod.yaml": pod for name in cases})
    files["plugin-file/plugin.yaml"] = plugin
    files["ok/pod.yaml"] = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: Bad_Node}\n"
    files["local/kustomization.yaml"] = "resources: [pod@v1.yaml]\n"  # a local file first, as kustomize reads it
    files["local/pod@v1.yaml"] = pod
    write(tmp_path, files)
    result = run_cli(*cases, "ok", "local", "--format", "json", cwd=tmp_path)
    assert loopback_server.requests == [], "nothing may be fetched"
    assert "FETCHED_1" not in result.stdout
    for name in cases:
        assert f"nodename-lint: {name}: kustomization not built: `" in result.stderr, (name, result.stderr)
    assert "`resources` in in-a-base/../resource/kustomization.yaml names a remote location" in result.stderr
    assert "vendor them into the repository; its files were linted one by one" in result.stderr
    assert "local: kustomization not built" not in result.stderr and "local: kustomize build" not in result.stderr
    reported = {(f["file"], f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert ("ok/pod.yaml", "invalid-node-name") in reported


def test_planted_origin_annotations_open_nothing_but_the_builds_own_files(tmp_path: Path):
    """A patch can set kustomize's origin annotations and a resource can carry a transformations one:
    what they name (a device, a FIFO without a writer, a file of the repository that silences every
    finding placed in it) is never opened: only paths kustomize wrote into the build's private copy count."""
    fifo = tmp_path / "app" / "fifo"
    write(
        tmp_path,
        {
            "app/kustomization.yaml": f"""\
            resources: [pod.yaml]
            patches:
              - patch: |-
                  apiVersion: v1
                  kind: Pod
                  metadata:
                    name: p
                    annotations:
                      config.kubernetes.io/origin: "path: {tmp_path}/app/quiet.yaml"
            """,
            "app/quiet.yaml": "# nodename-lint: ignore\n",
            "app/pod.yaml": f"""\
            apiVersion: v1
            kind: Pod
            metadata:
              name: p
              annotations:
                alpha.config.kubernetes.io/transformations: |
                  - configuredIn: {fifo}
                    configuredBy: {{kind: X}}
                  - configuredIn: /dev/zero
                    configuredBy: {{kind: X}}
            spec:
              nodeName: Bad_Node
              containers: [{{name: c, image: x}}]
            """,
        },
    )
    os.mkfifo(fifo)
    result = run_cli("app", "--format", "json", cwd=tmp_path, timeout=60)
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert {(f["file"], f["rule"]) for f in findings} == {
        ("app/kustomization.yaml", "invalid-node-name"),
        ("app/kustomization.yaml", "nodename-on-pod"),
    }, "at the kustomization: the planted origin is ignored, and pod.yaml is linted only as built"


@pytest.mark.parametrize(
    "secret", [".git/config", "kubeconfig"], ids=["the checkout's .git/config", "an untracked file"]
)
def test_git_and_untracked_files_are_never_overlay_content(tmp_path: Path, secret: str):
    """What actions/checkout writes into .git/config (the token), or a kubeconfig an earlier CI step left,
    must never reach a report through configMapGenerator + replacements (a root kustomization.yaml)."""
    token = "AUTHORIZATION: basic c2VjcmV0LXRva2Vu"
    kustomization = """\
        resources: [pod.yaml]
        configMapGenerator:
          - name: leak
            files: [cfg=SECRET]
        replacements:
          - source: {kind: ConfigMap, name: leak, fieldPath: data.cfg}
            targets:
              - select: {kind: Pod}
                fieldPaths: [spec.nodeName]
                options: {create: true}
        """
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n"
    write(
        tmp_path,
        {
            "kustomization.yaml": kustomization.replace("SECRET", secret),
            "pod.yaml": pod,
            "control/kustomization.yaml": kustomization.replace("SECRET", "tracked.txt"),
            "control/pod.yaml": pod,
            "control/tracked.txt": "Tracked_Node",
        },
    )
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "http.https://github.com/.extraheader", token)
    git(tmp_path, "add", "-A")
    (tmp_path / "kubeconfig").write_text(token, encoding="utf-8")  # written after `git add`: untracked
    result = run_cli(".", "--format", "json", cwd=tmp_path)
    assert "c2VjcmV0LXRva2Vu" not in result.stdout + result.stderr
    assert f"nodename-lint: .: kustomization not built: it names {secret}, which is not a file the repository " in (
        result.stderr
    )
    assert "Tracked_Node" in result.stdout, "the same attack with a tracked file builds: the path is real"


def run_cli_with_budget(settings: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command line, with kustomize.py's budget constants set first (the defaults take half a minute
    to spend; these tests spend a smaller budget the same way)."""
    code = (
        "import runpy, sys\n"
        "from dataclasses import replace\n"
        "import nodename_lint.render.kustomize as kustomize\n"
        f"{settings}\n"
        "sys.argv = ['nodename-lint', *sys.argv[1:]]\n"
        "runpy.run_module('nodename_lint', run_name='__main__', alter_sys=True)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )


def write_growing_overlay(root: Path, copies: int = 24) -> None:
    """One tiny kustomization whose JSON patch doubles a list COPIES times: kustomize's memory and time grow as
    2**COPIES (18 copies: 1.2 GB and 35 s; the reported attack nested 37 files to reach 2.8 GB)."""
    ops = "".join("      - {op: copy, from: /spec/l, path: /spec/l/-}\n" for _ in range(copies))
    write(
        root,
        {
            "bomb/blob.yaml": "apiVersion: example.com/v1\nkind: Blob\nmetadata: {name: b}\nspec: {l: [x]}\n",
            "bomb/kustomization.yaml": "resources: [blob.yaml]\npatches:\n  - target: {kind: Blob}\n    patch: |-\n"
            + ops,
            "ok/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: Bad_Node}\n",
        },
    )


def test_a_build_that_grows_without_bound_ends_at_its_memory_budget(tmp_path: Path):
    write_growing_overlay(tmp_path)
    budget = "kustomize.BUILD_BUDGET = replace(kustomize.BUILD_BUDGET, memory_bytes=128 << 20)"
    result = run_cli_with_budget(budget, "bomb", "ok", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "bomb: kustomization not built: kustomize needed more than 128 MiB of memory (the budget of one build:" in (
        result.stderr
    )
    reported = {(f["file"], f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert ("ok/pod.yaml", "invalid-node-name") in reported, "the rest of the run still reports"


def test_every_build_of_a_run_shares_one_time_budget(tmp_path: Path):
    write_growing_overlay(tmp_path)
    write(tmp_path, {"later/kustomization.yaml": "resources: [pod.yaml]\n", "later/pod.yaml": "kind: Pod\n"})
    result = run_cli_with_budget("kustomize.RUN_SECONDS = 3.0", "bomb", "later", "ok", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    # notes end the text report on stdout (said once on a terminal)
    assert "bomb: kustomization not built: kustomize ran out of the run's kustomize time (3 s for every build)" in (
        result.stdout
    )
    assert "later: kustomization not built: the run's kustomize time (3 s for every build) is spent" in result.stdout
    assert "ok/pod.yaml:4:" in result.stdout


# --- issue 23: kustomize on real repositories ------------------------------------------------------


def test_the_build_failed_note_quotes_kustomizes_error_not_a_warning(tmp_path: Path):
    """kubectl prints deprecation warnings first, and a multi-line error as klog's `err=<` block."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
    write(
        tmp_path,
        {
            "deprecated/kustomization.yaml": "patchesStrategicMerge: [p.yaml]\nresources: [missing.yaml]\n",
            "deprecated/p.yaml": pod,
            "multiline/kustomization.yaml": "resources: [pod.yaml]\nreplacements:\n  - path: nope.yaml\n",
            "multiline/pod.yaml": pod,
        },
    )
    _, stderr = lint(tmp_path, "deprecated", "multiline")
    failed = "kustomize build failed, so `kubectl apply -k` would fail too: "
    notes = {line.split(": ")[1]: line for line in stderr.splitlines() if failed in line}
    assert "deprecated/missing.yaml: no such file or directory" in notes["deprecated"], notes
    assert "multiline/nope.yaml: no such file or directory" in notes["multiline"], notes
    assert not any(word in stderr for word in ("Warning", "err=<", '"command failed"', "nodename-lint-kustomize-"))


def test_a_component_is_built_inside_the_overlays_that_list_it_not_on_its_own(tmp_path: Path):
    write(
        tmp_path,
        {
            **BASE,
            "components/pin/kustomization.yaml": """\
            apiVersion: kustomize.config.k8s.io/v1alpha1
            kind: Component
            patches:
              - path: pin.yaml
            """,
            "components/pin/pin.yaml": """\
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
            spec:
              nodeName: Bad_Node
            """,
            "overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\n"
            "components: [../../components/pin]\n",
        },
    )
    findings, stderr = lint(tmp_path, ".")
    assert places(findings) == [
        ("components/pin/pin.yaml", 6, 3, "invalid-node-name"),
        ("components/pin/pin.yaml", 6, 3, "nodename-on-pod"),
    ], stderr
    assert {f["object"]["name"] for f in findings} == {"prod-debug"}, "only as the overlay builds it"
    assert "components/pin: kustomize build failed" not in stderr
    assert "components/pin: a kustomize Component" not in stderr, "the overlay that lists it builds it: no note"
    alone, stderr = lint(tmp_path, "components")  # a patch is not a whole object: not linted as one
    assert alone == [], stderr
    assert "components/pin: a kustomize Component: built only inside the kustomizations that list it" in stderr


CLUSTER = """\
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Namespace, metadata: {name: default}}
  - apiVersion: v1
    kind: Node
    metadata: {name: worker-1}
    status:
      allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
      conditions: [{type: Ready, status: "True"}]
"""


def test_an_overlays_namespace_is_reported_where_the_kustomization_sets_it_and_nowhere_else(tmp_path: Path):
    """The namespace transformer runs after the patches: a patch's `namespace:` line is not where it comes
    from. The files the overlay builds (the base, its resource, the patch) are linted only as built: their
    own namespace (`staging`) is one the build overrides, never a missing namespace of its own."""
    deploy = BASE["base/deploy.yaml"].replace("  name: web\n", "  name: web\n          namespace: staging\n")
    write(
        tmp_path / "repo",
        {
            **BASE,
            "base/deploy.yaml": deploy,
            "overlays/prod/kustomization.yaml": "resources:\n  - ../../base\nnamespace: prod\npatches:\n"
            "  - path: pin.yaml\n",
            "overlays/prod/pin.yaml": """\
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: web
              namespace: staging
            spec:
              template:
                spec:
                  nodeName: worker-1
            """,
        },
    )
    (tmp_path / "cluster.yaml").write_text(CLUSTER, encoding="utf-8")
    findings, stderr = lint(tmp_path / "repo", "base", "overlays", "--cluster-state", "../cluster.yaml")
    missing = [f for f in findings if f["rule"] == "missing-namespace"]
    assert {(f["file"], f["line"], f["column"], f["object"]["name"]) for f in missing} == {
        ("overlays/prod/kustomization.yaml", 3, 1, "web"),
        ("overlays/prod/kustomization.yaml", 3, 1, "debug"),
    }, stderr
    assert all("namespace prod does not exist" in f["message"] for f in missing)
    assert "staging" not in json.dumps(findings)


def test_the_outermost_overlay_that_writes_a_value_is_where_it_is_reported(tmp_path: Path):
    patch = "patches:\n  - patch: '{apiVersion: v1, kind: Pod, metadata: {name: debug}, spec: {nodeName: %s}}'\n"
    write(
        tmp_path,
        {
            **BASE,
            "mid/kustomization.yaml": "resources: [../base]\n" + patch % "Mid_Node",
            "top/kustomization.yaml": "resources: [../mid]\nnamePrefix: t-\n" + patch % "Top_Node",
        },
    )
    findings, _ = lint(tmp_path, "top")
    assert places(findings) == [
        ("top/kustomization.yaml", 4, 73, "invalid-node-name"),
        ("top/kustomization.yaml", 4, 73, "nodename-on-pod"),
    ]


def test_a_base_reached_through_a_symlink_inside_the_repository_is_built(tmp_path: Path):
    """A tracked link to tracked content of the repository is content (the copy holds it under the link's name)."""
    write(tmp_path, {f"shared/{name}": text for name, text in BASE.items()})
    os.symlink("shared/base", tmp_path / "base")
    write(
        tmp_path,
        {
            "overlays/prod/kustomization.yaml": "resources: [../../base]\nnamePrefix: prod-\npatches:\n"
            "  - path: pin.yaml\n",
            "overlays/prod/pin.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec: {nodeName: X_1}\n",
        },
    )
    findings, stderr = lint(tmp_path, "overlays")
    assert places(findings) == [
        ("overlays/prod/pin.yaml", 4, 8, "invalid-node-name"),
        ("overlays/prod/pin.yaml", 4, 8, "nodename-on-pod"),
    ], stderr
    assert {f["object"]["name"] for f in findings} == {"prod-debug"}, stderr  # as built, not the patch alone
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    assert lint(tmp_path, "overlays")[0] == findings, "the same from a git work tree (the link is tracked)"


# --- issue 21, a hostile review: what the reader before kustomize must not miss -----------------------


@pytest.fixture
def without_network_namespace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a run where the kernel refuses unshare (a container without CAP_SYS_ADMIN, Ubuntu's
    AppArmor restriction of user namespaces): the dead proxy is all that is left, and Go sends loopback requests
    past it, so what kustomize_inputs.py reads first is the only guard."""
    folder = tmp_path_factory.mktemp("no-network-namespace")
    (folder / "sitecustomize.py").write_text(
        "import nodename_lint.render.sandbox as sandbox\nsandbox._unshare_function = lambda: None\n"
    )
    return {"PYTHONPATH": str(folder)}


def test_without_a_network_namespace_kustomize_reaches_loopback(
    tmp_path: Path, loopback_server, without_network_namespace
):
    """The premise of the next test: the fallback really is open to 127.0.0.1, so only the reader guards it
    (kubectl kustomize fetches this URL when it runs; nodename-lint refuses the build first)."""
    url = f"http://127.0.0.1:{loopback_server.server_address[1]}/x.yaml"
    write(tmp_path, {"k/kustomization.yaml": f"resources:\n  - {url}\n"})
    command = [*_kustomize_command(), str(tmp_path / "k")]
    env = {"PATH": os.environ["PATH"], "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    built = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert "FETCHED_1" in built.stdout and loopback_server.requests == ["/x.yaml"], built.stderr


def _kustomize_command() -> list[str]:
    kustomize = shutil.which("kustomize")
    return [kustomize, "build"] if kustomize else [shutil.which("kubectl") or "kubectl", "kustomize"]


def test_remote_locations_the_reader_could_miss_are_refused(
    tmp_path: Path, loopback_server, without_network_namespace: dict[str, str]
):
    """Each of these made kustomize fetch from 127.0.0.1 past the reader: an entry that also reads as a YAML
    mapping (`URL#a: b`) was taken for an inline plugin configuration and skipped; a kustomization or plugin
    configuration the reader could not read whole (a 5 MiB comment first) was skipped as "kustomize reports
    it itself", while kustomize read it and fetched."""
    url = f"http://127.0.0.1:{loopback_server.server_address[1]}"
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: local}\nspec:\n  containers: [{name: c, image: x}]\n"
    padding = "#" + "x" * (5 << 20) + "\n"
    plugin = f"apiVersion: builtin\nkind: PatchTransformer\nmetadata: {{name: p}}\npath: {url}/patch.yaml\n"
    cases = {
        "reads-as-mapping": f'resources:\n  - "{url}/x.yaml#a: b"\n',
        "transformer-reads-as-mapping": f'resources: [pod.yaml]\ntransformers:\n  - "{url}/t.yaml#a: b"\n',
        "padded": padding + f"resources:\n  - {url}/padded.yaml\n",
        "padded-plugin": "resources: [pod.yaml]\ntransformers: [plugin.yaml]\n",
    }
    files = {f"{name}/kustomization.yaml": text for name, text in cases.items()}
    files.update({f"{name}/pod.yaml": pod for name in cases})
    files["padded-plugin/plugin.yaml"] = padding + plugin
    files["ok/pod.yaml"] = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: Bad_Node}\n"
    write(tmp_path, files)
    result = run_cli(*cases, "ok", "--format", "json", cwd=tmp_path, env=without_network_namespace)
    assert loopback_server.requests == [], "nothing may be fetched"
    assert "FETCHED_1" not in result.stdout
    for name in cases:
        assert f"nodename-lint: {name}: kustomization not built: " in result.stderr, (name, result.stderr)
    reported = {(f["file"], f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert ("ok/pod.yaml", "invalid-node-name") in reported


def test_a_base_that_climbs_out_through_a_linked_folder_is_not_built(tmp_path: Path):
    """`link/../../..` climbs from the link's target in the work tree (realpath: inside the repository) but from
    the link's own place in the private copy, where kustomize resolves it (lexically, as Go's filepath.Join): with
    enough `..` the copy's path reaches `/` and a kustomization anywhere on the runner is built into the report."""
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, {"kustomization.yaml": "resources: [pod.yaml]\n"})
    write(elsewhere, {"pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec: {nodeName: TOPSECRET_1}\n"})
    climb = len(Path(tempfile.gettempdir()).resolve().parts) + 3  # past the copy's folders, up to `/`
    repo = tmp_path / "repo"
    deep = repo.joinpath(*(f"d{index}" for index in range(climb)))
    write(deep, {"keep.txt": "x"})
    os.symlink(deep.relative_to(repo), repo / "link")
    reference = "link/" + "../" * climb + str(elsewhere).lstrip("/")
    write(repo, {"kustomization.yaml": f"resources:\n  - {reference}\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    result = run_cli(".", "--format", "json", cwd=repo)
    assert "TOPSECRET" not in result.stdout + result.stderr
    assert "nodename-lint: .: kustomization not built: it reads " in result.stderr, result.stderr
    assert "outside the repository" in result.stderr


def test_a_symlink_loop_between_kustomizations_is_refused_at_once(tmp_path: Path):
    """A folder that lists a link to itself: the reader entered `link`, `link/link`, ... (each a new place in the
    copy), and every realpath of the growing path cost more: minutes of CPU before the 10,000-folder bound. kustomize
    refuses the loop in the work tree ("cycle detected"), and so does the reader, on the first step."""
    write(tmp_path, {"a/kustomization.yaml": "resources:\n  - link\n  - pod.yaml\n"})
    write(tmp_path, {"a/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: Bad_Node}\n"})
    os.symlink(".", tmp_path / "a" / "link")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    result = run_cli("a", "--format", "json", cwd=tmp_path, timeout=60)
    assert "nodename-lint: a: kustomization not built: `resources` in a/kustomization.yaml enters link" in result.stderr
    assert "(a loop: kustomize refuses it too)" in result.stderr
    reported = {(f["file"], f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert ("a/pod.yaml", "invalid-node-name") in reported


def test_a_deep_folder_entered_again_through_a_shallow_link_is_checked_from_there(tmp_path: Path):
    """The copy holds `l` (a link to the deep folder D) as a plain copy of D, one level below the root: D's
    `../` x depth climbs to the root from D, but from `l` it climbs past `/`, and kustomize builds a folder anywhere
    on the runner into the report. The reader checked each real folder once, from the first place it entered it."""
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere, {"kustomization.yaml": "resources: [pod.yaml]\n"})
    write(elsewhere, {"pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec: {nodeName: TOPSECRET_2}\n"})
    repo = tmp_path / "repo"
    depth = len(Path(tempfile.gettempdir()).resolve().parts) + 4  # past the copy's folders, up to `/`
    deep = "/".join(f"d{index}" for index in range(depth))
    down = str(elsewhere).lstrip("/")
    write(repo, {f"{down}/kustomization.yaml": "resources: []\n"})  # what D's reference names inside the repository
    write(repo, {"kustomization.yaml": f"resources:\n  - {deep}\n  - l\n"})
    write(repo, {f"{deep}/kustomization.yaml": f"resources:\n  - {'../' * depth}{down}\n"})
    os.symlink(deep, repo / "l")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    result = run_cli(".", "--format", "json", cwd=repo, timeout=60)
    assert "TOPSECRET" not in result.stdout + result.stderr
    assert "nodename-lint: .: kustomization not built: it reads " in result.stderr, result.stderr
