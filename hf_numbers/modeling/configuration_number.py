"""Configurations of the number-aware GPT-2, BERT and RoBERTa models.

Each config subclasses the backbone's own config, so a plain GPT-2 / BERT / RoBERTa
``config.json`` loads into it, and adds the number fields of :class:`NumberConfigFields`.
Every field is validated at construction with a ``ValueError`` that names the field and
the allowed range.

This module is part of the flat ``hf_numbers/modeling`` folder that is copied into saved
checkpoints (see DESIGN.md, "The Hub rule"): it imports nothing else from ``hf_numbers``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from huggingface_hub.dataclasses import strict
from transformers import BertConfig, GPT2Config, RobertaConfig

NUMBER_ENCODINGS = ("xval", "fone", "float", "exponent")


@dataclass
class NumberConfigFields:
    """The number fields shared by every ``Number*Config``.

    Attributes:
        number_encoding: one of ``"xval"``, ``"fone"``, ``"float"``, ``"exponent"``.
        num_token_id: id of the ``[NUM]`` token (``tokenizer.num_token_id``).
        num_token_ids: every id that stands for a number (``tokenizer.num_token_ids``);
            byte-level tokenizers have a second, space-prefixed ``" [NUM]"`` token.
            Defaults to ``[num_token_id]``.
        number_loss_weight: weight of the number loss added to the token loss (>= 0).
        fone_int_digits: FoNE integer digit places (periods 10^1 .. 10^int_digits), >= 1.
        fone_frac_digits: FoNE fractional digit places (periods 10^0 .. 10^-(frac_digits-1)), >= 0.
        exponent_num_bins: number of log-spaced magnitude bins of the exponent encoding, >= 2.
        exponent_min / exponent_max: magnitude range ``0 < min < max`` of those bins.
        freeze_backbone: leave only the number module and heads trainable.
    """

    number_encoding: str = "xval"
    num_token_id: int | None = None
    num_token_ids: list[int] | None = None
    number_loss_weight: float = 1.0
    fone_int_digits: int = 7
    fone_frac_digits: int = 3
    exponent_num_bins: int = 64
    exponent_min: float = 1e-3
    exponent_max: float = 1e7
    freeze_backbone: bool = False

    def _validate_number_fields(self) -> None:
        if self.number_encoding not in NUMBER_ENCODINGS:
            raise ValueError(
                f"number_encoding={self.number_encoding!r} is unknown; allowed: {', '.join(NUMBER_ENCODINGS)}"
            )
        if self.num_token_id is not None and self.num_token_id < 0:
            raise ValueError(f"num_token_id must be a token id >= 0, got {self.num_token_id}")
        if not self.num_token_ids:
            self.num_token_ids = [] if self.num_token_id is None else [self.num_token_id]
        self.num_token_ids = [int(i) for i in self.num_token_ids]
        if self.num_token_ids and self.num_token_id not in self.num_token_ids:
            raise ValueError(f"num_token_ids={self.num_token_ids} must contain num_token_id={self.num_token_id}")
        if not (math.isfinite(self.number_loss_weight) and self.number_loss_weight >= 0):
            raise ValueError(f"number_loss_weight must be a finite number >= 0, got {self.number_loss_weight}")
        if self.fone_int_digits < 1:
            raise ValueError(f"fone_int_digits must be >= 1, got {self.fone_int_digits}")
        if self.fone_frac_digits < 0:
            raise ValueError(f"fone_frac_digits must be >= 0, got {self.fone_frac_digits}")
        if self.exponent_num_bins < 2:
            raise ValueError(f"exponent_num_bins must be >= 2, got {self.exponent_num_bins}")
        if not (0 < self.exponent_min < self.exponent_max and math.isfinite(self.exponent_max)):
            raise ValueError(
                "exponent_min and exponent_max must satisfy 0 < exponent_min < exponent_max < inf, "
                f"got {self.exponent_min} and {self.exponent_max}"
            )


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


__all__ = [
    "NUMBER_ENCODINGS",
    "NumberBertConfig",
    "NumberConfigFields",
    "NumberGPT2Config",
    "NumberRobertaConfig",
]
