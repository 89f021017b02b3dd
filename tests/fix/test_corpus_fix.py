"""--fix on real manifests: pin every workload of the corpus with nodeName, fix, check the result."""

from __future__ import annotations

import difflib
from pathlib import Path

from yaml import MappingNode

from nodename_lint.documents import decode, iter_documents
from nodename_lint.fix.runner import fix_text
from nodename_lint.model import objects_in
from nodename_lint.yamlnodes import lookup
from tests.fix.helpers import default_linter

PINNED = "nodeName: worker-2"


def pin_every_workload(text: str, display: str) -> tuple[str, int]:
    """The text with `nodeName: worker-2` as the first line of every block-style Pod template spec."""
    line_starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    positions = []
    for document in iter_documents([text]):
        if document.error is not None:
            continue
        for obj in objects_in(display, document):
            if not obj.is_workload_template:
                continue
            spec = obj.node
            for step in obj.pod_spec_path or ():
                pair = lookup(spec, step)
                spec = pair[1] if pair else None
            if isinstance(spec, MappingNode) and spec.value and not spec.flow_style and not lookup(spec, "nodeName"):
                first_key = spec.value[0][0]
                position = line_starts[document.line_offset] + first_key.start_mark.index
                if not text[text.rfind("\n", 0, position) + 1 : position].strip():
                    positions.append((position, first_key.start_mark.column))
    newline = "\r\n" if "\r\n" in text else "\n"
    for position, column in sorted(positions, reverse=True):
        text = text[:position] + PINNED + newline + " " * column + text[position:]
    return text, len(positions)


def test_every_pinned_workload_of_the_corpus_is_fixed_touching_only_its_node_name(shared_dir: Path) -> None:
    linter = default_linter()
    pinned_total = 0
    for path in sorted((shared_dir / "corpus").rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".json"):
            continue
        try:
            text = decode(path.read_bytes())
        except UnicodeDecodeError:
            continue
        pinned, count = pin_every_workload(text, str(path))
        if not count:
            continue
        pinned_total += count
        fixed, applied, notes = fix_text(linter, pinned, str(path))
        assert (len(applied), notes) == (count, []), path
        assert not [f for f in linter.lint_text(fixed, str(path)).findings if f.rule == "nodename-in-template"]
        removed = [line for line in difflib.ndiff(pinned.splitlines(), fixed.splitlines()) if line.startswith("- ")]
        assert all(PINNED in line for line in removed), (path, removed)
    assert pinned_total > 50  # the corpus has plenty of workloads; a broken walk must not pass silently
