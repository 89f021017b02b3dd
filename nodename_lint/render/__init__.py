"""Folders that are built before they are linted: Helm charts and Kustomize kustomizations.

A chart's templates and an overlay's patches are not manifests on their own: what reaches the
cluster is what `helm template` or `kustomize build` makes of them. Discovery (sources.py) yields
such a folder as one Source with `render` set; the engine asks this package for the built
documents, each carrying an Origin that places findings back in the file the user edits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import (
    CHART_FILE,
    HELM,
    KUSTOMIZATION_FILES,
    KUSTOMIZE,
    ChartSettings,
    Origin,
    Rendering,
    RenderOptions,
    RenderProblem,
    enclosing_rendered_folder,
    folder_render_kind,
    joined,
)

if TYPE_CHECKING:
    from ..sources import Source

__all__ = [
    "CHART_FILE", "HELM", "KUSTOMIZATION_FILES", "KUSTOMIZE", "ChartSettings", "Origin", "RenderOptions",
    "RenderProblem", "Rendering", "enclosing_rendered_folder", "folder_render_kind", "joined", "render",
]


def render(source: Source, options: RenderOptions, default_namespace: str) -> Rendering:
    """Build a chart or kustomization folder (see helm.py and kustomize.py)."""
    if source.render == HELM:
        from .helm import render_chart

        return render_chart(source.path, source.display, options, default_namespace)
    from .kustomize import build_kustomization

    return build_kustomization(source.path, source.display)
