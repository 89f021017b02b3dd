"""What keeps linting close to the YAML floor (docs/performance.md), pinned as behaviour, not timed."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from nodename_lint.engine import Linter
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context
from nodename_lint.sources import Source

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  labels: {{{labels}}}
spec:
  template:
    spec:
      containers:
        - name: c
          image: nginx
"""


def _linter() -> Linter:
    return Linter(dict.fromkeys(all_rules()), Context(cluster=None))


def _kind_worker_linter(node_spec: str = "", items: str = "") -> Linter:
    """Every rule against a state of one node, kind-worker (1 cpu, 1Gi, 10 Pods; `node_spec` its spec's YAML
    line), and `items` (more YAML items of the List)."""
    from nodename_lint.cluster.from_file import load_state_text

    state = load_state_text(
        "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: kind-worker}\n"
        + node_spec
        + "  status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"
        + items,
        "state.yaml",
    )
    return Linter(dict.fromkeys(all_rules()), Context(cluster=state))


def test_no_garbage_collection_runs_while_sources_are_linted(tmp_path: Path) -> None:
    """The cyclic GC stays paused across sources: re-enabled after each one, its next allocation ran a
    collection over the young objects, the last document's whole node tree among them."""
    sources = []
    for i in range(20):
        labels = ", ".join(f"k{n}: v{n}" for n in range(600))  # a document of more than 1,200 nodes
        path = tmp_path / f"m{i}.yaml"
        path.write_text(DEPLOYMENT.format(i=i, labels=labels))
        sources.append(Source(str(path)))
    linter = _linter()
    collections: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        run = linter.lint_sources(sources)
    finally:
        gc.callbacks.remove(record)
    assert run.files == 20 and run.objects == 20
    assert len(collections) <= 1, collections  # the one after the run, when the GC is enabled again
    assert gc.isenabled()


def test_node_names_longer_by_whole_parts_are_found_as_the_cuts_of_every_name_found_them() -> None:
    """NodeNameIndex finds the names that are a looked-up name plus whole dot- or dash-separated parts by
    bisection; the same names as indexing every cut of every name (_segment_cuts) found, on random names."""
    import random

    from nodename_lint.cluster.names import _MIN_SEGMENT_NAME, NodeNameIndex, _segment_cuts, _starting_with

    rng = random.Random(26)
    parts = ["ip", "10", "0", "kind", "worker", "Worker2", "ec2", "internal", "a", "node-1", "x.y"]
    for _ in range(300):
        names = {"".join(rng.choice([*parts, "-", "."]) for _ in range(rng.randint(1, 7))) for _ in range(30)}
        index = NodeNameIndex(names)
        for query in [*(cut for name in names for cut in _segment_cuts(name.lower())), "worker", "ip-10"]:
            if len(query) < _MIN_SEGMENT_NAME:
                continue
            found = {
                i
                for separator in ".-"
                for ordered, key in ((index._by_start, query + separator), (index._by_end, query[::-1] + separator))
                for i in _starting_with(ordered, key)
            }
            cut_index = {i for i, lowered in enumerate(index.lowered) if query in set(_segment_cuts(lowered))}
            assert found == cut_index, (sorted(names), query)


def _random_node_spec(rng: object) -> dict[str, object]:
    """A Pod spec whose nodeSelector, required node affinity and tolerations are drawn from a small
    vocabulary (so that many nodes match alike), malformed parts included."""
    import random

    assert isinstance(rng, random.Random)
    values = ["a", "b", "c", "1", "7"]
    keys: list[object] = ["zone", "pool", "type", "num"]
    spec: dict[str, object] = {}
    if rng.random() < 0.6:
        spec["nodeSelector"] = {rng.choice(keys): rng.choice(values) for _ in range(rng.randint(0, 2))}
    elif rng.random() < 0.1:
        spec["nodeSelector"] = ["zone"]
    if rng.random() < 0.6:
        terms: list[object] = []
        for _ in range(rng.randint(0, 3)):
            expressions = [
                {
                    "key": rng.choice([*keys, 5, ["zone"]]),
                    "operator": rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Near"]),
                    "values": rng.sample(values, rng.randint(0, 2)),
                }
                for _ in range(rng.randint(0, 2))
            ]
            term: dict[str, object] = {"matchExpressions": expressions} if expressions or rng.random() < 0.5 else {}
            if rng.random() < 0.15:
                term["matchFields"] = [
                    {"key": "metadata.name", "operator": rng.choice(["In", "NotIn"]), "values": ["n1", "n2", "n3"]}
                ]
            terms.append(term if rng.random() < 0.95 else "term")
        required = {"nodeSelectorTerms": terms}
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    if rng.random() < 0.5:
        spec["tolerations"] = [
            {"key": rng.choice(["gpu", "dedicated", "node.kubernetes.io/unschedulable"]), "operator": "Exists"}
            for _ in range(rng.randint(1, 2))
        ]
    return spec


def test_no_node_fits_weighs_nodes_alike_once_and_finds_what_each_node_weighed_alone_finds() -> None:
    """ClusterState._find_no_fit weighs the filters that read a node alone once per group of nodes alike
    for the spec (NodeShapes); on random clusters and specs its verdict (reasons and counts, the nodes
    where preemption may help, in order, the nodes of unknown usage) is the one of scheduler_rejection
    asked of every node in turn, and a node that fits is found whenever one does."""
    import random
    from functools import partial

    from nodename_lint.cluster.records import NodeInfo, NodeUsage
    from nodename_lint.cluster.state import ClusterState, NoNodeFits
    from nodename_lint.podspec import required_node_names
    from nodename_lint.scheduling import (
        absent_nodes_reason,
        admitted_tolerations,
        host_ports,
        scheduler_rejection,
    )

    def one_by_one(state: ClusterState, spec: dict, requests: dict[str, int]) -> NoNodeFits | None:
        """The straightforward computation: every candidate node through every filter, in order."""
        nodes = state.nodes or {}
        wanted = host_ports(spec, default_from_host_network=True)
        names = required_node_names(spec)
        if names is not None and not names:
            return state._find_no_fit(spec, requests, wanted)  # the PreFilter's conflict: no node is weighed
        candidates = [nodes[n] for n in sorted(names) if n in nodes] if names is not None else list(nodes.values())
        counts: dict[str, int] = {}
        unknown = 0
        helpful: list[str] = []
        tolerations = admitted_tolerations(spec)
        for node in candidates:
            rejection = scheduler_rejection(
                spec,
                requests,
                node,
                partial(state.usage, node.name),
                wanted,
                partial(state.ports_in_use, node.name),
                tolerations,
            )
            if rejection is None:
                return None
            unknown += not state.pods_known_on(node.name)
            if rejection.preemption_may_help:
                helpful.append(node.name)
            for reason in rejection.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        if len(candidates) < len(nodes):
            counts[absent_nodes_reason()] = len(nodes) - len(candidates)
        return NoNodeFits(counts, unknown, preemption_may_help=len(helpful), helpful=tuple(helpful))

    rng = random.Random(26)
    taints = [
        [],
        [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
        [{"effect": "NoSchedule", "value": "yes", "key": "gpu"}],  # the same taint, its keys in another order
        [{"key": "dedicated", "effect": "NoExecute"}],
        [{"key": "dedicated", "effect": "PreferNoSchedule"}],
    ]
    fits = rejected = 0
    for round_ in range(150):
        nodes = {}
        for i in range(rng.randint(1, 40)):
            labels = {key: rng.choice(["a", "b", "c", "1", "7"]) for key in ("zone", "pool", "type", "num")}
            for key in rng.sample(list(labels), rng.randint(0, 2)):
                del labels[key]
            name = f"n{i}"
            nodes[name] = NodeInfo(
                name,
                labels={**labels, "kubernetes.io/hostname": name},
                taints=rng.choice(taints),
                unschedulable=rng.random() < 0.1,
                allocatable={"cpu": rng.choice(["1", "2", "4"]), "memory": "4Gi", "pods": rng.choice(["3", "110"])},
            )
        known = [name for name in nodes if rng.random() < 0.8]
        state = ClusterState(source="test", nodes=nodes, pods=[], pod_nodes=frozenset(known))
        ports = {name: [(("0.0.0.0", "TCP", 8080), "ns/p")] for name in known if rng.random() < 0.2}
        state.set_node_summaries(
            {name: NodeUsage(rng.randint(0, 3), {"cpu": rng.choice([0, 500, 1500, 3000])}) for name in known},
            lambda name, ports=ports: ports.get(name, []),
        )
        for _ in range(8):
            spec = _random_node_spec(rng)
            if rng.random() < 0.2:
                spec["containers"] = [{"name": "c", "ports": [{"containerPort": 8080, "hostPort": 8080}]}]
            requests = {"cpu": rng.choice([100, 1000, 2500, 5000])}
            wanted = host_ports(spec, default_from_host_network=True)
            expected = one_by_one(state, spec, requests)
            assert state._find_no_fit(spec, requests, wanted) == expected, (round_, spec, requests)
            fits += expected is None
            rejected += expected is not None and len(expected.reasons) > 1
    assert fits > 100 and rejected > 100  # both outcomes, and verdicts of several reasons, were compared


def test_closest_node_names_weighs_only_the_fewest_typos_and_finds_what_weighing_all_found() -> None:
    """NodeNameIndex.closest asks rapidfuzz for the names at 1 edit, then 2, then 3 (each pass cheaper than
    one that lets every name within the limit through), none when a name differs by whole parts, and
    translates ASCII names to their letters and digits; on random names (other cases, other scripts,
    typos, missing parts) it suggests what the computation over every distance suggested."""
    import random

    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    from nodename_lint.cluster import names as module
    from nodename_lint.cluster.names import MAX_SUGGESTIONS, NodeNameIndex

    def weighing_all(index: NodeNameIndex, name: str) -> list[str]:
        """The straightforward computation: every name within the limit scored, the best kept."""
        lowered = name.lower()
        if lowered in index._same_case:
            return [index._same_case[lowered]]
        normalized = "".join(ch for ch in name.lower() if ch.isalnum())
        same_letters = [known for known in index.names if "".join(filter(str.isalnum, known.lower())) == normalized]
        if same_letters:
            return same_letters[:MAX_SUGGESTIONS]
        limit = max(1, min(3, len(lowered) // 4))
        scores: dict[int, int] = {}
        for position, known in enumerate(index.lowered):
            if len(lowered) >= module._MIN_SEGMENT_NAME and any(
                known.startswith(lowered + separator) or known.endswith(separator + lowered) for separator in ".-"
            ):
                scores[position] = 0
            if any(part == known for part in module._segment_cuts(lowered) if len(part) >= module._MIN_SEGMENT_NAME):
                scores[position] = 0
        for _, distance, position in process.extract(
            lowered, index.lowered, scorer=Levenshtein.distance, score_cutoff=limit, limit=None
        ):
            scores.setdefault(position, int(distance))
        if not scores:
            return []
        best = min(scores.values())
        closest = [index.names[position] for position in sorted(scores) if scores[position] == best]
        if best == 0 and len(closest) > 1:
            nearest = min(abs(len(node) - len(name)) for node in closest)
            closest = [node for node in closest if abs(len(node) - len(name)) == nearest]
        return closest[:MAX_SUGGESTIONS]

    rng = random.Random(26)
    parts = ["ip", "10", "0", "kind", "worker", "Worker2", "ec2", "internal", "node-1", "İx", "ß", "ノード", "_"]
    typos = 0
    for _ in range(200):
        names = {"".join(rng.choice([*parts, "-", "."]) for _ in range(rng.randint(1, 6))) for _ in range(40)}
        index = NodeNameIndex(names)
        queries = []
        for name in rng.sample(sorted(names), 10):
            chars = list(name)
            for _ in range(rng.randint(0, 4)):
                position = rng.randrange(len(chars) + 1)
                choice = rng.random()
                if choice < 0.4 and position < len(chars):
                    chars[position] = rng.choice("abcx0-.É")
                elif choice < 0.7:
                    chars.insert(position, rng.choice("abx1-."))
                elif chars:
                    del chars[min(position, len(chars) - 1)]
            queries += ["".join(chars), name.upper(), name.replace("-", ""), name.partition(".")[0]]
        for query in queries:
            found = index.closest(query)
            assert found == weighing_all(index, query), (sorted(names), query)
            typos += bool(found) and query.lower() not in index._same_case
    assert typos > 1000


def test_no_offline_rule_makes_a_plain_workloads_whole_spec_plain_values(monkeypatch: object) -> None:
    """The offline rules read the fields they need (Manifest.pod_spec_field) and make the whole Pod spec plain
    values only past their screens: invalid-priority made every object's spec plain values, 0.3 s (6%) of
    the generated 10,000 documents. A Deployment that pins no node and names no priority is read field by field."""
    import pytest

    from nodename_lint.model import Manifest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    whole: list[str] = []
    original = Manifest.pod_spec

    def counted(self: Manifest) -> object:
        whole.append(self.name)
        return original.fget(self) if original.fget else None  # type: ignore[misc]

    monkeypatch.setattr(Manifest, "pod_spec", property(counted))
    result = _linter().lint_text(DEPLOYMENT.format(i=0, labels="app: web"), display="web.yaml")
    assert result.findings == [] and whole == []
    pinned = DEPLOYMENT.format(i=1, labels="app: web").replace("    spec:\n", "    spec:\n      priorityClassName: x\n")
    _linter().lint_text(pinned, display="web.yaml")
    assert whole, "the check can fail: a spec that names a PriorityClass is read whole by invalid-priority"


def test_the_pinned_node_is_read_and_checked_once_an_object_whatever_the_cluster_rules_ask(monkeypatch: object) -> None:
    """Eight cluster rules ask every object for the node it pins (targets.pinned_target): the name is read and
    checked as a DNS-1123 subdomain once per object, and each rule finds the node as before."""
    import pytest

    from nodename_lint.cluster import targets

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    checked: list[str] = []
    original = targets.is_dns1123_subdomain

    def counted(value: str) -> bool:
        checked.append(value)
        return original(value)

    monkeypatch.setattr(targets, "is_dns1123_subdomain", counted)
    linter = _kind_worker_linter()
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  nodeName: {node}\n"
        "  containers: [{{name: c, image: i}}]\n"
    )
    result = linter.lint_text(
        pod.format(node="kind-wrker") + "---\n" + pod.format(node="kind-worker"), display="p.yaml"
    )
    assert [f.rule for f in result.findings if f.rule == "unknown-node"] == ["unknown-node"]
    assert checked == ["kind-wrker", "kind-worker"]


# Run as `python -m nodename_lint` does; an exit handler registered first runs last, after the command line's own.
EXIT_PROBE = """
import atexit, gc, os, runpy, sys
atexit.register(lambda: os.write(2, b"\\nGC=%d,%d" % (gc.get_freeze_count(), len(gc.get_objects()))))
sys.argv = ["nodename-lint", *sys.argv[1:]]
runpy.run_module("nodename_lint", run_name="__main__", alter_sys=True)
"""


def test_the_command_line_exits_without_scanning_what_it_loaded(tmp_path: Path) -> None:
    """Startup: what the process holds at exit is frozen, so the interpreter's last collection scans
    almost nothing (it scanned every module, class and function: 5-10 ms of a one-file lint)."""
    (tmp_path / "pod.yaml").write_text(DEPLOYMENT.format(i=0, labels=""))
    completed = subprocess.run(
        [sys.executable, "-c", EXIT_PROBE, "pod.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert "No problems found in 1 object" in completed.stdout, completed.stdout + completed.stderr
    frozen, tracked = map(int, completed.stderr.rpartition("\nGC=")[2].split(","))
    assert frozen > 10_000 and tracked < frozen / 20, (frozen, tracked)


def test_the_command_line_starts_with_the_cyclic_gc_paused(tmp_path: Path) -> None:
    """No collection runs while the command line is parsed and the command's module loads; the command
    then runs with the GC on (the lint pauses it itself while it reads the sources, test above)."""
    (tmp_path / "pod.yaml").write_text(DEPLOYMENT.format(i=0, labels=""))
    code = """
import gc, sys
from nodename_lint.cli import main

seen = []

def record(phase, info):
    frame = sys._getframe(1) if phase == "start" and sys._getframe().f_back else None
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith("cli.py") and code.co_name in ("parse_args", "resolve_command"):
            return seen.append("parsing")
        if code.co_filename.endswith("lint.py") and code.co_name == "<module>":
            return seen.append("importing")
        if code.co_name == "lint_command":
            return seen.append("running")
        frame = frame.f_back

gc.callbacks.append(record)
gc.set_threshold(1)
try:
    main(["pod.yaml"])
except SystemExit as exit:
    gc.set_threshold(700)
    gc.callbacks.remove(record)
    print(exit.code, sorted(set(seen)), gc.isenabled(), file=sys.stderr)
"""
    completed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert completed.stderr.strip().splitlines()[-1] == "0 ['running'] True", completed.stderr


def test_only_the_first_start_of_a_process_freezes_what_it_built(tmp_path: Path) -> None:
    """A test that runs the command line again in its process does not freeze the garbage of the tests before."""
    (tmp_path / "pod.yaml").write_text(DEPLOYMENT.format(i=0, labels=""))
    code = (
        "import gc\nfrom click.testing import CliRunner\nfrom nodename_lint.cli import main\n"
        "counts = []\nfor _ in range(2):\n"
        "    assert CliRunner().invoke(main, ['pod.yaml']).exit_code == 0\n"
        "    counts.append(gc.get_freeze_count())\n"
        "    cycle = [[] for _ in range(1000)]\n    cycle.append(cycle)\n    del cycle\n"
        "print(counts[0] > 10_000, counts[1] <= counts[0])  # frozen objects freed leave the count\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert completed.stdout.strip() == "True True", completed.stdout + completed.stderr


def test_replicasets_named_after_a_deployment_are_found_by_bisection_as_by_their_name_before_the_hash() -> None:
    """_Owners.named_after finds in the sorted controllers what indexing every ReplicaSet by the part of
    its name before the last dash found: `web-5d8f` for `web`, not `web-api-5d8f` nor `web2-5d8f`."""
    import random

    from nodename_lint.cluster.state import _Owners

    rng = random.Random(2612)
    parts = ["web", "web-api", "web2", "w", "", "a-b", "api"]
    for _ in range(300):
        owners = {
            f"{rng.choice(['ReplicaSet', 'StatefulSet', 'Job', 'ReplicaSetX'])}/"
            f"{rng.choice(parts)}{rng.choice(['', '-', '-5d8f', '-x-y', '5d8f', '-abc'])}": []
            for _ in range(rng.randint(0, 12))
        }
        indexed: dict[str, list[str]] = {}
        for owner in owners:
            if owner.startswith("ReplicaSet/"):
                indexed.setdefault(owner.rpartition("-")[0], []).append(owner)
        found = _Owners(owners)
        for name in [*parts, "web-", "zzz"]:
            assert set(found.named_after(name)) == set(indexed.get(f"ReplicaSet/{name}", ())), (owners, name)


def test_names_within_a_few_edits_are_found_among_the_names_holding_a_piece_as_among_all() -> None:
    """NodeNameIndex._within weighs only the names that hold one of distance + 1 pieces of the typo (each edit
    breaks one piece at most): on random cluster names and typos it finds what weighing every name finds,
    and it narrows the names down for most typos."""
    import random

    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    from nodename_lint.cluster.names import NodeNameIndex

    rng = random.Random(2602)
    narrowed = weighed = 0
    for _ in range(40):
        shape = rng.choice(["ip-10-{}-{}-{}.ec2.internal", "node-{:05d}{}{}", "gke-pool-{}-{}{}", "w{}{}{}"])
        names = {shape.format(*(rng.randint(0, 300) for _ in range(3))) for _ in range(rng.randint(5, 600))}
        names |= {"".join(rng.choice("ab-.\n1") for _ in range(rng.randint(1, 6))) for _ in range(5)}
        index = NodeNameIndex(names)
        for name in rng.sample(sorted(names), min(15, len(names))):
            chars = list(name.lower())
            for _ in range(rng.randint(0, 4)):
                position = rng.randrange(len(chars) + 1)
                if rng.random() < 0.5 and position < len(chars):
                    chars[position] = rng.choice("a0-.\n")
                elif rng.random() < 0.5:
                    chars.insert(position, rng.choice("x9-"))
                elif chars:
                    del chars[min(position, len(chars) - 1)]
            typo = "".join(chars)
            for distance in (1, 2, 3):
                every = process.extract(
                    typo, index.lowered, scorer=Levenshtein.distance, score_cutoff=distance, limit=None
                )
                assert index._within(typo, distance) == sorted(position for _, _, position in every), (typo, distance)
                if index._holding_a_piece(typo, distance + 1) is None:
                    weighed += 1
                else:
                    narrowed += 1
    assert narrowed > 500 and weighed > 50, (narrowed, weighed)


def test_nodes_with_the_same_allocatable_share_its_capacity_and_no_other_value_is_mistaken_for_it() -> None:
    """NodeInfo.capacity is parsed once for nodes whose allocatable is written alike (strings only): 1, 1.0
    and True hash alike but parse apart, so an allocatable with other values is parsed for its own node."""
    from nodename_lint.cluster.records import NodeInfo

    def capacity(allocatable: dict[str, object]) -> dict[str, int]:
        return NodeInfo("n", allocatable=dict(allocatable)).capacity

    written = {"cpu": "7910m", "memory": "31094068Ki", "pods": "110"}
    first, second = NodeInfo("a", allocatable=dict(written)), NodeInfo("b", allocatable=dict(written))
    assert first.capacity is second.capacity
    assert first.capacity == {"cpu": 7910, "memory": 31094068 * 1024, "pods": 110}
    assert capacity({"cpu": "2", "pods": "110"}) == {"cpu": 2000, "pods": 110}
    assert capacity({"cpu": "2"}) != capacity({"cpu": "3"})
    for value in (1, 1.0, True, "1"):
        assert capacity({"cpu": value}) == NodeInfo._parse_each({"cpu": value}), value


LINT_END_PROBE = """
import gc, sys
from nodename_lint import engine
from nodename_lint.cli import main

largest, linted = [0], [False]
collect = engine.Linter._collect

def flagged(self, *args, **kwargs):
    try:
        return collect(self, *args, **kwargs)
    finally:
        linted[0] = True

def record(phase, info):
    if phase == "start" and linted[0]:
        largest[0] = max(largest[0], sum(len(gc.get_objects(generation=g)) for g in range(info["generation"] + 1)))

engine.Linter._collect = flagged
gc.callbacks.append(record)
try:
    main(sys.argv[1:])
except SystemExit:
    gc.callbacks.remove(record)
    print("LARGEST", largest[0], file=sys.stderr)
"""


def test_what_a_lint_run_built_is_frozen_before_the_gc_runs_again(tmp_path: Path) -> None:
    """The cyclic GC, paused while the sources are linted, ran its first collection over everything the run
    had built and kept (findings, the cluster state's caches: 24 ms against a 150,000-Pod snapshot) when it
    came back; the command line freezes that first, so no collection after the run scans it."""
    root = Path(__file__).resolve().parents[1]
    state = tmp_path / "state.yaml"
    state.write_text((root / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    folder = tmp_path / "manifests"
    folder.mkdir()
    for index in range(400):  # each with two findings: a node name one letter off, and 100 cpu
        (folder / f"p{index}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{index}\nspec:\n  nodeName: kind-workr\n"
            "  containers:\n    - name: c\n      image: busybox\n      resources:\n        requests: {cpu: '100'}\n"
        )
    completed = subprocess.run(
        [sys.executable, "-c", LINT_END_PROBE, "manifests", "--cluster-state", "state.yaml", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert '"unknown-node"' in completed.stdout, completed.stderr[-2000:]
    scanned = int(completed.stderr.rpartition("LARGEST ")[2].split()[0])
    assert scanned < 1_500, scanned  # 3,400 in the first collection after the run before the freeze


def test_a_daemonsets_refusal_is_weighed_once_an_object_whatever_the_cluster_rules_ask(monkeypatch: object) -> None:
    """The rules about a pinned node ask each object why a DaemonSet's controller would create no Pod there
    (targets.pinned_node_or_refusal): it is weighed once per object and node, and the findings are as before."""
    import pytest

    from nodename_lint.cluster import targets

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    weighed: list[str] = []
    original = targets.daemon_refusal

    def counted(obj: object, node: object) -> object:
        weighed.append(getattr(node, "name", ""))
        return original(obj, node)  # type: ignore[arg-type]

    monkeypatch.setattr(targets, "daemon_refusal", counted)
    linter = _kind_worker_linter(node_spec="  spec: {taints: [{key: gpu, effect: NoSchedule}]}\n")
    daemonset = (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n      nodeName: kind-worker\n"
        "      containers: [{name: c, image: i}]\n"
    )
    result = linter.lint_text(daemonset, display="ds.yaml")
    assert [f.rule for f in result.findings if f.rule == "untolerated-taint"] == ["untolerated-taint"]
    assert weighed == ["kind-worker"]


def test_a_piece_repeated_in_the_names_sends_the_typo_search_over_every_name_at_once() -> None:
    """A hostile state may name a few nodes `aaaa...` and a manifest pin `aaaa...b`: a middle piece of the typo
    occurs hundreds of times in each name, and finding every occurrence one by one in Python would cost more
    than weighing every name; past max(32, a sixteenth of the names) occurrences, every name is weighed, and
    the suggestions are the same. The first and last pieces are looked up by bisection, whatever they repeat."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    from nodename_lint.cluster.names import NodeNameIndex

    names = ["a" * 250 + suffix for suffix in ("", "-1", "-2", "b.c")]
    index = NodeNameIndex(names)
    typo = "a" * 249 + "x"
    assert index._holding_a_piece(typo, 2) == {0, 1, 2, 3}  # the names that start with the first piece
    assert index._holding_a_piece(typo, 3) is None  # the middle piece, hundreds of times in each name
    every = process.extract(typo, index.lowered, scorer=Levenshtein.distance, score_cutoff=1, limit=None)
    assert index._within(typo, 1) == sorted(position for _, _, position in every) != []
    assert index.closest(typo) == ["a" * 250]


def test_a_later_module_is_imported_on_first_read_and_then_bound_in_the_stand_ins_place() -> None:
    """rule.later: nothing is imported until a check reads from the module; then the module itself replaces the
    stand-in, so that no later read goes through it."""
    from nodename_lint.rule import later

    code = (
        "import sys\nfrom nodename_lint.rule import later\n"
        "namespace = {}\nnamespace['mod'] = later('colorsys', namespace)\n"
        "before = 'colorsys' in sys.modules\n"
        "value = namespace['mod'].rgb_to_hsv(1.0, 0.0, 0.0)\n"
        "print(before, namespace['mod'] is sys.modules['colorsys'], value)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split() == ["False", "True", "(0.0,", "1.0,", "1.0)"]
    assert callable(later)


def test_the_cluster_rules_run_no_import_statement_for_each_object(monkeypatch: object) -> None:
    """A cluster rule's modules are bound once (rule.later), not imported by a statement inside its check: each
    such statement cost 2 µs, and 20 rules ran a few each for every object (30,000 a run of 1,000 manifests)."""
    import builtins

    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    linter = _kind_worker_linter(
        items="- kind: Pod\n  metadata: {name: old, namespace: default}\n"
        "  spec: {nodeName: kind-worker, containers: []}\n"
    )
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  nodeName: {node}\n"
        "  containers: [{{name: c, image: i, resources: {{requests: {{cpu: 100m}}}}}}]\n"
    )
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}}}\nspec:\n  replicas: 2\n  template:\n"
        "    spec:\n      nodeSelector: {{zone: z{i}}}\n      containers: [{{name: c, image: i}}]\n"
    )

    def documents(count: int) -> str:
        return "---\n".join(
            pod.format(i=i, node="kind-wrker" if i % 2 else "kind-worker") + "---\n" + deployment.format(i=i)
            for i in range(count)
        )

    linter.lint_text(documents(2), display="warm.yaml")  # the stand-ins bind on their first read
    calls: list[str] = []
    original = builtins.__import__

    def counted(name: str, globals: dict[str, object] | None = None, *args: object, **kwargs: object) -> object:
        calls.append(str((globals or {}).get("__name__")))
        return original(name, globals, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", counted)
    result = linter.lint_text(documents(20), display="m.yaml")
    monkeypatch.undo()
    assert {f.rule for f in result.findings} >= {"unknown-node", "no-node-fits"}  # the cluster rules ran
    from_rules = [name for name in calls if name.startswith("nodename_lint.rules.")]
    assert from_rules == [], sorted(set(from_rules))


def test_the_cluster_profile_bench_reports_the_loads_phases_the_rules_and_the_imports(tmp_path: Path) -> None:
    """`python bench/profile_cluster.py DIR` (docs/performance.md, the sixth round) times what it says it times."""
    import json

    root = Path(__file__).resolve().parent.parent
    nodes = [{"kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4"}}} for i in range(3)]
    pods = [
        {"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}, "spec": {"nodeName": "n0"}}
        for i in range(5)
    ]
    (tmp_path / "dump.json").write_text(json.dumps({"kind": "List", "items": nodes + pods}))
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec:\n"
        "  nodeName: n9\n  containers: [{name: c, image: i}]\n"
    )
    completed = subprocess.run(
        [sys.executable, str(root / "bench" / "profile_cluster.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    loop = "load: loading loop (_ItemReader.read)"
    scan = "msgspec's scan of the file alone"
    for line in ("load: decode (msgspec)", loop, "load: Nodes' records", "unknown-node", scan):
        assert line in completed.stdout, completed.stdout
    assert "import statements run:" in completed.stdout
    dump, saved = tmp_path / "dump.json", tmp_path / "cluster.snapshot.json"
    snapshot = subprocess.run(  # a snapshot is no kubectl List: no scan of it to report
        [sys.executable, "-m", "nodename_lint", "snapshot", "--cluster-state", str(dump), "-o", str(saved)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert snapshot.returncode == 0, snapshot.stderr
    completed = subprocess.run(
        [sys.executable, str(root / "bench" / "profile_cluster.py"), str(tmp_path), "--state", "cluster.snapshot.json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert "load: the whole state" in completed.stdout and scan not in completed.stdout, completed.stdout


def test_the_versus_bench_measures_each_version_from_its_own_install(tmp_path: Path) -> None:
    """`python bench/versus.py --base BASE_PYTHON DIR`, started from the checkout as docs/performance.md shows:
    the base's commands import the base's nodename_lint, not the checkout's (`python -m` puts the current folder
    first on the module path: both columns were the checkout's code until the eighth round), and a base that
    imports the same files as the new version is refused."""
    import json
    import re
    import shutil

    root = Path(__file__).resolve().parent.parent
    copy = tmp_path / "base"
    for package in ("nodename_lint", "rules"):
        shutil.copytree(root / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    init = copy / "nodename_lint" / "__init__.py"  # the base's reports say which code wrote them
    init.write_text(re.sub(r'__version__ = "[^"]*"', '__version__ = "0.0.0+base"', init.read_text()))
    base = tmp_path / "base-python"
    base.write_text(f'#!/bin/sh\nPYTHONPATH="{copy}" exec "{sys.executable}" "$@"\n')
    base.chmod(0o755)
    cluster = tmp_path / "cluster"
    (cluster / "manifests").mkdir(parents=True)
    nodes = [{"kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4"}}} for i in range(2)]
    (cluster / "dump.json").write_text(json.dumps({"kind": "List", "items": nodes}))
    (cluster / "manifests" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: debug}\nspec:\n"
        "  nodeName: n9\n  containers: [{name: c, image: i}]\n"
    )
    subprocess.run(
        [sys.executable, "-m", "nodename_lint", "snapshot", "--cluster-state", str(cluster / "dump.json"), "-o",
         str(cluster / "cluster.snapshot.json")],
        check=True, capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    versus = [sys.executable, str(root / "bench" / "versus.py"), "--rounds", "1", str(cluster)]
    completed = subprocess.run([*versus, "--base", str(base)], capture_output=True, text=True, cwd=root, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.count("reports DIFFERENT") == 3, completed.stdout  # each version's own code ran
    refused = subprocess.run([*versus, "--base", sys.executable], capture_output=True, text=True, cwd=root, timeout=60)
    assert refused.returncode != 0 and "import the same nodename_lint" in refused.stderr, refused.stderr
