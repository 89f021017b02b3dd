"""Command line: `nodename-lint [PATH]...`, plus `rules`, `explain RULE` and `snapshot`."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .clitypes import Duration, complete_contexts, complete_rule_ids
from .report import FORMATS
from .safe_text import note, silence_informational_notes
from .sources import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .rule import Severity

# Startup: every import inside a function of this module is deliberate. `--version`, `rules` and an
# offline lint load only what they use (the engine, the cluster code, the fixer, the reporters are
# imported where a command needs them); tests/test_imports.py proves it.

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
SEVERITY_CHOICES = ("error", "warning", "info")


class DefaultToLint(click.Group):
    """A group whose default command is `lint`: `nodename-lint deploy/` means `nodename-lint lint deploy/`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # While the shell completes the first word (resilient parsing, no words yet) the group stays
        # itself, so TAB offers the subcommands.
        completing_first_word = ctx.resilient_parsing and not args
        if not completing_first_word and (
            not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"))
        ):
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


def _live(
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
    from .cluster.live import LiveOptions

    if in_cluster and (kube_context or kubeconfig):
        raise UsageError("--in-cluster cannot be combined with --context or --kubeconfig")
    return LiveOptions(
        kubeconfig=kubeconfig,
        context=kube_context,
        in_cluster=in_cluster,
        request_timeout=request_timeout,
        max_response_bytes=max_response_bytes,
    )


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _format_output_options(command: Any) -> Any:
    """`--output-FORMAT FILE` for every format: one run writes several reports (text here, SARIF there)."""
    for name in reversed(FORMATS):
        command = click.option(
            f"--output-{name}",
            f"output_{name}",
            type=click.Path(dir_okay=False),
            help=f"Write the {name} report to FILE (implies --format {name}).",
        )(command)
    return command


@main.command("lint")
# readable=False: click would refuse the whole run for one unreadable file; the engine reports it as a
# finding at its line 1 and lints the others.
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS), help="Output format (repeatable).")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE instead of stdout."
)
@_format_output_options
@click.option(
    "--changed-since",
    metavar="REF",
    default=None,
    help="Report only findings in files changed since git REF (committed or not).",
)
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
    help="Config file [default: the .nodename-lint.yaml nearest to each PATH, else here or in a parent].",
)
@click.option(
    "--select",
    multiple=True,
    shell_complete=complete_rule_ids,
    help="Run only these rule ids (comma-separated, repeatable).",
)
@click.option(
    "--ignore",
    multiple=True,
    shell_complete=complete_rule_ids,
    help="Do not run these rule ids (comma-separated, repeatable).",
)
@click.option("--namespace", "-n", default=None, help="Namespace for objects that do not set one [default: default].")
@click.option(
    "--static-pod-dir",
    "static_pod_dirs",
    multiple=True,
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
    "--color/--no-color", default=None, help="Colour the text output [default: on a terminal, unless NO_COLOR is set]."
)
@click.option("--live", is_flag=True, help="Read cluster state from the current kubeconfig context.")
@click.option("--offline", is_flag=True, help="Read no cluster (the default, except as `kubectl nodename-lint`).")
@click.option(
    "--cluster-state",
    "cluster_state",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Cluster state saved by `kubectl get nodes,namespaces,pods -A -o yaml` "
    "(or -o json, or `nodename-lint snapshot`).",
)
@click.option("--fix", is_flag=True, help="Fix what can be fixed in the files, then report what remains.")
@click.option("--diff", is_flag=True, help="Print a unified diff of what --fix would change; write nothing.")
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
@click.option(
    "--exit-zero", is_flag=True, help="Exit with 0 even when there are findings (2 still means a usage error)."
)
@click.option(
    "--statistics", is_flag=True, help="Text output: one `COUNT RULE SUMMARY` line per rule instead of each finding."
)
@click.option(
    "--quiet", "-q", is_flag=True, help="Text output: only the findings, no summary and no skipped-rules line."
)
@click.option("--show-source", is_flag=True, help="Text output: show the offending line with a caret under the column.")
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
    outputs: dict[str, str] = {name: file for name in FORMATS if (file := format_outputs[f"output_{name}"])}
    if quiet:
        silence_informational_notes()
    try:
        if offline and (live or kube_context or kubeconfig or in_cluster or cluster_state):
            raise UsageError(
                "--offline cannot be combined with --cluster-state, --context, --kubeconfig, --live or --in-cluster"
            )
        live_options = _live(kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live)
        code = run_lint(
            live=live_options,
            cluster=_cluster_from_file(cluster_state, live_options),
            cluster_state=cluster_state,
            paths=list(paths) or ["."],
            formats=list(formats) or ["text"],
            output=output,
            fail_on=fail_on,
            config_path=config_path,
            select=_split_ids(select),
            ignore=_split_ids(ignore),
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
            helm=HelmFlags(tuple(os.path.abspath(path) for path in helm_values), helm_release, helm_namespace),
            limits=_limits(max_document_size, max_nodes),
        )
        if exit_zero and code == EXIT_FINDINGS:
            code = EXIT_CLEAN
    except UsageError as exc:
        _usage_error(exc)
        code = EXIT_USAGE
    sys.exit(code)


def _usage_error(exc: UsageError) -> None:
    """One stderr line per problem (a config file may have several), each escaped (safe_text.note)."""
    for line in str(exc).splitlines():
        note(line)


def _cluster_from_file(path: str | None, live_options: Any) -> Any:
    """The ClusterState saved in `--cluster-state FILE` (None without the option)."""
    if path is None:
        return None
    if live_options is not None:
        raise UsageError("--cluster-state cannot be combined with --context, --kubeconfig, --live or --in-cluster")
    from .cluster.from_file import load_state_file

    return _kept_until_exit(load_state_file(path))


# Refers to itself: module teardown at exit drops the module's reference, not the list, and the GC
# never visits it once frozen, so what it holds is left to the OS when the process ends.
_KEPT_UNTIL_EXIT: list[Any] = []
_KEPT_UNTIL_EXIT.append(_KEPT_UNTIL_EXIT)


def _kept_until_exit(state: Any) -> Any:
    """Keep a loaded cluster state to the end of the process, and do not free it then.

    A command loads one state and exits when done: freeing a 150,000-Pod dump object by object
    cost 0.3 s of CPU (0.03 s for its snapshot), for memory the OS takes back at once.
    """
    import gc

    _KEPT_UNTIL_EXIT.append(state)
    gc.freeze()  # the list and the state: no collection frees them, and none rescans them
    return state


@dataclass(frozen=True)
class TextOptions:
    """How the text format shows a run (ruff's --quiet, --statistics and --show-source)."""

    quiet: bool = False
    statistics: bool = False
    show_source: bool = False


@dataclass(frozen=True)
class HelmFlags:
    """--helm-values (absolute paths), --helm-release and --helm-namespace."""

    values: tuple[str, ...] = ()
    release: str | None = None
    namespace: str | None = None

    def options(self, config: Any) -> Any:
        """RenderOptions for the paths one config file governs (its per-chart `helm:` settings)."""
        from .render import RenderOptions

        return RenderOptions(
            helm_values=self.values,
            helm_release=self.release or "release-name",
            helm_namespace=self.namespace,
            charts=tuple(config.helm_charts),
        )


@dataclass
class _Group:
    """The paths one config file governs, with what that config makes of them."""

    config: Any
    paths: list[str]
    severities: dict[str, Severity | None] = field(default_factory=dict)  # None: the rule's own severity
    sources: list[Any] = field(default_factory=list)
    # a live run: the sources in order, parsed (engine.ParsedSource) or, beyond HELD_INPUT_BYTES, read again to lint
    parsed: list[Any] | None = None


def _limits(max_document_size: int | None, max_nodes: int | None) -> Any:
    """The documents.Limits of the options (their defaults where not given)."""
    from .documents import DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_NODES, Limits

    return Limits(max_document_size or DEFAULT_MAX_DOCUMENT_BYTES, max_nodes or DEFAULT_MAX_NODES)


def run_lint(
    *,
    paths: list[str],
    formats: list[str],
    output: str | None,
    fail_on: str | None,
    config_path: str | None,
    select: list[str],
    ignore: list[str],
    namespace: str | None,
    static_pod_dirs: list[str],
    color: bool | None,
    cluster: Any = None,
    outputs: dict[str, str] | None = None,
    changed_since: str | None = None,
    live: Any = None,
    fix: bool = False,
    diff: bool = False,
    jobs: int | None = None,
    cluster_state: str | None = None,
    text: TextOptions = TextOptions(),
    static_pod_node: str | None = None,
    helm: HelmFlags = HelmFlags(),
    limits: Any = None,
) -> int:
    """The whole lint run; returns the exit code. Raises UsageError for exit code 2.

    FORMATS go to OUTPUT (stdout when None); OUTPUTS sends a format to its own file. LIVE
    (LiveOptions) reads the cluster state from the API for what the manifests name. Each PATH is
    linted with the config file nearest to it (or CONFIG_PATH); CLUSTER_STATE, the file CLUSTER was
    read from, is never linted.
    """
    from .engine import Linter
    from .findings import RunResult
    from .parallel import lint_files
    from .progress import Progress
    from .rule import SEVERITY_RANK, Context

    _check_destinations(formats, output, outputs or {})
    groups = _config_groups(paths, config_path, select, ignore, static_pod_dirs)
    notes = _drop_state_file(groups, cluster_state)
    all_sources = [source for group in groups for source in group.sources]
    if fix or diff:
        from .fix.command import check_fix_request

        check_fix_request(all_sources, write=fix)
    live_cluster = None
    if live is not None:
        # Two phases: parse every source once and hold it, fetch what the objects name, then lint them.
        import gc

        from .cluster.live import LiveCluster, Referenced, referenced
        from .documents import without_cycle_collection
        from .engine import parse_source

        live_cluster = LiveCluster(live)  # resolves the kubeconfig; no request yet
        if diff:
            from .fix.command import keep_stdin_for_diff

            keep_stdin_for_diff(all_sources)
        wanted = Referenced()
        held = 0
        with without_cycle_collection():
            for group in groups:
                default_namespace = _namespace(namespace, group.config, live_cluster)
                group.parsed = []
                for source in group.sources:
                    parsed = parse_source(source, helm.options(group.config), default_namespace, limits)
                    wanted.update(referenced([parsed], default_namespace))
                    size = _file_size(source)
                    held += size
                    group.parsed.append(parsed if not size or held <= HELD_INPUT_BYTES else source)  # else read again
            # The held documents hold no cycles: out of the cyclic GC, which would rescan them at every full
            # collection while the cluster state is fetched and the rules run (0.2 s of 1.3 s, 1,000 manifests).
            gc.freeze()
        if static_pod_node:
            wanted.nodes.add(static_pod_node)  # its Pods count against the static Pods' requests
        with without_cycle_collection():  # the replies and the state hold no cycles; the state lives to the end
            cluster = _kept_until_exit(live_cluster.state_for(wanted))
        if "runtime_classes" in cluster.unavailable:
            notes.append(f"RuntimeClass overhead is not counted: {cluster.unavailable['runtime_classes']}")
    progress = Progress(len(all_sources), enabled=not text.quiet)
    results: list[RunResult] = []
    complete: list[RunResult] = []  # before --changed-since: SARIF always holds every finding
    failing = False
    thresholds: dict[int, int] = {}  # a finding -> its group's fail-on (a finding another group makes moot is dropped)
    try:
        for group in groups:
            context = Context(
                cluster=cluster,
                default_namespace=_namespace(namespace, group.config, live_cluster),
                static_pod_node=static_pod_node,
            )
            linter = Linter(group.severities, context, helm.options(group.config), limits=limits)
            if fix or diff:
                from .fix.command import fix_sources
                from .sources import roots_of

                roots = roots_of([*group.paths, *static_pod_dirs, *group.config.static_pod_dirs])
                would_change = fix_sources(linter, group.sources, write=fix, show_diff=diff, roots=roots)
                if not fix:  # --diff alone: the diff is the output; exit 1 when there is something to fix
                    failing = failing or would_change
                    continue
            if group.parsed is not None:  # a live run: the sources are parsed already, lint them here
                result = linter.collect(_lint_held(linter, group.parsed), progress.advance)
            else:
                result = lint_files(linter, group.sources, jobs, progress=progress.advance)
            if changed_since:
                from .changes import keep_changed_files

                complete.append(replace(result, findings=list(result.findings), notes=list(result.notes)))
                keep_changed_files(result, changed_since)
            else:
                complete.append(result)
            threshold = SEVERITY_RANK[fail_on or group.config.fail_on or "error"]
            thresholds.update((id(finding), threshold) for finding in result.findings)
            results.append(result)
    finally:
        progress.close()
    if diff and not fix:
        return EXIT_FINDINGS if failing else EXIT_CLEAN
    result = _merged(results, notes)
    failing = failing or any(SEVERITY_RANK[finding.severity] >= thresholds[id(finding)] for finding in result.findings)
    for message in result.notes:
        note(message, informational=True)
    _write_reports(result, formats, output, outputs or {}, color, text, sarif_result=_merged(complete, notes))
    if result.internal_errors:
        return EXIT_USAGE  # a rule crashed: the report is incomplete and must not read as clean
    return EXIT_FINDINGS if failing else EXIT_CLEAN


# A live run holds the parsed documents of this much input (files; stdin and builds are always held):
# parsed YAML takes about 50 times its text in memory (a Deployment: 300 bytes of text, 16 kB held).
HELD_INPUT_BYTES = 8 << 20


def _file_size(source: Any) -> int:
    """Bytes of a file a live run could read again; 0 for stdin (read once) and builds (rendered once)."""
    from .sources import STDIN

    if source.path == STDIN or source.render:
        return 0
    try:
        return os.stat(source.path).st_size
    except OSError:
        return 0


def _lint_held(linter: Any, held: list[Any]) -> Iterator[Any]:
    """Lint a live run's sources in order, letting go of each one's documents once it is linted."""
    from .engine import ParsedSource

    held.reverse()
    while held:
        item = held.pop()
        yield linter.lint_parsed(item) if isinstance(item, ParsedSource) else linter.lint_source(item)


def _namespace(flag: str | None, config: Any, live_cluster: Any) -> str:
    """-n, else the config's namespace, else the live context's, else default (as kubectl apply)."""
    return flag or config.namespace or (live_cluster and live_cluster.namespace) or "default"


def _config_groups(
    paths: list[str], config_path: str | None, select: list[str], ignore: list[str], static_pod_dirs: list[str]
) -> list[_Group]:
    """The paths grouped by the config file that governs them, each group's rules and sources.

    Like ruff and yamllint, a PATH uses the config nearest to it (its folder and up), else the
    current folder's; --config FILE governs every path.
    """
    from .config import config_for, load_config, resolve_severities
    from .registry import all_rules
    from .sources import discover

    catalogue = all_rules()
    if config_path is not None and not os.path.isfile(config_path):
        raise UsageError(f"{config_path}: no such config file")
    by_config: dict[str | None, list[str]] = {}
    for path in paths:
        by_config.setdefault(config_path or config_for(path), []).append(path)
    groups = []
    seen: set[str] = set()  # with several groups, a --static-pod-dir reached by each is linted once
    for found, group_paths in by_config.items():
        config = load_config(found, list(catalogue))
        severities = resolve_severities(catalogue, config, select, ignore)
        sources = list(discover(group_paths, [*static_pod_dirs, *config.static_pod_dirs], config.exclude))
        if len(by_config) > 1:
            sources = [source for source in sources if _first_time(source.path, seen)]
        groups.append(_Group(config, group_paths, dict(severities), sources))
    return groups


def _first_time(path: str, seen: set[str]) -> bool:
    key = path if path == "-" else os.path.realpath(path)
    if key in seen:
        return False
    seen.add(key)
    return True


def _drop_state_file(groups: list[_Group], state_file: str | None) -> list[str]:
    """Never lint the --cluster-state file itself (its Pods would be checked against themselves)."""
    if state_file is None:
        return []
    notes = []
    name = os.path.basename(state_file)
    for group in groups:
        kept = []
        for source in group.sources:
            if os.path.basename(source.path) == name and _same_file(source.path, state_file):
                notes.append(f"{source.display}: not linted: it is the cluster state given with --cluster-state")
            else:
                kept.append(source)
        group.sources = kept
    return notes


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def _merged(results: list[Any], notes: list[str]) -> Any:
    """One run's result from the results of its config groups (one group in the common case)."""
    from .findings import REPORT_ORDER, RunResult

    merged = RunResult(notes=list(notes))
    for result in results:
        merged.findings.extend(result.findings)
        merged.files += result.files
        merged.objects += result.objects
        merged.skipped_rules.update(result.skipped_rules)
        merged.notes.extend(result.notes)
        merged.internal_errors.extend(result.internal_errors)
    if len(results) > 1:
        created = set().union(*(result.created for result in results))
        moot = {id(finding) for result in results for finding, needed in result.conditional if needed in created}
        merged.findings = [finding for finding in merged.findings if id(finding) not in moot]
        merged.findings.sort(key=REPORT_ORDER)
    return merged


# Formats that are one document each: two of them on one stream would be unreadable (ruff refuses it too).
_DOCUMENT_FORMATS = ("json", "sarif")


def _check_destinations(formats: list[str], output: str | None, outputs: dict[str, str]) -> None:
    """Refuse, before anything is linted, two reports in one file or a JSON/SARIF document mixed into stdout."""
    destinations = {name: outputs.get(name, output) for name in dict.fromkeys([*formats, *outputs])}
    files = [file for file in destinations.values() if file]
    shared = sorted({file for file in files if files.count(file) > 1})
    if shared:
        names = [name for name, file in destinations.items() if file == shared[0]]
        raise UsageError(
            f"{shared[0]}: {' and '.join(names)} reports cannot share one file; "
            f"give each its own with --output-FORMAT FILE"
        )
    on_stdout = [name for name, file in destinations.items() if file is None]
    documents = [name for name in on_stdout if name in _DOCUMENT_FORMATS]
    if documents and len(on_stdout) > 1:
        raise UsageError(
            f"--format {' and --format '.join(on_stdout)} would write {len(on_stdout)} reports to stdout "
            f"one after the other, and {documents[0]} must be alone to be read: "
            f"send it to a file with --output-{documents[0]} FILE"
        )


def _write_reports(
    result: Any,
    formats: list[str],
    output: str | None,
    outputs: dict[str, str],
    color: bool | None,
    text: TextOptions = TextOptions(),
    sarif_result: Any = None,
) -> None:
    """Render each format once to its destination (checked by _check_destinations).

    SARIF_RESULT, the run before --changed-since, goes into SARIF: code scanning takes an upload as
    the complete state of the repository and would close the alerts of every file left out.
    """
    from .report import renderer

    destinations = {name: outputs.get(name, output) for name in dict.fromkeys([*formats, *outputs])}
    use_color = _use_color(color, destinations.get("text"))
    for name, file in destinations.items():
        if name == "text":
            from .report.text import render as render_text

            report = render_text(
                result, color=use_color, quiet=text.quiet, statistics=text.statistics, show_source=text.show_source
            )
        else:
            report = renderer(name)(sarif_result if name == "sarif" and sarif_result is not None else result)
        if file is None:
            click.echo(report, nl=False, color=use_color)  # click strips ANSI codes off a terminal unless told
            continue
        try:
            with open(file, "w", encoding="utf-8") as handle:
                handle.write(report)
        except OSError as exc:
            raise UsageError(f"{file}: cannot write the {name} report: {exc.strerror or exc}") from None


def _use_color(flag: bool | None, output: str | None) -> bool:
    if flag is not None:
        return flag
    if output or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


# Options after which the kubectl plugin leaves the choice of cluster to the user.
_CLUSTER_CHOICES = ("--offline", "--cluster-state", "--context", "--kubeconfig", "--live", "--in-cluster")


def kubectl_plugin() -> None:
    """`kubectl nodename-lint ...` (the kubectl-nodename_lint executable): lint against kubectl's current context.

    kubectl runs plugins with the user's arguments and environment, so KUBECONFIG is honoured as
    kubectl honours it. A lint without --offline, --cluster-state or a live option gets --live.
    """
    args = sys.argv[1:]
    options = args[: args.index("--")] if "--" in args else args
    is_lint = not args or args[0] == "lint" or args[0] not in {*main.commands, "--help", "-h", "--version"}
    chosen = any(arg.split("=", 1)[0] in _CLUSTER_CHOICES for arg in options)
    if is_lint and not chosen:
        args = ["lint", *args[1:]] if args and args[0] == "lint" else ["lint", *args]
        args.insert(1, "--live")
    main(args=args, prog_name="kubectl nodename-lint")


@main.command("audit")
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
@_format_output_options
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
        from .config import find_config, load_config, resolve_severities
        from .registry import all_rules
        from .rule import SEVERITY_RANK

        live = _live(kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live=False)
        objects = _audit_objects(cluster_state, live, request_timeout, max_response_bytes)
        catalogue = all_rules()
        if config_path is not None and not os.path.isfile(config_path):
            raise UsageError(f"{config_path}: no such config file")
        config = load_config(config_path or find_config(), list(catalogue))
        severities = resolve_severities(catalogue, config, _split_ids(select), _split_ids(ignore))
        from .audit import run_audit

        result = run_audit(objects, severities)
        _write_reports(result, list(formats) or ["text"], output, outputs, color)
        threshold = SEVERITY_RANK[fail_on or config.fail_on or "error"]
        code = EXIT_FINDINGS if any(SEVERITY_RANK[f.severity] >= threshold for f in result.findings) else EXIT_CLEAN
    except UsageError as exc:
        _usage_error(exc)
        code = EXIT_USAGE
    sys.exit(code)


def _audit_objects(cluster_state: str | None, live: Any, request_timeout: float, max_response_bytes: int) -> Any:
    """The cluster objects to audit: from `--cluster-state FILE`, else live (without options: the current context)."""
    if cluster_state is not None:
        if live is not None:
            raise UsageError("--cluster-state cannot be combined with --context, --kubeconfig or --in-cluster")
        from .cluster.workloads import load_objects_file

        return load_objects_file(cluster_state)
    from .cluster.live import LiveCluster, LiveOptions
    from .cluster.workloads import read_live

    return read_live(
        LiveCluster(live or LiveOptions(request_timeout=request_timeout, max_response_bytes=max_response_bytes))
    )


@main.command("snapshot")
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
    from .cluster.snapshot import snapshot_text

    try:
        live_options = _live(
            kube_context, kubeconfig, in_cluster, request_timeout, max_response_bytes, live=cluster_state is None
        )
        if cluster_state is not None:
            if workloads:
                raise UsageError("--workloads reads a live cluster: it cannot be combined with --cluster-state")
            state = _cluster_from_file(cluster_state, live_options)
            source = state.source
        else:
            from .cluster.live import LiveCluster

            live = LiveCluster(live_options)
            if workloads:
                _snapshot_workloads(live, output)
                return
            state = live.snapshot()
            source = live.source
        text = snapshot_text(state, source)
        if output:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
        else:
            sys.stdout.write(text)
    except OSError as exc:
        note(f"{output}: cannot write the snapshot: {exc.strerror or exc}")
        sys.exit(EXIT_USAGE)
    except UsageError as exc:
        _usage_error(exc)
        sys.exit(EXIT_USAGE)
    if output:
        note(
            f"wrote {output} from {source}: {len(state.nodes or ())} nodes, "
            f"{len(state.namespaces or ())} namespaces, {len(state.pods or ())} Pods"
        )


@main.command("lsp")
@click.option(
    "--stdio",
    is_flag=True,
    help="Talk over stdin/stdout (the default and only transport; accepted because editor clients pass it).",
)
def lsp_command(stdio: bool) -> None:
    """Run the language server on stdin/stdout for an editor (see docs/editors.md)."""
    from .lsp.server import main as serve

    serve()


def _snapshot_workloads(live: Any, output: str | None) -> None:
    """`snapshot --workloads`: what audit reads; an RBAC denial fails it rather than write a partial copy."""
    from .cluster.live import ClusterUnavailable
    from .cluster.workloads import KIND_RESOURCES, read_live, write_workload_snapshot

    found = read_live(live, keep_all=True)
    if found.unavailable:
        raise ClusterUnavailable(f"cannot snapshot {found.source}: {next(iter(found.unavailable.values()))}")
    write_workload_snapshot(found, output)
    if output:
        counts = ", ".join(f"{len(found.of(kind))} {resource}" for kind, resource in KIND_RESOURCES.items())
        note(f"wrote {output} from {found.source}: {counts}")


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
@click.argument("rule_id", shell_complete=complete_rule_ids)
def explain_command(rule_id: str) -> None:
    """Print the whole documentation of one rule, with its examples."""
    from .registry import all_rules

    rule = all_rules().get(rule_id)
    if rule is None:
        note(f"unknown rule id {rule_id!r} (see `nodename-lint rules`)")
        sys.exit(EXIT_USAGE)
    click.echo(rule.documentation(), nl=False)
