"""The whole lint run behind `nodename-lint lint`: config groups, the live phase, --fix, the reports."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from ..safe_text import note
from ..sources import UsageError
from .options import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, kept_until_exit
from .reports import TextOptions, check_destinations, write_reports

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..rule import Severity

# Startup: every import inside a function of this module is deliberate (tests/test_imports.py): a
# command loads only what it uses.


class HelmFlags(NamedTuple):
    """--helm-values (absolute paths), --helm-release and --helm-namespace."""

    values: tuple[str, ...] = ()
    release: str | None = None
    namespace: str | None = None

    def options(self, config: Any) -> Any:
        """RenderOptions for the paths one config file governs (its per-chart `helm:` settings); None for
        the defaults, when nothing is set (startup: a run over plain files never loads render.types)."""
        if not (self.values or self.release or self.namespace or config.helm_charts):
            return None
        from ..render.types import RenderOptions

        return RenderOptions(
            helm_values=self.values,
            helm_release=self.release or "release-name",
            helm_namespace=self.namespace,
            charts=tuple(config.helm_charts),
        )


class _Group:
    """The paths one config file governs, with what that config makes of them."""

    __slots__ = ("config", "parsed", "paths", "severities", "sources")

    def __init__(
        self, config: Any, paths: list[str], severities: dict[str, Severity | None], sources: list[Any]
    ) -> None:
        self.config = config
        self.paths = paths
        self.severities = severities  # None: the rule's own severity
        self.sources = sources
        # a live run: the sources in order, parsed (engine.ParsedSource) or, beyond HELD_INPUT_BYTES, read again
        self.parsed: list[Any] | None = None


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
    exit_zero: bool = False,
    fail_if_no_objects: bool = False,
) -> int:
    """The whole lint run; returns the exit code. Raises UsageError for exit code 2.

    FORMATS go to OUTPUT (stdout when None); OUTPUTS sends a format to its own file. LIVE
    (LiveOptions) reads the cluster state from the API for what the manifests name. Each PATH is
    linted with the config file nearest to it (or CONFIG_PATH); CLUSTER_STATE, the file CLUSTER was
    read from, is never linted. EXIT_ZERO: findings do not make the exit code 1; FAIL_IF_NO_OBJECTS:
    finding no Kubernetes object does (it is always said).
    """
    from ..documents import without_cycle_collection
    from ..engine import Linter
    from ..findings import RunResult
    from ..parallel import lint_files
    from ..progress import Progress
    from ..rule import SEVERITY_RANK, Context

    check_destinations(formats, output, outputs or {})
    groups = _config_groups(paths, config_path, select, ignore, static_pod_dirs)
    notes = _drop_state_file(groups, cluster_state)
    all_sources = [source for group in groups for source in group.sources]
    if fix or diff:
        from ..fix.command import check_fix_request

        check_fix_request(all_sources, write=fix)
    live_cluster = None
    if live is not None:
        # Two phases: parse every source once and hold it, fetch what the objects name, then lint them.
        from ..cluster.live import LiveCluster

        live_cluster = LiveCluster(live)  # resolves the kubeconfig; no request yet
        if diff:
            from ..fix.command import keep_stdin_for_diff

            keep_stdin_for_diff(all_sources)
        wanted = _hold_parsed(groups, namespace, live_cluster, helm, limits, static_pod_node)
        cluster = _read_cluster(live_cluster, wanted, notes)

    def linter_for(group: _Group) -> Linter:
        context = Context(
            cluster=cluster,
            default_namespace=_namespace(namespace, group.config, live_cluster),
            static_pod_node=static_pod_node,
        )
        return Linter(group.severities, context, helm.options(group.config), limits=limits)

    if fix or diff:
        from ..fix.command import fix_sources
        from ..sources import roots_of

        changed = False
        for group in groups:
            roots = roots_of([*group.paths, *static_pod_dirs, *group.config.static_pod_dirs])
            changed = fix_sources(linter_for(group), group.sources, write=fix, show_diff=diff, roots=roots) or changed
        if not fix:  # --diff alone: the diff is the output; exit 1 when there is something to fix
            return EXIT_FINDINGS if changed else EXIT_CLEAN
        if changed and live is not None:
            # What was held and read is the manifests before the fix: lint the files as written now, with
            # the cluster read again if they name nodes or Pods the first read left out (a node name fixed).
            fixed = _hold_parsed(groups, namespace, live_cluster, helm, limits, static_pod_node)
            if not wanted.covers(fixed):
                from ..cluster.live import LiveCluster

                fixed.update(wanted)
                cluster = _read_cluster(LiveCluster(live), fixed, [])
    progress = Progress(len(all_sources), enabled=not text.quiet)
    results: list[RunResult] = []
    complete: list[RunResult] = []  # before --changed-since: SARIF always holds every finding
    thresholds: dict[int, int] = {}  # a finding -> its group's fail-on (a finding another group makes moot is dropped)
    try:
        for group in groups:
            linter = linter_for(group)
            with without_cycle_collection():
                if group.parsed is not None:  # a live run: the sources are parsed already, lint them here
                    result = linter.collect(_lint_held(linter, group.parsed), progress.advance)
                else:
                    result = lint_files(linter, group.sources, jobs, progress=progress.advance)
                _freeze_first_run()
            if changed_since:
                from ..changes import keep_changed_files

                complete.append(result.copy())
                keep_changed_files(result, changed_since)
            else:
                complete.append(result)
            threshold = SEVERITY_RANK[fail_on or group.config.fail_on or "error"]
            thresholds.update((id(finding), threshold) for finding in result.findings)
            results.append(result)
    finally:
        progress.close()
    result = _merged(results, notes)
    failing = any(SEVERITY_RANK[finding.severity] >= thresholds[id(finding)] for finding in result.findings)
    text_on_stdout = "text" in formats and (outputs or {}).get("text", output) is None
    for message in result.notes:
        if message in result.internal_errors:  # an error, on stderr whatever the report
            note(message)
        elif not text_on_stdout:  # else the report ends with them: said twice on a terminal
            note(message, informational=True)
    write_reports(result, formats, output, outputs or {}, color, text, sarif_result=_merged(complete, notes))
    if result.internal_errors:
        return EXIT_USAGE  # a rule crashed: the report is incomplete and must not read as clean
    if not result.objects:
        if not result.findings:  # else they say why (a file that does not parse, a chart that does not render)
            _warn_no_objects(paths, result.files, fail_if_no_objects)
        if fail_if_no_objects:
            return EXIT_FINDINGS
    return EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN


def _warn_no_objects(paths: list[str], files: int, failing: bool) -> None:
    """Said even with --quiet: a path that holds no manifest is most often a mistake (a wrong folder in CI)."""
    read = f"{files} file{'s' * (files != 1)} read"
    hint = "" if failing else " (--fail-if-no-objects-found makes this fail the run)"
    note(f"warning: no Kubernetes objects found in {', '.join(paths)} ({read}): check the paths{hint}")


def _hold_parsed(
    groups: list[_Group],
    namespace: str | None,
    live_cluster: Any,
    helm: HelmFlags,
    limits: Any,
    static_pod_node: str | None,
) -> Any:
    """Parse every group's sources and hold them (group.parsed); return what they name (cluster.live.Referenced)."""
    import gc

    from ..cluster.live import Referenced, referenced
    from ..documents import without_cycle_collection
    from ..engine import parse_source

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
    return wanted


_FROZE_A_RUN = False  # a process (the command line's) freezes what its first lint run built, not a later run's


def _freeze_first_run() -> None:
    """What the lint run built and kept (findings, the cluster state's caches) lives to the report: frozen, or
    the first collection once the GC is back scans it all (24 ms against a 150,000-Pod snapshot). A test
    that runs the command line again in its process does not freeze the garbage of the tests before."""
    import gc

    global _FROZE_A_RUN
    if not _FROZE_A_RUN:
        _FROZE_A_RUN = True
        gc.freeze()


def _read_cluster(live_cluster: Any, wanted: Any, notes: list[str]) -> Any:
    """The cluster state for what the manifests name, kept to the end of the process."""
    from ..documents import without_cycle_collection

    with without_cycle_collection():  # the replies and the state hold no cycles; the state lives to the end
        cluster = kept_until_exit(live_cluster.state_for(wanted))
    if "runtime_classes" in cluster.unavailable:
        notes.append(f"RuntimeClass overhead is not counted: {cluster.unavailable['runtime_classes']}")
    if "templates" in cluster.unavailable:
        notes.append(
            "the Pods a workload already runs cannot be told from its new ones (its rollout is played as if "
            f"its template changed): {cluster.unavailable['templates']}"
        )
    if "priority_classes" in cluster.unavailable:
        notes.append(
            "PriorityClasses are not known (only the built-in system-node-critical and system-cluster-critical): "
            f"{cluster.unavailable['priority_classes']}"
        )
    return cluster


# A live run holds the parsed documents of this much input (files; stdin and builds are always held):
# parsed YAML takes about 50 times its text in memory (a Deployment: 300 bytes of text, 16 kB held).
HELD_INPUT_BYTES = 8 << 20


def _file_size(source: Any) -> int:
    """Bytes of a file a live run could read again; 0 for stdin (read once) and builds (rendered once)."""
    from ..sources import STDIN

    if source.path == STDIN or source.render:
        return 0
    try:
        return os.stat(source.path).st_size
    except OSError:
        return 0


def _lint_held(linter: Any, held: list[Any]) -> Iterator[Any]:
    """Lint a live run's sources in order, letting go of each one's documents once it is linted."""
    from ..engine import ParsedSource

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
    from ..config import config_for, load_config, resolve_severities
    from ..registry import all_rules
    from ..sources import discover

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
        config.static_pod_dirs = _existing_static_pod_dirs(config)
        severities = resolve_severities(catalogue, config, select, ignore)
        sources = list(discover(group_paths, [*static_pod_dirs, *config.static_pod_dirs], config.exclude))
        if len(by_config) > 1:
            sources = [source for source in sources if _first_time(source.path, seen)]
        groups.append(_Group(config, group_paths, dict(severities), sources))
    return groups


def _existing_static_pod_dirs(config: Any) -> list[str]:
    """The config's static-pod-dirs that exist; a missing one is said and skipped, as the kubelet skips a
    missing staticPodPath (pkg/kubelet/config/file.go, sourceFile.listConfig: "path does not exist, ignoring")."""
    existing = []
    for folder in config.static_pod_dirs:
        if os.path.lexists(folder):
            existing.append(folder)
        else:
            where = os.path.relpath(folder, os.path.dirname(os.path.abspath(config.path)))
            note(f"{config.path}: static-pod-dirs: {where} does not exist: no static Pod to check there")
    return existing


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
    from ..findings import REPORT_ORDER, RunResult

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
