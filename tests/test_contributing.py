"""CONTRIBUTING's promises about adding a rule, checked on this tree (issue 25's "Done when").

An offline rule is its module, its tests and what `python -m nodename_lint.regenerate` rewrites,
nothing else; the cluster-rule walkthrough names helpers that exist where it says they are.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, require_tool

CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
# The offline rule issue 25 added by following CONTRIBUTING alone, and the tests written for it.
RULE_MODULE = "rules/nodename_with_node_affinity.py"
RULE_TESTS = "tests/rules/test_nodename_with_node_affinity.py"
RULE_ID = "nodename-with-node-affinity"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def _git(repo: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=check, capture_output=True, text=True).stdout


def _regenerate(repo: Path) -> set[str]:
    """Run the command as CONTRIBUTING says, in `repo` with its own code; the files it rewrote."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    completed = subprocess.run(
        [sys.executable, "-m", "nodename_lint.regenerate"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return {line.removeprefix("rewrote: ") for line in completed.stdout.splitlines() if line.startswith("rewrote: ")}


def _changed(repo: Path) -> set[str]:
    """What `git status` shows: modified, added, deleted and untracked files."""
    return {line[3:] for line in _git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()}


def test_adding_an_offline_rule_touches_its_module_its_tests_and_what_regenerate_rewrites(tmp_path: Path) -> None:
    """This tree without nodename-with-node-affinity (regenerated, as it was before the rule), then the
    rule's module and its tests written back and the one command run: git shows those two files and what
    the command rewrote, nothing else, and the result is this tree again, byte for byte. A rule that
    needed a registration, an entry in audit.py, a hand-pasted table or output, or a copy of a sentence
    in a page fails here: the command would not write it, so the copy would differ from this tree."""
    require_tool("git", "apt-get install git")
    repo = tmp_path / "repo"
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    tree = [name for name in listed if name and (ROOT / name).is_file() and not (ROOT / name).is_symlink()]
    for name in tree:
        if name not in (RULE_MODULE, RULE_TESTS):
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    # What an installed checkout maps (pyproject's package-dir: nodename_lint.rules is rules/), so that the
    # runs below import the copy's rules and not this tree's; kept out of git status.
    (repo / "nodename_lint" / "rules").symlink_to(Path("..") / "rules")
    _git(repo, "init", "-q")
    (repo / ".git" / "info" / "exclude").write_text("/nodename_lint/rules\n__pycache__/\n", encoding="utf-8")

    page = f"docs/rules/{RULE_ID}.md"
    before = _regenerate(repo)  # the tree as it was before the rule
    assert {page, "README.md"} <= before  # its page and its row in the table go with it
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "before the rule")
    # Nothing outside the rule names it once the command has run: no registration, no entry in a list
    # of ids (audit's, the webhook's), no hand-typed row or sentence.
    pattern = f"{RULE_ID}|{RULE_ID.replace('-', '_')}"
    mentions = _git(repo, "grep", "-l", "-i", "-E", pattern, "--", ".", ":!tests/test_contributing.py", check=False)
    assert mentions.split() == [], "files that name the rule by hand"

    for name in (RULE_MODULE, RULE_TESTS):  # what the contributor writes
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, repo / name)
    rewritten = _regenerate(repo)

    touched = _changed(repo)
    assert touched - rewritten == {RULE_MODULE, RULE_TESTS}, "touched by hand beyond the rule and its tests"
    assert rewritten <= touched
    differs = [name for name in touched if (repo / name).read_bytes() != (ROOT / name).read_bytes()]
    assert differs == [], "the rule's commit holds more than its module, its tests and the command's output"
    assert {page, "README.md"} <= rewritten


def test_contributing_says_an_offline_rule_is_its_module_its_tests_and_the_command() -> None:
    section = CONTRIBUTING.split("## Adding a rule\n", 1)[1].split("\n### ", 1)[0]
    assert "`tests/rules/test_MODULE.py`" in section
    assert "Nothing else is written by hand" in section
    assert "`python -m nodename_lint.regenerate`" in section


def _is_module(name: str) -> bool:
    """Whether `from package import name` names a submodule (`from nodename_lint.cluster import targets`)."""
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def test_the_cluster_rule_walkthrough_names_helpers_that_exist_where_it_says() -> None:
    """Each `from nodename_lint.X import a, b` of CONTRIBUTING's code, and each helper of the
    walkthrough's tables (`name(` in a first cell), is there to import."""
    walkthrough = CONTRIBUTING.split("### Adding a cluster rule\n", 1)[1].split("\n## ", 1)[0]
    imports = re.findall(r"^ *from (nodename_lint\.[\w.]+) import ([\w, ]+)$", CONTRIBUTING, re.M)
    stand_ins = re.findall(r'^ *(\w+) = later\("(nodename_lint\.[\w.]+)", globals\(\)\)$', CONTRIBUTING, re.M)
    assert ("targets", "nodename_lint.cluster.targets") in stand_ins
    missing = [
        f"{module}.{name}"
        for module, names in imports
        for name in (name.strip() for name in names.split(","))
        if not (hasattr(importlib.import_module(module), name) or _is_module(f"{module}.{name}"))
    ]
    for binding, module in stand_ins:  # each `targets.helper(` the code reads from a stand-in
        read = re.findall(rf"\b{binding}\.(\w+)\(", CONTRIBUTING)
        assert read
        missing += [f"{module}.{name}" for name in read if not hasattr(importlib.import_module(module), name)]
    helpers = re.findall(r"^ *\| `(\w+)\(", walkthrough, re.M)
    targets = importlib.import_module("nodename_lint.cluster.targets")
    assert len(helpers) >= 5
    missing += [f"cluster.targets.{name}" for name in helpers if not hasattr(targets, name)]
    assert missing == []
