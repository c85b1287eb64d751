"""The BitTokens paper's comparison tasks (Kreitner, Hager et al., arXiv 2510.06824): MinMax and Interval.

``"max(412.7, -3.071, 408.9) = 412.7"`` and ``"interval(5.25; 1.5, 3.75, 8.0) = 2"`` (the interval's
index, where the paper answers a letter). One example's numbers are close, so comparing them takes
more than their first digits; how they are drawn: docs/training.md, "Tasks".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .formatting import format_decimal
from .splits import draw_unique, make_dataset_dict, split_rngs
from .text_builder import TextBuilder
from .validation import check_int, check_int_range, check_seed, check_sizes

if TYPE_CHECKING:
    from datasets import DatasetDict

MINMAX_OPERATIONS = ("min", "max")
MAX_EXPONENT = 8
"""Largest ``|e|`` of ``exponents``: numbers stay short plain decimals (no exponent notation)."""


def _check_common(list_length: Any, digits: Any, exponents: Any, seed: Any) -> tuple[int, int, int, int, int, int]:
    low, high = check_int_range("list_length", list_length, 2, 10)
    digits = check_int("digits", digits, 2, 12)
    lowest, highest = check_int_range("exponents", exponents, -MAX_EXPONENT, MAX_EXPONENT)
    return low, high, digits, lowest, highest, check_seed(seed)


def _close_mantissas(rng: np.random.Generator, count: int, digits: int) -> list[int]:
    """``count`` distinct integers (in random order) within ``10^s`` of a random centre of ``digits`` digits."""
    limit = 10**digits - 1
    centre = int(rng.integers(10 ** (digits - 1), limit + 1)) * (1 if rng.random() < 0.5 else -1)
    spread = 10 ** int(rng.integers(1, digits + 1))
    low, high = max(centre - spread, -limit), min(centre + spread, limit)
    chosen: set[int] = set()
    while len(chosen) < count:  # the window holds >= 11 integers
        chosen.add(int(rng.integers(low, high + 1)))
    return [int(m) for m in rng.permutation(sorted(chosen))]


def minmax(
    list_length: tuple[int, int] = (2, 5),
    digits: int = 4,
    exponents: tuple[int, int] = (-2, 3),
    train_size: int = 10_000,
    validation_size: int = 1_000,
    test_size: int = 1_000,
    seed: int = 0,
) -> DatasetDict:
    """The paper's MinMax: the minimum or the maximum (uniformly) of a list of close numbers.

    ``list_length`` is the inclusive range of the list's length (2 to 10; the paper's 2 to 5),
    ``digits`` (2 to 12) the numbers' significant digits, ``exponents`` (within +-8) their scales.
    Text: ``"min(41.27, -3.071, 40.89) = -3.071"``. Extra columns: ``values``, ``operation``.

    Example:
        >>> row = minmax(train_size=4, validation_size=2, test_size=2)["train"][0]
        >>> row["answer"] == (min if row["operation"] == "min" else max)(row["values"])
        True
    """
    low, high, digits, lowest, highest, seed = _check_common(list_length, digits, exponents, seed)
    sizes = check_sizes({"test": test_size, "validation": validation_size, "train": train_size})

    def sample(rng: np.random.Generator, split: str) -> tuple[str, tuple[str, ...]]:
        place = int(rng.integers(lowest, highest + 1)) - digits + 1
        mantissas = _close_mantissas(rng, int(rng.integers(low, high + 1)), digits)
        operation = MINMAX_OPERATIONS[int(rng.integers(2))]
        return operation, tuple(format_decimal(m, place) for m in mantissas)

    stream = f"minmax{low}-{high}-{digits}-{lowest}-{highest}"
    drawn = draw_unique(sizes, split_rngs(seed, stream, list(sizes)), sample, lambda item: item)
    rows = {split: [_minmax_row(*item) for item in items] for split, items in drawn.items()}
    return make_dataset_dict(rows, {"values": ["float64"], "operation": "string"})


def _minmax_row(operation: str, literals: tuple[str, ...]) -> dict[str, Any]:
    values = [float(literal) for literal in literals]
    pick = (min if operation == "min" else max)(range(len(values)), key=values.__getitem__)
    builder = TextBuilder()
    builder.text(f"{operation}(")
    for i, literal in enumerate(literals):
        builder.text(", " if i else "")
        builder.number(literal)
    builder.text(") = ")
    builder.number(literals[pick], answer=True)
    return builder.build(values=values, operation=operation)


def interval(
    list_length: tuple[int, int] = (2, 5),
    digits: int = 4,
    exponents: tuple[int, int] = (-2, 3),
    train_size: int = 10_000,
    validation_size: int = 1_000,
    test_size: int = 1_000,
    seed: int = 0,
) -> DatasetDict:
    """The paper's Interval: which interval of ``n`` sorted bounds holds ``x``, answered by its index 0..n.

    Index 0 is ``x < b1``, ``k`` is ``bk <= x < bk+1``, ``n`` is ``bn <= x``; ``n`` is drawn from
    ``list_length``, the numbers as for :func:`minmax`. Text: ``"interval(5.25; 1.5, 3.75, 8.0) = 2"``.
    Extra columns: ``bounds`` (sorted), ``query`` (``x``).

    Example:
        >>> row = interval(train_size=4, validation_size=2, test_size=2)["train"][0]
        >>> row["answer"] == sum(bound <= row["query"] for bound in row["bounds"])
        True
    """
    low, high, digits, lowest, highest, seed = _check_common(list_length, digits, exponents, seed)
    sizes = check_sizes({"test": test_size, "validation": validation_size, "train": train_size})

    def sample(rng: np.random.Generator, split: str) -> tuple[str, tuple[str, ...], int]:
        place = int(rng.integers(lowest, highest + 1)) - digits + 1
        mantissas = _close_mantissas(rng, int(rng.integers(low, high + 1)), digits)
        bounds = sorted(mantissas)
        position = int(rng.integers(len(bounds) + 1))
        outer = max(1, (bounds[-1] - bounds[0]) // len(bounds))
        start = bounds[position - 1] if position > 0 else bounds[0] - outer
        stop = bounds[position] if position < len(bounds) else bounds[-1] + outer
        query = int(rng.integers(start, stop))
        return format_decimal(query, place), tuple(format_decimal(m, place) for m in bounds), position

    stream = f"interval{low}-{high}-{digits}-{lowest}-{highest}"
    drawn = draw_unique(sizes, split_rngs(seed, stream, list(sizes)), sample, lambda item: item[:2])
    rows = {split: [_interval_row(*item) for item in items] for split, items in drawn.items()}
    return make_dataset_dict(rows, {"bounds": ["float64"], "query": "float64"})


def _interval_row(query: str, bounds: tuple[str, ...], position: int) -> dict[str, Any]:
    builder = TextBuilder()
    builder.text("interval(")
    builder.number(query)
    builder.text("; ")
    for i, literal in enumerate(bounds):
        builder.text(", " if i else "")
        builder.number(literal)
    builder.text(") = ")
    builder.number(str(position), answer=True)
    return builder.build(bounds=[float(b) for b in bounds], query=float(query))
