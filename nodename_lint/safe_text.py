"""Untrusted text made safe for output that other programs interpret.

File names, manifest values and API server replies are written by whoever wrote the pull request
(or runs the server). A CI runner parses every line of a step's stdout AND stderr for workflow
commands (`::stop-commands::`, `::add-mask::`, ...), terminals interpret escape sequences, and
Markdown renderers interpret HTML. So every such text is passed through one of these functions
before it is written: `one_line` for logs (no control character survives, so no text can start a
line of its own), `note` for stderr, `markdown_text` and `markdown_code` for Markdown and HTML.
"""

from __future__ import annotations

import re
import sys

# C0 and C1 controls, DEL, line and paragraph separators, the bidirectional overrides that make
# a terminal show text in another order than it is stored ("Trojan Source"), and lone surrogates (a JSON
# state's "\ud800" escape): no UTF-8 encoder writes those, so a report holding one would fail to be
# written. Startup: the patterns are compiled by re (which caches them) when first used, not at import
# (about 1 ms of a one-file lint, which never needs them: printable text skips them).
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
_MARKDOWN_SPECIAL = r"([\\`*_\[\]|~])"
# What a JSON encoder leaves raw of _UNSAFE (it escapes only the C0 controls, \x00 to \x1f).
_UNSAFE_IN_JSON = "[\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
PREFIX = "nodename-lint: "


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """TEXT with every control character (newline, CR, ESC, ...) written as a visible escape: one line."""
    if text.isprintable():  # none of _UNSAFE's characters is printable; a run's report checks thousands
        return text
    return re.sub(_UNSAFE, _escape_char, text)


def visible_lines(text: str) -> str:
    """TEXT with every unsafe character but tab, CR and LF written as a visible escape: for text made of
    lines, such as a diff, whose line breaks stay what they are."""
    if text.isprintable():
        return text
    return re.sub(_UNSAFE, lambda match: match.group() if match.group() in "\t\r\n" else _escape_char(match), text)


def json_escaped(encoded: str) -> str:
    """JSON text with every unsafe character a JSON encoder leaves raw (DEL, C1 controls, bidi overrides,
    line separators) written as a \\uXXXX escape: the same document once parsed, but nothing in the
    file itself that reorders or breaks what a terminal or a browser shows. Outside strings JSON is
    ASCII, so each such character is inside a string."""
    return re.sub(_UNSAFE_IN_JSON, lambda match: f"\\u{ord(match.group()):04x}", encoded)


def printable_path(path: str) -> str:
    """A path safe for every report and log: valid UTF-8 (bytes that are not appear as \\xff), no control
    character (a newline appears as \\x0a), and never starting with `:` (`::cmd::` at the start of a line
    is a CI workflow command), so a file name cannot inject lines or commands into the output."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        path = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    path = one_line(path)
    return "./" + path if path.startswith(":") else path


_informational_notes = True


def silence_informational_notes() -> None:
    """`--quiet`: notes that only inform (a skipped file, a skipped rule) are not written; errors still are."""
    global _informational_notes
    _informational_notes = False


def note(text: str, *, informational: bool = False) -> None:
    """Write `nodename-lint: TEXT` to stderr as one line: a workflow command can never start it."""
    if informational and not _informational_notes:
        return
    sys.stderr.write(PREFIX + one_line(text) + "\n")
    sys.stderr.flush()


def markdown_text(text: str) -> str:
    """TEXT as literal Markdown inline text: HTML escaped, Markdown punctuation backslash-escaped, one line."""
    import html  # startup: html.entities, only for Markdown reports

    return html.escape(re.sub(_MARKDOWN_SPECIAL, r"\\\1", one_line(text)), quote=True)


def markdown_code(text: str) -> str:
    """TEXT as inline code that nothing inside can end: an HTML <code> element with escaped content.

    Backticks cannot close it and `|` cannot end a table cell (it is written as an entity).
    """
    import html  # startup: html.entities, only for Markdown reports

    escaped = html.escape(one_line(text), quote=True).replace("|", "&#124;").replace("`", "&#96;")
    return f"<code>{escaped}</code>"
