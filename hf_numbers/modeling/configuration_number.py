"""Configurations of the number-aware GPT-2, BERT, RoBERTa, Llama and ModernBERT models.

Each config subclasses the backbone's own config, so a plain backbone's ``config.json``
loads into it, and adds the number fields of :class:`NumberConfigFields`:
the shared ones, and the options each registered encoding declares (``encoding_registry.py``).
Every field is validated at construction with a ``ValueError`` that names the field and
the allowed range; an encoding validates its own options. A saved number config (``config.json``
of this ``model_type``) must hold its encoding's fields: loading one without them is a ``ValueError``,
not the defaults.

This module is part of the flat ``hf_numbers/modeling`` folder that is copied into saved
checkpoints (see DESIGN.md, "The Hub rule"): it imports nothing else from ``hf_numbers``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

from huggingface_hub.dataclasses import strict
from transformers import BertConfig, GPT2Config, LlamaConfig, ModernBertConfig, PreTrainedConfig, RobertaConfig

from .checks import check_saved_config
from .encoding_registry import NUMBER_ENCODINGS_REGISTRY, add_option_fields, get_encoding
from .number_scaling import NumberScaling


def _registered_pipeline_tasks() -> set[str]:
    """The tasks of transformers' pipeline registry, if this process has imported it (none otherwise)."""
    pipelines = sys.modules.get("transformers.pipelines")
    registry = getattr(pipelines, "PIPELINE_REGISTRY", None)
    return set(registry.supported_tasks) if registry is not None else set()


@dataclass
@add_option_fields
class NumberConfigFields:
    """The number fields shared by every ``Number*Config``.

    Attributes:
        number_encoding: the name of a registered encoding (``hf_numbers.NUMBER_ENCODINGS``:
            ``"xval"``, ``"fone"``, ``"float"``, ``"exponent"``).
        num_token_id: id of the ``[NUM]`` token (``tokenizer.num_token_id``).
        num_token_ids: every id that stands for a number (``tokenizer.num_token_ids``);
            byte-level tokenizers have a second, space-prefixed ``" [NUM]"`` token.
            Defaults to ``[num_token_id]``; :meth:`from_tokenizer` takes all of the tokenizer's.
        number_loss_weight: weight of the number loss added to the token loss (>= 0).
        freeze_backbone: leave only the number module and heads trainable.
        number_scaling_shift, number_scaling_scale, number_scaling_log: the map between the data's
            values and the model's, applied inside the model (``number_scaling.py``): inputs and labels
            are raw values, predictions come back raw. Identity by default; fitted for xVal by
            ``model.fit_number_scaling(values)`` or ``hf_numbers.data.NumberScaler(...).fit(values).config_fields()``.
        and one field per option of every registered encoding (``encoding_options()``, such as
            ``fone_int_digits``), whichever encoding is selected, validated by that encoding.
    """

    number_encoding: str = "xval"
    num_token_id: int | None = None
    num_token_ids: list[int] | None = None
    number_loss_weight: float = 1.0
    freeze_backbone: bool = False
    number_scaling_shift: float = 0.0
    number_scaling_scale: float = 1.0
    number_scaling_log: bool = False

    @property
    def custom_pipelines(self) -> dict[str, Any]:
        """The checkpoint's pipelines (``config.json``), less those this process has registered itself.

        ``pipeline()`` runs a task named in ``custom_pipelines`` from the checkpoint's code, which needs
        ``trust_remote_code=True``. Where ``import hf_numbers`` registered the task (``number-generation``,
        ``number-fill-mask``), the installed classes serve it instead, so
        ``pipeline("number-generation", model=path)`` needs no remote code; elsewhere the saved code does.
        """
        registered = _registered_pipeline_tasks()
        return {task: info for task, info in self.saved_custom_pipelines.items() if task not in registered}

    @custom_pipelines.setter
    def custom_pipelines(self, value: dict[str, Any] | None) -> None:
        self.__dict__["custom_pipelines"] = dict(value or {})  # what config.json holds (to_dict reads __dict__)

    @property
    def saved_custom_pipelines(self) -> dict[str, Any]:
        """Every pipeline ``config.json`` names (``custom_pipelines`` as saved)."""
        return dict(self.__dict__.get("custom_pipelines") or {})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.from_dict = classmethod(_checked_from_dict)  # an attribute of the class: before PreTrainedConfig's

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, **kwargs: Any) -> Any:
        """A config for ``tokenizer``: ``vocab_size=len(tokenizer)`` and every number token id.

        ``num_token_ids`` takes all of ``tokenizer.num_token_ids``: a byte-level tokenizer (GPT-2,
        RoBERTa) has a second number token ``" [NUM]"`` for a number after a space, which a config
        built from ``num_token_id`` alone would not see as a number. ``kwargs`` are further fields.

        Example:
            >>> config = NumberGPT2Config.from_tokenizer(tokenizer, n_embd=64, n_layer=2, n_head=2)  # doctest: +SKIP
            >>> config.num_token_ids == tokenizer.num_token_ids  # doctest: +SKIP
            True
        """
        fields = {"vocab_size": len(tokenizer), "num_token_id": tokenizer.num_token_id}
        return cls(**fields, num_token_ids=list(tokenizer.num_token_ids), **kwargs)

    def _validate_number_fields(self) -> None:
        get_encoding(self.number_encoding)  # a ValueError listing the registered encodings
        if self.num_token_id is not None and self.num_token_id < 0:
            raise ValueError(f"num_token_id must be a token id >= 0, got {self.num_token_id}")
        if not self.num_token_ids:
            self.num_token_ids = [] if self.num_token_id is None else [self.num_token_id]
        self.num_token_ids = [int(i) for i in self.num_token_ids]
        if self.num_token_ids and self.num_token_id not in self.num_token_ids:
            raise ValueError(f"num_token_ids={self.num_token_ids} must contain num_token_id={self.num_token_id}")
        if not (math.isfinite(self.number_loss_weight) and self.number_loss_weight >= 0):
            raise ValueError(f"number_loss_weight must be a finite number >= 0, got {self.number_loss_weight}")
        scaling = NumberScaling.from_config(self)  # a ValueError naming the scaling field
        self.number_scaling_shift, self.number_scaling_scale = scaling.shift, scaling.scale  # floats in config.json
        for encoding in NUMBER_ENCODINGS_REGISTRY.values():
            encoding.validate_options(self)


def _checked_from_dict(cls: type, config_dict: dict[str, Any], **kwargs: Any) -> Any:
    """``PreTrainedConfig.from_dict`` (how a saved ``config.json`` loads), refusing a saved number config that
    lacks a field of its encoding (:func:`check_saved_config`; ``kwargs`` that set it count)."""
    check_saved_config(config_dict, cls.model_type, kwargs)
    return PreTrainedConfig.from_dict.__func__(cls, config_dict, **kwargs)


@strict
class NumberGPT2Config(GPT2Config, NumberConfigFields):
    """GPT-2 config with number fields (see :class:`NumberConfigFields`).

    Example:
        >>> from hf_numbers import NumberGPT2Config
        >>> config = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="fone")
        >>> config.model_type
        'number_gpt2'
    """

    model_type = "number_gpt2"

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        self._validate_number_fields()


@strict
class NumberBertConfig(BertConfig, NumberConfigFields):
    """BERT config with number fields (see :class:`NumberConfigFields`).

    Example:
        >>> from hf_numbers import NumberBertConfig
        >>> NumberBertConfig(hidden_size=32, number_encoding="float").number_encoding
        'float'
    """

    model_type = "number_bert"

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        self._validate_number_fields()


@strict
class NumberRobertaConfig(RobertaConfig, NumberConfigFields):
    """RoBERTa config with number fields (see :class:`NumberConfigFields`).

    Example:
        >>> from hf_numbers import NumberRobertaConfig
        >>> NumberRobertaConfig(hidden_size=32, number_encoding="exponent").model_type
        'number_roberta'
    """

    model_type = "number_roberta"

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        self._validate_number_fields()


@strict
class NumberLlamaConfig(LlamaConfig, NumberConfigFields):
    """Llama config with number fields (see :class:`NumberConfigFields`).

    Example:
        >>> from hf_numbers import NumberLlamaConfig
        >>> NumberLlamaConfig(hidden_size=32, num_attention_heads=2, number_encoding="fone").model_type
        'number_llama'
    """

    model_type = "number_llama"

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        self._validate_number_fields()


@strict
class NumberModernBertConfig(ModernBertConfig, NumberConfigFields):
    """ModernBERT config with number fields (see :class:`NumberConfigFields`).

    Example:
        >>> from hf_numbers import NumberModernBertConfig
        >>> NumberModernBertConfig(hidden_size=32, num_attention_heads=2, pad_token_id=0).model_type
        'number_modernbert'
    """

    model_type = "number_modernbert"

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        self._validate_number_fields()


__all__ = [
    "NumberBertConfig",
    "NumberConfigFields",
    "NumberGPT2Config",
    "NumberLlamaConfig",
    "NumberModernBertConfig",
    "NumberRobertaConfig",
]
