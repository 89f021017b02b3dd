"""ESC, BEL and bidi overrides from manifests, Helm and the API server never reach a report raw (issue 21).

A terminal obeys ESC sequences, `\\a` rings, U+202E shows text in another order than it is stored
("Trojan Source"), and GitHub shows annotations and code-scanning alerts as they are written. Each
test plants such values where a pull request or an API server can put them (manifest values and
names, a Helm `fail` message, object ids in a cluster state) and checks every format: text,
github, markdown and SARIF show them as visible escapes; JSON holds the exact values, written with
JSON escapes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from nodename_lint.render.helm import write_chart

from .conftest import ROOT, run_cli
from .test_sarif import assert_valid_sarif

# Everything a report must not hold raw: C0 controls but the line break, DEL, C1, bidi, separators.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]")
HOSTILE = "\x1b[2J\x07\u202eevil"  # clear the screen, ring, show the rest right to left
SHOWN = "\\x1b[2J\\x07\\u202eevil"  # how the text formats write it
FORMATS = ("text", "github", "markdown", "json", "sarif")


def _yaml_escaped(value: str) -> str:
    """VALUE as a YAML double-quoted scalar (YAML files cannot hold ESC or BEL raw)."""
    return '"' + value.replace("\x1b", "\\e").replace("\x07", "\\a") + '"'


@pytest.fixture
def hostile_repository(tmp_path: Path) -> Path:
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: {_yaml_escaped('web' + HOSTILE)}\n"
        "spec:\n"
        f"  nodeName: {_yaml_escaped('kind-worker' + HOSTILE)}\n"
        "  containers: [{name: a, image: nginx}]\n"
    )
    (tmp_path / "pod.yaml").write_text(pod, encoding="utf-8")
    # Helm's own message quotes the template's text: a Go string with the same characters
    write_chart(
        str(tmp_path / "chart"),
        {"templates/pod.yaml": '{{ fail "boom \\x1b[2J\\a\\u202eevil" }}\n'},
        name="chart",
    )
    return tmp_path


def _report(output_format: str, *args: str, cwd: Path) -> str:
    done = run_cli(*args, "--format", output_format, cwd=cwd)
    assert done.returncode == 1, done.stderr
    assert not UNSAFE.search(done.stderr), done.stderr
    return done.stdout


@pytest.mark.parametrize("output_format", FORMATS)
def test_manifest_values_and_helm_messages_are_escaped_in_every_format(
    hostile_repository: Path, output_format: str
) -> None:
    output = _report(output_format, "--offline", "pod.yaml", "chart", cwd=hostile_repository)
    assert not UNSAFE.search(output), [match.group() for match in UNSAFE.finditer(output)][:5]
    if output_format == "json":
        report = json.loads(output)
        messages = [finding["message"] for finding in report["findings"]]
        # the exact values, as JSON escapes: a program reading the report gets what the manifest says
        assert any("kind-worker" + HOSTILE in message for message in messages), messages
        assert any("boom " + HOSTILE in message for message in messages), messages
        assert "\\u001b[2J\\u0007\\u202eevil" in output
        return
    if output_format == "sarif":
        log = assert_valid_sarif(output)
        texts = [result["message"]["text"] for result in log["runs"][0]["results"]]
        names = {
            logical["name"]
            for result in log["runs"][0]["results"]
            for logical in result["locations"][0].get("logicalLocations", [])
        }
        assert any("kind-worker" + SHOWN in text for text in texts), texts
        assert any("boom " + SHOWN in text for text in texts), texts
        assert "web" + SHOWN in names, names
        return
    shown = SHOWN.replace("\\", "\\\\").replace("[", "\\[") if output_format == "markdown" else SHOWN
    assert f"kind-worker{shown}" in output, output
    assert f"boom {shown}" in output, output


@pytest.mark.parametrize("output_format", FORMATS)
def test_audit_escapes_object_ids_from_the_api_server(tmp_path: Path, output_format: str) -> None:
    """`audit`'s text started each finding with the object id exactly as the cluster state wrote it."""
    state = (ROOT / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8")
    assert state.count("    name: badsel\n") == 1
    hostile = tmp_path / "state.yaml"
    hostile.write_text(state.replace("    name: badsel\n", f"    name: {_yaml_escaped('badsel' + HOSTILE)}\n"))
    output = _report(output_format, "audit", "--cluster-state", str(hostile), cwd=tmp_path)
    assert not UNSAFE.search(output), [match.group() for match in UNSAFE.finditer(output)][:5]
    if output_format == "text":
        assert f"\nPod/default/badsel{SHOWN}: error[node-selector-mismatch] Pod badsel{SHOWN} " in output
    elif output_format == "github":
        assert f"::error title=nodename-lint node-selector-mismatch::Pod/default/badsel{SHOWN}: " in output
    elif output_format == "json":
        [finding] = [f for f in json.loads(output)["findings"] if f["rule"] == "node-selector-mismatch"]
        assert finding["object"]["name"] == "badsel" + HOSTILE
    elif output_format == "sarif":
        log = assert_valid_sarif(output)
        names = {r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in log["runs"][0]["results"]}
        assert f"Pod/default/badsel{SHOWN}" in names, names
    else:
        assert f"<code>Pod/default/badsel{SHOWN}</code>" in output, output


def test_a_diff_shows_bidi_characters_of_the_file_as_escapes(tmp_path: Path) -> None:
    """YAML allows U+202E, U+2066 and U+2028 raw (in a comment, say): --diff printed them as they are."""
    golden = ROOT / "tests" / "fix" / "golden" / "template-comments.before.yaml"
    text = golden.read_text(encoding="utf-8")
    assert "# the only node with the SSD" in text
    (tmp_path / "manifest.yaml").write_text(text.replace("only node", "only\u202e node\u2066"), encoding="utf-8")
    done = run_cli("--diff", "manifest.yaml", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert not UNSAFE.search(done.stdout + done.stderr)
    assert "-      nodeName: worker-2   # the only\\u202e node\\u2066 with the SSD\n" in done.stdout


def test_snapshots_hold_no_raw_bidi_character_of_the_api_server(tmp_path: Path) -> None:
    state = (ROOT / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8")
    hostile = tmp_path / "state.yaml"
    hostile.write_text(state.replace("    name: badsel\n", '    name: "badsel\\u202e\\u2028x"\n'), encoding="utf-8")
    done = run_cli("snapshot", "--cluster-state", str(hostile))
    assert done.returncode == 0, done.stderr
    assert not UNSAFE.search(done.stdout) and "badsel\\u202e\\u2028x" in done.stdout
    (tmp_path / "snapshot.json").write_text(done.stdout, encoding="utf-8")
    from nodename_lint.cluster.from_file import load_state_file

    pods = load_state_file(str(tmp_path / "snapshot.json")).pods
    assert pods is not None and "badsel\u202e\u2028x" in {pod.name for pod in pods}


def _state_with_a_lone_surrogate(tmp_path: Path) -> Path:
    """The example state as a kubectl JSON List whose Pod badsel is named "badsel\\ud800": JSON can escape a
    lone surrogate (YAML cannot), and the generic reader's json.loads reads it, as no UTF-8 encoder writes it."""
    state = (ROOT / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8")
    items = [item for document in yaml.safe_load_all(state) if document for item in document.get("items", [document])]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    assert text.count('"name": "badsel"') == 1
    path = tmp_path / "state.json"
    path.write_text(text.replace('"name": "badsel"', '"name": "badsel\\ud800"'), encoding="utf-8")
    return path


@pytest.mark.parametrize("output_format", FORMATS)
def test_a_lone_surrogate_from_the_cluster_state_is_escaped_in_every_format(tmp_path: Path, output_format: str) -> None:
    """A report holding a lone surrogate could not be written (UnicodeEncodeError: a traceback, found by a
    mutation fuzzer of state files): it is shown as the escape \\ud800, and JSON holds the exact value."""
    state = _state_with_a_lone_surrogate(tmp_path)
    output = _report(output_format, "audit", "--cluster-state", str(state), cwd=tmp_path)
    output.encode("utf-8")  # what was written is UTF-8
    if output_format == "json":
        names = {f["object"]["name"] for f in json.loads(output)["findings"] if f["rule"] == "node-selector-mismatch"}
        assert names == {"badsel\ud800"}
    elif output_format == "sarif":
        log = assert_valid_sarif(output)
        names = {r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in log["runs"][0]["results"]}
        assert "Pod/default/badsel\\ud800" in names, names
    else:
        assert "badsel\\ud800" in output, output


def test_a_snapshot_of_a_lone_surrogate_is_refused_with_a_message(tmp_path: Path) -> None:
    """The snapshot's reader refuses a lone surrogate, so the writer does not write one: exit 2, not a traceback."""
    done = run_cli("snapshot", "--cluster-state", str(_state_with_a_lone_surrogate(tmp_path)), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "holds text that is not Unicode (a lone surrogate" in done.stderr, done.stderr
