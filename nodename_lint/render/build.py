"""Building a chart or kustomization folder: the dispatch to helm.py or kustomize.py.

It lives apart from the package's shared types (in __init__.py and types.py), which helm.py and kustomize.py
import: the package importing its builders back would be an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import HELM
from .helm import render_chart
from .kustomize import build_kustomization
from .types import Rendering, RenderOptions

if TYPE_CHECKING:
    from ..sources import Source


def render(source: Source, options: RenderOptions | None, default_namespace: str) -> Rendering:
    """Build a chart or kustomization folder (see helm.py and kustomize.py); None: the default options."""
    if source.render == HELM:
        return render_chart(source.path, source.display, options or RenderOptions(), default_namespace)
    return build_kustomization(source.path, source.display)
