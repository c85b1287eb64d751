"""The selected encoding's options as one sub-dict of a number config: ``config.json``'s ``encoding_config``.

Each encoding declares its options (:class:`EncodingOption`); a number config keeps those of *its* encoding only,
in ``encoding_config`` (an xVal model's ``config.json`` holds no FoNE option), and reads and sets them as
attributes (``config.fone_int_digits``), typed and checked by name. Configs saved before (every encoding's options
as flat fields) load through :func:`options_in_sub_dict`, which keeps the selected encoding's and drops the rest.

Example:
    >>> from hf_numbers import NumberGPT2Config
    >>> config = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="fone", fone_int_digits=4)
    >>> config.encoding_config, config.fone_int_digits
    ({'fone_int_digits': 4, 'fone_frac_digits': 3}, 4)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .encoding_base import EncodingOption
from .encoding_registry import NUMBER_ENCODINGS_REGISTRY, encoding_options, get_encoding

__all__ = ["coerce_option", "encoding_option", "option_owners", "options_in_sub_dict", "own_options"]


_OPTIONS: list[Any] = [None, {}]  # (the registry's names, every option by name) when last read


def _options() -> dict[str, EncodingOption]:
    """Every registered option by name, read again when the registry has changed (an encoding registered late)."""
    names = tuple(NUMBER_ENCODINGS_REGISTRY)
    if _OPTIONS[0] != names:
        _OPTIONS[:] = [names, {option.name: option for option in encoding_options()}]
    return _OPTIONS[1]


def encoding_option(name: str) -> EncodingOption | None:
    """The registered option named ``name``, or None."""
    return _options().get(name)


def own_options(number_encoding: str) -> dict[str, EncodingOption]:
    """The options of the encoding ``number_encoding``, by name."""
    return {option.name: option for option in get_encoding(number_encoding).options}


def option_owners(name: str) -> list[str]:
    """The encodings that take the option ``name``."""
    return [encoding for encoding in NUMBER_ENCODINGS_REGISTRY if name in own_options(encoding)]


def coerce_option(option: EncodingOption, value: Any) -> Any:
    """``value`` as ``option``'s type (an int for a float option becomes a float); ``ValueError`` naming the option
    otherwise."""
    kind = option.type
    fits = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not fits:
        kind_text = "True or False" if kind is bool else f"a {kind.__name__} ({option.help})"
        raise ValueError(f"{option.name} must be {kind_text}, got {value!r}")
    return value


def options_in_sub_dict(config_dict: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``config_dict`` with ``overrides`` (keyword arguments of ``from_pretrained``), its encoding's options in
    ``encoding_config``: flat options of an older ``config.json`` move there (other encodings' are dropped), and
    an override wins over what was saved. An override that is an option of another encoding is a ``ValueError``.

    Example:
        >>> options_in_sub_dict({"number_encoding": "fone", "fone_int_digits": 2, "exponent_num_bins": 8}, {})
        {'number_encoding': 'fone', 'encoding_config': {'fone_int_digits': 2}}
    """
    merged = {**config_dict, **overrides}
    if "number_encoding" not in merged:
        return merged
    own = own_options(merged["number_encoding"])
    foreign = [name for name in overrides if encoding_option(name) is not None and name not in own]
    if foreign:
        raise ValueError(f"{', '.join(foreign)}: not an option of number_encoding={merged['number_encoding']!r} "
                         f"(its options: {', '.join(own) or 'none'})")  # fmt: skip
    flat = {name: merged.pop(name) for name in list(merged) if encoding_option(name) is not None}
    saved = dict(merged.get("encoding_config") or {})
    if "number_encoding" in overrides:  # another encoding than the saved one: its options start anew
        saved = {name: value for name, value in saved.items() if name in own}
    merged["encoding_config"] = {**saved, **{name: value for name, value in flat.items() if name in own}}
    return merged
