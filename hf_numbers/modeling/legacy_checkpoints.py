"""Folders written by earlier versions of hf_numbers, converted at load: the layouts they hold, in one place.

- Weights of a family held by composition since (GPT-2, Llama, RoBERTa, ModernBERT), saved under the plain
  model's own names (``transformer.``, ``model.``, ``lm_head.``...): :func:`legacy_key_mapping` renames them under
  ``language_model.`` (``from_pretrained``'s ``key_mapping``). Their configs, with the family's fields flat, load
  through ``FlatTextFieldsMixin`` (``configuration_number_families.py``), which takes flat fields from code too.
- Every encoding's options flat in ``config.json``: ``encoding_config.options_in_sub_dict`` keeps the selected
  encoding's in ``encoding_config``.
- The number scaling in ``number_scaler.json`` beside the weights (before it moved into the config):
  :func:`move_legacy_scaler`.
- ``[NUM]`` flagged special in ``tokenizer.json`` (before 0.2): :func:`unflag_special`.

Example:
    >>> legacy_key_mapping(("transformer", "lm_head"))
    {'^(transformer|lm_head)\\\\.': 'language_model.\\\\1.'}
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from .number_scaling import NumberScaling

__all__ = ["LEGACY_SCALER_FILE", "legacy_key_mapping", "move_legacy_scaler", "read_legacy_scaler", "unflag_special"]

LEGACY_SCALER_FILE = "number_scaler.json"
"""Where a checkpoint written before the scaling moved into the config kept it."""
_logger = logging.getLogger(__name__)


def legacy_key_mapping(prefixes: tuple[str, ...]) -> dict[str, str]:
    """``from_pretrained``'s ``key_mapping`` that moves weights saved under the language model's own top-level
    modules ``prefixes`` under ``language_model.`` (where a model holding it keeps them)."""
    return {rf"^({'|'.join(prefixes)})\.": r"language_model.\1."}


def read_legacy_scaler(folder: str | os.PathLike) -> NumberScaling | None:
    """The scaling of an older checkpoint's ``number_scaler.json`` in ``folder``; None if there is none.

    A file that is not a fitted scaler state of format version 1 (what hf_numbers wrote before the scaling
    moved into the config) is a ``ValueError``.

    Example:
        >>> read_legacy_scaler("runs/old/final")  # doctest: +SKIP
        NumberScaling(shift=52.1, scale=7.9, log=False)
    """
    file = Path(folder) / LEGACY_SCALER_FILE
    if not file.is_file():
        return None
    try:
        state = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read {file} ({error})") from None
    if not isinstance(state, dict) or state.get("format_version") != 1 or not {"shift", "scale", "log"} <= set(state):
        raise ValueError(f"{file} is not a number_scaler.json of hf_numbers (format_version 1, shift, scale, log)")
    if state["shift"] is None or state["scale"] is None:
        raise ValueError(f"{file} holds an unfitted scaler (no shift and scale)")
    try:
        return NumberScaling(state["shift"], state["scale"], state["log"])
    except ValueError as error:
        raise ValueError(f"{file}: {error}") from None


def move_legacy_scaler(model: Any, folder: str | os.PathLike | None) -> None:
    """Move an older checkpoint's ``number_scaler.json`` (in ``folder``) into ``model``'s config, with a warning; a
    file that disagrees with a scaling the config already holds is a ``ValueError``."""
    legacy = read_legacy_scaler(folder) if folder is not None and Path(folder).is_dir() else None
    if legacy is None or model.number_encoding is None:
        return
    current = model.number_scaling
    if legacy == current or legacy.is_identity:
        return
    if not current.is_identity:
        raise ValueError(
            f"{Path(folder) / LEGACY_SCALER_FILE} ({legacy}) disagrees with the number scaling of the config "
            f"({current}); the config's is the one the model applies: delete the file"
        )
    model.set_number_scaling(legacy)
    _logger.warning(
        "%s: moved number_scaler.json (a checkpoint of hf_numbers before the scaling moved into the model) into "
        "the config: %s. The model now takes and returns values in the data's units; save_pretrained writes the "
        "scaling into config.json.",
        folder,
        ", ".join(f"{k}={v}" for k, v in legacy.to_config().items()),
    )


def unflag_special(backend: Tokenizer, ids: list[int]) -> Tokenizer | None:
    """The Rust tokenizer ``backend`` rebuilt with ``ids`` as ordinary added tokens where it flags them special
    (folders saved by hf_numbers before 0.2 flag ``[NUM]`` special, and the decoder would then drop numbers under
    ``skip_special_tokens``; re-adding a token does not clear the flag); None where none is flagged."""
    decoder = backend.get_added_tokens_decoder()
    if not any(decoder[i].special for i in ids if i in decoder):
        return None
    state = json.loads(backend.to_str())
    for token in state["added_tokens"]:
        token["special"] = token["special"] and token["id"] not in ids
    rebuilt = Tokenizer.from_str(json.dumps(state))
    rebuilt.encode_special_tokens = backend.encode_special_tokens
    return rebuilt
