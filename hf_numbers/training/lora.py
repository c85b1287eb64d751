"""LoRA for number models through PEFT: adapters on the trunk, the number module and number tokens trained whole.

:func:`number_lora_config` builds the ``peft.LoraConfig``; :func:`save_adapter` and :func:`load_adapter` save
an adapter and reload it onto the same adapted base. PEFT is optional (``pip install hf_numbers[peft]``).
How to use it: docs/pretrained.md.

Example:
    >>> from peft import get_peft_model  # doctest: +SKIP
    >>> model = get_peft_model(number_model, number_lora_config(number_model, r=16))  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from torch import nn
from transformers import AutoConfig, AutoTokenizer
from transformers.pytorch_utils import Conv1D

from ..modeling import BACKBONES, NumberConfigFields
from ..modeling.checks import NUMBER_MODULES
from ..strict_json import write_json

__all__ = ["ADAPTER_DIR", "BASE_FILE", "load_adapter", "number_lora_config", "require_peft", "save_adapter",
           "trunk_linear_names"]

ADAPTER_DIR = "adapter"
"""Where ``hf-numbers train --lora_r`` puts the adapter in ``final/``."""
BASE_FILE = "number_base.json"
"""Beside the adapter: the pretrained folder (and GGUF file) its base was adapted from."""


def require_peft() -> Any:
    """The ``peft`` module, or an ``ImportError`` saying how to install it."""
    try:
        import peft
    except ImportError:  # an optional extra
        raise ImportError("LoRA needs the peft package: pip install 'hf_numbers[peft]'") from None
    return peft


def trunk_linear_names(model: nn.Module) -> list[str]:
    """The distinct names (last path part) of the linear layers of ``model``'s trunk (``model.trunk``).

    GPT-2's ``Conv1D`` layers count as linear (PEFT adapts them too). The number module and the
    token head are outside the trunk.

    Example:
        >>> trunk_linear_names(llama_number_model)  # doctest: +SKIP
        ['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']
    """
    return sorted({
        name.rsplit(".", 1)[-1] for name, module in model.trunk.named_modules()
        if isinstance(module, (nn.Linear, Conv1D))
    })


def number_lora_config(
    model: nn.Module,
    r: int = 16,
    alpha: int | None = None,
    dropout: float = 0.0,
    target_modules: Sequence[str] | None = None,
    trainable_token_ids: Sequence[int] | None = None,
) -> Any:
    """A ``peft.LoraConfig`` for ``model``: LoRA of rank ``r`` on the trunk, new weights and rows trained whole.

    ``alpha`` defaults to ``2 * r``. ``target_modules`` (last names of the trunk's linear layers) default to
    all of them (:func:`trunk_linear_names`); the number module is in ``modules_to_save``. The rows of
    ``trainable_token_ids`` (default: the number tokens) train whole.

    Example:
        >>> config = number_lora_config(model, r=8)  # doctest: +SKIP
        >>> config.modules_to_save, config.trainable_token_indices  # doctest: +SKIP
        (['number_encoding'], [49152, 49153])
    """
    peft = require_peft()
    if r < 1:
        raise ValueError(f"the LoRA rank r must be >= 1, got {r}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"the LoRA dropout must be in [0, 1), got {dropout}")
    trunk = trunk_linear_names(model)
    names = list(target_modules) if target_modules else trunk
    unknown = sorted(set(names) - set(trunk))
    if unknown:
        raise ValueError(f"target_modules {unknown} are not linear layers of the trunk; it has {trunk}")
    prefix = re.escape(next(name for name, module in model.named_modules() if module is model.trunk))
    token_ids = list(model.config.num_token_ids if trainable_token_ids is None else trainable_token_ids)
    return peft.LoraConfig(
        r=r,
        lora_alpha=2 * r if alpha is None else alpha,
        lora_dropout=dropout,
        target_modules=rf"{prefix}\..*\b({'|'.join(map(re.escape, names))})",
        modules_to_save=[name for name in NUMBER_MODULES if getattr(model, name, None) is not None] or None,
        trainable_token_indices=_token_rows(model, token_ids) if token_ids else None,
        task_type="CAUSAL_LM" if getattr(model, "causal", False) else None,
    )


def _token_rows(model: nn.Module, token_ids: list[int]) -> dict[str, list[int]]:
    """``trainable_token_indices`` by module name: the input embedding, and an untied output matrix too."""
    modules = {id(module): name for name, module in model.named_modules()}
    embedding, output = model.get_input_embeddings(), model.get_output_embeddings()
    rows = {modules[id(embedding)].rsplit(".", 1)[-1]: token_ids}
    if output is not None and output.weight is not embedding.weight:
        rows[modules[id(output)].rsplit(".", 1)[-1]] = token_ids
    return rows


def save_adapter(model: Any, tokenizer: Any, folder: str | Path, pretrained: str, gguf_file: str | None = None) -> None:
    """Save a PEFT number model's adapter with what rebuilds its base: tokenizer, number config, pretrained source.

    Example:
        >>> save_adapter(peft_model, tokenizer, "runs/x/final/adapter", "smollm2", "model.gguf")  # doctest: +SKIP
    """
    folder = Path(folder)
    # adapter_config.json, adapter_model.safetensors; the new token rows are in it (trainable tokens), not the
    # whole resized embedding matrix PEFT would add
    model.save_pretrained(folder, save_embedding_layers=False)
    tokenizer.save_pretrained(folder)
    model.get_base_model().config.to_json_file(folder / "config.json")
    write_json(folder / BASE_FILE, {"pretrained": str(pretrained), "gguf_file": gguf_file})


def load_adapter(folder: str | Path, pretrained: str | None = None) -> Any:
    """The ``PeftModel`` of an adapter saved by :func:`save_adapter` (``final/adapter`` of a LoRA run).

    The base is adapted again from the pretrained folder that :data:`BASE_FILE` names (or ``pretrained``,
    where it has moved) with the saved number config; the number module and the new token rows come
    from the adapter, so the outputs equal the trained model's.

    Example:
        >>> model = load_adapter("runs/smollm2-fone/final/adapter")  # doctest: +SKIP
    """
    peft = require_peft()
    folder = Path(folder)
    if not (folder / BASE_FILE).is_file():
        raise ValueError(f"{folder} lacks {BASE_FILE}: it is not an adapter saved by hf_numbers (save_adapter)")
    base = json.loads((folder / BASE_FILE).read_text())
    config = AutoConfig.from_pretrained(folder)
    spec = next((spec for spec in BACKBONES.values() if isinstance(config, spec.config_class)), None)
    if spec is None:
        raise ValueError(f"{folder}/config.json is a {type(config).__name__}, not a number model's config")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    fields = {field.name: getattr(config, field.name) for field in dataclasses.fields(NumberConfigFields)}
    model = spec.model_class.from_pretrained_backbone(
        pretrained or base["pretrained"], tokenizer, gguf_file=base["gguf_file"], **fields
    )
    return peft.PeftModel.from_pretrained(model, folder)
