"""Find numbers in text and write values back as text.

These two functions are the only place that decides what a number is. The rules:

1. **Syntax.** ASCII digits only: an integer (``42``), a decimal (``3.14``), a
   leading-dot decimal (``.25``), each with an optional exponent (``1.5e-3``, ``2E+10``).
   A trailing dot is not part of a number: ``"costs 3."`` gives ``3`` and the text ``"."``.
2. **Left boundary.** A number may not be glued to a word on its left: digits right
   after a letter, a digit, ``_`` or ``.`` are text (``planet0``, ``x2``, ``mp3``, ``B12``,
   the ``3`` of ``1.2.3``), nor right after a broken exponent (``1e-.5`` is text).
3. **Right boundary.** A number may not be followed by ``.`` and a digit, so versions
   and addresses (``1.2.3``, ``192.168.0.1``) stay text, nor by a second exponent
   (``1e2e3`` is text). Letters may follow a number
   (units: ``5kg`` gives ``5`` and ``kg``; ``3D`` gives ``3`` and ``D``).
4. **Signs.** A ``-`` or ``+`` directly before the digits is the number's sign only
   where it cannot be an operator or hyphen, that is when it is not glued to a word,
   digit, ``.``, closing bracket or another sign on its left, and the previous non-space character
   is not a digit, a closing bracket ``)]}`` or ``%``:
   ``[-2.6,-2.6]``, ``x = -3``, ``of -3 degrees`` give negative numbers;
   ``5-3``, ``5 - 3``, ``5 -3``, ``(1.42-8.20)`` give ``5``, ``-``, ``3`` and ``1.42``, ``-``, ``8.20``;
   ``COVID-19`` gives the text ``COVID-`` and the number ``19``; ``x=--3`` and ``-+5`` give the
   texts ``x=--`` and ``-+`` and the numbers ``3`` and ``5``;
   ``2024-01-05`` gives ``2024``, ``1``, ``5`` with the ``-`` kept as text.
   A ``+`` sign is dropped when the value is written back (``+5`` decodes as ``5``).
5. **Values.** A number becomes the nearest float64 (``float(literal)``). Digit strings
   beyond float64 precision are rounded (``12345678901234567890`` becomes
   ``1.2345678901234567e+19``); leading zeros are not kept (``007`` is ``7``); an
   underflowing literal becomes ``0.0`` or a subnormal.
6. **Non-finite values.** Words (``nan``, ``inf``, ``Infinity``) are never numbers, and a
   literal that overflows float64 (``1e400``) is left as text, so a non-finite value never
   reaches ``input_numbers``.

``format_number`` writes the shortest text that parses back to exactly the same float64,
so for any text, ``find_numbers`` on the text rebuilt with ``format_number`` gives the same
values and the same text between numbers.

This module is part of the flat ``hf_numbers/modeling`` folder copied into checkpoints:
it imports nothing from ``hf_numbers``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["NEUTRAL_NUMBER", "NumberSpan", "find_numbers", "format_number", "replace_numbers"]

NEUTRAL_NUMBER = 1.0
"""The value ``input_numbers`` holds at every token that is not a number (padding included)."""

_NUMBER_RE = re.compile(
    r"(?<![\w.])"  # rule 2: not glued to a word, digit or dot on the left
    r"(?<![0-9][eE][+-])"  # nor to a broken exponent such as the "1e-" of "1e-.5"
    r"(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"  # rule 1: integer, decimal, leading-dot decimal
    r"(?:[eE][+-]?[0-9]+)?"  # optional exponent
    r"(?![0-9]|\.[0-9]|[eE][+-]?[0-9])"  # rule 3: not followed by a digit, ".digit" or a second exponent
)
_GLUED_BEFORE_SIGN = frozenset(")]}.")
_OPERAND_END = frozenset(")]}%")


class NumberSpan(NamedTuple):
    """One number found in a text: ``text[start:end]`` parses to ``value``."""

    start: int
    end: int
    value: float


def _is_sign(text: str, index: int) -> bool:
    """Whether the ``+``/``-`` at ``text[index]`` is a sign (rule 4), not an operator."""
    if index == 0:
        return True
    before = text[index - 1]
    if before.isalnum() or before == "_" or before in _GLUED_BEFORE_SIGN or before in "+-":
        return False
    position = index - 1
    while position >= 0 and text[position].isspace():
        position -= 1
    if position < 0:
        return True
    last = text[position]
    return not (last.isdigit() or last in _OPERAND_END)


def find_numbers(text: str) -> list[NumberSpan]:
    """Find the numbers in ``text`` with their character spans and float64 values.

    The rules are in this module's docstring.

    Example:
        >>> [n.value for n in find_numbers("x = -3, y=1.5e-3 planet0 (1.42-8.20)")]
        [-3.0, 0.0015, 1.42, 8.2]
        >>> find_numbers("x = -3")
        [NumberSpan(start=4, end=6, value=-3.0)]
    """
    if not isinstance(text, str):
        raise ValueError(f"find_numbers expects a str, got {type(text).__name__}")
    spans: list[NumberSpan] = []
    for match in _NUMBER_RE.finditer(text):
        start, end = match.span()
        literal = match.group()
        if start > 0 and text[start - 1] in "+-" and _is_sign(text, start - 1):
            start -= 1
            literal = text[start] + literal
        value = float(literal)
        if math.isinf(value):  # rule 6: overflowing literal stays text
            continue
        spans.append(NumberSpan(start, end, value))
    return spans


def format_number(value: float) -> str:
    """Write ``value`` as the shortest text that parses back to the same float64.

    Integral values lose their ``.0``; very large or small magnitudes use an exponent.

    Example:
        >>> [format_number(v) for v in (5.0, -2.6, 0.0015, 1e20, 0.1 + 0.2)]
        ['5', '-2.6', '0.0015', '1e+20', '0.30000000000000004']

    Raises:
        ValueError: for NaN or infinity, which have no number text.
    """
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"cannot write the non-finite value {value!r} as a number; allowed: finite floats")
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def replace_numbers(text: str, placeholder: str | Callable[[float], str]) -> tuple[str, list[int], list[NumberSpan]]:
    """Replace every number of ``text`` with ``placeholder`` (or ``placeholder(value)`` for a callable).

    Returns the new text, the end offset of each replacement in it, and the numbers found.

    Example:
        >>> new_text, ends, numbers = replace_numbers("a 1.5 b -2", "[NUM]")
        >>> new_text, ends, [n.value for n in numbers]
        ('a [NUM] b [NUM]', [7, 15], [1.5, -2.0])
        >>> replace_numbers("a 1.5", lambda value: f"<{value * 2}>")[0]
        'a <3.0>'
    """
    numbers = find_numbers(text)
    pieces: list[str] = []
    ends: list[int] = []
    cursor = 0
    length = 0
    for start, end, value in numbers:
        replacement = placeholder(value) if callable(placeholder) else placeholder
        piece = text[cursor:start]
        pieces.append(piece)
        pieces.append(replacement)
        length += len(piece) + len(replacement)
        ends.append(length)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), ends, numbers
