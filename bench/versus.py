"""Two installs of nodename-lint side by side on the same clusters: offline, against the dump, against its snapshot.

A change to the cluster code buys tens of milliseconds out of seconds, and on a shared machine the same
command's CPU time moves by a tenth from run to run: only runs of both versions interleaved in the same
minutes, over several rounds, tell the change from the noise. Each round runs, for each cluster folder
and each version in a random order, the three commands of bench/scale.py's shapes (`--format json`,
each a fresh process, pinned to one core with `--pin`); the table gives the CPU medians (user + system)
and the ratios to the offline run. The reports of the two versions are compared byte for byte.

A cluster folder holds `manifests/`, `dump.json` and `cluster.snapshot.json`, as
`bench/scale.py --shapes-dir DIR` leaves them in DIR/labels, DIR/tainted and DIR/skewed (the files
must be inside the folder, not links out of it: nodename-lint does not follow those). A version is the
Python of a venv it is installed in, for instance a git worktree of the base commit:

    git worktree add ../base BASE && python -m venv ../base/.venv && ../base/.venv/bin/pip install -e ../base
    python bench/versus.py --base ../base/.venv/bin/python --pin 1 --rounds 5 DIR/labels DIR/tainted
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402  (bench/ is not a package)

STATES = {"offline": None, "dump": "dump.json", "snapshot": "cluster.snapshot.json"}


def measures(python: str, folder: Path, reports: Path, version: str) -> dict[str, run.Measure]:
    found = {}
    for mode, state in STATES.items():
        command = [python, "-m", "nodename_lint", str(folder / "manifests"), "--format", "json"]
        command += ["-o", str(reports / f"{folder.name}-{mode}-{version}.json")]
        if state is not None:
            command += ["--cluster-state", str(folder / state)]
        found[mode] = run.Measure(f"{version} {mode}", command, documents=1)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="cluster folders (manifests/, dump.json, snapshot)")
    parser.add_argument("--base", required=True, help="the Python of the venv the base version is installed in")
    parser.add_argument("--new", default=sys.executable, help="the Python of the new version [this one]")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pin", type=int, metavar="CPU", help="run every command on this one core")
    arguments = parser.parse_args()
    run.PINNED_CPU = arguments.pin
    versions = {"base": arguments.base, "new": arguments.new}
    arguments.folders = [folder.resolve() for folder in arguments.folders]  # the commands run in another folder
    with tempfile.TemporaryDirectory(prefix="nodename-lint-versus-") as work:
        # Every command runs in this empty folder: `python -m` and `python -c` put the current folder first on
        # the module path, so from a checkout both versions would import the checkout's nodename_lint.
        reports = Path(work)
        sources = set()
        for python in versions.values():  # as `pip install` does; PYTHONDONTWRITEBYTECODE may be set
            source = subprocess.run(
                [python, "-c", "import nodename_lint, os; print(os.path.dirname(nodename_lint.__file__))"],
                check=True,
                capture_output=True,
                text=True,
                cwd=reports,
            ).stdout.strip()
            subprocess.run([python, "-m", "compileall", "-q", source, str(Path(source).parent / "rules")], check=True)
            sources.add(source)
        if len(sources) < len(versions):
            parser.error(f"--base and --new import the same nodename_lint ({sources.pop()})")
        table = {
            (folder, version): measures(python, folder, reports, version)
            for folder in arguments.folders
            for version, python in versions.items()
        }
        for _ in range(arguments.rounds):
            for folder in arguments.folders:
                for version in random.sample(list(versions), len(versions)):
                    for measure in table[folder, version].values():
                        measure.run(reports)
        print("| cluster | version | offline cpu s | dump cpu s | x offline | snapshot cpu s | x offline |")
        print("|---|---|---|---|---|---|---|")
        for (folder, version), rows in table.items():
            offline, dump, snapshot = (rows[mode].cpu_median for mode in STATES)
            print(
                f"| {folder.name} | {version} | {offline:.2f} | {dump:.2f} | {dump / offline:.2f} | "
                f"{snapshot:.2f} | {snapshot / offline:.2f} |"
            )
        for folder in arguments.folders:
            for mode in STATES:
                same = [(reports / f"{folder.name}-{mode}-{version}.json").read_bytes() for version in versions]
                print(f"{folder.name} {mode}: reports {'identical' if same[0] == same[1] else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
