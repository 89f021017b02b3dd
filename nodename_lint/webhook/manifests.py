"""`nodename-lint webhook manifests`: what installs the webhook in a cluster, as YAML for `kubectl apply -f -`.

A namespace of its own, a ServiceAccount with the least RBAC (get, list and watch on what it reads,
nothing else), a Deployment of two replicas spread over nodes with a PodDisruptionBudget, a Service,
the serving certificate (cert-manager, or a CA bundle given), and the ValidatingWebhookConfiguration:
failurePolicy Ignore, timeoutSeconds 3, sideEffects None, kube-system and its own namespace left out,
and an opt-out label for namespaces and objects. They pass nodename-lint itself (tests/test_webhook_manifests.py).
"""

from __future__ import annotations

import base64
from typing import Any

import yaml

from .. import __version__

NAME = "nodename-lint-webhook"
WEBHOOK_NAME = "validate.nodename-lint.io"
OPT_OUT_LABEL = "nodename-lint.io/webhook"
OPT_OUT_VALUE = "disabled"
TLS_SECRET = f"{NAME}-tls"
TLS_MOUNT = "/etc/nodename-lint/tls"
CONFIG_MOUNT = "/etc/nodename-lint/config"
DEFAULT_NAMESPACE = "nodename-lint"
DEFAULT_IMAGE = f"ghcr.io/nodename-lint/nodename-lint:{__version__}"
PORT = 8443
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/part-of": "nodename-lint"}
# What the webhook reads, and with which verbs: get for the node a review names, list and watch for the state.
READS = (
    ("", "nodes", ("get", "list", "watch")),
    ("", "namespaces", ("list", "watch")),
    ("", "pods", ("list", "watch")),
    ("node.k8s.io", "runtimeclasses", ("list", "watch")),
)
# What it reviews: every kind with a Pod template (on create and update) and Pods (on create: a live Pod's
# nodeName cannot change).
REVIEWS = (
    ("", "v1", ("CREATE",), ("pods",)),
    ("", "v1", ("CREATE", "UPDATE"), ("replicationcontrollers", "podtemplates")),
    ("apps", "v1", ("CREATE", "UPDATE"), ("deployments", "replicasets", "statefulsets", "daemonsets")),
    ("batch", "v1", ("CREATE", "UPDATE"), ("jobs", "cronjobs")),
)


def manifests(namespace: str, image: str, ca_bundle: bytes | None = None, config: str | None = None) -> str:
    """The install manifests as a YAML stream. `ca_bundle`: the PEM of the CA that signed the serving
    certificate (then the Secret `nodename-lint-webhook-tls` is yours to create); without it, cert-manager
    issues the certificate and injects its CA. `config`: a .nodename-lint.yaml to run with (a ConfigMap)."""
    meta = {"name": NAME, "namespace": namespace, "labels": LABELS}
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {OPT_OUT_LABEL: OPT_OUT_VALUE}},
        },
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": NAME, "labels": LABELS},
            "rules": [
                {"apiGroups": [group], "resources": [resource], "verbs": list(verbs)}
                for group, resource, verbs in READS
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": NAME, "labels": LABELS},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}],
        },
    ]
    if config is not None:
        objects.append(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {".nodename-lint.yaml": config}}
        )
    objects += [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {"selector": LABELS, "ports": [{"name": "https", "port": 443, "targetPort": "https"}]},
        },
        _deployment(meta, image, config is not None),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": meta,
            "spec": {"minAvailable": 1, "selector": {"matchLabels": LABELS}},
        },
    ]
    if ca_bundle is None:
        objects += _cert_manager(meta, namespace)
    objects.append(_webhook_configuration(namespace, ca_bundle))
    header = (
        f"# nodename-lint {__version__} admission webhook: kubectl apply -f this file "
        f"({'cert-manager issues its certificate' if ca_bundle is None else f'create the Secret {TLS_SECRET} first'})\n"
    )
    return header + yaml.safe_dump_all(objects, sort_keys=False, explicit_start=True)


def _deployment(meta: dict[str, Any], image: str, with_config: bool) -> dict[str, Any]:
    args = [
        "webhook",
        f"--tls-cert-file={TLS_MOUNT}/tls.crt",
        f"--tls-private-key-file={TLS_MOUNT}/tls.key",
        f"--port={PORT}",
        "--in-cluster",
    ]
    mounts = [{"name": "tls", "mountPath": TLS_MOUNT, "readOnly": True}]
    volumes: list[dict[str, Any]] = [{"name": "tls", "secret": {"secretName": TLS_SECRET}}]
    if with_config:
        args.append(f"--config={CONFIG_MOUNT}/.nodename-lint.yaml")
        mounts.append({"name": "config", "mountPath": CONFIG_MOUNT, "readOnly": True})
        volumes.append({"name": "config", "configMap": {"name": NAME}})
    probe = {"scheme": "HTTPS", "port": "https"}
    container = {
        "name": "webhook",
        "image": image,
        "args": args,
        "ports": [{"name": "https", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {**probe, "path": "/readyz"}, "periodSeconds": 5},
        "livenessProbe": {"httpGet": {**probe, "path": "/healthz"}, "periodSeconds": 10, "failureThreshold": 6},
        # a 5,000-node, 150,000-Pod cluster: about 65 MB, 80 MB serving 200 connections (docs/webhook.md)
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": mounts,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {
                    "serviceAccountName": NAME,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65532,
                        "runAsGroup": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    # the two replicas on two nodes, so that draining one leaves the other answering
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": LABELS},
                        }
                    ],
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


def _cert_manager(meta: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    service = f"{NAME}.{namespace}.svc"
    return [
        {"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": meta, "spec": {"selfSigned": {}}},
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": meta,
            "spec": {
                "secretName": TLS_SECRET,
                "dnsNames": [service, f"{service}.cluster.local"],
                "issuerRef": {"name": NAME, "kind": "Issuer"},
                "privateKey": {"rotationPolicy": "Always"},
            },
        },
    ]


def _webhook_configuration(namespace: str, ca_bundle: bytes | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": NAME, "labels": LABELS}
    client: dict[str, Any] = {"service": {"name": NAME, "namespace": namespace, "path": "/validate", "port": 443}}
    if ca_bundle is None:
        metadata["annotations"] = {"cert-manager.io/inject-ca-from": f"{namespace}/{NAME}"}
    else:
        client["caBundle"] = base64.b64encode(ca_bundle).decode()
    opted_out = {"key": OPT_OUT_LABEL, "operator": "NotIn", "values": [OPT_OUT_VALUE]}
    left_out = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", namespace]}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": metadata,
        "webhooks": [
            {
                "name": WEBHOOK_NAME,
                "admissionReviewVersions": ["v1"],
                "clientConfig": client,
                "rules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": [version],
                        "operations": list(operations),
                        "resources": list(resources),
                        "scope": "Namespaced",
                    }
                    for group, version, operations, resources in REVIEWS
                ],
                "failurePolicy": "Ignore",  # a webhook that is down never blocks an apply
                "matchPolicy": "Equivalent",
                "sideEffects": "None",  # dry-run requests are answered the same way
                "timeoutSeconds": 3,
                "namespaceSelector": {"matchExpressions": [left_out, opted_out]},
                "objectSelector": {"matchExpressions": [opted_out]},
            }
        ],
    }
