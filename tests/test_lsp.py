"""`nodename-lint lsp` driven by a real LSP client (pytest-lsp's, with Neovim's capabilities) over stdio.

Each test starts the server as a subprocess, as an editor does, and talks JSON-RPC to it:
initialize, open, change, code actions (applied to the text like an editor would), hover,
commands, shutdown and exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

from nodename_lint.documents import iter_documents
from nodename_lint.lsp.spans import NodeEnds, node_ends
from nodename_lint.registry import all_rules
from nodename_lint.report.locations import rule_doc_url
from tests.apiserver import ApiServer
from tests.conftest import ROOT, run_cli, unavailable

STATE = ROOT / "examples" / "cluster" / "state.yaml"
GHOST = """\
apiVersion: v1
kind: Pod
metadata:
  name: ghost-shell
spec:
  nodeName: kind-wroker
  containers:
    - name: shell
      image: busybox:1.36
      resources:
        requests: {cpu: 100m}
"""
TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeName: kind-worker
      containers: [{name: web, image: nginx}]
"""


class Recorder(dict):  # type: ignore[type-arg]
    """client.diagnostics that also keeps every publication, to count lints."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, list[lsp.Diagnostic]]] = []

    def __setitem__(self, uri: str, diagnostics: Any) -> None:
        self.log.append((uri, list(diagnostics)))
        super().__setitem__(uri, diagnostics)


@contextlib.asynccontextmanager
async def language_server(
    root: Path,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    editor: str = "neovim",
    initialization_options: Any = None,
) -> AsyncIterator[LanguageClient]:
    client = make_test_lsp_client()
    client.diagnostics = Recorder()
    client.set_configuration(settings or {}, section="nodename-lint")
    await client.start_io(
        sys.executable, "-m", "nodename_lint", "lsp", "--stdio", cwd=str(root), env={**os.environ, **(env or {})}
    )
    result = await client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities(editor),
            root_uri=root.as_uri(),
            initialization_options=initialization_options,
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
    client.position_encoding = result.capabilities.position_encoding or "utf-16"  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        await client.shutdown_session()
        assert client._server is not None and client._server.returncode == 0  # exit after shutdown: code 0


async def diagnostics(
    client: LanguageClient, uri: str, count: int = 1, wait_seconds: float = 10
) -> list[lsp.Diagnostic]:
    """The diagnostics of the COUNTth publication for URI from now on (waits up to WAIT_SECONDS)."""
    log: list[tuple[str, list[lsp.Diagnostic]]] = client.diagnostics.log  # type: ignore[attr-defined]
    seen = len([entry for entry in log if entry[0] == uri])
    for _ in range(int(wait_seconds / 0.05)):
        mine = [found for entry_uri, found in log if entry_uri == uri]
        if len(mine) >= seen + count:
            return mine[seen + count - 1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics for {uri}")


def open_document(client: LanguageClient, path: Path, text: str, language: str = "yaml") -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
        )
    )
    return uri


def units(text: str, encoding: str) -> int:
    """The length of TEXT in the position encoding's code units."""
    return (
        len(text.encode(encoding.replace("-", "_") + ("-le" if encoding != "utf-8" else "")))
        // ({"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding])
    )


def apply(text: str, edits: list[lsp.TextEdit], encoding: str = "utf-16") -> str:
    """What an editor does with TextEdits, counting columns in the negotiated encoding."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: lsp.Position) -> int:
        line = lines[position.line] if position.line < len(lines) else ""
        column = next((i for i in range(len(line) + 1) if units(line[:i], encoding) >= position.character), len(line))
        return starts[position.line] + column

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


async def actions_for(
    client: LanguageClient, uri: str, diagnostic: lsp.Diagnostic
) -> dict[str, lsp.CodeAction | lsp.Command]:
    found = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return {action.title.split(" ")[0]: action for action in found or []}


@pytest.mark.asyncio
async def test_open_change_and_quick_fix_match_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "ghost.yaml"
    path.write_text(GHOST)
    async with language_server(tmp_path, {"clusterState": str(STATE)}) as client:
        uri = open_document(client, path, GHOST)
        found = await diagnostics(client, uri)
        unknown = next(d for d in found if d.code == "unknown-node")
        assert unknown.source == "nodename-lint" and unknown.severity == lsp.DiagnosticSeverity.Error
        assert unknown.code_description is not None and unknown.code_description.href == rule_doc_url("unknown-node")
        # `nodeName: kind-wroker` on line 6: from the key to the end of the value
        assert (unknown.range.start.line, unknown.range.start.character) == (5, 2)
        assert (unknown.range.end.line, unknown.range.end.character) == (5, 2 + len("nodeName: kind-wroker"))
        assert "did you mean kind-worker" in unknown.message
        info = next(d for d in found if d.code == "nodename-on-pod")
        assert info.severity == lsp.DiagnosticSeverity.Information

        actions = await actions_for(client, uri, unknown)
        assert set(actions) == {"Fix", "Ignore", "Explain"}
        fix = actions["Fix"]
        assert isinstance(fix, lsp.CodeAction) and fix.edit is not None and fix.edit.changes is not None
        assert list(fix.diagnostics or []) == [unknown] and fix.kind == lsp.CodeActionKind.QuickFix
        assert fix.title == "Fix unknown-node: set spec.nodeName to kind-worker"
        fixed = apply(GHOST, fix.edit.changes[uri])
        cli = run_cli("--fix", str(path), "--cluster-state", str(STATE))
        assert "fixed 1 problem" in cli.stderr, cli.stderr
        assert fixed == path.read_text() and "nodeName: kind-worker\n" in fixed

        # the editor applies the fix: a change, then diagnostics without unknown-node after the pause
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    lsp.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in fix.edit.changes[uri]
                ],
            )
        )
        assert {d.code for d in await diagnostics(client, uri)} == {"nodename-on-pod"}


@pytest.mark.asyncio
async def test_changes_are_debounced_and_unsaved_text_is_linted(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    path.write_text("kind: ConfigMap\n")  # the file on disk is not what the editor shows
    async with language_server(tmp_path) as client:
        uri = open_document(client, path, TEMPLATE)
        assert [d.code for d in await diagnostics(client, uri)] == ["nodename-in-template"]
        for version, name in enumerate(["a", "ab", "abc", "Bad_Name"], start=2):
            client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[
                        lsp.TextDocumentContentChangeWholeDocument(
                            text=TEMPLATE.replace("nodeName: kind-worker", f"nodeName: {name}")
                        )
                    ],
                )
            )
        assert sorted(d.code for d in await diagnostics(client, uri)) == ["invalid-node-name", "nodename-in-template"]
        await asyncio.sleep(0.6)
        publications = [entry for entry in client.diagnostics.log if entry[0] == uri]  # type: ignore[attr-defined]
        assert len(publications) == 2, "four quick changes must give one lint, not four"
        client.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
        assert sorted(d.code for d in await diagnostics(client, uri)) == ["invalid-node-name", "nodename-in-template"]
        no_cluster = await client.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=9, character=8)
            )
        )
        assert no_cluster is None  # hover needs a cluster state


@pytest.mark.asyncio
async def test_suppress_and_explain(tmp_path: Path) -> None:
    async with language_server(tmp_path) as client:
        uri = open_document(client, tmp_path / "web.yaml", TEMPLATE)
        [diagnostic] = await diagnostics(client, uri)
        actions = await actions_for(client, uri, diagnostic)
        assert set(actions) == {"Fix", "Ignore", "Explain"}
        ignore = actions["Ignore"]
        assert isinstance(ignore, lsp.CodeAction) and ignore.edit is not None and ignore.edit.changes is not None
        suppressed = apply(TEMPLATE, ignore.edit.changes[uri])
        assert "      nodeName: kind-worker  # nodename-lint: ignore[nodename-in-template]\n" in suppressed
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=suppressed)],
            )
        )
        assert await diagnostics(client, uri) == []

        command = actions["Explain"]
        assert isinstance(command, lsp.Command)
        result = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=command.command, arguments=command.arguments)
        )
        assert result == all_rules()["nodename-in-template"].documentation()
        assert any("# nodename-in-template" in message.message for message in client.messages)


@pytest.mark.asyncio
async def test_syntax_error_keeps_other_documents_and_helm_templates_are_skipped(tmp_path: Path) -> None:
    broken = TEMPLATE + "---\nkind: [unclosed\n---\n" + GHOST
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 1.0.0\n")
    async with language_server(tmp_path) as client:
        uri = open_document(client, tmp_path / "all.yaml", broken)
        found = await diagnostics(client, uri)
        assert sorted(d.code for d in found) == ["nodename-in-template", "nodename-on-pod", "yaml-syntax"]
        syntax = next(d for d in found if d.code == "yaml-syntax")
        assert syntax.range.start.line == 13
        helm = open_document(client, chart / "templates" / "web.yaml", TEMPLATE.replace("web", "{{ .Release.Name }}"))
        assert await diagnostics(client, helm) == []
        json_uri = open_document(
            client,
            tmp_path / "pod.json",
            '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},\n'
            ' "spec": {"nodeName": "Bad_Name", "containers": []}}\n',
            language="json",
        )
        found = await diagnostics(client, json_uri)
        invalid = next(d for d in found if d.code == "invalid-node-name")
        assert (invalid.range.start.line, invalid.range.start.character) == (1, 10)
        assert invalid.range.end.character == 10 + len('"nodeName": "Bad_Name"')
        assert "Ignore" not in await actions_for(client, json_uri, invalid)  # JSON has no comments


@pytest.mark.asyncio
async def test_workspace_config_file_sets_severities(tmp_path: Path) -> None:
    (tmp_path / ".nodename-lint.yaml").write_text("rules:\n  nodename-in-template: warning\n")
    async with language_server(tmp_path) as client:
        uri = open_document(client, tmp_path / "web.yaml", TEMPLATE)
        [diagnostic] = await diagnostics(client, uri)
        assert diagnostic.severity == lsp.DiagnosticSeverity.Warning
        (tmp_path / ".nodename-lint.yaml").write_text("rules:\n  nodename-in-template: off\n")
        client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=(tmp_path / ".nodename-lint.yaml").as_uri())
            )
        )
        assert await diagnostics(client, uri) == []


@pytest.mark.asyncio
async def test_settings_change_and_a_broken_config_file(tmp_path: Path) -> None:
    async with language_server(tmp_path) as client:
        uri = open_document(client, tmp_path / "ghost.yaml", GHOST)
        assert {d.code for d in await diagnostics(client, uri)} == {"nodename-on-pod"}  # no cluster: rules off
        client.set_configuration({"clusterState": str(STATE)}, section="nodename-lint")
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        assert {d.code for d in await diagnostics(client, uri)} == {"nodename-on-pod", "unknown-node"}
        config = tmp_path / ".nodename-lint.yaml"
        config.write_text("rules:\n  unknown-nod: off\n")
        client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=config.as_uri()))
        )
        assert {d.code for d in await diagnostics(client, uri)} == {"nodename-on-pod", "unknown-node"}
        errors = [m.message for m in client.messages if m.type == lsp.MessageType.Error]
        assert len(errors) == 1 and ".nodename-lint.yaml:2" in errors[0] and "unknown-node" in errors[0], errors


@pytest.mark.asyncio
async def test_a_config_linked_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    """The language server found `.nodename-lint.yaml -> ~/.git-credentials` as the CLI did, and quoted it."""
    secret = "ghp_0123456789abcdefSECRET"
    (tmp_path / "credentials").write_text(f"https://x-access-token:{secret}@github.com\n")
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    os.symlink(tmp_path / "credentials", workspace / ".nodename-lint.yaml")
    async with language_server(workspace) as client:
        uri = open_document(client, workspace / "ghost.yaml", GHOST)
        assert {d.code for d in await diagnostics(client, uri)} == {"nodename-on-pod"}  # the default settings
        errors = [m.message for m in client.messages if m.type == lsp.MessageType.Error]
        assert len(errors) == 1 and "outside the repository" in errors[0], errors
        assert all(secret not in m.message for m in client.messages)


HOSTILE_TEMPLATE = TEMPLATE.replace("nodeName: kind-worker", 'nodeName: "kind-\\e[2J\\a\\u202eworker\\L\\N\\u2066"')


@pytest.mark.asyncio
async def test_diagnostics_and_actions_show_control_and_bidi_characters_as_escapes(tmp_path: Path) -> None:
    """The editor shows a diagnostic's message and an action's title as they arrive: a manifest's U+202E
    reordered the Problems panel (Trojan Source), ESC and BEL reached a terminal editor's screen, U+2028 broke
    the line. Each arrives as the visible escape every other format writes; only the `Fix:` line break stays."""
    unsafe = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
    async with language_server(tmp_path) as client:
        uri = open_document(client, tmp_path / "web.yaml", HOSTILE_TEMPLATE)
        found = await diagnostics(client, uri)
        assert found, "the hostile name is reported"
        shown = [d.message for d in found]
        for diagnostic in found:
            shown += [action.title for action in (await actions_for(client, uri, diagnostic)).values()]
        assert [text for text in shown if unsafe.search(text)] == []
        assert any("\\x1b[2J\\x07\\u202eworker\\u2028\\x85\\u2066" in text for text in shown), shown


@pytest.mark.asyncio
async def test_a_cluster_state_linked_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    """`clusterState: state.yaml` (the user's setting) where the repository made state.yaml a link to a file
    of the machine: read, as with --cluster-state (tests/test_hostile_pr.py); now refused, naming the link."""
    workspace = tmp_path / "workspace"
    (workspace / ".git").mkdir(parents=True)
    os.symlink(STATE, workspace / "state.yaml")
    async with language_server(workspace, {"clusterState": "state.yaml"}) as client:
        uri = open_document(client, workspace / "ghost.yaml", GHOST)
        assert {d.code for d in await diagnostics(client, uri)} == {"nodename-on-pod"}  # no cluster state
        errors = [m.message for m in client.messages if m.type == lsp.MessageType.Error]
        assert any(f"nodename-lint.clusterState {workspace / 'state.yaml'}: a symlink to" in m for m in errors), errors


@pytest.mark.asyncio
async def test_damage_a_rule_finds_in_the_cluster_state_turns_the_cluster_rules_off(tmp_path: Path) -> None:
    """A JSON dump's Pod read when first needed, holding bytes that are not UTF-8: the lint of the document
    raised out of the server's handler, and no diagnostics came. Now the editor is told, naming the file and
    the Pod, and the document is linted without the cluster rules."""
    items = [item for doc in yaml.safe_load_all(STATE.read_text()) if doc for item in doc.get("items", [doc])]
    [running] = [i for i in items if i["kind"] == "Pod" and i["metadata"]["name"] == "coredns-668d6bf9bc-4xk2p"]
    running["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "@bad@"}}
    state = tmp_path / "dump.json"
    state.write_bytes(json.dumps({"kind": "List", "items": items}).encode().replace(b"@bad@", b"1\xff"))
    async with language_server(tmp_path, {"clusterState": str(state)}) as client:
        ghost = open_document(client, tmp_path / "ghost.yaml", GHOST)  # the state read: a cluster rule's finding
        assert "unknown-node" in {d.code for d in await diagnostics(client, ghost)}
        uri = open_document(client, tmp_path / "pinned.yaml", GHOST.replace("kind-wroker", "kind-worker"))
        assert "nodename-on-pod" in {d.code for d in await diagnostics(client, uri)}
        assert {d.code for d in await diagnostics(client, ghost)} == {"nodename-on-pod"}  # linted again, offline
        errors = [m.message for m in client.messages if m.type == lsp.MessageType.Error]
        assert any(
            f"the cluster state from file {state}: the spec of Pod kube-system/coredns-668d6bf9bc-4xk2p is not UTF-8"
            in message
            and "the cluster rules are off" in message
            for message in errors
        ), errors


@pytest.mark.asyncio
async def test_a_megabyte_line_of_braces_does_not_stop_the_server(tmp_path: Path) -> None:
    """template_hint took hours on it, and the server answered nothing meanwhile (tests/test_linear_regexes.py)."""
    async with language_server(tmp_path) as client:
        braces = open_document(client, tmp_path / "braces.yaml", "kind: Pod\nx: " + "{" * 1_000_000 + "\n")
        [problem] = await diagnostics(client, braces)
        assert problem.code == "yaml-syntax" and "nested more than 10,000 levels" in problem.message
        ghost = open_document(client, tmp_path / "ghost.yaml", GHOST)
        assert {d.code for d in await diagnostics(client, ghost)} == {"nodename-on-pod"}


@pytest.mark.asyncio
async def test_settings_from_initialization_options(tmp_path: Path) -> None:
    """A client that sends its settings as initializationOptions (Helix, VS Code's generic client) is heard too."""
    options = {"nodename-lint": {"clusterState": str(STATE)}}
    async with language_server(tmp_path, initialization_options=options) as client:
        uri = open_document(client, tmp_path / "ghost.yaml", GHOST)
        assert "unknown-node" in {d.code for d in await diagnostics(client, uri)}


@pytest.mark.asyncio
async def test_hover_shows_what_the_pinned_node_has(tmp_path: Path) -> None:
    scheduling = "  nodeSelector: {dedicated: reports, disktype: hdd, zone: a}\n  tolerations: []\n  containers:"
    text = GHOST.replace("kind-wroker", "kind-worker2").replace("  containers:", scheduling)
    async with language_server(tmp_path, {"clusterState": str(STATE)}) as client:
        uri = open_document(client, tmp_path / "pod.yaml", text)
        await diagnostics(client, uri)
        lines = text.splitlines()

        async def hover(key: str) -> str:
            line = next(i for i, content in enumerate(lines) if content.strip().startswith(key))
            result = await client.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=uri),
                    position=lsp.Position(line=line, character=lines[line].index(key) + 1),
                )
            )
            assert result is not None and isinstance(result.contents, lsp.MarkupContent), key
            return result.contents.value

        on_name = await hover("nodeName")
        assert "**Node** `kind-worker2`" in on_name and "Ready" in on_name
        assert "`dedicated=reports:NoSchedule`: **not tolerated**" in on_name
        on_selector = await hover("nodeSelector")
        assert "- `dedicated=reports` ✓ nodeSelector" in on_selector
        assert "- `disktype=ssd` ✗ nodeSelector wants `hdd`" in on_selector
        assert "- ✗ no `zone` label (nodeSelector wants `a`)" in on_selector
        requests = await hover("requests")
        assert "Allocatable minus used (4 Pods on the node)" in requests
        assert "| `cpu` | 4 cpu | 2100m cpu | 1900m cpu | 100m cpu |" in requests
        assert on_name == await hover("tolerations")
        none = await client.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=0, character=1)
            )
        )
        assert none is None  # apiVersion: nothing to say


@pytest.mark.asyncio
async def test_live_context_is_read_once_and_refreshed_on_command(
    tmp_path: Path, api_server: ApiServer, kubeconfig: Path
) -> None:
    async with language_server(tmp_path, {"context": "kind-kind"}, env={"KUBECONFIG": str(kubeconfig)}) as client:
        uri = open_document(client, tmp_path / "ghost.yaml", GHOST)
        found = await diagnostics(client, uri)
        assert "unknown-node" in {d.code for d in found}
        assert api_server.methods == {"GET"}
        reads = len(api_server.requests)
        assert reads >= 3
        for version in range(2, 5):
            client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=GHOST + "#" * version)],
                )
            )
            await diagnostics(client, uri)
        assert len(api_server.requests) == reads, "typing must not read the cluster"
        summary = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="nodename-lint.refreshCluster")
        )
        assert summary == "read context kind-kind: 3 nodes"
        assert len(api_server.requests) == 2 * reads and api_server.methods == {"GET"}


@pytest.mark.asyncio
@pytest.mark.parametrize("editor", ["neovim", "visual-studio-code"])
async def test_columns_follow_the_negotiated_position_encoding(tmp_path: Path, editor: str) -> None:
    """Neovim negotiates UTF-8, VS Code keeps UTF-16: a non-ASCII value before the finding shifts columns."""
    line = 'spec: {hostname: "é🚀", nodeName: Kind-Worker, containers: [{name: a, image: b}]}'
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: rocket}}\n{line}\n"
    async with language_server(tmp_path, editor=editor) as client:
        encoding = client.position_encoding  # type: ignore[attr-defined]
        assert encoding == {"neovim": "utf-8", "visual-studio-code": "utf-16"}[editor]
        uri = open_document(client, tmp_path / "rocket.yaml", text)
        invalid = next(d for d in await diagnostics(client, uri) if d.code == "invalid-node-name")
        start = line.index("nodeName")
        assert invalid.range.start == lsp.Position(line=3, character=units(line[:start], encoding))
        end = units(line[:start] + "nodeName: Kind-Worker", encoding)
        assert invalid.range.end == lsp.Position(line=3, character=end)
        fix = (await actions_for(client, uri, invalid))["Fix"]
        assert isinstance(fix, lsp.CodeAction) and fix.edit is not None and fix.edit.changes is not None
        assert apply(text, fix.edit.changes[uri], encoding) == text.replace("Kind-Worker", "kind-worker")
        client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        assert await diagnostics(client, uri) == []  # closing clears the file's diagnostics


def test_lsp_is_installed_as_a_command() -> None:
    """`nodename-lint lsp --help` from the installed console script (what editor setups call)."""
    script = shutil.which("nodename-lint", path=str(Path(sys.executable).parent))
    assert script is not None
    result = run_cli("lsp", "--help")
    assert result.returncode == 0 and "language server" in result.stdout


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("  nodeName: x", "  nodeName: x  # nodename-lint: ignore[unknown-node]"),
        (
            "  nodeName: x  # nodename-lint: ignore[nodename-on-pod]",
            "  nodeName: x  # nodename-lint: ignore[nodename-on-pod,unknown-node]",
        ),
        ("  nodeName: x  # nodename-lint: ignore[]", None),  # empty brackets ignore every rule already
        ("  nodeName: x  # nodename-lint: ignore", None),
        ("  nodeName: x  # nodename-lint: ignore[all]", None),
    ],
)
def test_the_ignore_comment_edit_is_one_the_engine_reads(line: str, expected: str | None) -> None:
    from nodename_lint.suppress import comment_edit, ignored_by_comment, rule_set

    edit = comment_edit(line, "unknown-node")
    if expected is None:
        assert edit is None
        return
    assert edit is not None
    column, text = edit
    edited = line[:column] + text + line[column:]
    assert edited == expected
    directive = edited[edited.index("#") :].split("ignore")[1].strip("[]")
    assert ignored_by_comment({3: rule_set(directive)}, 3, "unknown-node")


def test_hover_resource_amounts_cannot_break_out_of_the_markdown_table() -> None:
    from nodename_lint.cluster.records import NodeInfo
    from nodename_lint.cluster.state import ClusterState
    from nodename_lint.lsp.hover import hover_markdown

    resource = "example.com/x|<img src=https://e.example/t>*y*"
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: n1\n  containers:\n"
        f"    - name: c\n      resources:\n        requests: {{cpu: 100m, '{resource}': 1}}\n"
    )
    node = NodeInfo("n1", allocatable={"cpu": "4", resource: "2"})
    for cluster in (
        ClusterState("file s.yaml", nodes={"n1": node}, pods=[]),
        ClusterState("file s.yaml", nodes={"n1": node}),
    ):
        shown = hover_markdown(text, (8, 10), cluster, "default")
        assert shown is not None
        assert shown.count("<img") == 1, "only inside the resource's code span"
        assert "&lt;img src=https://e.example/t&gt;\\*y\\*" in shown, shown


def server_cpu_seconds(client: LanguageClient) -> float:
    """The server process's user + system CPU time so far (Linux /proc)."""
    assert client._server is not None
    try:
        with open(f"/proc/{client._server.pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        unavailable("the server's CPU time is read from /proc (Linux)")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime and stime


@pytest.mark.asyncio
async def test_diagnostics_cost_grows_linearly_with_the_document(tmp_path: Path) -> None:
    """Issue 23: diagnostics for 300 Deployments took 94 ms, for 3,000 4.0 s (every finding read all the
    lines again, and the documents were composed twice and held while the cyclic GC rescanned them).
    The server's own CPU time for 8 times the objects must stay within twice the linear 8 times (the
    quadratic server gave 20-30 times); CPU time, the best of two opens, so that load elsewhere does
    not count."""
    small, large = 250, 2000
    cost: dict[int, float] = {}
    async with language_server(tmp_path) as client:
        for count in (small, large):
            text = "---\n".join([TEMPLATE] * count)
            for attempt in range(2):
                path = tmp_path / f"deployments-{count}-{attempt}.yaml"
                before = server_cpu_seconds(client)
                uri = open_document(client, path, text)
                found = await diagnostics(client, uri, wait_seconds=120)
                cost[count] = min(cost.get(count, float("inf")), server_cpu_seconds(client) - before)
                assert [d.code for d in found] == ["nodename-in-template"] * count
                client.text_document_did_close(
                    lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
                )
                await diagnostics(client, uri)
    growth = cost[large] / max(cost[small], 0.01)
    assert growth < 2 * large / small, f"CPU {cost}: {growth:.1f} times for {large // small} times the objects"


BIG_LIST_ITEM = "- apiVersion: v1\n  kind: Pod\n  metadata: {{name: p{index}}}\n  spec:\n    nodeName: n\n"
NODE_SHAPES = [
    TEMPLATE,
    GHOST,
    "a: &x {b: 1}\nc: *x\nd:\n  - *x\n  - e: 1\n    f: [1, 2]\n  - - g\n    - h\n  - *x\n  - i: |\n      j\n",
    "- - - a\n    - b\n- {k: v, l: [1, {m: n}]}\n---\n# a comment\n\n---\nfoo: bar\n...\n--- {x: 1}\n",
    '{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "p"}, "spec": {"nodeName": "n"}}\n',
    "apiVersion: v1\nkind: List\nitems:\n" + "".join(BIG_LIST_ITEM.format(index=index) for index in range(4_000)),
]


@pytest.mark.parametrize("text", NODE_SHAPES, ids=["deployment", "pod", "aliases", "nested", "json", "big-list"])
def test_node_ends_found_from_the_point_are_those_of_the_walk(text: str) -> None:
    """NodeEnds descends to a point instead of walking every node: the same end for every key and item
    start (aliases out of order included), None where no node starts, on documents as the server composes
    them (a big List in pieces)."""
    documents = list(iter_documents([text], split_lists=True))
    walked = node_ends(documents)
    ends = NodeEnds(documents)
    assert walked and {point: ends.get(point) for point in walked} == walked
    lines = text.splitlines()
    for line, body in enumerate(lines[:200]):
        for column in range(len(body) + 1):
            if (line, column) not in walked:
                assert ends.get((line, column)) is None, (line, column)
