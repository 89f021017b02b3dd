"""The bundled examples print exactly their expected output (what README and examples/README show)."""

from __future__ import annotations

import pytest

from .conftest import ROOT, run_cli

SCENARIOS = {
    "deploy": (["examples/deploy"], 1),
    "static-pods": (["examples/static-pods"], 1),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_example_output_is_as_expected(name):
    args, exit_code = SCENARIOS[name]
    result = run_cli(*args, cwd=ROOT)
    assert result.stderr == ""
    assert result.stdout == (ROOT / "examples" / "expected" / f"{name}.txt").read_text(encoding="utf-8")
    assert result.returncode == exit_code
