"""`.nodename-lint.yaml`: which rules run at which severity, and which paths are skipped.

The file nearest to each linted path is used (its folder, then the parents; then the current
folder and its parents), as ruff and yamllint find theirs, or the one given with --config. It is
validated with JSON Schema; every mistake is reported at its own line, with a "did you mean" for
a misspelt key, rule id or value, and the run stops (exit 2).

A repository's config is as untrusted as its manifests: a config file that is a symlink out of the
repository is not read, and no message quotes the file beyond the offending key (a value is named
by its path and line, never quoted), so a config cannot make the run print a file of the machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .rule import SEVERITIES, Severity
from .sources import UsageError, link_out_of_repository

if TYPE_CHECKING:  # startup: loaded when a config file sets a chart's Helm settings
    from .render.types import ChartSettings

CONFIG_NAMES = (".nodename-lint.yaml", ".nodename-lint.yml")
OFF = "off"
MAX_CONFIG_BYTES = 1 << 20  # a config file is a few lines
_UNCONVERTIBLE = (
    "kubectl's reader cannot convert this value to JSON (a value that does not fit its tag such as "
    "`!!int abc`, a key that is a list or null, .nan or .inf, or aliases that expand too far)"
)


def config_schema(rule_ids: list[str]) -> dict[str, Any]:
    rule_setting = {
        "oneOf": [
            {"enum": [*SEVERITIES, OFF, "on", False, True]},
            {
                "type": "object",
                "properties": {"enabled": {"type": "boolean"}, "severity": {"enum": list(SEVERITIES)}},
                "additionalProperties": False,
            },
        ]
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "rules": {
                "type": "object",
                "propertyNames": {"enum": rule_ids},
                "additionalProperties": rule_setting,
            },
            "exclude": {"type": "array", "items": {"type": "string"}},
            "static-pod-dirs": {"type": "array", "items": {"type": "string"}},
            # a DNS-1123 label, as the API requires: the live mode puts it into request paths
            "namespace": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63},
            "fail-on": {"enum": list(SEVERITIES)},
            "webhook": {  # `nodename-lint webhook`: which findings deny a request, which come back as warnings
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "deny": {"type": "array", "items": {"enum": rule_ids}, "uniqueItems": True},
                    "warn-on": {"enum": list(SEVERITIES)},
                },
            },
            "helm": {  # chart folder (relative to this file) -> how to render it
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "values": {"type": "array", "items": {"type": "string", "minLength": 1}},
                        "release": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 53},
                        "namespace": {"type": "string", "minLength": 1},
                    },
                },
            },
        },
    }


class Config:
    """The settings of a config file, with paths made absolute against the file's folder (a plain class
    with __slots__, not a dataclass: startup, CONTRIBUTING.md)."""

    __slots__ = (
        "exclude",
        "fail_on",
        "helm_charts",
        "namespace",
        "path",
        "rules",
        "static_pod_dirs",
        "webhook_deny",
        "webhook_warn_on",
    )

    def __init__(
        self,
        path: str | None = None,
        namespace: str | None = None,
        fail_on: Severity | None = None,
        webhook_deny: list[str] | None = None,
        webhook_warn_on: Severity | None = None,
    ) -> None:
        self.path = path
        # rule id -> a severity, "default" (enabled at the rule's own severity) or None (disabled)
        self.rules: dict[str, str | None] = {}
        self.exclude: list[str] = []
        self.static_pod_dirs: list[str] = []
        self.namespace = namespace
        self.fail_on = fail_on
        self.helm_charts: list[tuple[str, ChartSettings]] = []  # real chart folder -> settings
        self.webhook_deny = webhook_deny  # the rules whose errors deny an admission request (None: the default)
        self.webhook_warn_on = webhook_warn_on  # the lowest severity returned as an admission warning


def config_for(path: str) -> str | None:
    """The config file nearest to a linted PATH (stdin: the current folder), else the current folder's."""
    if path != "-":
        start = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        found = find_config(start)
        if found is not None:
            return found
    return find_config(".")


def find_config(start: str = ".") -> str | None:
    """The first config file in START or one of its parents."""
    folder = os.path.abspath(start)
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def load_config(path: str | None, rule_ids: list[str]) -> Config:
    """Read and validate a config file; raises UsageError with file:line on any mistake."""
    if path is None:
        return Config()
    # startup: jsonschema and the YAML reader load only when there is a config file (tests/test_imports.py)
    import jsonschema

    from .documents import UNCONVERTIBLE_PREFIX, compose
    from .yamlnodes import ConversionError, to_python

    text = _read_config(path)
    document = compose(text)
    if document.error is not None:
        error = document.error
        # a conversion problem quotes the value (`'abc' is not a valid !!int`): say what it is instead
        message = _UNCONVERTIBLE if error.message.startswith(UNCONVERTIBLE_PREFIX) else error.message
        raise UsageError(f"{path}:{error.line}:{error.column}: invalid YAML in the config file: {message}")
    try:
        data = to_python(document.root) if document.root is not None else {}
    except ConversionError as exc:
        raise UsageError(f"{path}:{exc.node.start_mark.line + 1}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        line = document.root.start_mark.line + 1 if document.root is not None else 1
        raise UsageError(
            f"{path}:{line}: the config file is {_kind(data)}, not a mapping of settings; "
            f"its keys are {', '.join(config_schema([])['properties'])}"
        )
    validator = jsonschema.Draft202012Validator(config_schema(rule_ids))
    problems = sorted(
        {problem for error in validator.iter_errors(data) for problem in _problems(error, document.root, rule_ids)}
    )
    if problems:
        raise UsageError("\n".join(f"{path}:{line}: {message}" for line, message in problems))
    base = os.path.dirname(os.path.abspath(path))
    webhook = data.get("webhook") or {}
    config = Config(
        path=path,
        namespace=data.get("namespace"),
        fail_on=data.get("fail-on"),
        webhook_deny=webhook.get("deny"),
        webhook_warn_on=webhook.get("warn-on"),
    )
    for rule_id, setting in (data.get("rules") or {}).items():
        config.rules[rule_id] = _severity(setting)
    for key in ("exclude", "static-pod-dirs"):
        for index, value in enumerate(data.get(key) or []):
            problem = _escapes(value, base)
            if problem:
                line = _line_of(document.root, [key, index])[0]
                raise UsageError(
                    f"{path}:{line}: invalid config at {key}/{index}: the path {problem}; paths in a "
                    "config file are relative to its folder and stay inside it (use the command-line "
                    "flag for a folder elsewhere)"
                )
    config.exclude = [os.path.join(base, pattern) for pattern in data.get("exclude") or []]
    config.static_pod_dirs = [os.path.join(base, folder) for folder in data.get("static-pod-dirs") or []]
    config.helm_charts = [
        _chart_settings(path, base, chart, settings, document.root)
        for chart, settings in (data.get("helm") or {}).items()
    ]
    return config


def _read_config(path: str) -> str:
    """The config file's text: not through a symlink out of the repository, and at most MAX_CONFIG_BYTES."""
    outside = link_out_of_repository(path)
    if outside is not None:
        real, repository = outside
        raise UsageError(
            f"{path}: the config file is a symlink to {real}, outside the repository ({repository}); "
            "nodename-lint does not read it (a repository's links are as untrusted as its files): "
            "make it a file of the repository"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise UsageError(f"{path}: the config file is larger than {MAX_CONFIG_BYTES >> 20} MiB, not read")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{path}:{line}: the config file is not UTF-8 (byte {exc.start})") from None


def _kind(value: Any) -> str:
    """What a value is, said without quoting it: config messages never print the file's content."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "null"


def _quoted_key(key: object) -> str:
    """An offending key as messages quote it: repr, cut short (it may be as long as the file)."""
    text = repr(key)
    return text if len(text) <= 80 else text[:77] + "..."


def _escapes(value: str, base: str) -> str:
    """Why a config path leaves the config file's folder ("" when it stays inside).

    A repository's config is as untrusted as its manifests: `static-pod-dirs: [/proc/self]` or
    `../../etc` would make the run read and quote files outside the repository.
    """
    if os.path.isabs(value) or value.startswith("~"):
        return "is absolute"
    normalized = os.path.normpath(value)
    if normalized == ".." or normalized.startswith(".." + os.sep):
        return "leaves the config file's folder"
    real_base = os.path.realpath(base)
    real = os.path.realpath(os.path.join(base, value))
    if real != real_base and not real.startswith(real_base.rstrip(os.sep) + os.sep):
        return f"resolves to {real}, outside the config file's folder (a symlink)"
    return ""


def _line_of(root: Any, steps: list[Any]) -> tuple[int, Any]:
    """The line (1-based) of the deepest node on the path STEPS from ROOT, and that node."""
    from .yamlnodes import child

    node = root
    line = node.start_mark.line + 1 if node is not None else 1
    for step in steps:
        found = child(node, step)
        if found is None:
            break
        line = found[0].start_mark.line + 1
        node = found[1]
    return line, node


def _chart_settings(path: str, base: str, chart: str, settings: dict[str, Any], root: Any) -> tuple[str, ChartSettings]:
    """A chart's settings; its values files are relative to the chart folder and must stay in the
    config file's folder (a repository's config cannot make Helm read files outside it)."""
    from .render.types import ChartSettings
    from .yamlnodes import follow

    folder = os.path.realpath(os.path.join(base, chart))
    values = []
    for index, name in enumerate(settings.get("values") or []):
        file = os.path.realpath(os.path.join(folder, name))
        if not file.startswith(os.path.realpath(base) + os.sep):
            _, node = follow(root, ("helm", chart, "values", index))
            line = node.start_mark.line + 1 if node is not None else 1
            raise UsageError(
                f"{path}:{line}: the values file at helm/{chart}/values/{index} is outside the config file's "
                "folder; values files must be in the repository"
            )
        values.append(file)
    return folder, ChartSettings(tuple(values), settings.get("release"), settings.get("namespace"))


def _problems(error: Any, root: Any, rule_ids: list[str]) -> list[tuple[int, str]]:
    """(line, message) for one schema error, at the line of the key or value that is wrong."""
    from .yamlnodes import child, follow  # startup: as in load_config

    mark, node = follow(root, error.absolute_path)
    line = mark.start_mark.line + 1 if mark is not None else 1
    steps = [str(step) for step in error.absolute_path]
    where = "/".join(steps) or "the top level"

    def key_line(key: str) -> int:
        found = child(node, key)
        return found[0].start_mark.line + 1 if found else line

    if error.validator == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        return [
            (
                key_line(key),
                f"unknown key {_quoted_key(key)} in {where}{did_you_mean(key, known)}; the keys are {', '.join(known)}",
            )
            for key in error.instance
            if key not in known
        ]
    if "propertyNames" in error.schema_path:
        rule_id = str(error.instance)
        message = f"unknown rule id {_quoted_key(rule_id)}{did_you_mean(rule_id, rule_ids)} (see `nodename-lint rules`)"
        return [(key_line(rule_id), message)]
    if steps[:1] == ["rules"] and len(steps) >= 2:
        choices = [*SEVERITIES, OFF, "on"]
        message = (
            f"invalid setting for rule {steps[1]}{did_you_mean(_scalar_text(error.instance), choices)}: "
            f"use one of {', '.join(choices)}, or {{severity: SEVERITY, enabled: true|false}}"
        )
        return [(line, message)]
    if steps[:2] == ["webhook", "deny"] and error.validator == "enum":
        rule_id = str(error.instance)
        message = f"unknown rule id {_quoted_key(rule_id)}{did_you_mean(rule_id, rule_ids)} (see `nodename-lint rules`)"
        return [(line, message)]
    if error.validator == "enum":
        choices = [str(choice) for choice in error.validator_value]
        message = (
            f"invalid value for {where}{did_you_mean(_scalar_text(error.instance), choices)}: "
            f"use one of {', '.join(choices)}"
        )
        return [(line, message)]
    return [(line, f"invalid config at {where}: {_requirement(error)}")]


def _scalar_text(value: Any) -> str:
    """A value as text for "did you mean" (which quotes only the choices); "" for a list or mapping."""
    return "" if isinstance(value, (list, dict)) else str(value)


def _requirement(error: Any) -> str:
    """What a schema error asks for, from the schema alone: jsonschema's own message quotes the value."""
    rule, wanted = error.validator, error.validator_value
    if rule == "type":
        return f"must be {_TYPE_NAMES.get(str(wanted), str(wanted))}, not {_kind(error.instance)}"
    if rule == "pattern":
        return f"must match {wanted} (a lowercase DNS-1123 label: letters, digits and '-')"
    if rule == "maxLength":
        return f"must be at most {wanted} characters long"
    if rule == "minLength":
        return "must not be empty"
    return f"is not valid ({rule})"


_TYPE_NAMES = {"array": "a list", "object": "a mapping", "string": "a string", "boolean": "true or false"}


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the closest choice (rapidfuzz's Indel ratio, difflib's measure), else ''."""
    from rapidfuzz import fuzz, process  # startup: only a mistake in the config or a flag needs it

    close = process.extractOne(word, list(choices), scorer=fuzz.ratio, score_cutoff=60)
    return f" (did you mean {close[0]!r}?)" if close else ""


_DEFAULT = "default"
_CONFIGURED: dict[str, Severity] = {severity: severity for severity in SEVERITIES}


def _severity(setting: Any) -> str | None:
    """A rule's setting as a severity, None (disabled) or "default"."""
    if setting in (OFF, False):
        return None
    if setting in ("on", True):
        return _DEFAULT
    if isinstance(setting, dict):
        if setting.get("enabled") is False:
            return None
        return setting.get("severity", _DEFAULT)
    return setting


def resolve_severities(
    catalogue_ids: Iterable[str], config: Config, select: list[str], ignore: list[str]
) -> dict[str, Severity | None]:
    """Active rule id -> the severity the config sets for it, or None for the rule's own.

    "Configured" stays distinct from "default": a configured severity applies to every finding of
    the rule, while a rule left at its default may give some findings another severity (e.g.
    untolerated-taint reports a NoSchedule taint as a warning).
    """
    known = list(catalogue_ids)
    unknown = [rule for rule in (*select, *ignore) if rule not in known]
    if unknown:
        raise UsageError(f"unknown rule id {unknown[0]!r}{did_you_mean(unknown[0], known)} (see `nodename-lint rules`)")
    active: dict[str, Severity | None] = {}
    for rule_id in known:
        setting = config.rules.get(rule_id, _DEFAULT)
        if setting is None:
            continue
        active[rule_id] = _CONFIGURED.get(setting)  # "default" is not a severity: None, the rule's own
    if select:
        active = {rule_id: active.get(rule_id) for rule_id in select}
    for rule_id in ignore:
        active.pop(rule_id, None)
    return active
