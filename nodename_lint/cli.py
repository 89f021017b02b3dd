"""Command line: `nodename-lint [PATH]...`, plus `rules`, `explain RULE` and `snapshot`."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from . import __version__
from .report import FORMATS
from .sources import UsageError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
SEVERITY_CHOICES = ("error", "warning", "info")


class DefaultToLint(click.Group):
    """A group whose default command is `lint`: `nodename-lint deploy/` means `nodename-lint lint deploy/`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["lint", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultToLint, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nodename-lint")
def main() -> None:
    """Lint Kubernetes manifests for what the cluster will do with spec.nodeName.

    Run `nodename-lint [PATH]...` (the `lint` command); `nodename-lint rules` lists the rules.
    """


def live_options(command: Any) -> Any:
    """The options that point nodename-lint at a live cluster (shared by `lint` and `snapshot`)."""
    for option in reversed([
        click.option("--context", "kube_context", metavar="NAME", help="Read cluster state live from this kubeconfig context."),
        click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig file [default: KUBECONFIG, else ~/.kube/config]."),
        click.option("--in-cluster", is_flag=True, help="Use the Pod's service account (inside a cluster)."),
        click.option("--request-timeout", type=click.FloatRange(min=0.1), default=5.0, show_default=True, metavar="SECONDS",
                     help="Connect and read timeout of each API request."),
    ]):
        command = option(command)
    return command


def _live(kube_context: str | None, kubeconfig: str | None, in_cluster: bool, request_timeout: float,
          live: bool = True) -> Any:
    """LiveOptions when the user asked for a live cluster, else None (never because KUBECONFIG is set)."""
    if not (live or kube_context or kubeconfig or in_cluster):
        return None
    from .cluster.live import LiveOptions

    if in_cluster and (kube_context or kubeconfig):
        raise UsageError("--in-cluster cannot be combined with --context or --kubeconfig")
    return LiveOptions(kubeconfig=kubeconfig, context=kube_context, in_cluster=in_cluster, request_timeout=request_timeout)


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _format_output_options(command: Any) -> Any:
    """`--output-FORMAT FILE` for every format: one run writes several reports (text here, SARIF there)."""
    for name in reversed(FORMATS):
        command = click.option(
            f"--output-{name}", f"output_{name}", type=click.Path(dir_okay=False),
            help=f"Write the {name} report to FILE (implies --format {name}).",
        )(command)
    return command


@main.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS), help="Output format (repeatable).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE instead of stdout.")
@_format_output_options
@click.option("--changed-since", metavar="REF", default=None, help="Report only findings in files changed since git REF (committed or not).")
@click.option("--fail-on", type=click.Choice(SEVERITY_CHOICES), default=None, help="Lowest severity that makes the exit code 1 [default: error].")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Config file [default: .nodename-lint.yaml here or in a parent].")
@click.option("--select", multiple=True, help="Run only these rule ids (comma-separated, repeatable).")
@click.option("--ignore", multiple=True, help="Do not run these rule ids (comma-separated, repeatable).")
@click.option("--namespace", "-n", default=None, help="Namespace for objects that do not set one [default: default].")
@click.option("--static-pod-dir", "static_pod_dirs", multiple=True, type=click.Path(file_okay=False), help="A kubelet staticPodPath folder; its files are checked as static Pods (repeatable).")
@click.option("--color/--no-color", default=None, help="Colour the text output [default: on a terminal, unless NO_COLOR is set].")
@click.option("--live", is_flag=True, help="Read cluster state from the current kubeconfig context.")
@click.option("--cluster-state", "cluster_state", type=click.Path(dir_okay=False), metavar="FILE",
              help="Cluster state saved by `kubectl get nodes,namespaces,pods -A -o yaml` (or -o json, or `nodename-lint snapshot`).")
@click.option("--fix", is_flag=True, help="Fix what can be fixed in the files, then report what remains.")
@click.option("--diff", is_flag=True, help="Print a unified diff of what --fix would change; write nothing.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes [default: one per core for large inputs (2 MB or more), else 1].")
@live_options
def lint_command(paths: tuple[str, ...], formats: tuple[str, ...], output: str | None, fail_on: str | None,
                 config_path: str | None, select: tuple[str, ...], ignore: tuple[str, ...], namespace: str | None,
                 static_pod_dirs: tuple[str, ...], color: bool | None, changed_since: str | None,
                 live: bool, kube_context: str | None, kubeconfig: str | None, in_cluster: bool,
                 request_timeout: float, fix: bool, diff: bool, jobs: int | None, cluster_state: str | None,
                 **format_outputs: str | None) -> None:
    """Lint manifests in PATH... (files, folders, `-` for stdin; default: the current folder)."""
    outputs = {name: format_outputs[f"output_{name}"] for name in FORMATS if format_outputs[f"output_{name}"]}
    try:
        live_options = _live(kube_context, kubeconfig, in_cluster, request_timeout, live)
        code = run_lint(
            live=live_options, cluster=_cluster_from_file(cluster_state, live_options),
            paths=list(paths) or ["."], formats=list(formats) or ["text"], output=output, fail_on=fail_on,
            config_path=config_path, select=_split_ids(select), ignore=_split_ids(ignore), namespace=namespace,
            static_pod_dirs=list(static_pod_dirs), color=color, outputs=outputs, changed_since=changed_since,
            fix=fix, diff=diff, jobs=jobs,
        )
    except UsageError as exc:
        click.echo(f"nodename-lint: {exc}", err=True)
        code = EXIT_USAGE
    sys.exit(code)


def _cluster_from_file(path: str | None, live_options: Any) -> Any:
    """The ClusterState saved in `--cluster-state FILE` (None without the option)."""
    if path is None:
        return None
    if live_options is not None:
        raise UsageError("--cluster-state cannot be combined with --context, --kubeconfig, --live or --in-cluster")
    from .cluster.from_file import load_state_file

    return load_state_file(path)


def run_lint(*, paths: list[str], formats: list[str], output: str | None, fail_on: str | None, config_path: str | None,
             select: list[str], ignore: list[str], namespace: str | None, static_pod_dirs: list[str],
             color: bool | None, cluster: Any = None, outputs: dict[str, str] | None = None,
             changed_since: str | None = None, live: Any = None, fix: bool = False, diff: bool = False,
             jobs: int | None = None) -> int:
    """The whole lint run; returns the exit code. Raises UsageError for exit code 2.

    FORMATS go to OUTPUT (stdout when None); OUTPUTS sends a format to its own file. LIVE
    (LiveOptions) reads the cluster state from the API for what the manifests name.
    """
    from .config import find_config, load_config, resolve_severities
    from .engine import Linter
    from .parallel import lint_files
    from .registry import all_rules
    from .rule import SEVERITY_RANK, Context
    from .sources import discover

    catalogue = all_rules()
    if config_path is not None and not os.path.isfile(config_path):
        raise UsageError(f"{config_path}: no such config file")
    config = load_config(config_path or find_config(), list(catalogue))
    severities = resolve_severities({rule.id: rule.severity for rule in catalogue.values()}, config, select, ignore)
    sources = list(discover(paths, [*static_pod_dirs, *config.static_pod_dirs], config.exclude))
    if fix or diff:
        from .fix.command import check_fix_request

        check_fix_request(sources, write=fix)
    live_cluster = None
    if live is not None:
        from .cluster.live import LiveCluster

        live_cluster = LiveCluster(live)  # resolves the kubeconfig; no request yet
    default_namespace = namespace or config.namespace or (live_cluster and live_cluster.namespace) or "default"
    if live_cluster is not None:
        from .cluster.live import referenced

        cluster = live_cluster.state_for(referenced(sources, default_namespace))
    context = Context(cluster=cluster, default_namespace=default_namespace)
    linter = Linter(severities, context)
    if fix or diff:
        from .fix.command import fix_sources

        would_change = fix_sources(linter, sources, write=fix, show_diff=diff)
        if not fix:  # --diff alone: the diff is the output; exit 1 when there is something to fix
            return EXIT_FINDINGS if would_change else EXIT_CLEAN
    result = lint_files(linter, sources, jobs)
    if changed_since:
        from .changes import keep_changed_files

        keep_changed_files(result, changed_since)
    for note in result.notes:
        click.echo(f"nodename-lint: {note}", err=True)
    _write_reports(result, formats, output, outputs or {}, color)
    threshold = SEVERITY_RANK[fail_on or config.fail_on or "error"]
    failing = any(SEVERITY_RANK[finding.severity] >= threshold for finding in result.findings)
    return EXIT_FINDINGS if failing else EXIT_CLEAN


def _write_reports(result: Any, formats: list[str], output: str | None, outputs: dict[str, str],
                   color: bool | None) -> None:
    """Render each format once to its destination; two formats never share one file."""
    from .report import renderer

    destinations = {name: outputs.get(name, output) for name in dict.fromkeys([*formats, *outputs])}
    files = [file for file in destinations.values() if file]
    shared = sorted({file for file in files if files.count(file) > 1})
    if shared:
        names = [name for name, file in destinations.items() if file == shared[0]]
        raise UsageError(f"{shared[0]}: {' and '.join(names)} reports cannot share one file; "
                         f"give each its own with --output-FORMAT FILE")
    use_color = _use_color(color, destinations.get("text"))
    for name, file in destinations.items():
        text = renderer(name)(result, color=use_color and name == "text")
        if file is None:
            click.echo(text, nl=False, color=use_color)  # click strips ANSI codes off a terminal unless told
            continue
        try:
            with open(file, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise UsageError(f"{file}: cannot write the {name} report: {exc.strerror or exc}") from None


def _use_color(flag: bool | None, output: str | None) -> bool:
    if flag is not None:
        return flag
    if output or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


@main.command("snapshot")
@live_options
@click.option("--cluster-state", "cluster_state", type=click.Path(dir_okay=False), metavar="DUMP",
              help="Convert this saved cluster state (a kubectl dump) instead of reading a live cluster.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write the snapshot to FILE [default: stdout].")
def snapshot_command(kube_context: str | None, kubeconfig: str | None, in_cluster: bool, request_timeout: float,
                     cluster_state: str | None, output: str | None) -> None:
    """Save what the cluster rules read (nodes, namespaces, usage per node, Pods) for --cluster-state."""
    from .cluster.snapshot import snapshot_text

    try:
        live_options = _live(kube_context, kubeconfig, in_cluster, request_timeout, live=cluster_state is None)
        if cluster_state is not None:
            state = _cluster_from_file(cluster_state, live_options)
            source = state.source
        else:
            from .cluster.live import LiveCluster

            live = LiveCluster(live_options)
            state = live.snapshot()
            source = live.source
        text = snapshot_text(state, source)
        if output:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
        else:
            sys.stdout.write(text)
    except OSError as exc:
        click.echo(f"nodename-lint: {output}: cannot write the snapshot: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)
    except UsageError as exc:
        click.echo(f"nodename-lint: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if output:
        click.echo(f"nodename-lint: wrote {output} from {source}: {len(state.nodes or ())} nodes, "
                   f"{len(state.namespaces or ())} namespaces, {len(state.pods or ())} Pods", err=True)


@main.command("rules")
@click.option("--markdown", is_flag=True, help="Print the rule table as Markdown (as in README).")
def rules_command(markdown: bool) -> None:
    """List every rule: id, default severity, offline or cluster, fixable, summary."""
    from .registry import all_rules

    if markdown:
        from .docs import rule_table_markdown

        click.echo(rule_table_markdown(), nl=False)
        return
    catalogue = all_rules()
    width = max(len(rule_id) for rule_id in catalogue)
    for rule in catalogue.values():
        scope = "cluster" if rule.is_cluster_rule else "offline"
        fixable = "fix" if rule.fix else "   "
        click.echo(f"{rule.id:<{width}}  {rule.severity:<7}  {scope:<7}  {fixable}  {rule.summary}")


@main.command("explain")
@click.argument("rule_id")
def explain_command(rule_id: str) -> None:
    """Print the whole documentation of one rule, with its examples."""
    from .registry import all_rules

    rule = all_rules().get(rule_id)
    if rule is None:
        click.echo(f"nodename-lint: unknown rule id {rule_id!r} (see `nodename-lint rules`)", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(rule.documentation(), nl=False)
