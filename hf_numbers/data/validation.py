"""Checks of the task generators' arguments: each returns the value it checked (as an int, a pair or a
tuple) or raises ``ValueError`` naming the argument and what is allowed.

Example:
    >>> check_int_range("operands", (2, 4), 2, 8)
    (2, 4)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


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


def check_seed(seed: Any) -> int:
    """Validate a seed (an int >= 0).

    Example:
        >>> check_seed(0)
        0
    """
    return check_int("seed", seed, 0)
