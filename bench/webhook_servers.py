"""Which HTTP server the webhook runs on: the standard library's ThreadingHTTPServer with ssl (what it
uses) against aiohttp (a well-kept async server), both answering with the same Reviewer on the same
state, each in its own process pinned to one core, over TLS with kept-alive connections.

Reports, for each: sequential reviews on one connection (p50, p99), then N connections at once (errors,
reviews/s, p99), and the server process's CPU seconds per review. aiohttp is not a dependency:
`pip install aiohttp` to run its half.

    python bench/webhook_servers.py [--reviews 2000] [--concurrency 200] [--each 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from webhook import concurrent, cpu_seconds, sequential, wait_ready  # noqa: E402  (bench/ is not a package)

from tests.apiserver import free_port  # noqa: E402
from tests.webhook import command, make_certs, pod, review  # noqa: E402

STATE = ROOT / "examples" / "cluster" / "state.yaml"

AIOHTTP_SERVER = """
import ssl, sys
from aiohttp import web
from nodename_lint.cluster.from_file import load_state_file
from nodename_lint.config import Config, resolve_severities
from nodename_lint.registry import all_rules
from nodename_lint.webhook.review import FixedCluster, Policy, Reviewer

cert, key, port, state = sys.argv[1:5]
reviewer = Reviewer(FixedCluster(load_state_file(state)), resolve_severities(all_rules(), Config(), [], []), Policy())

async def validate(request):
    verdict = reviewer.review(await request.read())
    return web.Response(status=verdict.status, body=verdict.body, content_type="application/json")

async def ready(request):
    return web.Response(text="ok")

app = web.Application(client_max_size=3 << 20)
app.add_routes([web.post("/validate", validate), web.get("/readyz", ready), web.get("/healthz", ready)])
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
web.run_app(app, host="127.0.0.1", port=int(port), ssl_context=context, print=None, backlog=1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--each", type=int, default=10)
    options = parser.parse_args()
    certs = make_certs(Path(tempfile.mkdtemp(prefix="nodename-lint-servers-")))
    bodies = {
        "pinned Pod (a warning)": json.dumps(review(pod("bigcpu", "kind-worker", cpu="100"))).encode(),
        "Pod on a missing node (denied)": json.dumps(review(pod("ghost", "kind-wroker"))).encode(),
    }
    servers = {
        "stdlib ThreadingHTTPServer + ssl": None,  # nodename-lint webhook --cluster-state STATE
        "aiohttp": ["-c", AIOHTTP_SERVER, str(certs.cert_file), str(certs.key_file)],
    }
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, args in servers.items():
        port = free_port()
        if args is None:
            argv = command(certs, port, "--cluster-state", str(STATE))
        else:
            argv = [sys.executable, *args, str(port), str(STATE)]
        process = subprocess.Popen(
            argv, cwd=ROOT, stderr=subprocess.DEVNULL, preexec_fn=lambda: os.sched_setaffinity(0, {0})
        )
        try:
            wait_ready(port, certs, 60)
            print(f"\n{name}:")
            before = cpu_seconds(process.pid)
            sequential(port, certs, bodies, options.reviews)
            concurrent(port, certs, list(bodies.values()), options.concurrency, options.each)
            total = len(bodies) * (options.reviews + 20) + options.concurrency * options.each
            print(f"  server CPU: {(cpu_seconds(process.pid) - before) / total * 1e3:.2f} ms per review")
        finally:
            process.terminate()
            process.wait(timeout=10)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
