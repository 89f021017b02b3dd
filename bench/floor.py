"""The physical floor of a lint run: read every file and compose every document with libyaml.

It lints nothing: it reads the same files nodename-lint would (same discovery) and composes each
YAML document with PyYAML's CSafeLoader. Prints the number of documents composed.

    python bench/floor.py PATH...
"""

from __future__ import annotations

import sys

import yaml

from nodename_lint.sources import discover


def compose_all(paths: list[str]) -> int:
    """Compose every document of every file; a file with a syntax error counts up to it."""
    documents = 0
    for source in discover(paths):
        with open(source.path, "rb") as handle:
            data = handle.read()
        try:
            for _node in yaml.compose_all(data, Loader=yaml.CSafeLoader):
                documents += 1
        except yaml.YAMLError:
            pass
    return documents


if __name__ == "__main__":
    print(compose_all(sys.argv[1:]))
