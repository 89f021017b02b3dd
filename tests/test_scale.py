"""Large Lists (issue 12): linted item by item with the findings of the whole List, in linear time."""

from __future__ import annotations

import textwrap
import time

import pytest

from nodename_lint import documents
from nodename_lint.engine import FileResult, Linter
from nodename_lint.findings import Finding
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context
from nodename_lint.sources import Source

ITEM = """\
- apiVersion: v1
  kind: Pod
  metadata:
    name: p{i}
    annotations: {{note: "one\\ntwo"}}
  spec:
    # nodename-lint: ignore[nodename-on-pod]
    nodeName: Node-{i}
    containers:
    - name: c
      image: busybox
      command: |+
        keep the trailing blank line

"""


def _linter() -> Linter:
    catalogue = all_rules()
    return Linter(dict.fromkeys(catalogue), Context(cluster=None))


def _findings(text: str, *, split: bool) -> tuple[list[Finding], int, int]:
    """(findings, objects, documents composed) of a text, with or without Lists split into items."""
    linter = _linter()
    result = FileResult(Source("list.yaml"))
    composed = list(documents.iter_documents([text], split_lists=split))
    linter._lint_documents(result, composed)
    result.findings.sort(key=Finding.sort_key)
    return result.findings, result.objects, len(composed)


def _items(count: int, indent: str = "") -> str:
    return "".join(textwrap.indent(ITEM.format(i=i), indent) for i in range(count))


LISTS = {
    "kubectl shape, kind at the end": "apiVersion: v1\nitems:\n" + _items(40) + "kind: List\nmetadata: {}\n",
    "indented items": "apiVersion: v1\nkind: List\nitems:\n" + _items(40, "  "),
    "typed list, kinds implied": "apiVersion: v1\nkind: PodList\nitems:\n" + _items(40).replace("  kind: Pod\n", ""),
    "directive right above an item": "apiVersion: v1\nkind: List\nitems:\n"
    + _items(20).replace("- apiVersion", "# nodename-lint: ignore[invalid-node-name]\n- apiVersion", 3),
    "helm source": "# Source: chart/templates/pods.yaml\napiVersion: v1\nkind: List\nitems:\n" + _items(40),
    # a quoted scalar continued on a line that looks like an item: that cut is wrong, the whole List decides
    "quoted scalar over an item-like line": "apiVersion: v1\nkind: List\nitems:\n"
    + _items(20)
    + '- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: tricky\n    annotations: {a: "x\n- y"}\n'
    + "  spec: {nodeName: Bad_Name, containers: [{name: c, image: i}]}\n"
    + _items(20),
    "a syntax error in one item": "apiVersion: v1\nkind: List\nitems:\n"
    + _items(20)
    + "- apiVersion: v1\n  kind: Pod\n  metadata: {name: [unclosed\n"
    + _items(20),
    "not convertible to JSON in one item": "apiVersion: v1\nkind: List\nitems:\n"
    + _items(20)
    + "- apiVersion: v1\n  kind: Pod\n  metadata: {name: .nan}\n"
    + _items(20),
}


@pytest.mark.parametrize("name", list(LISTS))
def test_a_list_split_into_items_gives_the_findings_of_the_whole_list(name: str, monkeypatch) -> None:
    text = LISTS[name]
    whole, objects, composed = _findings(text, split=False)
    assert composed == 1
    monkeypatch.setattr(documents, "SPLIT_LIST_CHARS", 0)
    monkeypatch.setattr(documents, "SPLIT_CHUNK_CHARS", 2000)  # a few items per piece
    split, split_objects, split_composed = _findings(text, split=True)
    assert split_composed > 2 or name.startswith(("a syntax error", "not convertible"))
    if name.startswith(("a syntax error", "not convertible")):
        # kubectl refuses the whole file; the items before the broken one were reported on the way
        assert [f.rule for f in whole] == ["yaml-syntax"]
        assert [f for f in split if f.rule == "yaml-syntax"] == whole
        return
    assert split == whole and split_objects == objects
    assert any(f.rule == "invalid-node-name" for f in whole)
    assert sum(f.rule == "nodename-on-pod" for f in whole) <= 1  # the comments suppress it (but in `tricky`)
    if name == "helm source":
        assert {f.template for f in split} == {"chart/templates/pods.yaml"}


def test_only_a_large_list_of_the_plain_shape_is_split() -> None:
    big = "apiVersion: v1\nkind: List\nitems:\n" + _items(1200)
    assert len(big) > documents.SPLIT_LIST_CHARS
    assert len(list(documents.iter_documents([big], split_lists=True))) > 10
    assert len(list(documents.iter_documents([big], split_lists=False))) == 1
    shared = big.replace("name: p3\n", "name: &n p3\n").replace("name: p7\n", "name: *n\n")
    assert len(list(documents.iter_documents([shared], split_lists=True))) == 1  # items share a node: whole
    flow = "apiVersion: v1\nkind: List\nitems: [" + "{}, " * 100_000 + "{}]\n"
    assert len(list(documents.iter_documents([flow], split_lists=True))) == 1


def _lint_seconds(items: int) -> float:
    """CPU seconds to lint a List of `items` Pods, each with a finding and a suppression comment."""
    text = "apiVersion: v1\nkind: List\nitems:\n" + _items(items)
    linter = _linter()
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        result = linter.lint_text(text, "list.yaml")
        best = min(best, time.process_time() - start)
    assert len(result.findings) == items and result.objects == items
    return best


@pytest.mark.parametrize("split", [True, False], ids=["item by item", "composed whole"])
def test_linting_a_list_is_linear_in_its_items(split: bool, monkeypatch) -> None:
    """4 times the items cost about 4 times the time (a per-finding rescan of the List was quadratic: 16x)."""
    if not split:  # one document with every finding: the suppression comments must be found once
        monkeypatch.setattr(documents, "SPLIT_LIST_CHARS", 1 << 40)
    small, large = _lint_seconds(500), _lint_seconds(2000)
    assert large / small < 7, f"500 items: {small:.3f} s, 2000 items: {large:.3f} s"
