"""Number-aware ModernBERT, held by composition: ``NumberModernBertForMaskedLM`` is :class:`NumberForMaskedLM` with
``NumberModernBertConfig`` (model type ``number_modernbert``, as its checkpoints were saved).

Its embedding module ends with a LayerNorm, so an encoding that scales the embedding by the value (xVal) scales
that module's normalised output, as for BERT; there is no position-embedding module (RoPE). The token head is
ModernBERT's own (``decoder(head(hidden_states))``, run by the language model). The installed transformers keeps
ModernBERT's inputs padded (padding is masked in attention, never removed), so hidden states stay aligned with
``input_ids`` and the number positions.
"""

from __future__ import annotations

from .configuration_number_families import NumberModernBertConfig
from .modeling_number_lm import NumberForMaskedLM

__all__ = ["NumberModernBertForMaskedLM"]


class NumberModernBertForMaskedLM(NumberForMaskedLM):
    """ModernBERT masked LM with a number encoding and number head (``self.language_model``, a
    ``ModernBertForMaskedLM``); :meth:`fill_mask` fills numbers too. Checkpoints saved before composition (weights
    under ``model.``, ``head.`` and ``decoder.``) load as they are.

    Example:
        >>> import torch
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
    legacy_prefixes = ("model", "head", "decoder")
