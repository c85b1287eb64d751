"""Number parsing rules (find_numbers / format_number), each rule tested, plus properties."""

from __future__ import annotations

import math

import pytest
import reference_numbers
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_numbers import find_numbers, format_number
from hf_numbers.modeling.parsing import replace_numbers, split_numbers


def found(text: str) -> list[tuple[str, float]]:
    return [(text[start:end], value) for start, end, value in find_numbers(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # rule 1: syntax
        ("42", [("42", 42.0)]),
        ("pi is 3.14", [("3.14", 3.14)]),
        (".25", [(".25", 0.25)]),
        ("-.032", [("-.032", -0.032)]),
        ("1.5e-3", [("1.5e-3", 0.0015)]),
        ("2E+10", [("2E+10", 2e10)]),
        ("7e2", [("7e2", 700.0)]),
        ("costs 3.", [("3", 3.0)]),  # trailing dot is punctuation
        ("\u0663\u0664 and \uff15", []),  # non-ASCII digits are not numbers
        # rule 2: glued to a word on the left
        ("planet0 x2 mp3 B12 a_1", []),
        # rule 3: versions / addresses; units after a number
        ("1.2.3 and 192.168.0.1", []),
        ("5kg", [("5", 5.0)]),
        ("12.5%", [("12.5", 12.5)]),
        # rule 4: signs vs operators
        ("[-2.6,-2.6]", [("-2.6", -2.6), ("-2.6", -2.6)]),
        ("x = -3", [("-3", -3.0)]),
        ("x=+4", [("+4", 4.0)]),
        ("of -3 degrees", [("-3", -3.0)]),
        ("5-3", [("5", 5.0), ("3", 3.0)]),
        ("5 - 3", [("5", 5.0), ("3", 3.0)]),
        ("5 -3", [("5", 5.0), ("3", 3.0)]),
        ("(1.42-8.20)", [("1.42", 1.42), ("8.20", 8.2)]),
        ("(2) -1", [("2", 2.0), ("1", 1.0)]),
        ("COVID-19", [("19", 19.0)]),
        ("x=--3", [("3", 3.0)]),  # a sign right after another sign is text
        ("-+0.0", [("0.0", 0.0)]),
        ("2024-01-05", [("2024", 2024.0), ("01", 1.0), ("05", 5.0)]),
        # rules 5 and 6: values
        ("12345678901234567890", [("12345678901234567890", 12345678901234567890.0)]),
        ("1e-400", [("1e-400", 0.0)]),
        ("nan inf Infinity NaN", []),
        ("1e400 but 2", [("2", 2.0)]),
    ],
)
def test_rules(text: str, expected: list[tuple[str, float]]) -> None:
    assert found(text) == expected


def test_overflow_stays_text_and_values_are_finite() -> None:
    text = "big 1e400, -1e999 and 3"
    assert [v for _, _, v in find_numbers(text)] == [3.0]
    new_text, _, _ = replace_numbers(text, "[NUM]")
    assert new_text == "big 1e400, -1e999 and [NUM]"


def test_find_numbers_rejects_non_text() -> None:
    with pytest.raises(ValueError, match="expects a str"):
        find_numbers(b"12")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_format_number_rejects_non_finite(value: float) -> None:
    with pytest.raises(ValueError, match="non-finite"):
        format_number(value)


@pytest.mark.parametrize(
    ("value", "text"), [(5.0, "5"), (-2.6, "-2.6"), (0.0015, "0.0015"), (1e20, "1e+20"), (-0.0, "-0"), (1e-7, "1e-07")]
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_number_round_trips_exactly(value: float) -> None:
    text = format_number(value)
    assert find_numbers(text) == [(0, len(text), value)]
    assert math.copysign(1.0, find_numbers(text)[0].value) == math.copysign(1.0, value)


def rebuild(text: str) -> tuple[str, list[str], list[float]]:
    """The text with every number rewritten by format_number, its pieces between numbers, values."""
    numbers = find_numbers(text)
    pieces, cursor, out = [], 0, []
    for start, end, value in numbers:
        pieces.append(text[cursor:start])
        out += [text[cursor:start], format_number(value)]
        cursor = end
    pieces.append(text[cursor:])
    out.append(text[cursor:])
    return "".join(out), pieces, [n.value for n in numbers]


NUMBERISH = st.sampled_from(list("0123456789.-+eE ,[]()=%_xa\n")) | st.characters()
TEXTS = st.text(NUMBERISH, max_size=60) | st.lists(
    st.one_of(st.floats(allow_nan=False, allow_infinity=False).map(repr), st.text(NUMBERISH, max_size=4)), max_size=10
).map("".join)


@settings(max_examples=1000, deadline=None)
@given(TEXTS)
def test_rewritten_text_reparses_to_same_values_and_pieces(text: str) -> None:
    rebuilt, pieces, values = rebuild(text)
    rebuilt_again, pieces_again, values_again = rebuild(rebuilt)
    assert values_again == values
    assert pieces_again == pieces
    assert rebuilt_again == rebuilt


@settings(max_examples=500, deadline=None)
@given(reference_numbers.MIXED_TEXTS)
def test_one_pass_split_finds_what_the_reference_scan_finds(text: str) -> None:
    """split_numbers (one regex pass that also decides most signs) equals the scan that checks each sign alone."""
    expected = [(start, end, value.hex()) for start, end, value in reference_numbers.find_numbers(text)]
    assert [(start, end, value.hex()) for start, end, value in find_numbers(text)] == expected
    pieces = split_numbers(text)
    assert "".join(t + n for t, n in zip(pieces.texts, [*pieces.literals, ""])) == text
    assert [text[start:end] for start, end, _ in expected] == pieces.literals
    new_text, ends, numbers = replace_numbers(text, lambda value: f"<{value}>")
    reference_text, spans = reference_numbers.replace(text, lambda value: f"<{value}>")
    assert (new_text, ends) == (reference_text, [span[1] for span in spans])
    assert numbers == find_numbers(text)
