"""Command line entry points: the `nodename-lint` group (default command `lint`) and `kubectl nodename-lint`.

Each command lives in its own module under commands/; this module only gathers them.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import sys
from collections.abc import Iterable, Iterator, MutableMapping
from typing import Any

import click

from . import __version__
from .commands.help import SectionedCommand, lint_help_rows, write_examples, write_sections

# The commands, each `<name>_command` in commands/<name>.py, imported the first time it is looked up
# (startup: a lint run does not load the audit's, the webhook's or the server's modules).
COMMAND_NAMES = ("lint", "audit", "snapshot", "webhook", "lsp", "rules", "explain")


class CommandsOnDemand(MutableMapping[str, click.Command]):
    """The group's commands by name, each imported from its module under commands/ when first read."""

    def __init__(self, names: Iterable[str]) -> None:
        self._unloaded = set(names)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name in self._unloaded:
            module = importlib.import_module(f"{__package__}.commands.{name}")
            self._loaded[name] = getattr(module, f"{name}_command")
            self._unloaded.discard(name)
        return self._loaded[name]  # KeyError: no such command

    def __contains__(self, name: object) -> bool:  # without importing the command
        return name in self._unloaded or name in self._loaded

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._unloaded.discard(name)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._unloaded.discard(name)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._unloaded, *self._loaded}))

    def __len__(self) -> int:
        return len(self._unloaded) + len(self._loaded)


class DefaultToLint(click.Group):
    """A group whose default command is `lint`: `nodename-lint deploy/` means `nodename-lint lint deploy/`."""

    _collect_after_startup = False  # the cyclic GC was on when main paused it
    _started = False  # main ran once in this process (the modules a command imports are loaded once)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """The process's entry point (the script and `python -m nodename_lint`).

        Startup: the cyclic GC is paused while the command line is parsed and the command's module loads;
        what they built (modules, classes, functions, all living to the end) is then frozen out of the
        GC before the command runs with the GC as it was, else the first collection would scan it all.
        What the process holds at exit is frozen too: the GC's last collection, when the interpreter
        exits, scanned every module, class and function loaded to free memory the OS takes back anyway
        (a third of what a one-file lint cost over `import yaml, click`, docs/performance.md; kept_until_exit
        does the same for a cluster state).
        """
        atexit.unregister(gc.freeze)  # registered once, however often a test calls main
        atexit.register(gc.freeze)
        self._collect_after_startup = gc.isenabled()
        gc.disable()
        try:
            return super().main(*args, **kwargs)
        finally:
            self._end_of_startup()  # --help, --version, a usage error: no command ran

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)  # imports the command's module
        finally:
            self._end_of_startup()

    def _end_of_startup(self) -> None:
        if self._collect_after_startup:
            self._collect_after_startup = False
            if not DefaultToLint._started:  # a test's second call would only freeze the garbage of the tests before
                DefaultToLint._started = True
                gc.freeze()
            gc.enable()

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


@click.group(
    cls=DefaultToLint,
    commands=CommandsOnDemand(COMMAND_NAMES),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="nodename-lint")
def main() -> None:
    """Lint Kubernetes manifests for what the cluster will do with spec.nodeName.

    `nodename-lint [PATH]...` runs the `lint` command, whose options follow; `nodename-lint rules`
    lists the rules, `nodename-lint COMMAND --help` tells about a command.
    """


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
