"""Folders that are built before they are linted: Helm charts and Kustomize kustomizations.

A chart's templates and an overlay's patches are not manifests on their own: what reaches the
cluster is what `helm template` or `kustomize build` makes of them. Discovery (sources.py) yields
such a folder as one Source with `render` set; the engine asks this package for the built
documents, each carrying an Origin that places findings back in the file the user edits.

This module holds what discovery needs (the kinds of folder, the search for a file's chart) and
Origin; what a build is given and gives back is in types.py, loaded only when a folder is built or
configured (startup: a run over plain files never creates those classes).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..safe_text import printable_path

if TYPE_CHECKING:
    from ..model import Manifest, Path

HELM = "helm"
KUSTOMIZE = "kustomize"
CHART_FILE = "Chart.yaml"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


class Origin:
    """Where a built document came from: the file findings are reported at, and their lines there."""

    file: str  # the path reported (as the user named it)
    text: str  # that file's text, '' when there is none to read
    template: str | None = None  # the Helm template name (Finding.template), for templates only
    namespace: str | None = None  # where objects without metadata.namespace go (helm install -n)

    def place(self, obj: Manifest, path: Path) -> tuple[str, int, int, str]:
        """(file, line, column, note) of `path` of `obj`; the note says why a line is approximate."""
        raise NotImplementedError

    def text_of(self, file: str) -> str:
        """The text of a file `place` reported at, whose `# nodename-lint: ignore` comments apply."""
        return self.text if file == self.file else ""


def folder_render_kind(names: Iterable[str]) -> str:
    """HELM for a chart folder, KUSTOMIZE for a kustomization, '' for an ordinary folder."""
    names = set(names)
    if CHART_FILE in names:
        return HELM
    if names.intersection(KUSTOMIZATION_FILES):
        return KUSTOMIZE
    return ""


def enclosing_rendered_folder(path: str, cache: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(folder, kind) of the chart or kustomization a file belongs to, else ('', '').

    The search goes up from the file's folder to the repository root (a folder holding .git).

    A subchart under a chart's charts/ folder belongs to the outer chart, which renders it.
    """
    folder = os.path.dirname(os.path.abspath(path))
    walked: list[str] = []
    found = ("", "")
    while True:
        if folder in cache:
            found = cache[folder]
            break
        walked.append(folder)
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        kind = folder_render_kind(names)
        if kind:
            found = (folder, kind)
            break
        parent = os.path.dirname(folder)
        if parent == folder or ".git" in names:  # never past the repository's root
            break
        folder = parent
    if found[1] == HELM:
        found = (_outermost_chart(found[0]), HELM)
    for folder in walked:
        cache[folder] = found
    return found


def _outermost_chart(chart: str) -> str:
    while os.path.basename(os.path.dirname(chart)) == "charts":
        parent = os.path.dirname(os.path.dirname(chart))
        if not os.path.isfile(os.path.join(parent, CHART_FILE)):
            break
        chart = parent
    return chart


def joined(display: str, relative: str) -> str:
    """A path inside a folder as the user named it: `templates/x.yaml` for `.`, not `./templates/x.yaml`;
    printable (safe_text.printable_path), as a file name inside a chart or overlay is the pull request's to choose."""
    return printable_path(relative if display in (".", "") else os.path.join(display, relative))
