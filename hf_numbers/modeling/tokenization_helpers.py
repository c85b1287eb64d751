"""Helpers of the number tokenizers: a text with its numbers replaced, and nested-list utilities.
"""

from __future__ import annotations

import math
from itertools import accumulate, chain
from typing import Any

import numpy as np

from .parsing import NumberPieces, NumberSpan, split_numbers, units_first


class RewrittenText:
    """One input text with its numbers replaced: the new text, the values, and where each replacement ends.

    ``replacements`` is one string for every number (``"[NUM]"``) or one string per number (a text
    scheme's tokens). Where the replacements end and where the numbers stood are worked out only when
    asked (truncated or paired rows, offsets).

    Example:
        >>> rewritten = RewrittenText(split_numbers("a 1.5 b -2"), "[NUM]")  # doctest: +SKIP
        >>> rewritten.text, rewritten.values, rewritten.ends  # doctest: +SKIP
        ('a [NUM] b [NUM]', [1.5, -2.0], [7, 15])
    """

    __slots__ = ("text", "values", "_pieces", "_replacements", "_ends", "_by_end")

    def __init__(self, pieces: NumberPieces, replacements: str | list[str]):
        texts = pieces.texts
        if isinstance(replacements, str):
            self.text = replacements.join(texts)
        else:
            self.text = "".join([piece for pair in zip(texts, replacements) for piece in pair]) + texts[-1]
        self.values = pieces.values
        self._pieces = pieces
        self._replacements = replacements
        self._ends: list[int] | None = None
        self._by_end: dict[int, float] | None = None

    @classmethod
    def unchanged(cls, text: str) -> RewrittenText:
        """``text`` kept as it is (numbers stay text)."""
        return cls(NumberPieces([text], [], []), "")

    @classmethod
    def units_first(cls, text: str) -> RewrittenText:
        """``text`` with every number's digits in reverse order (:func:`units_first`): written for the model, and
        read back from what it writes (the reversal undoes itself)."""
        pieces = split_numbers(text)
        return cls(pieces, [units_first(literal) for literal in pieces.literals])

    def overflowing(self) -> tuple[str, str] | None:
        """The first number (as written, as replaced) whose replacement reads as an infinite float, or None."""
        if isinstance(self._replacements, str):
            return None
        pairs = zip(self._pieces.literals, self._replacements)
        return next(((a, b) for a, b in pairs if "e" in b.lower() and math.isinf(float(b))), None)

    @property
    def ends(self) -> list[int]:
        """End offset of each number's replacement in the rewritten text."""
        if self._ends is None:
            replacements = self._replacements
            if isinstance(replacements, str):
                replacements = [replacements] * len(self.values)
            self._ends = list(accumulate(len(before) + len(r) for before, r in zip(self._pieces.texts, replacements)))
        return self._ends

    @property
    def numbers(self) -> list[NumberSpan]:
        """The numbers where they stand in the original text."""
        return self._pieces.spans()

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
        if not self.values:
            return offsets
        numbers = self.numbers
        starts = np.array([number.start for number in numbers])
        stops = np.array([number.end for number in numbers])
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


def pad_rows(
    rows: list[list[int]] | None, lengths: np.ndarray, widths: np.ndarray, side: str, pad: int | None
) -> np.ndarray | list[list[int]]:
    """``rows`` (of ``lengths``) padded with ``pad`` on ``side`` to ``widths``; ``rows`` None: the attention
    mask (1 on the tokens, 0 on the padding). One int64 array where every width is the same, lists otherwise."""
    if (widths != widths[0]).any():
        if rows is None:
            rows, pad = [[1] * length for length in lengths.tolist()], 0
        padding = [[pad] * extra for extra in (widths - lengths).tolist()]
        pairs = zip(rows, padding)
        return [row + extra for row, extra in pairs] if side == "right" else [extra + row for row, extra in pairs]
    columns = np.arange(widths[0])
    tokens = columns >= widths[0] - lengths[:, None] if side == "left" else columns < lengths[:, None]
    if rows is None:
        return tokens.astype(np.int64)
    padded = np.full(tokens.shape, 0 if pad is None else pad, dtype=np.int64)  # (None: nothing is padded)
    padded[tokens] = np.fromiter(chain.from_iterable(rows), np.int64, int(lengths.sum()))
    return padded


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


def token_texts(tokenizer: Any) -> dict[int, str]:
    """Every token's text as it reads inside a text, its leading space kept (``Ġ5`` and ``▁5`` are ``" 5"``).

    A token alone loses its leading space to some decoders (metaspace strips it at a text's start); each is
    decoded after a one-letter token instead, and the letter cut off.

    Example:
        >>> token_texts(smollm2_tokenizer)[216]  # doctest: +SKIP
        ' '
    """
    vocab = tokenizer.get_vocab()
    anchors = (token for token in sorted(vocab, key=vocab.get) if _one_letter(tokenizer, token))
    anchor = next(anchors, None)
    if anchor is None:  # no one-letter token: each token alone
        return {i: tokenizer.convert_tokens_to_string([token]) for token, i in vocab.items()}
    lead = tokenizer.convert_tokens_to_string([anchor])
    return {i: tokenizer.convert_tokens_to_string([anchor, token])[len(lead) :] for token, i in vocab.items()}


def _one_letter(tokenizer: Any, token: str) -> bool:
    text = tokenizer.convert_tokens_to_string([token])
    return len(text) == 1 and text.isalpha()
