"""Shared pieces of the task generators: argument checks, seeded split streams,
number formatting, a text builder that records every number it writes, and
``DatasetDict`` assembly.

Every generated example carries the same core columns:

``text``
    the full text the model sees; numbers are plain decimals (no exponent).
``prompt``
    the text before the answer number: ``text.startswith(prompt + answer_text)``.
``answer`` / ``answer_text``
    the answer's float64 value and its literal as written in ``text``.
``numbers``
    the value of every number literal written in ``text``, in order (a sign glued
    to a literal is part of it, as in ``x=-1.5``; an operator such as ``5 - 3`` is not).
``answer_index``
    the position of the answer in ``numbers``.

Tasks whose answer is a **word** (a masked word that follows from the numbers, scored with
masked-word perplexity and top-k accuracy) carry ``text``, ``numbers``, ``word`` (the target
word) and ``word_start`` (its character offset in ``text``) instead (``WORD_FEATURES``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from datasets import Dataset, DatasetDict, Features, List, Value

T = TypeVar("T")

IN_DISTRIBUTION_SPLITS = ("train", "validation", "test")

CORE_FEATURES = {
    "text": Value("string"),
    "prompt": Value("string"),
    "answer": Value("float64"),
    "answer_text": Value("string"),
    "numbers": List(Value("float64")),
    "answer_index": Value("int32"),
}

WORD_FEATURES = {
    "text": Value("string"),
    "numbers": List(Value("float64")),
    "word": Value("string"),
    "word_start": Value("int32"),
}
"""The core columns of a task whose answer is a word (``numeracy_words``)."""

# float64 represents every integer of magnitude below 2**53 exactly.
MAX_EXACT_INTEGER = 2**53


def check_int(name: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` if it is an int in ``[minimum, maximum]``, else raise ValueError.

    Example:
        >>> check_int("digits", 3, 1, 7)
        3
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    upper = "" if maximum is None else f" and <= {maximum}"
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be >= {minimum}{upper}, got {value}")
    return int(value)


def check_int_range(name: str, value: Any, minimum: int, maximum: int | None = None) -> tuple[int, int]:
    """Return ``(low, high)`` for an inclusive integer range with ``minimum <= low <= high <= maximum``.

    Example:
        >>> check_int_range("operands", (2, 4), 2, 8)
        (2, 4)
    """
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        raise ValueError(f"{name} must be a pair (low, high) of integers, got {value!r}")
    low = check_int(f"{name}[0]", value[0], minimum, maximum)
    high = check_int(f"{name}[1]", value[1], minimum, maximum)
    if low > high:
        raise ValueError(f"{name} must satisfy low <= high, got {value!r}")
    return low, high


def check_interval(name: str, value: Any, lower: float, upper: float) -> tuple[float, float]:
    """Return ``(low, high)`` for an open interval with ``lower <= low < high <= upper``.

    Example:
        >>> check_interval("heldout", (0.3, 0.5), -3.0, 3.0)
        (0.3, 0.5)
    """
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        raise ValueError(f"{name} must be a pair (low, high) of numbers, got {value!r}")
    low, high = (float(v) for v in value)
    if not (math.isfinite(low) and math.isfinite(high) and lower <= low < high <= upper):
        raise ValueError(f"{name} must satisfy {lower} <= low < high <= {upper}, got {value!r}")
    return low, high


def in_open_interval(value: float, interval: tuple[float, float]) -> bool:
    """Whether ``low < value < high``.

    Example:
        >>> in_open_interval(0.4, (0.3, 0.5)), in_open_interval(0.5, (0.3, 0.5))
        (True, False)
    """
    return interval[0] < value < interval[1]


def check_sizes(sizes: Mapping[str, Any]) -> dict[str, int]:
    """Validate split sizes: ``train`` >= 1, every other split >= 0.

    Example:
        >>> check_sizes({"train": 10, "test": 0})
        {'train': 10, 'test': 0}
    """
    return {name: check_int(f"{name}_size", size, 1 if name == "train" else 0) for name, size in sizes.items()}


def check_fractions(fractions: Any) -> tuple[float, float, float]:
    """Validate ``(train, validation, test)`` shares: non-negative, summing to 1, train > 0.

    Example:
        >>> check_fractions((0.8, 0.1, 0.1))
        (0.8, 0.1, 0.1)
    """
    message = (
        "split_fractions must be three non-negative numbers (train, validation, test) "
        f"summing to 1 with train > 0, got {fractions!r}"
    )
    if not isinstance(fractions, Sequence) or isinstance(fractions, str) or len(fractions) != 3:
        raise ValueError(message)
    values = tuple(float(f) for f in fractions)
    if min(values) < 0 or values[0] <= 0 or not np.isclose(sum(values), 1.0):
        raise ValueError(message)
    return values


def shuffled_split(
    count: int, fractions: tuple[float, float, float], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Indices ``0 .. count-1`` in a random order, cut in proportion to ``fractions`` (train, validation, test).

    Example:
        >>> cuts = shuffled_split(10, (0.8, 0.1, 0.1), np.random.default_rng(0))
        >>> [len(cuts[split]) for split in IN_DISTRIBUTION_SPLITS]
        [8, 1, 1]
    """
    order = rng.permutation(count)
    bounds = np.round(np.cumsum(fractions) * count).astype(int)
    return dict(zip(IN_DISTRIBUTION_SPLITS, np.split(order, bounds[:-1])))


def check_seed(seed: Any) -> int:
    """Validate a seed (an int >= 0).

    Example:
        >>> check_seed(0)
        0
    """
    return check_int("seed", seed, 0)


def split_rngs(seed: int, task: str, names: Sequence[str]) -> dict[str, np.random.Generator]:
    """One independent, reproducible random stream per split.

    A split's stream depends only on the seed, the task and the split's name, so
    changing the size of one split never changes the random draws of another.

    Example:
        >>> rngs = split_rngs(0, "lookup", ["train", "test"])
        >>> bool(rngs["test"].integers(100) == split_rngs(0, "lookup", ["test"])["test"].integers(100))
        True
    """
    task_key = [ord(c) for c in task]
    return {
        name: np.random.default_rng(np.random.SeedSequence([seed, *task_key, 0, *(ord(c) for c in name)]))
        for name in names
    }


def draw_unique(
    sizes: Mapping[str, int],
    rngs: Mapping[str, np.random.Generator],
    sample: Callable[[np.random.Generator, str], T],
    key: Callable[[T], Hashable],
    max_attempts_per_example: int = 100,
) -> dict[str, list[T]]:
    """Draw ``sizes[split]`` examples per split with no key repeated within or across splits.

    Splits are filled in the order of ``sizes``; list held-out and test splits first
    so that they do not depend on the size of the training split.

    Example:
        >>> import numpy as np
        >>> rngs = {"test": np.random.default_rng(0), "train": np.random.default_rng(1)}
        >>> out = draw_unique({"test": 3, "train": 5}, rngs, lambda r, s: int(r.integers(20)), lambda x: x)
        >>> len(set(out["test"]) | set(out["train"]))
        8
    """
    seen: set[Hashable] = set()
    drawn: dict[str, list[T]] = {}
    for split, size in sizes.items():
        rng = rngs[split]
        items: list[T] = []
        attempts = 0
        limit = max_attempts_per_example * size + 1000
        while len(items) < size:
            attempts += 1
            if attempts > limit:
                raise ValueError(
                    f"could not draw {size} distinct examples for split {split!r} after {limit} attempts; "
                    "the task's space of distinct examples is too small for the requested sizes: "
                    "reduce the split sizes or widen the task's ranges"
                )
            item = sample(rng, split)
            item_key = key(item)
            if item_key in seen:
                continue
            seen.add(item_key)
            items.append(item)
        drawn[split] = items
    return drawn


def format_fixed(value: float, decimals: int) -> str:
    """Write ``value`` with exactly ``decimals`` decimals, never as ``-0``.

    Example:
        >>> format_fixed(-0.0001, 3), format_fixed(1.5, 2)
        ('0.000', '1.50')
    """
    text = f"{value:.{decimals}f}"
    if float(text) == 0.0:
        text = text.lstrip("-")
    return text


def round_fixed(value: float, decimals: int) -> float:
    """The float64 value of ``format_fixed(value, decimals)``.

    Example:
        >>> round_fixed(1.23456, 3)
        1.235
    """
    return float(format_fixed(value, decimals))


def format_scaled_integer(mantissa: int, decimals: int) -> str:
    """Write the exact decimal ``mantissa / 10**decimals`` (``decimals`` >= 0).

    Example:
        >>> format_scaled_integer(-12345, 2), format_scaled_integer(5, 3), format_scaled_integer(7, 0)
        ('-123.45', '0.005', '7')
    """
    sign = "-" if mantissa < 0 else ""
    digits = str(abs(mantissa))
    if decimals == 0:
        return sign + digits
    digits = digits.rjust(decimals + 1, "0")
    return f"{sign}{digits[:-decimals]}.{digits[-decimals:]}"


def format_decimal(mantissa: int, exponent: int) -> str:
    """Write the exact decimal ``mantissa * 10**exponent`` as a plain literal (no exponent notation).

    Example:
        >>> format_decimal(-1234, -5), format_decimal(1234, 2), format_decimal(7, 0)
        ('-0.01234', '123400', '7')
    """
    return str(mantissa * 10**exponent) if exponent >= 0 else format_scaled_integer(mantissa, -exponent)


class TextBuilder:
    """Builds an example's text piece by piece and records each number written.

    Example:
        >>> b = TextBuilder()
        >>> b.text("12 + 3 = ")
        >>> b.number("15", answer=True)
        >>> row = b.build(operands=[12.0, 3.0])
        >>> row["prompt"], row["answer"], row["numbers"], row["answer_index"]
        ('12 + 3 = ', 15.0, [15.0], 0)
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._numbers: list[float] = []
        self._answer: tuple[int, int, str] | None = None

    def text(self, piece: str) -> None:
        """Append plain text (which must hold no number that should be recorded)."""
        self._parts.append(piece)
        self._length += len(piece)

    def number(self, literal: str, answer: bool = False) -> None:
        """Append a number literal; ``answer=True`` marks it as the example's answer."""
        value = float(literal)
        if not math.isfinite(value):
            raise ValueError(f"number literal {literal!r} is not a finite number")
        if answer:
            if self._answer is not None:
                raise ValueError("an example has exactly one answer number")
            self._answer = (self._length, len(self._numbers), literal)
        self._numbers.append(value)
        self.text(literal)

    def build(self, **columns: Any) -> dict[str, Any]:
        """Return the example row: the core columns plus ``columns``."""
        if self._answer is None:
            raise ValueError("no answer number was marked with number(..., answer=True)")
        text = "".join(self._parts)
        start, index, literal = self._answer
        return {
            "text": text,
            "prompt": text[:start],
            "answer": float(literal),
            "answer_text": literal,
            "numbers": list(self._numbers),
            "answer_index": index,
            **columns,
        }


def make_dataset_dict(
    rows: Mapping[str, list[dict[str, Any]]],
    extra_features: Mapping[str, Any],
    core: Mapping[str, Any] = CORE_FEATURES,
) -> DatasetDict:
    """Assemble a ``DatasetDict`` with ``train``/``validation``/``test`` first, then other splits.

    ``core`` is :data:`CORE_FEATURES` (a number answer) or :data:`WORD_FEATURES` (a word answer).

    Example:
        >>> from datasets import Value
        >>> b = TextBuilder(); b.text("x="); b.number("1", answer=True)
        >>> dd = make_dataset_dict({"train": [b.build(k=1)]}, {"k": Value("int32")})
        >>> dd["train"][0]["answer"]
        1.0
    """
    features = Features({**core, **extra_features})
    ordered = [s for s in IN_DISTRIBUTION_SPLITS if s in rows] + sorted(
        s for s in rows if s not in IN_DISTRIBUTION_SPLITS
    )
    return DatasetDict(
        {
            split: Dataset.from_dict({name: [row[name] for row in rows[split]] for name in features}, features=features)
            for split in ordered
        }
    )
