"""Number-aware GPT-2, BERT and RoBERTa.

``NumberGPT2ForCausalLM`` holds a ``GPT2LMHeadModel`` by composition (``NumberForCausalLM``);
``NumberBertForMaskedLM`` and ``NumberRobertaForMaskedLM`` subclass transformers' own classes, so plain
checkpoints load into them and reuse every weight. What they share is :class:`NumberModelMixin`
(``modeling_number_base.py``); a class here adds only its backbone's token head and, for RoBERTa, its
position ids.

Example:
    >>> tokenizer = NumberGPT2Tokenizer.from_pretrained("path/to/gpt2")  # doctest: +SKIP
    >>> model = NumberGPT2ForCausalLM.from_pretrained_backbone("path/to/gpt2", tokenizer,
    ...                                                        number_encoding="fone")  # doctest: +SKIP
"""

from __future__ import annotations

import torch
from transformers import BertForMaskedLM, RobertaForMaskedLM
from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

from .configuration_number import NumberBertConfig, NumberRobertaConfig
from .configuration_number_families import NumberGPT2Config
from .generation_number import NumberFillMaskMixin
from .modeling_number_base import NumberModelMixin
from .modeling_number_lm import NumberForCausalLM
from .modeling_outputs import NumberCausalLMOutput, NumberMaskedLMOutput

__all__ = [
    "NumberBertForMaskedLM",
    "NumberCausalLMOutput",
    "NumberGPT2ForCausalLM",
    "NumberMaskedLMOutput",
    "NumberModelMixin",
    "NumberRobertaForMaskedLM",
]


class NumberGPT2ForCausalLM(NumberForCausalLM):
    """GPT-2 with a number encoding and number head, held by composition (``self.language_model``, a
    ``GPT2LMHeadModel``); ``generate`` also returns the numbers. Checkpoints saved before composition (weights under
    ``transformer.`` and ``lm_head.``) load as they are.

    Example:
        >>> config = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=100, bos_token_id=0, eos_token_id=0,
        ...                           num_token_id=98, num_token_ids=[98, 99], number_encoding="xval")
        >>> model = NumberGPT2ForCausalLM(config)
        >>> ids = torch.tensor([[5, 98, 7]])
        >>> out = model(input_ids=ids, input_numbers=torch.tensor([[1.0, 2.5, 1.0]], dtype=torch.float64),
        ...             labels=ids)
        >>> out.number_predictions.shape
        torch.Size([1, 3])
    """

    config_class = NumberGPT2Config
    legacy_prefixes = ("transformer", "lm_head")


class NumberBertForMaskedLM(NumberFillMaskMixin, NumberModelMixin, BertForMaskedLM):
    """BERT masked LM with a number encoding and number head; :meth:`fill_mask` fills numbers too.

    Example:
        >>> config = NumberBertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        ...                           intermediate_size=64, vocab_size=100, num_token_id=99, number_encoding="float")
        >>> model = NumberBertForMaskedLM(config)
        >>> model(input_ids=torch.tensor([[2, 99, 3]]),
        ...       input_numbers=torch.tensor([[1.0, -7.25, 1.0]], dtype=torch.float64)).logits.shape
        torch.Size([1, 3, 100])
    """

    config_class = NumberBertConfig
    normalized_embeddings = True

    def _token_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.cls(hidden_states)


class NumberRobertaForMaskedLM(NumberFillMaskMixin, NumberModelMixin, RobertaForMaskedLM):
    """RoBERTa masked LM with a number encoding and number head; :meth:`fill_mask` fills numbers too.

    Position ids are computed from ``input_ids`` as RoBERTa does (padding keeps the padding
    position), since the backbone only sees embeddings.

    Example:
        >>> config = NumberRobertaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        ...                              intermediate_size=64, vocab_size=100, num_token_id=98,
        ...                              num_token_ids=[98, 99], number_encoding="exponent")
        >>> model = NumberRobertaForMaskedLM(config)
        >>> model(input_ids=torch.tensor([[0, 99, 2]]),
        ...       input_numbers=torch.tensor([[1.0, 300.0, 1.0]], dtype=torch.float64)).number_predictions.dtype
        torch.float64
    """

    config_class = NumberRobertaConfig
    normalized_embeddings = True

    def _token_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden_states)

    def _position_ids(self, input_ids: torch.Tensor, position_ids: torch.Tensor | None) -> torch.Tensor:
        if position_ids is not None:
            return position_ids
        return RobertaEmbeddings.create_position_ids_from_input_ids(input_ids, self.roberta.embeddings.padding_idx)

