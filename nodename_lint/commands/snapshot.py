"""`nodename-lint snapshot`: save what the cluster rules (or, with --workloads, audit) read."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..safe_text import note
from ..sources import UsageError
from ..writing import write_output
from .options import EXIT_USAGE, cluster_from_file, live_from_flags, live_options, report_usage_error

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


@click.command("snapshot", short_help="Save a cluster's state for --cluster-state.")
@live_options
@click.option(
    "--cluster-state",
    "cluster_state",
    type=click.Path(dir_okay=False),
    metavar="DUMP",
    help="Convert this saved cluster state (a kubectl dump) instead of reading a live cluster.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the snapshot to FILE [default: stdout].",
)
@click.option(
    "--workloads",
    is_flag=True,
    help="Save every Pod (Failed ones too) and the workloads instead, for `audit --cluster-state FILE`.",
)
def snapshot_command(
    kube_context: str | None,
    kubeconfig: str | None,
    in_cluster: bool,
    request_timeout: float,
    max_response_bytes: int,
    cluster_state: str | None,
    output: str | None,
    workloads: bool,
) -> None:
    """Save what the cluster rules read (nodes, namespaces, usage per node, Pods) for --cluster-state."""
    from ..cluster.snapshot import snapshot_text

    try:
        live_options = live_from_flags(
            kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live=cluster_state is None
        )
        if cluster_state is not None:
            if workloads:
                raise UsageError("--workloads reads a live cluster: it cannot be combined with --cluster-state")
            state = cluster_from_file(cluster_state, live_options)
            source = state.source
        else:
            from ..cluster.live import LiveCluster

            live = LiveCluster(live_options)
            if workloads:
                _snapshot_workloads(live, output)
                return
            state = live.snapshot()
            source = live.source
        text = snapshot_text(state, source)
        if output:
            write_output(output, text, "snapshot")
        else:
            sys.stdout.write(text)
    except OSError as exc:
        note(f"{output}: cannot write the snapshot: {exc.strerror or exc}")
        sys.exit(EXIT_USAGE)
    except UsageError as exc:
        report_usage_error(exc, cluster_state)
        sys.exit(EXIT_USAGE)
    if output:
        note(
            f"wrote {output} from {source}: {len(state.nodes or ())} nodes, "
            f"{len(state.namespaces or ())} namespaces, {len(state.pods or ())} Pods"
        )


def _snapshot_workloads(live: Any, output: str | None) -> None:
    """`snapshot --workloads`: what audit reads; an RBAC denial fails it rather than write a partial copy."""
    from ..cluster.live import ClusterUnavailable
    from ..cluster.workloads import KIND_RESOURCES, read_live, write_workload_snapshot

    found = read_live(live, keep_all=True)
    if found.unavailable:
        raise ClusterUnavailable(f"cannot snapshot {found.source}: {next(iter(found.unavailable.values()))}")
    write_workload_snapshot(found, output)
    if output:
        counts = ", ".join(f"{len(found.of(kind))} {resource}" for kind, resource in KIND_RESOURCES.items())
        note(f"wrote {output} from {found.source}: {counts}")
