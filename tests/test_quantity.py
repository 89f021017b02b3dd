"""resource.Quantity parsing against apimachinery's rules (quantity.go, suffix.go)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from nodename_lint.quantity import QuantityError, describe, milli_value, parse_quantity, request_value, value


@pytest.mark.parametrize(
    "text, exact",
    [
        ("100", Fraction(100)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("1.", Fraction(1)),
        ("+5", Fraction(5)),
        ("-1", Fraction(-1)),
        ("0", Fraction(0)),
        ("000", Fraction(0)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(10**6)),
        ("1E", Fraction(10**18)),
        ("1m", Fraction(1, 1000)),
        ("1u", Fraction(1, 10**6)),
        ("1n", Fraction(1, 10**9)),
        ("1Ki", Fraction(1024)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("1e3", Fraction(1000)),
        ("1E-3", Fraction(1, 1000)),
        ("12e+2", Fraction(1200)),
        ("0.9n", Fraction(1, 10**9)),
        ("1e-30", Fraction(1, 10**9)),
        ("8Ei", Fraction(2**63 - 1)),
        ("9Ei", Fraction(2**63 - 1)),  # binary values are capped at 2^63-1
        (" 2Gi ", Fraction(2 * 2**30)),  # UnmarshalJSON trims spaces
        (4, Fraction(4)),
        (0.5, Fraction(1, 2)),
        (1e21, Fraction(10**21)),  # JSON/YAML numbers
    ],
)
def test_parses_as_apimachinery(text, exact):
    assert parse_quantity(text) == exact


@pytest.mark.parametrize(
    "text, reason",
    [
        ("1.5.3", "regular expression"),
        ("10 Gi", "regular expression"),
        ("1K", "suffix"),
        ("K", "suffix"),
        ("1Gb", "regular expression"),
        ("", "regular expression"),
        ("1e", "suffix"),
        ("1e+", "suffix"),
        ("abc", "regular expression"),
        ("1e400", "too large"),
        (True, "expected a string"),
        (float("nan"), "finite"),
        ([1], "expected a string"),
    ],
)
def test_rejects_what_the_api_server_rejects(text, reason):
    with pytest.raises(QuantityError, match=reason):
        parse_quantity(text)


def test_rounding_up_to_milli_for_cpu_and_units_for_the_rest():
    assert milli_value(parse_quantity("0.1m")) == 1  # MilliValue is ceil(q*1000)
    assert milli_value(parse_quantity("100")) == 100_000
    assert request_value("cpu", "250m") == 250
    assert request_value("memory", "1.5") == 2  # Value() rounds up to a whole byte
    assert value(parse_quantity("1Mi")) == 2**20
    assert request_value("memory", "64Gi") == 64 * 2**30


def test_negative_and_overflowing_requests_are_errors():
    with pytest.raises(QuantityError, match="greater than or equal to 0"):
        request_value("cpu", "-1")
    with pytest.raises(QuantityError, match="too large"):
        request_value("cpu", "9Ei")  # 2^63-1 cores is beyond int64 millicores


def test_huge_exponents_finish_at_once():
    with pytest.raises(QuantityError):
        parse_quantity("1e2000000000")
    assert parse_quantity("1e-2000000000") == Fraction(1, 10**9)


def test_describe_for_messages():
    assert describe("cpu", 100_000) == "100 cpu"
    assert describe("cpu", 3050) == "3050m cpu"
    assert describe("memory", 8232001536) == "7.6Gi"  # rounded down: "at most" stays true
    assert describe("memory", 64 * 2**30) == "64Gi"
    assert describe("pods", 110) == "110 pods"
