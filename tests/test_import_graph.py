"""The modules of nodename_lint import each other without a circle, even through function-level imports.

A circle hidden by an import inside a function works until someone moves that import to the top;
it also means two modules share one job. The graph is read from the source with ast, so it sees
every import statement: module level, inside functions, and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

# Package name -> folder, as pyproject.toml's package-dir ships them.
PACKAGES = {"nodename_lint": ROOT / "nodename_lint", "nodename_lint.rules": ROOT / "rules"}


def project_modules() -> dict[str, Path]:
    """Every module of the project by dotted name (a package by its own name, for its __init__.py)."""
    modules: dict[str, Path] = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that `name` imports anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # `from package import module` imports the module
                submodule = f"{target}.{alias.name}"
                found.add(submodule if submodule in modules else target)
        elif _later_module(node):  # rule.later("nodename_lint.scheduling", globals()): imported on first use
            found.add(node.args[0].value)  # type: ignore[attr-defined]
    return {module for module in found if module in modules and module != name}


def _later_module(node: ast.AST) -> bool:
    """Whether `node` is a call of rule.later naming a module in a string."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "later"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path that ends where it starts, or None."""
    state: dict[str, str] = {}  # "active" while on the current path, "done" once fully explored
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "active"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "active":
                return [*path[path.index(imported) :], imported]
            if imported not in state:
                cycle = visit(imported)
                if cycle:
                    return cycle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_the_import_graph_has_no_circle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_graph_sees_function_level_and_type_checking_imports() -> None:
    """The check can fail: it sees the imports the rules keep inside functions for startup's sake."""
    graph = import_graph()
    assert "nodename_lint.registry" in graph["nodename_lint.rules.invalid_suppression"]  # inside check()
    assert "nodename_lint.scheduling" in graph["nodename_lint.rules.untolerated_taint"]  # a stand-in (rule.later)
    assert "nodename_lint.cluster.state" in graph["nodename_lint.rule"]  # under if TYPE_CHECKING
    assert "nodename_lint.rule" in graph["nodename_lint.cluster.targets"]  # from ..rule import (relative)
    later_only = ast.parse('scheduling = later("nodename_lint.scheduling", globals())')
    assert _later_module(later_only.body[0].value)  # type: ignore[attr-defined]  # a stand-in is an import too
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
