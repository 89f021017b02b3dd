"""The README is a short front door whose commands, output and links are real; reference lives in docs/."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from .conftest import ROOT, run_cli, unavailable

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


PIN_PAGES = ("README.md", "docs/github-action.md", "docs/pre-commit.md", "examples/github-workflow.yml")
# A ref an example may name: the placeholder it explains, main (which pre-commit autoupdate turns into a
# commit SHA), a full commit SHA, or a tag this repository has.
PLACEHOLDER = "COMMIT"


def _tags() -> set[str]:
    listed = subprocess.run(["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True, check=False)
    return set(listed.stdout.split())


def test_install_and_pins_name_only_what_exists() -> None:
    """Issue 23: `pip install nodename-lint` (not on the index), `rev: v0.2.0` and `@v0` (no such tags)."""
    assert "pip install nodename-lint" not in README.replace("pip install nodename-lint[", "")
    assert "not on PyPI yet" in README
    assert "pip install 'git+https://github.com/nodename-lint/nodename-lint@COMMIT'" in README
    tags = _tags()
    refs = []
    for page in PIN_PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        refs += [(page, ref) for ref in re.findall(r"nodename-lint/nodename-lint@([\w.-]+)", text)]
        hooks = re.findall(r"repo: https://github.com/nodename-lint/nodename-lint\n\s+rev: (\S+)", text)
        refs += [(page, ref) for ref in hooks]
        assert "github/codeql-action/upload-sarif@v4" in text or "pre-commit" in page
    assert {page for page, _ in refs} == set(PIN_PAGES), refs
    wrong = [
        (page, ref)
        for page, ref in refs
        if ref not in (PLACEHOLDER, "main") and not re.fullmatch(r"[0-9a-f]{40}", ref) and ref not in tags
    ]
    assert wrong == [], "name a tag only once it is pushed (docs/github-action.md: Versions)"
    assert "git ls-remote https://github.com/nodename-lint/nodename-lint main" in README


def test_readme_setup_command_works_verbatim_in_a_fresh_clone(tmp_path: Path) -> None:
    """README's first command, run as written by bash in a copy of this working tree: a new virtualenv,
    `pip install .` from the package index, the examples linted (exit code 1: they have findings)."""
    from .test_precommit import snapshot_working_tree

    clone = tmp_path / "clone"
    clone.mkdir()
    snapshot_working_tree(clone)
    shutil.copytree(ROOT / "examples", clone / "examples")
    [command] = [line for line in README.splitlines() if line.endswith(SETUP_RUN)]
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    completed = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", command],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    if any(word in completed.stderr for word in ("NewConnectionError", "Could not find a version")):
        unavailable("pip could not reach the package index")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "error[nodename-in-template]" in completed.stdout
    assert (clone / ".venv" / "bin" / "nodename-lint").exists()


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


def test_readme_picture_shows_the_annotation_and_the_summary_of_a_real_run() -> None:
    """README's picture is drawn from a real run (nodename_lint.review_picture); that it is current is
    tests/test_generated.py's job. Here: it shows what README says it shows."""
    import xml.etree.ElementTree as ElementTree

    from nodename_lint.registry import all_rules

    assert "](docs/review.svg)" in README
    ElementTree.parse(ROOT / "docs" / "review.svg")  # well-formed, as GitHub needs to show it
    picture = (ROOT / "docs" / "review.svg").read_text(encoding="utf-8")
    annotation = next(line for line in run_cli("examples/deploy", "--format", "github", cwd=ROOT).stdout.splitlines())
    assert "nodename-lint / nodename-in-template" in picture and "Check failure: line 17" in picture
    cluster_rules = sum(1 for rule in all_rules().values() if rule.needs)
    assert f"{cluster_rules} cluster rules skipped" in picture and annotation.startswith(
        "::notice file=examples/deploy/"
    )


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
