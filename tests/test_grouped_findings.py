"""Findings with one cause in text output (issue 23): one missing namespace in one chart gave 1,142 lines.

In text, the findings of one rule with one cause outside the objects (a missing namespace, a node) and one
fix are one finding line plus one line that counts the others and names a few of their places; JSON, SARIF
and GitHub annotations keep one entry per location.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from nodename_lint.findings import Finding, RunResult
from nodename_lint.report.text import render

from .conftest import ROOT, run_cli

STATE = ROOT / "examples" / "cluster" / "state.yaml"
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{index}\n  namespace: monitoring\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{nodeName: {node}, containers: [{{name: a}}]}}\n"
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n"
    "      nodeName: kind-wroker\n      containers: [{name: a}]\n"
)
FILES = 10
PER_FILE = 4


def write_repository(root: Path) -> None:
    """40 ConfigMaps in a missing namespace over 10 files; three Pods and a Deployment on unknown nodes."""
    chart = root / "chart"
    chart.mkdir()
    for number in range(FILES):
        documents = [CONFIG_MAP.format(index=number * PER_FILE + item) for item in range(PER_FILE)]
        (chart / f"t{number:02}.yaml").write_text("---\n".join(documents))
    pods = [POD.format(name=name, node=node) for name, node in (("a", "kind-wroker"), ("b", "kind-wroker"))]
    (root / "debug.yaml").write_text("---\n".join([*pods, DEPLOYMENT, POD.format(name="c", node="ghost-1")]))


def lint(root: Path, *args: str) -> str:
    result = run_cli(".", "--cluster-state", str(STATE), "--select", "missing-namespace,unknown-node", *args, cwd=root)
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_one_cause_is_one_line_with_the_count_and_places_in_text(tmp_path: Path) -> None:
    write_repository(tmp_path)
    text = lint(tmp_path)
    lines = text.splitlines()
    findings = [line for line in lines if re.match(r"\S+:\d+:\d+: error\[", line)]
    assert [line.split(": ")[0] for line in findings] == [
        "chart/t00.yaml:5:3",  # the 40 ConfigMaps: one line
        "debug.yaml:4:8",  # Pods a and b on kind-wroker: one line
        "debug.yaml:17:7",  # the Deployment: the same node, another fix (spec.template.spec.nodeName)
        "debug.yaml:23:8",  # another node: a line of its own
    ]
    more = [line for line in lines if line.startswith("  and ")]
    assert more == [
        "  and 39 more with the same cause (namespace monitoring), 10 files in all: chart/t01.yaml:5:3, "
        "chart/t02.yaml:5:3, chart/t03.yaml:5:3 and 36 more",
        "  and 1 more with the same cause (node kind-wroker): debug.yaml:9:8",
    ]
    # the group's line comes right under its finding, before the fix
    header = lines.index(findings[0])
    assert lines[header + 1] == more[0] and lines[header + 2].startswith("  fix: create the namespace first")
    assert "Found 44 problems (44 errors, 0 warnings, 0 info) in 44 objects of 11 files." in lines

    statistics = lint(tmp_path, "--statistics", "-q").splitlines()
    assert [line.split()[:2] for line in statistics] == [["40", "missing-namespace"], ["4", "unknown-node"]]

    shown = lint(tmp_path, "--show-source", "-q").splitlines()
    start = shown.index(findings[0])
    assert shown[start + 1 : start + 4] == ["  5 |   namespace: monitoring", "    |   ^", more[0]]
    assert sum(line.startswith("  5 |") for line in shown) == 1, "the source of the first place only"


def test_machine_formats_keep_every_location(tmp_path: Path) -> None:
    write_repository(tmp_path)
    report = json.loads(lint(tmp_path, "--format", "json"))
    places = [(f["file"], f["line"]) for f in report["findings"] if f["rule"] == "missing-namespace"]
    assert len(places) == len(set(places)) == FILES * PER_FILE
    assert "cause" not in report["findings"][0], "the grouping key is no field of the JSON report"
    annotations = lint(tmp_path, "--format", "github").splitlines()
    assert len(annotations) == FILES * PER_FILE + 4
    lint(tmp_path, "--format", "text", "--output-sarif", str(tmp_path / "out.sarif"))
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    assert len(sarif["runs"][0]["results"]) == FILES * PER_FILE + 4


def test_groups_need_the_same_rule_severity_cause_and_fix() -> None:
    def finding(
        line: int, cause: str, *, rule: str = "unknown-node", severity: str = "error", fix: str = "f"
    ) -> Finding:
        return Finding(rule, severity, f"message {line}", "a.yaml", line, 1, None, fix, cause=cause)

    result = RunResult(
        findings=[
            finding(1, "node x"),
            finding(2, "node x"),
            finding(3, "node y"),
            finding(4, "node x", severity="warning"),
            finding(5, "node x", fix="other"),
            finding(6, "node x", rule="node-pressure"),
            finding(7, ""),
            finding(8, ""),
            finding(9, "node x"),
        ]
    )
    lines = render(result, quiet=True).splitlines()
    assert [line.split(": ")[0] for line in lines if not line.startswith("  ")] == [
        f"a.yaml:{line}:1" for line in (1, 3, 4, 5, 6, 7, 8)
    ]
    assert "  and 2 more with the same cause (node x): a.yaml:2:1, a.yaml:9:1" in lines


def test_a_cause_with_control_characters_stays_on_its_line() -> None:
    cause = "node evil\n::error file=x::owned\x1b[2J"
    findings = [Finding("unknown-node", "error", "m", f"{n}.yaml", 1, 1, None, "f", cause=cause) for n in "ab"]
    text = render(RunResult(findings=findings), quiet=True)
    assert "\n::" not in text and "\x1b" not in text and len(text.splitlines()) == 3
