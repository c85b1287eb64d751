"""``TextBuilder``: writes an example's text piece by piece and records every number it writes, so that
the row's ``prompt``, ``answer``, ``numbers`` and ``answer_index`` match the text (the columns:
``hf_numbers.data.splits``).
"""

from __future__ import annotations

import math
from typing import Any


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
