"""The BitTokens paper's simplest tasks: MinMax, Interval and division answer what they ask, from close numbers.

The checks every task passes (core columns, the number parser, seeds, disjoint splits) are in test_tasks.py.
"""

from __future__ import annotations

import bisect
from decimal import Decimal
from fractions import Fraction

import pytest

from hf_numbers.data import make_task

SIZES = {"train_size": 400, "validation_size": 50, "test_size": 50}


def decimals(literal: str) -> int:
    return len(literal.partition(".")[2])


def test_minmax_answers_the_minimum_or_maximum_of_two_to_five_close_numbers() -> None:
    operations, lengths = set(), set()
    for row in make_task("minmax", **SIZES)["train"]:
        values, literals = row["values"], row["text"][4:].partition(")")[0].split(", ")
        assert row["answer"] == (min(values) if row["operation"] == "min" else max(values))
        assert row["text"].startswith(f"{row['operation']}(") and len(set(values)) == len(values)
        assert len({decimals(literal) for literal in literals}) == 1  # one last place for the whole list
        operations.add(row["operation"])
        lengths.add(len(values))
    assert operations == {"min", "max"} and lengths == {2, 3, 4, 5}


def test_interval_answers_the_index_of_the_interval_that_holds_x() -> None:
    """Index 0: x < b1; k: bk <= x < bk+1; n: bn <= x (the paper's letters A, B, ... as numbers)."""
    positions, on_a_bound = set(), 0
    for row in make_task("interval", **SIZES)["train"]:
        bounds, x = row["bounds"], row["query"]
        assert bounds == sorted(set(bounds)) and 2 <= len(bounds) <= 5
        assert row["answer"] == bisect.bisect_right(bounds, x) == int(row["answer_text"])
        positions.add(int(row["answer"]))
        on_a_bound += x in bounds
    assert positions == set(range(6)) and on_a_bound > 0  # every interval, and x on a bound counts as above it


def test_division_answers_the_exact_quotient_rounded_to_six_significant_digits() -> None:
    signs = set()
    for row in make_task("division", **SIZES)["train"]:
        a, _, rest = row["text"].partition(" / ")
        b, _, answer = rest.partition(" = ")
        exact = Fraction(Decimal(a)) / Fraction(Decimal(b))
        unit = Fraction(10) ** (Decimal(answer).adjusted() - 5)  # one unit in the 6th significant digit
        assert abs(Fraction(Decimal(answer)) - exact) <= unit / 2
        assert len(Decimal(answer).normalize().as_tuple().digits) <= 6 and not answer.endswith(".0")
        assert len(Decimal(a).as_tuple().digits) == len(Decimal(b).as_tuple().digits) == 3
        signs.add((float(a) < 0, float(b) < 0))
    assert len(signs) == 4
    for row in make_task("division", answer_digits=2, **SIZES)["test"]:
        assert len(Decimal(row["answer_text"]).normalize().as_tuple().digits) <= 2  # 280: 2 digits, then places


def test_the_test_split_does_not_depend_on_the_training_size() -> None:
    for name in ("minmax", "interval", "division"):
        small, large = (make_task(name, train_size=n, validation_size=20, test_size=20) for n in (10, 200))
        for split in ("validation", "test"):
            assert small[split]["text"] == large[split]["text"]


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [("minmax", {"list_length": (1, 5)}, r"list_length\[0\] must be >= 2"),
     ("interval", {"digits": 1}, r"digits must be >= 2 and <= 12, got 1"),
     ("interval", {"exponents": (-9, 0)}, r"exponents\[0\] must be >= -8"),
     ("division", {"answer_digits": 16}, r"answer_digits must be >= 1 and <= 15, got 16"),
     ("division", {"digits": 1, "exponents": (0, 0), "train_size": 200}, r"has 324 distinct problems")],
)  # fmt: skip
def test_bad_options_raise_clear_errors(name: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_task(name, **options)
