"""resource.Quantity as apimachinery parses it (`pkg/api/resource/quantity.go`, `suffix.go`).

The kubelet and the scheduler compare integers: cpu in millicores (`MilliValue()`, ceil(q*1000))
and everything else in units (`Value()`, ceil(q)). A Quantity keeps its exact value down to nano
units, rounding a finer non-zero value away from zero, and silently caps a binary-suffixed value at
2^63-1. Python integers and Fractions reproduce this exactly; nothing goes through a float.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

# `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`: the form quantity.go's error messages quote.
QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
INT64_MAX = 2**63 - 1
_NANO = Fraction(1, 10**9)
# A value of 10**40 or more can never be a usable int64: no need to build 10**exponent, which for
# `1e2000000000` would never finish.
_EXPONENT_LIMIT = 40


class QuantityError(ValueError):
    """A value the API server would refuse as a resource.Quantity (or as a request)."""

    def __init__(self, value: Any, reason: str) -> None:
        super().__init__(f"{value!r} is not a valid quantity: {reason}")
        self.value = value
        self.reason = reason


def _split(text: str) -> tuple[bool, str, str, str]:
    """parseQuantityString: (positive, numerator digits, denominator digits, suffix)."""
    positive, pos, end = True, 0, len(text)
    if end and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(text, f"quantities must match the regular expression '{QUANTITY_PATTERN}'")
    return positive, num, denom, text[suffix_start:]


def _interpret(text: str, suffix: str) -> tuple[int, int, bool]:
    """suffixHandler.interpret: (base, exponent, is binary)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], False
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and body.isdigit() and body.isascii():
            exponent = int(digits)
            if -(2**63) <= exponent < 2**63:  # strconv.ParseInt(_, 10, 64), then int32(...)
                exponent = (exponent + 2**31) % 2**32 - 2**31
                return 10, exponent, False
    raise QuantityError(text, "unable to parse quantity's suffix")


def parse_quantity(value: Any) -> Fraction:
    """The exact value of a quantity as written in a manifest (string, or a JSON/YAML number).

    Raises QuantityError for anything the API server would not decode as a Quantity.
    """
    if isinstance(value, bool) or value is None:
        raise QuantityError(value, 'expected a string such as "500m" or "1Gi", or a number')
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(value, "not a finite number")
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()  # UnmarshalJSON trims surrounding whitespace
    else:
        raise QuantityError(value, 'expected a string such as "500m" or "1Gi", or a number')
    if not text:
        raise QuantityError(value, f"quantities must match the regular expression '{QUANTITY_PATTERN}'")
    if text == "0":
        return Fraction(0)
    positive, num, denom, suffix = _split(text)
    base, exponent, binary = _interpret(text, suffix)
    amount = Fraction(int(num + denom), 10 ** len(denom))
    if base == 2:
        amount *= 2**exponent
    elif amount and exponent - len(denom) > _EXPONENT_LIMIT:  # at least 10**40
        raise QuantityError(value, "too large: the kubelet's 64-bit arithmetic would overflow")
    elif exponent + len(num) < -12:  # below 10**-12: a non-zero value rounds up to 1n
        amount = _NANO if amount else Fraction(0)
    else:
        amount *= Fraction(10) ** exponent
    if amount.denominator != 1 and (amount / _NANO).denominator != 1:
        amount = Fraction(math.ceil(amount / _NANO), 10**9)  # inf.RoundUp at nano: away from zero
    if binary and amount > INT64_MAX:
        amount = Fraction(INT64_MAX)
    return amount if positive else -amount


def milli_value(amount: Fraction) -> int:
    """Quantity.MilliValue(): ceil(q*1000), how cpu is counted."""
    return math.ceil(amount * 1000)


def value(amount: Fraction) -> int:
    """Quantity.Value(): q rounded up to an integer, how memory, storage and counts are counted."""
    return math.ceil(amount)


_REQUEST_CACHE: dict[tuple[str, Any], int | Fraction] = {}
_REQUEST_CACHE_LIMIT = 100_000  # distinct (resource, quantity) pairs; a cluster repeats a few hundred


def request_value(resource: str, raw: Any) -> int:
    """A request as the kubelet counts it alone: millicores for cpu, units for everything else,
    rounded up. Raises QuantityError as request_units does."""
    return math.ceil(request_units(resource, raw))


def request_units(resource: str, raw: Any) -> int | Fraction:
    """A request as the API stores it, in the units the kubelet counts (millicores for cpu, units
    for the rest): an int when it is whole, else a Fraction.

    The API server's defaulting rounds every quantity of a Pod's resources, overhead and pod-level
    resources up to a thousandth of its unit (`SetDefaults_ResourceList`: `RoundUp(-3)`), so a cpu
    request is whole millicores. Quantities then add up exactly (`Quantity.Add`) and a Pod's sum is
    rounded up once when it is counted (`MilliValue()`, `Value()`): two requests of `1.1` bytes make
    3, not 4; two of `0.1m` cpu make 2m.

    Raises QuantityError for unparsable, negative or int64-overflowing values (the API server
    rejects negative requests; values beyond int64 are undefined in Kubernetes). Memoized: the
    Pods of a big cluster repeat the same few quantities.
    """
    if raw.__class__ is str:  # the common case first: a cluster's Pods sum hundreds of thousands of these
        key: tuple[str, Any] = (resource, raw)
    elif isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return _request_units(resource, raw)
    else:
        key = (resource, raw if not isinstance(raw, float) else repr(raw))
    cached = _REQUEST_CACHE.get(key)
    if cached is None:
        cached = _request_units(resource, raw)
        if len(_REQUEST_CACHE) < _REQUEST_CACHE_LIMIT:
            _REQUEST_CACHE[key] = cached
    return cached


def _request_units(resource: str, raw: Any) -> int | Fraction:
    return stored_units(resource, written_units(resource, raw))


def written_units(resource: str, raw: Any) -> int | Fraction:
    """A request as written, exactly, in the units the kubelet counts (see request_units)."""
    amount = parse_quantity(raw)
    if amount < 0:
        raise QuantityError(raw, "must be greater than or equal to 0")
    units = amount * 1000 if resource == "cpu" else amount
    if math.ceil(units) > INT64_MAX:
        raise QuantityError(raw, "too large: the kubelet's 64-bit arithmetic would overflow")
    return units.numerator if units.denominator == 1 else units


def stored_units(resource: str, units: int | Fraction) -> int | Fraction:
    """`units` (see request_units) rounded up to a thousandth of the resource's unit, as
    SetDefaults_ResourceList stores a quantity: whole millicores of cpu."""
    if resource == "cpu":
        return math.ceil(units)
    thousandths = math.ceil(units * 1000)
    return thousandths // 1000 if thousandths % 1000 == 0 else Fraction(thousandths, 1000)


_BINARY_UNITS = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


def describe(resource: str, amount: int) -> str:
    """A request or capacity as a person writes it: `100 cpu`, `3050m cpu`, `64Gi`, `7.6Gi`, `110 pods`.

    Fractions of a binary unit are rounded down to one decimal, so that "at most 7.6Gi" stays true.
    """
    if resource == "cpu":
        return f"{amount // 1000} cpu" if amount % 1000 == 0 else f"{amount}m cpu"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for unit, shift in _BINARY_UNITS:
            size = 1 << shift
            if amount >= size:
                whole, rest = divmod(amount, size)
                if rest == 0:
                    return f"{whole}{unit}"
                tenths = amount * 10 // size  # rounded down: an "at most" stays true
                return f"{tenths // 10}.{tenths % 10}{unit}"
        return f"{amount} bytes"
    if resource == "pods":
        return f"{amount} pod{'s' if amount != 1 else ''}"
    return f"{amount} {resource}"
