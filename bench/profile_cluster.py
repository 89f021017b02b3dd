"""Where one cluster run's CPU goes, in one process: the state's load by phase, each rule, the import statements.

A profiler's own cost per call hides what a run of 1,000 manifests against 150,000 Pods spends: this wraps a
few functions with CPU timers instead (time.process_time) and leaves the rest alone. It prints

- the load of the cluster state: for a kubectl JSON dump its decode (msgspec: whole, or piece by piece,
  json_dump._decoded_piece), the loading loop over the items (json_dump._ItemReader.read) and the Nodes'
  records; for a snapshot the whole load;
- for a kubectl JSON dump, msgspec's scan of it alone, after the run: the file's bytes, in memory, decoded as
  a List of empty structs (the median of three). What the decode takes beyond it is the structs it builds,
  the part of a dump's load (with the loading loop) that a faster reader could shed; the scan it could not;
- each rule's checks, summed over the run (their generators consumed where they are called);
- how many import statements the lint run executed, by the module that ran them (each costs about 2 µs
  in CPython 3.11; a cluster rule reads the cluster code through rule.later stand-ins instead).

    python bench/profile_cluster.py DIR [--state dump.json] [--pin CPU] [--top 15]

DIR holds `manifests/` and the state file, as bench/scale.py's `--shapes-dir` leaves each shape (labels,
tainted, skewed) and bench/versus.py reads them. Times move by a tenth from run to run on a shared machine:
compare runs of two versions interleaved (bench/versus.py) before reading a difference into them.
"""

from __future__ import annotations

import argparse
import builtins
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def timed(totals: dict[str, float], label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            totals[label] = totals.get(label, 0.0) + time.process_time() - start

    return wrapper


def timed_check(totals: dict[str, float], label: str, check: Callable[..., Any]) -> Callable[..., Any]:
    """A rule's check, its generator consumed inside the timer (the engine reads every finding anyway)."""

    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        start = time.process_time()
        try:
            found = list(check(*args, **kwargs) or ())
        finally:
            totals[label] = totals.get(label, 0.0) + time.process_time() - start
        return iter(found)

    return wrapper


class TimedDecoder:
    """json_dump's module-level decoder, its decode timed."""

    def __init__(self, decoder: Any, totals: dict[str, float]) -> None:
        self.decoder, self.totals = decoder, totals

    def decode(self, data: Any) -> Any:
        return timed(self.totals, "load: decode (msgspec)", self.decoder.decode)(data)


def scan_alone(data: bytes) -> float:
    """CPU seconds msgspec takes to decode DATA as a List whose items are empty structs: it parses every byte
    (it must, to find where each item ends) and builds nothing but one struct an item (median of three)."""
    import msgspec

    empty = msgspec.defstruct("Empty", [], gc=False)
    decoder = msgspec.json.Decoder(msgspec.defstruct("ListOfEmpty", [("items", list[empty])], gc=False))  # type: ignore[valid-type]
    times = []
    for _ in range(3):
        start = time.process_time()
        decoder.decode(data)
        times.append(time.process_time() - start)
    return sorted(times)[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="holds manifests/ and the state file")
    parser.add_argument("--state", default="dump.json", help="the state file in FOLDER (default: dump.json)")
    parser.add_argument("--pin", type=int, metavar="CPU", help="run on this one core")
    parser.add_argument("--top", type=int, default=15, help="how many rules to list (default: 15)")
    options = parser.parse_args()
    if options.pin is not None:
        os.sched_setaffinity(0, {options.pin})

    totals: dict[str, float] = {}
    from nodename_lint.cluster import from_file, json_dump, snapshot
    from nodename_lint.registry import all_rules

    json_dump._DECODER = TimedDecoder(json_dump._DECODER, totals)  # type: ignore[assignment]
    json_dump._decoded_piece = timed(totals, "load: decode (msgspec)", json_dump._decoded_piece)
    json_dump._ItemReader.read = timed(  # type: ignore[method-assign]
        totals, "load: loading loop (_ItemReader.read)", json_dump._ItemReader.read
    )
    json_dump._node_record = timed(totals, "load: Nodes' records", json_dump._node_record)
    # commands.options imports it when a run reads a state file
    from_file.load_state_file = timed(totals, "load: the whole state", from_file.load_state_file)
    for rule_id, rule in all_rules().items():
        rule.checks[:] = [
            type(check)(check.kind, timed_check(totals, rule_id, check.function)) for check in rule.checks
        ]

    imports: Counter[str] = Counter()
    original_import = builtins.__import__

    def counting_import(name: str, globals: Any = None, *args: Any, **kwargs: Any) -> Any:
        imports[str((globals or {}).get("__name__"))] += 1
        return original_import(name, globals, *args, **kwargs)

    from nodename_lint.cli import main as cli

    report = Path(os.environ.get("TMPDIR", "/tmp")) / f"profile-cluster-{os.getpid()}.json"
    folder = options.folder
    arguments = [str(folder / "manifests"), "--cluster-state", str(folder / options.state)]
    arguments += ["--format", "json", "-j", "1", "-o", str(report)]
    start = time.process_time()
    builtins.__import__ = counting_import
    try:
        cli(arguments, standalone_mode=False)
    except SystemExit:
        pass
    finally:
        builtins.__import__ = original_import
        report.unlink(missing_ok=True)
    total = time.process_time() - start

    print(f"{folder.name}, --cluster-state {options.state}: {total:.3f} s CPU in the command (after imports)")
    for label in sorted(label for label in totals if label.startswith("load: ")):
        print(f"  {label:40s} {totals[label]:7.3f} s")
    rules = sorted(((cpu, label) for label, cpu in totals.items() if not label.startswith("load: ")), reverse=True)
    print(f"  rules, {sum(cpu for cpu, _ in rules):.3f} s in all:")
    for cpu, label in rules[: options.top]:
        print(f"    {label:38s} {cpu * 1000:7.1f} ms")
    state = folder / options.state
    with state.open("rb") as head:
        dump = not snapshot.is_snapshot(head.read(200))
    if dump:
        print(f"  msgspec's scan of the file alone         {scan_alone(state.read_bytes()):7.3f} s")
    print(f"  import statements run: {sum(imports.values()):,}")
    for module, count in imports.most_common(5):
        print(f"    {module:38s} {count:7,}")


if __name__ == "__main__":
    main()
