"""The configs of the families hf_numbers named before any model type could be held by composition, now held by it.

``NumberGPT2Config`` (and BERT's, Llama's, RoBERTa's and ModernBERT's alike) is a composed config (its language model's
config kept whole as ``text_config``, as for any model type) under the model type its checkpoints were saved with
(``number_gpt2``), so they load as they are. It also takes the family's own fields flat, as the config.json files
written before hold them and as code written for them passes them (``NumberGPT2Config(n_embd=32, n_layer=2)``): they
go to ``text_config`` and read back through (``config.n_embd``).

Example:
    >>> config = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="fone")
    >>> config.text_config.model_type, config.n_embd, config.hidden_size
    ('gpt2', 32, 32)
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

from huggingface_hub.dataclasses import strict
from transformers import AutoConfig, PreTrainedConfig
from transformers.configuration_utils import SubConfigSpec
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

from .configuration_number_lm import NumberCausalLMConfig, NumberMaskedLMConfig, config_field_names

__all__ = [
    "FlatTextFieldsMixin",
    "NumberBertConfig",
    "NumberGPT2Config",
    "NumberLlamaConfig",
    "NumberModernBertConfig",
    "NumberRobertaConfig",
]


@cache
def text_fields(model_type: str) -> frozenset[str]:
    """The fields the config of ``model_type`` declares beyond every config's, and the names its attribute map
    gives them (``hidden_size`` for GPT-2's ``n_embd``)."""
    return frozenset(config_field_names(CONFIG_MAPPING[model_type]) - config_field_names(PreTrainedConfig))


class FlatTextFieldsMixin:
    """A composed config that takes its language model's fields flat too (see the module docstring)."""

    text_model_type: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """The default ``text_config`` is one of ``text_model_type`` (transformers' ``__init_subclass__``, which
        runs after this, reads the class's ``sub_configs_defaults``)."""
        if "text_model_type" in cls.__dict__:
            spec = SubConfigSpec(config_class=AutoConfig, model_type=cls.text_model_type)
            cls.sub_configs_defaults = {"text_config": spec}
        super().__init_subclass__(**kwargs)

    def __post_init__(self, **kwargs: Any) -> None:
        flat = {name: kwargs.pop(name) for name in list(kwargs) if name in text_fields(self.text_model_type)}
        if self.text_config is None:
            self.text_config = CONFIG_MAPPING[self.text_model_type](**flat)
        elif isinstance(self.text_config, dict):
            self.text_config = {**self.text_config, **flat}
        else:
            for name, value in flat.items():
                setattr(self.text_config, name, value)
        super().__post_init__(**kwargs)

    def __getattr__(self, name: str) -> Any:
        text = self.__dict__.get("text_config")
        if isinstance(text, PreTrainedConfig) and name in text_fields(self.text_model_type):
            return getattr(text, name)
        return super().__getattr__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        text = self.__dict__.get("text_config")
        if isinstance(text, PreTrainedConfig) and name in text_fields(self.text_model_type):
            setattr(text, name, value)
        else:
            super().__setattr__(name, value)


@strict
class NumberGPT2Config(FlatTextFieldsMixin, NumberCausalLMConfig):
    """A number config holding a GPT-2 config (see the module docstring)."""

    model_type = "number_gpt2"
    text_model_type = "gpt2"
    tokenizer_token_ids = {"pad_token_id": "pad_token_id", "bos_token_id": "eos_token_id",
                           "eos_token_id": "eos_token_id"}


@strict
class NumberLlamaConfig(FlatTextFieldsMixin, NumberCausalLMConfig):
    """A number config holding a Llama config (see the module docstring).

    Example:
        >>> NumberLlamaConfig(hidden_size=32, num_attention_heads=2, number_encoding="fone").model_type
        'number_llama'
    """

    model_type = "number_llama"
    text_model_type = "llama"


@strict
class NumberBertConfig(FlatTextFieldsMixin, NumberMaskedLMConfig):
    """A number config holding a BERT config (see the module docstring).

    Example:
        >>> NumberBertConfig(hidden_size=32, number_encoding="float").text_config.model_type
        'bert'
    """

    model_type = "number_bert"
    text_model_type = "bert"
    tokenizer_token_ids = {"pad_token_id": "pad_token_id"}


@strict
class NumberRobertaConfig(FlatTextFieldsMixin, NumberMaskedLMConfig):
    """A number config holding a RoBERTa config (see the module docstring).

    Example:
        >>> NumberRobertaConfig(hidden_size=32, number_encoding="exponent").text_config.model_type
        'roberta'
    """

    model_type = "number_roberta"
    text_model_type = "roberta"
    tokenizer_token_ids = {"pad_token_id": "pad_token_id", "bos_token_id": "bos_token_id",
                           "eos_token_id": "eos_token_id"}


@strict
class NumberModernBertConfig(FlatTextFieldsMixin, NumberMaskedLMConfig):
    """A number config holding a ModernBERT config (see the module docstring).

    Example:
        >>> NumberModernBertConfig(hidden_size=32, num_attention_heads=2, pad_token_id=0).hidden_size
        32
    """

    model_type = "number_modernbert"
    text_model_type = "modernbert"
    tokenizer_token_ids = {"pad_token_id": "pad_token_id", "bos_token_id": "cls_token_id",
                           "eos_token_id": "sep_token_id", "cls_token_id": "cls_token_id",
                           "sep_token_id": "sep_token_id"}
