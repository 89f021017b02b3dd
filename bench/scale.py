"""Issue 12's figures in one run: big Lists against the compose floor, a 150,000-Pod cluster, live mode.

Every command is a fresh process; the commands of a table run in interleaved rounds and the
tables show medians (wall, CPU = user + system) and the peak RSS (os.wait4), with ratios
against a reference measured in the same rounds:

1. Lists (`kubectl get -A -o yaml` shape): 25,000 and 100,000 Pods, each with a finding and a
   `# nodename-lint: ignore[...]` comment, against bench/floor.py (read + CSafeLoader compose)
   and against the same compose with the cyclic GC paused (the tighter floor); the 100,000/25,000
   ratio shows whether the cost is linear (4.0). Then a List of 2,000,000 `{}` items.
2. A cluster of 5,000 nodes and 150,000 Pods saved as a kubectl JSON dump (bench/cluster_scale.py
   shapes), converted once with `nodename-lint snapshot --cluster-state DUMP`, and 1,000
   manifests of which 250 name distinct missing nodes (a "did you mean" each): offline, against
   the dump, against the snapshot. The findings against the dump and the snapshot are compared.
3. The same three runs on each cluster shape of bench/cluster_shapes.py (`--sections shapes`: not
   in the default sections; each shape's dump is 0.4 to 0.7 GB, as kubectl prints real objects), its
   items in the API server's order, or node by node too with `--orders api,node`.
4. Live mode against the same size of cluster served by the test API server (tests/apiserver,
   needs the test extras): offline vs `--kubeconfig`, and the number of requests.

    python bench/scale.py [--rounds 3] [--quick] [--skip-live] [--sections lists,cluster,shapes,live] [--pin CPU]
                          [--shapes-dir DIR] [--orders api,node]

--quick: 10,000/40,000 items, 500 nodes / 15,000 Pods, one round (a first look, not the figures).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import run  # noqa: E402
from cluster_scale import manifest, node, pod  # noqa: E402
from cluster_shapes import SHAPES, shape_named, write_shape  # noqa: E402
from run import LINT, Measure, measure_interleaved, precompile  # noqa: E402

ITEM = """\
- apiVersion: v1
  kind: Pod
  metadata:
    name: debug-{i}
    namespace: team-{team}
    labels: {{app: debug, index: "{i}"}}
  spec:
    # nodename-lint: ignore[nodename-on-pod]
    nodeName: Worker-{i}
    containers:
    - name: shell
      image: busybox:1.36
      command: [sleep, "3600"]
      resources:
        requests: {{cpu: 100m, memory: 64Mi}}
"""
GC_PAUSED_FLOOR = (
    "import gc, sys, yaml\ngc.disable()\nfor path in sys.argv[1:]:\n    with open(path, 'rb') as f:\n"
    "        list(yaml.compose_all(f.read(), Loader=yaml.CSafeLoader))\n"
)


def write_list(path: Path, items: int) -> Path:
    """A List of `items` Pods, each with one finding (an invalid node name) and one suppressed."""
    with path.open("w", encoding="utf-8") as out:
        out.write("apiVersion: v1\nkind: List\nitems:\n")
        for i in range(items):
            out.write(ITEM.format(i=i, team=i % 20))
    return path


class ChildMeasure(Measure):
    """A Measure whose peak RSS is the command's own, read by GNU time.

    wait4's ru_maxrss of a child counts the pages it shared with this process before exec, and
    this process holds a 150,000-Pod cluster for the live rows; GNU time forks the command from a
    small process, so its %M is the command alone. Without /usr/bin/time, wait4's figure stays.
    """

    def run(self, cwd: Path | None = None) -> None:
        if not Path(GNU_TIME).exists():
            super().run(cwd)
            return
        with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
            command, peak = self.command, self.peak_rss_kb
            self.command = [GNU_TIME, "-f", "%M", "-o", rss.name, *command]
            try:
                super().run(cwd)
            finally:
                self.command = command
            self.peak_rss_kb = max(peak, *(int(word) for word in rss.read().split() if word.isdigit()))


GNU_TIME = "/usr/bin/time"


def row(label: str, *args: str) -> Measure:
    return ChildMeasure(label, list(args), documents=1)


def print_table(title: str, rows: list[Measure], reference: Measure) -> None:
    print(f"\n| {title} | wall s | cpu s | x {reference.label} (cpu) | peak RSS MB |")
    print("|---|---|---|---|---|")
    for measured in rows:
        ratio = measured.cpu_median / reference.cpu_median
        print(
            f"| {measured.label} | {measured.median:.2f} | {measured.cpu_median:.2f} | {ratio:.2f} | "
            f"{measured.peak_rss_kb / 1024:.0f} |"
        )


def bench_lists(work: Path, sizes: tuple[int, int], rounds: int) -> None:
    small, large = sizes
    tables: dict[int, list[Measure]] = {}
    for items in sizes:
        path = write_list(work / f"list-{items}.yaml", items)
        tables[items] = measure_interleaved(
            [
                row("floor", sys.executable, str(HERE / "floor.py"), str(path)),
                row("floor, GC paused", sys.executable, "-c", GC_PAUSED_FLOOR, str(path)),
                row("nodename-lint", *LINT, str(path)),
            ],
            rounds,
        )
        size = path.stat().st_size / 1e6
        print_table(f"List of {items:,} Pods ({size:.0f} MB)", tables[items], tables[items][0])
        paused = tables[items][1]
        print(f"(nodename-lint / floor with the GC paused: {tables[items][2].cpu_median / paused.cpu_median:.2f}x)")
    linear = tables[large][2].cpu_median / tables[small][2].cpu_median
    print(f"\nnodename-lint cpu, {large:,} items / {small:,} items: {linear:.2f} (linear: {large / small:.1f})")
    empty = work / "empty-items.yaml"
    empty.write_text("apiVersion: v1\nkind: List\nitems:\n" + "- {}\n" * 2_000_000, encoding="utf-8")
    rows = measure_interleaved(
        [
            row("floor", sys.executable, str(HERE / "floor.py"), str(empty)),
            row("nodename-lint", *LINT, str(empty)),
        ],
        1,
    )
    print_table("List of 2,000,000 `{}` (10 MB)", rows, rows[0])


def write_cluster(work: Path, nodes: int, pods: int, manifests: int) -> tuple[Path, Path]:
    """The JSON dump and the manifests; every 4th manifest names a distinct missing node (a typo)."""
    rng = random.Random(2026)
    items = (
        [node(i) for i in range(nodes)]
        + [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i}"}} for i in range(20)]
        + [pod(i, nodes, rng) for i in range(pods)]
    )
    dump = work / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    folder = work / "manifests"
    folder.mkdir()
    for i in range(manifests):
        text = manifest(i, nodes, rng)
        if i % 4 == 0:  # `nod-01234`: one letter short of node-01234
            text = re.sub(r"nodeName: \S+", f"nodeName: nod-{(i * 7919) % nodes:05d}", text)
        (folder / f"m{i:04d}.yaml").write_text(text, encoding="utf-8")
    return dump, folder


def findings(report: Path, state: Path) -> list[dict]:
    return [
        {**f, "message": f["message"].replace(f"file {state}", "<state>")}
        for f in json.loads(report.read_text())["findings"]
    ]


def bench_cluster(work: Path, nodes: int, pods: int, manifests: int, rounds: int) -> None:
    dump, folder = write_cluster(work, nodes, pods, manifests)
    measure_cluster(work, dump, folder, f"{manifests:,} manifests, {nodes:,} nodes / {pods:,} Pods", rounds)


def bench_shapes(
    work: Path,
    names: list[str],
    nodes: int,
    pods: int,
    manifests: int,
    rounds: int,
    reuse: bool = False,
    orders: tuple[str, ...] = ("api",),
) -> None:
    """The same three rows on each shape of bench/cluster_shapes.py in each order of its items (written into
    WORK/SHAPE/ or WORK/SHAPE-node/, or read from there when `reuse` and a dump of that order is there: the
    generator is seeded, and writing 1.6 GB takes minutes)."""
    for name in names:
        for order in orders:
            folder = work / (name if order == "api" else f"{name}-{order}")
            written = folder / "ORDER"
            if not (reuse and (folder / "dump.json").is_file() and written.is_file() and written.read_text() == order):
                folder = write_shape(work, shape_named(name), nodes, pods, manifests, order)
                written.write_text(order)
            title = f"shape {name} ({order} order): {manifests:,} manifests, {nodes:,} nodes / {pods:,} Pods"
            measure_cluster(folder, folder / "dump.json", folder / "manifests", title, rounds)


def measure_cluster(work: Path, dump: Path, folder: Path, title: str, rounds: int) -> None:
    """Offline, against the dump and against its snapshot, interleaved; the findings of the two compared."""
    snapshot = work / "cluster.snapshot.json"
    start = time.perf_counter()
    subprocess.run(
        [*LINT, "snapshot", "--cluster-state", str(dump), "-o", str(snapshot)], check=True, capture_output=True
    )
    converted = time.perf_counter() - start
    print(
        f"\n{title}: dump {dump.stat().st_size / 1e6:.0f} MB; "
        f"`snapshot --cluster-state` wrote {snapshot.stat().st_size / 1e6:.1f} MB in {converted:.1f} s"
    )
    reports = {state: work / f"report-{state.name}.json" for state in (dump, snapshot)}
    offline = row("offline", *LINT, str(folder), "--format", "json")
    rows = measure_interleaved(
        [
            offline,
            row(
                "--cluster-state dump.json",
                *LINT,
                str(folder),
                "--cluster-state",
                str(dump),
                "-o",
                str(reports[dump]),
                "--format",
                "json",
            ),
            row(
                "--cluster-state snapshot",
                *LINT,
                str(folder),
                "--cluster-state",
                str(snapshot),
                "-o",
                str(reports[snapshot]),
                "--format",
                "json",
            ),
        ],
        rounds,
    )
    print_table(title, rows, offline)
    from_dump, from_snapshot = findings(reports[dump], dump), findings(reports[snapshot], snapshot)
    unknown = sum(f["rule"] == "unknown-node" for f in from_dump)
    print(
        f"findings: {len(from_dump)} against the dump ({unknown} unknown-node), "
        f"{'identical' if from_dump == from_snapshot else 'DIFFERENT'} against the snapshot"
    )


def bench_live(work: Path, nodes: int, pods: int, manifests: int, rounds: int) -> None:
    from live_scale import cluster, write_manifests

    from tests.apiserver import TOKEN, ApiServer, cluster_entry, write_kubeconfig

    folder = work / "live-manifests"
    write_manifests(folder, manifests, 100, nodes, 100)
    with ApiServer(**cluster(nodes, pods)) as server:
        kubeconfig = write_kubeconfig(
            work / "kubeconfig",
            clusters={"big": cluster_entry(server.url, server.ca_pem)},
            users={"ci": {"token": TOKEN}},
            contexts={"big": ("big", "ci")},
            current="big",
        )
        offline = row("offline", *LINT, str(folder), "--format", "json")
        live = row("live (--kubeconfig)", *LINT, str(folder), "--kubeconfig", str(kubeconfig), "--format", "json")
        before = len(server.requests)
        measure_interleaved([offline, live], rounds)
        requests = (len(server.requests) - before) // rounds
    print_table(
        f"live, {manifests:,} manifests naming 100 nodes, {nodes:,} nodes / {pods:,} Pods", [offline, live], offline
    )
    print(f"API requests per live run: {requests}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument(
        "--sections", default="lists,cluster,live", help="comma-separated: lists, cluster, shapes, live"
    )
    parser.add_argument(
        "--shapes",
        default=",".join(SHAPES),
        help="the shapes of the shapes section (bench/cluster_shapes.py; random-N too)",
    )
    parser.add_argument("--pin", type=int, metavar="CPU", help="run every command on this one core (taskset -c CPU)")
    parser.add_argument(
        "--shapes-dir",
        type=Path,
        metavar="DIR",
        help="keep the shapes' dumps and manifests in DIR/SHAPE/ and reuse them when there (default: a new folder)",
    )
    parser.add_argument(
        "--orders",
        default="api",
        help="the orders of the shapes' items, comma-separated: api (as the API server lists them), node",
    )
    options = parser.parse_args()
    run.PINNED_CPU = options.pin
    sections = set(options.sections.split(","))
    precompile()
    work = Path(tempfile.mkdtemp(prefix="nodename-lint-scale-"))
    print(f"work folder: {work}; python {sys.version.split()[0]}", file=sys.stderr)
    rounds = 1 if options.quick else options.rounds
    sizes = (10_000, 40_000) if options.quick else (25_000, 100_000)
    nodes, pods = (500, 15_000) if options.quick else (5_000, 150_000)
    if "lists" in sections:
        bench_lists(work, sizes, rounds)
    if "cluster" in sections:
        bench_cluster(work, nodes, pods, 1000, rounds)
    if "shapes" in sections:
        shapes_dir = options.shapes_dir or work
        orders = tuple(options.orders.split(","))
        bench_shapes(shapes_dir, options.shapes.split(","), nodes, pods, 1000, rounds, bool(options.shapes_dir), orders)
    if "live" in sections and not options.skip_live:
        bench_live(work, nodes, pods, 1000, rounds)


if __name__ == "__main__":
    main()
