"""The config of a number model that holds any language model of transformers (``NumberForCausalLM``,
``NumberForMaskedLM``): the number fields of :class:`NumberConfigFields` beside the language model's own
config, kept whole as ``text_config`` (as Llava holds its language model's).

The sizes, the vocabulary and the special-token ids are the language model's: the number config reads them
from ``text_config`` (``config.hidden_size``, ``config.vocab_size``...), so resizing the embeddings and
generation see one value.

Example:
    >>> from transformers import Qwen2Config
    >>> text = Qwen2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
    ...                    intermediate_size=64, vocab_size=100)
    >>> config = NumberCausalLMConfig(text_config=text, num_token_id=98, number_encoding="fone")
    >>> config.text_config.model_type, config.hidden_size, config.vocab_size
    ('qwen2', 32, 100)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from huggingface_hub.dataclasses import strict
from transformers import AutoConfig, PreTrainedConfig
from transformers.configuration_utils import SubConfigSpec

from .configuration_number import NumberConfigFields

__all__ = ["NumberCausalLMConfig", "NumberLMConfigMixin", "NumberMaskedLMConfig", "config_field_names"]

_FROM_TEXT_CONFIG = ("vocab_size", "hidden_size", "initializer_range", "pad_token_id", "bos_token_id",
                     "eos_token_id", "cls_token_id", "sep_token_id", "tie_word_embeddings")
"""The fields a number config reads from its language model's config."""
_SAVED_FROM_TEXT_CONFIG = ("tie_word_embeddings",)
"""Of those, the ones ``to_dict`` also writes at the top (read, as Llava's, by tools that look at the outer config
only: PEFT ties trainable token rows of a tied output matrix by it)."""


def config_field_names(config_class: type) -> set[str]:
    """The fields a config class takes: its dataclass fields and the names its ``attribute_map`` maps."""
    fields = set()
    if dataclasses.is_dataclass(config_class):
        fields = {field.name for field in dataclasses.fields(config_class)}
    return fields | set(getattr(config_class, "attribute_map", {}))


class NumberLMConfigMixin:
    """What the two composite configs share: the language model's config as ``text_config`` and its fields read
    through (:data:`_FROM_TEXT_CONFIG`); :meth:`for_text_config` builds one around a language model's config."""

    text_config: Any

    def __getattr__(self, name: str) -> Any:
        if name in _FROM_TEXT_CONFIG and "text_config" in self.__dict__:
            return getattr(self.__dict__["text_config"], name, None)
        return super().__getattr__(name)  # NumberConfigFields': the encoding's options

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FROM_TEXT_CONFIG and isinstance(self.__dict__.get("text_config"), PreTrainedConfig):
            setattr(self.__dict__["text_config"], name, value)
        else:
            super().__setattr__(name, value)

    def to_dict(self) -> dict[str, Any]:
        output = super().to_dict()
        text = self.__dict__.get("text_config")
        for name in _SAVED_FROM_TEXT_CONFIG:
            if isinstance(text, PreTrainedConfig) and getattr(text, name, None) is not None:
                output[name] = getattr(text, name)
        return output

    def _set_text_fields(self, fields: dict[str, Any]) -> None:
        """Move the fields of :data:`_FROM_TEXT_CONFIG` in ``fields`` to ``text_config`` (they live there)."""
        for name in _FROM_TEXT_CONFIG:
            if name in fields:
                setattr(self.text_config, name, fields.pop(name))

    @classmethod
    def for_text_config(cls, text_config: Any, **fields: Any) -> Any:
        """A number config around ``text_config`` (a config of a transformers language model); ``fields`` are
        number fields, or language-model fields (vocab_size, special ids) set on ``text_config``.

        Example:
            >>> from transformers import MistralConfig
            >>> NumberCausalLMConfig.for_text_config(MistralConfig(), vocab_size=120, num_token_id=118).vocab_size
            120
        """
        copy = type(text_config).from_dict(text_config.to_dict())  # the caller's stays as it is
        return cls(text_config=copy, **fields)  # __post_init__ moves the language-model fields to it

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, text_config: Any = None, **kwargs: Any) -> Any:
        """A config for ``tokenizer`` around ``text_config`` (None: the one the class builds from ``kwargs``): its
        vocabulary size, special-token and number ids."""
        ids = cls.token_ids_of(tokenizer, kwargs.get("number_encoding"), kwargs.get("digit_lookahead", 0))
        fields = {"vocab_size": len(tokenizer), **ids}
        if text_config is None:
            return cls(**fields | kwargs)
        return cls.for_text_config(text_config, **fields | kwargs)

    def __post_init__(self, **kwargs: Any) -> None:
        text_fields = {name: kwargs.pop(name) for name in _FROM_TEXT_CONFIG if name in kwargs}
        super().__post_init__(**kwargs)
        self._validate_text_config()
        self._set_text_fields(text_fields)
        self._validate_number_fields()

    def _validate_text_config(self) -> None:
        if not isinstance(self.text_config, PreTrainedConfig):
            raise ValueError(f"text_config must be a transformers config, got {type(self.text_config).__name__}")
        if self.text_config.sub_configs:
            raise ValueError(
                f"text_config of model_type={self.text_config.model_type!r} is itself composite: a number model "
                "holds a language model's config (a causal or masked LM of transformers)"
            )


_TOKEN_FIELDS = {"pad_token_id": "pad_token_id", "bos_token_id": "bos_token_id", "eos_token_id": "eos_token_id"}


@strict
class NumberCausalLMConfig(NumberLMConfigMixin, PreTrainedConfig, NumberConfigFields):
    """A number config holding a causal LM's config (``text_config``; see the module docstring)."""

    model_type = "number_causal_lm"
    sub_configs_defaults = {"text_config": SubConfigSpec(config_class=AutoConfig, model_type="llama")}
    tokenizer_token_ids = _TOKEN_FIELDS
    text_config: dict | PreTrainedConfig | None = None


@strict
class NumberMaskedLMConfig(NumberLMConfigMixin, PreTrainedConfig, NumberConfigFields):
    """A number config holding a masked LM's config (``text_config``; see the module docstring)."""

    model_type = "number_masked_lm"
    sub_configs_defaults = {"text_config": SubConfigSpec(config_class=AutoConfig, model_type="bert")}
    tokenizer_token_ids = {**_TOKEN_FIELDS, "cls_token_id": "cls_token_id", "sep_token_id": "sep_token_id"}
    text_config: dict | PreTrainedConfig | None = None
