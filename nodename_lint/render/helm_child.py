"""The sealed helper that renders charts with helm-python-sdk (Helm as a native library).

Started by helm.py through sandbox.Worker as `python -I helm_child.py`, with CPU, memory and output
limits and no network: Helm's Go code can loop or allocate without end on a hostile chart (`range
until`, recursive `tpl`), and a Go "fatal error: out of memory" ends the whole process, so it must
not be the linter's process. It imports only the standard library and helm_python, so it starts
fast, and it reads one JSON request per line on stdin and answers one JSON line on stdout:

    {"chart": "/scratch/chart", "values": ["yaml text", ...], "release": "r", "namespace": "ns"}
    -> {"rendered": {"web/templates/x.yaml": "...", ...}}  or  {"error": "Helm's message"}
"""

from __future__ import annotations

import json
import sys
from typing import Any


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of -f values files (mergeMaps in helm's pkg/cli/values/options.go): maps merge
    key by key, anything else is replaced; Helm then coalesces the result over the chart's values.yaml."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def render(helm: Any, request: dict[str, Any]) -> dict[str, Any]:
    try:
        values: dict[str, Any] = {}
        for text in request["values"]:
            values = merge(values, helm.values_from_yaml(text))
        with helm.Chart.load(request["chart"]) as chart:
            # Helm's CheckDependencies, which `helm template` runs and the library's render does not
            loaded = {dependency.get("name") for dependency in chart.dependencies}
            declared = [item.get("name") for item in chart.metadata.get("dependencies") or [] if isinstance(item, dict)]
            missing = [name for name in declared if name not in loaded]
            if missing:
                return {"missing": missing}
            return {"rendered": chart.render(values or None, name=request["release"], namespace=request["namespace"])}
    except helm.HelmError as exc:
        return {"error": str(exc.detail)}


def main() -> None:
    import helm_python

    helm_python.disable_logging()
    for line in sys.stdin:
        answer = render(helm_python, json.loads(line))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
