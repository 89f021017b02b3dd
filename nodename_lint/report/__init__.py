"""Output formats. Each module renders a RunResult; they are imported only when asked for."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..findings import RunResult

# The command line offers these as --format NAME and --output-NAME FILE; importing this package is cheap.
FORMATS = ("text", "json", "sarif", "github", "markdown")


class Renderer(Protocol):
    def __call__(self, result: RunResult, *, color: bool = False) -> str: ...


def renderer(name: str) -> Renderer:
    """The render function of an output format."""
    module = importlib.import_module(f"{__name__}.{name}")
    return module.render
