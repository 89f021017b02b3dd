"""The language server against the command line on one big file: diagnostics time by document size.

Drives `nodename-lint lsp` over stdio as an editor does (a plain JSON-RPC client: initialize,
didOpen, didChange, didClose) and times, for files of N small Deployments (each with a pinned
template: one finding per object, 11 lines per object, as a big `helm template` output):

- didOpen -> publishDiagnostics: the server lints at once;
- didChange (one character of the first object) -> publishDiagnostics, minus the server's pause
  in typing (DEBOUNCE_SECONDS);
- the command line on the same file (`nodename-lint FILE --format json`, a fresh process: what a
  user pays in a terminal, start-up included).

Every size runs in interleaved rounds (the CLI and one server session per round) and the table
shows medians of wall time and of CPU time (the server's own, read from /proc around each request;
the CLI's through wait4: steadier than wall time on a shared machine), the ratio to the CLI and
the difference. Issue 23's goal: at any size, diagnostics
within the CLI's time plus a small constant (the ratio falls as the file grows, the difference
stays flat).

    python bench/lsp.py [--sizes 300,1000,2000,3000] [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import LINT, precompile  # noqa: E402  (bench/ is not a package)

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
      nodeName: kind-worker
      containers: [{{name: web, image: nginx}}]
"""


def deployments(count: int) -> str:
    """COUNT Deployments, one document each, every one with a finding (nodename-in-template)."""
    return "---\n".join(DEPLOYMENT.format(index=index) for index in range(count))


class JsonRpc:
    """The client half of LSP's base protocol over a child's pipes (Content-Length framing)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.writer: IO[bytes] = process.stdin
        self.reader: IO[bytes] = process.stdout
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.writer.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result")

    def receive(self) -> dict[str, Any]:
        length = 0
        while True:
            line = self.reader.readline()
            if not line:
                raise RuntimeError(f"the server exited ({self.process.wait()})")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(self.reader.read(length))
        if "method" in message and "id" in message:  # a request of the server's (none is expected): refuse it
            self.send({"id": message["id"], "error": {"code": -32601, "message": "not supported by bench/lsp.py"}})
        return message

    def diagnostics(self, uri: str) -> list[Any]:
        """Wait for the next publishDiagnostics of URI."""
        while True:
            message = self.receive()
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                diagnostics: list[Any] = message["params"]["diagnostics"]
                return diagnostics


@dataclass
class Row:
    """The figures of one file size over the rounds."""

    objects: int
    lines: int
    cli: list[float] = field(default_factory=list)
    opened: list[float] = field(default_factory=list)
    changed: list[float] = field(default_factory=list)
    cli_cpu: list[float] = field(default_factory=list)
    opened_cpu: list[float] = field(default_factory=list)
    changed_cpu: list[float] = field(default_factory=list)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process so far (Linux /proc; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14 and 15


def session(files: dict[int, Path], rows: dict[int, Row], debounce: float) -> None:
    """One server: open, change and close each file in turn, timing the diagnostics."""
    process = subprocess.Popen([*LINT, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    client = JsonRpc(process)
    try:
        root = next(iter(files.values())).parent
        client.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        for objects, path in files.items():
            row, uri, text = rows[objects], path.as_uri(), path.read_text()
            start, cpu = time.perf_counter(), cpu_seconds(process.pid)
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
            )
            found = client.diagnostics(uri)
            row.opened.append(time.perf_counter() - start)
            row.opened_cpu.append(cpu_seconds(process.pid) - cpu)
            if len(found) != objects:
                raise RuntimeError(f"{objects} objects: {len(found)} diagnostics after didOpen, expected one each")
            # `web-0` -> `web-9`: line 4, columns 11-12 (0-based 3, 10)
            edit = {"range": {"start": {"line": 3, "character": 10}, "end": {"line": 3, "character": 11}}, "text": "9"}
            start, cpu = time.perf_counter(), cpu_seconds(process.pid)
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [edit]},
            )
            found = client.diagnostics(uri)
            row.changed.append(time.perf_counter() - start - debounce)
            row.changed_cpu.append(cpu_seconds(process.pid) - cpu)
            if len(found) != objects:
                raise RuntimeError(f"{objects} objects: {len(found)} diagnostics after didChange")
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            client.diagnostics(uri)  # the server clears them
        client.request("shutdown", {})
        client.notify("exit", {})
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def run_cli(path: Path, row: Row) -> None:
    """The command line on PATH, a fresh process: its wall and CPU time (wait4)."""
    start = time.perf_counter()
    process = subprocess.Popen([*LINT, str(path), "--format", "json"], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    row.cli.append(time.perf_counter() - start)
    row.cli_cpu.append(usage.ru_utime + usage.ru_stime)
    if os.waitstatus_to_exitcode(status) != 1:  # every file has findings
        raise RuntimeError(f"the CLI exited {os.waitstatus_to_exitcode(status)} on {path}")


def table(rows: list[Row], debounce: float) -> str:
    """Medians: wall (cpu) seconds, and the ratio and difference to the CLI's."""
    lines = [
        "| Deployments (lines) | CLI, wall (cpu) s | didOpen -> diagnostics, wall (cpu) s | x CLI, wall (cpu) "
        f"| - CLI, wall (cpu) s | didChange -> diagnostics less the {debounce:.1f} s pause, wall (cpu) s "
        "| x CLI, wall (cpu) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cli, opened, changed, cli_cpu, opened_cpu, changed_cpu = (
            statistics.median(values)
            for values in (row.cli, row.opened, row.changed, row.cli_cpu, row.opened_cpu, row.changed_cpu)
        )
        lines.append(
            f"| {row.objects:,} ({row.lines:,}) | {cli:.2f} ({cli_cpu:.2f}) | {opened:.2f} ({opened_cpu:.2f}) "
            f"| {opened / cli:.2f} ({opened_cpu / cli_cpu:.2f}) | {opened - cli:+.2f} ({opened_cpu - cli_cpu:+.2f}) "
            f"| {changed:.2f} ({changed_cpu:.2f}) | {changed / cli:.2f} ({changed_cpu / cli_cpu:.2f}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="300,1000,2000,3000", help="Deployments per file, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args()
    precompile()
    from nodename_lint.lsp.server import DEBOUNCE_SECONDS

    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="nodename-lint-bench-lsp-") as folder:
        files: dict[int, Path] = {}
        rows: dict[int, Row] = {}
        for objects in sizes:
            text = deployments(objects)
            files[objects] = Path(folder) / f"deployments-{objects}.yaml"
            files[objects].write_text(text)
            rows[objects] = Row(objects, text.count("\n"))
        for round_number in range(1 if args.quick else args.rounds):
            for objects, path in files.items():
                run_cli(path, rows[objects])
            session(files, rows, DEBOUNCE_SECONDS)
            print(f"round {round_number + 1} done", file=sys.stderr)
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(table(list(rows.values()), DEBOUNCE_SECONDS))


if __name__ == "__main__":
    main()
