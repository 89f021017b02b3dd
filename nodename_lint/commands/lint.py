"""`nodename-lint lint [PATH]...` (the default command): its options, handed to run.run_lint."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..safe_text import silence_informational_notes
from ..sources import UsageError, refuse_link_out_of_repository
from .help import SectionedCommand
from .options import (
    CLUSTER_OPTIONS,
    EXIT_OPTIONS,
    EXIT_USAGE,
    OUTPUT_OPTIONS,
    RULE_OPTIONS,
    cluster_from_file,
    exit_options,
    live_from_flags,
    live_options,
    outputs_of,
    report_options,
    report_usage_error,
    rule_options,
    selected_rules,
)
from .reports import TextOptions
from .run import HelmFlags, run_lint

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


SECTIONS = {
    "Output": (*OUTPUT_OPTIONS, "show_source", "changed_since"),
    "Exit code": (*EXIT_OPTIONS, "fail_if_no_objects_found"),
    "Rules": RULE_OPTIONS,
    "Cluster (the cluster rules need one)": CLUSTER_OPTIONS,
    "Helm charts and kustomizations": ("helm_values", "helm_release", "helm_namespace"),
    "Fix": ("fix", "diff"),
    "Input": ("namespace", "static_pod_dirs", "static_pod_node", "jobs", "max_document_size", "max_nodes"),
}
EXAMPLES = (
    ("nodename-lint deploy/", "offline; no PATH: the current folder"),
    ("nodename-lint deploy/ --context kind-kind", "and a live cluster, read-only"),
    ("nodename-lint deploy/ --cluster-state state.yaml", "or a saved one"),
    ("nodename-lint charts/ overlays/", "Helm charts, kustomizations"),
    ("helm template . | nodename-lint -", "standard input"),
    ("nodename-lint deploy/ --diff", "what --fix would change"),
    ("nodename-lint . -q --fail-on warning", "CI: findings only"),
    ("nodename-lint . --output-sarif out.sarif", "text, and SARIF to a file"),
)


@click.command(
    "lint",
    cls=SectionedCommand,
    sections=SECTIONS,
    examples=EXAMPLES,
    short_help="Lint manifests (the default command).",
)
# readable=False: click would refuse the whole run for one unreadable file; the engine reports it as a
# finding at its line 1 and lints the others.
@click.argument("paths", nargs=-1, type=click.Path(readable=False), metavar="[PATH]...")
@report_options
@click.option("--show-source", is_flag=True, help="Text output: show the offending line with a caret under the column.")
@click.option(
    "--changed-since",
    metavar="REF",
    default=None,
    help="Report only findings in files changed since git REF (committed or not).",
)
@exit_options
@click.option(
    "--fail-if-no-objects-found",
    is_flag=True,
    help="Exit with 1 when the paths hold no Kubernetes object (a wrong path in CI); without it, only a warning.",
)
@rule_options("Config file [default: the .nodename-lint.yaml nearest to each PATH, else here or in a parent].")
@click.option(
    "--cluster-state",
    "cluster_state",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Cluster state saved by `kubectl get nodes,namespaces,pods -A -o yaml` "
    "(or -o json, or `nodename-lint snapshot`).",
)
@click.option("--live", is_flag=True, help="Read cluster state from the current kubeconfig context.")
@click.option("--offline", is_flag=True, help="Read no cluster (the default, except as `kubectl nodename-lint`).")
@click.option(
    "--helm-values",
    "helm_values",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True),
    metavar="FILE",
    help="Values file for every Helm chart linted, after its values.yaml (repeatable, like helm template -f).",
)
@click.option(
    "--helm-release",
    default=None,
    metavar="NAME",
    help="Release name charts are rendered with [default: release-name].",
)
@click.option(
    "--helm-namespace",
    default=None,
    metavar="NS",
    help="Namespace charts are rendered in [default: --namespace, else default].",
)
@click.option("--fix", is_flag=True, help="Fix what can be fixed in the files, then report what remains.")
@click.option("--diff", is_flag=True, help="Print a unified diff of what --fix would change; write nothing.")
@click.option(
    "--namespace",
    "-n",
    default=None,
    metavar="NS",
    help="Namespace for objects that do not set one [default: default].",
)
@click.option(
    "--static-pod-dir",
    "static_pod_dirs",
    multiple=True,
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="A kubelet staticPodPath folder; its files are checked as static Pods (repeatable).",
)
@click.option(
    "--static-pod-node",
    metavar="NAME",
    default=None,
    help="The node whose kubelet reads the static Pod folders: their Pods are checked against it.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Worker processes [default: one per core for large inputs (2 MB or more), else 1].",
)
@click.option(
    "--max-document-size",
    type=click.IntRange(min=1),
    default=None,
    metavar="BYTES",
    help="Largest document read; a List's items count each [default: 3145728, the API server's 3 MiB].",
)
@click.option(
    "--max-nodes",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Most YAML nodes a document may hold or expand to through aliases [default: 1000000].",
)
@live_options
def lint_command(
    paths: tuple[str, ...],
    formats: tuple[str, ...],
    output: str | None,
    fail_on: str | None,
    config_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    namespace: str | None,
    static_pod_dirs: tuple[str, ...],
    static_pod_node: str | None,
    color: bool | None,
    changed_since: str | None,
    live: bool,
    kube_context: str | None,
    kubeconfig: str | None,
    in_cluster: bool,
    request_timeout: float,
    max_response_bytes: int,
    fix: bool,
    diff: bool,
    jobs: int | None,
    cluster_state: str | None,
    exit_zero: bool,
    fail_if_no_objects_found: bool,
    statistics: bool,
    quiet: bool,
    show_source: bool,
    offline: bool,
    helm_values: tuple[str, ...],
    helm_release: str | None,
    helm_namespace: str | None,
    max_document_size: int | None,
    max_nodes: int | None,
    **format_outputs: str | None,
) -> None:
    """Lint manifests in PATH... (files, folders, `-` for stdin; default: the current folder)."""
    outputs = outputs_of(format_outputs)
    if quiet:
        silence_informational_notes()
    try:
        if offline and (live or kube_context or kubeconfig or in_cluster or cluster_state):
            raise UsageError(
                "--offline cannot be combined with --cluster-state, --context, --kubeconfig, --live or --in-cluster"
            )
        selected, ignored = selected_rules(select, ignore)
        live_options = live_from_flags(kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live)
        code = run_lint(
            live=live_options,
            cluster=cluster_from_file(cluster_state, live_options),
            cluster_state=cluster_state,
            paths=list(paths) or ["."],
            formats=list(formats) or ["text"],
            output=output,
            fail_on=fail_on,
            config_path=config_path,
            select=selected,
            ignore=ignored,
            namespace=namespace,
            static_pod_dirs=list(static_pod_dirs),
            color=color,
            outputs=outputs,
            changed_since=changed_since,
            fix=fix,
            diff=diff,
            jobs=jobs,
            text=TextOptions(quiet=quiet, statistics=statistics, show_source=show_source),
            static_pod_node=static_pod_node,
            helm=HelmFlags(values_from_flags(helm_values), helm_release, helm_namespace),
            limits=limits_from_flags(max_document_size, max_nodes),
            exit_zero=exit_zero,
            fail_if_no_objects=fail_if_no_objects_found,
        )
    except UsageError as exc:
        report_usage_error(exc, cluster_state)
        code = EXIT_USAGE
    sys.exit(code)


def values_from_flags(helm_values: tuple[str, ...]) -> tuple[str, ...]:
    """--helm-values as absolute paths; a file reached through a symlink out of the repository holding it is
    refused: the flag is the user's, but the link is the repository's (`values.yaml -> ~/.kube/config`)."""
    for path in helm_values:
        refuse_link_out_of_repository(path, "--helm-values")
    return tuple(os.path.abspath(path) for path in helm_values)


def limits_from_flags(max_document_size: int | None, max_nodes: int | None) -> Any:
    """The documents.Limits of the options (their defaults where not given)."""
    from ..documents import DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_NODES, Limits

    return Limits(max_document_size or DEFAULT_MAX_DOCUMENT_BYTES, max_nodes or DEFAULT_MAX_NODES)
