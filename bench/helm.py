"""What rendering Helm charts costs: lint N charts against lint of the same objects already rendered.

Makes N charts with helm-python-sdk's scaffold (what `helm create` writes), renders each once into a
plain YAML file (the reference: what `helm template c | nodename-lint -` would lint), then times, in
interleaved rounds of fresh processes, `nodename-lint CHARTS...` and `nodename-lint RENDERED/`, and
prints the medians and their ratio. The difference is the render: loading Helm's native library
once, then copying, loading and rendering each chart.

    python bench/helm.py [--charts 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _prepare(root: Path, count: int) -> tuple[list[str], str]:
    import helm_python

    names = [f"c{index}" for index in range(count)]
    rendered = root / "rendered"
    rendered.mkdir()
    for name in names:
        with helm_python.Chart.create(name, str(root)) as chart:
            objects = chart.render(None)
        text = "".join(f"---\n{text}" for template, text in objects.items() if template.endswith(".yaml"))
        (rendered / f"{name}.yaml").write_text(text, encoding="utf-8")
    return names, "rendered"


def _time(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--charts", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    lint = [sys.executable, "-m", "nodename_lint", "--quiet"]
    with tempfile.TemporaryDirectory(prefix="bench-helm-") as folder:
        root = Path(folder)
        charts, rendered = _prepare(root, args.charts)
        timings: dict[str, list[float]] = {"charts": [], "rendered": []}
        for _ in range(args.rounds):
            timings["charts"].append(_time([*lint, *charts], root))
            timings["rendered"].append(_time([*lint, rendered], root))
    charts_s, rendered_s = (statistics.median(timings[key]) for key in ("charts", "rendered"))
    print(f"{args.charts} scaffold charts, median of {args.rounds} rounds (wall time, fresh processes)")
    print(f"  lint the charts (rendered by nodename-lint): {charts_s:.2f} s")
    print(f"  lint the same objects pre-rendered:          {rendered_s:.2f} s")
    print(
        f"  ratio: {charts_s / rendered_s:.2f}x; render cost per chart: "
        f"{(charts_s - rendered_s) / args.charts * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
