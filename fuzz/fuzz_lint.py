"""atheris fuzz harness over nodename-lint's parse-and-lint entry point.

Feeds arbitrary bytes through what a file goes through: decoding (`documents.decode`), splitting
and composing (`iter_documents`), building objects and running every rule (`Linter`). Any
exception that escapes, or an internal rule error the engine had to catch, is a crash.

Run (see README "Guarantees and bad input"):
    python fuzz/fuzz_lint.py fuzz/corpus -max_total_time=600 -rss_limit_mb=2048
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from nodename_lint.documents import decode
    from nodename_lint.engine import Linter
    from nodename_lint.registry import all_rules
    from nodename_lint.rule import Context

    # built inside the block so that the rule modules, imported on first use, are instrumented too
    LINTER = Linter(dict.fromkeys(all_rules()), Context())


def lint_bytes(data: bytes) -> None:
    """Lint one input as if it were a file; raise when the engine let an error escape."""
    try:
        text = decode(data)
    except UnicodeDecodeError:
        return  # reported as a yaml-syntax finding by the engine; nothing further to fuzz
    result = LINTER.lint_text(text, display="<fuzz>")
    LINTER.lint_text(text, display="<fuzz>", is_static_pod=True)
    if result.internal_errors:
        raise AssertionError("; ".join(result.internal_errors))


def main() -> None:
    atheris.Setup(sys.argv, lint_bytes)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
