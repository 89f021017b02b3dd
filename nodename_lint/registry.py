"""The rule catalogue: every module of nodename_lint.rules that defines RULE."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from functools import lru_cache

from .rule import Rule


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Rules by id, in catalogue order (offline rules first, then cluster rules, then by id)."""
    # Imported by name: the package ships from the top-level rules/ folder (pyproject's package-dir).
    package = importlib.import_module("nodename_lint.rules")

    found: list[Rule] = []
    for name in rule_module_names(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{name}")
        rule = getattr(module, "RULE", None)
        if isinstance(rule, Rule):
            rule.module = module.__name__
            found.append(rule)
    found.sort(key=lambda rule: (rule.is_cluster_rule, rule.id))
    catalogue = {rule.id: rule for rule in found}
    complete_supersedes(catalogue)
    return catalogue


def rule_module_names(folders: Iterable[str]) -> list[str]:
    """The modules of the rules' folders (each `NAME.py` but `__init__.py`), sorted. Read from the folders,
    not with pkgutil.iter_modules (startup: importing pkgutil and naming each file through inspect cost
    about 1 ms of a one-file lint); a rule is a module of Python source, as the package ships it."""
    return sorted(
        {
            name[:-3]
            for folder in folders
            for name in os.listdir(folder)
            if name.endswith(".py") and "." not in name[:-3]
        }
        - {"__init__"}
    )


def complete_supersedes(catalogue: dict[str, Rule]) -> None:
    """Make `supersedes` and `superseded_by` both hold the whole relation, whichever side declared it
    (an id that names no rule is left in place: tests/test_rule_catalogue.py reports it)."""
    pairs = {(rule.id, other) for rule in catalogue.values() for other in rule.supersedes}
    pairs |= {(other, rule.id) for rule in catalogue.values() for other in rule.superseded_by}
    for winner, loser in pairs:
        if winner in catalogue:
            catalogue[winner].supersedes |= {loser}
        if loser in catalogue:
            catalogue[loser].superseded_by |= {winner}
