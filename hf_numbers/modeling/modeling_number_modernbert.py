"""Number-aware ModernBERT: a masked LM with a number encoding; :meth:`fill_mask` fills numbers too.

``NumberModernBertForMaskedLM`` subclasses transformers' ``ModernBertForMaskedLM``, so a plain
ModernBERT checkpoint loads into it and reuses every weight. Its embedding module ends with a
LayerNorm, so an encoding that scales the embedding by the value (xVal) scales that module's
normalised output (``normalized_embeddings``), as for BERT; there is no position-embedding
module (RoPE). The token head is ModernBERT's own: ``decoder(head(hidden_states))``. The
installed transformers keeps ModernBERT's inputs padded (padding is masked in attention, never
removed), so hidden states stay aligned with ``input_ids`` and the number positions; logits are
always dense (``config.sparse_prediction`` is not applied).
"""

from __future__ import annotations

import torch
from transformers import ModernBertForMaskedLM

from .configuration_number import NumberModernBertConfig
from .generation_number import NumberFillMaskMixin
from .modeling_number_base import NumberModelMixin

__all__ = ["NumberModernBertForMaskedLM"]


class NumberModernBertForMaskedLM(NumberFillMaskMixin, NumberModelMixin, ModernBertForMaskedLM):
    """ModernBERT masked LM with a number encoding and number head; :meth:`fill_mask` fills numbers too.

    Example:
        >>> config = NumberModernBertConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        ...                                 num_attention_heads=2, vocab_size=100, pad_token_id=1,
        ...                                 bos_token_id=2, eos_token_id=3, cls_token_id=2, sep_token_id=3,
        ...                                 num_token_id=98, num_token_ids=[98, 99], number_encoding="xval")
        >>> model = NumberModernBertForMaskedLM(config)
        >>> model(input_ids=torch.tensor([[2, 99, 3]]),
        ...       input_numbers=torch.tensor([[1.0, 0.5, 1.0]], dtype=torch.float64)).logits.shape
        torch.Size([1, 3, 100])
    """

    config_class = NumberModernBertConfig
    adds_positions = False
    normalized_embeddings = True

    def _token_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.head(hidden_states))
