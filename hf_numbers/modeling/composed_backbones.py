"""Backbones by composition: any causal or masked LM of transformers, by its model type (``--backbone qwen2``).

A :class:`ComposedBackboneSpec` is made on demand from the model type alone: the number model holds the
language model whole (``NumberForCausalLM`` / ``NumberForMaskedLM``, ``modeling_number_lm.py``), its tokenizer
is the folder's own with number tokens added (``NumberTokenizer``), and what sizes a new model is read from
the config class's fields. What the generic sizes cannot say lives in :data:`SIZE_OVERRIDES`, looked up by
the fields a config class has, never by its name. :data:`ZOO` lists the model types the tests run.

Example:
    >>> spec = composed_backbone("qwen2")
    >>> spec.causal, spec.plain_model_class.__name__, spec.size_config(64, 2, 4, 128)["num_key_value_heads"]
    (True, 'Qwen2ForCausalLM', 4)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from transformers import AutoConfig
from transformers.models.auto.configuration_auto import CONFIG_MAPPING
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_FOR_MASKED_LM_MAPPING_NAMES

from .backbones import BACKBONES, BackboneSpec, SizeFields
from .configuration_number import NumberConfigFields
from .configuration_number_lm import NumberCausalLMConfig, NumberMaskedLMConfig, config_field_names
from .modeling_number_lm import NumberForCausalLM, NumberForMaskedLM
from .tokenization_number import NumberTokenizer

__all__ = ["SIZE_OVERRIDES", "ZOO", "ComposedBackboneSpec", "composable_model_types", "composed_backbone"]

ZOO = ("qwen2", "qwen3", "mistral", "gemma2", "phi3", "olmo2", "gpt_neox", "distilbert", "xlm-roberta", "deberta-v2",
       "electra")
"""The model types held by composition that the test matrix runs (tests/test_zoo.py; the README's table)."""

SIZE_OVERRIDES: Mapping[str, Callable[[dict[str, int]], int]] = {
    "head_dim": lambda size: size["hidden"] // size["heads"],  # Gemma's default (256) ignores the width
    "embedding_size": lambda size: size["hidden"],  # ELECTRA: the number module reads embeddings of the width
}
"""Fields a new model's config gets where its class has them: field -> its value from the sizes (``hidden``,
``heads``)."""

_FFN_FIELDS = ("intermediate_size", "hidden_dim", "ffn_dim", "n_inner")
"""The names configs give the feed-forward width (the first the class has is set)."""


@cache
def composable_model_types() -> frozenset[str]:
    """Every model type of transformers' causal and masked LMs (``AutoModelForCausalLM`` / ``...MaskedLM``)."""
    return frozenset(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) | frozenset(MODEL_FOR_MASKED_LM_MAPPING_NAMES)


@dataclass(frozen=True)
class ComposedBackboneSpec(BackboneSpec):
    """A backbone held by composition (see the module docstring): a :class:`BackboneSpec` whose config class
    holds the language model's config as ``text_config``; its ``name`` is the language model's model type.

    Attributes:
        plain_tokenizer: the plain tokenizer class a new vocabulary is trained into (byte-level BPE: GPT-2's for a
            causal LM, RoBERTa's ``<s> ... </s>`` for a masked LM); a pretrained folder keeps its own.
    """

    plain_tokenizer: type | None = None

    @property
    def plain_config_class(self) -> type:
        return CONFIG_MAPPING[self.name]

    @property
    def plain_model_class(self) -> type:
        return self.model_class.auto_model_class._model_mapping[self.plain_config_class]

    @property
    def plain_tokenizer_class(self) -> type:
        return self.plain_tokenizer

    def size_config(self, hidden_size: int, num_layers: int, num_heads: int, max_length: int) -> dict[str, int]:
        """The generic sizes, and :data:`SIZE_OVERRIDES` for the fields the config class has."""
        sizes = super().size_config(hidden_size, num_layers, num_heads, max_length)
        known, size = config_field_names(self.plain_config_class), {"hidden": hidden_size, "heads": num_heads}
        return sizes | {name: rule(size) for name, rule in SIZE_OVERRIDES.items() if name in known}

    def new_config(self, tokenizer: Any, *, hidden_size: int, num_layers: int, num_heads: int, max_length: int,
                   **fields: Any) -> Any:  # fmt: skip
        """The number config of a new model: the language model's config (sizes, and the ``fields`` that are not
        number fields, such as dropout) as ``text_config``, the tokenizer's ids, the number ``fields``."""
        number_names = set(NumberConfigFields.__dataclass_fields__)
        text_fields = {name: value for name, value in fields.items() if name not in number_names}
        number_fields = {name: value for name, value in fields.items() if name in number_names}
        sizes = self.size_config(hidden_size, num_layers, num_heads, max_length)
        text_config = AutoConfig.for_model(self.name, **sizes, **text_fields)
        return self.config_class.from_tokenizer(tokenizer, text_config, **number_fields)


@cache
def composed_backbone(model_type: str) -> ComposedBackboneSpec:
    """The spec of the causal or masked LM of ``model_type`` held by composition; ``ValueError`` for another type.

    A model type with a masked LM class is taken as masked (BERT-like families also have a causal head).
    """
    if model_type not in composable_model_types():
        raise ValueError(f"model_type={model_type!r} has no causal or masked LM class in transformers")
    masked = model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    config_class = CONFIG_MAPPING[model_type]
    known = config_field_names(config_class)
    dropout = tuple(sorted(
        field.name for field in dataclasses.fields(config_class)
        if ("dropout" in field.name or field.name.endswith("pdrop")) and isinstance(field.default, float)
    )) if dataclasses.is_dataclass(config_class) else ()  # fmt: skip
    sizes = SizeFields(
        "hidden_size", "num_hidden_layers", "num_attention_heads", "max_position_embeddings",
        ffn=next((name for name in _FFN_FIELDS if name in known), None),
        kv_heads="num_key_value_heads" if "num_key_value_heads" in known else None,
    )
    vocabulary = BACKBONES["roberta" if masked else "gpt2"]  # a new vocabulary is trained as theirs is
    spec = ComposedBackboneSpec(
        name=model_type,
        display_name=config_class.__name__.removesuffix("Config"),
        config_class=NumberMaskedLMConfig if masked else NumberCausalLMConfig,
        model_class=NumberForMaskedLM if masked else NumberForCausalLM,
        tokenizer_class=NumberTokenizer,
        tokenizer_model=vocabulary.tokenizer_model,
        special_tokens=vocabulary.special_tokens,
        size_fields=sizes,
        dropout_fields=dropout,
        tiny_sizes={},
        position_offset=2,  # positions that start after the padding index (RoBERTa-like) fit too
        plain_tokenizer=vocabulary.plain_tokenizer_class,
    )
    return dataclasses.replace(spec, tiny_sizes=spec.size_config(32, 2, 2, 62) | _one_kv_head(sizes))


def _one_kv_head(sizes: SizeFields) -> dict[str, int]:
    return {sizes.kv_heads: 1} if sizes.kv_heads else {}
