"""Every way manifests come in: folders, stdin, lists, JSON, Helm streams, odd YAML."""

from __future__ import annotations

import json

from .conftest import lint_yaml, run_cli

PINNED_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      nodeName: worker-2
      containers: [{name: app, image: nginx}]
"""


def _findings(result):
    return [(f["file"], f["line"], f["column"], f["rule"]) for f in json.loads(result.stdout)["findings"]]


def test_folder_is_walked_recursively_skipping_hidden_and_other_files(tmp_path):
    (tmp_path / "apps" / "web").mkdir(parents=True)
    (tmp_path / "apps" / "web" / "deploy.yaml").write_text(PINNED_DEPLOYMENT)
    (tmp_path / "apps" / "deploy.yml").write_text(PINNED_DEPLOYMENT)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "deploy.yaml").write_text(PINNED_DEPLOYMENT)
    (tmp_path / "notes.txt").write_text(PINNED_DEPLOYMENT)
    (tmp_path / "apps" / "loop").symlink_to(tmp_path / "apps")  # a cycle: entered once
    result = run_cli("--format", "json", "--select", "nodename-in-template", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert _findings(result) == [
        ("apps/deploy.yml", 8, 7, "nodename-in-template"),
        ("apps/web/deploy.yaml", 8, 7, "nodename-in-template"),
    ]


def test_stdin_with_helm_source_comments():
    stream = (
        "---\n# Source: shop/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n"
        "---\n# Source: shop/templates/deployment.yaml\n" + PINNED_DEPLOYMENT
    )
    result = run_cli("-", "--format", "json", "--select", "nodename-in-template", stdin=stream)
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["file"], finding["line"], finding["column"]) == ("<stdin>", 15, 7)
    assert finding["template"] == "shop/templates/deployment.yaml"
    text = run_cli("-", "--select", "nodename-in-template", stdin=stream).stdout
    assert text.startswith("<stdin>:15:7 (shop/templates/deployment.yaml): error[nodename-in-template]")


def test_kind_list_and_typed_lists_locate_each_item():
    text = """
    apiVersion: v1
    kind: List
    items:
      - apiVersion: v1
        kind: Pod
        metadata: {name: a, namespace: one}
        spec:
          nodeName: Bad_Name
      - apiVersion: v1
        kind: Pod
        metadata: {name: b}
        spec:
          nodeName: Other_Bad
    ---
    apiVersion: v1
    kind: PodList
    items:
      - metadata: {name: c}
        spec:
          nodeName: Third_Bad
    """
    findings = lint_yaml(text, rules=["invalid-node-name"])
    assert [(f.object.name, f.object.namespace, f.line, f.column) for f in findings] == [
        ("a", "one", 8, 7),
        ("b", "default", 13, 7),
        ("c", "default", 20, 7),
    ]
    assert findings[2].object.kind == "Pod"


def test_json_files_are_located(tmp_path):
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "debug"},
        "spec": {"nodeName": "Worker", "containers": []},
    }
    (tmp_path / "pod.json").write_text(json.dumps(manifest, indent=2))
    result = run_cli("pod.json", "--format", "json", "--select", "invalid-node-name", cwd=tmp_path)
    assert _findings(result) == [("pod.json", 8, 5, "invalid-node-name")]


def test_non_kubernetes_yaml_is_skipped_silently(tmp_path):
    (tmp_path / "values.yaml").write_text("replicaCount: 3\nimage: {repository: nginx}\n")
    (tmp_path / "compose.yml").write_text("services:\n  web:\n    image: nginx\n")
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    result = run_cli(".", cwd=tmp_path)
    assert result.returncode == 0
    assert "No problems found in 0 objects of 3 files." in result.stdout


def test_go_yaml_semantics_bom_crlf_anchors_merge_keys(tmp_path):
    text = (
        "\ufeffapiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\n  labels: &labels {op: =, day: 2024-01-02}\r\n"
        "spec:\r\n  <<: &pinned {nodeName: Worker_1}\r\n  containers: []\r\n"
    )
    (tmp_path / "pod.yaml").write_bytes(text.encode("utf-8"))
    result = run_cli("pod.yaml", "--format", "json", cwd=tmp_path)
    findings = json.loads(result.stdout)["findings"]
    assert [(f["rule"], f["line"], f["column"]) for f in findings] == [
        ("invalid-node-name", 7, 16),
        ("nodename-on-pod", 7, 16),
    ]


def test_syntax_error_in_one_document_does_not_hide_the_others(tmp_path):
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n---\n" + PINNED_DEPLOYMENT)
    (tmp_path / "b.yaml").write_text(PINNED_DEPLOYMENT)
    result = run_cli(".", "--format", "json", cwd=tmp_path)
    assert _findings(result) == [
        ("a.yaml", 4, 1, "yaml-syntax"),
        ("a.yaml", 12, 7, "nodename-in-template"),
        ("b.yaml", 8, 7, "nodename-in-template"),
    ]


def test_unrendered_template_gets_the_template_hint():
    [finding] = lint_yaml("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    cell: {{cell}}\n")
    assert (finding.rule, finding.line, finding.column) == ("yaml-syntax", 6, 12)
    assert "helm template" in finding.fix


def test_dates_and_odd_scalars_never_break_json_output(tmp_path):
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations: {when: 2001-12-14t21:59:43.10-05:00}\n"
        "data: {a: .inf, b: =, c: 0o17}\n---\napiVersion: v1\nkind: Pod\n"
        "metadata: {name: d, creationTimestamp: 2024-01-01}\n"
        "spec: {nodeName: BAD, containers: []}\n"
    )
    result = run_cli("cm.yaml", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    # `.inf` has no JSON form: kubectl cannot convert the ConfigMap, so it is a finding, not an object
    assert report["summary"]["objects"] == 1
    assert [(f["rule"], f["line"]) for f in report["findings"] if f["rule"] == "yaml-syntax"] == [("yaml-syntax", 6)]


def test_no_path_means_the_current_folder_and_missing_path_is_a_usage_error(tmp_path):
    (tmp_path / "d.yaml").write_text(PINNED_DEPLOYMENT)
    assert run_cli(cwd=tmp_path).returncode == 1
    missing = run_cli("nope.yaml", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "nodename-lint: nope.yaml: no such file or folder"


def test_explicit_file_with_any_extension_is_linted(tmp_path):
    (tmp_path / "deploy.tpl").write_text(PINNED_DEPLOYMENT)
    assert run_cli("deploy.tpl", cwd=tmp_path).returncode == 1


def test_static_pod_path_marker(tmp_path):
    folder = tmp_path / "node1" / "etc" / "kubernetes" / "manifests"
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {spec: {containers: []}}}\n"
    )
    result = run_cli(".", "--format", "json", "--select", "static-pod-invalid", cwd=tmp_path)
    assert _findings(result) == [("node1/etc/kubernetes/manifests/agent.yaml", 2, 1, "static-pod-invalid")]


def test_a_list_bigger_than_one_api_request_is_still_linted(tmp_path):
    """`kubectl get deploy -A -o yaml` can exceed 3 MiB; kubectl applies it item by item."""
    item = (
        '- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c{index}}}\n  data: {{blob: "' + "x" * 4000 + '"}}\n'
    )
    body = "".join(item.format(index=index) for index in range(900))
    pinned = "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec: {nodeName: Bad_Node, containers: []}\n"
    (tmp_path / "all.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" + body + pinned)
    assert (tmp_path / "all.yaml").stat().st_size > 3 * 1024 * 1024
    result = run_cli("all.yaml", "--format", "json", "--select", "invalid-node-name", cwd=tmp_path)
    assert _findings(result) == [("all.yaml", 3607, 10, "invalid-node-name")]
