"""Startup stays lean: the heavy libraries load only for the features that need them.

Each case runs the real command line in a fresh interpreter and reads sys.modules at exit, so an
import added anywhere on the path of `--version` or an offline lint makes this fail.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.apiserver import TOKEN, ApiServer, cluster_entry, write_kubeconfig

HEAVY = (
    "kubernetes",
    "jsonschema",
    "ruamel",
    "ruamel.yaml",
    "urllib3",
    "requests",
    "pygls",
    "lsprotocol",
    "cattrs",
    "prometheus_client",
    "re2",
)
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
        ["webhook", "manifests"],
    ],
    ids=["version", "lint", "lint-json", "lint-pool", "rules", "webhook-manifests"],
)
def test_offline_runs_never_import_heavy_libraries(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "pod.yaml").write_text(MANIFEST)
    (tmp_path / "pod-copy.yaml").write_text(MANIFEST)
    _, loaded, output = loaded_modules(args, tmp_path)
    assert loaded == [], f"{args} imported {loaded}"
    assert output.strip(), "the command produced no output: the probe did not run it"


# Modules a one-file offline lint does without (startup, docs/performance.md): the other commands'
# modules, what a chart's build is given and gives back (render.types), and the standard library's
# html (Markdown reports), json (JSON and SARIF reports) and textwrap (the rules' examples, read by
# tests and `explain`); dataclasses, since no class a one-file lint creates is one (CONTRIBUTING.md), and
# pkgutil (the registry lists the rules' folder itself).
SPARED_BY_ONE_FILE = (
    "nodename_lint.commands.audit",
    "nodename_lint.commands.snapshot",
    "nodename_lint.commands.webhook",
    "nodename_lint.commands.lsp",
    "nodename_lint.commands.explain",
    "nodename_lint.commands.rules",
    "nodename_lint.render.types",
    "html",
    "json",
    "textwrap",
    "dataclasses",
    "pkgutil",
)


# PROBE without json (which it would load itself): the arguments follow the code, the modules print as a repr.
PLAIN_PROBE = """
import runpy, sys
sys.argv = ["nodename-lint", *sys.argv[2:]]
try:
    runpy.run_module("nodename_lint", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
watched = {watched!r}
sys.stderr.write("\\nLOADED=" + repr(sorted(m for m in sys.modules if m in watched or m.split(".")[0] in watched)))
"""


def _loaded_of(watched: tuple[str, ...], args: list[str], cwd: Path) -> tuple[list[str], str]:
    """Which of `watched` (or their submodules) the command line ARGS loaded, and its output."""
    probe = PLAIN_PROBE.format(watched=set(watched))
    completed = subprocess.run(
        [sys.executable, "-c", probe, "--", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    stderr, _, loaded = completed.stderr.rpartition("\nLOADED=")
    assert loaded, completed.stderr
    return ast.literal_eval(loaded), completed.stdout + stderr


def test_a_one_file_lint_loads_only_its_own_command(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(MANIFEST)
    loaded, output = _loaded_of(SPARED_BY_ONE_FILE, ["pod.yaml"], tmp_path)
    assert "info[nodename-on-pod]" in output and loaded == [], output


def test_a_command_is_imported_when_it_runs(tmp_path: Path) -> None:
    """The check can fail: `rules` loads its own module, and the group names every command unloaded."""
    loaded, output = _loaded_of(SPARED_BY_ONE_FILE, ["rules"], tmp_path)
    assert "duplicate-key" in output and loaded == ["nodename_lint.commands.rules"], loaded
    code = (
        "import sys\nfrom nodename_lint.cli import main\n"
        "print(sorted(main.commands), sorted(m for m in sys.modules if m.startswith('nodename_lint.commands.')))"
    )
    listed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert listed.stdout.strip() == (
        "['audit', 'explain', 'lint', 'lsp', 'rules', 'snapshot', 'webhook'] ['nodename_lint.commands.help']"
    ), listed.stdout


def test_the_probe_sees_a_config_file_load_jsonschema(tmp_path: Path) -> None:
    """The check can fail: a config file is validated with jsonschema, and the probe notices."""
    (tmp_path / "pod.yaml").write_text(MANIFEST)
    (tmp_path / ".nodename-lint.yaml").write_text("fail-on: warning\n")
    _, loaded, output = loaded_modules(["pod.yaml"], tmp_path)
    assert "jsonschema" in loaded, output


def test_the_probe_sees_the_webhook_load_prometheus_client(tmp_path: Path) -> None:
    """The check can fail: the webhook's metrics load prometheus_client (here it stops at once, at its
    certificate, after loading what it serves with)."""
    from tests.conftest import ROOT

    state = str(ROOT / "examples" / "cluster" / "state.yaml")
    args = ["webhook", "--tls-cert-file", "missing.crt", "--tls-private-key-file", "k", "--cluster-state", state]
    _, loaded, output = loaded_modules(args, tmp_path)
    assert "cannot load the TLS certificate missing.crt" in output and "prometheus_client" in loaded, output


def test_one_install_requires_every_library_of_the_headline_uses() -> None:
    """`pip install nodename-lint` gives live clusters, --fix and SARIF; extras are only for test tooling."""
    from importlib.metadata import metadata, requires

    from tests.conftest import ROOT

    specs = requires("nodename-lint") or []
    required = {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0].lower() for spec in specs if "extra ==" not in spec}
    assert {"click", "pyyaml", "jsonschema", "ruamel.yaml", "kubernetes", "prometheus_client"} <= required
    # helm: the optional 75 MB native Helm engine (issue 16); charts without it are skipped with a note
    assert metadata("nodename-lint").get_all("Provides-Extra") == ["helm", "test"]
    sources = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "nodename_lint").rglob("*.py"))
    assert "nodename-lint[" not in sources, "no message may ask for an extra"


# --- live runs: the official client's REST layer, not the whole package -----------------------------
CLIENT_STACK = ("kubernetes", "oauthlib", "requests_oauthlib", "google", "pydantic")
# never loaded by a run whose kubeconfig user has a fixed credential (token, client certificate, basic auth)
WHOLE_CLIENT = (
    "kubernetes.config",
    "kubernetes.client.api_client",
    "kubernetes.client.models",
    "kubernetes.client.api.",
    "kubernetes.dynamic",
    "kubernetes.watch",
    "kubernetes.stream",
    "oauthlib",
    "requests_oauthlib",
    "google",
    "pydantic",
)


def _live_modules(tmp_path: Path, kubeconfig: Path) -> tuple[list[str], str]:
    """The client's modules a live lint of pod.yaml loaded, and its output."""
    (tmp_path / "pod.yaml").write_text(MANIFEST)
    probe = PROBE.replace("heavy = {heavy}", f"heavy = {set(CLIENT_STACK)!r}")
    completed = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(["pod.yaml", "--kubeconfig", str(kubeconfig)])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    stderr, _, loaded = completed.stderr.rpartition("\nLOADED=")
    assert loaded, completed.stderr
    return json.loads(loaded), completed.stdout + stderr


def test_a_token_live_run_imports_only_the_clients_rest_layer(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    """The official client sends the GETs (its Configuration and REST layer), without the 0.2 s of importing
    every API class and model, the kubeconfig loader's oauthlib/requests/google-auth, watch and stream."""
    loaded, output = _live_modules(tmp_path, kubeconfig)
    assert "error[unknown-node] node worker-1 does not exist in the cluster (context kind-kind" in output, output
    assert {"kubernetes.client.configuration", "kubernetes.client.rest"} <= set(loaded), loaded
    assert [module for module in loaded if module.startswith(WHOLE_CLIENT)] == []
    assert api_server.requests and all(r.authorization == f"Bearer {TOKEN}" for r in api_server.requests)


def test_an_exec_plugin_live_run_loads_the_clients_kubeconfig_loader(tmp_path: Path, api_server: ApiServer) -> None:
    """A credential only the client's loader knows (an exec plugin) still works: the packages skipped by the
    narrow import complete themselves when the loader asks for them."""
    credential = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential"}
    credential["status"] = {"token": TOKEN}  # type: ignore[assignment]
    plugin = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": sys.executable,
        "args": ["-c", f"print({json.dumps(json.dumps(credential))})"],
        "interactiveMode": "Never",
    }
    config = write_kubeconfig(
        tmp_path / "kubeconfig",
        clusters={"c": cluster_entry(api_server.url, api_server.ca_pem)},
        users={"u": {"exec": plugin}},
        contexts={"test": ("c", "u")},
        current="test",
    )
    loaded, output = _live_modules(tmp_path, config)
    assert "error[unknown-node] node worker-1 does not exist in the cluster (context test" in output, output
    assert {"kubernetes.config.kube_config", "kubernetes.client.api_client"} <= set(loaded), loaded
    assert api_server.requests and all(r.authorization == f"Bearer {TOKEN}" for r in api_server.requests)


def test_the_narrowly_imported_client_completes_itself_for_other_code() -> None:
    """Code in the same process that imports the client the usual way gets the whole package."""
    code = (
        "from nodename_lint.cluster.official import rest_modules\n"
        "configuration, rest = rest_modules()\n"
        "import sys\n"
        "assert 'kubernetes.client.models' not in sys.modules and 'kubernetes.config' not in sys.modules\n"
        "from kubernetes.client import ApiClient, Configuration, CoreV1Api\n"
        "assert Configuration is configuration.Configuration\n"
        "import kubernetes\n"
        "from kubernetes import config, watch\n"
        "assert kubernetes.__version__ and callable(config.load_kube_config) and watch.Watch\n"
        "print('whole')\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.stdout == "whole\n", completed.stderr


def test_the_startup_bench_prints_the_one_file_table(tmp_path: Path) -> None:
    """`python bench/run.py --startup-only` (docs/performance.md) measures what the table says, and only that."""
    from tests.conftest import ROOT

    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--startup-only", "--repeat", "1", "--work", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    rows = [line for line in completed.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == [
        "| python -c 'import yaml, click'",
        "| nodename-lint --version",
        "| nodename-lint small.yaml",
    ], completed.stdout
    assert "generated" not in completed.stdout and "floor" not in completed.stdout
    assert "medians of 4 interleaved rounds" in completed.stdout


def test_the_commands_on_demand_behave_as_a_mapping() -> None:
    """What click does with a group's commands (look up, list, add, membership) works without importing them."""
    import click

    from nodename_lint.cli import COMMAND_NAMES, CommandsOnDemand

    commands = CommandsOnDemand(COMMAND_NAMES)
    assert "lint" in commands and "lnt" not in commands and len(commands) == len(COMMAND_NAMES)
    with pytest.raises(KeyError):
        commands["lnt"]
    with pytest.raises(KeyError):
        del commands["lnt"]
    del commands["audit"]
    commands["mine"] = click.Command("mine")
    assert sorted(commands) == ["explain", "lint", "lsp", "mine", "rules", "snapshot", "webhook"]
    assert commands["mine"].name == "mine" and commands["rules"].name == "rules"


# Records each pattern re really compiles (a miss of its cache) while a one-file lint runs.
COMPILE_PROBE = """
import os, runpy, sys
compiled = []

def record(frame, event, arg):
    code = frame.f_code
    if event == "call" and code.co_name == "compile" and code.co_filename.endswith(("_compiler.py", "sre_compile.py")):
        compiled.append(frame.f_locals["p"])

sys.argv = ["nodename-lint", *sys.argv[1:]]
sys.setprofile(record)
try:
    runpy.run_module("nodename_lint", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
sys.setprofile(None)
os.write(2, ("\\nCOMPILED=" + repr([p for p in compiled if isinstance(p, str)])).encode())
"""


def test_a_one_file_lint_compiles_only_the_patterns_its_document_needs(tmp_path: Path) -> None:
    """Startup: the patterns for what an ordinary small document never holds (a List to split, a JSON
    stream, a Helm comment, a deep or broken document, unsafe text) are compiled when first used."""
    from nodename_lint import documents, podspec, safe_text

    (tmp_path / "pod.yaml").write_text(MANIFEST)
    completed = subprocess.run(
        [sys.executable, "-c", COMPILE_PROBE, "pod.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    compiled = ast.literal_eval(completed.stderr.rpartition("\nCOMPILED=")[2])
    assert "info[nodename-on-pod]" in completed.stdout and documents._BOUNDARY.pattern in compiled, completed
    spared = [
        *(getattr(documents, name) for name in ("_JSON_TOKEN", "_LIST_KIND", "_OBJECT_KEY", "_ITEMS_KEY")),
        *(getattr(documents, name) for name in ("_HELM_SOURCE", "_DEEP_INDENT", "_FLOW_BRACKET", "_FIRST_CONTENT")),
        *documents._ANCHORS_OR_ALIASES,
        safe_text._UNSAFE,
        safe_text._UNSAFE_IN_JSON,
        podspec._DNS1123_LABEL,
    ]
    assert [
        source for source in (getattr(pattern, "pattern", pattern) for pattern in spared) if source in compiled
    ] == []
