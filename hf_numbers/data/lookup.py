"""xVal's number look-up task (Golkar et al., appendix B.6): ``{d:1.53, e:-1.33, k:0.07} e=-1.33``."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING, Any

import numpy as np

from .formatting import format_scaled_integer
from .splits import draw_unique, make_dataset_dict, split_rngs
from .text_builder import TextBuilder
from .validation import check_int_range, check_interval, check_seed, check_sizes, in_open_interval

if TYPE_CHECKING:
    from datasets import DatasetDict

VALUE_RANGE = (-3.0, 3.0)
_CENTS = np.arange(-300, 301)  # every two-decimal value in [-3, 3], in hundredths


def lookup(
    num_pairs: tuple[int, int] = (3, 8),
    heldout: tuple[float, float] = (0.3, 0.5),
    train_size: int = 10_000,
    validation_size: int = 1_000,
    test_size: int = 1_000,
    test_ood_size: int = 1_000,
    seed: int = 0,
) -> DatasetDict:
    """Number look-up: find the value of a queried key in a small dictionary.

    ``num_pairs`` is the inclusive range of the dictionary's size (2 to 26 letters). Two-decimal values
    lie in ``[-3, 3]``, never inside the open interval ``heldout`` except for the queried value of
    ``test_ood``. Extra columns: ``keys``, ``values`` (in written order), ``query`` (the queried key).

    Example:
        >>> dd = lookup(train_size=4, validation_size=2, test_size=2, test_ood_size=2)
        >>> row = dd["test_ood"][0]
        >>> 0.3 < row["answer"] < 0.5 and row["values"][row["keys"].index(row["query"])] == row["answer"]
        True
    """
    low, high = check_int_range("num_pairs", num_pairs, 2, len(string.ascii_lowercase))
    heldout = check_interval("heldout", heldout, *VALUE_RANGE)
    seed = check_seed(seed)
    sizes = check_sizes(
        {"test_ood": test_ood_size, "test": test_size, "validation": validation_size, "train": train_size}
    )
    inside = np.array([in_open_interval(c / 100, heldout) for c in _CENTS])
    if not inside.any():
        raise ValueError(f"heldout={heldout} contains no two-decimal value; widen it")
    in_distribution, held_out = _CENTS[~inside], _CENTS[inside]
    letters = np.array(list(string.ascii_lowercase))

    def sample(rng: np.random.Generator, split: str) -> tuple[tuple[str, ...], tuple[int, ...], int]:
        n = int(rng.integers(low, high + 1))
        keys = tuple(str(k) for k in rng.choice(letters, size=n, replace=False))
        pool = _CENTS if split == "test_ood" else in_distribution
        cents = [int(c) for c in rng.choice(pool, size=n)]
        query = int(rng.integers(n))
        if split == "test_ood":
            cents[query] = int(rng.choice(held_out))
        return keys, tuple(cents), query

    drawn = draw_unique(sizes, split_rngs(seed, "lookup", list(sizes)), sample, lambda item: item)
    rows = {split: [_row(*item) for item in items] for split, items in drawn.items()}
    return make_dataset_dict(rows, {"keys": ["string"], "values": ["float64"], "query": "string"})


def _row(keys: tuple[str, ...], cents: tuple[int, ...], query: int) -> dict[str, Any]:
    builder = TextBuilder()
    builder.text("{")
    for i, (key, value) in enumerate(zip(keys, cents)):
        builder.text(f"{', ' if i else ''}{key}:")
        builder.number(format_scaled_integer(value, 2))
    builder.text(f"}} {keys[query]}=")
    builder.number(format_scaled_integer(cents[query], 2), answer=True)
    return builder.build(keys=list(keys), values=[float(format_scaled_integer(c, 2)) for c in cents], query=keys[query])
