"""The process pool gives exactly the report of a single-process run, whatever the worker count."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

import pytest

from nodename_lint import parallel
from nodename_lint.engine import Linter
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context
from nodename_lint.sources import STDIN, Source, discover

from .conftest import run_cli

PINNED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: debug-{index}
  namespace: team-{team}
spec:
  nodeName: {node}
  containers:
    - name: shell
      image: busybox:1.36
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{index}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      nodeName: worker-{index}
      containers: [{{name: web, image: nginx}}]
---
apiVersion: v1
kind: Service
metadata: {{name: web-{index}}}
spec: {{ports: [{{port: 80}}]}}
"""


def make_tree(root: Path) -> Path:
    """Files with findings, syntax errors, undecodable bytes and static Pods that repeat a name."""
    for index in range(30):
        folder = root / f"team-{index % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        node = "Worker_1" if index % 5 == 0 else f"worker-{index}"
        (folder / f"pod-{index:02}.yaml").write_text(PINNED_POD.format(index=index, team=index % 4, node=node))
        (folder / f"deploy-{index:02}.yaml").write_text(DEPLOYMENT.format(index=index))
    (root / "team-1" / "broken.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: [\n---\n" + PINNED_POD.format(index=99, team=1, node="worker-9")
    )
    (root / "team-2" / "latin1.yaml").write_bytes(b"apiVersion: v1\nkind: ConfigMap\ndata: {a: \xe9t\xe9}\n")
    static = root / "node-1" / "etc" / "kubernetes" / "manifests"
    static.mkdir(parents=True)
    for name in ("a.yaml", "b.yaml"):  # the same static Pod twice: a folder-wide finding across files
        (static / name).write_text(
            PINNED_POD.format(index=0, team="sys", node="cp-1").replace("  nodeName: cp-1\n", "")
        )
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tree(tmp_path_factory.mktemp("tree"))


def linter() -> Linter:
    return Linter(dict.fromkeys(all_rules()), Context())


def test_cli_output_is_identical_for_any_worker_count(tree: Path) -> None:
    single = run_cli("--format", "json", "--jobs", "1", str(tree))
    assert single.returncode == 1, single.stderr
    assert '"yaml-syntax"' in single.stdout and '"invalid-node-name"' in single.stdout
    assert "already defined by" in single.stdout  # the folder check saw static Pods from two workers' files
    for jobs in ("2", "3", "7"):
        pooled = run_cli("--format", "json", "--jobs", jobs, str(tree))
        assert (pooled.returncode, pooled.stdout, pooled.stderr) == (single.returncode, single.stdout, single.stderr)
    automatic = run_cli("--format", "text", str(tree))
    assert automatic.stdout == run_cli("--format", "text", "--jobs", "2", str(tree)).stdout


def test_stdin_among_files_is_read_in_this_process_at_its_place(tree: Path) -> None:
    stdin = PINNED_POD.format(index=7, team=7, node="Bad_Node")
    args = ("--format", "json", str(tree / "team-0"), "-", str(tree / "team-3"))
    single = run_cli(*args, "--jobs", "1", stdin=stdin)
    pooled = run_cli(*args, "--jobs", "2", stdin=stdin)
    assert "<stdin>" in single.stdout
    assert pooled.stdout == single.stdout


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_start_methods_give_the_single_process_result(tree: Path, method: str) -> None:
    sources = list(discover([str(tree)]))
    expected = linter().lint_sources(sources)
    pooled = parallel.lint_files(linter(), sources, jobs=2, start_method=method)
    assert pooled.findings == expected.findings
    assert (pooled.files, pooled.objects, pooled.notes) == (expected.files, expected.objects, expected.notes)


def test_falls_back_to_one_process_when_no_pool_can_start(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pool(*args: object, **kwargs: object) -> None:
        raise OSError(38, "Function not implemented")  # what a missing sem_open raises

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    sources = list(discover([str(tree)]))
    assert parallel.lint_files(linter(), sources, jobs=2).findings == linter().lint_sources(sources).findings


def test_small_inputs_start_no_pool(tree: Path) -> None:
    sources = list(discover([str(tree)]))
    assert parallel.worker_count(sources, None) == 1  # a few KB: below AUTO_MIN_BYTES
    assert parallel.worker_count(sources, 4) == 4
    assert parallel.worker_count([Source(STDIN)], 4) == 1  # one stream cannot be shared out


def test_chunks_keep_the_input_order_and_isolate_stdin(tree: Path) -> None:
    files = list(discover([str(tree)]))
    sources = [*files[:5], Source(STDIN), *files[5:]]
    chunks = parallel.chunked(sources, 4)
    assert [source for chunk in chunks for source in chunk] == sources
    assert [Source(STDIN)] in chunks
    assert len(chunks) >= 4


def test_a_process_with_threads_starts_workers_by_spawn_not_fork(monkeypatch):
    import sys
    import threading

    from nodename_lint.parallel import _default_start_method

    monkeypatch.delitem(sys.modules, "helm_python", raising=False)
    assert _default_start_method(["fork", "spawn"]) == "fork"
    monkeypatch.setitem(sys.modules, "helm_python", sys)  # Helm's Go runtime is loaded: its threads cannot fork
    assert _default_start_method(["fork", "spawn"]) == "spawn"
    monkeypatch.delitem(sys.modules, "helm_python")
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert _default_start_method(["fork", "spawn"]) == "spawn"
    finally:
        release.set()
        thread.join()
    assert _default_start_method(["spawn"]) == "spawn"
