"""The fast text screens of yamlnodes say exactly what their one-regex specification says.

A document whose text passes a screen is never walked node by node, so a screen that misses a
case would let a document kubectl cannot convert through unreported. The specification is the
readable single regular expression; the screens split it into literal-first alternatives for speed.
"""

from __future__ import annotations

import random
import re

from nodename_lint.yamlnodes import _MAY_NOT_BE_JSON, _MAY_NOT_DECODE, _may_hold

# A tag, an anchor (of libyaml's letters) or a flow mapping only where a node can start: after
# blanks that follow the start, other whitespace, an indicator or a byte-order mark; aliases through
# their anchors, which a document that composes has.
SPEC_MAY_NOT_DECODE = re.compile(
    r"(?:^|[^\S \t]|[\[{,:?\ufeff-])[ \t]*(?:!|&[0-9A-Za-z_-]|\{[ \t]*[\[{])"
    r"|,[ \t]*[\[{]|[\]}][ \t]*:(?:[ \t\r\n]|$)|^[ \t-]*\?(?:[ \t\r\n]|$)|<<",
    re.M,
)
SPEC_MAY_NOT_BE_JSON = re.compile(
    r"(?:^|[\s{,?-])(?:~|null|Null|NULL)?[ \t]*:(?:[ \t\r\n]|$)|^[ \t-]*\?(?:[ \t\r\n]|$)"
    r"|\.(?:nan|NaN|NAN|inf|Inf|INF)",
    re.M,
)
PIECES = [*"!<*&?{}[],:~ \t\n\r-.ab\ufeff", "null", "Null", "NULL", ".nan", ".Inf", "<<", "\u00a0", "\x85", "key: v\n"]


def assert_same(text: str) -> None:
    assert _may_hold(_MAY_NOT_DECODE, text) == (SPEC_MAY_NOT_DECODE.search(text) is not None), repr(text)
    assert _may_hold(_MAY_NOT_BE_JSON, text) == (SPEC_MAY_NOT_BE_JSON.search(text) is not None), repr(text)


def test_screens_match_their_specification_on_random_texts() -> None:
    rng = random.Random(7)
    for _ in range(30_000):
        assert_same("".join(rng.choice(PIECES) for _ in range(rng.randint(0, 10))))


def test_screens_on_known_cases() -> None:
    for text in (
        "a: !!int 3\n",
        "? [a]\n: b\n",
        "- ? x\n",
        "{[a]: b}\n",
        "a: *ref\n",
        "*ref: 1\n",
        "a: b*c\n",
        "~: x\n",
        "x: {null: 1}\n",
        "a :\n",
        ": b\n",
        "v: .NaN\n",
        "v: 1.nan\n",
        "plain: text\n",
        "",
        "what? no\n",
        "a:b\n",
        "x: [a]:\n",
    ):
        assert_same(text)


def test_screens_on_real_manifests(shared_dir) -> None:
    for path in sorted((shared_dir / "corpus").rglob("*.y*ml"))[:150]:
        assert_same(path.read_text(encoding="utf-8", errors="replace"))


FRAGMENTS = [
    "a: !!int 3",
    "a: !!int x",
    "b: &x [1, 2]",
    "c: *x",
    "- !foo bar",
    "- {[a]: b}",
    "k: v!w",
    'k: a != "b"',
    'k: "{{x}}"',
    "k: {{ x }}",
    "? [a]\n: b",
    "<<: *x",
    "<<: 1",
    "<<: [*x, {m: 1}]",
    "d: |\n  !x *y &z {{a}}",
    "e: &y\n  f: *y",
    "f: [!!str 1, &y z, *y]",
    "g: {&q h: 1, i: *q}",
    "- &r [*r]",
    "h: ~",
    "~: h",
    "i: .nan",
    "j:\n  *x",
    "k: [a, [b]: c]",
    "\ufeff!!binary aGk=",
    "l: !!timestamp nope",
    "m: *Warning this",
    "m: a && b",
    "m: self.a != b",
    "m:\n  ! x",
    "- \t!t x",
    "o: [a,!t b]",
    "p: {? !t x: y}",
    "n: 1\n  !t",
]


def test_screened_walks_find_what_the_whole_walks_find() -> None:
    """The screens only spare walks that would find nothing: on random documents of tags, anchors,
    aliases, merge keys and flow collections, inside scalars and at node positions, find_unconvertible
    answers as the two walks run on every document."""
    from yaml import YAMLError

    from nodename_lint.documents import _Loader
    from nodename_lint.yamlnodes import MAX_EXPANDED_NODES, _first_not_json, _first_undecodable, find_unconvertible

    rng = random.Random(26)
    composed = 0
    for _ in range(6_000):
        text = "\n".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 4))) + "\n"
        try:
            root = _Loader(text).get_single_node()
        except YAMLError:
            continue
        composed += 1
        whole = _first_undecodable(root, MAX_EXPANDED_NODES) or _first_not_json(root)
        assert find_unconvertible(text, root) == whole, repr(text)
    assert composed > 1_000
