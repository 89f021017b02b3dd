"""The cluster rules through `--cluster-state`: each fires where it should, at the right line and
column, stays silent otherwise, and reads YAML and JSON states alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nodename_lint.cluster.from_file import load_state_file, load_state_text
from nodename_lint.cluster.names import closest_node_names
from nodename_lint.cluster.objects import state_from_objects

from .conftest import ROOT, lint_yaml, run_cli

CLUSTER_RULES = [
    "unknown-node",
    "insufficient-resources",
    "node-selector-mismatch",
    "untolerated-taint",
    "node-not-ready",
    "nodename-immutable",
    "no-node-fits",
    "static-pod-missing-namespace",
]
STATE = ROOT / "examples" / "cluster" / "state.yaml"


def pod(name: str, node: str | None, extra: str = "") -> str:
    """A Pod manifest; `extra` is spec YAML indented by two spaces."""
    node_line = f"  nodeName: {node}\n" if node else ""
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n{node_line}{extra}"
        "  containers:\n    - name: app\n      image: busybox:1.37\n"
    )


# file name -> (manifest, [(rule, line, column, severity, text the message must contain)])
CASES = {
    "typo.yaml": (pod("typo", "kind-wroker"), [("unknown-node", 6, 3, "error", "did you mean kind-worker?")]),
    "bigcpu.yaml": (
        pod("bigcpu", "kind-worker").replace(
            "busybox:1.37\n", 'busybox:1.37\n      resources:\n        requests: {cpu: "100"}\n'
        ),
        [
            (
                "insufficient-resources",
                11,
                20,
                "error",
                "Node didn't have enough resource: cpu, requested: 100000, used: 950, capacity: 4000",
            )
        ],
    ),
    "fits-now-not.yaml": (
        pod("medium", "kind-worker").replace(
            "busybox:1.37\n", "busybox:1.37\n      resources:\n        requests: {cpu: 3500m}\n"
        ),
        [("insufficient-resources", 11, 20, "error", "does not fit now")],
    ),
    "badsel.yaml": (
        pod("badsel", "kind-worker", "  nodeSelector:\n    disktype: ssd\n"),
        [("node-selector-mismatch", 8, 5, "error", "label disktype is 'hdd' on node kind-worker, not 'ssd'")],
    ),
    "noschedule.yaml": (
        pod("reports-debug", "kind-worker2"),
        [("untolerated-taint", 6, 3, "warning", "dedicated=reports:NoSchedule")],
    ),
    "noexecute.yaml": (
        pod("kernel-debug", "kind-worker3"),
        [("untolerated-taint", 6, 3, "error", "rejected by the kubelet on kind-worker3 with TaintToleration")],
    ),
    "evicted-later.yaml": (
        pod(
            "kernel-debug2",
            "kind-worker3",
            "  tolerations:\n    - {key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 60}\n",
        ),
        [("untolerated-taint", 7, 3, "error", "evicts it 60 s after it starts")],
    ),
    "notready.yaml": (
        pod("collector", "kind-worker4", "  tolerations:\n    - operator: Exists\n"),
        [("node-not-ready", 6, 3, "warning", "cordoned")],
    ),
    "moved.yaml": (
        pod("pinned", "kind-worker"),
        [("nodename-immutable", 6, 3, "error", "already runs on kind-worker2")],
    ),
    "nofit.yaml": (
        pod("huge", None).replace(
            "busybox:1.37\n", "busybox:1.37\n      resources:\n        requests: {memory: 1Ti}\n"
        ),
        [
            (
                "no-node-fits",
                5,
                1,
                "error",
                "0/5 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
                "3 node(s) had untolerated taint(s).",
            )
        ],
    ),
    "etc/kubernetes/manifests/agent.yaml": (
        pod("agent", None).replace("  name: agent\n", "  name: agent\n  namespace: monitoring\n"),
        [("static-pod-missing-namespace", 5, 3, "error", 'namespaces "monitoring" not found')],
    ),
    # silent cases: a good node, a tolerated taint, a Pod that fits somewhere, an existing namespace
    "fine.yaml": (pod("fine", "kind-worker"), []),
    "tolerated.yaml": (
        pod("tolerated", "kind-worker3", "  tolerations:\n    - {key: maintenance, operator: Exists}\n"),
        [],
    ),
    "schedulable.yaml": (pod("plain", None), []),
    "etc/kubernetes/manifests/ok.yaml": (
        pod("ok", None).replace("  name: ok\n", "  name: ok\n  namespace: kube-system\n"),
        [],
    ),
}


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cases")
    for name, (text, _) in CASES.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    json_state = folder.parent / "state.json"
    import yaml

    json_state.write_text(json.dumps(yaml.safe_load(STATE.read_text(encoding="utf-8")), indent=1), encoding="utf-8")
    return folder, json_state


def _findings(folder, state) -> list[dict]:
    result = run_cli(
        str(folder), "--cluster-state", str(state), "--format", "json", "--select", ",".join(CLUSTER_RULES)
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)["findings"]


@pytest.mark.parametrize("state_format", ["yaml", "json"])
def test_every_cluster_rule_through_cluster_state(case_dir, state_format):
    folder, json_state = case_dir
    findings = _findings(folder, STATE if state_format == "yaml" else json_state)
    by_file: dict[str, list[dict]] = {}
    for finding in findings:
        by_file.setdefault(os.path.relpath(finding["file"], folder), []).append(finding)
    for name, (_, expected) in CASES.items():
        got = [(f["rule"], f["line"], f["column"], f["severity"]) for f in by_file.get(name, [])]
        assert got == [(rule, line, col, sev) for rule, line, col, sev, _ in expected], (name, by_file.get(name))
        for finding, (*_, text) in zip(by_file.get(name, []), expected, strict=True):
            assert text in finding["message"], finding["message"]
            assert finding["fix"]
    assert {f["rule"] for f in findings} == set(CLUSTER_RULES)


def test_yaml_and_json_states_give_the_same_findings(case_dir):
    folder, json_state = case_dir
    from_yaml = json.dumps(_findings(folder, STATE)).replace(str(STATE), "STATE")
    assert from_yaml == json.dumps(_findings(folder, json_state)).replace(str(json_state), "STATE")


def test_lesson_examples_fail_the_run_and_say_nothing_on_stderr():
    """What they print is examples/cluster/expected.txt, kept current by tests/test_generated.py."""
    result = run_cli("examples/cluster/manifests", "--cluster-state", "examples/cluster/state.yaml", cwd=ROOT)
    assert result.stderr == ""
    assert result.returncode == 1


def test_nodes_only_state_skips_the_rules_that_need_more(tmp_path):
    import yaml

    state = yaml.safe_load(STATE.read_text(encoding="utf-8"))
    state["items"] = [item for item in state["items"] if item["kind"] == "Node"]
    nodes_only = tmp_path / "nodes.yaml"
    nodes_only.write_text(yaml.safe_dump(state), encoding="utf-8")
    manifest = tmp_path / "ghost.yaml"
    manifest.write_text(pod("ghost", "kind-wroker"), encoding="utf-8")
    result = run_cli(str(manifest), "--cluster-state", str(nodes_only))
    assert result.returncode == 1 and "error[unknown-node]" in result.stdout
    skipped = [line for line in result.stdout.splitlines() if " skipped: " in line]
    assert len(skipped) == 2, skipped
    assert any("nodename-immutable" in line and "has no pods" in line for line in skipped)
    assert any("static-pod-missing-namespace" in line and "has no namespaces" in line for line in skipped)


@pytest.mark.parametrize(
    "text, where, message",
    [
        ("apiVersion: v1\nkind: List\nitems:\n  - kind: Node\n    metadata: {name: [x}\n", ":5:", "not a valid YAML"),
        ('{"apiVersion": "v1", "kind": "List",\n "items": [}', ":2:", "not a valid JSON"),
        (
            "apiVersion: v1\nkind: List\nitems:\n  - kind: Node\n    metadata:\n      labels: {}\n",
            ":5:",
            "no metadata.name",
        ),
        (
            "apiVersion: v1\nkind: List\nitems:\n  - kind: Node\n    metadata: {name: a}\n    spec:\n      taints: 3\n",
            ":7:",
            "spec.taints is not a list",
        ),
        (
            "apiVersion: v1\nkind: List\nitems:\n  - kind: Node\n    metadata: {name: a}\n    spec:\n"
            "      taints:\n        - {key: {a: 1}, effect: NoSchedule}\n",
            ":8:",
            "Node a: spec.taints[0].key is not a string",
        ),
        ("apiVersion: v1\nkind: List\nitems: []\n", "", "has no Node objects"),
        ("- just\n- a list\n", "", "not a Kubernetes object or List"),
        # as kubectl reads it (tests/test_kubectl_yaml_oracle.py): a value that does not fit its tag is an error,
        # an unknown tag such as !!python/object:os.system leaves a plain string (nothing is ever constructed)
        ("kind: List\nitems:\n  - kind: Node\n    metadata: {name: !!int x}\n", ":4:", "'x' is not a valid !!int"),
        (
            "kind: List\nx: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\ny: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "items:\n  - kind: Node\n    metadata:\n      name: node-a\n      labels: {bomb: *b}\n",
            ":8:",
            "is not a string",
        ),
    ],
)
def test_a_bad_state_file_is_a_usage_error_with_its_line(tmp_path, text, where, message):
    state = tmp_path / "state.yaml"
    state.write_text(text, encoding="utf-8")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(pod("p", "a"), encoding="utf-8")
    result = run_cli(str(manifest), "--cluster-state", str(state))
    assert result.returncode == 2
    assert f"{state}{where}" in result.stderr and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_state_yaml_reads_scalars_as_kubectl_does():
    state = load_state_text(
        textwrap.dedent("""
        apiVersion: v1
        kind: List
        items:
          - kind: Node
            metadata:
              name: n1
              labels: {flag: =, built: 2024-01-02, enabled: yes, version: 1.20}
              creationTimestamp: 2024-01-02T03:04:05Z
            spec:
              taints: [{key: gpu, value: 1, effect: NoSchedule, timeAdded: null}]
            status:
              allocatable: {cpu: 4, memory: 1e3}
        """),
        "inline",
    )
    node = state.nodes["n1"]
    assert node.labels == {"flag": "=", "built": "2024-01-02", "enabled": "true", "version": "1.2"}
    assert node.capacity == {"cpu": 4000, "memory": 1000}
    assert node.taints == [{"key": "gpu", "value": "1", "effect": "NoSchedule", "timeAdded": None}]


def test_partial_pod_knowledge_is_said_in_no_node_fits():
    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}} for i in range(3)]
    pods = [
        {
            "metadata": {"name": "big", "namespace": "default"},
            "spec": {"nodeName": "n0", "containers": [{"name": "c", "resources": {"requests": {"cpu": "900m"}}}]},
            "status": {"phase": "Running"},
        }
    ]
    state = state_from_objects("context test", nodes=nodes, namespaces=None, pods=pods, pod_nodes=frozenset({"n0"}))
    assert state.usage("n0").requested == {"cpu": 900} and state.usage("n1") is None
    findings = lint_yaml(
        pod("wide", None).replace("busybox:1.37\n", "busybox:1.37\n      resources:\n        requests: {cpu: 2}\n"),
        rules=["no-node-fits"],
        cluster=state,
    )
    assert len(findings) == 1
    assert "0/3 nodes are available: 3 Insufficient cpu." in findings[0].message
    assert "2 of 3 nodes are not in the cluster state" in findings[0].message


def test_terminated_pods_do_not_use_resources_and_templates_count_replicas():
    state = load_state_file(str(STATE))
    assert state.usage("kind-worker").requested["cpu"] == 950  # the Succeeded batch Pod is not counted
    deployment = textwrap.dedent("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: api}  # not web: the cluster runs that one already (tests/test_rollout.py)
        spec:
          replicas: 3
          template:
            spec:
              nodeName: kind-worker
              containers:
                - name: c
                  image: nginx
                  resources: {requests: {cpu: 1500m}}
        """)
    findings = lint_yaml(deployment, rules=["insufficient-resources"], cluster=state)
    assert len(findings) == 1 and "only 2 of the 3 replicas" in findings[0].message
    assert not lint_yaml(
        deployment.replace("replicas: 3", "replicas: 2"), rules=["insufficient-resources"], cluster=state
    )


def test_static_pods_and_unparsable_requests_are_skipped_by_the_pinned_rules():
    state = load_state_file(str(STATE))
    bad = pod("bad", "kind-worker").replace(
        "busybox:1.37\n", "busybox:1.37\n      resources:\n        requests: {cpu: 1.5.3}\n"
    )
    assert not lint_yaml(bad, rules=["insufficient-resources", "no-node-fits"], cluster=state)
    static = pod("static", "kind-worker3")
    assert not lint_yaml(static, rules=["untolerated-taint", "unknown-node"], cluster=state, static_pod=True)


@pytest.mark.parametrize(
    "name, suggestions",
    [
        ("kind-wroker", ["kind-worker"]),
        ("Kind-Worker", ["kind-worker"]),
        ("kind-worker-2", ["kind-worker2"]),
        ("worker2", ["kind-worker2"]),
        ("kind-contol-plane", ["kind-control-plane"]),
        ("database-7", []),
        # a removed node's number is not a "missing suffix" of kind-worker: every distance-1 name is as close
        ("kind-worker4", ["kind-worker", "kind-worker2", "kind-worker3"]),
        ("kind-worker.ec2.internal", ["kind-worker"]),
    ],
)
def test_closest_node_names(name, suggestions):
    known = ["kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3"]
    assert closest_node_names(name, known) == suggestions


def test_offline_runs_import_nothing_of_the_cluster_code():
    code = (
        "import sys, runpy\n"
        "sys.argv = ['nodename-lint', 'examples/deploy']\n"
        "try:\n    runpy.run_module('nodename_lint', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in ('nodename_lint.scheduling', 'nodename_lint.quantity', 'nodename_lint.cluster.from_file',"
        " 'nodename_lint.cluster.names', 'nodename_lint.cluster.targets', 'nodename_lint.rollout',"
        " 'nodename_lint.cluster.templates') if m in sys.modules]\n"
        "sys.stderr.write(repr(loaded))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.stderr.strip().endswith("[]"), result.stderr


def test_insufficient_resources_without_the_nodes_pods_compares_allocatable_and_says_so():
    nodes = [{"metadata": {"name": "n0"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}]
    state = state_from_objects("context test", nodes=nodes, namespaces=None, pods=[], pod_nodes=frozenset())
    manifest = pod("big", "n0").replace(
        "busybox:1.37\n", "busybox:1.37\n      resources:\n        requests: {cpu: 5}\n"
    )
    findings = lint_yaml(manifest, rules=["insufficient-resources"], cluster=state)
    assert len(findings) == 1
    assert "can never fit there" in findings[0].message and "only allocatable was compared" in findings[0].message
    assert "used:" not in findings[0].message  # the kubelet's "used" is unknown: not quoted
    assert not lint_yaml(manifest.replace("cpu: 5", "cpu: 3"), rules=["insufficient-resources"], cluster=state)


def test_state_yaml_merge_keys_aliases_and_several_documents():
    state = load_state_text(
        textwrap.dedent("""
        apiVersion: v1
        kind: NodeList
        items:
          - metadata:
              name: n1
              labels: &common {zone: a, disktype: ssd}
          - metadata:
              name: n2
              labels:
                <<: *common
                zone: b
        ---
        apiVersion: v1
        kind: Namespace
        metadata: {name: default}
        """),
        "inline",
    )
    assert state.nodes["n1"].labels == {"zone": "a", "disktype": "ssd"}
    assert state.nodes["n2"].labels == {"zone": "b", "disktype": "ssd"}  # explicit keys win over merged ones
    assert state.namespaces == frozenset({"default"}) and not state.has("pods")


def test_snapshot_shaped_yaml_with_one_json_item_per_line_reads_like_block_yaml(tmp_path):
    import yaml

    state = yaml.safe_load(STATE.read_text(encoding="utf-8"))
    lines = ["# nodename-lint snapshot", "apiVersion: v1", "kind: List", 'metadata: {resourceVersion: ""}', "items:"]
    lines += [f"- {json.dumps(item, separators=(', ', ': '))}" for item in state["items"]]
    flow = tmp_path / "snapshot.yaml"
    flow.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from_flow, from_block = load_state_file(str(flow)), load_state_file(str(STATE))
    assert from_flow.nodes == from_block.nodes and from_flow.namespaces == from_block.namespaces
    assert [p.name for p in from_flow.pods] == [p.name for p in from_block.pods]
    assert from_flow.usage("kind-worker") == from_block.usage("kind-worker")


@pytest.mark.parametrize(
    "text, where",
    [
        # the second document's item has no name: pointed at its metadata key
        (
            "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: a}\n---\n"
            "# a comment\napiVersion: v1\nkind: List\n"
            "items:\n- kind: Node\n  metadata:\n    labels: {x: y}\n",
            "state.yaml:11:3",
        ),
        # JSON reads as YAML for the position
        (
            '{"apiVersion": "v1", "kind": "List",\n "items": [\n  {"kind": "Node", "metadata": {"name": ""}}]}\n',
            "state.yaml:3:20",
        ),
    ],
)
def test_a_bad_cluster_state_names_the_line_of_the_wrong_key(tmp_path, text, where):
    """from_file._locate walks the path as findings do (yamlnodes.follow), pointing at the key."""
    state = tmp_path / "state.yaml"
    state.write_text(text)
    result = run_cli(str(tmp_path / "none.yaml"), "--cluster-state", str(state))
    assert result.returncode == 2, result.stderr
    assert f"{tmp_path}/{where}: bad cluster state" in result.stderr and "has no metadata.name" in result.stderr


def test_an_unknown_tag_in_a_state_file_is_a_plain_string_as_kubectl_reads_it():
    """Nothing is ever constructed from a tag: `!!python/object:os.system x` is the string "x" (go-yaml)."""
    state = load_state_text(
        "kind: List\nitems:\n  - kind: Node\n    metadata: {name: !!python/object:os.system x}\n", "state.yaml"
    )
    assert state.nodes is not None and list(state.nodes) == ["x"]


@pytest.mark.parametrize(
    ("manifest", "subject"),
    [
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: gone, containers: [{name: c}]}\n",
            "Pod p would never run; it stays Pending",
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n"
            "  template: {spec: {nodeName: gone, containers: [{name: c}]}}\n",
            "the 3 replicas of Deployment web would never run; each stays Pending",
        ),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: one}\nspec:\n  replicas: 1\n"
            "  template: {spec: {nodeName: gone, containers: [{name: c}]}}\n",
            "the 1 replica of Deployment one would never run; it stays Pending",
        ),
        (
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
            "  template: {spec: {nodeName: gone, containers: [{name: c}]}}\n",
            "the Pods of Job j would never run; each stays Pending",
        ),
    ],
)
def test_unknown_node_speaks_of_one_pod_or_each_replica(manifest: str, subject: str) -> None:
    findings = lint_yaml(manifest, rules=["unknown-node"], cluster=load_state_file(str(STATE)))
    assert len(findings) == 1 and subject in findings[0].message, findings


@pytest.mark.parametrize("where", ["containers", "initContainers", "deployment"])
def test_a_request_on_a_later_container_is_reported_not_a_crash(tmp_path, where):
    """Issue 22: a short resource not requested by the first container (an injected sidecar) made
    request_path raise KeyError; the finding was lost and the run exited 2."""
    sidecar = "- name: sidecar\n  image: busybox:1.37\n"
    hungry = '- name: app\n  image: busybox:1.37\n  resources:\n    requests: {cpu: "5"}\n'
    if where == "initContainers":
        spec = f"nodeName: kind-worker\ninitContainers:\n{sidecar}{hungry}containers:\n{sidecar}"
    else:
        spec = f"nodeName: kind-worker\ncontainers:\n{sidecar}{hungry}"
    if where == "deployment":
        manifest = (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: two\nspec:\n  replicas: 2\n"
            "  selector: {matchLabels: {app: two}}\n  template:\n    metadata: {labels: {app: two}}\n"
            f"    spec:\n{textwrap.indent(spec, '      ')}"
        )
    else:
        manifest = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: two\nspec:\n{textwrap.indent(spec, '  ')}"
    (tmp_path / "two.yaml").write_text(manifest)
    for quiet in ([], ["-q"]):
        result = run_cli(str(tmp_path / "two.yaml"), "--cluster-state", str(STATE), *quiet)
        assert result.returncode == 1, result.stderr
        assert "internal error" not in result.stderr
        assert "insufficient-resources" in result.stdout, result.stdout
        assert "OutOfcpu" in result.stdout


GENERATED_NAMES = """\
apiVersion: batch/v1
kind: Job
metadata:
  generateName: debug-
  namespace: tools
spec:
  template:
    spec:
      nodeName: Bad_Node
      restartPolicy: Never
      containers: [{name: a, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata:
  generateName: probe-
spec:
  nodeName: kind-worker
  containers: [{name: a, image: busybox, resources: {requests: {cpu: "100"}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  namespace: tools
spec:
  template:
    spec:
      nodeName: kind-worker
      containers: [{name: a, image: busybox}]
"""


def test_objects_named_by_generate_name_are_named_in_every_message(tmp_path: Path) -> None:
    """Issue 23: an object named by generateName showed an empty name ("the API server refuses Job  (...)").
    Messages show the prefix the API server completes (`debug-<random>`), an object with no name at all
    `<unnamed>`; JSON keeps name "" and adds generateName, SARIF names the logical location."""
    findings = lint_yaml(GENERATED_NAMES, cluster=load_state_file(str(STATE)))
    by_rule = {(f.rule, f.line): f for f in findings}
    assert "the API server refuses Job debug-<random> (NamespaceLifecycle" in by_rule["missing-namespace", 5].message
    assert "the API server refuses Job debug-<random> itself" in by_rule["invalid-node-name", 9].message
    assert "the Pods of Job debug-<random> skip the scheduler" in by_rule["nodename-in-template", 9].message
    assert by_rule["insufficient-resources", 19].message.startswith("Pod probe-<random> would be rejected")
    assert "the 1 replica of Deployment <unnamed> skips" in by_rule["nodename-in-template", 28].message
    for finding in findings:
        assert finding.object is not None
        named = "debug-<random>" if finding.line < 12 else "probe-<random>" if finding.line < 21 else "<unnamed>"
        assert finding.object.describe().endswith("/" + named if finding.object.namespace else " " + named)
        assert not any(f"{kind}  " in finding.message for kind in ("Job", "Pod", "Deployment")), finding.message

    path = tmp_path / "generated.yaml"
    path.write_text(GENERATED_NAMES)
    result = run_cli(str(path), "--format", "json", "--output-sarif", str(tmp_path / "out.sarif"))
    job = json.loads(result.stdout)["findings"][0]["object"]
    assert job == {"apiVersion": "batch/v1", "kind": "Job", "namespace": "tools", "name": "", "generateName": "debug-"}
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    logical = sarif["runs"][0]["results"][0]["locations"][0]["logicalLocations"][0]
    assert logical["name"] == "debug-<random>" and logical["fullyQualifiedName"] == "Job tools/debug-<random>"
