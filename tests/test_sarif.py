"""SARIF, GitHub annotations, the Markdown summary, several formats in one run, --changed-since.

Every SARIF these tests produce is validated against the OASIS SARIF 2.1.0 schema (a copy in
tests/data, so the suite needs nothing outside the repository).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from nodename_lint.registry import all_rules
from nodename_lint.report.github import escape_data, escape_property

from .conftest import ROOT, run_cli

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

BROKEN_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      nodeName: worker-2
      containers:
        - name: nginx
          image: nginx:1.27.3-alpine
"""


@lru_cache(maxsize=1)
def _validator():
    """The 2.1.0 schema with its formats checked: `uri-reference` needs rfc3987 (a test dependency)."""
    import jsonschema

    checker = jsonschema.FormatChecker()
    assert "uri-reference" in checker.checkers, "pip install rfc3987: without it uri-reference is not checked"
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=checker)


def assert_valid_sarif(text: str) -> dict:
    """Parse a SARIF log and fail with every schema or format error it has.

    Beyond the schema, every artifactLocation.uri must be a relative reference that is a path only
    (a `#` or `?` in a file name must not become a fragment or a query).
    """
    log = json.loads(text)
    errors = [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in _validator().iter_errors(log)]
    for run in log["runs"]:
        for result in run.get("results", []):
            for location in result.get("locations", []):
                # an audit finding names a cluster object only: no physical location
                uri = location.get("physicalLocation", {}).get("artifactLocation", {}).get("uri")
                if uri is not None:
                    parts = urlsplit(uri)
                    if parts.scheme or parts.netloc or parts.query or parts.fragment or "#" in uri or "?" in uri:
                        errors.append(f"artifactLocation.uri {uri!r} is not a relative path reference")
    assert not errors, "SARIF does not match the 2.1.0 schema:\n" + "\n".join(errors)
    return log


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a diagnostic Pod and a Deployment pinned to a node, in one commit."""
    (tmp_path / "deploy").mkdir()
    shutil.copy(ROOT / "examples" / "deploy" / "debug-pod.yaml", tmp_path / "deploy")
    (tmp_path / "deploy" / "web.yaml").write_text(BROKEN_DEPLOYMENT, encoding="utf-8")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "manifests")
    return tmp_path


def sarif_of(cwd: Path, *args: str) -> dict:
    completed = run_cli("--format", "sarif", *args, cwd=cwd)
    assert completed.returncode in (0, 1), completed.stderr
    return assert_valid_sarif(completed.stdout)


def results_by_rule(log: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for result in log["runs"][0]["results"]:
        found.setdefault(result["ruleId"], []).append(result)
    return found


def test_sarif_driver_describes_every_rule_of_the_catalogue(repo: Path):
    log = sarif_of(repo, "deploy")
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "nodename-lint" and driver["version"] and driver["informationUri"].startswith("https://")
    catalogue = all_rules()
    assert [rule["id"] for rule in driver["rules"]] == list(catalogue)
    for descriptor in driver["rules"]:
        rule = catalogue[descriptor["id"]]
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"] and descriptor["fullDescription"]["text"] != rule.summary
        assert descriptor["help"]["markdown"] == rule.documentation() == descriptor["help"]["text"]
        assert descriptor["helpUri"].endswith(f"/docs/rules/{rule.id}.md")
        assert (
            descriptor["defaultConfiguration"]["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[rule.severity]
        )


def test_sarif_results_point_at_the_line_relative_to_the_repository_root(repo: Path):
    # started in a subfolder, the uri is still relative to the repository root
    log = sarif_of(repo / "deploy", "web.yaml", "debug-pod.yaml")
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    found = results_by_rule(log)
    [template] = found["nodename-in-template"]
    assert template["level"] == "error"
    message = template["message"]["text"]
    assert "the 1 replica of Deployment web skips" in message and "Fix: " in message
    location = template["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "deploy/web.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 13, "startColumn": 7}
    assert template["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "Deployment shop/web"
    assert run["tool"]["driver"]["rules"][template["ruleIndex"]]["id"] == "nodename-in-template"
    [pod] = found["nodename-on-pod"]
    assert pod["level"] == "note"


def template_results_in_web_yaml(cwd: Path) -> list[dict]:
    found = results_by_rule(sarif_of(cwd, "deploy"))["nodename-in-template"]
    return [r for r in found if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deploy/web.yaml"]


def test_fingerprints_survive_unrelated_lines_moving_and_tell_objects_apart(repo: Path):
    [before] = template_results_in_web_yaml(repo)
    manifest = repo / "deploy" / "web.yaml"
    manifest.write_text("# owned by the shop team\n# reviewed 2026-11\n" + BROKEN_DEPLOYMENT, encoding="utf-8")
    [after] = template_results_in_web_yaml(repo)
    assert after["locations"][0]["physicalLocation"]["region"]["startLine"] == 15
    assert after["partialFingerprints"] == before["partialFingerprints"]

    renamed = BROKEN_DEPLOYMENT.replace("name: web", "name: api")
    manifest.write_text(BROKEN_DEPLOYMENT + "---\n" + renamed, encoding="utf-8")
    both = template_results_in_web_yaml(repo)
    assert len(both) == 2
    assert both[0]["partialFingerprints"] == before["partialFingerprints"]
    assert both[0]["partialFingerprints"] != both[1]["partialFingerprints"]


def test_sarif_for_stdin_syntax_errors_and_skipped_rules_is_valid(tmp_path: Path):
    completed = run_cli("--format", "sarif", "-", cwd=tmp_path, stdin="kind: Pod\nspec: [unclosed\n")
    log = assert_valid_sarif(completed.stdout)
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "yaml-syntax"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {"description": {"text": "<stdin>"}}
    clean = assert_valid_sarif(run_cli("--format", "sarif", "-", cwd=tmp_path, stdin="a: b\n").stdout)
    assert clean["runs"][0]["results"] == []


def test_github_annotations_use_workflow_command_syntax(repo: Path):
    completed = run_cli("--format", "github", ".", cwd=repo / "deploy")
    lines = completed.stdout.splitlines()
    assert completed.returncode == 1
    assert lines[0].startswith("::notice file=deploy/debug-pod.yaml,line=8,col=3,title=nodename-lint nodename-on-pod::")
    assert lines[1].startswith("::error file=deploy/web.yaml,line=13,col=7,title=nodename-lint nodename-in-template::")
    assert "%0Afix: remove nodeName" in lines[1]
    assert len(lines) == 2, "annotations only, no summary"


def test_workflow_command_escaping():
    assert escape_data("50% of\r\nnodes") == "50%25 of%0D%0Anodes"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert "::" not in escape_property("file::name")


def test_several_formats_in_one_run(repo: Path):
    arguments = ("deploy", "--format", "text", "--format", "github", "--output-sarif", "out/results.sarif")
    arguments += ("--output-json", "results.json", "--output-markdown", "summary.md")
    completed = run_cli(*arguments, cwd=repo)
    assert completed.returncode == 2, "the output folder does not exist yet"
    assert "out/results.sarif: cannot write the sarif report" in completed.stderr
    (repo / "out").mkdir()
    completed = run_cli(*arguments, cwd=repo)
    assert completed.returncode == 1
    assert "deploy/web.yaml:13:7: error[nodename-in-template]" in completed.stdout
    assert "::error file=deploy/web.yaml,line=13,col=7" in completed.stdout
    log = assert_valid_sarif((repo / "out" / "results.sarif").read_text(encoding="utf-8"))
    report = json.loads((repo / "results.json").read_text(encoding="utf-8"))
    assert len(log["runs"][0]["results"]) == report["summary"]["findings"] == 2
    summary = (repo / "summary.md").read_text(encoding="utf-8")
    assert "[`nodename-in-template`](https://github.com/" in summary and "<code>deploy/web.yaml:13:7</code>" in summary


def test_output_sarif_alone_keeps_text_on_stdout_and_formats_cannot_share_a_file(repo: Path):
    completed = run_cli("deploy", "--output-sarif", "r.sarif", cwd=repo)
    assert "Found 2 problems" in completed.stdout
    assert_valid_sarif((repo / "r.sarif").read_text(encoding="utf-8"))
    completed = run_cli("deploy", "--format", "json", "--format", "sarif", "-o", "both.json", cwd=repo)
    assert completed.returncode == 2
    assert "both.json: json and sarif reports cannot share one file" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_changed_since_reports_only_files_changed_since_the_base(repo: Path):
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "deploy" / "debug-pod.yaml").write_text(
        (repo / "deploy" / "debug-pod.yaml").read_text(encoding="utf-8") + "# touched\n", encoding="utf-8"
    )
    completed = run_cli("deploy", "--changed-since", "main", "--format", "json", cwd=repo)
    report = json.loads(completed.stdout)
    assert [f["file"] for f in report["findings"]] == ["deploy/debug-pod.yaml"]
    assert completed.returncode == 0, "the error is in an unchanged file"
    assert "1 finding in files unchanged since main not reported" in completed.stderr
    completed = run_cli("deploy", "--changed-since", "no-such-branch", cwd=repo)
    assert completed.returncode == 2
    assert "--changed-since no-such-branch: git does not know this commit" in completed.stderr


def test_markdown_summary_escapes_table_cells(tmp_path: Path):
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  nodeName: Node|One\n  containers: []\n"
    (tmp_path / "pod.yaml").write_text(pod, encoding="utf-8")
    summary = run_cli("--format", "markdown", "pod.yaml", cwd=tmp_path).stdout
    rows = [line for line in summary.splitlines() if line.startswith("| :")]
    assert rows and all(line.replace("\\|", "").count("|") == 6 for line in rows), summary


HOSTILE_NAMES = ("a b.yaml", "hash#frag.yaml", "what?q=1.yaml", "100%.yaml", "c:colon.yaml", "tab\tname.yaml")


def test_sarif_uris_are_percent_encoded_relative_references(tmp_path: Path):
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  nodeName: worker-1\n  containers: []\n"
    (tmp_path / "deploy").mkdir()
    for name in HOSTILE_NAMES:
        (tmp_path / "deploy" / name).write_text(pod, encoding="utf-8")
    completed = run_cli("--format", "sarif", "deploy", cwd=tmp_path)
    log = assert_valid_sarif(completed.stdout)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    decoded = sorted(unquote(uri) for uri in uris)
    expected = [f"deploy/{name}" for name in HOSTILE_NAMES if "\t" not in name] + ["deploy/tab\\x09name.yaml"]
    assert decoded == sorted(expected), "control characters are shown escaped, every other character kept"
    assert "deploy/hash%23frag.yaml" in uris and "deploy/a%20b.yaml" in uris and "deploy/100%25.yaml" in uris
