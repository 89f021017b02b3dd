"""`nodename-lint webhook manifests`: what installs the webhook. Valid Kubernetes objects (the published
JSON schemas, strict, through jsonschema as for every other schema here), clean under nodename-lint itself,
and the least RBAC the webhook needs: every grant used, nothing else."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodename_lint.webhook.manifests import OPT_OUT_LABEL, READS
from tests.apiserver import ApiServer
from tests.conftest import ROOT, run_cli
from tests.webhook import Certs, Client, make_certs, pod, running, wait_for

KUBERNETES = "1.35.0"  # the schemas of the Kubernetes version the project's oracle is built from
CERT_MANAGER_KINDS = {"Issuer", "Certificate"}  # CRDs: no published schema in the package


def objects(*args: str) -> list[dict[str, Any]]:
    result = run_cli("webhook", "manifests", *args)
    assert result.returncode == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def by_kind(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for obj in found}


def granted() -> set[tuple[str, str]]:
    """(verb, resource) pairs of the webhook's ClusterRole."""
    role = by_kind(objects())["ClusterRole"]
    return {(verb, resource) for rule in role["rules"] for verb in rule["verbs"] for resource in rule["resources"]}


def test_the_manifests_pass_nodename_lint_itself(tmp_path: Path) -> None:
    text = run_cli("webhook", "manifests").stdout
    for extra in ([], ["--cluster-state", str(ROOT / "examples" / "cluster" / "state.yaml")]):
        result = run_cli("-", "--fail-on", "info", *extra, stdin=text)
        assert result.returncode == 0 and "No problems found in 10 objects" in result.stdout, result.stdout


@pytest.mark.parametrize("args", [[], ["--ca-bundle", "CA"], ["--namespace", "admission", "--config", "CONFIG"]])
def test_the_manifests_are_valid_kubernetes_objects(tmp_path: Path, args: list[str]) -> None:
    import kubernetes_validate

    (tmp_path / "ca.pem").write_bytes(make_certs(tmp_path).ca.cert_pem.bytes())
    (tmp_path / ".nodename-lint.yaml").write_text("webhook:\n  warn-on: error\n")
    args = [{"CA": str(tmp_path / "ca.pem"), "CONFIG": str(tmp_path / ".nodename-lint.yaml")}.get(a, a) for a in args]
    found = objects(*args)
    checked = 0
    for obj in found:
        if obj["kind"] in CERT_MANAGER_KINDS:
            assert obj["apiVersion"] == "cert-manager.io/v1"
            continue
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)  # raises ValidationError with the path
        checked += 1
    assert checked == len(found) - 2 * ("--ca-bundle" not in args) >= 8
    with pytest.raises(kubernetes_validate.ValidationError):  # the check can fail: strict refuses a stray field
        deployment = by_kind(found)["Deployment"]
        kubernetes_validate.validate(
            {**deployment, "spec": {**deployment["spec"], "replica": 2}}, KUBERNETES, strict=True
        )


def test_the_webhook_configuration_is_as_documented() -> None:
    found = by_kind(objects())
    configuration = found["ValidatingWebhookConfiguration"]
    [webhook] = configuration["webhooks"]
    assert webhook["failurePolicy"] == "Ignore" and webhook["timeoutSeconds"] == 3
    assert webhook["sideEffects"] == "None" and webhook["admissionReviewVersions"] == ["v1"]
    expressions = webhook["namespaceSelector"]["matchExpressions"]
    assert {
        "key": "kubernetes.io/metadata.name",
        "operator": "NotIn",
        "values": ["kube-system", "nodename-lint"],
    } in expressions
    assert {"key": OPT_OUT_LABEL, "operator": "NotIn", "values": ["disabled"]} in expressions
    assert webhook["objectSelector"]["matchExpressions"] == [
        {"key": OPT_OUT_LABEL, "operator": "NotIn", "values": ["disabled"]}
    ]
    assert webhook["clientConfig"]["service"] == {
        "name": "nodename-lint-webhook",
        "namespace": "nodename-lint",
        "path": "/validate",
        "port": 443,
    }
    reviewed = {
        (r["apiGroups"][0], resource, tuple(r["operations"])) for r in webhook["rules"] for resource in r["resources"]
    }
    assert ("", "pods", ("CREATE",)) in reviewed and ("apps", "deployments", ("CREATE", "UPDATE")) in reviewed
    assert configuration["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "nodename-lint/nodename-lint-webhook"
    }
    assert found["Certificate"]["spec"]["secretName"] == "nodename-lint-webhook-tls"
    assert "nodename-lint-webhook.nodename-lint.svc" in found["Certificate"]["spec"]["dnsNames"]
    deployment = found["Deployment"]
    assert deployment["spec"]["replicas"] == 2
    assert found["PodDisruptionBudget"]["spec"] == {"minAvailable": 1, "selector": deployment["spec"]["selector"]}
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][:2] == ["webhook", "--tls-cert-file=/etc/nodename-lint/tls/tls.crt"]
    assert "--in-cluster" in container["args"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert found["Service"]["spec"]["ports"] == [{"name": "https", "port": 443, "targetPort": "https"}]
    assert found["ServiceAccount"]["metadata"]["name"] == deployment["spec"]["template"]["spec"]["serviceAccountName"]


def test_a_given_ca_bundle_replaces_cert_manager(tmp_path: Path) -> None:
    ca = make_certs(tmp_path).ca.cert_pem.bytes()
    (tmp_path / "ca.pem").write_bytes(ca)
    found = objects("--ca-bundle", str(tmp_path / "ca.pem"), "--namespace", "admission")
    kinds = [obj["kind"] for obj in found]
    assert "Certificate" not in kinds and "Issuer" not in kinds
    configuration = by_kind(found)["ValidatingWebhookConfiguration"]
    assert base64.b64decode(configuration["webhooks"][0]["clientConfig"]["caBundle"]) == ca
    assert "annotations" not in configuration["metadata"]
    assert all(obj["metadata"].get("namespace") in (None, "admission") for obj in found)
    (tmp_path / "not.pem").write_text("hello")
    for bad in (["--ca-bundle", str(tmp_path / "not.pem")], ["--namespace", "Bad_NS"]):
        result = run_cli("webhook", "manifests", *bad)
        assert result.returncode == 2 and "Traceback" not in result.stderr and result.stdout == ""


def test_a_config_goes_in_a_configmap_checked_first(tmp_path: Path) -> None:
    config = tmp_path / ".nodename-lint.yaml"
    config.write_text("webhook:\n  deny: [unknown-node]\n")
    found = by_kind(objects("--config", str(config)))
    assert found["ConfigMap"]["data"] == {".nodename-lint.yaml": "webhook:\n  deny: [unknown-node]\n"}
    [container] = found["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert "--config=/etc/nodename-lint/config/.nodename-lint.yaml" in container["args"]
    config.write_text("webhook:\n  deny: [unknown-nodes]\n")
    result = run_cli("webhook", "manifests", "--config", str(config))
    assert result.returncode == 2 and "unknown rule id 'unknown-nodes'" in result.stderr


def test_the_role_is_least_privilege() -> None:
    assert {verb for verb, _ in granted()} <= {"get", "list", "watch"}
    assert granted() == {(verb, resource) for _, resource, verbs in READS for verb in verbs}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


def _serve_with(certs: Certs, kubeconfig: Path, api_server: ApiServer) -> tuple[bool, bool, bool]:
    """With the RBAC the server allows now: (every kind readable, a missing node denied, a new node allowed)."""
    from nodename_lint.cluster.connection import LiveOptions
    from tests.apiserver import kind_node
    from tests.apiserver.server import Store

    live = LiveOptions(kubeconfig=str(kubeconfig), request_timeout=2.0)
    with running(certs, live=live, watch={"watch_seconds": (5, 6), "backoff": (0.05, 0.1)}) as served:
        cluster = served.reviewer.cluster
        wait_for(lambda: cluster.ready() and all(s.synced or s.refused for s in cluster.statuses.values()))
        time.sleep(0.3)  # a watch refused after its list
        # a node the watch never tells of: only the GET finds it
        api_server.stores["nodes"] = Store("nodes", [*api_server.stores["nodes"].objects, kind_node("joined", index=7)])
        client = Client(served.port, certs)
        readable = not any(status.refused for status in cluster.statuses.values())
        return (
            readable,
            client.answer(pod("ghost", "kind-wroker"))["allowed"] is False,
            client.answer(pod("new", "joined"))["allowed"] is True
            and "warnings" not in client.answer(pod("new2", "joined")),
        )


def test_the_role_is_enough(certs: Certs, kubeconfig: Path, api_server: ApiServer) -> None:
    api_server.allowed = granted()
    assert _serve_with(certs, kubeconfig, api_server) == (True, True, True)
    assert api_server.methods == {"GET"}


@pytest.mark.parametrize("missing", sorted(granted()))
def test_every_grant_is_needed(certs: Certs, kubeconfig: Path, api_server: ApiServer, missing: tuple[str, str]) -> None:
    api_server.allowed = granted() - {missing}
    assert _serve_with(certs, kubeconfig, api_server) != (True, True, True)
