"""Find numbers in text and write values back as text: the one place that decides what a number is.

:func:`split_numbers` (one regex pass that also settles most signs) and :func:`find_numbers` (its
spans) read ASCII-digit numbers not glued to a word, with a ``-`` as a sign only where it cannot be
an operator; :func:`format_number` writes the shortest text that parses back to the same float64,
so a text rebuilt with it re-parses to the same values. The full rules, with examples, are in
docs/tokenizers.md ("What counts as a number").

Example:
    >>> [(n.start, n.end, n.value) for n in find_numbers("x = -3, of 5-3")]
    [(4, 6, -3.0), (11, 12, 5.0), (13, 14, 3.0)]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = [
    "DIGIT_ORDERS",
    "NUMBER_OUTPUTS",
    "NEUTRAL_NUMBER",
    "NumberPieces",
    "NumberSpan",
    "find_numbers",
    "format_number",
    "replace_numbers",
    "split_numbers",
    "units_first",
    "writes_digits",
]

NEUTRAL_NUMBER = 1.0
"""The value ``input_numbers`` holds at every token that is not a number (padding included)."""

DIGIT_ORDERS = ("as_written", "units_first")
"""The orders a text tokenizer can give a number's digits to the model in (:func:`units_first`)."""
NUMBER_OUTPUTS = ("num_token", "digits")
"""How a ``[NUM]`` model writes numbers: its number token and head, or the backbone's own digit tokens."""


def writes_digits(tokenizer_or_config: Any) -> bool:
    """Whether a number tokenizer or config is ``number_output="digits"`` (numbers in, digits out); anything
    without the field writes as it always did.

    Example:
        >>> writes_digits(object())
        False
    """
    return getattr(tokenizer_or_config, "number_output", "num_token") == "digits"

_SAFE_LAST = r"[^\s0-9)\]}%\x80-\U0010ffff]"
"""An ASCII character after which a sign is a sign (rule 4): not a space, a digit, a closing bracket or ``%``."""
_SURE_SIGN = "|".join(
    [
        r"(?<![\s\S][+-])",  # at the text's start
        r"(?<=[^\w\s)\]}.+\-%][+-])",  # right after a character that neither glues it nor ends an operand
        r"(?<![\s\S]\s[+-])(?<=\s[+-])",  # after one space at the text's start
        rf"(?<={_SAFE_LAST}\s[+-])",  # after one or two spaces that follow such a character
        rf"(?<={_SAFE_LAST}\s\s[+-])",
    ]
)
"""Where the regex itself knows that a ``+``/``-`` before a number is its sign; elsewhere ``_is_sign`` decides."""
_NUMBER_RE = re.compile(
    r"("  # group 1, kept by re.split: the number as written (its sign included)
    r"[+\-0-9.]"  # its first character (a character set first lets the regex engine skip to candidates)
    r"(?:"
    r"(?<=[+-])"  # a sign ...
    rf"(?:{_SURE_SIGN}|())"  # ... that rule 4 surely allows, or group 2 ("") for split_numbers to check
    r"(?<![0-9][eE][+-])"  # rule 2: not after a broken exponent such as the "1e-" of "1e-.5"
    r"(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"  # rule 1: integer, decimal, leading-dot decimal
    r"|"
    r"(?<![\w.][0-9.])"  # or a digit or dot: rule 2, not glued to a word, digit or dot on the left
    r"(?<![0-9][eE][+-][0-9.])"  # nor to a broken exponent
    r"(?:(?<=[0-9])[0-9]*(?:\.[0-9]+)?|(?<=\.)[0-9]+)"  # rule 1 (its first character taken above)
    r")"
    r"(?:[eE][+-]?[0-9]+)?"  # optional exponent
    r"(?![0-9]|\.[0-9]|[eE][+-]?[0-9])"  # rule 3: not followed by a digit, ".digit" or a second exponent
    r")"
)
_SIGN_GLUED = frozenset(")]}.+-_")
_OPERAND_END = frozenset(")]}%")


class NumberSpan(NamedTuple):
    """One number found in a text: ``text[start:end]`` parses to ``value``."""

    start: int
    end: int
    value: float


class NumberPieces(NamedTuple):
    """A text cut at its numbers: ``texts[0] + literals[0] + texts[1] + ... + texts[-1]`` is the text."""

    texts: list[str]
    """The text before, between and after the numbers: one more piece than there are numbers."""
    literals: list[str]
    """Each number as written, its sign included."""
    values: list[float]
    """Each number's float64 value."""

    def spans(self) -> list[NumberSpan]:
        """Where each number stands in the text."""
        spans, position = [], 0
        for before, literal, value in zip(self.texts, self.literals, self.values):
            start = position + len(before)
            position = start + len(literal)
            spans.append(NumberSpan(start, position, value))
        return spans


def _is_sign(before: str, at_start: bool) -> bool:
    """Whether a ``+``/``-`` right after ``before`` is a sign (rule 4), not an operator.

    ``before`` is the text between the previous number (or the text's start, ``at_start``) and the
    sign; a number always ends with a digit, so reaching a previous number means an operator.
    """
    if not before:
        return at_start
    glued = before[-1]
    if glued.isalnum() or glued in _SIGN_GLUED:
        return False
    position = len(before) - 1
    while position >= 0 and before[position].isspace():
        position -= 1
    if position < 0:
        return at_start
    last = before[position]
    return not (last.isdigit() or last in _OPERAND_END)


def split_numbers(text: str) -> NumberPieces:
    """Cut ``text`` at its numbers in one pass: the text around them, their literals and float64 values.

    The rules are in this module's docstring; :func:`find_numbers` gives the same numbers as spans.

    Example:
        >>> split_numbers("x = -3, y=1.5e-3")
        NumberPieces(texts=['x = ', ', y=', ''], literals=['-3', '1.5e-3'], values=[-3.0, 0.0015])
    """
    if not isinstance(text, str):
        raise ValueError(f"find_numbers expects a str, got {type(text).__name__}")
    parts = _NUMBER_RE.split(text)
    texts, literals = parts[0::3], parts[1::3]
    if "" in parts[2::3]:  # a sign the regex left to _is_sign
        for index in [i for i, unsure in enumerate(parts[2::3]) if unsure == ""]:
            if not _is_sign(texts[index], index == 0):  # an operator: back to the text
                texts[index] += literals[index][0]
                literals[index] = literals[index][1:]
    values = list(map(float, literals))
    if math.inf in values or -math.inf in values:  # rule 6: an overflowing literal stays text
        for index in reversed([i for i, value in enumerate(values) if math.isinf(value)]):
            texts[index : index + 2] = [texts[index] + literals[index] + texts[index + 1]]
            del literals[index], values[index]
    return NumberPieces(texts, literals, values)


def find_numbers(text: str) -> list[NumberSpan]:
    """Find the numbers in ``text`` with their character spans and float64 values.

    The rules are in this module's docstring.

    Example:
        >>> [n.value for n in find_numbers("x = -3, y=1.5e-3 planet0 (1.42-8.20)")]
        [-3.0, 0.0015, 1.42, 8.2]
        >>> find_numbers("x = -3")
        [NumberSpan(start=4, end=6, value=-3.0)]
    """
    return split_numbers(text).spans()


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


def units_first(literal: str) -> str:
    """A number's text with its mantissa's digits (and point) in reverse order: the units digit first.

    The sign stays in front and the exponent behind; ``units_first`` undoes itself, except that a leading-dot
    decimal gets its zero (``.5`` comes back as ``0.5``). Addition and multiplication produce a number's digits
    from the units up, so a model that writes them in that order knows each carry before it needs it (Lee et al.
    2023, "Teaching Arithmetic to Small Transformers"; Abacus, McLeish et al. 2024).

    Example:
        >>> [units_first(n) for n in ("1250", "-46.98", ".5", "1.5e-3")], units_first(units_first("-46.98"))
        (['0521', '-89.64', '5.0', '5.1e-3'], '-46.98')
    """
    sign = literal[0] if literal[0] in "+-" else ""
    body = literal[len(sign) :]
    cut = next((i for i, c in enumerate(body) if c in "eE"), len(body))
    mantissa = body[:cut]
    if mantissa.startswith("."):
        mantissa = "0" + mantissa
    return sign + mantissa[::-1] + body[cut:]


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
    pieces = split_numbers(text)
    replacements = [placeholder(value) if callable(placeholder) else placeholder for value in pieces.values]
    out, ends, length = [pieces.texts[0]], [], len(pieces.texts[0])
    for replacement, after in zip(replacements, pieces.texts[1:]):
        ends.append(length + len(replacement))
        length = ends[-1] + len(after)
        out += [replacement, after]
    return "".join(out), ends, pieces.spans()
