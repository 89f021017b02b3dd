"""What building a folder is given (RenderOptions, a chart's ChartSettings) and gives back (Rendering,
RenderProblem); apart from the package's discovery code, which every run over files loads."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..documents import Document
    from . import Origin
    from .sandbox import Budget


@dataclass
class RenderProblem:
    """Why a folder could not be built, at the file and line the tool names."""

    rule: str
    file: str
    line: int
    column: int
    message: str
    fix: str
    severity: str | None = None  # the problem's own severity (a configured one still wins); None: the rule's


@dataclass
class Rendering:
    """What building one folder gave: documents with origins, problems, and notes for the summary."""

    documents: list[Document] = field(default_factory=list)
    problems: list[RenderProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    built_from: list[str] = field(default_factory=list)  # real paths of the files a kustomize build read
    entry: str = ""  # a kustomization: the real path of its kustomization file, which overlays name as a base
    # Real paths of every file the build read (a chart's private copy and values files, an overlay's
    # files): a finding of a built object counts as changed when any of them changed (--changed-since).
    inputs: list[str] = field(default_factory=list)

    def add(self, documents: Iterable[Document], origin: Origin) -> None:
        for document in documents:
            document.origin = origin
            self.documents.append(document)


@dataclass(frozen=True)
class ChartSettings:
    """Per-chart settings from the config file (`helm: {charts/web: {values: [...]}}`)."""

    values: tuple[str, ...] = ()  # absolute paths
    release: str | None = None
    namespace: str | None = None


@dataclass(frozen=True)
class RenderOptions:
    """How to build folders: Helm values, release and namespace; per-chart settings by real path."""

    helm_values: tuple[str, ...] = ()  # --helm-values, in order (absolute paths)
    helm_release: str = "release-name"  # helm template's default release name
    helm_namespace: str | None = None  # None: the run's default namespace
    charts: tuple[tuple[str, ChartSettings], ...] = ()
    budget: Budget | None = None  # what one render may cost (None: sandbox.Budget(), the documented budget)

    def chart_settings(self, chart_folder: str) -> ChartSettings:
        real = os.path.realpath(chart_folder)
        return next((settings for folder, settings in self.charts if folder == real), ChartSettings())
