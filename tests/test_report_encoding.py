"""Big JSON and SARIF reports are written by msgspec, small ones by json: the text must be the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodename_lint.report.encoding import _MSGSPEC_FROM_FINDINGS, indented_json

from .conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cluster"


@pytest.mark.parametrize("report_format", ["json", "sarif"])
def test_both_encoders_write_the_example_report_alike(report_format: str) -> None:
    result = run_cli(
        str(EXAMPLE / "manifests"), "--cluster-state", str(EXAMPLE / "state.yaml"), "--format", report_format
    )
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert indented_json(document, 0) == indented_json(document, _MSGSPEC_FROM_FINDINGS) == result.stdout


def test_both_encoders_escape_alike() -> None:
    """What a manifest can put in a message: non-ASCII, quotes, control characters, HTML, line separators."""
    document = {
        "message": 'é ☃ "q" \\ \x00\x1b[31m\x7f \u2028\u2029 <b>&amp;</b> \U0001f600',
        "nested": [{}, [], [[]], {"k": [1, -2, True, None]}],
        "object": Path("a/b"),  # default=str
    }
    assert indented_json(document, 0) == indented_json(document, _MSGSPEC_FROM_FINDINGS)


def test_a_report_over_the_threshold_reads_the_same(tmp_path: Path) -> None:
    """Enough findings for msgspec to write it: the same text as json would, every finding counted."""
    folder = tmp_path / "pods"
    folder.mkdir()
    count = _MSGSPEC_FROM_FINDINGS + 5
    (folder / "pods.yaml").write_text(
        "".join(
            f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  nodeName: w{i}\n"
            "  containers: [{name: c, image: busybox}]\n"
            for i in range(count)
        )
    )
    result = run_cli(str(folder), "--format", "json")
    report = json.loads(result.stdout)
    assert report["summary"]["findings"] == len(report["findings"]) >= count
    assert result.stdout == indented_json(report, 0)
