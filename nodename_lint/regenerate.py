"""Every generated file of the repository, made again: `python -m nodename_lint.regenerate`.

A change to a rule, a message or an example changes text that is copied into the repository; this
writes all of it, and `--check` (tests/test_generated.py) lists what is stale without writing:

- `docs/rules/RULE-ID.md`: each rule's page, what `nodename-lint explain RULE-ID` prints (a page
  whose rule is gone is deleted);
- the sections between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->` in the pages
  (README's rule table, ...): SECTIONS names what fills each;
- the bundled examples' outputs (EXAMPLE_OUTPUTS: `examples/expected/*.txt`, `examples/cluster/expected.txt`,
  `examples/cluster/audit-expected.txt`);
- `docs/review.svg`, README's picture of what a reviewer sees (review_picture.py);
- in the pages, every fenced block whose first line is `$ nodename-lint ARGS` with an argument under
  `examples/`: the rest of the block is what that run prints (stdout, then stderr). A block over the
  reader's own folders (`deploy/`, `charts/`) is prose, left as written.

The runs are real: `python -m nodename_lint ARGS` in the repository root, without colour. A
block's command line is split like a shell's words and passed as arguments; nothing is run
through a shell.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import review_picture
from .docs import audit_additions_markdown, audit_not_run_markdown, rule_table_markdown, supersedes_markdown
from .registry import all_rules

COMMAND = "python -m nodename_lint.regenerate"
RULE_PAGES = "docs/rules"
# The examples' outputs: file -> the arguments of the run that prints it.
EXAMPLE_OUTPUTS: dict[str, tuple[str, ...]] = {
    "examples/expected/deploy.txt": ("examples/deploy",),
    "examples/expected/static-pods.txt": ("examples/static-pods",),
    "examples/cluster/expected.txt": ("examples/cluster/manifests", "--cluster-state", "examples/cluster/state.yaml"),
    "examples/cluster/audit-expected.txt": ("audit", "--cluster-state", "examples/cluster/state.yaml"),
}
# What fills each generated section of a page.
SECTIONS: dict[str, Callable[[], str]] = {
    "rule-table": rule_table_markdown,
    "audit-not-run": audit_not_run_markdown,
    "audit-additions": audit_additions_markdown,
    "supersedes": supersedes_markdown,
}
_SECTION = re.compile(
    r"(?P<start>^<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(?P<end>^<!-- end generated: (?P=name) -->$)",
    re.M | re.S,
)
# A fenced block (indented, inside a list item) whose first line runs nodename-lint.
_RUN_BLOCK = re.compile(
    r"(?P<head>^(?P<indent> *)```[a-z]*\n(?P=indent)\$ (?P<command>nodename-lint [^\n]*)\n)(?P<body>.*?)"
    r"(?P<end>^(?P=indent)```$)",
    re.M | re.S,
)


class NotACheckout(Exception):
    """The folder is not a clone of the repository (an installed package has no examples/ or docs/)."""


def pages(root: Path) -> list[Path]:
    """The Markdown pages that may hold generated sections and runs."""
    return [
        root / "README.md",
        root / "CONTRIBUTING.md",
        root / "examples" / "README.md",
        *sorted((root / "docs").glob("*.md")),
    ]


def run_arguments(command: str) -> list[str] | None:
    """The arguments of a page's `nodename-lint ARGS` line when it runs over the bundled examples, else None."""
    words = shlex.split(command, comments=True)[1:]
    return words if any(word.startswith("examples/") for word in words) else None


class Runner:
    """Runs nodename-lint in the repository root as a reader would, each distinct command once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.printed: dict[tuple[str, ...], tuple[str, str]] = {}  # arguments -> (stdout, stderr)

    def __call__(self, arguments: tuple[str, ...]) -> str:
        """What a terminal shows of the run: its stdout, then its stderr."""
        return "".join(self._printed(arguments))

    def stdout(self, arguments: tuple[str, ...]) -> str:
        return self._printed(arguments)[0]

    def prefetch(self, commands: Iterable[tuple[str, ...]]) -> None:
        """Run these commands side by side (each a process of its own: most of a run is its start-up)."""
        wanted = sorted(set(commands) - set(self.printed))
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            self.printed.update(zip(wanted, pool.map(self._run, wanted), strict=True))

    def _printed(self, arguments: tuple[str, ...]) -> tuple[str, str]:
        if arguments not in self.printed:
            self.printed[arguments] = self._run(arguments)
        return self.printed[arguments]

    def _run(self, arguments: tuple[str, ...]) -> tuple[str, str]:
        completed = subprocess.run(
            [sys.executable, "-m", "nodename_lint", *arguments],
            cwd=self.root,
            capture_output=True,
            env={**os.environ, "NO_COLOR": "1"},
            timeout=300,
            check=False,
        )
        return completed.stdout.decode("utf-8", "replace"), completed.stderr.decode("utf-8", "replace")


def page_runs(text: str) -> Iterator[tuple[str, ...]]:
    """The runs over the examples a page shows."""
    for match in _RUN_BLOCK.finditer(text):
        arguments = run_arguments(match["command"])
        if arguments is not None:
            yield tuple(arguments)


def regenerated_page(text: str, run: Runner) -> str:
    """A page with its generated sections and its runs over the examples made again."""

    def section(match: re.Match[str]) -> str:
        fill = SECTIONS.get(match["name"])
        if fill is None:
            raise ValueError(f"unknown generated section {match['name']!r} (known: {', '.join(SECTIONS)})")
        return match["start"] + fill() + match["end"]

    def block(match: re.Match[str]) -> str:
        arguments = run_arguments(match["command"])
        if arguments is None:
            return match[0]
        indent = match["indent"]
        lines = "".join(f"{indent}{line}\n" if line else "\n" for line in run(tuple(arguments)).splitlines())
        return match["head"] + lines + match["end"]

    return _RUN_BLOCK.sub(block, _SECTION.sub(section, text))


def generated_files(root: Path, run: Runner | None = None) -> dict[str, str | None]:
    """Every generated file (relative to `root`) with the content it should have; None: it should not exist."""
    if not (root / "pyproject.toml").is_file() or not (root / "examples").is_dir():
        raise NotACheckout(f"{root} is not a checkout of nodename-lint: regenerate runs in a clone of the repository")
    run = run or Runner(root)
    texts = {
        page.relative_to(root).as_posix(): page.read_text(encoding="utf-8") for page in pages(root) if page.is_file()
    }
    pages_run = (command for text in texts.values() for command in page_runs(text))
    run.prefetch([*EXAMPLE_OUTPUTS.values(), *review_picture.RUNS, *pages_run])
    files: dict[str, str | None] = {}
    for path in sorted((root / RULE_PAGES).glob("*.md")):
        files[f"{RULE_PAGES}/{path.name}"] = None
    for rule in all_rules().values():
        files[f"{RULE_PAGES}/{rule.id}.md"] = rule.documentation()
    for name, arguments in EXAMPLE_OUTPUTS.items():
        files[name] = run(arguments)
    for name, text in texts.items():
        files[name] = regenerated_page(text, run)
    files[review_picture.PICTURE] = review_picture.picture(root, run.stdout)
    return files


def changes(root: Path, run: Runner | None = None) -> dict[str, str | None]:
    """The generated files whose content differs from what they should have (None: to delete)."""
    changed = {}
    for name, content in generated_files(root, run).items():
        path = root / name
        if (path.read_text(encoding="utf-8") if path.is_file() else None) != content:
            changed[name] = content
    return changed


def write(changed: dict[str, str | None], root: Path) -> None:
    for name, content in changed.items():
        path = root / name
        if content is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; list the stale files (exit 1 if any)")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    try:
        changed = changes(options.root)
    except NotACheckout as exc:
        print(f"{COMMAND}: {exc}", file=sys.stderr)
        return 2
    if not options.check:
        write(changed, options.root)
    for name in changed:
        print(f"{'stale' if options.check else 'rewrote'}: {name}")
    if options.check and changed:
        print(f"run `{COMMAND}` to regenerate them", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
