"""The README is a short front door whose commands, output and links are real; reference lives in docs/."""

from __future__ import annotations

import re

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP_RUN = "pip install . && nodename-lint examples/"
SETUP_TEST = "pip install -e '.[test]' && pytest -q"


def test_readme_is_short() -> None:
    assert len(README.encode()) <= 15 * 1024, "move reference material into docs/"


def test_readme_keeps_the_two_setup_commands_and_ci_runs_the_test_command() -> None:
    assert SETUP_RUN in README and SETUP_TEST in README
    assert SETUP_TEST in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_relative_link_of_the_docs_resolves() -> None:
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not target.startswith(("http://", "https://")) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_pinned_versions_agree() -> None:
    from nodename_lint import __version__

    workflow = (ROOT / "examples" / "github-workflow.yml").read_text(encoding="utf-8")
    major = "v" + __version__.split(".")[0]
    for text in (README, workflow):
        assert f"nodename-lint/nodename-lint@{major}" in text and "@main" not in text
        assert "github/codeql-action/upload-sarif@v4" in text
    assert f"rev: v{__version__}" in README
    tagging = (ROOT / "docs" / "github-action.md").read_text(encoding="utf-8")
    assert "## Versions" in tagging and f"`{major}`" in tagging


def test_every_lint_option_is_documented_in_usage() -> None:
    from nodename_lint.cli import main

    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    options = {
        opt
        for param in main.commands["lint"].params
        for opt in getattr(param, "opts", [])
        if opt.startswith("--") and opt != "--help" and not opt.startswith("--output-")
    }
    assert sorted(option for option in options if f"`{option}" not in usage and f" {option}" not in usage) == []


def _listed_modules(page: str) -> set[str]:
    """The modules docs/internals.md lists: each `## \\`FOLDER/\\`` section's rows `| \\`NAME.py\\` |`."""
    listed: set[str] = set()
    folder = None
    for line in page.splitlines():
        heading = re.fullmatch(r"## `([^`]+/)`", line)
        if heading:
            folder = heading[1]
        elif line.startswith("## "):
            folder = None
        row = re.match(r"\| `([^`]+\.py)` \|", line)
        if row and folder:
            listed.add(folder + row[1])
    return listed


def test_internals_lists_every_module_of_the_tree_and_no_other() -> None:
    """Every module of the package, the benchmarks and the fuzz harness has its row (rules/ is the catalogue)."""
    tree = {
        path.relative_to(ROOT).as_posix()
        for folder in ("nodename_lint", "bench", "fuzz")
        for path in (ROOT / folder).rglob("*.py")
    }
    listed = _listed_modules((ROOT / "docs" / "internals.md").read_text(encoding="utf-8"))
    assert sorted(tree - listed) == [], "modules without a row in docs/internals.md"
    assert sorted(listed - tree) == [], "rows in docs/internals.md for modules that do not exist"
