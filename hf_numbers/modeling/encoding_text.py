"""The text baselines' registry entries: number encodings without a number module.

``text`` leaves numbers to the backbone's own sub-word tokens; ``p10``, ``p1000``, ``b1999`` and
``fp15`` rewrite them into one of Charton's schemes (``text_schemes.py``). They describe themselves
as the number encodings do (options, validation, fitting), so the same switch and metrics compare
them, but ``has_number_module`` is False: the tokenizer carries the numbers and the model is the
plain backbone (docs/text-baselines.md).

Example:
    >>> P10Encoding.has_number_module, P10Encoding.tokenizer_options({})["number_scheme"]
    (False, 'p10')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from .encoding_base import EncodingOption
from .parsing import DIGIT_ORDERS
from .text_schemes import B1999Scheme, FP15Scheme, NumberScheme, P10Scheme, P1000Scheme, fit_exponent_range

__all__ = [
    "DIGIT_ORDER",
    "SCHEME_OPTIONS",
    "B1999Encoding",
    "FP15Encoding",
    "P10Encoding",
    "P1000Encoding",
    "SchemeEncoding",
    "TextEncoding",
]

DIGIT_ORDER = EncodingOption(
    "text_digit_order",
    str,
    "as_written",
    f"text and digits: the order a number's digits reach the model in, one of {', '.join(DIGIT_ORDERS)} "
    "(units_first: 1250 as 0521, turned back when decoded; sums and products are written from the units up)",
)
"""The option of the encodings that leave numbers to the backbone's digit tokens (``text``, ``digits``)."""

SCHEME_OPTIONS = (
    EncodingOption(
        "scheme_digits",
        int,
        3,
        "Text schemes (p10, p1000, b1999, fp15): significant digits every number is rounded to and written "
        "with, 1-17 (a multiple of 3 for p1000 and b1999)",
    ),
    EncodingOption(
        "scheme_min_exponent",
        int,
        -8,
        "Text schemes: smallest exponent of a number's integer mantissa (-60.2 is 602E-1 with 3 digits); "
        "values needing a smaller one are a ValueError",
        fitted=True,
    ),
    EncodingOption(
        "scheme_max_exponent",
        int,
        7,
        "Text schemes: largest exponent of a number's integer mantissa, >= scheme_min_exponent",
        fitted=True,
    ),
)
"""The options the four schemes share: config fields, tokenizer arguments and ``hf-numbers train`` flags."""


class TextEncoding:
    """``text``: numbers stay ordinary text, cut by the backbone's own (sub-word) tokenizer.

    Example:
        >>> TextEncoding.has_number_module, TextEncoding.tokenizer_options({})
        (False, {'number_scheme': 'text', 'digit_order': 'as_written'})
    """

    name: ClassVar[str] = "text"
    options: ClassVar[tuple[EncodingOption, ...]] = (DIGIT_ORDER,)
    needs_scaling: ClassVar[bool] = False
    scales_embedding: ClassVar[bool] = False
    continuous_output: ClassVar[bool] = False
    has_number_module: ClassVar[bool] = False
    adds_digit_values: ClassVar[bool] = False

    @classmethod
    def validate_options(cls, config: Any) -> None:
        """A model of this encoding has no number token: ``num_token_id(s)`` must be unset; a digit order it takes."""
        if config.number_encoding == cls.name and config.num_token_ids:
            raise ValueError(
                f"number_encoding={cls.name!r} writes numbers as ordinary tokens: num_token_id and num_token_ids "
                f"must be unset (its tokenizer has no number token), got num_token_ids={config.num_token_ids}"
            )
        order = config.text_digit_order
        if order not in DIGIT_ORDERS or config.number_encoding == cls.name and order != "as_written" and (
            DIGIT_ORDER not in cls.options
        ):
            raise ValueError(
                f"text_digit_order={order!r} with number_encoding={config.number_encoding!r}; allowed: "
                f"{', '.join(DIGIT_ORDERS)}, and units_first only for the encodings that write digits (text, digits)"
            )

    @classmethod
    def fit_options(cls, values: np.ndarray, given: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """Nothing to fit."""
        return {}

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Values that are not finite (text writes every finite value)."""
        return ~np.isfinite(values), "finite values"

    @classmethod
    def tokenizer_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """The tokenizer's ``number_scheme`` and the digits' order."""
        return {"number_scheme": "text", "digit_order": options.get(DIGIT_ORDER.name, DIGIT_ORDER.default)}


class SchemeEncoding(TextEncoding):
    """A Charton scheme: every number as sign, ``scheme_digits`` digits and an exponent, in the scheme's tokens.

    The exponent range is fitted to the data (for the given ``scheme_digits``) unless given.

    Example:
        >>> P10Encoding.fit_options(np.array([21.5, -3.0, 1500.0]), {"scheme_digits": 3})
        {'scheme_min_exponent': -2, 'scheme_max_exponent': 1}
        >>> P10Encoding.tokenizer_options({"scheme_digits": 7, "scheme_min_exponent": -6, "scheme_max_exponent": 0})
        {'number_scheme': 'p10', 'scheme_digits': 7, 'scheme_min_exponent': -6, 'scheme_max_exponent': 0}
    """

    options = SCHEME_OPTIONS
    scheme: ClassVar[type[NumberScheme]]
    """The scheme that writes the numbers (``text_schemes.py``)."""

    @classmethod
    def validate_options(cls, config: Any) -> None:
        """``num_token_ids`` unset when selected; the options valid for this scheme (for the others: P10's)."""
        super().validate_options(config)
        scheme = cls.scheme if config.number_encoding == cls.name else P10Scheme  # P10's checks all schemes share
        scheme(config.scheme_digits, config.scheme_min_exponent, config.scheme_max_exponent)

    @classmethod
    def fit_options(cls, values: np.ndarray, given: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """The exponent range that writes every value with the given (or default) significant digits."""
        digits = (given or {}).get("scheme_digits", SCHEME_OPTIONS[0].default)
        low, high = fit_exponent_range(values, digits)
        return {"scheme_min_exponent": low, "scheme_max_exponent": high}

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Values whose rounding overflows float64, or whose exponent is outside the given range."""
        digits = int(fields.get("scheme_digits", SCHEME_OPTIONS[0].default))
        low, high = fields.get("scheme_min_exponent"), fields.get("scheme_max_exponent")
        scheme = P10Scheme(digits, 0, 0)  # split() writes any exponent; the range is checked here
        out = np.zeros(len(values), dtype=bool)
        for index, value in enumerate(values):
            try:
                exponent = scheme.split(value).exponent
            except ValueError:  # not finite, or overflowing once rounded
                out[index] = True
                continue
            out[index] = value != 0 and (low is not None and exponent < low or high is not None and exponent > high)
        given = low is not None or high is not None
        exponents = f" and exponents in [{low}, {high}] (scheme_min_exponent, scheme_max_exponent)" if given else ""
        return out, f"finite values that stay finite rounded to {digits} significant digits (scheme_digits){exponents}"

    @classmethod
    def tokenizer_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"number_scheme": cls.name, **{o.name: options[o.name] for o in cls.options if o.name in options}}


class P10Encoding(SchemeEncoding):
    """P10: sign, one token per digit, exponent (``scheme_digits + 2`` tokens per number)."""

    name = "p10"
    scheme = P10Scheme


class P1000Encoding(SchemeEncoding):
    """P1000: sign, one token per 3 digits, exponent (``scheme_digits / 3 + 2`` tokens per number)."""

    name = "p1000"
    scheme = P1000Scheme


class B1999Encoding(SchemeEncoding):
    """B1999: the sign joined to the first 3 digits, further groups of 3, exponent (``scheme_digits / 3 + 1``)."""

    name = "b1999"
    scheme = B1999Scheme


class FP15Encoding(SchemeEncoding):
    """FP15: one token per number (sign, digits and exponent together; the vocabulary grows as ``10^digits``)."""

    name = "fp15"
    scheme = FP15Scheme
