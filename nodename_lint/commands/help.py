"""`--help` in sections, with examples and a link to the docs (ruff's and kube-linter's help layout).

A help formatter of our own rather than click-option-group or cloup: sections are all we need
(no constraints between options), and importing either at every start cost 5 to 30 ms
(click-option-group) or 350 ms (cloup) against 60 ms for the whole command line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click

DOCS_PAGE = "/blob/main/docs/{page}"


class SectionedCommand(click.Command):
    """A command whose options are listed under headings, then its examples and its documentation page.

    SECTIONS maps a heading to the names of the parameters under it (in order); the others,
    `--help` among them, follow under "Other options". EXAMPLES are (command line, what it does).
    """

    def __init__(
        self,
        *args: Any,
        sections: Mapping[str, Sequence[str]],
        examples: Sequence[tuple[str, str]] = (),
        docs: str = "usage.md",
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections
        self.examples = examples
        self.docs = docs

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        write_sections(formatter, self.sections, _records(self, ctx))

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        write_examples(formatter, self.examples, self.docs)


def write_sections(
    formatter: click.HelpFormatter,
    sections: Mapping[str, Sequence[str]],
    records: Iterable[tuple[str, tuple[str, str]]],
    other: str = "Other options",
) -> None:
    """Each section's help rows, in its order; the rows no section names under OTHER.

    Every section's first column has one width, so the descriptions line up from one to the next.
    """
    rows = dict(records)
    width = min(max((len(term) for term, _ in rows.values()), default=0), TERM_WIDTH)
    for title, names in [*sections.items(), (other, [name for name in rows if not _listed(name, sections)])]:
        listed = [(term.ljust(width), text) for name in names if name in rows for term, text in [rows[name]]]
        if listed:
            with formatter.section(title):
                formatter.write_dl(listed, col_max=TERM_WIDTH)


def write_examples(formatter: click.HelpFormatter, examples: Sequence[tuple[str, str]], docs: str) -> None:
    """The examples as typed (never wrapped), each with what it does, then the documentation link."""
    from ..report.locations import PROJECT_URL  # startup: only --help reads it

    if examples:
        width = max(len(command) for command, _ in examples)
        with formatter.section("Examples"):
            for command, what in examples:
                formatter.write(f"{'':>{formatter.current_indent}}{command:<{width}}  # {what}\n")
    formatter.write_paragraph()
    formatter.write(f"Documentation: {PROJECT_URL}{DOCS_PAGE.format(page=docs)}\n")


# Options whose name and value are longer than this get their description on the next line.
TERM_WIDTH = 30


def _records(command: click.Command, ctx: click.Context) -> list[tuple[str, tuple[str, str]]]:
    """(parameter name, help row) of each option that shows in help (arguments are in the usage line)."""
    return [
        (param.name or "", record)
        for param in command.get_params(ctx)
        if isinstance(param, click.Option) and (record := param.get_help_record(ctx)) is not None
    ]


def _listed(name: str, sections: Mapping[str, Sequence[str]]) -> bool:
    return any(name in names for names in sections.values())


def lint_help_rows(lint: click.Command, ctx: click.Context) -> list[tuple[str, tuple[str, str]]]:
    """The lint command's help rows for the group's own --help (`nodename-lint [OPTIONS] [PATH]...`)."""
    return _records(lint, click.Context(lint, info_name=ctx.info_name, parent=ctx))
