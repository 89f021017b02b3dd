"""Minimal reproductions of what the sweep over public repositories found (issue 23's verification).

Each test rebuilds, in a few files, the shape of a real repository that gave a false alarm, a silent
skip or a misplaced finding (docs/real-repositories.md has the sweep and its table); none of them
reads those repositories or the network.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodename_lint.render.helm import write_chart

from .conftest import require_tool
from .test_helm import (
    LIBRARY_FILES,
    PINNED_POD_TEMPLATE,
    commit_all,
    findings,
    lint_json,
    make_chart,
)
from .test_helm_sealed import HELM_INSTALL


def v1_chart_with_requirements(folder: Path, repository: str) -> Path:
    """linkerd2's charts: `apiVersion: v1`, dependencies in requirements.yaml (Helm 2's place for them)."""
    return make_chart(
        folder,
        files={
            "Chart.yaml": "apiVersion: v1\nname: app\nversion: 0.1.0\n",
            "requirements.yaml": f"dependencies:\n- name: lib\n  version: 0.1.0\n  repository: {repository}\n",
            "templates/pod.yaml": PINNED_POD_TEMPLATE,
        },
    )


def test_file_dependencies_in_requirements_yaml_are_copied_too(tmp_path: Path):
    # linkerd2: linkerd2-cni, linkerd-viz, linkerd-multicluster... declare `file://../partials` in
    # requirements.yaml; Helm reads it as Chart.yaml's dependencies for an apiVersion v1 chart
    write_chart(str(tmp_path / "charts" / "partials"), LIBRARY_FILES, name="lib")
    v1_chart_with_requirements(tmp_path / "charts" / "app", "file://../partials")
    commit_all(tmp_path)
    report, stderr = lint_json("charts/app", cwd=tmp_path)
    assert [(f["rule"], f["file"], f["line"]) for f in findings(report)] == [
        ("nodename-on-pod", "charts/app/templates/pod.yaml", 6)
    ], stderr


def test_a_missing_dependency_of_requirements_yaml_is_reported_at_requirements_yaml(tmp_path: Path):
    v1_chart_with_requirements(tmp_path / "app", "https://charts.example.invalid")
    commit_all(tmp_path)
    report, _ = lint_json("app", cwd=tmp_path)
    [warning] = findings(report)
    where = (warning["rule"], warning["severity"], warning["file"])
    assert where == ("helm-render", "warning", "app/requirements.yaml")
    assert "its dependencies lib are declared in requirements.yaml but missing" in warning["message"]


def test_a_dependency_declared_twice_under_two_aliases_is_named_once(tmp_path: Path):
    # grafana's enterprise-metrics: memcached three times (three aliases) was listed "memcached, memcached, memcached"
    make_chart(
        tmp_path / "app",
        files={
            "Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n"
            + "".join(
                f"  - name: memcached\n    alias: {alias}\n    version: 0.1.0\n    repository: https://x.invalid\n"
                for alias in ("chunks", "results", "metadata")
            ),
        },
    )
    commit_all(tmp_path)
    report, _ = lint_json("app", cwd=tmp_path)
    [warning] = findings(report)
    assert "its dependencies memcached are declared" in warning["message"]


REQUIRED_ADDRESS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: canary
data:
  address: {{ required "'lokiAddress' must be set" .Values.lokiAddress }}
"""
FAIL_WITHOUT_TOKEN = """\
{{- if not .Values.token }}
{{- fail "Either tokenSecretName or insecureTokenValue must be provided" }}
{{- end }}
"""


def test_a_chart_that_asks_for_values_is_not_checked_rather_than_broken(tmp_path: Path):
    # grafana's loki-canary and pdc-agent, linkerd-control-plane, opentelemetry-collector, postgres-exporter:
    # with their own values.yaml they stop at a `required` or `fail` of theirs; the chart is right, it
    # needs the user's values. It was an error saying "fix the template".
    make_chart(tmp_path / "canary", files={"templates/canary.yaml": REQUIRED_ADDRESS})
    make_chart(tmp_path / "agent", files={"templates/NOTES.txt": FAIL_WITHOUT_TOKEN}, name="agent")
    commit_all(tmp_path)
    report, _ = lint_json(".", cwd=tmp_path)
    placed = sorted((f["file"], f["line"], f["severity"]) for f in findings(report, "helm-render"))
    assert placed == [("agent/templates/NOTES.txt", 2, "warning"), ("canary/templates/canary.yaml", 6, "warning")]
    canary = next(f for f in findings(report) if f["file"].startswith("canary"))
    assert "the chart was not checked" in canary["message"] and "'lokiAddress' must be set" in canary["message"]
    assert "--helm-values FILE" in canary["fix"] and "fix the template" not in canary["fix"]
    assert report["summary"]["errors"] == 0

    # values the run gives that still fail the chart's check: helm install with them fails, an error
    (tmp_path / "prod.yaml").write_text("other: 1\n", encoding="utf-8")
    report, _ = lint_json("canary", "--helm-values", "prod.yaml", cwd=tmp_path)
    [error] = findings(report, "helm-render")
    assert (error["severity"], error["file"], error["line"]) == ("error", "canary/templates/canary.yaml", 6)
    assert "'lokiAddress' must be set" in error["message"] and "set the values" in error["fix"]


def test_a_value_named_schema_declared_in_the_values_schema_is_kept(tmp_path: Path):
    # DataDog's private-action-runner: values.yaml sets `$schema:` for editors, values.schema.json declares it
    # under `properties` and allows nothing else; the screen took the property for the keyword and removed it,
    # and the chart failed its own schema ("additional properties '$schema' not allowed")
    schema = {
        "$schema": "https://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "$schema": {"type": "string"},
            "$ref": {"type": "string"},
            "zone": {"type": "string"},
            "pod": {"$ref": "#/definitions/$schema"},
        },
        "definitions": {"$schema": {"type": "object"}},
    }
    make_chart(
        tmp_path / "runner",
        values="$schema: ./values.schema.json\n$ref: kept\nzone: a\npod: {}\n",
        files={
            "values.schema.json": json.dumps(schema),
            "templates/pod.yaml": PINNED_POD_TEMPLATE.replace('{{ include "lib.name" . }}', "runner"),
        },
    )
    commit_all(tmp_path)
    report, stderr = lint_json("runner", cwd=tmp_path)
    assert [f["rule"] for f in findings(report)] == ["nodename-on-pod"], report["findings"]
    assert "not followed" not in stderr


def test_the_schemas_under_a_property_named_ref_are_still_screened(tmp_path: Path):
    from nodename_lint.render.chart_copy import screen_schema

    path = tmp_path / "values.schema.json"
    hostile = {"$ref": "http://127.0.0.1:9/x.json"}
    schema = {"properties": {"$ref": hostile, "$schema": {"items": hostile}}, "$defs": {"$ref": hostile}}
    path.write_text(json.dumps(schema), encoding="utf-8")
    assert len(screen_schema(str(path))) == 3
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert kept == {"properties": {"$ref": {}, "$schema": {"items": {}}}, "$defs": {"$ref": {}}}


@pytest.mark.parametrize("engine", ["sdk", "binary"])
def test_a_deprecated_chart_that_asks_for_values_says_so_with_either_engine(tmp_path: Path, engine: str):
    # grafana's loki-canary is deprecated: `helm template` writes "WARNING: This chart is deprecated" before
    # its "Error: execution error at (...)", and with the helm binary the chart was an error quoting both
    env: dict[str, str] = {}
    if engine == "binary":
        require_tool("helm", HELM_INSTALL)
        blocker = tmp_path / "no-helm-python"
        blocker.mkdir()
        (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['helm_python'] = None\n")
        env = {"PYTHONPATH": str(blocker)}
    make_chart(
        tmp_path / "canary",
        files={
            "Chart.yaml": "apiVersion: v2\nname: canary\nversion: 0.1.0\ndeprecated: true\n",
            "templates/canary.yaml": REQUIRED_ADDRESS,
        },
    )
    report, _ = lint_json("canary", cwd=tmp_path, env=env)
    [warning] = findings(report, "helm-render")
    assert (warning["severity"], warning["file"], warning["line"]) == ("warning", "canary/templates/canary.yaml", 6)
    assert warning["message"].endswith(
        "so it needs values from you before Helm renders anything: 'lokiAddress' must be set"
    ), warning["message"]
