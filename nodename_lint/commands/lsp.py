"""`nodename-lint lsp`: the language server for editors."""

from __future__ import annotations

import click

# Startup: the server and pygls load only when the command runs (tests/test_imports.py).


@click.command("lsp", short_help="The language server for editors.")
@click.option(
    "--stdio",
    is_flag=True,
    help="Talk over stdin/stdout (the default and only transport; accepted because editor clients pass it).",
)
def lsp_command(stdio: bool) -> None:
    """Run the language server on stdin/stdout for an editor (see docs/editors.md)."""
    from ..lsp.server import main as serve

    serve()
