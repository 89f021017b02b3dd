"""Cluster state files mutated at random never crash a run: exit 0, 1 or 2, and no traceback or internal error.

A state file is as untrusted as a manifest (a pull request can change the one CI lints against), and three
readers take it: the snapshot's, the kubectl JSON List's fast path (which keeps most of each Pod raw and
reads it when a rule asks) and the generic reader; `audit` has its own. Each case takes the example cluster
in one of three forms (YAML, a JSON List, a snapshot) and changes one to three values, characters or lines:
a value swapped for another JSON type, a number msgspec refuses (`1e999`), a lone surrogate's escape,
nesting, bytes that are not UTF-8, a line cut or doubled, the file cut short. Then it lints manifests
against the file, audits it or writes its snapshot. The first sweeps found six crashes: a report that could
not be written (a lone surrogate), and SARIF fingerprints of one; `1e999` in a Pod's resources read late
and a taint keyed by a list (internal errors of the rules); a ReplicaSet whose namespace was a list, and an
item whose kind was a mapping in audit (unhashable, both).

`NODENAME_STATE_MUTATIONS` sets the number of cases (default 1,000), `NODENAME_STATE_MUTATIONS_SEED` the seed.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nodename_lint.cli import main
from nodename_lint.commands import options

from .conftest import ROOT

CASES = int(os.environ.get("NODENAME_STATE_MUTATIONS", "1000"))
SEED = int(os.environ.get("NODENAME_STATE_MUTATIONS_SEED", "0") or 0) or random.SystemRandom().randrange(1, 2**32)
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null')
_REPLACEMENTS = (
    "null", "0", "-1", "1e999", '"x"', "[]", "{}", "true", '"\\u0000"', '"\\ud800"', "[" * 300 + "]" * 300,
    "123456789012345678901234567890", '"\u202e"', "1.5", '""', "[null]", '{"a":1}', '"kind-worker"',
    '[["0.0.0.0","TCP",80,"a/b"]]', '"\\n"', '{"cpu":"1e400"}', '"999999999999999999999Ki"',
)  # fmt: skip
_NOT_UTF8 = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc")


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example cluster, with a Pod holding a host port, as a YAML List, a kubectl JSON List and a snapshot."""
    folder = tmp_path_factory.mktemp("states")
    text = (ROOT / "examples" / "cluster" / "state.yaml").read_text(encoding="utf-8")
    items = [item for document in yaml.safe_load_all(text) if document for item in document.get("items", [document])]
    holder = next(item for item in items if item["kind"] == "Pod" and item["spec"].get("nodeName") == "kind-worker")
    holder = json.loads(json.dumps(holder))
    holder["metadata"]["name"] = "port-holder"
    holder["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    dump = folder / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*items, holder]}, indent=4))
    snapshot = folder / "snapshot.json"
    result = CliRunner().invoke(main, ["snapshot", "--cluster-state", str(dump), "-o", str(snapshot)])
    assert result.exit_code == 0, result.output
    return {"yaml": text, "json": dump.read_text(), "snapshot": snapshot.read_text()}


def _fixed_tail(text: str) -> str:
    """A snapshot whose `tail` again points at its last two members, so that its fast path reads it."""
    data = text.encode("utf-8", "surrogatepass")
    pods, running = data.rfind(b',\n"pods":'), data.rfind(b',\n"running":')
    if pods < 0 or running < 0:
        return text
    return re.sub(r'"tail":\[\d+,\d+\]', f'"tail":[{len(data) - pods - 1},{len(data) - running - 1}]', text, count=1)


def _mutated(text: str, rng: random.Random) -> bytes:
    lines = text.split("\n")
    for _ in range(rng.choice((1, 1, 2, 3))):
        at = rng.randrange(len(lines))
        line, roll = lines[at], rng.random()
        if roll < 0.6 and (tokens := list(_TOKEN.finditer(line))):
            token = rng.choice(tokens)
            line = line[: token.start()] + rng.choice(_REPLACEMENTS) + line[token.end() :]
        elif roll < 0.75 and line:
            cut = rng.randrange(len(line))
            line = line[:cut] + line[cut + 1 :]
        elif roll < 0.85:
            lines.insert(at, line)
        elif roll < 0.95 and line:
            cut = rng.randrange(len(line))
            line = line[:cut] + rng.choice('{}[],:"\\') + line[cut:]
        else:
            return text[: rng.randrange(len(text))].encode("utf-8", "surrogatepass")
        lines[at] = line
    changed = "\n".join(lines)
    if rng.random() < 0.8:
        changed = _fixed_tail(changed)
    data = changed.encode("utf-8", "surrogatepass")
    if rng.random() < 0.15 and (quotes := [found.start() for found in re.finditer(rb'"[a-z]', data)]):
        at = rng.choice(quotes) + 1
        data = data[:at] + rng.choice(_NOT_UTF8) + data[at:]
    return data


def test_mutated_state_files_never_crash_a_run(seeds: dict[str, str], tmp_path: Path) -> None:
    rng = random.Random(SEED)
    manifests = ROOT / "examples" / "cluster" / "manifests"
    pinned = tmp_path / "manifests"
    pinned.mkdir()
    for path in manifests.glob("*.yaml"):
        pinned.joinpath(path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    pinned.joinpath("port.yaml").write_text(  # critical: preemption reads the node's Pods, ports their specs
        "apiVersion: v1\nkind: Pod\nmetadata: {name: wants-port}\nspec:\n  nodeName: kind-worker\n"
        "  priorityClassName: system-node-critical\n  containers:\n    - name: c\n      image: i\n"
        "      ports: [{containerPort: 8080, hostPort: 8080}]\n      resources: {requests: {cpu: '3'}}\n"
    )
    codes: dict[int, int] = {}
    for case in range(CASES):
        form = rng.choice(sorted(seeds))
        state = tmp_path / f"state.{'yaml' if form == 'yaml' else 'json'}"
        state.write_bytes(_mutated(seeds[form], rng))
        command = rng.choice(("lint", "lint", "lint", "lint", "audit", "snapshot"))
        output_format = rng.choice(("json", "text", "sarif"))
        args = {
            "lint": [str(pinned), "--format", output_format],
            "audit": ["audit", "--format", output_format],
            "snapshot": ["snapshot"],
        }[command]
        result = CliRunner().invoke(main, [*args, "--cluster-state", str(state), "-o", str(tmp_path / "r")])
        where = (
            f"case {case} of seed {SEED} ({command}, {form}, {output_format}; NODENAME_STATE_MUTATIONS_SEED replays)"
        )
        assert result.exception is None or isinstance(result.exception, SystemExit), (where, result.exc_info)
        assert result.exit_code in (0, 1, 2), (where, result.output[-2000:])
        assert "Traceback" not in result.output and "internal error" not in result.output, (where, result.output)
        codes[result.exit_code] = codes.get(result.exit_code, 0) + 1
        del options._KEPT_UNTIL_EXIT[:]  # a command keeps its state to the process's end: this process runs many
    assert codes.get(1, 0) > CASES // 10 and codes.get(2, 0) > CASES // 10, codes  # both kinds of case were made
