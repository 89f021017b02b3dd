"""Startup stays lean: the heavy libraries load only for the features that need them.

Each case runs the real command line in a fresh interpreter and reads sys.modules at exit, so an
import added anywhere on the path of `--version` or an offline lint makes this fail.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("kubernetes", "jsonschema", "ruamel", "ruamel.yaml", "urllib3", "requests", "pygls", "lsprotocol", "cattrs")
# Runs the CLI as `python -m nodename_lint ARGS` would, then reports which heavy modules got loaded.
PROBE = """
import json, runpy, sys
sys.argv = ["nodename-lint", *json.loads(sys.argv[1])]
try:
    runpy.run_module("nodename_lint", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
heavy = {heavy}
sys.stderr.write("\\nLOADED=" + json.dumps(sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy)))
"""


def loaded_modules(args: list[str], cwd: Path) -> tuple[int, list[str], str]:
    code = PROBE.format(heavy=repr(set(HEAVY)))
    completed = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    stderr, _, loaded = completed.stderr.rpartition("\nLOADED=")
    assert loaded, completed.stderr
    return completed.returncode, json.loads(loaded), completed.stdout + stderr


MANIFEST = """\
apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  nodeName: worker-1
  containers: [{name: shell, image: busybox}]
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["pod.yaml"],
        ["--format", "json", "pod.yaml"],
        ["--jobs", "2", "pod.yaml", "pod-copy.yaml"],
        ["rules"],
    ],
    ids=["version", "lint", "lint-json", "lint-pool", "rules"],
)
def test_offline_runs_never_import_heavy_libraries(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "pod.yaml").write_text(MANIFEST)
    (tmp_path / "pod-copy.yaml").write_text(MANIFEST)
    _, loaded, output = loaded_modules(args, tmp_path)
    assert loaded == [], f"{args} imported {loaded}"
    assert output.strip(), "the command produced no output: the probe did not run it"


def test_the_probe_sees_a_config_file_load_jsonschema(tmp_path: Path) -> None:
    """The check can fail: a config file is validated with jsonschema, and the probe notices."""
    (tmp_path / "pod.yaml").write_text(MANIFEST)
    (tmp_path / ".nodename-lint.yaml").write_text("fail-on: warning\n")
    _, loaded, output = loaded_modules(["pod.yaml"], tmp_path)
    assert "jsonschema" in loaded, output


def test_one_install_requires_every_library_of_the_headline_uses() -> None:
    """`pip install nodename-lint` gives live clusters, --fix and SARIF; extras are only for test tooling."""
    from importlib.metadata import metadata, requires

    from tests.conftest import ROOT

    specs = requires("nodename-lint") or []
    required = {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0].lower() for spec in specs if "extra ==" not in spec}
    assert {"click", "pyyaml", "jsonschema", "ruamel.yaml", "kubernetes"} <= required
    # helm: the optional 75 MB native Helm engine (issue 16); charts without it are skipped with a note
    assert metadata("nodename-lint").get_all("Provides-Extra") == ["helm", "test"]
    sources = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "nodename_lint").rglob("*.py"))
    assert "nodename-lint[" not in sources, "no message may ask for an extra"
