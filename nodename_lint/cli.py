"""Command line entry points: the `nodename-lint` group (default command `lint`) and `kubectl nodename-lint`.

Each command lives in its own module under commands/; this module only gathers them.
"""

from __future__ import annotations

import sys

import click

from . import __version__
from .commands.audit import audit_command
from .commands.explain import explain_command
from .commands.help import SectionedCommand, lint_help_rows, write_examples, write_sections
from .commands.lint import lint_command
from .commands.lsp import lsp_command
from .commands.rules import rules_command
from .commands.snapshot import snapshot_command
from .commands.webhook import webhook_command


class DefaultToLint(click.Group):
    """A group whose default command is `lint`: `nodename-lint deploy/` means `nodename-lint lint deploy/`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # While the shell completes the first word (resilient parsing, no words yet) the group stays
        # itself, so TAB offers the subcommands.
        completing_first_word = ctx.resilient_parsing and not args
        if not completing_first_word and (
            not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"))
        ):
            args = ["lint", *args]
        return super().parse_args(ctx, args)

    # `nodename-lint --help` is the help of the command it runs by default, with the other commands.
    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] [PATH]...")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix=" " * len("Usage: "))

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        lint = self.commands["lint"]
        assert isinstance(lint, SectionedCommand)
        own = [(param.name or "", record) for param in self.get_params(ctx) if (record := param.get_help_record(ctx))]
        write_sections(formatter, lint.sections, [*lint_help_rows(lint, ctx), *own])
        self.format_commands(ctx, formatter)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        lint = self.commands["lint"]
        assert isinstance(lint, SectionedCommand)
        write_examples(formatter, lint.examples, lint.docs)


@click.group(cls=DefaultToLint, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nodename-lint")
def main() -> None:
    """Lint Kubernetes manifests for what the cluster will do with spec.nodeName.

    `nodename-lint [PATH]...` runs the `lint` command, whose options follow; `nodename-lint rules`
    lists the rules, `nodename-lint COMMAND --help` tells about a command.
    """


for _command in (
    lint_command,
    audit_command,
    snapshot_command,
    webhook_command,
    lsp_command,
    rules_command,
    explain_command,
):
    main.add_command(_command)


# Options after which the kubectl plugin leaves the choice of cluster to the user.
_CLUSTER_CHOICES = ("--offline", "--cluster-state", "--context", "--kubeconfig", "--live", "--in-cluster")


def kubectl_plugin() -> None:
    """`kubectl nodename-lint ...` (the kubectl-nodename_lint executable): lint against kubectl's current context.

    kubectl runs plugins with the user's arguments and environment, so KUBECONFIG is honoured as
    kubectl honours it. A lint without --offline, --cluster-state or a live option gets --live.
    """
    args = sys.argv[1:]
    options = args[: args.index("--")] if "--" in args else args
    is_lint = not args or args[0] == "lint" or args[0] not in {*main.commands, "--help", "-h", "--version"}
    chosen = any(arg.split("=", 1)[0] in _CLUSTER_CHOICES for arg in options)
    if is_lint and not chosen:
        args = ["lint", *args[1:]] if args and args[0] == "lint" else ["lint", *args]
        args.insert(1, "--live")
    main(args=args, prog_name="kubectl nodename-lint")
