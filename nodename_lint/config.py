"""`.nodename-lint.yaml`: which rules run at which severity, and which paths are skipped.

The file is found in the current folder or the nearest parent (or given with --config) and is
validated with JSON Schema; a mistake is reported with its line, and the run stops (exit 2).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .render import ChartSettings
from .rule import SEVERITIES, Severity
from .sources import UsageError

CONFIG_NAMES = (".nodename-lint.yaml", ".nodename-lint.yml")
OFF = "off"


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
            "namespace": {"type": "string", "minLength": 1},
            "fail-on": {"enum": list(SEVERITIES)},
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


@dataclass
class Config:
    """The settings of a config file, with paths made absolute against the file's folder."""

    path: str | None = None
    rules: dict[str, Severity | None] = field(default_factory=dict)  # None disables the rule
    exclude: list[str] = field(default_factory=list)
    static_pod_dirs: list[str] = field(default_factory=list)
    namespace: str | None = None
    fail_on: Severity | None = None
    helm_charts: list[tuple[str, ChartSettings]] = field(default_factory=list)  # real chart folder -> settings


def find_config(start: str = ".") -> str | None:
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
    import jsonschema
    import yaml

    from .documents import compose
    from .yamlnodes import ConversionError, child, to_python

    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the config file: {exc}") from None
    document = compose(text)
    if document.error is not None:
        error = document.error
        raise UsageError(f"{path}:{error.line}:{error.column}: invalid YAML in the config file: {error.message}")
    try:
        data = to_python(document.root) if document.root is not None else {}
    except ConversionError as exc:
        raise UsageError(f"{path}: {exc}") from None
    validator = jsonschema.Draft202012Validator(config_schema(rule_ids))
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        node: yaml.Node | None = document.root
        line = node.start_mark.line + 1 if node is not None else 1
        for step in error.absolute_path:
            found = child(node, step)
            if found is None:
                break
            line = found[0].start_mark.line + 1
            node = found[1]
        where = "/".join(str(step) for step in error.absolute_path) or "top level"
        message = error.message
        if "propertyNames" in error.schema_path:
            message = f"unknown rule id {error.instance!r} (see `nodename-lint rules`)"
            key = child(node, str(error.instance))
            line = key[0].start_mark.line + 1 if key else line
        raise UsageError(f"{path}:{line}: invalid config at {where}: {message}")
    base = os.path.dirname(os.path.abspath(path))
    config = Config(path=path, namespace=data.get("namespace"), fail_on=data.get("fail-on"))
    for rule_id, setting in (data.get("rules") or {}).items():
        config.rules[rule_id] = _severity(setting)
    config.exclude = [os.path.join(base, pattern) for pattern in data.get("exclude") or []]
    config.static_pod_dirs = [os.path.join(base, folder) for folder in data.get("static-pod-dirs") or []]
    config.helm_charts = [_chart_settings(path, base, chart, settings) for chart, settings in (data.get("helm") or {}).items()]
    return config


def _chart_settings(path: str, base: str, chart: str, settings: dict[str, Any]) -> tuple[str, ChartSettings]:
    """A chart's settings; its values files are relative to the chart folder and must stay in the
    config file's folder (a repository's config cannot make Helm read files outside it)."""
    folder = os.path.realpath(os.path.join(base, chart))
    values = []
    for name in settings.get("values") or []:
        file = os.path.realpath(os.path.join(folder, name))
        if not file.startswith(os.path.realpath(base) + os.sep):
            raise UsageError(f"{path}: invalid config at helm/{chart}/values: {name!r} is outside the config file's "
                             "folder; values files must be in the repository")
        values.append(file)
    return folder, ChartSettings(tuple(values), settings.get("release"), settings.get("namespace"))


_DEFAULT = "default"


def _severity(setting: Any) -> Any:
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
    catalogue_defaults: dict[str, Severity], config: Config, select: list[str], ignore: list[str]
) -> dict[str, Severity]:
    """Active rule id -> severity, from defaults, the config, then --select and --ignore."""
    unknown = [rule for rule in (*select, *ignore) if rule not in catalogue_defaults]
    if unknown:
        raise UsageError(f"unknown rule id {unknown[0]!r} (see `nodename-lint rules`)")
    active: dict[str, Severity] = {}
    for rule_id, default in catalogue_defaults.items():
        setting = config.rules.get(rule_id, _DEFAULT)
        if setting is None:
            continue
        active[rule_id] = default if setting == _DEFAULT else setting
    if select:
        active = {rule_id: catalogue_defaults[rule_id] if rule_id not in active else active[rule_id] for rule_id in select}
    for rule_id in ignore:
        active.pop(rule_id, None)
    return active
