"""Helpers of the number tokenizers: a text with its numbers replaced, and nested-list utilities.

This module is part of the flat ``hf_numbers/modeling`` folder copied into checkpoints: it
imports nothing from ``hf_numbers`` outside that folder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .parsing import NumberSpan


class RewrittenText:
    """The numbers of one input text and where their replacements end in the rewritten text."""

    __slots__ = ("text", "ends", "numbers", "values", "_by_end")

    def __init__(self, text: str, ends: list[int], numbers: list[NumberSpan]):
        self.text = text
        self.ends = ends
        self.numbers = numbers
        self.values = [number.value for number in numbers]
        self._by_end: dict[int, float] | None = None

    def value_at(self, end: int) -> float:
        """Value of the number whose replacement ends at ``end`` in the rewritten text."""
        if self._by_end is None:
            self._by_end = dict(zip(self.ends, self.values))
        return self._by_end[end]

    def original_offsets(self, offsets: np.ndarray) -> np.ndarray:
        """Map character offsets in the rewritten text back to the original text.

        An offset strictly inside a number's replacement (several scheme tokens of one number)
        maps to that number's start (column 0, token starts) or end (column 1, token ends).
        """
        if not self.ends:
            return offsets
        starts = np.array([number.start for number in self.numbers])
        stops = np.array([number.end for number in self.numbers])
        ends = np.asarray(self.ends)
        new_starts = ends - np.diff(ends, prepend=0) + starts - np.concatenate([[0], stops[:-1]])
        shift = np.concatenate([[0], np.cumsum((stops - starts) - (ends - new_starts))])
        after = np.searchsorted(ends, offsets, side="right")  # replacements that end at or before each offset
        mapped = offsets + shift[after]
        inside = after < len(ends)
        inside[inside] = new_starts[after[inside]] < offsets[inside]
        rows, columns = np.nonzero(inside)  # column 0: a token start -> the number's start; 1: end -> end
        mapped[rows, columns] = np.stack([starts, stops], axis=-1)[after[rows, columns], columns]
        return mapped


def to_lists(values: Any) -> Any:
    """Tensors and arrays to (nested) Python lists; lists of arrays too."""
    if hasattr(values, "tolist"):
        return values.tolist()
    if isinstance(values, (list, tuple)):
        return [to_lists(v) for v in values]
    return values


def nested_shape(values: Any) -> tuple[int, ...]:
    if not isinstance(values, list):
        return ()
    if values and isinstance(values[0], list):
        lengths = {len(row) for row in values}
        return (len(values), lengths.pop()) if len(lengths) == 1 else (len(values), -1)
    return (len(values),)
