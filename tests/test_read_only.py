"""The read-only guarantee in the code itself: one function sends every request to a cluster (lists, gets,
and the webhook's watches), and the only method it can send is GET. Every live test then checks what the
API server saw (`api_server.methods == {"GET"}`)."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

SENDING = frozenset({"request", "urlopen", "request_encode_url", "request_encode_body", "putrequest", "call_api"})


def test_one_function_sends_every_request_and_it_can_only_send_get() -> None:
    senders = []
    for path in sorted((ROOT / "nodename_lint").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {
            id(node): function.name
            for function in ast.walk(tree)
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(function)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SENDING:
                method = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
                senders.append((path.relative_to(ROOT).as_posix(), functions.get(id(node)), method))
    assert senders == [("nodename_lint/cluster/connection.py", "_open", "GET")]
