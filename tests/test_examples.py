"""The bundled examples fail the run as documented; what they print (examples/expected/) is kept
current by tests/test_generated.py."""

from __future__ import annotations

import pytest

from .conftest import ROOT, run_cli

SCENARIOS = {
    "deploy": (["examples/deploy"], 1),
    "static-pods": (["examples/static-pods"], 1),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_example_exit_code_and_no_stderr(name):
    args, exit_code = SCENARIOS[name]
    result = run_cli(*args, cwd=ROOT)
    assert result.stderr == ""
    assert result.returncode == exit_code
