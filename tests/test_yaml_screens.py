"""The fast text screens of yamlnodes say exactly what their one-regex specification says.

A document whose text passes a screen is never walked node by node, so a screen that misses a
case would let a document kubectl cannot convert through unreported. The specification is the
readable single regular expression; the screens split it into literal-first alternatives for speed.
"""

from __future__ import annotations

import random
import re

from nodename_lint.yamlnodes import _MAY_NOT_BE_JSON, _MAY_NOT_DECODE, _may_hold

SPEC_MAY_NOT_DECODE = re.compile(
    r"\{[ \t]*[\[{]|,[ \t]*[\[{]|[\]}][ \t]*:(?:[ \t\r\n]|$)|^[ \t-]*\?(?:[ \t\r\n]|$)"
    r"|<<|(?:^|[\s\[{,:])\*[^\s,\[\]{}]|!",
    re.M,
)
SPEC_MAY_NOT_BE_JSON = re.compile(
    r"(?:^|[\s{,?-])(?:~|null|Null|NULL)?[ \t]*:(?:[ \t\r\n]|$)|^[ \t-]*\?(?:[ \t\r\n]|$)"
    r"|\.(?:nan|NaN|NAN|inf|Inf|INF)",
    re.M,
)
PIECES = [*"!<*?{}[],:~ \t\n\r-.ab", "null", "Null", "NULL", ".nan", ".Inf", "<<", "\u00a0", "\x85", "key: v\n"]


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
