"""Reference implementations for property tests: number finding and tokenizer outputs, the slow and simple way.

The library finds numbers in one ``re.split`` pass whose regex also decides most signs, and fills
``input_numbers`` for a whole batch at once. These are the implementations that came before, kept
only here as the specification the fast paths must equal: a regex scan that checks every sign in
Python, and a tokenizer that rewrites each text, lets the backbone's own tokenizer encode it, and
finds every number token's value and offsets row by row from the token's characters.
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from transformers import BatchEncoding

from hf_numbers.modeling.tokenization_number import NumberTokenizerMixin

ODD = list(' \n\t\u00a0\u2003\x1c[](){}"%_=-+.eEx\u00e9\u00b2\u0663\u00bd')  # \u00b2 is isdigit(), not decimal
TRICKY = ["  ", ", ", ": ", "planet", "1.2.3", "1e400", "-1e999", "1e-.5", "--", "+-"]
FRAGMENTS = st.sampled_from(ODD + TRICKY) | st.text(st.sampled_from(ODD) | st.characters(), max_size=3)
MODERATE = (
    st.integers(-(10**4), 10**4).map(str)
    | st.floats(-1e4, 1e4).map(lambda x: f"{x:.2f}")
    | st.floats(1e-3, 9).map(lambda x: f"{x:.1e}")
)
"""Numbers that a text scheme with 3 digits and exponents -5 to 2 can write."""
WILD = st.integers(-(10**20), 10**20).map(str) | st.floats(allow_nan=False).map(repr)


def mixed_texts(numbers: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Texts mixing ``numbers`` with signs, spaces (Unicode ones too), brackets and digit-like characters."""
    before = st.sampled_from(["+", "-", " +", " -", "  -", "\u2003-", ", -", "[+", "x-", "5 -", ")-", "%+", "\u00b2 -"])
    return st.lists(FRAGMENTS | numbers | st.tuples(before, numbers).map("".join), max_size=16).map("".join)


MIXED_TEXTS = mixed_texts(MODERATE | WILD)

NUMBER_RE = re.compile(
    r"(?<![\w.])(?<![0-9][eE][+-])"  # not glued to a word, digit, dot or broken exponent on the left
    r"(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"  # integer, decimal, leading-dot decimal, exponent
    r"(?![0-9]|\.[0-9]|[eE][+-]?[0-9])"  # not followed by a digit, ".digit" or a second exponent
)


def is_sign(text: str, index: int) -> bool:
    """Whether the ``+``/``-`` at ``text[index]`` is a sign: not glued on its left, not after an operand."""
    if index == 0:
        return True
    before = text[index - 1]
    if before.isalnum() or before in "_)]}.+-":
        return False
    position = index - 1
    while position >= 0 and text[position].isspace():
        position -= 1
    return position < 0 or not (text[position].isdigit() or text[position] in ")]}%")


def find_numbers(text: str) -> list[tuple[int, int, float]]:
    """(start, end, value) of every number of ``text``, as ``hf_numbers.find_numbers`` must give them."""
    spans = []
    for match in NUMBER_RE.finditer(text):
        start, end = match.span()
        if start > 0 and text[start - 1] in "+-" and is_sign(text, start - 1):
            start -= 1
        value = float(text[start:end])
        if not math.isinf(value):
            spans.append((start, end, value))
    return spans


def replace(text: str, replacement: Callable[[float], str]) -> tuple[str, list[tuple[int, int, int, int, float]]]:
    """``text`` with every number replaced by ``replacement(value)``, and for each number the span of its
    replacement, its span in ``text`` and its value."""
    out, spans, cursor, length = [], [], 0, 0
    for start, end, value in find_numbers(text):
        written = replacement(value)
        out += [text[cursor:start], written]
        length += start - cursor
        spans.append((length, length + len(written), start, end, value))
        length += len(written)
        cursor = end
    return "".join([*out, text[cursor:]]), spans


def rewrite(tokenizer: Any, text: str) -> tuple[str, list[tuple[int, int, int, int, float]]]:
    """``text`` with its numbers replaced as ``tokenizer`` replaces them (see :func:`replace`)."""
    if tokenizer.number_scheme == "text":
        return text, []
    if tokenizer.scheme is not None:
        return replace(text, lambda value: "".join(tokenizer.scheme.encode(value)))
    return replace(text, lambda value: tokenizer.num_token)


def original_offset(offset: int, column: int, spans: list[tuple[int, int, int, int, float]]) -> int:
    """An offset of the rewritten text in the original text (inside a replacement: the number's start or end)."""
    shift = 0
    for new_start, new_end, start, end, _ in spans:
        if offset >= new_end:
            shift = end - new_end
        elif new_start < offset:
            return (start, end)[column]
        else:
            break
    return offset + shift


def _encode_plus(self: Any, text: Any, text_pair: Any = None, **kwargs: Any) -> BatchEncoding:
    """The row-by-row ``_encode_plus``, bound to a number tokenizer by :func:`encode` (texts are checked there)."""
    return_tensors = kwargs.pop("return_tensors", None)
    return_offsets = kwargs.pop("return_offsets_mapping", False)
    batched = isinstance(text, (list, tuple))
    firsts = [rewrite(self, t) for t in (text if batched else [text])]
    seconds = None
    if text_pair is not None and (batched or text_pair):
        seconds = [rewrite(self, t) for t in (text_pair if batched else [text_pair])]
    encoded = super(NumberTokenizerMixin, self)._encode_plus(
        [t for t, _ in firsts],
        None if seconds is None else [t for t, _ in seconds],
        return_tensors=None,
        return_offsets_mapping=True,
        **kwargs,
    )
    data = dict(encoded)
    all_numbers, all_offsets = [], []
    for r, s in enumerate(data.get("overflow_to_sample_mapping", range(len(encoded.encodings)))):
        encoding = encoded.encodings[r]
        numbers, offsets = [], []
        for position, (token, (a, b)) in enumerate(zip(data["input_ids"][r], data["offset_mapping"][r])):
            sequence = encoding.token_to_sequence(position)
            spans = [] if sequence is None else (firsts, seconds)[sequence][s][1]
            values = {new_end: value for _, new_end, _, _, value in spans}
            numbers.append(values[b] if token in self.num_token_ids else 1.0)
            offsets.append((original_offset(a, 0, spans), original_offset(b, 1, spans)))
        all_numbers.append(np.array(numbers, dtype=np.float64))
        all_offsets.append(offsets)
    data["input_numbers"] = all_numbers if return_tensors else [row.tolist() for row in all_numbers]
    if return_offsets:
        data["offset_mapping"] = all_offsets
    else:
        del data["offset_mapping"]
    if not batched and return_tensors is None and not kwargs.get("return_overflowing_tokens"):
        return BatchEncoding({key: value[0] for key, value in data.items()}, encoded.encodings)
    return BatchEncoding(data, encoded.encodings, tensor_type=return_tensors)


def encode(tokenizer: Any, *args: Any, **kwargs: Any) -> BatchEncoding:
    """``tokenizer(*args, **kwargs)`` computed by the reference: each row on its own, values found by offsets.

    The texts must be ones the tokenizer takes (str, without its number token or scheme-token strings).
    """
    tokenizer._encode_plus = types.MethodType(_encode_plus, tokenizer)
    try:
        return tokenizer(*args, **kwargs)
    finally:
        del tokenizer._encode_plus
