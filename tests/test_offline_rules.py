"""Each offline rule: fires, stays silent, and points at the exact key to change."""

from __future__ import annotations

import pytest

from .conftest import lint_yaml

DEPLOYMENT = """
apiVersion: apps/v1
kind: {kind}
metadata:
  name: web
spec:
  replicas: 3
  template:
    spec:
      nodeName: worker-2
      containers:
        - name: app
          image: nginx
"""


@pytest.mark.parametrize(
    "kind", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"]
)
def test_nodename_in_template_points_at_the_nodename_key(kind):
    findings = lint_yaml(DEPLOYMENT.format(kind=kind), rules=["nodename-in-template"])
    assert [(f.rule, f.line, f.column) for f in findings] == [("nodename-in-template", 9, 7)]
    assert findings[0].object.kind == kind and findings[0].object.namespace == "default"
    assert "worker-2" in findings[0].message and "nodeSelector" in findings[0].fix


def test_daemonset_message_says_only_that_node_runs_it():
    [finding] = lint_yaml(DEPLOYMENT.format(kind="DaemonSet"), rules=["nodename-in-template"])
    assert "on node worker-2 only" in finding.message


def test_cronjob_and_podtemplate_paths():
    cronjob = """
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: nightly, namespace: ops}
    spec:
      schedule: "0 3 * * *"
      jobTemplate:
        spec:
          template:
            spec:
              nodeName: worker-1
              containers: [{name: job, image: busybox}]
    ---
    apiVersion: v1
    kind: PodTemplate
    metadata: {name: tpl}
    template:
      spec:
        nodeName: worker-1
        containers: [{name: job, image: busybox}]
    """
    findings = lint_yaml(cronjob, rules=["nodename-in-template"])
    assert [(f.object.kind, f.line, f.column) for f in findings] == [("CronJob", 10, 11), ("PodTemplate", 18, 5)]
    assert findings[0].object.namespace == "ops"
    assert "spec.jobTemplate.spec.template.spec.nodeName" in findings[0].message


def test_template_without_nodename_and_custom_resources_are_silent():
    text = """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      template:
        spec:
          nodeSelector: {kubernetes.io/hostname: worker-2}
          containers: [{name: app, image: nginx}]
    ---
    apiVersion: example.com/v1
    kind: Deployment
    metadata: {name: not-apps}
    spec:
      template:
        spec:
          nodeName: worker-2
    """
    assert lint_yaml(text) == []


def test_nodename_on_pod_is_info_and_skips_static_pods():
    pod = """
    apiVersion: v1
    kind: Pod
    metadata: {name: debug}
    spec:
      nodeName: kind-worker
      containers: [{name: c, image: busybox}]
    """
    [finding] = lint_yaml(pod, rules=["nodename-on-pod"])
    assert (finding.severity, finding.line, finding.column) == ("info", 5, 3)
    assert lint_yaml(pod, rules=["nodename-on-pod"], static_pod=True) == []


@pytest.mark.parametrize(
    "value, fires, fix",
    [
        ("Worker-2", True, "'worker-2'"),
        ("worker_2", True, "exactly as kubectl get nodes"),
        ("-worker", True, ""),
        ("a" * 254, True, ""),
        ("123", True, "quote"),  # an int, not a string: decoding fails
        ("worker-2.example.com", False, ""),
        ("null", False, ""),
        ('""', False, ""),
    ],
)
def test_invalid_node_name(value, fires, fix):
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  nodeName: {value}\n  containers: []\n"
    findings = lint_yaml(text, rules=["invalid-node-name"])
    assert bool(findings) == fires
    if fires:
        assert (findings[0].line, findings[0].column) == (5, 3)
        assert fix in findings[0].fix


def test_scheduling_gates_with_nodename():
    text = """
    apiVersion: v1
    kind: Pod
    metadata: {name: gated}
    spec:
      schedulingGates: [{name: example.com/wait}]
      nodeName: worker-1
      containers: []
    """
    [finding] = lint_yaml(text, rules=["nodename-with-scheduling-gates"])
    assert (finding.line, finding.column) == (6, 3)
    assert "Forbidden: cannot be set until all schedulingGates have been cleared" in finding.message
    assert lint_yaml(text.replace("nodeName: worker-1", "nodeName: ''"), rules=["nodename-with-scheduling-gates"]) == []


def test_mirror_pod_by_owner_reference_points_at_the_kind():
    text = """
    apiVersion: v1
    kind: Pod
    metadata:
      name: etcd-kind-control-plane
      ownerReferences:
        - apiVersion: v1
          kind: Node
          name: kind-control-plane
    spec:
      nodeName: kind-control-plane
      containers: []
    """
    [finding] = lint_yaml(text, rules=["mirror-pod-manifest"])
    assert (finding.line, finding.column) == (7, 7)
    assert "kind-control-plane" in finding.message


STATIC_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
    - name: c
      image: busybox
      env:
        - name: TOKEN
          valueFrom:
            secretKeyRef: {{name: s, key: k}}
  volumes:
    - name: v
      projected:
        sources:
          - serviceAccountToken: {{path: token}}
  ephemeralContainers:
    - name: debug
      image: busybox
"""


def test_static_pod_references_and_ephemeral_containers():
    findings = lint_yaml(STATIC_POD.format(name="agent"), rules=["static-pod-invalid"], static_pod=True)
    located = [(f.line, f.column) for f in findings]
    assert located == [(12, 13), (17, 13), (18, 3)]
    assert "static pods may not reference secrets" in findings[0].message
    assert "serviceaccounts" in findings[1].message
    assert lint_yaml(STATIC_POD.format(name="agent"), rules=["static-pod-invalid"]) == [], "only static Pod files"


def test_static_pod_mirror_name_that_can_never_be_valid():
    findings = lint_yaml(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: Agent\nspec:\n  containers: []\n",
        rules=["static-pod-invalid"],
        static_pod=True,
    )
    assert [(f.line, f.column) for f in findings] == [(4, 3)]
    assert "<name>-<node>" in findings[0].message


def test_static_pod_file_with_several_documents_or_a_list():
    two = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: []}\n"
    )
    findings = lint_yaml(two, rules=["static-pod-invalid"], static_pod=True)
    assert [f.line for f in findings] == [6] and "several documents" in findings[0].message
    listed = "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n"
    findings = lint_yaml(listed, rules=["static-pod-invalid"], static_pod=True)
    assert [f.line for f in findings] == [4] and "List" in findings[0].message


def test_static_pod_duplicate_names_in_one_folder(tmp_path):
    from .conftest import run_cli

    folder = tmp_path / "manifests"
    folder.mkdir()
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-scheduler\n  namespace: kube-system\n"
        "spec:\n  containers: []\n"
    )
    (folder / "kube-scheduler.yaml").write_text(pod)
    (folder / "kube-scheduler.yaml.orig").write_text(pod)  # the kubelet reads every non-hidden file
    (folder / ".hidden.yaml").write_text(pod)
    result = run_cli("--static-pod-dir", str(folder), "--select", "static-pod-invalid", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "kube-scheduler.yaml.orig:4:3: error[static-pod-invalid]" in result.stdout
    assert "already defined by" in result.stdout
    assert "in 2 objects of 2 files" in result.stdout
