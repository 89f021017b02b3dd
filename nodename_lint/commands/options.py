"""Options and helpers the commands share: exit codes, the live-cluster options, --output-FORMAT, usage errors."""

from __future__ import annotations

from typing import Any

import click

from ..clitypes import Duration, complete_contexts
from ..report import FORMATS
from ..safe_text import note
from ..sources import UsageError

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
SEVERITY_CHOICES = ("error", "warning", "info")


def live_options(command: Any) -> Any:
    """The options that point nodename-lint at a live cluster (shared by `lint` and `snapshot`)."""
    for option in reversed(
        [
            click.option(
                "--context",
                "kube_context",
                metavar="NAME",
                shell_complete=complete_contexts,
                help="Read cluster state live from this kubeconfig context.",
            ),
            click.option(
                "--kubeconfig",
                type=click.Path(dir_okay=False),
                help="Kubeconfig file [default: KUBECONFIG, else ~/.kube/config].",
            ),
            click.option("--in-cluster", is_flag=True, help="Use the Pod's service account (inside a cluster)."),
            click.option(
                "--request-timeout",
                type=Duration(minimum=0.1),
                default="5s",
                show_default=True,
                metavar="DURATION",
                help="Longest time one API request may take, connecting to last byte, as kubectl takes it: "
                "5s, 1m, 1m30s, or seconds.",
            ),
            click.option(
                "--max-response-bytes",
                type=click.IntRange(min=1024),
                default=256 << 20,
                show_default=True,
                metavar="BYTES",
                help="Largest API reply read; a bigger one ends the run (exit 2).",
            ),
        ]
    ):
        command = option(command)
    return command


def live_from_flags(
    kube_context: str | None,
    kubeconfig: str | None,
    in_cluster: bool,
    request_timeout: float,
    max_response_bytes: int,
    live: bool = True,
) -> Any:
    """LiveOptions when the user asked for a live cluster, else None (never because KUBECONFIG is set)."""
    if not (live or kube_context or kubeconfig or in_cluster):
        return None
    from ..cluster.live import LiveOptions

    if in_cluster and (kube_context or kubeconfig):
        raise UsageError("--in-cluster cannot be combined with --context or --kubeconfig")
    return LiveOptions(
        kubeconfig=kubeconfig,
        context=kube_context,
        in_cluster=in_cluster,
        request_timeout=request_timeout,
        max_response_bytes=max_response_bytes,
    )


def split_ids(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def format_output_options(command: Any) -> Any:
    """`--output-FORMAT FILE` for every format: one run writes several reports (text here, SARIF there)."""
    for name in reversed(FORMATS):
        command = click.option(
            f"--output-{name}",
            f"output_{name}",
            type=click.Path(dir_okay=False),
            help=f"Write the {name} report to FILE (implies --format {name}).",
        )(command)
    return command


def report_usage_error(exc: UsageError) -> None:
    """One stderr line per problem (a config file may have several), each escaped (safe_text.note)."""
    for line in str(exc).splitlines():
        note(line)


def cluster_from_file(path: str | None, live_options: Any) -> Any:
    """The ClusterState saved in `--cluster-state FILE` (None without the option)."""
    if path is None:
        return None
    if live_options is not None:
        raise UsageError("--cluster-state cannot be combined with --context, --kubeconfig, --live or --in-cluster")
    from ..cluster.from_file import load_state_file

    return kept_until_exit(load_state_file(path))


# Refers to itself: module teardown at exit drops the module's reference, not the list, and the GC
# never visits it once frozen, so what it holds is left to the OS when the process ends.
_KEPT_UNTIL_EXIT: list[Any] = []
_KEPT_UNTIL_EXIT.append(_KEPT_UNTIL_EXIT)


def kept_until_exit(state: Any) -> Any:
    """Keep a loaded cluster state to the end of the process, and do not free it then.

    A command loads one state and exits when done: freeing a 150,000-Pod dump object by object
    cost 0.3 s of CPU (0.03 s for its snapshot), for memory the OS takes back at once.
    """
    import gc

    _KEPT_UNTIL_EXIT.append(state)
    gc.freeze()  # the list and the state: no collection frees them, and none rescans them
    return state
