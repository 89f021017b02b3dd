"""`nodename-lint audit`: the rules over a running cluster's objects (live or saved)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..safe_text import silence_informational_notes
from ..sources import UsageError
from .help import SectionedCommand
from .options import (
    CLUSTER_OPTIONS,
    EXIT_CLEAN,
    EXIT_FINDINGS,
    EXIT_OPTIONS,
    EXIT_USAGE,
    OUTPUT_OPTIONS,
    RULE_OPTIONS,
    exit_options,
    live_from_flags,
    live_options,
    outputs_of,
    report_options,
    report_usage_error,
    rule_options,
    selected_rules,
)
from .reports import TextOptions, check_destinations, write_reports

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


SECTIONS = {
    "Cluster": CLUSTER_OPTIONS,
    "Output": OUTPUT_OPTIONS,
    "Exit code": EXIT_OPTIONS,
    "Rules": RULE_OPTIONS,
}
EXAMPLES = (
    ("nodename-lint audit", "the current kubeconfig context"),
    ("nodename-lint audit --context prod", "another context"),
    ("nodename-lint audit --cluster-state dump.yaml", "a saved cluster (snapshot --workloads)"),
    ("nodename-lint audit -q --exit-zero --statistics", "a scheduled job: counts, never fails"),
    ("nodename-lint audit --output-sarif audit.sarif", "text, and SARIF to a file"),
)


@click.command(
    "audit",
    cls=SectionedCommand,
    sections=SECTIONS,
    examples=EXAMPLES,
    docs="audit.md",
    short_help="Audit a running cluster's own objects.",
)
@click.option(
    "--cluster-state",
    "cluster_state",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Audit a saved cluster: `kubectl get nodes,namespaces,pods,deployments,statefulsets,daemonsets,"
    "replicasets,jobs,cronjobs -A -o yaml --show-managed-fields` or `snapshot --workloads`.",
)
@live_options
@report_options
@exit_options
@rule_options("Config file [default: .nodename-lint.yaml here or in a parent].")
def audit_command(
    cluster_state: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    in_cluster: bool,
    request_timeout: float,
    max_response_bytes: int,
    formats: tuple[str, ...],
    output: str | None,
    color: bool | None,
    quiet: bool,
    statistics: bool,
    fail_on: str | None,
    exit_zero: bool,
    config_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    **format_outputs: str | None,
) -> None:
    """Audit a running cluster: Pods pinned by hand, orphaned on a missing node or rejected by the kubelet."""
    outputs = outputs_of(format_outputs)
    if quiet:
        silence_informational_notes()
    try:
        from ..config import find_config, load_config, resolve_severities
        from ..registry import all_rules
        from ..rule import SEVERITY_RANK

        selected, ignored = selected_rules(select, ignore)
        check_destinations(list(formats) or ["text"], output, outputs)
        live = live_from_flags(kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live=False)
        objects = _audit_objects(cluster_state, live, request_timeout, max_response_bytes)
        catalogue = all_rules()
        if config_path is not None and not os.path.isfile(config_path):
            raise UsageError(f"{config_path}: no such config file")
        config = load_config(config_path or find_config(), list(catalogue))
        severities = resolve_severities(catalogue, config, selected, ignored)
        from ..audit import run_audit

        result = run_audit(objects, severities)
        text = TextOptions(quiet=quiet, statistics=statistics)
        write_reports(result, list(formats) or ["text"], output, outputs, color, text)
        threshold = SEVERITY_RANK[fail_on or config.fail_on or "error"]
        failing = any(SEVERITY_RANK[finding.severity] >= threshold for finding in result.findings)
        code = EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN
    except UsageError as exc:
        report_usage_error(exc, cluster_state)
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
