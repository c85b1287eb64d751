"""Consistency checks of a number model's inputs, its saved checkpoint and its tokenizer.

A mismatch between these parts does not crash on its own: the model would just not see some
numbers (a config missing one of the tokenizer's number ids, another run's tokenizer) or run with
defaults instead of the saved options. These checks turn each into a ``ValueError`` that names
the problem (:func:`checked_input_numbers`, :func:`check_neutral_elsewhere`,
:func:`check_tokenizer_matches`, :func:`check_saved_config`, :func:`check_number_weights`).

Example:
    >>> to_float64([12.34]).dtype  # a Python list read as float64, not torch's float32
    torch.float64
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch

from .encoding_base import refuse_where
from .encoding_registry import get_encoding
from .parsing import NEUTRAL_NUMBER

__all__ = [
    "NUMBER_MODULES",
    "check_neutral_elsewhere",
    "check_number_weights",
    "check_saved_config",
    "check_tokenizer_matches",
    "checked_input_numbers",
    "saved_config_dict",
    "to_float64",
]

NUMBER_MODULES = ("number_encoding", "digit_values", "digit_lookahead")
"""The number model's own modules (the number encoding; the digits' value embedding; the digit lookahead's heads):
they initialise themselves, train whole under LoRA, and a checkpoint of the model must hold their weights."""
NUMBER_MODULE_PREFIX = tuple(f"{name}." for name in NUMBER_MODULES)
"""State-dict prefixes of the number modules' weights."""
_HUB_KWARGS = ("cache_dir", "force_download", "proxies", "token", "local_files_only", "revision", "subfolder")
"""``from_pretrained`` arguments that say where ``config.json`` comes from."""


def to_float64(values: Any, device: torch.device | str | None = None) -> torch.Tensor:
    """``values`` as a float64 tensor; Python lists and floats are read as float64, not float32.

    ``torch.as_tensor([12.34])`` is float32 (12.34000015...), which FoNE would read as a value
    with more fractional digits than it has; numpy reads Python floats as float64. Booleans and
    complex values keep their dtype, for the caller to refuse.

    Example:
        >>> to_float64([[1.0, 12.34]])[0, 1].item()
        12.34
    """
    if not isinstance(values, torch.Tensor):
        converted = torch.as_tensor(values)  # torch's own conversion (numpy arrays, lists of tensors)
        if converted.is_floating_point() and not isinstance(values, np.ndarray):
            converted = torch.as_tensor(values, dtype=torch.float64)  # Python floats as float64, not float32
        values = converted
    values = values.to(device) if device is not None else values
    return values if values.is_complex() or values.dtype == torch.bool else values.double()


def check_neutral_elsewhere(
    input_ids: torch.Tensor, numbers: torch.Tensor, is_num: torch.Tensor, num_token_ids: Iterable[int]
) -> None:
    """Raise ``ValueError`` where ``numbers`` holds a value other than 1.0 at a token that is not a number token.

    The tokenizer writes 1.0 at every other token, so a value there means that the model does
    not count that token as a number: most often its config lacks one of the tokenizer's number
    ids (byte-level tokenizers have a second number token, ``" [NUM]"``).

    Example:
        >>> ids = torch.tensor([[5, 7]])
        >>> check_neutral_elsewhere(ids, torch.tensor([[1.0, 2.5]]), ids == 5, [5])
        Traceback (most recent call last):
        ...
        ValueError: input_numbers holds 2.5 at position (0, 1), whose token id 7 is not a number token of this ...
    """
    stray = ~is_num & (numbers != NEUTRAL_NUMBER)  # NaN != 1.0: a NaN is stray too
    if stray.any():
        position = tuple(int(i) for i in stray.nonzero()[0])
        raise ValueError(
            f"input_numbers holds {numbers[position].item()!r} at position {position}, whose token id "
            f"{int(input_ids[position])} is not a number token of this model (config.num_token_ids = "
            f"{list(num_token_ids)}); only number tokens carry values ({NEUTRAL_NUMBER} elsewhere). Build the config "
            "with every id of tokenizer.num_token_ids (Number*Config.from_tokenizer)"
        )


def checked_input_numbers(
    input_ids: torch.Tensor,
    input_numbers: Any,
    is_num: torch.Tensor,
    encoding: Any,
    num_token_ids: Iterable[int],
    scaling: Any = None,
) -> torch.Tensor:
    """``input_numbers`` as float64, after every check of a model's ``forward``; 1.0 everywhere when None.

    ``ValueError`` for a missing value at a number token, a shape other than ``input_ids``',
    non-real values, a value the encoding cannot represent (``encoding.refused``) and a
    value at a token that is not a number token (:func:`check_neutral_elsewhere`). With a
    ``scaling`` (the config's ``NumberScaling``), the values at number tokens are returned scaled
    (the model's units) and the encoding checks those.

    The values are checked by one vectorised mask and one host sync (:func:`refuse_where`; under
    ``torch.compile`` an assert without a graph break); the message is worked out only for a refused batch.

    Example:
        >>> numbers = checked_input_numbers(ids, [[1.0, 12.34]], ids == 5, model.number_encoding, [5])  # doctest: +SKIP
    """
    if input_numbers is None:
        refuse_where(is_num, lambda: "input_ids contain number tokens but input_numbers is None; pass their values")
        return torch.full(input_ids.shape, NEUTRAL_NUMBER, dtype=torch.float64, device=input_ids.device)
    given_dtype = getattr(input_numbers, "dtype", None)  # a float32 tensor cannot hold 12.34 exactly
    numbers = to_float64(input_numbers, input_ids.device)
    if numbers.shape != input_ids.shape:
        raise ValueError(
            f"input_numbers has shape {tuple(numbers.shape)} but input_ids has shape {tuple(input_ids.shape)}; "
            "they must match (one value per token)"
        )
    if numbers.is_complex() or numbers.dtype == torch.bool:
        raise ValueError(f"input_numbers must hold real numbers (float64 preferred), got dtype {numbers.dtype}")
    scaled = numbers
    if scaling is not None and not scaling.is_identity:
        scaled = torch.where(is_num, scaling.transform(numbers), numbers)
    bad = encoding.refused(scaled, is_num) | (~is_num & (numbers != NEUTRAL_NUMBER))  # NaN != 1.0: stray too
    refuse_where(bad, lambda: _input_numbers_error(input_ids, numbers, scaled, is_num, encoding, num_token_ids,
                                                   scaling, given_dtype))
    return scaled


def _input_numbers_error(
    input_ids: torch.Tensor, numbers: torch.Tensor, scaled: torch.Tensor, is_num: torch.Tensor, encoding: Any,
    num_token_ids: Iterable[int], scaling: Any, given_dtype: Any,
) -> str:
    """The message of a refused ``input_numbers``: the encoding's range first, then a value at another token."""
    refused = encoding.refused(scaled, is_num)
    if refused.any():
        name = "input_numbers (after the config's number scaling)" if scaled is not numbers else "input_numbers"
        error = f"{name} {encoding.describe_refused(scaled, refused)}"
        if _rounding_is_the_cause(given_dtype, numbers, is_num, encoding, scaling):
            return (
                f"{error}. input_numbers came as {given_dtype}, which rounds most decimals (12.34 is "
                "12.34000015... in float32): pass float64, as the number tokenizers return"
            )
        return error
    try:
        check_neutral_elsewhere(input_ids, numbers, is_num, num_token_ids)
    except ValueError as error:
        return str(error)
    return "input_numbers holds a value the model refuses"  # not reached: one of the checks above fails


def _rounding_is_the_cause(
    dtype: Any, numbers: torch.Tensor, is_num: torch.Tensor, encoding: Any, scaling: Any
) -> bool:
    """Whether values given in float32 / float16 fail the encoding's check only through that rounding: as the
    shortest decimals that round to them (12.34 for 12.34000015...), they would pass."""
    narrow = {torch.float32: np.float32, torch.float16: np.float16, np.float32: np.float32, np.float16: np.float16}
    dtype = dtype.type if isinstance(dtype, np.dtype) else dtype
    if dtype not in narrow or (scaling is not None and not scaling.is_identity):
        return False
    decimals = [float(str(narrow[dtype](value))) for value in numbers[is_num].tolist()]
    restored = numbers.clone()
    restored[is_num] = torch.tensor(decimals, dtype=numbers.dtype, device=numbers.device)
    return not encoding.refused(restored, is_num).any()


def _encoding_options(config: Any) -> dict[str, Any]:
    encoding = get_encoding(config.number_encoding)
    return {option.name: getattr(config, option.name) for option in encoding.options}


def check_tokenizer_matches(model_or_config: Any, tokenizer: Any) -> None:
    """Raise ``ValueError`` unless ``tokenizer`` is the number tokenizer the model was built for.

    Checked: the number token ids (``tokenizer.num_token_ids`` against ``config.num_token_ids``),
    the text scheme and its options for a text encoding (none for a number encoding), and that
    every token id fits the model's embeddings (``len(tokenizer) <= config.vocab_size``).
    ``load_trained`` and ``hf-numbers evaluate`` call it; call it after loading a model and a
    tokenizer from different places.

    Example:
        >>> model = AutoModel.from_pretrained("runs/demo/final")  # doctest: +SKIP
        >>> check_tokenizer_matches(model, AutoTokenizer.from_pretrained("runs/other/final"))  # doctest: +SKIP
        Traceback (most recent call last):
        ValueError: the tokenizer's number token ids [257, 258] differ from the model's config.num_token_ids ...
    """
    config = getattr(model_or_config, "config", model_or_config)
    tokenizer_ids = sorted(getattr(tokenizer, "num_token_ids", None) or [])
    config_ids = sorted(config.num_token_ids or [])
    if tokenizer_ids != config_ids:
        raise ValueError(
            f"the tokenizer's number token ids {tokenizer_ids} differ from the model's config.num_token_ids "
            f"{config_ids}: the model would not see the numbers as numbers. Load the tokenizer saved with this "
            "model (another run's tokenizer, or a config built without tokenizer.num_token_ids?)"
        )
    encoding = get_encoding(config.number_encoding)
    expected = {"number_scheme": None, **encoding.tokenizer_options(_encoding_options(config))}
    actual = {key: tokenizer.init_kwargs.get(key, getattr(tokenizer, key, None)) for key in expected}
    if actual != expected:
        raise ValueError(
            f"the tokenizer writes numbers with {actual}, but number_encoding={config.number_encoding!r} "
            f"needs {expected}; load the tokenizer saved with this model"
        )
    output, writes = getattr(config, "number_output", "num_token"), getattr(tokenizer, "number_output", "num_token")
    if encoding.has_number_module and writes != output:
        raise ValueError(
            f"the tokenizer has number_output={writes!r} but the model's config number_output={output!r}: the answers "
            "would be tokenized otherwise than the model writes them; load the tokenizer saved with this model"
        )
    if len(tokenizer) > config.vocab_size:
        raise ValueError(
            f"the tokenizer has {len(tokenizer)} tokens but the model's embeddings hold config.vocab_size="
            f"{config.vocab_size}; ids up to {len(tokenizer) - 1} would index past them. Load the tokenizer saved "
            "with this model, or resize_token_embeddings(len(tokenizer)) before training"
        )


def check_saved_config(
    config_dict: Mapping[str, Any], model_type: str, overrides: Mapping[str, Any] | None = None
) -> None:
    """Raise ``ValueError`` when a saved number checkpoint's ``config.json`` lacks a field its encoding needs.

    Without the check such a checkpoint would load with the field's default (a missing
    ``exponent_max`` moves every bin; a missing ``number_encoding`` builds xVal's head). A plain
    backbone's config (another ``model_type``) needs none of them. ``overrides`` are the fields
    the caller sets itself (``from_pretrained`` keyword arguments).

    Example:
        >>> check_saved_config({"model_type": "number_gpt2", "number_encoding": "exponent", "num_token_id": 5,
        ...                     "exponent_num_bins": 8}, "number_gpt2")
        Traceback (most recent call last):
        ...
        ValueError: the saved config (model_type 'number_gpt2', number_encoding 'exponent') lacks exponent_min, ...
    """
    if config_dict.get("model_type") != model_type:
        return  # a plain backbone checkpoint: the number fields come from the caller
    fields = {**config_dict, **(config_dict.get("encoding_config") or {}), **(overrides or {})}  # options: flat (older)
    if "number_encoding" in fields:
        encoding = get_encoding(fields["number_encoding"])
        saved = fields["number_encoding"] == config_dict.get("number_encoding")  # else a new module, on purpose
        required = [option.name for option in encoding.options] if saved else []
        if encoding.has_number_module and not {"num_token_id", "num_token_ids"} & set(fields):
            required.insert(0, "num_token_ids")
    else:
        required = ["number_encoding"]
    missing = [name for name in required if name not in fields]
    if missing:
        raise ValueError(
            f"the saved config (model_type {model_type!r}, number_encoding {fields.get('number_encoding')!r}) lacks "
            f"{', '.join(missing)}; they were saved with the model, and their defaults would not fit its weights: "
            "restore config.json or pass them to from_pretrained"
        )


def saved_config_dict(config_class: Any, path: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The ``config.json`` that ``from_pretrained(path, **kwargs)`` finds as a dict; {} where there is none.

    Example:
        >>> saved_config_dict(NumberGPT2Config, "runs/demo/final", {})["model_type"]  # doctest: +SKIP
        'number_gpt2'
    """
    if path is None:
        return {}
    try:
        return config_class.get_config_dict(path, **{key: kwargs[key] for key in _HUB_KWARGS if key in kwargs})[0]
    except OSError:  # no config.json there: from_pretrained reports it, or uses the config it was given
        return {}


def check_number_weights(loading_info: Mapping[str, Any], number_encoding: str) -> None:
    """Raise ``ValueError`` when a saved number checkpoint's weights do not fit its number module.

    ``loading_info`` is ``from_pretrained(..., output_loading_info=True)``'s dict: number-module
    weights missing from the checkpoint (they would be initialised at random) or left unused (saved
    by another encoding) mean that the checkpoint and its ``number_encoding`` do not belong together.

    Example:
        >>> check_number_weights({"missing_keys": {"number_encoding.mlp.0.weight"}, "unexpected_keys": set()}, "xval")
        Traceback (most recent call last):
        ...
        ValueError: the checkpoint's weights do not fit its number module (number_encoding 'xval'): missing ...
    """
    missing = sorted(key for key in loading_info.get("missing_keys", ()) if key.startswith(NUMBER_MODULE_PREFIX))
    unused = sorted(key for key in loading_info.get("unexpected_keys", ()) if key.startswith(NUMBER_MODULE_PREFIX))
    if missing or unused:
        raise ValueError(
            f"the checkpoint's weights do not fit its number module (number_encoding {number_encoding!r}): missing "
            f"{', '.join(missing) or 'none'}; unused {', '.join(unused) or 'none'}. Was it saved with another "
            "number_encoding?"
        )
