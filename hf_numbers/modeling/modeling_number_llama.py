"""Number-aware Llama, held by composition: ``NumberLlamaForCausalLM`` is :class:`NumberForCausalLM` with
``NumberLlamaConfig`` (model type ``number_llama``, as its checkpoints were saved).

Llama has no position-embedding module (RoPE rotates queries and keys inside attention) and no norm on its
embeddings, so the number encoding's output is the trunk's input as it is (xVal: ``value x e_[NUM]``); what that
means for xVal's start (``VALUE_ROWS_INIT_SCALE``) the composed path reads from the model's facts, as for any
rotary model.
"""

from __future__ import annotations

from .configuration_number_families import NumberLlamaConfig
from .modeling_number_lm import NumberForCausalLM

__all__ = ["NumberLlamaForCausalLM"]


class NumberLlamaForCausalLM(NumberForCausalLM):
    """Llama with a number encoding and number head (``self.language_model``, a ``LlamaForCausalLM``); ``generate``
    also returns the numbers. Checkpoints saved before composition (weights under ``model.`` and ``lm_head.``) load
    as they are.

    Example:
        >>> import torch
        >>> config = NumberLlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        ...                            num_attention_heads=2, num_key_value_heads=1, vocab_size=100,
        ...                            num_token_id=98, num_token_ids=[98, 99], number_encoding="fone")
        >>> model = NumberLlamaForCausalLM(config)
        >>> ids = torch.tensor([[1, 5, 99, 7]])
        >>> out = model(input_ids=ids, input_numbers=torch.tensor([[1.0, 1.0, 2.5, 1.0]], dtype=torch.float64),
        ...             labels=ids)
        >>> out.number_predictions.shape
        torch.Size([1, 4])
    """

    config_class = NumberLlamaConfig
    legacy_prefixes = ("model", "lm_head")
