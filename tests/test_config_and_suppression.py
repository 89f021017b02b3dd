"""Configuration file, --select/--ignore, --fail-on, and both inline suppressions."""

from __future__ import annotations

import json

import pytest

from nodename_lint.cluster.from_file import load_state_text
from nodename_lint.config import load_config, resolve_severities
from nodename_lint.engine import Linter
from nodename_lint.registry import all_rules
from nodename_lint.rule import SEVERITIES, Context

from .conftest import ROOT, lint_yaml, run_cli

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  nodeName: Kind-Worker
  containers: []
"""


def _rules(result):
    return sorted(f["rule"] for f in json.loads(result.stdout)["findings"])


def test_config_disables_rules_and_sets_severities(tmp_path):
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / ".nodename-lint.yaml").write_text("rules:\n  nodename-on-pod: off\n  invalid-node-name: warning\n")
    (tmp_path / "sub").mkdir()
    result = run_cli("../pod.yaml", "--format", "json", cwd=tmp_path / "sub")  # found in a parent folder
    findings = json.loads(result.stdout)["findings"]
    assert [(f["rule"], f["severity"]) for f in findings] == [("invalid-node-name", "warning")]
    assert result.returncode == 0, "warnings do not fail by default"
    assert run_cli("../pod.yaml", "--fail-on", "warning", cwd=tmp_path / "sub").returncode == 1


def test_config_exclude_static_dirs_namespace_and_fail_on(tmp_path):
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "pod.yaml").write_text(POD)
    (tmp_path / "nodes").mkdir()
    (tmp_path / "nodes" / "agent").write_text(POD.replace("Kind-Worker", "kind-worker"))
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "cfg.yaml").write_text(
        "exclude: [vendor/*]\nstatic-pod-dirs: [nodes]\nnamespace: team-a\nfail-on: info\n"
        "rules: {invalid-node-name: {enabled: false}}\n"
    )
    result = run_cli(".", "--config", "cfg.yaml", "--format", "json", cwd=tmp_path)
    findings = json.loads(result.stdout)["findings"]
    assert [(f["file"], f["rule"]) for f in findings] == [("pod.yaml", "nodename-on-pod")]
    assert findings[0]["object"]["namespace"] == "team-a"
    assert result.returncode == 1, "fail-on: info from the config"
    assert json.loads(result.stdout)["summary"]["files"] == 3  # nodes/agent is read as a static Pod


@pytest.mark.parametrize(
    "config, expected",
    [
        ("rules:\n  no-such-rule: off\n", "cfg.yaml:2: unknown rule id 'no-such-rule'"),
        (
            "rules:\n  nodename-on-pods: off\n",
            "cfg.yaml:2: unknown rule id 'nodename-on-pods' (did you mean 'nodename-on-pod'?)",
        ),
        ("rules:\n  nodename-on-pod: loud\n", "cfg.yaml:2: invalid setting for rule nodename-on-pod: use one of"),
        (
            "rules:\n  nodename-on-pod: warn\n",
            "cfg.yaml:2: invalid setting for rule nodename-on-pod (did you mean 'warning'?)",
        ),
        ("exclude: vendor\n", "cfg.yaml:1: invalid config at exclude: must be a list, not a string"),
        (
            "namespace: a\nfail-on: error\nrule:\n  x: off\n",
            "cfg.yaml:3: unknown key 'rule' in the top level (did you mean 'rules'?)",
        ),
        ("fail-on: warn\n", "cfg.yaml:1: invalid value for fail-on (did you mean 'warning'?)"),
        ("namespace: Team-A\n", "cfg.yaml:1: invalid config at namespace: must match ^[a-z0-9]"),
        ("- rules\n- exclude\n", "cfg.yaml:1: the config file is a list, not a mapping of settings"),
        ("rules: [\n", "cfg.yaml:2:1: invalid YAML in the config file"),
    ],
)
def test_bad_config_is_a_usage_error_with_its_line(tmp_path, config, expected):
    (tmp_path / "cfg.yaml").write_text(config)
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli("pod.yaml", "--config", "cfg.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"nodename-lint: {expected}"), result.stderr
    assert "Traceback" not in result.stderr


def test_every_config_mistake_is_reported_at_once_at_its_own_line(tmp_path):
    (tmp_path / "cfg.yaml").write_text(
        "namespace: team-a\nrules:\n  nodename-on-pod: off\n  unknown-nodes: off\nexlude: [vendor]\nfail-on: never\n"
    )
    (tmp_path / "pod.yaml").write_text(POD)
    result = run_cli("pod.yaml", "--config", "cfg.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "nodename-lint: cfg.yaml:4: unknown rule id 'unknown-nodes' (did you mean 'unknown-node'?) "
        "(see `nodename-lint rules`)",
        "nodename-lint: cfg.yaml:5: unknown key 'exlude' in the top level (did you mean 'exclude'?); "
        "the keys are rules, exclude, static-pod-dirs, namespace, fail-on, webhook, helm",
        "nodename-lint: cfg.yaml:6: invalid value for fail-on: use one of error, warning, info",
    ]


def test_select_and_ignore(tmp_path):
    (tmp_path / "pod.yaml").write_text(POD)
    assert _rules(run_cli("pod.yaml", "--format", "json", "--select", "nodename-on-pod", cwd=tmp_path)) == [
        "nodename-on-pod"
    ]
    assert _rules(run_cli("pod.yaml", "--format", "json", "--ignore", "nodename-on-pod,yaml-syntax", cwd=tmp_path)) == [
        "invalid-node-name"
    ]
    unknown = run_cli("pod.yaml", "--select", "nodename-on-pods", cwd=tmp_path)
    assert (
        unknown.returncode == 2
        and "unknown rule id 'nodename-on-pods' (did you mean 'nodename-on-pod'?)" in unknown.stderr
    )


def test_unknown_flag_is_a_usage_error():
    result = run_cli("--no-such-flag")
    assert result.returncode == 2 and "No such option" in result.stderr


def test_comment_on_the_line_or_the_line_above_suppresses():
    same_line = POD.replace(
        "nodeName: Kind-Worker", "nodeName: Kind-Worker  # nodename-lint: ignore[invalid-node-name]"
    )
    assert [f.rule for f in lint_yaml(same_line)] == ["nodename-on-pod"]
    above = POD.replace("  nodeName:", "  # nodename-lint: ignore[nodename-on-pod, invalid-node-name]\n  nodeName:")
    assert lint_yaml(above) == []
    everything = POD.replace("  nodeName:", "  # nodename-lint: ignore\n  nodeName:")
    assert lint_yaml(everything) == []
    two_lines_above = POD.replace("spec:\n", "spec:  # nodename-lint: ignore\n  hostPID: true\n")
    assert len(lint_yaml(two_lines_above)) == 2, "a directive covers its own line and the next one only"
    other_rule = POD.replace("  nodeName:", "  # nodename-lint: ignore[nodename-in-template]\n  nodeName:")
    assert len(lint_yaml(other_rule)) == 2


def test_annotation_suppresses_on_the_object_and_on_a_pod_template():
    annotated = POD.replace(
        "  name: debug\n", "  name: debug\n  annotations:\n    nodename-lint.io/ignore: invalid-node-name\n"
    )
    assert [f.rule for f in lint_yaml(annotated)] == ["nodename-on-pod"]
    all_rules = POD.replace("  name: debug\n", "  name: debug\n  annotations: {nodename-lint.io/ignore: all}\n")
    assert lint_yaml(all_rules) == []
    deployment = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      template:
        metadata:
          annotations: {nodename-lint.io/ignore: "nodename-in-template"}
        spec:
          nodeName: worker-1
          containers: []
    """
    assert lint_yaml(deployment) == []


def test_syntax_findings_can_be_suppressed_by_comment():
    text = "apiVersion: v1\nkind: Pod\n# nodename-lint: ignore[yaml-syntax]\nmetadata: {name: [\n"
    assert [f.rule for f in lint_yaml(text)] == ["yaml-syntax"], "the parser stops on a later line"
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    # nodename-lint: ignore[yaml-syntax]\n    a: {{x}}\n"
    assert lint_yaml(text) == []


def test_exclude_applies_to_files_named_on_the_command_line(tmp_path):
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "pod.yaml").write_text(POD)
    (tmp_path / ".nodename-lint.yaml").write_text("exclude: [vendor/*]\n")
    result = run_cli("vendor/pod.yaml", cwd=tmp_path)
    assert result.returncode == 0 and "0 files" in result.stdout


# --- a configured severity wins ------------------------------------------------------------------
FAILING_EXAMPLES = [(rule, example) for rule in all_rules().values() for example in rule.examples if example.fails]


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("rule, example", FAILING_EXAMPLES, ids=[f"{r.id}:{e.title}" for r, e in FAILING_EXAMPLES])
def test_a_severity_set_in_the_config_wins_for_every_finding_of_every_rule(tmp_path, rule, example, severity):
    """The config file's severity, through load_config and resolve_severities, is every finding's severity,
    whatever the rule's default or the severity the rule gives one finding (untolerated-taint)."""
    config_file = tmp_path / ".nodename-lint.yaml"
    config_file.write_text(f"rules:\n  {rule.id}: {severity}\n")
    catalogue = all_rules()
    severities = resolve_severities(catalogue, load_config(str(config_file), list(catalogue)), [rule.id], [])
    assert severities == {rule.id: severity}
    cluster = load_state_text(example.cluster, source="example") if example.cluster else None
    linter = Linter(severities, Context(cluster=cluster))
    result = linter.collect(
        [
            linter.lint_text(
                example.manifest, "example.yaml", is_static_pod=example.static_pod, helm_chart=example.helm_chart
            )
        ]
    )
    found = [finding.severity for finding in result.findings if finding.rule == rule.id]
    assert found and set(found) == {severity}, (found, result.notes)


def test_rules_left_at_their_default_are_not_configured(tmp_path):
    """resolve_severities tells "configured" from "default" (None), also for `on` and `enabled: true`."""
    config_file = tmp_path / ".nodename-lint.yaml"
    config_file.write_text(
        "rules:\n  unknown-node: on\n  untolerated-taint: {enabled: true}\n"
        "  no-node-fits: {severity: info}\n  nodename-on-pod: off\n"
    )
    catalogue = all_rules()
    severities = resolve_severities(catalogue, load_config(str(config_file), list(catalogue)), [], [])
    assert severities["unknown-node"] is None and severities["untolerated-taint"] is None
    assert severities["no-node-fits"] == "info"
    assert "nodename-on-pod" not in severities
    assert all(
        severities[rule_id] is None for rule_id in catalogue if rule_id not in ("no-node-fits", "nodename-on-pod")
    )


NO_SCHEDULE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: reports-debug
spec:
  nodeName: kind-worker2
  containers:
    - name: app
      image: busybox:1.37
"""


def test_configured_error_makes_a_noschedule_taint_fail_the_run(tmp_path):
    """untolerated-taint reports a NoSchedule taint as a warning by default; `untolerated-taint: error`
    makes it an error, so `--fail-on error` fails the run."""
    state = str(ROOT / "examples" / "cluster" / "state.yaml")
    (tmp_path / "pod.yaml").write_text(NO_SCHEDULE_POD)
    args = (
        "pod.yaml",
        "--cluster-state",
        state,
        "--format",
        "json",
        "--fail-on",
        "error",
        "--select",
        "untolerated-taint",
    )
    default = run_cli(*args, cwd=tmp_path)
    assert [(f["rule"], f["severity"]) for f in json.loads(default.stdout)["findings"]] == [
        ("untolerated-taint", "warning")
    ], default.stdout
    assert default.returncode == 0, default.stderr
    (tmp_path / ".nodename-lint.yaml").write_text("rules:\n  untolerated-taint: error\n")
    configured = run_cli(*args, cwd=tmp_path)
    assert [(f["rule"], f["severity"]) for f in json.loads(configured.stdout)["findings"]] == [
        ("untolerated-taint", "error")
    ], configured.stdout
    assert configured.returncode == 1, configured.stderr
