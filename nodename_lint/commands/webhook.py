"""`nodename-lint webhook`: the rules at admission time (an HTTPS validating admission webhook), and
`nodename-lint webhook manifests`: what installs it."""

from __future__ import annotations

import sys

import click

from ..sources import UsageError
from .options import EXIT_USAGE, cluster_from_file, live_from_flags, live_options, report_usage_error

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): the
# server, the watches and prometheus_client load only when the webhook runs.


@click.group("webhook", invoke_without_command=True)
@click.option("--tls-cert-file", metavar="FILE", type=click.Path(dir_okay=False), help="The serving certificate (PEM).")
@click.option("--tls-private-key-file", metavar="FILE", type=click.Path(dir_okay=False), help="Its private key (PEM).")
@click.option("--port", type=click.IntRange(1, 65535), default=8443, show_default=True, help="The HTTPS port.")
@click.option(
    "--bind-address", default="", metavar="ADDRESS", help="The address to listen on [default: every address]."
)
@live_options
@click.option(
    "--cluster-state",
    "cluster_state",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Serve a fixed cluster state from this file instead of watching a cluster (tests, air-gapped trials).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Config file (its `rules` and `webhook` sections) [default: .nodename-lint.yaml here or in a parent].",
)
@click.pass_context
def webhook_command(
    ctx: click.Context,
    tls_cert_file: str | None,
    tls_private_key_file: str | None,
    port: int,
    bind_address: str,
    kube_context: str | None,
    kubeconfig: str | None,
    in_cluster: bool,
    request_timeout: float,
    max_response_bytes: int,
    cluster_state: str | None,
    config_path: str | None,
) -> None:
    """Serve AdmissionReviews over HTTPS: deny what the rules say can never work, warn about the rest.

    The cluster state comes from --context, --kubeconfig or --in-cluster (kept current by watches) or
    --cluster-state FILE. `nodename-lint webhook manifests` prints what installs it (docs/webhook.md).
    """
    if ctx.invoked_subcommand is not None:
        return
    try:
        if not tls_cert_file or not tls_private_key_file:
            raise UsageError("the webhook serves HTTPS only: give --tls-cert-file and --tls-private-key-file")
        live = live_from_flags(kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live=False)
        if live is None and cluster_state is None:
            raise UsageError(
                "say which cluster the webhook checks against: --context NAME, --kubeconfig FILE, --in-cluster, "
                "or --cluster-state FILE"
            )
        from ..config import find_config, load_config, resolve_severities
        from ..registry import all_rules
        from ..webhook.app import WebhookOptions, serve

        state = cluster_from_file(cluster_state, live)
        config = load_config(config_path or find_config("."), list(all_rules()))
        severities = resolve_severities(all_rules(), config, [], [])
        options = WebhookOptions(tls_cert_file, tls_private_key_file, port, bind_address, live, state)
        serve(options, config, severities)
    except UsageError as exc:
        report_usage_error(exc)
        sys.exit(EXIT_USAGE)


@webhook_command.command("manifests")
@click.option("--namespace", "-n", default="nodename-lint", show_default=True, help="The webhook's own namespace.")
@click.option("--image", default=None, metavar="IMAGE", help="The container image [default: the release's].")
@click.option(
    "--ca-bundle",
    type=click.Path(dir_okay=False, exists=True),
    metavar="FILE",
    help="PEM of the CA that signed the serving certificate (you create the Secret) [default: cert-manager].",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True),
    metavar="FILE",
    help="A .nodename-lint.yaml to run the webhook with (checked, then put in a ConfigMap).",
)
def manifests_command(namespace: str, image: str | None, ca_bundle: str | None, config_path: str | None) -> None:
    """Print the manifests that install the webhook (kubectl apply -f -)."""
    from ..config import load_config
    from ..podspec import is_dns1123_label
    from ..registry import all_rules
    from ..webhook.manifests import DEFAULT_IMAGE, manifests

    try:
        if not is_dns1123_label(namespace):
            raise UsageError(f"--namespace {namespace!r} is not a valid namespace name (a DNS-1123 label)")
        bundle = None
        if ca_bundle is not None:
            with open(ca_bundle, "rb") as handle:
                bundle = handle.read()
            if b"-----BEGIN CERTIFICATE-----" not in bundle:
                raise UsageError(f"--ca-bundle {ca_bundle}: not a PEM file with a CERTIFICATE")
        config = None
        if config_path is not None:
            load_config(config_path, list(all_rules()))  # a mistake is the command's, not the webhook's at start
            with open(config_path, encoding="utf-8-sig") as handle:
                config = handle.read()
    except OSError as exc:
        report_usage_error(UsageError(f"cannot read {exc.filename}: {exc.strerror}"))
        sys.exit(EXIT_USAGE)
    except UsageError as exc:
        report_usage_error(exc)
        sys.exit(EXIT_USAGE)
    sys.stdout.write(manifests(namespace, image or DEFAULT_IMAGE, bundle, config))
