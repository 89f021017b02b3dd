"""Broken and hostile input: a clear finding with file and line, the documented exit code, every
other file still checked, bounded time and memory, never a traceback and never a hang.

Small cases live in tests/badinput/ (linted together, in one run, with a cluster state so that
the cluster rules read the odd shapes too); big and filesystem cases are generated here.
"""

from __future__ import annotations

import itertools
import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodename_lint.engine import Linter
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context
from nodename_lint.sources import Source

from .conftest import ROOT, require_tool, run_cli

BADINPUT = ROOT / "tests" / "badinput"
STATE = ROOT / "examples" / "cluster" / "state.yaml"
MEMORY_LIMIT = 1 << 30  # address space for a run over hostile input

# file -> (rule, line, words of the message) that the run must report, and nothing else of that rule
EXPECTED_ERRORS: dict[str, list[tuple[str, int, str]]] = {
    "syntax-unclosed-flow.yaml": [("yaml-syntax", 4, "did not find expected ',' or '}'")],
    "syntax-bad-indent.yaml": [("yaml-syntax", 5, "mapping values are not allowed")],
    "syntax-unterminated-quote.yaml": [("yaml-syntax", 6, "found unexpected end of stream")],
    "syntax-tab-indent.yaml": [("yaml-syntax", 4, "found character that cannot start any token")],
    "syntax-undefined-alias.yaml": [("yaml-syntax", 4, "found undefined alias")],
    "syntax-stray-bracket.yaml": [("yaml-syntax", 3, "did not find expected node content")],
    "syntax-bad-escape.yaml": [("yaml-syntax", 4, "unknown escape character")],
    "syntax-second-document.yaml": [
        ("invalid-node-name", 6, "Bad_Node"),
        ("yaml-syntax", 12, "mapping values"),
        ("invalid-node-name", 19, "Also_Bad"),
    ],
    "template-unrendered.yaml": [("yaml-syntax", 4, "a mapping or a list")],
    "key-is-a-list.yaml": [("yaml-syntax", 6, "a mapping key is itself a mapping or a list")],
    "key-is-null.yaml": [("yaml-syntax", 6, "a mapping key is null")],
    "value-nan.yaml": [("yaml-syntax", 6, ".nan and .inf have no JSON form")],
    "tag-mismatch.yaml": [("yaml-syntax", 6, "'twelve' is not a valid !!int")],
    "alias-cycle.yaml": [("yaml-syntax", 5, "an alias refers to the collection that contains it")],
    "latin1.yaml": [("yaml-syntax", 4, "not UTF-8 or UTF-16 text (byte 0xe9 at offset 46)")],
    "binary.yaml": [("yaml-syntax", 1, "a NUL byte: UTF-16 without a byte-order mark, or a binary file")],
    "utf16-no-bom.yaml": [("yaml-syntax", 1, "a NUL byte: UTF-16 without a byte-order mark")],
    # read correctly, so the rules see their (invalid) node names at the right line
    "bom.yaml": [("invalid-node-name", 6, "Bom_Node")],
    "crlf.yaml": [("invalid-node-name", 6, "Crlf_Node")],
    "utf16-le.yaml": [("invalid-node-name", 6, "Utf16_Node")],
    "utf16-be.yaml": [("invalid-node-name", 6, "Utf16be_Node")],
    "duplicate-keys.yaml": [
        (
            "duplicate-key",
            10,
            "key 'nodeName' appears 2 times in this mapping: kubectl keeps only this last one (\"worker-2\")",
        )
    ],
    "wrong-types.yaml": [
        ("invalid-node-name", 5, "must be a string, not int 123"),
        ("invalid-node-name", 50, "must be a string, not list"),
    ],
}
CHECKED_RULES = ("yaml-syntax", "invalid-node-name", "duplicate-key")
# Read without any finding: nothing in them is a Kubernetes object, or nothing is wrong.
SILENT = [
    "empty.yaml",
    "whitespace-only.yaml",
    "comments-only.yaml",
    "empty-documents.yaml",
    "document-is-a-list.yaml",
    "document-is-a-scalar.yaml",
    "keys-not-strings.yaml",
]


def run_limited(
    *args: str, cwd: Path | str | None = None, timeout: float = 60
) -> tuple[subprocess.CompletedProcess, float]:
    """The real CLI with its address space capped at MEMORY_LIMIT: (result, seconds)."""

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "nodename_lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        preexec_fn=cap_memory,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return result, time.monotonic() - start


def findings_by_file(stdout: str) -> dict[str, list[dict]]:
    report = json.loads(stdout)
    grouped: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        grouped.setdefault(Path(finding["file"]).name, []).append(finding)
    return grouped


@pytest.fixture(scope="module")
def badinput_run():
    result, _ = run_limited(str(BADINPUT), "--format", "json", "--cluster-state", str(STATE), cwd=ROOT)
    return result


def test_the_corpus_run_ends_with_findings_and_no_traceback(badinput_run):
    assert badinput_run.returncode == 1, badinput_run.stderr
    assert "Traceback" not in badinput_run.stderr
    assert "internal error" not in badinput_run.stderr
    report = json.loads(badinput_run.stdout)
    assert report["summary"]["files"] == len([p for p in BADINPUT.iterdir() if p.suffix == ".yaml"])


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_each_bad_file_is_reported_at_its_line(badinput_run, name):
    found = findings_by_file(badinput_run.stdout).get(name, [])
    got = [(f["rule"], f["line"]) for f in found if f["rule"] in CHECKED_RULES]
    assert got == [(rule, line) for rule, line, _ in EXPECTED_ERRORS[name]]
    for finding, (_, _, words) in zip(
        [f for f in found if f["rule"] in CHECKED_RULES], EXPECTED_ERRORS[name], strict=True
    ):
        assert words in finding["message"]
        assert finding["fix"]
        assert finding["file"] == f"{BADINPUT}/{name}"


@pytest.mark.parametrize("name", SILENT)
def test_empty_and_non_object_documents_are_read_silently(badinput_run, name):
    assert name not in findings_by_file(badinput_run.stdout)


def test_unreadable_text_gets_an_encoding_fix_hint(badinput_run):
    for name in ("latin1.yaml", "binary.yaml"):
        (finding,) = findings_by_file(badinput_run.stdout)[name]
        assert finding["fix"].startswith("save the file as UTF-8")


def test_exit_codes_follow_the_contract(tmp_path):
    for name in SILENT:
        (tmp_path / name).write_bytes((BADINPUT / name).read_bytes())
    assert run_cli(str(tmp_path)).returncode == 0
    assert run_cli(str(BADINPUT / "syntax-tab-indent.yaml")).returncode == 1
    assert run_cli(str(BADINPUT / "duplicate-keys.yaml"), "--select", "duplicate-key").returncode == 0  # a warning
    assert (
        run_cli(str(BADINPUT / "duplicate-keys.yaml"), "--select", "duplicate-key", "--fail-on", "warning").returncode
        == 1
    )
    missing = run_cli(str(tmp_path / "missing.yaml"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr


def test_wrong_shapes_never_crash_a_rule():
    """containers as a mapping, resources as a list, quantities that do not parse: skipped, not crashed."""
    from nodename_lint.cluster.from_file import load_state_text

    catalogue = all_rules()
    cluster = load_state_text(STATE.read_text(), source=str(STATE))
    linter = Linter(dict.fromkeys(catalogue), Context(cluster=cluster))
    result = linter.lint_text((BADINPUT / "wrong-types.yaml").read_text(), display="wrong-types.yaml")
    assert result.internal_errors == []
    assert result.objects == 7  # the two documents whose apiVersion or kind is not a string are not objects


# --- alias bombs, depth, size -------------------------------------------------------------------
def billion_laughs(indent: str) -> str:
    lines = [f'{indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in itertools.pairwise("abcdefghi"):
        lines.append(f"{indent}{name}: &{name} [{','.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "where, manifest, line",
    ids=["configmap-data", "pod-spec", "metadata"],
    argvalues=[
        (
            "a ConfigMap's data",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n" + billion_laughs("  "),
            12,
        ),
        (
            "a Pod spec",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\nspec:\n  nodeName: kind-worker\n  x:\n"
            + billion_laughs("    "),
            14,
        ),
        (
            "metadata",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\n  labels:\n"
            + billion_laughs("    ")
            + "spec: {nodeName: kind-worker}\n",
            12,
        ),
    ],
)
def test_alias_bombs_end_fast_in_bounded_memory_at_their_line(tmp_path, where, manifest, line):
    (tmp_path / "bomb.yaml").write_text(manifest)
    (tmp_path / "z-good.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {nodeName: BAD}\n")
    result, seconds = run_limited(str(tmp_path), "--format", "json", timeout=30)
    assert result.returncode == 1, result.stderr
    assert seconds < 10
    grouped = findings_by_file(result.stdout)
    (bomb,) = grouped["bomb.yaml"]
    assert (bomb["rule"], bomb["line"]) == ("yaml-syntax", line), where
    assert "aliases expand this to more than 1,000,000 nodes from" in bomb["message"]
    assert "(an alias bomb; limit: --max-nodes)" in bomb["message"]
    assert any(f["rule"] == "invalid-node-name" for f in grouped["z-good.yaml"]), "the next file is still checked"


def test_a_large_document_without_aliases_is_too_large_not_an_alias_bomb(tmp_path):
    """A flow List of 1.2 million `{}`: its size is the problem, and --max-nodes lifts the limit."""
    (tmp_path / "big.yaml").write_text("apiVersion: v1\nkind: List\nitems: [" + "{}, " * 1_200_000 + "{}]\n")
    result, _ = run_limited(str(tmp_path), "--format", "json", timeout=120)
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["rule"] == "yaml-syntax" and finding["line"] == 3, finding
    assert "this collection is too large to check (1,200,002 nodes, limit 1,000,000: --max-nodes)" in finding["message"]
    assert "alias" not in finding["message"]
    lifted, _ = run_limited(str(tmp_path), "--format", "json", "--max-nodes", "3000000", timeout=120)
    assert lifted.returncode == 0 and json.loads(lifted.stdout)["findings"] == [], lifted.stderr


def test_the_document_size_limit_is_an_option(tmp_path):
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n  k: " + "x" * 70_000 + "\n"
    (tmp_path / "cm.yaml").write_text(config_map)
    assert json.loads(run_limited(str(tmp_path), "--format", "json")[0].stdout)["findings"] == []
    result, _ = run_limited(str(tmp_path), "--format", "json", "--max-document-size", "65536")
    (finding,) = json.loads(result.stdout)["findings"]
    assert "the document is too large (0.1 MiB, limit 0.1 MiB: --max-document-size)" in finding["message"]


def test_deep_flow_nesting_in_a_pod_spec_is_a_finding_not_a_recursion_error(tmp_path):
    nested = "[" * 10_000 + "]" * 10_000
    (tmp_path / "deep.yaml").write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: deep}}\nspec:\n  nodeName: kind-worker\n  containers: {nested}\n"
    )
    (tmp_path / "deeper.yaml").write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: deeper}}\nspec: {'[' * 10_001}\n"
    )
    result, seconds = run_limited(str(tmp_path), "--format", "json", timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    grouped = findings_by_file(result.stdout)
    (deep,) = [f for f in grouped["deep.yaml"] if f["rule"] == "yaml-syntax"]
    # libyaml from PyYAML >= 6.0.4 wheels stops at its own nesting limit first; older ones reach ours
    assert deep["line"] == 6 and any(
        reason in deep["message"] for reason in ("nested more than 400 levels deep", "exceeded maximum nesting depth")
    ), deep["message"]
    (deeper,) = grouped["deeper.yaml"]
    assert deeper["line"] == 4 and "nested more than 10,000 levels deep" in deeper["message"]
    assert seconds < 30


def test_deep_block_nesting_never_crashes_the_parser(tmp_path):
    # libyaml's composer recurses on the C stack: 30,000 block levels used to kill the process (SIGSEGV)
    (tmp_path / "deep.yaml").write_text("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  " + "- " * 30_000 + "x\n")
    result, seconds = run_limited(str(tmp_path / "deep.yaml"), "--format", "json")
    assert result.returncode == 1, (result.returncode, result.stderr[-500:])
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["line"] == 5 and "indented more than 5,000 columns" in finding["message"]
    assert seconds < 10


HUGE_BODIES = {
    "a 50 MB scalar": lambda: "data:\n  big: " + "x" * (50 << 20) + "\n",
    "a million keys": lambda: "data:\n" + "".join(f"  k{i}: v\n" for i in range(1_000_000)),
}


@pytest.mark.parametrize("what", HUGE_BODIES)
def test_huge_documents_are_refused_fast_in_bounded_memory(tmp_path, what):
    body = HUGE_BODIES[what]()
    (tmp_path / "huge.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\n" + body)
    (tmp_path / "small.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {nodeName: BAD}\n")
    result, seconds = run_limited(str(tmp_path), "--format", "json", timeout=60)
    assert result.returncode == 1, result.stderr
    grouped = findings_by_file(result.stdout)
    (huge,) = grouped["huge.yaml"]
    assert huge["line"] == 1 and "the API server refuses requests over 3 MiB" in huge["message"], what
    assert "too large" in huge["message"] and "limit 3.0 MiB: --max-document-size" in huge["message"]
    assert grouped["small.yaml"]
    assert seconds < 15


def test_a_big_document_under_the_limit_is_parsed(tmp_path):
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  annotations:\n    note: "
        + "x" * (2 << 20)
        + "\nspec:\n  nodeName: BAD\n"
    )
    (tmp_path / "big.yaml").write_text(text)
    result, _ = run_limited(str(tmp_path / "big.yaml"), "--format", "json", "--select", "invalid-node-name")
    assert [(f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]] == [("invalid-node-name", 8)]


# Files kept beside manifests in real repositories that are no Kubernetes objects (issue 23's sweep):
# each got a yaml-syntax error claiming the API server would refuse it.
NOT_MANIFESTS = {
    "tsconfig.json": '{\n  // compiler options\n  "compilerOptions": {"target": "es2020", /* new */ "strict": 1}\n}\n',
    "events.json": '{"level": "info", "msg": "started"}\n{"level": "warn", "msg": "slow"}\n',  # JSON Lines
    "dashboard.json": '// Grafana dashboard, by hand\n{\n  "title": "Nodes",\n  "panels": [{"type": "graph"}]\n}\n',
    "kubelet-config.json": (  # kubespray's Jinja templates
        '{\n{% if webhook %}\n  "authentication": {"webhook": {"enabled": true}},\n{% endif %}\n'
        '  "clusterDomain": "{{ dns_domain }}"\n}\n'
    ),
    "cert.yml": (  # `openssl x509 -text` saved as .yml
        "Certificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number:\n            0a:1b:2c\n"
        "    Signature Algorithm: sha256WithRSAEncryption\n        Issuer: CN = example\n        Validity\n"
        "            Not Before: Jan  1 00:00:00 2024 GMT\n"
    ),
    "too-big.json": '{"samples": [' + ", ".join(["1.5"] * 900_000) + "]}\n",  # past --max-document-size
    "bastion.json": (  # kubespray's Azure Resource Manager templates (Jinja): an apiVersion, not a Kubernetes one
        '{\n  "resources": [\n    {% if use_bastion %}\n    {\n      "apiVersion": "{{apiVersion}}",\n'
        '      "type": "Microsoft.Network/publicIPAddresses"\n    },\n    {% endif %}\n'
        '    {"apiVersion": "2015-06-15", "type": "Microsoft.Compute/virtualMachines"}\n  ]\n}\n'
    ),
}
GOOD_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {nodeName: ok}\n"
BROKEN_MANIFESTS = {  # they name an apiVersion or kind: still yaml-syntax, at the line
    "pod.yaml": ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  nodeName: [unclosed\n", 7),
    "pod.json": ('{"apiVersion": "v1", "kind": "Pod",\n  // a comment\n  "spec": {}}\n', 3),
    "kind-only.yaml": ("kind: Deployment\nmetadata:\n  name: web\n   bad: indent\n", 4),
    "api-version-only.yaml": ("apiVersion: apps/v1\nmetadata:\n  name: web\n   bad: indent\n", 4),
    # one document is an object, another one is broken and names nothing: a manifest file with a broken part
    "second.yaml": (GOOD_POD + "---\nfoo: [1\n", 7),
    "first.yaml": ("foo: [1\n---\n" + GOOD_POD, 2),
    "unrendered.yaml": ("apiVersion: v1\nkind: Secret\ndata:\n  config: {{config_data}}\n", 4),
}


def test_files_that_are_not_manifests_are_skipped_with_a_note(tmp_path: Path) -> None:
    """Issue 23: a file that does not parse and names no kind or Kubernetes apiVersion is not a manifest: a note
    says it was skipped, and no yaml-syntax error claims the API server would refuse it. A broken file that names
    either (or holds an object) keeps its yaml-syntax finding."""
    for name, text in NOT_MANIFESTS.items():
        (tmp_path / name).write_text(text)
    for name, (text, _) in BROKEN_MANIFESTS.items():
        (tmp_path / name).write_text(text)
    result = run_cli(str(tmp_path), "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    syntax = sorted((Path(f["file"]).name, f["line"]) for f in report["findings"] if f["rule"] == "yaml-syntax")
    assert syntax == sorted((name, line) for name, (_, line) in BROKEN_MANIFESTS.items())
    skipped = {
        Path(note.split(":")[0]).name: note
        for note in report["summary"]["notes"]
        if "skipped a file that is not a Kubernetes manifest" in note
    }
    assert sorted(skipped) == sorted(NOT_MANIFESTS)
    assert skipped["events.json"] == (
        f"{tmp_path / 'events.json'}:2:1: skipped a file that is not a Kubernetes manifest: it does not parse "
        "(did not find expected <document start>) and names no kind or Kubernetes apiVersion"
    )
    assert "too large" in skipped["too-big.json"]
    # the same from stdin, and as text: a note, exit 0
    piped = run_cli("-", stdin=NOT_MANIFESTS["tsconfig.json"])
    assert piped.returncode == 0 and "yaml-syntax" not in piped.stdout
    assert "note: <stdin>:3:" in piped.stdout and "names no kind or Kubernetes apiVersion" in piped.stdout


# --- paths --------------------------------------------------------------------------------------
GOOD = "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {nodeName: BAD}\n"


def test_odd_folder_entries_are_skipped_with_a_note_and_never_opened(tmp_path):
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "good.yaml").write_text(GOOD)
    (folder / "dangling.yaml").symlink_to(folder / "nowhere.yaml")
    (folder / "loop-a.yaml").symlink_to(folder / "loop-b.yaml")
    (folder / "loop-b.yaml").symlink_to(folder / "loop-a.yaml")
    (folder / "parent").symlink_to(folder)  # a folder cycle: entered once
    os.mkfifo(folder / "fifo.yaml")  # nobody ever writes to it: opening it for reading would hang
    (folder / "zero.yaml").symlink_to("/dev/zero")  # reading it would never end
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "socket.yaml"))
    (folder / ("n" * 250 + ".yaml")).write_text(GOOD)  # the longest name a filesystem allows
    (Path(os.fsdecode(bytes(folder) + b"/caf\xe9.yaml"))).write_text(GOOD)  # a Latin-1 name, not UTF-8
    try:
        result, seconds = run_limited(str(folder), "--format", "json", timeout=30)
    finally:
        server.close()
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)  # valid JSON although a file name is not UTF-8
    files = sorted({Path(f["file"]).name for f in report["findings"]})
    assert files == ["caf\\xe9.yaml", "good.yaml", "n" * 250 + ".yaml"]
    assert report["summary"]["files"] == 3
    for name, reason in [
        ("dangling.yaml", "No such file or directory"),
        ("loop-a.yaml", "Too many levels of symbolic links"),
        ("fifo.yaml", "not a regular file (a FIFO), not opened"),
        ("zero.yaml", "a symlink to /dev/zero, outside the folders given; not followed"),
        ("socket.yaml", "not a regular file (a socket), not opened"),
    ]:
        assert f"{folder / name}: skipped: {reason}" in result.stderr
    assert seconds < 20


def test_odd_files_named_explicitly_are_findings_or_read_safely(tmp_path):
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "socket.yaml"))
    (tmp_path / "good.yaml").write_text(GOOD)
    try:
        result, _ = run_limited(
            "fifo.yaml",
            "dangling.yaml",
            "socket.yaml",
            "/dev/zero",
            "good.yaml",
            "--format",
            "json",
            cwd=tmp_path,
            timeout=30,
        )
    finally:
        server.close()
    assert result.returncode == 1, result.stderr
    messages = {f["file"]: f["message"] for f in json.loads(result.stdout)["findings"] if f["rule"] == "yaml-syntax"}
    assert "fifo.yaml" not in messages  # a FIFO without a writer reads as empty, without blocking
    assert "No such file or directory" in messages["dangling.yaml"]
    assert "No such device or address" in messages["socket.yaml"]  # even root cannot open a socket
    assert "not a regular file (a character device), not read" in messages["/dev/zero"]
    assert any(f["file"] == "good.yaml" for f in json.loads(result.stdout)["findings"])


def test_a_pipe_named_on_purpose_is_read(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    result = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m nodename_lint <(cat good.yaml) --format json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [f["rule"] for f in json.loads(result.stdout)["findings"]] == ["invalid-node-name", "nodename-on-pod"]


def test_unreadable_file(tmp_path):
    """A file the run may not read is a finding at its line 1, and the other files are still linted.

    Root reads any file through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so as root (CI) the CLI runs
    with those two capabilities dropped (setpriv, util-linux): it is still uid 0, and the file's owner
    bits (none) apply to it as to anyone.
    """
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "secret.yaml").write_text(GOOD)
    (tmp_path / "secret.yaml").chmod(0)
    prefix: list[str] = []
    if os.geteuid() == 0:
        prefix = [
            require_tool("setpriv", "apt-get install util-linux"),
            "--bounding-set=-dac_override,-dac_read_search",
            "--",
        ]
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "nodename_lint", "secret.yaml", "good.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 1, result.stderr
    assert "secret.yaml:1:1: error[yaml-syntax]" in result.stdout and "Permission denied" in result.stdout
    assert "good.yaml:" in result.stdout, "the readable file is still linted"


def test_a_file_that_disappears_during_the_run(tmp_path):
    names = ["a.yaml", "gone.yaml", "c.yaml"]
    for name in names:
        (tmp_path / name).write_text(GOOD)
    sources = [Source(str(tmp_path / name)) for name in names]  # discovered ...
    (tmp_path / "gone.yaml").unlink()  # ... then deleted before it is read
    catalogue = all_rules()
    linter = Linter({"yaml-syntax": "error", "invalid-node-name": "error"}, Context())
    assert set(catalogue) >= {"yaml-syntax", "invalid-node-name"}
    result = linter.lint_sources(sources)
    found = [(Path(f.file).name, f.rule) for f in result.findings]
    assert found == [("a.yaml", "invalid-node-name"), ("c.yaml", "invalid-node-name"), ("gone.yaml", "yaml-syntax")]
    (gone,) = [f for f in result.findings if f.rule == "yaml-syntax"]
    assert "cannot read the file: No such file or directory" in gone.message


def test_a_path_longer_than_path_max(tmp_path):
    (tmp_path / "good.yaml").write_text(GOOD)
    deep = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(20):  # 20 x 251 characters: beyond PATH_MAX (4096)
            os.mkdir("d" * 250, dir_fd=deep)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=deep)
            os.close(deep)
            deep = inner
        with open(os.open("deep.yaml", os.O_WRONLY | os.O_CREAT, dir_fd=deep), "w") as handle:
            handle.write(GOOD)
    finally:
        os.close(deep)
    result, _ = run_limited(".", "--format", "json", cwd=tmp_path, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "File name too long" in result.stderr  # the folder that cannot be listed is named
    assert any(Path(f["file"]).name == "good.yaml" for f in json.loads(result.stdout)["findings"])


def test_a_missing_path_is_named_on_one_line(tmp_path: Path) -> None:
    result = run_cli("gone\n::error::x.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "nodename-lint: gone\\x0a::error::x.yaml: no such file or folder\n"
