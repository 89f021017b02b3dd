"""The catalogue's contract: every rule documented alike, every documented example is a test."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from nodename_lint.engine import Linter
from nodename_lint.model import Manifest
from nodename_lint.podspec import spec_path
from nodename_lint.registry import all_rules, complete_supersedes, rule_module_names
from nodename_lint.rule import SEVERITIES, Context, ObjectRuleCheck, Rule, Violation

from .conftest import run_cli

RULES = list(all_rules().values())
EXAMPLES = [(rule, example) for rule in RULES for example in rule.examples]


def _cluster_state(text: str | None):
    if text is None:
        return None
    from nodename_lint.cluster.from_file import load_state_text

    return load_state_text(text, source="documented example")


@pytest.mark.parametrize(
    "rule, example", EXAMPLES, ids=[f"{rule.id}:{'fails' if e.fails else 'passes'}:{e.title}" for rule, e in EXAMPLES]
)
def test_documented_example(rule, example):
    linter = Linter({rule.id: None}, Context(cluster=_cluster_state(example.cluster)))
    result = linter.collect(
        [
            linter.lint_text(
                example.manifest, "example.yaml", is_static_pod=example.static_pod, helm_chart=example.helm_chart
            )
        ]
    )
    fired = [finding for finding in result.findings if finding.rule == rule.id]
    assert not result.internal_errors and not result.notes, result.notes
    assert not result.skipped_rules, result.skipped_rules
    assert bool(fired) == example.fails, [f.message for f in fired]
    for finding in fired:
        assert finding.line >= 1 and finding.column >= 1
        assert finding.message and finding.fix, "every finding says what happens and how to fix it"


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_rule_is_documented_like_the_others(rule):
    assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", rule.id)
    assert rule.severity in SEVERITIES
    assert rule.summary.endswith("."), "summaries are sentences"
    for heading in ("## What it does", "## Why is this bad?", "## How to fix"):
        assert heading in rule.doc, f"{rule.id} lacks {heading!r}"
    assert any(e.fails for e in rule.examples) and any(not e.fails for e in rule.examples), (
        "each rule documents at least one failing and one passing example"
    )
    assert rule.module.endswith(rule.id.replace("-", "_")), "one module per rule, named after its id"


def test_rules_and_explain_commands():
    listing = run_cli("rules")
    assert listing.returncode == 0
    for rule in RULES:
        assert rule.id in listing.stdout
    explained = run_cli("explain", "nodename-in-template")
    assert explained.returncode == 0
    assert "## Why is this bad?" in explained.stdout and "```yaml" in explained.stdout
    unknown = run_cli("explain", "no-such-rule")
    assert unknown.returncode == 2 and "unknown rule id" in unknown.stderr and "Traceback" not in unknown.stderr


def _return_type(function) -> str:
    """A function's return annotation as written, without module prefixes ("Iterator[Violation]")."""
    returns = inspect.signature(function).return_annotation
    return re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", returns if isinstance(returns, str) else repr(returns))


@pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])
def test_every_check_is_typed_and_registered_with_its_kind(rule):
    """A rule is one typed module: each check says what it yields (mypy checks the types in CI)."""
    for check in rule.checks:
        yields = "Violation" if isinstance(check, ObjectRuleCheck) else "tuple[Manifest, Violation]"
        expected = f"Iterator[{yields}]"
        assert _return_type(check.function) == expected, (rule.id, check.kind)
    if rule.fixer_function is not None:
        assert _return_type(rule.fixer_function) == "Iterator[FixStep]", rule.id


def test_supersedes_names_rules_of_the_catalogue_both_ways_and_without_a_circle():
    catalogue = all_rules()
    for rule in RULES:
        assert rule.supersedes <= catalogue.keys() and rule.superseded_by <= catalogue.keys(), rule.id
        assert rule.id not in rule.supersedes | rule.superseded_by, rule.id
        for other in rule.supersedes:
            assert rule.id in catalogue[other].superseded_by, (rule.id, other)

    def beneath(rule_id: str, seen: frozenset[str]) -> None:
        for other in catalogue[rule_id].supersedes:
            assert other not in seen, f"supersedes goes round: {' > '.join([*seen, other])}"
            beneath(other, seen | {other})

    for rule in RULES:
        beneath(rule.id, frozenset({rule.id}))


def _rule_on(key: str, rule_id: str, **relations: frozenset[str]) -> Rule:
    """A rule that reports every object whose Pod spec has `key`."""
    rule = Rule(id=rule_id, severity="warning", summary="Test.", doc="", examples=(), **relations)

    @rule.check
    def check(obj: Manifest, context: Context) -> Iterator[Violation]:
        if (obj.pod_spec or {}).get(key) is not None:
            yield Violation(spec_path(obj, key), f"{rule_id} found {key}", fix="none")

    return rule


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeName: n1
  affinity: {}
  containers: []
"""


def test_a_finding_drops_the_findings_of_the_rules_it_supersedes_on_the_same_object(monkeypatch):
    """`precise` supersedes `general` (declared by `precise`) and `vague` declares `precise` supersedes it."""
    rules = [
        _rule_on("affinity", "precise", supersedes=frozenset({"general"})),
        _rule_on("nodeName", "general"),
        _rule_on("nodeName", "vague", superseded_by=frozenset({"precise"})),
        _rule_on("nodeName", "unrelated"),
    ]
    catalogue = {**all_rules(), **{rule.id: rule for rule in rules}}
    complete_supersedes(catalogue)
    assert catalogue["precise"].supersedes == {"general", "vague"}
    monkeypatch.setattr("nodename_lint.engine.all_rules", lambda: catalogue)

    def fired(text: str, active: tuple[str, ...] = ("precise", "general", "vague", "unrelated")) -> list[str]:
        linter = Linter(dict.fromkeys(active), Context())
        return sorted(finding.rule for finding in linter.lint_text(text, "p.yaml").findings)

    assert fired(POD) == ["precise", "unrelated"]
    assert fired(POD.replace("  affinity: {}\n", "")) == ["general", "unrelated", "vague"]
    assert fired(POD, ("general", "vague")) == ["general", "vague"]  # `precise` is off
    # a superseding finding silenced by a comment still stands for what it found: the others stay dropped
    silenced = POD.replace("  affinity: {}", "  affinity: {}  # nodename-lint: ignore[precise]")
    assert fired(silenced) == ["unrelated"]
    # another object of the same file is judged on its own
    two = POD + "---\n" + POD.replace("  affinity: {}\n", "")
    assert fired(two) == ["general", "precise", "unrelated", "unrelated", "vague"]


def test_the_catalogue_reads_the_modules_of_the_rules_folder_that_pkgutil_names(tmp_path: Path) -> None:
    """The registry lists the rules' folder itself (startup: no pkgutil), and finds the Python source
    modules pkgutil.iter_modules finds, in its order."""
    import pkgutil

    import nodename_lint.rules

    for name in ("b_rule.py", "a_rule.py", "__init__.py", "notes.txt", "odd-name.py", "two.dots.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "__pycache__").mkdir()
    for folders in ([str(tmp_path)], list(nodename_lint.rules.__path__)):
        assert rule_module_names(folders) == [module.name for module in pkgutil.iter_modules(folders)]
    assert rule_module_names([str(tmp_path)]) == ["a_rule", "b_rule", "odd-name"]
