"""Output formats. Each module renders a RunResult; they are imported only when asked for."""

from __future__ import annotations

import importlib
from typing import Protocol

from ..findings import RunResult

FORMATS = ("text", "json")


class Renderer(Protocol):
    def __call__(self, result: RunResult, *, color: bool = False) -> str: ...


def renderer(name: str) -> Renderer:
    """The render function of an output format."""
    module = importlib.import_module(f"{__name__}.{name}")
    return module.render
