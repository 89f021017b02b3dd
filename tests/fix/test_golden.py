"""Golden before/after files for every fix: the fixed text must match byte for byte.

`<case>.before.yaml` is fixed with every rule at its default severity (and, when
`<case>.cluster.yaml` exists, with that cluster state); the result must equal
`<case>.after.yaml` exactly, line endings included, and fixing the result again changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nodename_lint.engine import Linter
from nodename_lint.fix.runner import fix_text
from nodename_lint.registry import all_rules
from tests.fix.helpers import default_linter

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(path.name[: -len(".before.yaml")] for path in GOLDEN.glob("*.before.yaml"))


def linter_for(case: str) -> Linter:
    cluster = None
    state_file = GOLDEN / f"{case}.cluster.yaml"
    if state_file.exists():
        from nodename_lint.cluster.from_file import load_state_text

        cluster = load_state_text(state_file.read_text(), source=f"file {state_file.name}")
    return default_linter(cluster)


def read_exact(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # no newline translation: CRLF must survive


@pytest.mark.parametrize("case", CASES)
def test_fix_matches_golden_file(case: str) -> None:
    before = read_exact(GOLDEN / f"{case}.before.yaml")
    fixed, applied, notes = fix_text(linter_for(case), before, f"{case}.before.yaml")
    assert not [note for note in notes if "internal error" in note], notes
    assert applied, "the golden case must exercise at least one fix"
    assert fixed == read_exact(GOLDEN / f"{case}.after.yaml")


@pytest.mark.parametrize("case", CASES)
def test_fixing_twice_changes_nothing(case: str) -> None:
    after = read_exact(GOLDEN / f"{case}.after.yaml")
    fixed, applied, notes = fix_text(linter_for(case), after, f"{case}.after.yaml")
    assert (fixed, applied) == (after, [])
    assert not [note for note in notes if "internal error" in note], notes


@pytest.mark.parametrize("case", CASES)
def test_what_remains_of_a_fixed_rule_is_what_the_fixer_declined(case: str) -> None:
    linter = linter_for(case)
    _, applied, _ = fix_text(linter, read_exact(GOLDEN / f"{case}.before.yaml"), "x.yaml")
    fixed_rules = {where.rsplit(": ", 1)[1] for where in applied}
    after = read_exact(GOLDEN / f"{case}.after.yaml")
    findings = linter.lint_text(after, "x.yaml").findings
    remaining = {f"x.yaml:{f.line}: {f.rule}" for f in findings if f.rule in fixed_rules}
    _, _, notes = fix_text(linter, after, "x.yaml")
    assert remaining == {note.split(" not fixed: ")[0] for note in notes}


def test_crlf_case_really_is_crlf() -> None:
    for name in ("crlf.before.yaml", "crlf.after.yaml"):
        data = (GOLDEN / name).read_bytes()
        assert data.count(b"\r\n") == data.count(b"\n") > 10


def test_untouched_documents_are_byte_identical() -> None:
    before = read_exact(GOLDEN / "helm-stream.before.yaml").split("---\n")
    after = read_exact(GOLDEN / "helm-stream.after.yaml").split("---\n")
    assert len(before) == len(after) == 5
    changed = [index for index, (old, new) in enumerate(zip(before, after, strict=True)) if old != new]
    assert changed == [3]  # only the Deployment; the ServiceAccount, Service and test Pod are as they were
    old_lines, new_lines = before[3].splitlines(), after[3].splitlines()
    assert [line for line in old_lines if line not in new_lines] == ["      nodeName: worker-2"]


def test_every_documented_fix_has_a_fixer_and_every_fixer_is_documented() -> None:
    for rule in all_rules().values():
        assert bool(rule.fix) == (rule.fixer_function is not None), rule.id
        if rule.fixer_function is not None:
            assert "--fix" in rule.doc, f"{rule.id}: say in 'How to fix' what --fix does"
