"""Building a chart or kustomization folder: the dispatch to helm.py or kustomize.py.

It lives apart from the package's shared types (in __init__.py), which helm.py and kustomize.py
import: the package importing its builders back would be an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import HELM, Rendering, RenderOptions
from .helm import render_chart
from .kustomize import build_kustomization

if TYPE_CHECKING:
    from ..sources import Source


def render(source: Source, options: RenderOptions, default_namespace: str) -> Rendering:
    """Build a chart or kustomization folder (see helm.py and kustomize.py)."""
    if source.render == HELM:
        return render_chart(source.path, source.display, options, default_namespace)
    return build_kustomization(source.path, source.display)
