"""`nodename-lint lsp`: the linter as a language server on stdio (pygls).

Diagnostics come from the same engine as the command line, run on the text the editor holds
(saved or not): at once on open and save, and after a pause in typing on change. Quick fixes are
the edits `--fix` splices; "suppress on this line" writes the ignore comment the engine honours.
A cluster state (a file, or a kubeconfig context read once) feeds the cluster rules and the hover
on nodeName, nodeSelector, tolerations and resources; a command reads the cluster again.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from .. import __version__
from ..cluster.state import ClusterState
from ..config import Config, config_for, load_config, resolve_severities
from ..documents import Document, iter_documents, without_cycle_collection
from ..engine import SYNTAX_RULE, Linter
from ..findings import Finding
from ..registry import all_rules
from ..report.locations import rule_doc_url
from ..rule import Context
from ..safe_text import one_line, visible_lines
from ..sources import MANIFEST_SUFFIXES, DamagedState, UsageError, is_excluded, is_static_pod_path
from ..suppress import comment_edit
from .hover import hover_markdown
from .spans import NodeEnds, Span, finding_span

SOURCE = "nodename-lint"
SETTINGS_SECTION = "nodename-lint"
DEBOUNCE_SECONDS = 0.3
EXPLAIN_COMMAND = "nodename-lint.explain"
REFRESH_COMMAND = "nodename-lint.refreshCluster"
LANGUAGES = frozenset({"yaml", "json", "helm"})
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}


@dataclass
class Settings:
    """The client's `nodename-lint.*` settings (workspace/configuration)."""

    cluster_state: str | None = None
    context: str | None = None

    @classmethod
    def parse(cls, value: Any) -> Settings:
        value = value if isinstance(value, dict) else {}
        state, context = value.get("clusterState"), value.get("context")
        return cls(
            state if isinstance(state, str) and state else None,
            context if isinstance(context, str) and context else None,
        )


@dataclass
class Linted:
    """The last lint of one document: the findings the diagnostics show, and how they were made."""

    version: int | None
    text: str
    path: str
    findings: list[Finding]
    linter: Linter | None
    is_static_pod: bool = False
    waiting: bool = False  # opened before the settings were read: not linted yet


@dataclass
class Workspace:
    """What the server keeps between requests: settings, the cluster state, parsed config files."""

    root: str | None = None
    settings: Settings = field(default_factory=Settings)
    initial_settings: Settings = field(default_factory=Settings)  # from initializationOptions
    cluster: ClusterState | None = None
    live_namespace: str | None = None
    configs: dict[str, tuple[int, Config]] = field(default_factory=dict)  # path -> (mtime_ns, config)


class NodenameLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.state = Workspace()
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}
        self.ready = asyncio.Event()
        self.shown: set[str] = set()  # messages already shown once (a broken config file)

    # --- messages -----------------------------------------------------------------------------
    def tell(self, message: str, kind: lsp.MessageType = lsp.MessageType.Error, once: bool = False) -> None:
        if once and message in self.shown:
            return
        self.shown.add(message)
        # the editor shows it as it arrives: a path or value from the repository keeps its line breaks only
        shown = visible_lines(message)
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=f"nodename-lint: {shown}"))

    # --- configuration and cluster ------------------------------------------------------------
    def cluster_off(self, problem: str) -> None:
        """Say why the cluster state cannot be read: the cluster rules stay off until it is read again."""
        self.tell(f"{problem}; the cluster rules are off until it can be read (fix it, then run {REFRESH_COMMAND})")

    async def read_settings(self) -> None:
        """Ask the client for `nodename-lint.*`; a client that cannot answer, or has none set, keeps
        what initializationOptions gave (for clients whose settings only reach the server that way)."""
        self.state.settings = self.state.initial_settings
        workspace = self.client_capabilities.workspace
        if workspace is None or not workspace.configuration:
            return
        try:
            values = await self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SETTINGS_SECTION)])
            )
        except Exception as exc:  # a client that fails the request: keep the defaults
            self.tell(f"cannot read the settings: {exc}", lsp.MessageType.Warning)
            return
        value = values[0] if values else None
        if isinstance(value, dict) and any(value.get(key) for key in ("clusterState", "context")):
            self.state.settings = Settings.parse(value)

    async def load_cluster(self) -> str:
        """Read the configured cluster state (off the event loop); returns what was read, for messages."""
        settings, state = self.state.settings, self.state
        state.cluster, state.live_namespace = None, None
        if settings.cluster_state and settings.context:
            self.tell(
                "both nodename-lint.clusterState and nodename-lint.context are set; using the file",
                lsp.MessageType.Warning,
            )
        try:
            if settings.cluster_state:
                from ..cluster.from_file import load_state_file

                path = os.path.join(state.root or os.getcwd(), os.path.expanduser(settings.cluster_state))
                state.cluster = await asyncio.to_thread(load_state_file, path, "nodename-lint.clusterState")
            elif settings.context:
                state.cluster, state.live_namespace = await asyncio.to_thread(_read_live, settings.context)
        except UsageError as exc:
            self.cluster_off(str(exc))
            return "no cluster state"
        cluster = state.cluster
        if cluster is None:
            return "no cluster state configured"
        return f"read {cluster.source}: {len(cluster.nodes or {})} nodes"

    def config_for(self, path: str) -> Config:
        """The `.nodename-lint.yaml` governing PATH, re-read whenever the file changes."""
        config_path = config_for(path)  # the nearest to the file, as in a command-line run
        if config_path is None:
            return Config()
        try:
            mtime = os.stat(config_path).st_mtime_ns
            cached = self.state.configs.get(config_path)
            if cached is None or cached[0] != mtime:
                cached = (mtime, load_config(config_path, list(all_rules())))
                self.state.configs[config_path] = cached
            return cached[1]
        except (OSError, UsageError) as exc:
            self.tell(f"{exc}; linting with the default settings", once=True)
            return Config()

    # --- linting ------------------------------------------------------------------------------
    def lint(self, document: TextDocument) -> tuple[Linted, list[Document]]:
        """The findings of the document's text, and its documents as composed for them (for the ranges)."""
        path = uri_path(document.uri)
        text = document.source
        result = Linted(document.version, text, path, [], None)
        if is_helm_template(path):
            return result, []  # unrendered templates are not YAML; lint `helm template` output instead
        config = self.config_for(path)
        if config.exclude and is_excluded(path, config.exclude):
            return result, []
        catalogue = all_rules()
        severities = resolve_severities(catalogue, config, [], [])
        namespace = config.namespace or self.state.live_namespace or "default"
        linter = Linter(severities, Context(cluster=self.state.cluster, default_namespace=namespace))
        result.linter = linter
        result.is_static_pod = is_static_pod_path(path, config.static_pod_dirs)
        documents = list(iter_documents([text], split_lists=True, limits=linter.limits))
        try:
            file_result = linter.lint_documents(documents, path, result.is_static_pod)
        except UsageError as exc:  # damage a rule found in a part of the cluster state read when first needed
            cluster = self.state.cluster
            if cluster is None:
                raise
            self.state.cluster = None
            self.cluster_off(
                f"the cluster state from {cluster.source}: {exc}" if isinstance(exc, DamagedState) else str(exc)
            )
            for uri in self.linted:  # the other open documents lose their cluster findings too
                if uri != document.uri:
                    self.schedule(uri)
            return self.lint(document)
        result.findings = linter.collect([file_result]).findings
        return result, documents

    def publish(self, document: TextDocument) -> None:
        # The documents are composed once, for the lint and the ranges, and dropped before the cyclic GC
        # runs again: held while it runs (their nodes, a few hundred thousand objects in a big file), they
        # cost a command-line run's whole lint in collections. They hold no cycles (see
        # documents.without_cycle_collection): reference counting frees them.
        with without_cycle_collection():
            linted, documents = self.lint(document)
            diagnostics = _diagnostics(document, linted, NodeEnds(documents))
            del documents
        self.linted[document.uri] = linted
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=document.uri, version=document.version, diagnostics=diagnostics)
        )

    def publish_all(self) -> None:
        for uri in list(self.linted):
            self.publish(self.workspace.get_text_document(uri))

    def schedule(self, uri: str) -> None:
        """Lint after DEBOUNCE_SECONDS without a further change (one lint per pause in typing)."""
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()

        def run() -> None:
            self.pending.pop(uri, None)
            if uri in self.linted:
                self.publish(self.workspace.get_text_document(uri))

        self.pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, run)

    def current(self, uri: str) -> Linted | None:
        """The lint of the document as it is now (linting again if it changed since)."""
        linted = self.linted.get(uri)
        if linted is None:
            return None
        document = self.workspace.get_text_document(uri)
        if linted.version != document.version or linted.text != document.source:
            self.publish(document)
            linted = self.linted[uri]
        return linted


def _diagnostics(document: TextDocument, linted: Linted, ends: NodeEnds) -> list[lsp.Diagnostic]:
    lines = text_lines(linted.text)  # once: read again per finding, it made a big file's diagnostics quadratic
    diagnostics = []
    for finding in linted.findings:
        span = finding_span(finding.line, finding.column, ends, lines)
        # escaped as in every other format: the editor shows it as it arrives (a U+202E reorders the line)
        message = one_line(finding.message) + (f"\nFix: {one_line(finding.fix)}" if finding.fix else "")
        diagnostics.append(
            lsp.Diagnostic(
                range=client_range(document, span, lines),
                message=message,
                severity=SEVERITY[finding.severity],
                code=finding.rule,
                code_description=lsp.CodeDescription(href=rule_doc_url(finding.rule)),
                source=SOURCE,
                data={"line": finding.line, "column": finding.column},
            )
        )
    return diagnostics


def _read_live(context: str) -> tuple[ClusterState, str | None]:
    from ..cluster.live import LiveCluster, LiveOptions

    live = LiveCluster(LiveOptions(context=context))
    return live.whole_state(), live.namespace


# --- helpers ----------------------------------------------------------------------------------------
def uri_path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def is_helm_template(path: str) -> bool:
    """A file under templates/ of a folder holding Chart.yaml: Go templates, not manifests."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        parent = os.path.dirname(folder)
        if os.path.basename(folder) == "templates" and os.path.isfile(os.path.join(parent, "Chart.yaml")):
            return True
        if parent == folder:
            return False
        folder = parent


def is_manifest(document: TextDocument) -> bool:
    return document.language_id in LANGUAGES or uri_path(document.uri).endswith(MANIFEST_SUFFIXES)


def text_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


def client_range(document: TextDocument, span: Span, lines: list[str]) -> lsp.Range:
    """SPAN in the client's units (UTF-16 code units by default), LINES being the document's text_lines."""
    server = ServerTextRange(ServerTextPosition(*span.start), ServerTextPosition(*span.end))
    return document.position_codec.range_to_client_units(lines, server)


def offset_position(document: TextDocument, text: str, offset: int) -> lsp.Position:
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return document.position_codec.position_to_client_units(text_lines(text), ServerTextPosition(line, column))


# --- code actions -------------------------------------------------------------------------------------
def code_actions(server: NodenameLintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction | lsp.Command]:
    uri = params.text_document.uri
    linted = server.current(uri)
    if linted is None or linted.linter is None:
        return []
    document = server.workspace.get_text_document(uri)
    catalogue = all_rules()
    actions: list[lsp.CodeAction | lsp.Command] = []
    for diagnostic in params.context.diagnostics:
        finding = _finding_of(diagnostic, linted)
        if finding is None:
            continue
        rule = catalogue.get(finding.rule)
        if rule is not None and rule.fixer_function is not None:
            from ..fix.edits import describe
            from ..fix.runner import fix_finding

            fix = fix_finding(linted.linter, linted.text, finding, linted.path, linted.is_static_pod)
            if fix.splices:
                edits = [
                    lsp.TextEdit(
                        range=lsp.Range(
                            start=offset_position(document, linted.text, splice.start),
                            end=offset_position(document, linted.text, splice.end),
                        ),
                        new_text=splice.text,
                    )
                    for splice in fix.splices
                ]
                actions.append(
                    lsp.CodeAction(
                        title=one_line(f"Fix {finding.rule}: {', '.join(map(describe, fix.edits))}"),
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        is_preferred=True,
                        edit=lsp.WorkspaceEdit(changes={uri: edits}),
                    )
                )
        suppress = suppress_edit(document, linted, finding)
        if suppress is not None:
            actions.append(
                lsp.CodeAction(
                    title=f"Ignore {finding.rule} on this line",
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=lsp.WorkspaceEdit(changes={uri: [suppress]}),
                )
            )
        # a bare Command (allowed in a codeAction reply): a CodeAction holding only a command is read
        # as a Command by lsprotocol-based clients anyway
        actions.append(
            lsp.Command(title=f"Explain rule {finding.rule}", command=EXPLAIN_COMMAND, arguments=[finding.rule])
        )
    return actions


def _finding_of(diagnostic: lsp.Diagnostic, linted: Linted) -> Finding | None:
    if diagnostic.source != SOURCE:
        return None
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    line, column = data.get("line"), data.get("column")
    for finding in linted.findings:
        if finding.rule == diagnostic.code and (
            (finding.line, finding.column) == (line, column)
            or (line is None and finding.line - 1 == diagnostic.range.start.line)
        ):
            return finding
    return None


def suppress_edit(document: TextDocument, linted: Linted, finding: Finding) -> lsp.TextEdit | None:
    """The ignore comment for FINDING at the end of its line (or its rule added to the comment there),
    checked by linting the edited text. None for JSON, which has no comments, and when the comment
    would not silence the finding or would break the YAML (a line inside a block scalar)."""
    if linted.linter is None or linted.path.endswith(".json") or linted.text.lstrip().startswith(("{", "[")):
        return None
    lines = text_lines(linted.text)
    index = finding.line - 1
    if index >= len(lines):
        return None
    body = lines[index].rstrip("\r\n")
    insertion = comment_edit(body, finding.rule)
    if insertion is None:
        return None
    column, new_text = insertion
    edited = "".join(lines[:index]) + body[:column] + new_text + lines[index][column:] + "".join(lines[index + 1 :])
    after = linted.linter.lint_text(edited, linted.path, linted.is_static_pod).findings
    syntax_errors = sum(f.rule == SYNTAX_RULE for f in linted.findings)
    if (
        any((f.rule, f.line) == (finding.rule, finding.line) for f in after)
        or sum(f.rule == SYNTAX_RULE for f in after) > syntax_errors
    ):
        return None
    codec = document.position_codec
    return lsp.TextEdit(
        range=lsp.Range(
            start=codec.position_to_client_units(lines, ServerTextPosition(index, column)),
            end=codec.position_to_client_units(lines, ServerTextPosition(index, column)),
        ),
        new_text=new_text,
    )


# --- the server ---------------------------------------------------------------------------------------
def create_server() -> NodenameLintServer:
    server = NodenameLintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: NodenameLintServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            ls.state.initial_settings = Settings.parse(options.get(SETTINGS_SECTION, options))

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: NodenameLintServer, params: lsp.InitializedParams) -> None:
        ls.state.root = ls.workspace.root_path
        try:
            await ls.read_settings()
            await ls.load_cluster()
        finally:
            ls.ready.set()
        ls.publish_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: NodenameLintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        if not is_manifest(document):
            return
        ls.linted[document.uri] = Linted(None, "", "", [], None, waiting=True)
        await ls.ready.wait()
        linted = ls.linted.get(document.uri)
        if linted is not None and linted.waiting:  # else closed, or linted when the settings arrived
            ls.publish(ls.workspace.get_text_document(document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NodenameLintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.linted:
            ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: NodenameLintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = uri_path(params.text_document.uri)
        if os.path.basename(path) in (".nodename-lint.yaml", ".nodename-lint.yml"):
            ls.state.configs.pop(path, None)
            ls.publish_all()  # every document under it may change
        elif params.text_document.uri in ls.linted and ls.ready.is_set():
            ls.publish(ls.workspace.get_text_document(params.text_document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NodenameLintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.linted.pop(uri, None) is not None:
            handle = ls.pending.pop(uri, None)
            if handle is not None:
                handle.cancel()
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: NodenameLintServer, params: lsp.DidChangeConfigurationParams) -> None:
        before = ls.state.settings
        await ls.read_settings()
        if ls.state.settings != before:
            await ls.load_cluster()
            ls.publish_all()

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix])
    )
    def code_action(ls: NodenameLintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction | lsp.Command]:
        return code_actions(ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: NodenameLintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        linted = ls.current(params.text_document.uri)
        if linted is None or linted.linter is None:
            return None
        document = ls.workspace.get_text_document(params.text_document.uri)
        position = document.position_from_client_units(params.position)
        markdown = hover_markdown(
            linted.text, (position.line, position.character), ls.state.cluster, linted.linter.context.default_namespace
        )
        if markdown is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown))

    @server.command(EXPLAIN_COMMAND)
    def explain(ls: NodenameLintServer, *arguments: Any) -> str | None:
        rule = all_rules().get(str(arguments[0])) if arguments else None
        if rule is None:
            ls.tell(f"unknown rule id {arguments[0] if arguments else ''!r} (see `nodename-lint rules`)")
            return None
        documentation = rule.documentation()
        ls.tell(documentation, lsp.MessageType.Info)
        return documentation

    @server.command(REFRESH_COMMAND)
    async def refresh(ls: NodenameLintServer, *arguments: Any) -> str:
        """Read the cluster again (the only time a live context is read after startup)."""
        summary = await ls.load_cluster()
        ls.publish_all()
        ls.tell(summary, lsp.MessageType.Info)
        return summary

    return server


def main() -> None:
    create_server().start_io()
