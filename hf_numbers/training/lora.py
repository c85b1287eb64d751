"""LoRA for number models through PEFT: adapters on the trunk, the number module and number tokens trained whole.

:func:`number_lora_config` builds the ``peft.LoraConfig``; :func:`save_adapter` and :func:`load_adapter` save
an adapter and reload it onto the same adapted base; :class:`AdapterBase` writes what rebuilds that base beside
every adapter a LoRA run saves (``final/adapter`` and each ``checkpoint-<step>``), and :func:`is_adapter_folder` tells
such a folder. PEFT is optional (``pip install hf_numbers[peft]``). How to use it: docs/pretrained.md.

Example:
    >>> from peft import get_peft_model  # doctest: +SKIP
    >>> model = get_peft_model(number_model, number_lora_config(number_model, r=16))  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import nn
from transformers import AutoConfig, AutoTokenizer
from transformers.pytorch_utils import Conv1D

from ..modeling import BACKBONES, NumberConfigFields, composable_model_types, composed_backbone
from ..modeling.checks import NUMBER_MODULES
from ..modeling.modeling_number_base import ADAPTER_CONFIG_FILE, is_adapter_folder
from ..strict_json import write_json

__all__ = ["ADAPTER_DIR", "BASE_FILE", "AdapterBase", "base_source", "is_adapter_folder", "load_adapter",
           "number_lora_config", "require_peft", "save_adapter", "trunk_linear_names"]

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


def base_source(pretrained: str | os.PathLike | None) -> str | None:
    """How an adapter records its ``--pretrained`` base: a local folder as an absolute path (so the adapter loads
    from any working directory), anything else (a Hub id) as given; None for a new model.

    Example:
        >>> base_source("HuggingFaceTB/SmolLM2-135M")  # no such folder here: a Hub id
        'HuggingFaceTB/SmolLM2-135M'
        >>> base_source(".") == os.getcwd()
        True
    """
    if pretrained is None:
        return None
    return os.path.abspath(pretrained) if os.path.isdir(pretrained) else str(pretrained)


@dataclass
class AdapterBase:
    """What rebuilds a PEFT number model's base, saved beside its adapter: the number config (``config.json``)
    and the pretrained source (:data:`BASE_FILE`). ``hf-numbers train --lora_r`` saves it into every
    ``checkpoint-<step>`` (``save_with``) and ``final/adapter`` (:func:`save_adapter`), so
    :func:`load_adapter` loads any of them.

    Creating it records the base in the adapter's config too (``base_model_name_or_path`` of
    ``adapter_config.json``, which PEFT writes with the adapter).

    Example:
        >>> base = AdapterBase(peft_model, "models/smollm2")  # doctest: +SKIP
        >>> train_model(peft_model, data, collator, args, save_with=(tokenizer, base))  # doctest: +SKIP
    """

    model: Any
    pretrained: str | None
    gguf_file: str | None = None

    def __post_init__(self) -> None:
        self.pretrained = base_source(self.pretrained)
        for config in self.model.peft_config.values():
            config.base_model_name_or_path = self.pretrained

    def save_pretrained(self, folder: str | Path) -> None:
        """Write ``config.json`` (the base's number config) and :data:`BASE_FILE` into ``folder``."""
        folder = Path(folder)
        self.model.get_base_model().config.to_json_file(folder / "config.json")
        write_json(folder / BASE_FILE, {"pretrained": self.pretrained, "gguf_file": self.gguf_file})


def save_adapter(
    model: Any, tokenizer: Any, folder: str | Path, pretrained: str | None, gguf_file: str | None = None
) -> None:
    """Save a PEFT number model's adapter with what rebuilds its base: tokenizer, number config, pretrained source
    (a local folder as an absolute path, :func:`base_source`).

    Example:
        >>> save_adapter(peft_model, tokenizer, "runs/x/final/adapter", "smollm2", "model.gguf")  # doctest: +SKIP
    """
    folder = Path(folder)
    base = AdapterBase(model, pretrained, gguf_file)  # first: it names the base in adapter_config.json too
    # adapter_config.json, adapter_model.safetensors; the new token rows are in it (trainable tokens), not the
    # whole resized embedding matrix PEFT would add
    model.save_pretrained(folder, save_embedding_layers=False)
    tokenizer.save_pretrained(folder)
    base.save_pretrained(folder)


def load_adapter(folder: str | Path, pretrained: str | os.PathLike | None = None) -> Any:
    """The ``PeftModel`` of an adapter saved by :func:`save_adapter` or :class:`AdapterBase` (``final/adapter`` or a
    ``checkpoint-<step>`` of a LoRA run).

    The base is adapted again from the pretrained folder that :data:`BASE_FILE` names (or ``pretrained``,
    where it has moved) with the saved number config; the number module and the new token rows come
    from the adapter, so the outputs equal the trained model's. A recorded folder that is gone is a
    ``ValueError`` naming it.

    Example:
        >>> model = load_adapter("runs/smollm2-fone/final/adapter")  # doctest: +SKIP
        >>> model = load_adapter("runs/smollm2-fone/checkpoint-200", pretrained="models/smollm2")  # doctest: +SKIP
    """
    peft = require_peft()
    folder = Path(folder)
    base = _read_base(folder)
    config = AutoConfig.from_pretrained(folder)
    model_class = _number_model_class(config, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    fields = {field.name: getattr(config, field.name) for field in dataclasses.fields(NumberConfigFields)}
    source = _base_to_load(folder, base["pretrained"], pretrained)
    try:
        model = model_class.from_pretrained_backbone(source, tokenizer, gguf_file=base["gguf_file"], **fields)
    except OSError as error:
        if os.path.isdir(source):  # the folder is there: its own problem, told as it is
            raise
        raise ValueError(
            f"the base of the adapter {folder}, {source!r}, is neither a folder here nor a model that could be "
            f"loaded from the Hub ({error}); pass the pretrained folder it was adapted from: "
            f"load_adapter({str(folder)!r}, pretrained=...)"
        ) from error
    return peft.PeftModel.from_pretrained(model, folder)


def _read_base(folder: Path) -> dict[str, Any]:
    """:data:`BASE_FILE` of ``folder``; ``ValueError`` saying what the folder is where it is missing."""
    if not (folder / BASE_FILE).is_file():
        if (folder / ADAPTER_CONFIG_FILE).is_file():
            raise ValueError(
                f"{folder} holds a LoRA adapter without {BASE_FILE} (a checkpoint of a LoRA run of an earlier "
                "hf_numbers): its number base cannot be rebuilt from it; use the run's final/ (the merged model) or "
                "final/adapter, or resume the run from it (--resume_from_checkpoint)"
            )
        raise ValueError(f"{folder} lacks {BASE_FILE}: it is not an adapter saved by hf_numbers (save_adapter)")
    return json.loads((folder / BASE_FILE).read_text())


def _number_model_class(config: Any, folder: Path) -> type:
    """The number model class of ``config``: a row of the backbone table, or the class holding its language model
    by composition (any causal or masked LM of transformers); ``ValueError`` for any other config."""
    specs = list(BACKBONES.values())
    model_type = getattr(config.get_text_config(), "model_type", None)
    if isinstance(config, NumberConfigFields) and model_type in composable_model_types():
        specs.append(composed_backbone(model_type))
    spec = next((spec for spec in specs if type(config) is spec.config_class), None)
    if spec is None:
        raise ValueError(f"{folder}/config.json is a {type(config).__name__}, not a number model's config")
    return spec.model_class


def _base_to_load(folder: Path, recorded: str | None, given: str | os.PathLike | None) -> str:
    """The base to adapt: ``given``, else the recorded one; ``ValueError`` where that is a folder no longer there
    (an absolute path: how :func:`base_source` records a local folder) or where no base was recorded."""
    if given is not None:
        return str(given)
    if recorded is None:
        raise ValueError(
            f"{folder}/{BASE_FILE} records no pretrained base (the LoRA run trained a new model): the adapter "
            "cannot be rebuilt; use the run's final/ (the merged model)"
        )
    if os.path.isabs(recorded) and not os.path.isdir(recorded):
        raise ValueError(
            f"the pretrained folder {recorded} that the adapter {folder} was adapted from ({BASE_FILE}) does not "
            f"exist: pass where it is now, load_adapter({str(folder)!r}, pretrained=...), or write that path into "
            f"{folder / BASE_FILE}"
        )
    return recorded
