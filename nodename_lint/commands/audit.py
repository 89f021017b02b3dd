"""`nodename-lint audit`: the rules over a running cluster's objects (live or saved)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..report import FORMATS
from ..sources import UsageError
from .options import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    EXIT_USAGE,
    SEVERITY_CHOICES,
    format_output_options,
    live_from_flags,
    live_options,
    report_usage_error,
    split_ids,
)
from .reports import write_reports

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


@click.command("audit")
@click.option(
    "--cluster-state",
    "cluster_state",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Audit a saved cluster: `kubectl get nodes,namespaces,pods,deployments,statefulsets,daemonsets,"
    "replicasets,jobs,cronjobs -A -o yaml --show-managed-fields` or `snapshot --workloads`.",
)
@live_options
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS), help="Output format (repeatable).")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE instead of stdout."
)
@format_output_options
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITY_CHOICES),
    default=None,
    help="Lowest severity that makes the exit code 1 [default: error].",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Config file [default: .nodename-lint.yaml here or in a parent].",
)
@click.option("--select", multiple=True, help="Run only these rule ids (comma-separated, repeatable).")
@click.option("--ignore", multiple=True, help="Do not run these rule ids (comma-separated, repeatable).")
@click.option(
    "--color/--no-color", default=None, help="Colour the text output [default: on a terminal, unless NO_COLOR is set]."
)
def audit_command(
    cluster_state: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    in_cluster: bool,
    request_timeout: float,
    max_response_bytes: int,
    formats: tuple[str, ...],
    output: str | None,
    fail_on: str | None,
    config_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    color: bool | None,
    **format_outputs: str | None,
) -> None:
    """Audit a running cluster: Pods pinned by hand, orphaned on a missing node or rejected by the kubelet."""
    outputs = {name: path for name in FORMATS if (path := format_outputs[f"output_{name}"])}
    try:
        from ..config import find_config, load_config, resolve_severities
        from ..registry import all_rules
        from ..rule import SEVERITY_RANK

        live = live_from_flags(kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live=False)
        objects = _audit_objects(cluster_state, live, request_timeout, max_response_bytes)
        catalogue = all_rules()
        if config_path is not None and not os.path.isfile(config_path):
            raise UsageError(f"{config_path}: no such config file")
        config = load_config(config_path or find_config(), list(catalogue))
        severities = resolve_severities(catalogue, config, split_ids(select), split_ids(ignore))
        from ..audit import run_audit

        result = run_audit(objects, severities)
        write_reports(result, list(formats) or ["text"], output, outputs, color)
        threshold = SEVERITY_RANK[fail_on or config.fail_on or "error"]
        code = EXIT_FINDINGS if any(SEVERITY_RANK[f.severity] >= threshold for f in result.findings) else EXIT_CLEAN
    except UsageError as exc:
        report_usage_error(exc)
        code = EXIT_USAGE
    sys.exit(code)


def _audit_objects(cluster_state: str | None, live: Any, request_timeout: float, max_response_bytes: int) -> Any:
    """The cluster objects to audit: from `--cluster-state FILE`, else live (without options: the current context)."""
    if cluster_state is not None:
        if live is not None:
            raise UsageError("--cluster-state cannot be combined with --context, --kubeconfig or --in-cluster")
        from ..cluster.workloads import load_objects_file

        return load_objects_file(cluster_state)
    from ..cluster.live import LiveCluster, LiveOptions
    from ..cluster.workloads import read_live

    return read_live(
        LiveCluster(live or LiveOptions(request_timeout=request_timeout, max_response_bytes=max_response_bytes))
    )
