"""Sealed rendering: a private copy of a render root, and a child process that runs within a budget.

A chart or kustomization from a pull request is hostile input to a template engine written in Go.
Two things keep it to its own files and a bounded cost, whatever engine renders it:

    copy = private_copy(root, scratch_folder)      # the tracked, regular files of ROOT only
    outcome = run(argv, Budget(), cwd=scratch, stdin=request)
    if outcome.limit:                               # "used more than 30 s of CPU time", ...
        ...                                         # a finding: the folder was not checked
    elif outcome.returncode != 0:
        ...                                         # the engine's own error (outcome.stderr)

**The copy** (`private_copy`) holds only the regular files git tracks inside ROOT, read as they are
in the work tree: never `.git/`, never a file no commit has (a kubeconfig or token an earlier CI step
wrote), never a FIFO or a device. A tracked symlink whose target is tracked content inside the same
repository is content: its target's files are copied in its place (rook's `charts/library ->
../../library`); any other link is left out. Outside a git work tree the rule is: the regular files
under ROOT, no entry named `.git`, links only to regular files or folders inside ROOT. Every entry
left out is returned with its reason, so the caller can say so. Git's files are listed with `git
ls-files` (the repository's own git configuration is the user's, not the pull request's); when git
cannot list them in a work tree, nothing is copied (CopyRefused). The copy stops at COPY_MAX_BYTES
and COPY_MAX_FILES, and at COPY_MAX_ENTRIES entries visited, left out or not (CopyRefused).

**The child** (`run` for one command, `Worker` for a helper that answers one request per line, so
that an engine with a slow start loads once per run) gets:

- a closed network: where the kernel allows it (root, or unprivileged user namespaces), an empty
  network namespace (no interface but a loopback that is down: even 127.0.0.1 is unreachable);
  always a proxy that refuses every connection (`HTTP(S)_PROXY=http://127.0.0.1:9`, `NO_PROXY=`),
  no git protocol, `KUBECONFIG=/dev/null`, and an empty HOME and XDG folders in the scratch folder;
- limits: CPU time (RLIMIT_CPU), memory (RLIMIT_DATA: the writable memory the process maps, which
  for a Go engine is its heap; RLIMIT_AS would count Go's address-space reservations instead),
  no core files, wall time (the parent kills the child's process group), and an output cap (the
  parent stops reading and kills it); stderr is kept up to STDERR_KEEP_BYTES;
- its own session and process group, stdin from the caller only.

`Outcome.limit` says which limit ended the child, in words a finding can quote; it is '' when the
child ended on its own. The budgets are stated in docs/guarantees.md and docs/helm-and-kustomize.md.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import errno
import os
import resource
import selectors
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# What one render may cost (per chart; docs/guarantees.md states these figures).
WALL_SECONDS = 60.0
CPU_SECONDS = 30
MEMORY_BYTES = 2 << 30
OUTPUT_BYTES = 64 << 20
STDERR_KEEP_BYTES = 64 << 10
# What a private copy may hold: a chart or overlay bigger than this is not one someone reviews.
COPY_MAX_BYTES = 64 << 20
COPY_MAX_FILES = 20_000
# Entries the copy may visit, left out or not: links to folders of links multiply (60 links a level, four
# levels: 13 million entries, no file among them).
COPY_MAX_ENTRIES = 2 * COPY_MAX_FILES

DEAD_PROXY = "http://127.0.0.1:9"  # port 9 (discard) is closed: every proxied connection is refused
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_CLONE_NEWUSER = 0x10000000
_MEMORY_WORDS = ("out of memory", "cannot allocate memory", "memoryerror", "failed to reserve")


@dataclass(frozen=True)
class Budget:
    """What one child may cost; the defaults are the documented per-render budget."""

    wall_seconds: float = WALL_SECONDS
    cpu_seconds: int = CPU_SECONDS
    memory_bytes: int = MEMORY_BYTES
    output_bytes: int = OUTPUT_BYTES

    def describe(self) -> str:
        return (
            f"{self.wall_seconds:g} s wall time, {self.cpu_seconds} s CPU time, "
            f"{_size(self.memory_bytes)} memory, {_size(self.output_bytes)} output"
        )


@dataclass
class Outcome:
    """How a child ended: its exit status (negative: the signal), what it wrote, and the limit it hit."""

    returncode: int
    stdout: bytes
    stderr: str
    limit: str = ""  # e.g. "used more than 30 s of CPU time"; '' when no limit ended it


class CopyRefused(Exception):
    """The root cannot be copied safely (too big, or git cannot list its tracked files)."""


@dataclass
class PrivateCopy:
    """A copy of a render root: where it is, what it was made of, and what was left out."""

    folder: str
    sources: dict[str, str] = field(default_factory=dict)  # path in the copy -> real path it was read from
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (path under the root, why)
    untracked: list[str] = field(default_factory=list)  # paths under the root git does not track


# --- the copy ---------------------------------------------------------------------------------------


def private_copy(
    root: str, destination: str, *, max_bytes: int = COPY_MAX_BYTES, max_files: int = COPY_MAX_FILES
) -> PrivateCopy:
    """Copy ROOT's tracked regular files (and tracked content its symlinks name) into DESTINATION.

    Raises CopyRefused when the copy would pass MAX_BYTES or MAX_FILES, or git fails in a work tree.
    """
    real_root = os.path.realpath(root)
    copier = _Copier(destination, real_root, max_bytes, max_files)
    top = _work_tree(real_root)
    os.makedirs(destination, exist_ok=True)
    if top is None:
        copier.copy_untracked_tree(real_root, "")
        return copier.result
    copier.top = top
    for relative in _git_files(real_root, "--cached"):
        copier.copy_entry(os.path.join(real_root, relative), relative, set())
    copier.result.untracked = sorted(_git_files(real_root, "--others", "--exclude-standard"))
    return copier.result


def _work_tree(real_root: str) -> str | None:
    """The git work tree ROOT lies in, or None when there is none (no `.git` at or above ROOT)."""
    folder = real_root
    while not os.path.lexists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return os.path.realpath(_git(real_root, "rev-parse", "--show-toplevel").strip())


def _git(cwd: str, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, check=False, stdin=subprocess.DEVNULL, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CopyRefused(f"git cannot list the files the repository tracks ({exc}); nothing was copied") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CopyRefused(
            "git cannot list the files the repository tracks "
            f"({detail[-1] if detail else f'exit code {done.returncode}'}); nothing was copied"
        )
    return done.stdout.decode("utf-8", "surrogateescape")


def _git_files(cwd: str, *which: str, under: str = ".") -> list[str]:
    """Paths (relative to CWD) git lists under UNDER: `--cached` for tracked, `--others` for untracked."""
    output = _git(cwd, "--literal-pathspecs", "ls-files", "-z", *which, "--", under)  # a `*` in a name is a `*`
    return sorted({name for name in output.split("\0") if name})


class _Copier:
    def __init__(self, destination: str, real_root: str, max_bytes: int, max_files: int) -> None:
        self.result = PrivateCopy(destination)
        self.real_root = real_root
        self.top = ""  # the git work tree, '' outside git
        self.entries_left = COPY_MAX_ENTRIES
        self.tracked: list[str] | None = None  # every path git tracks in it (sorted), listed at the first link
        self.bytes_left = max_bytes
        self.max_bytes = max_bytes
        self.max_files = max_files

    def visit(self) -> None:
        """Count one entry against COPY_MAX_ENTRIES."""
        self.entries_left -= 1
        if self.entries_left < 0:
            raise CopyRefused(
                f"it holds more than {COPY_MAX_ENTRIES:,} entries with what its links lead to; nothing was rendered"
            )

    def copy_entry(self, path: str, relative: str, linked: set[str]) -> None:
        """One tracked entry: a regular file is copied, a link to tracked content copies that content."""
        self.visit()
        if os.path.realpath(os.path.dirname(path)) != os.path.dirname(path):
            self.leave_out(relative, "a folder on its path is a symlink")
            return
        try:
            info = os.lstat(path)
        except OSError:
            return  # deleted in the work tree: Helm would not see it either
        if stat.S_ISREG(info.st_mode):
            self.copy_file(path, relative)
        elif stat.S_ISLNK(info.st_mode):
            self.copy_link(path, relative, linked)
        else:
            self.leave_out(relative, f"not a regular file ({file_kind(info.st_mode)})")

    def copy_link(self, path: str, relative: str, linked: set[str]) -> None:
        target = os.path.realpath(path)
        if not _within(target, self.top):
            self.leave_out(relative, f"a symlink to {target}, outside the repository")
            return
        if target in linked:
            self.leave_out(relative, "a symlink loop")
            return
        try:
            info = os.stat(target)
        except OSError as exc:
            self.leave_out(relative, f"a symlink that cannot be followed ({exc.strerror or exc})")
            return
        # tracked by this repository (asked at its top: a repository cloned inside it tracks nothing here)
        tracked = self.tracked_under(os.path.relpath(target, self.top))
        if stat.S_ISDIR(info.st_mode):
            if not tracked:
                self.leave_out(relative, "a symlink to a folder the repository does not track")
            prefix = "" if target == self.top else os.path.relpath(target, self.top) + os.sep
            for name in tracked:
                inside = name[len(prefix) :]
                self.copy_entry(os.path.join(target, inside), os.path.join(relative, inside), linked | {target})
        elif stat.S_ISREG(info.st_mode) and tracked:
            self.copy_file(target, relative)
        elif stat.S_ISREG(info.st_mode):
            self.leave_out(relative, "a symlink to a file the repository does not track")
        else:
            self.leave_out(relative, f"a symlink to something that is not a regular file ({file_kind(info.st_mode)})")

    def tracked_under(self, relative: str) -> list[str]:
        """The paths (from the top) git tracks at RELATIVE or under it, from one listing of the repository: one
        `git ls-files` per link cost a pull request of 3,000 links two minutes before any budget applied."""
        if self.tracked is None:
            self.tracked = _git_files(self.top, "--cached")
        if relative == ".":
            return self.tracked
        start = bisect.bisect_left(self.tracked, relative)
        exact = self.tracked[start : start + 1] if self.tracked[start : start + 1] == [relative] else []
        prefix = relative + "/"  # after `relative-x` and `relative.x` in sorted order, before `relative0`
        first = bisect.bisect_left(self.tracked, prefix)
        last = bisect.bisect_left(self.tracked, relative + "0")  # "0" follows "/"
        return exact + self.tracked[first:last]

    def copy_untracked_tree(self, folder: str, relative: str, linked: frozenset[str] = frozenset()) -> None:
        """Outside git: the regular files under FOLDER, no `.git`, links only to inside the root."""
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            self.leave_out(relative or ".", f"cannot list the folder ({exc.strerror or exc})")
            return
        for entry in entries:
            if entry.name == ".git":
                continue
            self.visit()
            path, inside = entry.path, os.path.join(relative, entry.name)
            real = os.path.realpath(path)
            if entry.is_symlink() and not _within(real, self.real_root):
                self.leave_out(inside, f"a symlink to {real}, outside {self.real_root}")
                continue
            try:
                info = os.stat(path)
            except OSError as exc:
                self.leave_out(inside, exc.strerror or str(exc))
                continue
            if stat.S_ISDIR(info.st_mode):
                if real in linked:
                    self.leave_out(inside, "a symlink loop")
                else:
                    self.copy_untracked_tree(real, inside, linked | {real})
            elif stat.S_ISREG(info.st_mode):
                self.copy_file(real, inside)
            else:
                self.leave_out(inside, f"not a regular file ({file_kind(info.st_mode)})")

    def copy_file(self, real_path: str, relative: str) -> None:
        if len(self.result.sources) >= self.max_files:
            raise CopyRefused(f"it holds more than {self.max_files} files; nothing was rendered")
        try:
            data = read_regular(real_path, self.bytes_left)
        except TooBig:
            raise CopyRefused(
                f"it holds more than {_size(self.max_bytes)} of files; nothing was rendered "
                "(move large files out of the folder)"
            ) from None
        except OSError as exc:
            self.leave_out(relative, exc.strerror or str(exc))
            return
        self.bytes_left -= len(data)
        target = os.path.join(self.result.folder, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
        self.result.sources[relative] = real_path

    def leave_out(self, relative: str, why: str) -> None:
        self.result.left_out.append((relative, why))


class TooBig(Exception):
    """read_regular: the file is larger than the limit."""


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of PATH when it is a regular file (never a FIFO, device or final symlink) of at most LIMIT
    bytes; raises OSError (EINVAL for a file that is not regular), or TooBig."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(descriptor, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({file_kind(mode)}), not read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooBig
    return data


def _within(path: str, folder: str) -> bool:
    return bool(folder) and (path == folder or path.startswith(folder.rstrip(os.sep) + os.sep))


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words ('a FIFO', 'a character device')."""
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def _size(count: int) -> str:
    return f"{count >> 30} GiB" if count >= 1 << 30 and count % (1 << 30) == 0 else f"{count >> 20} MiB"


# --- the child ----------------------------------------------------------------------------------------


def closed_environment(home: str) -> dict[str, str]:
    """The environment of a sealed child: PATH, an empty HOME under HOME, no cluster, no proxy that works."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "TMPDIR": home,
        "XDG_CONFIG_HOME": home,
        "XDG_CACHE_HOME": home,
        "XDG_DATA_HOME": home,
        "KUBECONFIG": os.devnull,
        "HTTPS_PROXY": DEAD_PROXY,
        "HTTP_PROXY": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "http_proxy": DEAD_PROXY,
        "ALL_PROXY": DEAD_PROXY,
        "NO_PROXY": "",
        "no_proxy": "",
        "GIT_ALLOW_PROTOCOL": "none",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C.UTF-8",
    }


def _limiter(budget: Budget, cpu_hard_margin: int | None) -> Callable[[], None]:
    """The function the child runs between fork and exec: limits, and no network where the kernel allows."""
    unshare = _libc_function("unshare")
    prctl = _libc_function("prctl")
    cpu_hard = resource.RLIM_INFINITY if cpu_hard_margin is None else budget.cpu_seconds + cpu_hard_margin

    def limit() -> None:
        if prctl is not None:  # a run killed from outside (a CI timeout) takes its renderer with it
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (budget.cpu_seconds, cpu_hard))
        resource.setrlimit(resource.RLIMIT_DATA, (budget.memory_bytes, budget.memory_bytes))
        if unshare is not None and unshare(_CLONE_NEWNET) != 0:
            unshare(_CLONE_NEWUSER | _CLONE_NEWNET)  # unprivileged; when refused, the dead proxy remains

    return limit


def _libc_function(name: str) -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None


def _start(argv: list[str], budget: Budget, cwd: str, cpu_hard_margin: int | None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=closed_environment(cwd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_limiter(budget, cpu_hard_margin),
    )


def run(argv: list[str], budget: Budget, *, cwd: str, stdin: bytes = b"") -> Outcome:
    """Run ARGV sealed (see the module doc) in CWD, which is also its HOME, feeding it STDIN."""
    try:
        process = _start(argv, budget, cwd, cpu_hard_margin=2)  # Go programs ignore SIGXCPU: SIGKILL 2 s later
    except OSError as exc:
        return Outcome(-1, b"", f"cannot start {os.path.basename(argv[0])}: {exc.strerror or exc}")
    exchange = _Exchange(process, budget, stdin, close_stdin=True)
    exchange.pump(until_newline=False)
    return exchange.finish()


class Worker:
    """A sealed helper that answers requests one line at a time: `ask(line)` gives its one-line answer.

    Each request gets the whole budget: the CPU limit is moved to what the helper has used so far plus
    the budget (prlimit), the wall time and the output cap count from the request. A helper that hits a
    limit or dies is ended; the next `ask` starts a new one. `close()` ends it (also at exit).
    """

    def __init__(self, argv: list[str], budget: Budget, cwd: str) -> None:
        self.argv = argv
        self.budget = budget
        self.cwd = cwd
        self.process: subprocess.Popen[bytes] | None = None

    def ask(self, line: bytes, budget: Budget | None = None) -> Outcome:
        """The helper's answer to LINE (without its newline); `limit` or a non-zero returncode when it ended."""
        budget = budget or self.budget
        if self.process is None:
            try:
                self.process = _start(self.argv, budget, self.cwd, cpu_hard_margin=None)
            except OSError as exc:
                return Outcome(-1, b"", f"cannot start {os.path.basename(self.argv[0])}: {exc.strerror or exc}")
        process = self.process
        limit = int(_cpu_seconds(process.pid)) + 1 + budget.cpu_seconds
        with contextlib.suppress(OSError):  # it has just ended: the exchange below sees that
            resource.prlimit(process.pid, resource.RLIMIT_CPU, (limit, resource.RLIM_INFINITY))
        exchange = _Exchange(process, budget, line.rstrip(b"\n") + b"\n", close_stdin=False, cpu_limit=limit)
        if exchange.pump(until_newline=True):
            return Outcome(0, bytes(exchange.stdout).rstrip(b"\n"), exchange.stderr.decode("utf-8", "replace"))
        self.process = None
        return exchange.finish()

    def close(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            _kill(process)
            _reap(process)


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of PID so far (/proc/PID/stat), 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the child's process group (its own session: nothing else is in it)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            process.kill()


def _reap(process: subprocess.Popen[bytes], deadline: float | None = None) -> float:
    """Wait for the child (killed at DEADLINE); its CPU seconds (os.wait4's rusage). Closes its pipes."""
    cpu = 0.0
    while process.returncode is None:
        try:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG if deadline is not None else 0)
        except ChildProcessError:
            process.wait()
            break
        if pid == 0:  # still running, its output closed
            if time.monotonic() >= deadline:  # type: ignore[operator]
                _kill(process)
                deadline = None
            else:
                time.sleep(0.01)
            continue
        process.returncode = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return cpu


class _Exchange:
    """One request to a child: write its input, read its output and stderr, within the budget."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        budget: Budget,
        data: bytes,
        *,
        close_stdin: bool,
        cpu_limit: float | None = None,
    ) -> None:
        self.process = process
        self.budget = budget
        self.deadline = time.monotonic() + budget.wall_seconds
        self.pending = memoryview(data)
        self.close_stdin = close_stdin
        self.cpu_limit = budget.cpu_seconds if cpu_limit is None else cpu_limit
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.limit = ""

    def pump(self, *, until_newline: bool) -> bool:
        """Feed and read the child until it ends, or (UNTIL_NEWLINE) has written a line: True for that line.

        False when the child ended or a limit was hit (`limit` says which; the child is then killed)."""
        process = self.process
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        with selectors.DefaultSelector() as selector:
            for stream in (process.stdout, process.stderr):
                os.set_blocking(stream.fileno(), False)
                selector.register(stream, selectors.EVENT_READ)
            os.set_blocking(process.stdin.fileno(), False)
            if self.pending:
                selector.register(process.stdin, selectors.EVENT_WRITE)
            elif self.close_stdin:
                process.stdin.close()
            while process.stdout in selector.get_map() or process.stderr in selector.get_map():
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    self.limit = f"took longer than {self.budget.wall_seconds:g} s (wall time)"
                    _kill(process)
                    return False
                for key, _ in selector.select(min(remaining, 1.0)):
                    if key.fileobj is process.stdin:
                        self._feed(selector)
                    elif self._read(key.fileobj, selector, until_newline):
                        return True
                    if self.limit:
                        _kill(process)
                        return False
        return False

    def _feed(self, selector: selectors.BaseSelector) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            written = os.write(stdin.fileno(), self.pending[: 1 << 16])
        except BlockingIOError:
            return
        except OSError:  # it stopped reading and ended: its exit status says why
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            selector.unregister(stdin)
            if self.close_stdin:
                stdin.close()

    def _read(self, stream: object, selector: selectors.BaseSelector, until_newline: bool) -> bool:
        try:
            chunk = os.read(stream.fileno(), 1 << 16)  # type: ignore[attr-defined]
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            selector.unregister(stream)  # type: ignore[arg-type]
            return False
        if stream is self.process.stderr:
            self.stderr.extend(chunk[: max(0, STDERR_KEEP_BYTES - len(self.stderr))])
            return False
        self.stdout.extend(chunk)
        if len(self.stdout) > self.budget.output_bytes:
            self.limit = f"wrote more than {_size(self.budget.output_bytes)} of output"
            return False
        return until_newline and self.stdout.endswith(b"\n")

    def finish(self) -> Outcome:
        """Reap the child (killed first when a limit was hit) and say how it ended."""
        cpu = _reap(self.process, self.deadline)
        returncode = self.process.returncode if self.process.returncode is not None else -signal.SIGKILL
        stderr = self.stderr.decode("utf-8", "replace")
        limit = self.limit
        # SIGXCPU comes from the CPU limit set here only: the budget, even when the CPU time read back falls
        # short (the sweep saw "Helm's engine ended without an answer (signal 24)" on a loaded machine)
        if not limit and (
            returncode == -signal.SIGXCPU or (returncode == -signal.SIGKILL and cpu >= self.cpu_limit - 0.5)
        ):
            limit = f"used more than {self.budget.cpu_seconds} s of CPU time"
        elif not limit and returncode != 0 and any(word in stderr.lower() for word in _MEMORY_WORDS):
            limit = f"needed more than {_size(self.budget.memory_bytes)} of memory"
        return Outcome(returncode, bytes(self.stdout), stderr, limit)
