"""Number-aware GPT-2, BERT and RoBERTa, each holding transformers' own model by composition (``NumberForCausalLM``,
``NumberForMaskedLM``) under the model type its checkpoints were saved with; the weights of a checkpoint saved before
composition, under the plain model's names (``legacy_prefixes``), load renamed.

Example:
    >>> tokenizer = NumberGPT2Tokenizer.from_pretrained("path/to/gpt2")  # doctest: +SKIP
    >>> model = NumberGPT2ForCausalLM.from_pretrained_backbone("path/to/gpt2", tokenizer,
    ...                                                        number_encoding="fone")  # doctest: +SKIP
"""

from __future__ import annotations

from .configuration_number_families import NumberBertConfig, NumberGPT2Config, NumberRobertaConfig
from .modeling_number_base import NumberModelMixin
from .modeling_number_lm import NumberForCausalLM, NumberForMaskedLM
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
        >>> import torch
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


class NumberBertForMaskedLM(NumberForMaskedLM):
    """BERT masked LM with a number encoding and number head (``self.language_model``, a ``BertForMaskedLM``);
    :meth:`fill_mask` fills numbers too. Checkpoints saved before composition (under ``bert.`` and ``cls.``) load as
    they are.

    Example:
        >>> import torch
        >>> config = NumberBertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        ...                           intermediate_size=64, vocab_size=100, num_token_id=99, number_encoding="float")
        >>> model = NumberBertForMaskedLM(config)
        >>> model(input_ids=torch.tensor([[2, 99, 3]]),
        ...       input_numbers=torch.tensor([[1.0, -7.25, 1.0]], dtype=torch.float64)).logits.shape
        torch.Size([1, 3, 100])
    """

    config_class = NumberBertConfig
    legacy_prefixes = ("bert", "cls")


class NumberRobertaForMaskedLM(NumberForMaskedLM):
    """RoBERTa masked LM with a number encoding and number head (``self.language_model``, a ``RobertaForMaskedLM``);
    :meth:`fill_mask` fills numbers too. Position ids come from ``input_ids`` as RoBERTa makes them (padding keeps
    the padding position). Checkpoints saved before composition (under ``roberta.`` and ``lm_head.``) load as they
    are.

    Example:
        >>> import torch
        >>> config = NumberRobertaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        ...                              intermediate_size=64, vocab_size=100, num_token_id=98,
        ...                              num_token_ids=[98, 99], number_encoding="exponent")
        >>> model = NumberRobertaForMaskedLM(config)
        >>> model(input_ids=torch.tensor([[0, 99, 2]]),
        ...       input_numbers=torch.tensor([[1.0, 300.0, 1.0]], dtype=torch.float64)).number_predictions.dtype
        torch.float64
    """

    config_class = NumberRobertaConfig
    legacy_prefixes = ("roberta", "lm_head")
