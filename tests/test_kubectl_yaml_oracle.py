"""Differential test: nodename-lint reads YAML exactly as kubectl does.

kubectl turns YAML into JSON with sigs.k8s.io/yaml (go-yaml v2 underneath). The test builds that
library into a small batch program (tests/oracle/yaml2json.go, GOPATH mode, Debian's
golang-k8s-sigs-yaml-dev) and compares, document by document, what kubectl would send with what
nodename-lint checks (`to_python` of the document root, i.e. `Manifest.data`); a document kubectl
cannot convert must be an error for nodename-lint as well.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodename_lint.documents import decode, iter_documents
from nodename_lint.registry import all_rules
from nodename_lint.yamlnodes import ConversionError, to_python

from .conftest import ROOT, require_tool, unavailable

ORACLE_SOURCE = ROOT / "tests" / "oracle" / "yaml2json.go"
GOPATHS = ("/usr/share/gocode",)
FAILED = object()  # the document cannot be converted


@pytest.fixture(scope="session")
def kubectl_json(tmp_path_factory):
    """A function: YAML documents -> what kubectl would send (JSON value) or FAILED, one Go run per batch."""
    go = require_tool("go", "apt-get install golang-go golang-k8s-sigs-yaml-dev")
    library = next((p for p in GOPATHS if (Path(p) / "src/sigs.k8s.io/yaml/yaml.go").is_file()), None)
    if library is None:
        unavailable("sigs.k8s.io/yaml is not installed (apt-get install golang-k8s-sigs-yaml-dev)")
    gopath = tmp_path_factory.mktemp("gopath")
    package = gopath / "src" / "yaml2json"
    package.mkdir(parents=True)
    shutil.copy(ORACLE_SOURCE, package / "main.go")
    binary = gopath / "yaml2json"
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": f"{gopath}:{library}",
        "GOFLAGS": "",
        "GOCACHE": os.environ.get("GOCACHE") or str(gopath / "cache"),
    }
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=package, env=env, check=True, timeout=300)

    def convert(documents: list[str]) -> list[object]:
        completed = subprocess.run(
            [str(binary)], input=json.dumps(documents).encode(), capture_output=True, check=True, timeout=120
        )
        return [FAILED if "error" in item else item["json"] for item in json.loads(completed.stdout)]

    return convert


def nodename_view(text: str) -> object:
    """What nodename-lint checks for one document's text: its plain value, or FAILED."""
    documents = list(iter_documents([text]))
    if not documents:
        return None
    assert len(documents) == 1, "the oracle is fed one document at a time"
    document = documents[0]
    if document.error is not None:
        return FAILED
    try:
        return to_python(document.root)
    except ConversionError:
        return FAILED


def differences(ours: object, theirs: object, path: str = "") -> list[str]:
    """Where two JSON values differ; tells true from 1 (Python's == does not), not 1 from 1.0 (JSON does not)."""
    if ours is FAILED or theirs is FAILED:
        return [] if ours is theirs else [f"{path or '.'}: kubectl {_show(theirs)}, nodename-lint {_show(ours)}"]
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if ours.keys() != theirs.keys():
            return [
                f"{path or '.'}: keys only kubectl has {sorted(theirs.keys() - ours.keys())}, "
                f"only nodename-lint has {sorted(ours.keys() - theirs.keys())}"
            ]
        return [line for key in ours for line in differences(ours[key], theirs[key], f"{path}.{key}")]
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [
            line
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            for line in differences(a, b, f"{path}[{i}]")
        ]
    numbers = (int, float)
    if (
        isinstance(ours, numbers)
        and isinstance(theirs, numbers)
        and not isinstance(ours, bool)
        and not isinstance(theirs, bool)
        and (ours == theirs or math.isclose(ours, theirs, rel_tol=1e-15))
    ):
        return []
    if type(ours) is type(theirs) and ours == theirs:
        return []
    return [f"{path or '.'}: kubectl {_show(theirs)}, nodename-lint {_show(ours)}"]


def _show(value: object) -> str:
    return "cannot convert" if value is FAILED else json.dumps(value)[:200]


def assert_agree(kubectl_json, named_documents: list[tuple[str, str]]) -> None:
    """Every (name, text) must read the same for kubectl and nodename-lint; lists every disagreement."""
    theirs = kubectl_json([text for _, text in named_documents])
    wrong = []
    for (name, text), kubectl_value in zip(named_documents, theirs, strict=True):
        found = differences(nodename_view(text), kubectl_value)
        if found:
            wrong.append(f"{name}:\n{text[:300]}\n  " + "\n  ".join(found[:8]))
    assert not wrong, f"{len(wrong)} of {len(named_documents)} documents disagree:\n" + "\n".join(wrong[:10])


def documents_of(path: Path) -> list[tuple[str, str]]:
    """(file:line, text) of each document of a file, as nodename-lint splits it."""
    try:
        text = decode(path.read_bytes())
    except UnicodeDecodeError:
        return []
    return [(f"{path}:{d.line_offset + 1}", d.text) for d in iter_documents([text])]


SCALARS = """
on: [on, On, ON, off, yes, no, y, n, Y, N, true, False, NULL, ~, null, '']
equals: =
dates: [2024-01-02, 2024-1-2, 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10, 2024-01-02x]
numbers: [0o17, 017, 08, 0x1F, 0b101, -0b101, +0x1f, 1_000, 1__0, 1_, 0.5, .5, 1e3, 1E-3, 1e400, -1e400,
  .5e400, 1e-400, 9223372036854775807, 9223372036854775808, 18446744073709551615, 18446744073709551616,
  +18446744073709551615, -9223372036854775809, 0x_1F, 0o, 0x, +, -, 1.2.3, 10 Gi, 1.5Gi, 100m, -1]
quoted: ["on", '017', "1e3"]
tagged: [!!str 123, !!str on, !!int "12", !!float 1, !!bool "yes", !!null "", !custom 12]
keys: {1: a, 0x10: b, 1.5: c, 1e3: d, 1.0e+6: e, 0.00001: f, 3.14159265358979: g, on: h, 017: i,
  2024-01-01: j, "=": k, 1e40: l}
merge: &base {a: 1, b: 2}
merged: {a: 0, <<: *base, b: 3}
merged_list: {<<: [{a: 1}, {a: 2, c: 3}], d: 4}
"""


def test_go_yaml_scalars_keys_tags_and_merges(kubectl_json):
    assert_agree(kubectl_json, [("scalars", SCALARS)])


UNCONVERTIBLE = [
    "~: a",
    "? \n: a",
    "a: .nan",
    "a: [-.inf]",
    "a: !!int abc",
    "a: !!bool maybe",
    "<<: 1",
    "<<: [a]",
    "? [a]\n: b",
    "{a: 1}: b",
    "a: {{ .Values.x }}",
    "a: &x [*x]",
    "a: 1\n  b: 2",
    'a: "unterminated',
    "a: b\n\tc: d",
    "k: !!float 12abc",
    "k: !!timestamp nope",
]


@pytest.mark.parametrize("document", UNCONVERTIBLE)
def test_documents_kubectl_cannot_convert_are_errors(kubectl_json, document):
    assert kubectl_json([document]) == [FAILED]
    assert nodename_view(document) is FAILED


def state_view(text: str) -> object:
    """What the cluster state reader (from_file._load_yaml, straight from libyaml's events) reads, or FAILED."""
    import yaml

    from nodename_lint.cluster.from_file import _BadYaml, _load_yaml

    try:
        documents = _load_yaml(text)
    except (_BadYaml, yaml.YAMLError, RecursionError):
        return FAILED
    return documents[0] if documents else None


@pytest.mark.parametrize("document", [SCALARS, *UNCONVERTIBLE])
def test_cluster_state_files_are_read_by_the_same_rules(kubectl_json, document):
    """One set of scalar, key and tag rules: a saved cluster state reads as a manifest does (issue 14)."""
    (theirs,) = kubectl_json([document])
    assert differences(state_view(document), theirs) == []


def test_the_rules_documented_examples_and_the_test_fixtures(kubectl_json):
    named = [
        (f"{rule.id}: {example.title}:{document.line_offset + 1}", document.text)
        for rule in all_rules().values()
        for example in rule.examples
        for document in iter_documents([example.manifest])
    ]  # an example may hold several documents
    for folder in ("examples", "tests/badinput", "fuzz/corpus"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and not path.is_symlink():
                named += documents_of(path)
    assert len(named) > 20
    assert_agree(kubectl_json, named)


def test_every_document_of_the_shared_corpus(kubectl_json, shared_dir):
    named = []
    for path in sorted((shared_dir / "corpus").rglob("*")):
        if path.is_file() and path.suffix in (".yaml", ".yml", ".json"):
            named += documents_of(path)
    assert len(named) > 100
    assert_agree(kubectl_json, named)


# --- generated YAML -----------------------------------------------------------------------------
# Plain tokens that YAML 1.1, YAML 1.2 and go-yaml read differently, and a few that cannot be read.
TRICKY = [
    "on",
    "off",
    "yes",
    "no",
    "y",
    "N",
    "True",
    "~",
    "null",
    "=",
    "2024-01-02",
    "2024-1-2T10:00:00Z",
    "0o17",
    "017",
    "08",
    "0x1F",
    "0b11",
    "1_000",
    "1e3",
    ".5",
    "-.inf",
    ".nan",
    "1e400",
    "100m",
    "1.5Gi",
    "-1",
    "1.5.3",
    "10 Gi",
    "{{ .Values.node }}",
    "x{{ y }}",
    "<<",
    "9223372036854775808",
    "'on'",
    '"017"',
]
# Keys whose JSON text is unique per Go value (1 and 1.0, or true and "true", would collide at random).
KEYS = ["a", "b", "name", "nodeName", "on", "no", "1", "0o17", "1.5", "2024-01-01", "=", "~", "'x'"]
scalars = st.sampled_from(TRICKY) | st.from_regex(r"[a-z][a-z0-9.\-]{0,8}", fullmatch=True)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.lists(st.tuples(st.sampled_from([*KEYS, "<<"]), inner), max_size=4),
    max_leaves=12,
)
MERGES = ["*base", "[*other, *base]", "{a: 9}", "*scalar"]


def render(value: object, indent: int, merge_choice: int) -> str:
    """Block-style YAML for a generated value (lists of pairs are mappings, with duplicates kept)."""
    pad = " " * indent
    if isinstance(value, str):
        return f" {value}\n"
    if not value:
        return " []\n" if merge_choice % 2 else " {}\n"
    lines = ["\n"]
    for item in value:
        if isinstance(item, tuple):
            key, inner = item
            body = (
                f" {MERGES[merge_choice % len(MERGES)]}\n"
                if key == "<<"
                else render(inner, indent + 2, merge_choice + 1)
            )
            lines.append(f"{pad}{key}:{body}")
        else:
            lines.append(f"{pad}-{render(item, indent + 2, merge_choice + 1)}")
    return "".join(lines)


def generated_document(value: object, merge_choice: int) -> str:
    head = "base: &base {a: 1, b: on, '0x1F': y}\nother: &other {b: off, c: 017}\nscalar: &scalar 12\n"
    body = render(value, 0, merge_choice)
    if body.startswith("\n") and not isinstance(value, str) and value and isinstance(value[0], tuple):
        return head + body.lstrip("\n")
    return head + "doc:" + body.replace("\n", "\n  ").rstrip(" ")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(values, st.integers(0, 7)), min_size=25, max_size=25))
def test_generated_yaml_reads_as_kubectl_reads_it(kubectl_json, batch):
    assert_agree(kubectl_json, [(f"generated {i}", generated_document(v, m)) for i, (v, m) in enumerate(batch)])
