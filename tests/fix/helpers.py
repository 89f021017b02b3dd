"""What the fix tests share: a linter with every rule at its default severity."""

from __future__ import annotations

from nodename_lint.cluster.state import ClusterState
from nodename_lint.engine import Linter
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context


def default_linter(cluster: ClusterState | None = None) -> Linter:
    catalogue = all_rules()
    return Linter(dict.fromkeys(catalogue), Context(cluster=cluster))
