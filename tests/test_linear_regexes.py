"""Every regular expression that reads input runs in linear time (docs/guarantees.md).

Each rewritten one gets two tests: the attacker's input, long, under a time limit (the old
expression took minutes to hours on it: backtracking that is quadratic or exponential in the
input), and hypothesis comparing it with the old expression, kept here as the reference, on inputs
short enough for the old one to finish.
"""

from __future__ import annotations

import multiprocessing
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodename_lint import documents, suppress, yamlnodes
from nodename_lint.render import template_lines

from .conftest import run_cli

COMPARE = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMIT_SECONDS = 10.0  # the new code takes well under a second on each input below


def _call(connection: Any, function: Callable[..., Any], arguments: tuple[Any, ...]) -> None:
    connection.send(function(*arguments))


def within_limit(function: Callable[..., Any], *arguments: Any) -> Any:
    """FUNCTION(*ARGUMENTS) computed in a child process, which is killed after LIMIT_SECONDS (a regex
    in C cannot be interrupted from Python): the test fails instead of hanging for hours."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_call, args=(sender, function, arguments))
    started = time.monotonic()
    child.start()
    sender.close()
    ready = receiver.poll(LIMIT_SECONDS)
    if not ready:
        child.kill()
        child.join()
        pytest.fail(f"{function.__qualname__} took longer than {LIMIT_SECONDS} s")
    result = receiver.recv()
    child.join()
    assert time.monotonic() - started < LIMIT_SECONDS
    return result


def texts(*pieces: str, max_size: int = 30) -> st.SearchStrategy[str]:
    """Text made of PIECES: the characters each expression cares about, and some it must not."""
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


# --- template_hint ---------------------------------------------------------------------------------
OLD_UNRENDERED = re.compile(r"\{\{.*\}\}")


def test_template_hint_on_a_megabyte_line_of_braces() -> None:
    assert within_limit(documents.template_hint, "{" * 1_000_000) == ""
    assert within_limit(documents.template_hint, "{{ x" * 250_000 + "\n}}") == ""
    assert within_limit(documents.template_hint, "{" * 1_000_000 + "}}") == documents.TEMPLATE_HINT


@COMPARE
@given(texts("{", "}", "{{", "}}", "\n", "\r", " ", "a", "{{ .Values.x }}"))
def test_template_hint_is_the_old_regex(text: str) -> None:
    expected = documents.TEMPLATE_HINT if OLD_UNRENDERED.search(text) else ""
    assert documents.template_hint(text) == expected


def test_a_file_with_a_megabyte_line_of_braces_is_reported_at_once(tmp_path) -> None:
    """The language server and the command line stopped on it (hours in template_hint)."""
    (tmp_path / "braces.yaml").write_text("kind: Pod\nx: " + "{" * 1_000_000 + "\n")
    started = time.monotonic()
    done = run_cli("--offline", str(tmp_path / "braces.yaml"))
    assert done.returncode == 1, done.stderr
    assert "yaml-syntax" in done.stdout and "nested more than 10,000 levels" in done.stdout
    assert time.monotonic() - started < 60


# --- template_lines: _ACTION_ONLY and _KEY_LINE ------------------------------------------------------
OLD_ACTION_ONLY = re.compile(r"^\s*(?:\{\{.*?\}\}\s*)+$")
OLD_KEY_LINE = re.compile(
    r"""^(?P<indent>[ ]*)(?P<dashes>(?:-[ ]+)*)"""
    r"""(?P<key>"[^"{}]*"|'[^'{}]*'|[^\s#"'{}:\-?][^#{}:]*?|-[^\s#{}:][^#{}:]*?)[ ]*:(?:[ ]|$)"""
)
# template lines: actions, keys, markers, quotes, and whitespace that \s and str.strip() both know
LINE_PIECES = ("{{", "}}", "{", "}", " ", "\t", "\u00a0", "\x1c", "\u2003", ":", "-", "#", "'", '"', "?", "a", "key")


def _key_parts(match: re.Match[str] | None) -> tuple[str, str, str, int] | None:
    """What outline() reads of a _KEY_LINE match: indent, dashes, the key as stripped, the end."""
    if match is None:
        return None
    return match.group("indent"), match.group("dashes"), match.group("key").strip().strip("\"'"), match.end()


def test_an_action_only_line_of_205_characters() -> None:
    line = "{{}}" * 51 + "x"  # the old expression tries every way to cut it into actions
    assert len(line) == 205
    expected = template_lines.outline("kind: Pod\nx\n")
    assert within_limit(lambda: template_lines.outline(f"kind: Pod\n{line}\n") == expected)


def test_a_key_line_with_a_megabyte_of_spaces() -> None:
    for line in ("a" + " " * 1_000_000 + "x", "- " * 300_000 + "a" + " " * 300_000 + "b", "-a" + " " * 1_000_000):
        assert within_limit(_key_parts_of, line) is None
    assert within_limit(_key_parts_of, "a" + " " * 1_000_000 + ": 1") == ("", "", "a", 1_000_003)


def _key_parts_of(line: str) -> tuple[str, str, str, int] | None:
    return _key_parts(template_lines._KEY_LINE.match(line))


@COMPARE
@given(texts(*LINE_PIECES))
def test_action_only_is_the_old_regex(line: str) -> None:
    old = OLD_ACTION_ONLY.match(line) is not None
    assert template_lines._is_action_only(line.strip()) == old
    assert (OLD_ACTION_ONLY.match(line.strip()) is not None) == old  # \s is what str.strip() strips


@COMPARE
@given(texts(*LINE_PIECES))
def test_key_line_is_the_old_regex(line: str) -> None:
    assert _key_parts(template_lines._KEY_LINE.match(line)) == _key_parts(OLD_KEY_LINE.match(line))


@COMPARE
@given(st.lists(texts(*LINE_PIECES, "\r", "---", "{{/*", "*/}}", max_size=12), max_size=8).map("\n".join))
def test_outline_is_what_the_old_regexes_gave(text: str) -> None:
    new = template_lines.outline(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(template_lines, "_KEY_LINE", OLD_KEY_LINE)
        patch.setattr(template_lines, "_is_action_only", lambda stripped: OLD_ACTION_ONLY.match(stripped) is not None)
        old = template_lines.outline(text)
    assert new == old


# --- document boundaries: `%` directive lines --------------------------------------------------------
def test_a_file_of_directive_lines_splits_at_once() -> None:
    directives = "%TAG ! x\n" * 200_000
    assert within_limit(_spans, directives + "kind: Pod\n") == []
    assert within_limit(_spans, directives + "---\nkind: Pod\n") == [(0, len(directives) + 3)]


def _spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in documents._boundaries(text)]


@COMPARE
@given(texts("%", "%YAML 1.2", "---", "...", "\n", "\r", " ", "\t", "#", "a", "- x", max_size=40))
def test_boundaries_are_the_old_finditer(text: str) -> None:
    assert _spans(text) == [match.span() for match in documents._BOUNDARY.finditer(text)]


# --- suppression comments -----------------------------------------------------------------------------
def _old_first_directives(text: str, first_line: int) -> Iterator[tuple[int, str | None]]:
    line, counted_to, last_line = first_line, 0, first_line - 1
    for match in suppress._DIRECTIVE.finditer(text):
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        if line != last_line:
            last_line = line
            yield line, match.group(1)


def _first_directives(text: str) -> list[tuple[int, str | None]]:
    return [(line, match.group(1)) for line, match in suppress._first_directives(text, 1)]


def test_a_line_of_unclosed_ignore_comments() -> None:
    line = "# nodename-lint: ignore[" * 100_000
    assert within_limit(_first_directives, f"{line}\n{line}") == [(1, None), (2, None)]


@COMPARE
@given(texts("#", "# nodename-lint: ignore", "nodename-lint:", "ignore", "[", "]", "a,b", "\n", " ", "\t", "x"))
def test_directives_are_the_old_ones(text: str) -> None:
    assert _first_directives(text) == list(_old_first_directives(text, 1))


# --- the `? key` screen (yamlnodes); tests/test_yaml_screens.py compares it with its specification -
def test_a_line_of_question_marks() -> None:
    assert within_limit(yamlnodes._has_explicit_key, "x" + " ?" * 1_000_000) is False
    assert within_limit(yamlnodes._has_explicit_key, ("x" + " ?" * 100_000 + "\n") * 10 + "? k\n") is True


# --- names_object_keys (a document that does not parse: a manifest or not) ---------------------------
def test_object_keys_on_megabytes_of_api_version_runs() -> None:
    for text in ("apiVersion: " + "a" * 4_000_000, "apiVersion:a.-" * 400_000, "kind" * 1_000_000):
        assert within_limit(documents.names_object_keys, text) is False
    assert within_limit(documents.names_object_keys, '"apiVersion": "' + "x." * 1_000_000 + '/v1"')


# --- json_dump._NEXT_ITEM: where a dump's piece of items may end -----------------------------------
def _item_starts(data: bytes) -> int:
    from nodename_lint.cluster.json_dump import _NEXT_ITEM

    return sum(1 for _ in _NEXT_ITEM.finditer(data))


@pytest.mark.parametrize(
    "data",
    [
        b',{"apiVersion":"' + b"a" * 4_000_000,  # a string left open to the end
        b"," + b" " * 4_000_000 + b"{",
        b',{"apiVersion":"v1",' * 200_000,  # every prefix but the kind
        b',{ "apiVersion" : "' * 200_000,
    ],
    ids=["open string", "blank run", "no kind", "nested prefixes"],
)
def test_the_search_for_a_dumps_next_item_is_linear(data: bytes) -> None:
    assert within_limit(_item_starts, data) == 0
