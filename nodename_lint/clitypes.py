"""Command-line value types and shell completions: kubectl durations, rule ids, kubeconfig contexts.

Completion runs inside the shell's TAB key, so it imports little and never fails: a kubeconfig it
cannot read completes nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

# Go's time.ParseDuration units, as kubectl's --request-timeout takes them (`5s`, `1m30s`, `500ms`).
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in a kubectl duration: a plain number of seconds, or Go units (`5s`, `1m`, `1m30s`).

    Raises ValueError for anything else.
    """
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d*)?|\.\d+", text):
        return float(text)
    position, total = 0, 0.0
    for match in _PART.finditer(text):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    if position != len(text) or not text:
        raise ValueError(text)
    return total


class Duration(click.ParamType):
    """A positive kubectl duration, as seconds."""

    name = "duration"

    def __init__(self, minimum: float) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)):
            seconds = float(value)
        else:
            try:
                seconds = parse_duration(str(value))
            except ValueError:
                self.fail(
                    f"{value!r} is not a duration: use seconds (5) or units as kubectl does (5s, 1m, 1m30s)", param, ctx
                )
        if seconds < self.minimum:
            self.fail(
                f"{value!r} is too short: at least {self.minimum:g}s (a request needs time to answer)", param, ctx
            )
        return seconds


def complete_rule_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Rule ids; after a comma (`--select a,b`) the last id is completed and the others are kept."""
    # startup: only shell completion loads these (the options are declared on every run)
    from click.shell_completion import CompletionItem

    from .registry import all_rules

    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    return [
        CompletionItem(prefix + rule.id, help=rule.summary) for rule in all_rules().values() if rule.id.startswith(last)
    ]


def complete_contexts(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The context names of the kubeconfig the run would read (--kubeconfig, KUBECONFIG, ~/.kube/config)."""
    from click.shell_completion import CompletionItem  # startup: as in complete_rule_ids

    return [
        CompletionItem(name)
        for name in kubeconfig_contexts(ctx.params.get("kubeconfig"))
        if name.startswith(incomplete)
    ]


def kubeconfig_contexts(flag: str | None) -> list[str]:
    """Every context name defined in the kubeconfig files; [] when there are none or they cannot be read."""
    # startup: as in complete_rule_ids
    import yaml

    from .cluster.kubeconfig import kubeconfig_paths
    from .sources import UsageError

    try:
        paths = kubeconfig_paths(flag)
    except UsageError:
        return []
    names: list[str] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        entries = data.get("contexts") if isinstance(data, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
    return sorted(names)
