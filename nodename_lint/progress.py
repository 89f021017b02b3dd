"""Progress on stderr for long runs, on a terminal only (a 40,000-file run would otherwise be silent)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts linted files and, once a run has lasted DELAY seconds, redraws `N/TOTAL files` in place.

    Nothing is written when stderr is not a terminal (CI logs, pre-commit, pipes) or the run is quiet.
    """

    DELAY = 0.5  # seconds before the first line: short runs never show it
    INTERVAL = 0.1  # seconds between redraws

    def __init__(self, total: int, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = total
        self.done = 0
        self.enabled = enabled and total > 1 and self.stream.isatty()
        self.started = time.monotonic()
        self.shown_at = 0.0
        self.width = 0

    def advance(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < self.DELAY or now - self.shown_at < self.INTERVAL:
            return
        self.shown_at = now
        text = f"nodename-lint: {self.done:,}/{self.total:,} files ({100 * self.done // self.total}%)"
        self.width = max(self.width, len(text))
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()

    def close(self) -> None:
        """Erase the line, so the report starts on a clean one."""
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
