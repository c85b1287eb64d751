"""Text number encodings (Charton's P10, P1000, B1999, FP15): numbers rewritten as ordinary tokens.

These are the text baselines of the xVal paper (Table 1). A value is first rounded to
``digits`` significant digits and written as ``sign, mantissa, exponent`` with an integer
mantissa of exactly ``digits`` digits (``-60.2 -> -, 602, E-1`` for 3 digits); the schemes
differ in how they cut that into tokens:

==========  ===============================  =====================================  =================
scheme      tokens of -60.2 (3 digits)       tokens per number                      vocabulary (3 d.)
==========  ===============================  =====================================  =================
``p10``     sign, one per digit, exponent    ``digits + 2``                         2 + 10 + E
``p1000``   sign, one per 3 digits, exp.     ``digits / 3 + 2``                     2 + 901 + E
``b1999``   signed first group, groups, exp  ``digits / 3 + 1``                     1801 + E
``fp15``    one token for the whole number   1                                      1800 E + 1
==========  ===============================  =====================================  =================

(``E`` is the number of exponents, ``max_exponent - min_exponent + 1``; the "+1"s are zero.)

**Token strings.** Every token is ``<|...|>`` around its parts: a sign ``+``/``-``, digits after
the letter ``d``, an exponent written sign-first as ``+E1``/``-E1``. -60.2 is
``<|-|> <|d6|> <|d0|> <|d2|> <|-E1|>`` in P10, ``<|-|> <|d602|> <|-E1|>`` in P1000,
``<|-d602|> <|-E1|>`` in B1999 and ``<|-d602-E1|>`` in FP15. ASCII digits always follow a
letter, so no token text parses as a number (:func:`~.parsing.find_numbers` rule 2): a
malformed run decoded as text never counts as a predicted number. Tokenizers reject input text
holding such a string (:data:`SCHEME_TOKEN_RE`), so real text never collides with them.

**Rules.** Rounding is half-to-even on the shortest decimal of the float64
(:func:`~.parsing.format_number`), so a value whose shortest decimal has at most ``digits``
significant digits round-trips exactly. The mantissa is normalised (first digit not 0). Zero
is ``+``, all-zero digits and the exponent 0 (or the range's end nearest to 0); -0.0 is written as 0.
A value whose exponent falls outside ``[min_exponent, max_exponent]`` raises ``ValueError``
(never a silent clip), as do NaN and infinity. Reading tokens back is strict: a run is a number
only if it is exactly the tokens :meth:`NumberScheme.encode` writes for its value; anything else
(missing or extra parts, a non-normalised mantissa, an unknown token) is malformed.

P1000 and B1999 cut the mantissa into groups of 3 digits, so their ``digits`` is a multiple of 3
(the first group is 100-999, later groups 000-999). FP15's vocabulary grows as ``10^digits``:
every scheme's vocabulary is bounded by :data:`MAX_SCHEME_VOCABULARY`.

This module is part of the flat ``hf_numbers/modeling`` folder copied into checkpoints: it
imports nothing from ``hf_numbers`` outside that folder.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import NamedTuple

from .parsing import format_number

__all__ = [
    "MAX_SCHEME_VOCABULARY",
    "NUMBER_SCHEMES",
    "SCHEME_TOKEN_RE",
    "NumberScheme",
    "fit_exponent_range",
]

NUMBER_SCHEMES = ("p10", "p1000", "b1999", "fp15")
"""The scheme names (``number_encoding`` values that rewrite numbers into scheme tokens)."""

MAX_SCHEME_VOCABULARY = 50_000
"""Most tokens a scheme may have (FP15 with 3 digits and 16 exponents, as in xVal: 28,801)."""

MAX_DIGITS = 17
"""Most significant digits: 17 write every float64 exactly."""

SCHEME_TOKEN_RE = re.compile(r"<\|(?:[+-]|[+-]?d[0-9]+(?:[+-]E[0-9]+)?|[+-]E[0-9]+)\|>")
"""Any string of the form of a scheme token, whatever the scheme, digits or exponent."""

_PARTS_RE = re.compile(r"<\|(?P<sign>[+-])?(?:d(?P<digits>[0-9]+))?(?:(?P<esign>[+-])E(?P<exp>[0-9]+))?\|>")


class _Slot(NamedTuple):
    """What one token of a number holds: a sign, how many digits, an exponent."""

    sign: bool
    digits: int
    exponent: bool


class _Parts(NamedTuple):
    """A value as written by the schemes: ``(-1)^negative * mantissa * 10^exponent``."""

    negative: bool
    mantissa: str
    exponent: int


def _token(sign: str = "", digits: str = "", exponent: int | None = None) -> str:
    body = sign + (f"d{digits}" if digits else "")
    if exponent is not None:
        body += f"{'-' if exponent < 0 else '+'}E{abs(exponent)}"
    return f"<|{body}|>"


@dataclass(frozen=True)
class NumberScheme:
    """One text encoding of numbers: value -> token strings -> value.

    Args:
        name: ``"p10"``, ``"p1000"``, ``"b1999"`` or ``"fp15"``.
        digits: significant digits of the mantissa (1-17; a multiple of 3 for P1000 / B1999).
        min_exponent, max_exponent: the exponents (of the integer mantissa) the tokens cover.

    Example:
        >>> scheme = NumberScheme("p10", digits=3, min_exponent=-3, max_exponent=2)
        >>> scheme.encode(-60.2)
        ['<|-|>', '<|d6|>', '<|d0|>', '<|d2|>', '<|-E1|>']
        >>> scheme.decode(scheme.encode(-60.2)), scheme.decode(["<|-|>", "<|d6|>"])
        (-60.2, None)
        >>> scheme.tokens_per_number, len(scheme.vocabulary())
        (5, 18)
    """

    name: str
    digits: int = 3
    min_exponent: int = -8
    max_exponent: int = 7

    def __post_init__(self) -> None:
        if self.name not in NUMBER_SCHEMES:
            raise ValueError(f"number scheme {self.name!r} is unknown; allowed: {', '.join(NUMBER_SCHEMES)}")
        for field_name in ("digits", "min_exponent", "max_exponent"):  # scheme_<field> in configs and tokenizers
            if isinstance(getattr(self, field_name), bool) or not isinstance(getattr(self, field_name), int):
                raise ValueError(f"scheme_{field_name} must be an int, got {getattr(self, field_name)!r}")
        if not 1 <= self.digits <= MAX_DIGITS:
            raise ValueError(f"scheme_digits must be in [1, {MAX_DIGITS}], got {self.digits}")
        if self.name in ("p1000", "b1999") and self.digits % 3:
            raise ValueError(
                f"{self.name} writes the mantissa in groups of 3 digits: scheme_digits must be a multiple of 3 "
                f"(3, 6, 9, ...), got {self.digits}"
            )
        if self.min_exponent > self.max_exponent:
            raise ValueError(
                f"scheme_min_exponent must be <= scheme_max_exponent, got [{self.min_exponent}, {self.max_exponent}]"
            )
        size = self.vocabulary_size
        if size > MAX_SCHEME_VOCABULARY:
            raise ValueError(
                f"{self.name} with {self.digits} digits and exponents [{self.min_exponent}, {self.max_exponent}] "
                f"needs {size} tokens; at most {MAX_SCHEME_VOCABULARY} are allowed: use fewer digits, a narrower "
                "exponent range or a scheme with more tokens per number (p10, p1000, b1999)"
            )

    # ------------------------------------------------------------------ layout
    @property
    def _slots(self) -> tuple[_Slot, ...]:
        groups = self.digits // 3
        if self.name == "p10":
            return (_Slot(True, 0, False), *[_Slot(False, 1, False)] * self.digits, _Slot(False, 0, True))
        if self.name == "p1000":
            return (_Slot(True, 0, False), *[_Slot(False, 3, False)] * groups, _Slot(False, 0, True))
        if self.name == "b1999":
            return (_Slot(True, 3, False), *[_Slot(False, 3, False)] * (groups - 1), _Slot(False, 0, True))
        return (_Slot(True, self.digits, True),)

    @property
    def tokens_per_number(self) -> int:
        """How many tokens every number takes."""
        return len(self._slots)

    @property
    def zero_exponent(self) -> int:
        """The exponent zero is written with: 0, or the end of the range nearest to 0."""
        return min(max(0, self.min_exponent), self.max_exponent)

    @property
    def vocabulary_size(self) -> int:
        """``len(self.vocabulary())``, computed without building it."""
        exponents = self.max_exponent - self.min_exponent + 1
        if self.name == "p10":
            return 2 + 10 + exponents
        if self.name == "p1000":
            return 2 + (901 if self.digits == 3 else 1000) + exponents
        if self.name == "b1999":
            return 1801 + (1000 if self.digits > 3 else 0) + exponents
        return 2 * 9 * 10 ** (self.digits - 1) * exponents + 1  # signs x normalised mantissas x exponents, zero

    def vocabulary(self) -> list[str]:
        """Every token string of this scheme, in a fixed order (signs, digits, exponents).

        Example:
            >>> NumberScheme("p1000", min_exponent=0, max_exponent=0).vocabulary()[:4]
            ['<|+|>', '<|-|>', '<|d000|>', '<|d100|>']
        """
        exponents = range(self.min_exponent, self.max_exponent + 1)
        if self.name == "fp15":
            mantissas = range(10 ** (self.digits - 1), 10**self.digits)
            zero = _token("+", "0" * self.digits, self.zero_exponent)
            return [zero] + [_token(sign, str(m), e) for sign in "+-" for m in mantissas for e in exponents]
        signs = [_token(sign) for sign in "+-"]
        groups = [_token("", f"{g:03d}") for g in range(1000) if self.digits > 3 or g == 0 or g >= 100]
        if self.name == "p10":
            mantissa_tokens = signs + [_token("", str(d)) for d in range(10)]
        elif self.name == "p1000":
            mantissa_tokens = signs + groups
        else:
            first = [_token("+", "000")] + [_token(sign, str(g)) for sign in "+-" for g in range(100, 1000)]
            mantissa_tokens = first + (groups if self.digits > 3 else [])
        return mantissa_tokens + [_token(exponent=e) for e in exponents]

    def start_tokens(self) -> list[str]:
        """The tokens that can begin a number (byte-level tokenizers give each a space-prefixed copy).

        Example:
            >>> NumberScheme("p10").start_tokens()
            ['<|+|>', '<|-|>']
        """
        vocabulary = self.vocabulary()
        if self.name == "fp15":
            return vocabulary
        if self.name == "b1999":
            return vocabulary[:1801]  # the signed first groups
        return vocabulary[:2]  # the signs

    # ------------------------------------------------------------------ value -> tokens
    def split(self, value: float) -> _Parts:
        """``value`` rounded to ``digits`` significant digits, as sign, mantissa digits and exponent.

        The exponent is not checked against the range (see :meth:`encode`).

        Example:
            >>> NumberScheme("p10").split(-60.2)
            _Parts(negative=True, mantissa='602', exponent=-1)
        """
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(
                f"cannot write the non-finite value {value!r} as {self.name} tokens; allowed: finite values"
            )
        if value == 0:
            return _Parts(False, "0" * self.digits, self.zero_exponent)
        rounded = Context(prec=self.digits, rounding=ROUND_HALF_EVEN).plus(Decimal(format_number(value)))
        sign, digit_tuple, exponent = rounded.as_tuple()
        padding = self.digits - len(digit_tuple)
        mantissa = "".join(map(str, digit_tuple)) + "0" * padding
        if math.isinf(float(f"{mantissa}e{exponent - padding}")):
            raise ValueError(f"{value!r} rounded to {self.digits} significant digits overflows float64")
        return _Parts(bool(sign), mantissa, exponent - padding)

    def encode(self, value: float) -> list[str]:
        """The token strings of ``value`` (rounded to ``digits`` significant digits).

        Raises:
            ValueError: for NaN, infinity, or a value whose exponent is outside the range.

        Example:
            >>> scheme = NumberScheme("b1999", min_exponent=-5, max_exponent=3)
            >>> scheme.encode(0.0015), scheme.encode(-123456.0)
            (['<|+d150|>', '<|-E5|>'], ['<|-d123|>', '<|+E3|>'])
            >>> scheme.encode(1e9)
            Traceback (most recent call last):
            ...
            ValueError: 1000000000.0 is written as 100E7 with 3 significant digits; exponent 7 is outside ...
        """
        parts = self.split(value)
        if not self.min_exponent <= parts.exponent <= self.max_exponent:
            raise ValueError(
                f"{value!r} is written as {parts.mantissa}E{parts.exponent} with {self.digits} significant digits; "
                f"exponent {parts.exponent} is outside this {self.name} tokenizer's range "
                f"[{self.min_exponent}, {self.max_exponent}] (scheme_min_exponent, scheme_max_exponent): "
                "fit the range to the data"
            )
        sign = "-" if parts.negative else "+"
        if self.name == "fp15":
            return [_token(sign, parts.mantissa, parts.exponent)]
        if self.name == "p10":
            body = [_token(sign)] + [_token("", d) for d in parts.mantissa]
        else:
            groups = [parts.mantissa[i : i + 3] for i in range(0, self.digits, 3)]
            head = [_token(sign), _token("", groups[0])] if self.name == "p1000" else [_token(sign, groups[0])]
            body = head + [_token("", g) for g in groups[1:]]
        return body + [_token(exponent=parts.exponent)]

    def round(self, value: float) -> float:
        """``value`` as its tokens read back: rounded to ``digits`` significant digits.

        Example:
            >>> NumberScheme("p10").round(3.14159), NumberScheme("p10", digits=7).round(1234567.0)
            (3.14, 1234567.0)
        """
        parts = self.split(value)
        return float(f"{'-' if parts.negative else ''}{parts.mantissa}e{parts.exponent}")

    # ------------------------------------------------------------------ tokens -> value
    @staticmethod
    def _fits(match: re.Match | None, slot: _Slot) -> bool:
        return (
            match is not None
            and (match["sign"] is not None) == slot.sign
            and len(match["digits"] or "") == slot.digits
            and (match["exp"] is not None) == slot.exponent
        )

    def decode(self, tokens: Sequence[str]) -> float | None:
        """The value of exactly one number's tokens, or None if they are not what :meth:`encode` writes.

        Example:
            >>> scheme = NumberScheme("p1000")
            >>> scheme.decode(["<|+|>", "<|d150|>", "<|-E5|>"]), scheme.decode(["<|+|>", "<|d015|>", "<|-E4|>"])
            (0.0015, None)
        """
        slots = self._slots
        if len(tokens) != len(slots):
            return None
        matches = [_PARTS_RE.fullmatch(token) for token in tokens]
        if not all(self._fits(match, slot) for match, slot in zip(matches, slots)):
            return None
        negative = next(match["sign"] for match in matches if match["sign"]) == "-"
        mantissa = "".join(match["digits"] or "" for match in matches)
        exponent_match = next(match for match in matches if match["exp"])
        exponent = int(exponent_match["exp"]) * (-1 if exponent_match["esign"] == "-" else 1)
        value = float(f"{'-' if negative else ''}{mantissa}e{exponent}")
        try:
            canonical = self.encode(value) == list(tokens)
        except ValueError:  # out of range, or overflowing
            return None
        return value if canonical else None

    def parse(self, tokens: Sequence[str]) -> list[tuple[int, float]]:
        """The numbers in a run of tokens, left to right: ``(index of the first token, value)``.

        Each position starts a number if the next :attr:`tokens_per_number` tokens decode;
        the tokens of malformed runs are skipped one by one.

        Example:
            >>> scheme = NumberScheme("b1999")
            >>> scheme.parse(["<|-E1|>", "<|-d602|>", "<|-E1|>", "<|+d100|>"])
            [(1, -60.2)]
        """
        found, index, width = [], 0, self.tokens_per_number
        while index + width <= len(tokens):
            value = self.decode(tokens[index : index + width])
            if value is None:
                index += 1
            else:
                found.append((index, value))
                index += width
        return found


def fit_exponent_range(values: Iterable[float], digits: int) -> tuple[int, int]:
    """The smallest exponent range that writes every value of ``values`` with ``digits`` digits.

    Zero is written with any range; without other values the range is ``(0, 0)``.

    Example:
        >>> fit_exponent_range([21.5, -3.0, 0.0, 1500.0], digits=3)
        (-2, 1)
    """
    scheme = NumberScheme("p10", digits=digits, min_exponent=0, max_exponent=0)
    exponents = [scheme.split(value).exponent for value in values if value != 0]
    return (min(exponents), max(exponents)) if exponents else (0, 0)
