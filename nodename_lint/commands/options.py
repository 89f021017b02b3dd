"""Options and helpers the commands share: exit codes, the live-cluster options, --output-FORMAT, usage errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..clitypes import Duration, complete_contexts, complete_rule_ids
from ..report import FORMATS
from ..safe_text import note
from ..sources import DamagedState, UsageError

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
SEVERITY_CHOICES = ("error", "warning", "info")


# The parameters of the shared options, by --help section (commands/help.py).
OUTPUT_OPTIONS = ("formats", "output", *(f"output_{name}" for name in FORMATS), "color", "quiet", "statistics")
EXIT_OPTIONS = ("fail_on", "exit_zero")
RULE_OPTIONS = ("config_path", "select", "ignore")
CLUSTER_OPTIONS = (
    "cluster_state",
    "kube_context",
    "kubeconfig",
    "live",
    "in_cluster",
    "offline",
    "request_timeout",
    "max_response_bytes",
)


def live_options(command: Any) -> Any:
    """The options that point nodename-lint at a live cluster (shared by `lint` and `snapshot`)."""
    options: list[Callable[[Any], Any]] = [
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
    return apply_options(command, options)


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


def selected_rules(select: tuple[str, ...], ignore: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """--select and --ignore as id lists; a rule named by both is a mistake, not a run of nothing."""
    selected, ignored = split_ids(select), split_ids(ignore)
    both = [rule for rule in dict.fromkeys(selected) if rule in ignored]
    if both:
        raise UsageError(
            f"--select and --ignore both name {', '.join(both)}: the rule would not run; "
            "keep it in one of them (--ignore removes rules from what --select or the config selects)"
        )
    return selected, ignored


def report_options(command: Any) -> Any:
    """Where the report goes and how the text report looks (shared by `lint` and `audit`)."""
    options: list[Callable[[Any], Any]] = [
        click.option(
            "--format", "formats", multiple=True, type=click.Choice(FORMATS), help="Output format (repeatable)."
        ),
        click.option(
            "--output",
            "-o",
            type=click.Path(dir_okay=False, writable=True),
            help="Write the report to FILE instead of stdout.",
        ),
        format_output_options,
        click.option(
            "--color/--no-color",
            default=None,
            help="Colour the text output [default: on a terminal, unless NO_COLOR is set].",
        ),
        click.option(
            "--quiet",
            "-q",
            is_flag=True,
            help="Text output: only the findings, no summary and no skipped-rules line.",
        ),
        click.option(
            "--statistics",
            is_flag=True,
            help="Text output: one `COUNT RULE SUMMARY` line per rule instead of each finding.",
        ),
    ]
    return apply_options(command, options)


def exit_options(command: Any) -> Any:
    """What makes the exit code 1 (shared by `lint` and `audit`)."""
    command = click.option(
        "--exit-zero", is_flag=True, help="Exit with 0 even when there are findings (2 still means a usage error)."
    )(command)
    return click.option(
        "--fail-on",
        type=click.Choice(SEVERITY_CHOICES),
        default=None,
        help="Lowest severity that makes the exit code 1 [default: error].",
    )(command)


def rule_options(config_help: str) -> Any:
    """--config, --select and --ignore (shared by `lint` and `audit`; CONFIG_HELP says which file is found)."""

    options = [
        click.option("--config", "config_path", type=click.Path(dir_okay=False), help=config_help),
        click.option(
            "--select",
            multiple=True,
            metavar="IDS",
            shell_complete=complete_rule_ids,
            help="Run only these rule ids (comma-separated, repeatable).",
        ),
        click.option(
            "--ignore",
            multiple=True,
            metavar="IDS",
            shell_complete=complete_rule_ids,
            help="Do not run these rule ids (comma-separated, repeatable).",
        ),
    ]
    return lambda command: apply_options(command, options)


def apply_options(command: Any, options: list[Callable[[Any], Any]]) -> Any:
    """COMMAND with OPTIONS, in help order (decorators apply bottom-up)."""
    for option in reversed(options):
        command = option(command)
    return command


def outputs_of(format_outputs: dict[str, str | None]) -> dict[str, str]:
    """The --output-FORMAT files given, by format."""
    return {name: file for name in FORMATS if (file := format_outputs[f"output_{name}"])}


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


def report_usage_error(exc: UsageError, state_file: str | None = None) -> None:
    """One stderr line per problem (a config file may have several), each escaped (safe_text.note); damage a
    rule found in `--cluster-state FILE` (`state_file`) names the file."""
    text = str(exc)
    if isinstance(exc, DamagedState) and state_file is not None:
        text = f"{state_file}: not a valid cluster state: {text}"
    for line in text.splitlines():
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
