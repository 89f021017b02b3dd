"""Every generated file is current: the one test that fails when a rule page, README's rule table, an
example's output or a page's copy of a run is stale, and names the command that rewrites them all."""

from __future__ import annotations

import shutil
from pathlib import Path

from nodename_lint import regenerate
from nodename_lint.registry import all_rules

from .conftest import ROOT


def test_every_generated_file_is_current() -> None:
    stale = list(regenerate.changes(ROOT))
    assert stale == [], f"stale generated files: {', '.join(stale)}; run `{regenerate.COMMAND}` to rewrite them"


def _checkout(tmp_path: Path) -> Path:
    """A small copy of the repository: the examples, one rule page, README."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", root / "examples")
    (root / "docs" / "rules").mkdir(parents=True)
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    return root


def test_regenerate_rewrites_what_is_stale_and_deletes_left_over_pages(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    rule = next(iter(all_rules().values()))
    (root / "docs" / "rules" / f"{rule.id}.md").write_text("old page\n", encoding="utf-8")
    (root / "docs" / "rules" / "a-removed-rule.md").write_text("gone\n", encoding="utf-8")
    (root / "examples" / "expected" / "deploy.txt").write_text("old output\n", encoding="utf-8")
    (root / "README.md").write_text(
        "# x\n\n<!-- generated: rule-table -->\nold table\n<!-- end generated: rule-table -->\n\n"
        "- a list item:\n\n  ```\n  $ nodename-lint examples/deploy -q\n  old\n  ```\n\n"
        "```\n$ nodename-lint deploy/\nthe reader's own folder: prose, kept\n```\n\n"
        # a page's words are arguments: nothing here may run
        "```\n$ nodename-lint examples/deploy; touch pwned $(touch pwned2) `touch pwned3`\n```\n",
        encoding="utf-8",
    )
    run = regenerate.Runner(root)
    changed = regenerate.changes(root, run)
    assert {"README.md", "examples/expected/deploy.txt", f"docs/rules/{rule.id}.md"} <= set(changed)
    assert changed["docs/rules/a-removed-rule.md"] is None
    regenerate.write(changed, root)
    assert regenerate.changes(root, run) == {}
    assert not (root / "docs" / "rules" / "a-removed-rule.md").exists()
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"| `{rule.id}` |" in readme and "old table" not in readme
    assert "  $ nodename-lint examples/deploy -q\n  examples/deploy/debug-pod.yaml:8:3: info[" in readme
    assert "the reader's own folder: prose, kept\n" in readme
    assert (root / "docs" / "rules" / f"{rule.id}.md").read_text(encoding="utf-8") == rule.documentation()
    assert not any((root / name).exists() for name in ("pwned", "pwned2", "pwned3"))
    assert "examples/deploy;" in readme  # nodename-lint's own complaint about that argument


def test_regenerate_refuses_a_folder_that_is_not_a_checkout(tmp_path: Path, capsys) -> None:
    assert regenerate.main(["--root", str(tmp_path)]) == 2
    assert "is not a checkout of nodename-lint" in capsys.readouterr().err
