"""Number-aware Llama: a causal LM with a number encoding, whose ``generate`` also returns numbers.

``NumberLlamaForCausalLM`` subclasses transformers' ``LlamaForCausalLM``, so a plain Llama
checkpoint loads into it and reuses every weight. Llama has no position-embedding module (RoPE
rotates queries and keys inside attention) and no norm on its embeddings, so the number
encoding's output is the trunk's input as it is (xVal: ``value x e_[NUM]``). The first block's
RMSNorm divides that value's size out, so a fresh xVal model starts its number rows larger
(``VALUE_ROWS_INIT_SCALE``) for the value to count in the residual stream from block 2 on.
"""

from __future__ import annotations

import torch
from transformers import LlamaForCausalLM

from .configuration_number import NumberLlamaConfig
from .generation_number import NumberGenerationMixin
from .modeling_number_base import NumberModelMixin
from .modeling_outputs import NumberCausalLMOutput

__all__ = ["NumberLlamaForCausalLM"]


class NumberLlamaForCausalLM(NumberGenerationMixin, NumberModelMixin, LlamaForCausalLM):
    """Llama with a number encoding and number head; ``generate`` also returns the numbers.

    Example:
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
    causal = True
    adds_positions = False
    output_class = NumberCausalLMOutput

    def _token_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden_states)
