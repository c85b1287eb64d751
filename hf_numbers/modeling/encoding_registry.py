"""The registry of number encodings: the one list of them, by name.

Configs (``number_encoding`` and every option field), training (fitting options, choosing the scaler
and the tokenizer), the CLI and the test matrix read :data:`NUMBER_ENCODINGS_REGISTRY`, so nothing
else lists encodings and adding one is a :class:`NumberEncoding` module plus one line here (see
docs/design.md, "Adding an encoding"). The text baselines (``encoding_text.py``) are entries without
a number module.

Example:
    >>> get_encoding("fone").needs_scaling
    False
"""

from __future__ import annotations

import functools
from dataclasses import field
from typing import Any

from .encoding_base import EncodingOption, NumberEncoding
from .encoding_bittokens import BitTokensEncoding
from .encoding_digits import DigitsEncoding, DigitValueEmbedding
from .encoding_exponent import ExponentEncoding
from .encoding_float import FloatBitEncoding
from .encoding_fone import FoNEEncoding
from .encoding_text import B1999Encoding, FP15Encoding, P10Encoding, P1000Encoding, TextEncoding
from .encoding_xval import XValEncoding

__all__ = [
    "NUMBER_ENCODINGS",
    "NUMBER_ENCODINGS_REGISTRY",
    "add_option_fields",
    "build_digit_values",
    "build_number_encoding",
    "encoding_options",
    "get_encoding",
]

EncodingClass = type[NumberEncoding] | type[TextEncoding]
"""A registry entry: a number encoding, or a text baseline (``has_number_module`` False)."""

NUMBER_ENCODINGS_REGISTRY: dict[str, EncodingClass] = {
    encoding.name: encoding
    for encoding in (
        XValEncoding,
        FoNEEncoding,
        FloatBitEncoding,
        ExponentEncoding,
        BitTokensEncoding,
        TextEncoding,
        P10Encoding,
        P1000Encoding,
        B1999Encoding,
        FP15Encoding,
        DigitsEncoding,
    )
}
"""Every encoding class by its ``name`` (the value of ``config.number_encoding``)."""

NUMBER_ENCODINGS: tuple[str, ...] = tuple(NUMBER_ENCODINGS_REGISTRY)
"""The names of the registered encodings."""


def get_encoding(name: str) -> EncodingClass:
    """The encoding class registered as ``name``; ``ValueError`` listing the allowed names otherwise.

    Example:
        >>> get_encoding("fone").needs_scaling, [option.name for option in get_encoding("fone").options]
        (False, ['fone_int_digits', 'fone_frac_digits'])
    """
    if name not in NUMBER_ENCODINGS_REGISTRY:
        raise ValueError(f"number_encoding={name!r} is unknown; allowed: {', '.join(NUMBER_ENCODINGS_REGISTRY)}")
    return NUMBER_ENCODINGS_REGISTRY[name]


def build_number_encoding(config: Any) -> NumberEncoding | None:
    """The number module of the encoding named by ``config.number_encoding``; None for a text baseline.

    Example:
        >>> from hf_numbers import NumberGPT2Config
        >>> build_number_encoding(NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="float")).name
        'float'
        >>> build_number_encoding(NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="p10")) is None
        True
    """
    encoding = get_encoding(config.number_encoding)
    return encoding(config) if encoding.has_number_module else None


def build_digit_values(config: Any) -> DigitValueEmbedding | None:
    """The value embedding of the backbone's own digit tokens (``digits``); None for every other encoding."""
    encoding = get_encoding(config.number_encoding)
    return DigitValueEmbedding(config) if encoding.adds_digit_values else None


def encoding_options() -> list[EncodingOption]:
    """Every option of every registered encoding, in registry order (options shared by several once).

    Example:
        >>> [option.name for option in encoding_options()][:2]
        ['fone_int_digits', 'fone_frac_digits']
    """
    unique = {id(option): option for encoding in NUMBER_ENCODINGS_REGISTRY.values() for option in encoding.options}
    return list(unique.values())


def add_option_fields(cls: type | None = None, *, unset_default: bool = False) -> Any:
    """Class decorator, applied under ``@dataclass``: one field per option of every registered encoding.

    Training arguments use ``@add_option_fields(unset_default=True)`` (a config keeps its encoding's options in
    ``encoding_config`` instead, ``encoding_config.py``): each field is ``<type> | None`` and defaults to
    None, meaning "not given": training fits the option to the data or leaves the encoding's
    default; the field's help says which.

    Example:
        >>> from dataclasses import dataclass, fields
        >>> @dataclass
        ... @add_option_fields
        ... class Options:
        ...     pass
        >>> [f.default for f in fields(Options)][:2]
        [7, 3]
    """
    if cls is None:
        return functools.partial(add_option_fields, unset_default=unset_default)
    annotations = cls.__dict__.get("__annotations__", {})
    for option in encoding_options():
        if unset_default:
            unset = "fitted to the data" if option.fitted else option.default
            annotation, default, help_text = f"{option.type.__name__} | None", None, f"{option.help}; default: {unset}."
        else:
            annotation, default, help_text = option.type.__name__, option.default, option.help
        annotations[option.name] = annotation
        setattr(cls, option.name, field(default=default, metadata={"help": help_text}))
    cls.__annotations__ = annotations
    return cls
