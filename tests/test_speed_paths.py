"""What keeps linting close to the YAML floor (docs/performance.md), pinned as behaviour, not timed."""

from __future__ import annotations

import gc
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
