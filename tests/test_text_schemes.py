"""The text schemes (P10, P1000, B1999, FP15): value -> tokens -> value, vocabulary, bad input."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_numbers import find_numbers, format_number
from hf_numbers.modeling.text_schemes import (
    MAX_SCHEME_VOCABULARY,
    NUMBER_SCHEMES,
    SCHEME_TOKEN_RE,
    NumberScheme,
    fit_exponent_range,
    make_scheme,
)

DIGITS = {"p10": (1, 3, 7), "p1000": (3, 6), "b1999": (3, 6), "fp15": (1, 3)}
CASES = [(name, digits) for name, options in DIGITS.items() for digits in options]


def scheme(name: str, digits: int = 3) -> NumberScheme:
    """A scheme whose range holds every test value (FP15's narrower, to bound its vocabulary)."""
    low = -12 if name == "fp15" else -20
    return make_scheme(name, digits=digits, min_exponent=low, max_exponent=12)


def test_xval_table_1_example_and_sizes() -> None:
    """-60.2 as in xVal's Table 1; default vocabularies are the table's plus one token for zero."""
    expected = {
        "p10": (["<|-|>", "<|d6|>", "<|d0|>", "<|d2|>", "<|-E1|>"], 28),
        "p1000": (["<|-|>", "<|d602|>", "<|-E1|>"], 918 + 1),
        "b1999": (["<|-d602|>", "<|-E1|>"], 1816 + 1),
        "fp15": (["<|-d602-E1|>"], 28800 + 1),
    }
    for name, (tokens, size) in expected.items():
        default = make_scheme(name)
        assert default.encode(-60.2) == tokens
        assert default.tokens_per_number == len(tokens)
        assert default.vocabulary_size == size
    assert len(make_scheme("fp15").vocabulary()) == 28801


@pytest.mark.parametrize(("name", "digits"), CASES)
def test_vocabulary_is_complete_and_bounded(name: str, digits: int) -> None:
    s = scheme(name, digits)
    vocab = s.vocabulary()
    assert len(vocab) == len(set(vocab)) == s.vocabulary_size <= MAX_SCHEME_VOCABULARY
    assert all(SCHEME_TOKEN_RE.fullmatch(token) for token in vocab)
    assert set(s.start_tokens()) <= set(vocab)
    for value in (0.0, -1.0, 7.25, 12345.0, -0.000314):
        tokens = s.encode(value)
        assert len(tokens) == s.tokens_per_number
        assert set(tokens) <= set(vocab)
        assert tokens[0] in s.start_tokens()


@pytest.mark.parametrize(("name", "digits"), CASES)
@pytest.mark.parametrize("value", [0.0, -0.0, 1.0, -1.0, 60.2, -60.2, 0.001, 5e-9, 1.53, 999.0, -1e10, 21.5])
def test_round_trip_is_the_value_rounded(name: str, digits: int, value: float) -> None:
    s = scheme(name, digits)
    back = s.decode(s.encode(value))
    assert back == s.round(value)
    expected = float(f"{value:.{digits - 1}e}") if value else 0.0  # to `digits` significant digits
    assert back == pytest.approx(expected, rel=1e-15, abs=0)
    significant = len(format_number(abs(value)).replace(".", "").lstrip("0").split("e")[0].rstrip("0") or "0")
    if significant <= digits:
        assert back == value  # exact where the digits suffice


def test_rounding_details() -> None:
    p10 = scheme("p10")
    assert p10.encode(999.6) == p10.encode(1000.0) == ["<|+|>", "<|d1|>", "<|d0|>", "<|d0|>", "<|+E1|>"]  # carry
    assert p10.round(0.1 + 0.2) == 0.3  # the shortest decimal, not the binary expansion
    assert p10.round(1.225) == 1.22 and p10.round(1.235) == 1.24  # half to even on the decimal
    assert p10.round(-0.0) == 0.0 and p10.encode(-0.0) == p10.encode(0.0)  # -0 is written as 0
    seven = scheme("p10", 7)
    assert seven.decode(seven.encode(9999999.0)) == 9999999.0 and seven.round(12345678.0) == 12345680.0
    assert scheme("p1000", 6).encode(1234567.0) == ["<|+|>", "<|d123|>", "<|d457|>", "<|+E1|>"]
    assert scheme("b1999", 6).encode(-0.5) == ["<|-d500|>", "<|d000|>", "<|-E6|>"]


def test_zero_uses_the_exponent_nearest_to_zero() -> None:
    assert make_scheme("fp15", min_exponent=-3, max_exponent=-1).encode(0.0) == ["<|+d000-E1|>"]
    assert make_scheme("p1000", min_exponent=2, max_exponent=4).encode(0.0) == ["<|+|>", "<|d000|>", "<|+E2|>"]
    assert make_scheme("b1999", min_exponent=-2, max_exponent=2).encode(0.0) == ["<|+d000|>", "<|+E0|>"]


@pytest.mark.parametrize("name", NUMBER_SCHEMES)
def test_bad_values_are_clear_errors(name: str) -> None:
    s = make_scheme(name, min_exponent=-2, max_exponent=1)
    for value in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="non-finite"):
            s.encode(value)
    with pytest.raises(ValueError, match=r"12345.0 is written as 123E2 .* outside .* range \[-2, 1\]"):
        s.encode(12345.0)
    with pytest.raises(ValueError, match=r"0.0001 is written as 100E-6 .*exponent -6 is outside"):
        s.encode(0.0001)
    with pytest.raises(ValueError, match="overflows"):
        make_scheme(name, min_exponent=300, max_exponent=310).encode(1.7976931348623157e308)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "p100"}, re.escape(f"unknown; allowed: {', '.join(NUMBER_SCHEMES)}")),
        ({"name": "p10", "digits": 0}, r"scheme_digits must be in \[1, 17\]"),
        ({"name": "p10", "digits": 18}, r"scheme_digits must be in \[1, 17\]"),
        ({"name": "p10", "digits": 3.0}, "scheme_digits must be an int"),
        ({"name": "p10", "min_exponent": True}, "scheme_min_exponent must be an int"),
        ({"name": "p1000", "digits": 7}, "multiple of 3"),
        ({"name": "b1999", "digits": 4}, "multiple of 3"),
        (
            {"name": "p10", "min_exponent": 3, "max_exponent": 2},
            r"scheme_min_exponent must be <= scheme_max_exponent, got \[3, 2\]",
        ),
        ({"name": "fp15", "digits": 7}, "needs 288000001 tokens; at most 50000"),
        ({"name": "fp15", "min_exponent": -20, "max_exponent": 20}, "narrower exponent range"),
    ],
)
def test_bad_options_are_clear_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_scheme(**kwargs)


@pytest.mark.parametrize(
    ("name", "tokens"),
    [
        ("p10", ["<|-|>", "<|d6|>", "<|d0|>", "<|-E1|>"]),  # a digit missing
        ("p10", ["<|-|>", "<|d6|>", "<|d0|>", "<|d2|>", "<|d2|>"]),  # no exponent
        ("p10", ["<|d6|>", "<|-|>", "<|d0|>", "<|d2|>", "<|-E1|>"]),  # order
        ("p10", ["<|+|>", "<|d0|>", "<|d5|>", "<|d3|>", "<|-E1|>"]),  # mantissa not normalised
        ("p10", ["<|-|>", "<|d0|>", "<|d0|>", "<|d0|>", "<|+E0|>"]),  # negative zero
        ("p10", ["<|-|>", "<|d6|>", "<|d0|>", "<|d2|>", "<|-E30|>"]),  # exponent outside the range
        ("p10", ["<|-|>", "<|d6|>", "<|d0|>", "<|d2|>", "[NUM]"]),  # not a scheme token
        ("p1000", ["<|-|>", "<|d6|>", "<|-E1|>"]),  # a P10 digit in P1000
        ("p1000", ["<|-|>", "<|d602|>", "<|d602|>"]),
        ("b1999", ["<|-|>", "<|d602|>"]),
        ("b1999", ["<|d602|>", "<|-E1|>"]),  # unsigned first group
        ("fp15", ["<|-d602|>"]),
        ("fp15", ["<|-d602-E1|>", "<|-E1|>"]),  # one token too many
        ("fp15", []),
    ],
)
def test_malformed_runs_are_invalid(name: str, tokens: list[str]) -> None:
    s = scheme(name)
    assert s.decode(tokens) is None
    assert s.parse(tokens) == [] or name == "fp15"  # an FP15 token alone is always a number
    # decoded as text, a malformed run never parses as a number (digits follow a letter)
    assert find_numbers("".join(tokens)) == [] or "[NUM]" in tokens


def test_parse_finds_numbers_between_malformed_tokens() -> None:
    s = scheme("p1000")
    run = ["<|+E2|>", *s.encode(-60.2), "<|+|>", "<|d100|>", *s.encode(7.0), "<|d100|>"]
    assert s.parse(run) == [(1, -60.2), (6, 7.0)]


def test_no_token_text_parses_as_a_number() -> None:
    for name, digits in CASES:
        vocab = scheme(name, digits).vocabulary()
        assert find_numbers(" ".join(vocab[:3000] + vocab[-100:])) == []


def test_fit_exponent_range() -> None:
    assert fit_exponent_range([21.5, -3.0, 0.0, 1500.0], digits=3) == (-2, 1)
    assert fit_exponent_range([999.6], digits=3) == (1, 1)  # after rounding: 100E1
    assert fit_exponent_range([1234567.0, 7.0], digits=7) == (-6, 0)
    assert fit_exponent_range([0.0], digits=3) == (0, 0)
    assert fit_exponent_range([], digits=3) == (0, 0)
    with pytest.raises(ValueError, match="non-finite"):
        fit_exponent_range([1.0, float("nan")], digits=3)
    values = [0.004, 12.5, -7e6]
    low, high = fit_exponent_range(values, digits=3)
    for value in values:
        make_scheme("p10", min_exponent=low, max_exponent=high).encode(value)  # no error


FINITE = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@settings(max_examples=200, deadline=None)
@given(value=FINITE, case=st.sampled_from(CASES))
def test_round_trip_property(value: float, case: tuple[str, int]) -> None:
    """Any value in range: decode(encode(x)) is x rounded, and re-encoding it gives the same tokens."""
    name, digits = case
    s = make_scheme(name, digits=digits, min_exponent=-340, max_exponent=12) if name != "fp15" else None
    if s is None:  # FP15: a range that fits the vocabulary bound, around the value's exponent
        exponent = fit_exponent_range([value], digits)[0]
        s = make_scheme(name, digits=digits, min_exponent=exponent - 1, max_exponent=exponent + 1)
    tokens = s.encode(value)
    back = s.decode(tokens)
    assert back == s.round(value) and math.isfinite(back)
    assert s.encode(back) == tokens
    assert back == 0 or math.isclose(back, value, rel_tol=10 ** (1 - digits))
    assert s.parse(["<|+|>", *tokens, "<|+|>"]) == [(1, back)]


@settings(max_examples=100, deadline=None)
@given(tokens=st.lists(st.sampled_from(scheme("p10").vocabulary()), max_size=12))
def test_any_token_run_decodes_to_canonical_numbers_only(tokens: list[str]) -> None:
    s = scheme("p10")
    for start, value in s.parse(tokens):
        assert tokens[start : start + s.tokens_per_number] == s.encode(value)
