"""The text schemes (Charton's P10, P1000, B1999, FP15): a value <-> the token strings that write it.

The text baselines of the xVal paper (Table 1): a value is rounded to ``digits`` significant digits,
written as sign, integer mantissa and exponent, and cut into tokens in one of four ways (one
:class:`NumberScheme` subclass each, :data:`NUMBER_SCHEMES`). No token text parses as a number, and
reading tokens back is strict, so a malformed run never counts as a prediction. The token table and
the rules (rounding, zero, the exponent range, strict reading) are in docs/text-baselines.md.

Example:
    >>> P10Scheme(digits=3, min_exponent=-3, max_exponent=2).encode(-60.2)
    ['<|-|>', '<|d6|>', '<|d0|>', '<|d2|>', '<|-E1|>']
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import ClassVar, NamedTuple

from .parsing import format_number

__all__ = [
    "MAX_SCHEME_VOCABULARY",
    "NUMBER_SCHEMES",
    "SCHEME_TOKEN_RE",
    "B1999Scheme",
    "FP15Scheme",
    "NumberScheme",
    "P1000Scheme",
    "P10Scheme",
    "fit_exponent_range",
    "make_scheme",
]

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
    """The base of the text encodings of numbers: value -> token strings -> value.

    A scheme (a subclass per scheme, :data:`NUMBER_SCHEMES`) says how it cuts a number's sign, mantissa
    digits and exponent into tokens (:meth:`_number_tokens`) and which tokens that takes
    (:meth:`_mantissa_vocabulary`); this class does the rest: rounding, the exponent range, the
    vocabulary's exponent tokens, and reading tokens back.

    Args:
        digits: significant digits of the mantissa (1-17; a multiple of ``group_digits``).
        min_exponent, max_exponent: the exponents (of the integer mantissa) the tokens cover.

    Example:
        >>> scheme = P10Scheme(digits=3, min_exponent=-3, max_exponent=2)
        >>> scheme.encode(-60.2)
        ['<|-|>', '<|d6|>', '<|d0|>', '<|d2|>', '<|-E1|>']
        >>> scheme.decode(scheme.encode(-60.2)), scheme.decode(["<|-|>", "<|d6|>"])
        (-60.2, None)
        >>> scheme.tokens_per_number, len(scheme.vocabulary())
        (5, 18)
    """

    name: ClassVar[str] = ""
    """The scheme's ``number_encoding`` (and the tokenizer's ``number_scheme``)."""
    group_digits: ClassVar[int] = 1
    """Digits of the mantissa per token; ``digits`` must be a multiple."""

    digits: int = 3
    min_exponent: int = -8
    max_exponent: int = 7

    def __post_init__(self) -> None:
        for field_name in ("digits", "min_exponent", "max_exponent"):  # scheme_<field> in configs and tokenizers
            if isinstance(getattr(self, field_name), bool) or not isinstance(getattr(self, field_name), int):
                raise ValueError(f"scheme_{field_name} must be an int, got {getattr(self, field_name)!r}")
        if not 1 <= self.digits <= MAX_DIGITS:
            raise ValueError(f"scheme_digits must be in [1, {MAX_DIGITS}], got {self.digits}")
        group = self.group_digits
        if self.digits % group:
            raise ValueError(
                f"{self.name} writes the mantissa in groups of {group} digits: scheme_digits must be a multiple of "
                f"{group} ({group}, {2 * group}, {3 * group}, ...), got {self.digits}"
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

    # ------------------------------------------------------------------ what each scheme says
    def _number_tokens(self, sign: str, mantissa: str, exponent: int) -> list[str]:
        """The tokens of one number: ``sign`` ``+``/``-``, ``mantissa`` its ``digits`` digits, ``exponent``."""
        raise NotImplementedError

    def _mantissa_vocabulary(self) -> list[str]:
        """Every token of signs and mantissa digits, in a fixed order (the exponent tokens follow)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ layout
    @functools.cached_property
    def _slots(self) -> tuple[_Slot, ...]:
        """What each token of a number holds, read off the tokens of a sample number."""
        matches = [_PARTS_RE.fullmatch(token) for token in self._number_tokens("+", "1" * self.digits, 0)]
        return tuple(_Slot(m["sign"] is not None, len(m["digits"] or ""), m["exp"] is not None) for m in matches)

    @property
    def tokens_per_number(self) -> int:
        """How many tokens every number takes."""
        return len(self._slots)

    @property
    def zero_exponent(self) -> int:
        """The exponent zero is written with: 0, or the end of the range nearest to 0."""
        return min(max(0, self.min_exponent), self.max_exponent)

    @property
    def exponent_count(self) -> int:
        """How many exponents the range holds."""
        return self.max_exponent - self.min_exponent + 1

    @property
    def vocabulary_size(self) -> int:
        """``len(self.vocabulary())``, computed without building the exponents' tokens."""
        return len(self._mantissa_vocabulary()) + self.exponent_count

    def vocabulary(self) -> list[str]:
        """Every token string of this scheme, in a fixed order (signs, digits, exponents).

        Example:
            >>> P1000Scheme(min_exponent=0, max_exponent=0).vocabulary()[:4]
            ['<|+|>', '<|-|>', '<|d000|>', '<|d100|>']
        """
        exponents = range(self.min_exponent, self.max_exponent + 1)
        return self._mantissa_vocabulary() + [_token(exponent=e) for e in exponents]

    def start_tokens(self) -> list[str]:
        """The tokens that can begin a number (byte-level tokenizers give each a space-prefixed copy).

        Example:
            >>> P10Scheme().start_tokens()
            ['<|+|>', '<|-|>']
        """
        return [token for token in self.vocabulary() if self._fits(_PARTS_RE.fullmatch(token), self._slots[0])]

    def _groups(self, mantissa: str) -> list[str]:
        """The mantissa cut into groups of ``group_digits`` digits."""
        return [mantissa[i : i + self.group_digits] for i in range(0, self.digits, self.group_digits)]

    def _group_tokens(self) -> list[str]:
        """The tokens of one unsigned group of 3 digits: 000-999, or 000 and 100-999 where it is the only group."""
        return [_token("", f"{g:03d}") for g in range(1000) if self.digits > 3 or g == 0 or g >= 100]

    # ------------------------------------------------------------------ value -> tokens
    def split(self, value: float) -> _Parts:
        """``value`` rounded to ``digits`` significant digits, as sign, mantissa digits and exponent.

        The exponent is not checked against the range (see :meth:`encode`).

        Example:
            >>> P10Scheme().split(-60.2)
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
            >>> scheme = B1999Scheme(min_exponent=-5, max_exponent=3)
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
        return self._number_tokens("-" if parts.negative else "+", parts.mantissa, parts.exponent)

    def round(self, value: float) -> float:
        """``value`` as its tokens read back: rounded to ``digits`` significant digits.

        Example:
            >>> P10Scheme().round(3.14159), P10Scheme(digits=7).round(1234567.0)
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
            >>> scheme = P1000Scheme()
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
            >>> scheme = B1999Scheme()
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


_SIGNS = [_token("+"), _token("-")]


class P10Scheme(NumberScheme):
    """P10: sign, one token per digit, exponent (``digits + 2`` tokens per number)."""

    name = "p10"

    def _number_tokens(self, sign: str, mantissa: str, exponent: int) -> list[str]:
        return [_token(sign), *(_token("", digit) for digit in mantissa), _token(exponent=exponent)]

    def _mantissa_vocabulary(self) -> list[str]:
        return _SIGNS + [_token("", str(digit)) for digit in range(10)]


class P1000Scheme(NumberScheme):
    """P1000: sign, one token per 3 digits, exponent (``digits / 3 + 2`` tokens per number)."""

    name = "p1000"
    group_digits = 3

    def _number_tokens(self, sign: str, mantissa: str, exponent: int) -> list[str]:
        return [_token(sign), *(_token("", group) for group in self._groups(mantissa)), _token(exponent=exponent)]

    def _mantissa_vocabulary(self) -> list[str]:
        return _SIGNS + self._group_tokens()


class B1999Scheme(NumberScheme):
    """B1999: the sign joined to the first 3 digits, further groups of 3, exponent (``digits / 3 + 1`` tokens)."""

    name = "b1999"
    group_digits = 3

    def _number_tokens(self, sign: str, mantissa: str, exponent: int) -> list[str]:
        first, *rest = self._groups(mantissa)
        return [_token(sign, first), *(_token("", group) for group in rest), _token(exponent=exponent)]

    def _mantissa_vocabulary(self) -> list[str]:
        first = [_token("+", "000")] + [_token(sign, str(g)) for sign in "+-" for g in range(100, 1000)]
        return first + (self._group_tokens() if self.digits > 3 else [])


class FP15Scheme(NumberScheme):
    """FP15: one token per number, sign, digits and exponent together (the vocabulary grows as ``10^digits``)."""

    name = "fp15"

    def _number_tokens(self, sign: str, mantissa: str, exponent: int) -> list[str]:
        return [_token(sign, mantissa, exponent)]

    @property
    def vocabulary_size(self) -> int:
        return 2 * 9 * 10 ** (self.digits - 1) * self.exponent_count + 1  # signs x normalised mantissas x exponents, 0

    def vocabulary(self) -> list[str]:
        mantissas = range(10 ** (self.digits - 1), 10**self.digits)
        exponents = range(self.min_exponent, self.max_exponent + 1)
        zero = _token("+", "0" * self.digits, self.zero_exponent)
        return [zero] + [_token(sign, str(m), e) for sign in "+-" for m in mantissas for e in exponents]


NUMBER_SCHEMES: dict[str, type[NumberScheme]] = {
    scheme.name: scheme for scheme in (P10Scheme, P1000Scheme, B1999Scheme, FP15Scheme)
}
"""Every scheme by its name (the ``number_encoding`` values that rewrite numbers into scheme tokens)."""


def make_scheme(name: str, digits: int = 3, min_exponent: int = -8, max_exponent: int = 7) -> NumberScheme:
    """The scheme named ``name`` with these options; ``ValueError`` listing the names if unknown.

    Example:
        >>> make_scheme("fp15", min_exponent=-1, max_exponent=1).encode(-60.2)
        ['<|-d602-E1|>']
    """
    if name not in NUMBER_SCHEMES:
        raise ValueError(f"number scheme {name!r} is unknown; allowed: {', '.join(NUMBER_SCHEMES)}")
    return NUMBER_SCHEMES[name](digits, min_exponent, max_exponent)


def fit_exponent_range(values: Iterable[float], digits: int) -> tuple[int, int]:
    """The smallest exponent range that writes every value of ``values`` with ``digits`` digits.

    Zero is written with any range; without other values the range is ``(0, 0)``.

    Example:
        >>> fit_exponent_range([21.5, -3.0, 0.0, 1500.0], digits=3)
        (-2, 1)
    """
    scheme = P10Scheme(digits=digits, min_exponent=0, max_exponent=0)
    exponents = [scheme.split(value).exponent for value in values if value != 0]
    return (min(exponents), max(exponents)) if exponents else (0, 0)
