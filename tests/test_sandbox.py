"""The sealed-render machinery (nodename_lint.render.sandbox): the private copy and the bounded child."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nodename_lint.render import sandbox
from nodename_lint.render.sandbox import Budget, CopyRefused, Worker, private_copy, run

from .test_sarif import git

SMALL = Budget(wall_seconds=30, cpu_seconds=2, memory_bytes=256 << 20, output_bytes=1 << 20)


def files_under(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file()}


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository: a chart at its root (Chart.yaml beside .git), a sibling library chart, a secret outside."""
    repo = tmp_path / "repo"
    (repo / "templates").mkdir(parents=True)
    (repo / "Chart.yaml").write_text("apiVersion: v2\nname: root\nversion: 1.0.0\n")
    (repo / "templates" / "pod.yaml").write_text("kind: Pod\n")
    (repo / "library" / "templates").mkdir(parents=True)
    (repo / "library" / "Chart.yaml").write_text("apiVersion: v2\nname: library\nversion: 1.0.0\n")
    (repo / "library" / "templates" / "_helpers.tpl").write_text("{{/* helpers */}}\n")
    (repo / "charts").mkdir()
    os.symlink("../library", repo / "charts" / "library")  # rook's charts/library -> ../../library
    (tmp_path / "secret.txt").write_text("TOPSECRET")
    os.symlink(tmp_path / "secret.txt", repo / "leak.txt")
    os.symlink("/dev/zero", repo / "zero.yaml")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0LXRva2Vu")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "chart")
    (repo / "kubeconfig").write_text("token: written-by-an-earlier-step\n")  # untracked
    (repo / "untracked.txt").write_text("x")
    os.symlink("untracked.txt", repo / "to-untracked.txt")  # a tracked link to an untracked file
    git(repo, "add", "to-untracked.txt")
    git(repo, "commit", "-q", "-m", "link")
    return repo


def test_the_copy_holds_only_tracked_regular_files_and_tracked_link_targets(repository: Path, tmp_path: Path):
    copy = private_copy(str(repository), str(tmp_path / "copy"))
    assert files_under(tmp_path / "copy") == {
        "Chart.yaml",
        "templates/pod.yaml",
        "library/Chart.yaml",
        "library/templates/_helpers.tpl",
        "charts/library/Chart.yaml",  # the symlinked sibling chart, as content
        "charts/library/templates/_helpers.tpl",
    }
    assert not (tmp_path / "copy" / ".git").exists()
    assert copy.sources["charts/library/Chart.yaml"] == str(repository / "library" / "Chart.yaml")
    left_out = dict(copy.left_out)
    assert "outside the repository" in left_out["leak.txt"]
    assert "outside the repository" in left_out["zero.yaml"]
    assert left_out["to-untracked.txt"] == "a symlink to a file the repository does not track"
    assert copy.untracked == ["kubeconfig", "untracked.txt"]
    for path in (tmp_path / "copy").rglob("*"):
        assert not path.is_symlink()


def test_a_tracked_file_that_is_no_longer_regular_is_left_out(repository: Path, tmp_path: Path):
    (repository / "templates" / "pod.yaml").unlink()
    os.mkfifo(repository / "templates" / "pod.yaml")  # a FIFO with no writer: opening it would block
    copy = private_copy(str(repository / "templates"), str(tmp_path / "copy"))
    assert copy.left_out == [("pod.yaml", "not a regular file (a FIFO)")]


def test_outside_git_the_regular_files_under_the_root_without_git_folders(tmp_path: Path):
    if sandbox._work_tree(str(tmp_path)) is not None:
        pytest.skip("the temporary folder lies inside a git work tree")
    root = tmp_path / "chart"
    (root / "sub" / ".git").mkdir(parents=True)  # a folder named .git below the root is never content
    (root / "sub" / ".git" / "config").write_text("token")
    (tmp_path / "chart" / "templates").mkdir()
    (root / "templates" / "a.yaml").write_text("a")
    os.symlink("templates/a.yaml", root / "alias.yaml")
    os.symlink(tmp_path, root / "up")
    os.mkfifo(root / "fifo.yaml")
    copy = private_copy(str(root), str(tmp_path / "copy"))
    assert files_under(tmp_path / "copy") == {"templates/a.yaml", "alias.yaml"}
    left_out = dict(copy.left_out)
    assert left_out["fifo.yaml"] == "not a regular file (a FIFO)"
    assert "outside" in left_out["up"]


def test_a_copy_over_its_budget_is_refused(tmp_path: Path):
    root = tmp_path / "chart"
    root.mkdir()
    (root / "big.bin").write_bytes(b"x" * 2048)
    with pytest.raises(CopyRefused, match="more than"):
        private_copy(str(root), str(tmp_path / "copy"), max_bytes=1024)
    for index in range(3):
        (root / f"f{index}").write_text("x")
    with pytest.raises(CopyRefused, match="more than 2 files"):
        private_copy(str(root), str(tmp_path / "copy2"), max_files=2)


def test_inside_a_work_tree_where_git_cannot_list_files_nothing_is_copied(
    repository: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    with pytest.raises(CopyRefused, match="git cannot list"):
        private_copy(str(repository), str(tmp_path / "copy"))
    assert not (tmp_path / "copy").exists() or not any((tmp_path / "copy").iterdir())


def python(code: str) -> list[str]:
    return [sys.executable, "-I", "-c", code]


def test_cpu_time_ends_the_child_with_a_clear_limit(tmp_path: Path):
    outcome = run(python("while True: pass"), SMALL, cwd=str(tmp_path))
    assert outcome.limit == "used more than 2 s of CPU time"


def test_a_child_ended_by_sigxcpu_is_over_its_cpu_budget_whatever_its_cpu_time_reads(tmp_path: Path):
    # only the CPU limit sends SIGXCPU; the sweep saw a helper end so and reported as a chart Helm cannot render
    outcome = run(python("import os, signal; os.kill(os.getpid(), signal.SIGXCPU)"), SMALL, cwd=str(tmp_path))
    assert outcome.limit == "used more than 2 s of CPU time"
    worker = Worker(
        python("import os, signal, sys\nsys.stdin.readline()\nos.kill(os.getpid(), signal.SIGXCPU)"),
        SMALL,
        str(tmp_path),
    )
    try:
        assert worker.ask(b"go").limit == "used more than 2 s of CPU time"
    finally:
        worker.close()


def test_wall_time_ends_a_child_that_sleeps(tmp_path: Path):
    start = time.monotonic()
    outcome = run(python("import time; time.sleep(60)"), Budget(wall_seconds=1), cwd=str(tmp_path))
    assert outcome.limit == "took longer than 1 s (wall time)"
    assert time.monotonic() - start < 10


def test_a_child_does_not_outlive_a_run_killed_from_outside(tmp_path: Path):
    """A CI timeout that kills nodename-lint (SIGKILL: no cleanup runs) ends its renderer too."""
    pid_file = tmp_path / "child.pid"
    child = tmp_path / "child.py"
    child.write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n")
    script = (
        "import sys\nfrom nodename_lint.render.sandbox import Budget, run\n"
        f"run([sys.executable, {str(child)!r}], Budget(wall_seconds=60), cwd={str(tmp_path)!r})\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the renderer outlived the killed run"


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_memory_ends_the_child_with_a_clear_limit(tmp_path: Path):
    outcome = run(python("x = bytearray(1 << 30)"), SMALL, cwd=str(tmp_path))
    assert outcome.limit == "needed more than 256 MiB of memory"


def test_output_is_capped(tmp_path: Path):
    outcome = run(python("import sys\nwhile True: sys.stdout.write('x' * 65536)"), SMALL, cwd=str(tmp_path))
    assert outcome.limit == "wrote more than 1 MiB of output"
    assert len(outcome.stdout) <= (1 << 20) + (1 << 16)


def test_a_child_that_does_not_read_its_input_cannot_block_the_parent(tmp_path: Path):
    outcome = run(python("import time; time.sleep(60)"), Budget(wall_seconds=1), cwd=str(tmp_path), stdin=b"y" * 10**7)
    assert outcome.limit == "took longer than 1 s (wall time)"


def test_stderr_is_kept_up_to_its_cap_and_the_run_ends(tmp_path: Path):
    outcome = run(python("import sys\nfor _ in range(100): sys.stderr.write('e' * 65536)"), SMALL, cwd=str(tmp_path))
    assert outcome.returncode == 0 and not outcome.limit
    assert len(outcome.stderr) == sandbox.STDERR_KEEP_BYTES


def test_the_child_has_no_network_no_kubeconfig_and_an_empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    requests: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"answer")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("secret kubeconfig")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "runner-secret")
    home = tmp_path / "home"
    home.mkdir()
    port = server.server_address[1]
    code = (
        "import os, urllib.request\n"
        "print(os.environ['KUBECONFIG'], os.environ['HOME'], sorted(os.listdir(os.environ['HOME'])),"
        " 'AWS_SECRET_ACCESS_KEY' in os.environ)\n"
        f"for url in ['http://127.0.0.1:{port}/direct', 'http://example.invalid/proxied']:\n"
        "    try:\n"
        "        urllib.request.urlopen(url, timeout=5)\n"
        "        print('reached', url)\n"
        "    except OSError as exc:\n"
        "        print('refused', url)\n"
    )
    try:
        outcome = run(python(code), SMALL, cwd=str(home))
    finally:
        server.shutdown()
    lines = outcome.stdout.decode().splitlines()
    assert lines[0] == f"/dev/null {home} [] False", outcome.stderr
    assert lines[1:] == [
        f"refused http://127.0.0.1:{server.server_address[1]}/direct",
        "refused http://example.invalid/proxied",
    ]
    assert requests == []


def test_a_worker_answers_line_by_line_and_starts_again_after_a_limit(tmp_path: Path):
    helper = python(
        "import json, sys, time\nfor line in sys.stdin:\n    exec(json.loads(line))\n    print('done', flush=True)"
    )
    worker = Worker(helper, SMALL, str(tmp_path))

    def ask(code: str) -> sandbox.Outcome:
        return worker.ask(json.dumps(code).encode())

    try:
        assert ask("x = 1").stdout == b"done"
        first = worker.process
        assert ask("while True: pass").limit == "used more than 2 s of CPU time"
        assert ask("y = 2").stdout == b"done"  # a new helper
        assert worker.process is not first
        # each request gets the whole CPU budget, not what is left of it
        assert ask("while time.process_time() < 1.5: pass").stdout == b"done"
        assert ask("while time.process_time() < 3: pass").stdout == b"done"
        assert ask("x = bytearray(1 << 30)").limit == "needed more than 256 MiB of memory"
        assert ask("print('a' * (2 << 20))").limit == "wrote more than 1 MiB of output"
        assert ask("raise SystemExit(3)").returncode == 3
    finally:
        worker.close()


def test_only_content_this_repository_tracks_is_followed(repository: Path, tmp_path: Path):
    inner = repository / "other-checkout"  # a second repository a CI step cloned into the workspace
    inner.mkdir()
    (inner / "token.txt").write_text("INNER-SECRET")
    git(inner, "init", "-q")
    git(inner, "add", "-A")
    git(inner, "commit", "-q", "-m", "inner")
    os.symlink("../other-checkout", repository / "templates" / "inner")
    (repository / "templates" / "xy.txt").write_text("tracked")
    (repository / "templates" / "x*.txt").write_text("UNTRACKED-SECRET")  # a pathspec glob would match xy.txt
    os.symlink("x*.txt", repository / "templates" / "glob-link")
    git(repository, "add", "templates/inner", "templates/xy.txt", "templates/glob-link")
    git(repository, "commit", "-q", "-m", "links")
    copy = private_copy(str(repository / "templates"), str(tmp_path / "copy"))
    left_out = dict(copy.left_out)
    assert left_out["inner"] == "a symlink to a folder the repository does not track"
    assert left_out["glob-link"] == "a symlink to a file the repository does not track"
    assert files_under(tmp_path / "copy") == {"pod.yaml", "xy.txt"}


# --- issue 21 review: what the copy itself costs ------------------------------------------------------


def _commit_all(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "x")


def test_thousands_of_tracked_links_cost_one_git_listing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each tracked link asked `git ls-files` whether its target is tracked: 3,000 links to a tracked file took
    two minutes of a run (110 s here, 11 s of it CPU), before any render budget applied."""
    repo = tmp_path / "repo"
    (repo / "many").mkdir(parents=True)
    (repo / "target.txt").write_text("x")
    git(repo, "init", "-q")
    for index in range(2000):
        os.symlink("../target.txt", repo / "many" / f"link{index}")
    _commit_all(repo)
    calls = []
    monkeypatch.setattr(sandbox, "_git", lambda cwd, *args, real=sandbox._git: calls.append(args) or real(cwd, *args))
    copy = private_copy(str(repo), str(tmp_path / "copy"))
    assert len(copy.sources) == 2001 and copy.left_out == []
    assert len(calls) <= 4, f"{len(calls)} git commands"  # the top, the tracked files, the untracked ones, the links


def test_links_to_folders_of_links_stop_at_the_entry_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Four levels of links, each to the folder of the next level, the last to an untracked folder: with 60 links
    a level, 13 million entries were visited (and listed as left out) from 240 tracked links, and a lint of the
    chart had not ended after ten minutes. Here 20 a level (160,000 entries) against a budget of 2,000."""
    monkeypatch.setattr(sandbox, "COPY_MAX_ENTRIES", 2000, raising=False)  # absent before it existed
    repo = tmp_path / "repo"
    levels = [repo / "chart", repo / "l1", repo / "l2", repo / "l3"]
    for level in levels:
        level.mkdir(parents=True)
    (repo / "untracked").mkdir()
    git(repo, "init", "-q")
    for index in range(20):
        for level, next_level in zip(levels, [*levels[1:], repo / "untracked"], strict=True):
            os.symlink(f"../{next_level.name}", level / f"link{index}")
    _commit_all(repo)
    (repo / "untracked" / "x").write_text("x")
    with pytest.raises(CopyRefused, match="more than 2,000 entries with what its links lead to"):
        private_copy(str(repo / "chart"), str(tmp_path / "copy"))
