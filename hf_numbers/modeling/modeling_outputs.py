"""Outputs of the number-aware models: transformers' LM outputs plus number predictions and losses.

A model of a text encoding (no number module, see ``encoding_text.py``) returns
``number_predictions=None`` and, with labels, ``number_loss`` 0 (a zero tensor, so that
``loss == token_loss`` and training logs keep their shape).

The causal output extends transformers' own ``CausalLMOutputWithPast``, so its KV-cache field
has the installed release's name (``past_key_values`` up to 5.23, ``cache`` from 5.24):
:data:`CACHE_NAME`. This is the one place that knows about that rename.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from transformers.modeling_outputs import CausalLMOutputWithPast, MaskedLMOutput

__all__ = ["CACHE_NAME", "NumberCausalLMOutput", "NumberMaskedLMOutput"]

#: The KV cache's name in the installed transformers' outputs and forward arguments.
CACHE_NAME = "cache" if "cache" in {field.name for field in fields(CausalLMOutputWithPast)} else "past_key_values"


@dataclass
class NumberCausalLMOutput(CausalLMOutputWithPast):
    """Output of the causal number models (:class:`NumberGPT2ForCausalLM`, ``NumberLlamaForCausalLM``).

    Attributes:
        loss: ``token_loss + number_loss_weight * number_loss`` (when ``labels`` are given), plus
            ``digit_lookahead_weight`` times the digit lookahead's loss where the model has its heads.
        logits: token logits ``(B, L, V)``.
        number_predictions: decoded float64 value ``(B, L)`` at every position; at position ``t``
            it is the value of a number token at ``t + 1`` (None for a text encoding).
        token_loss: next-token cross-entropy.
        number_loss: number loss over positions whose (shifted) label is a number token (0 for a text encoding).
        cache (``past_key_values`` before transformers 5.24), hidden_states, attentions: inherited
            from transformers' causal LM output (a tuple holds those fields first, then the number ones).
        head_hidden_states: with ``number_head=False``, the hidden states the number head reads
            (``generate`` runs the head on them only after choosing a number token).
    """

    number_predictions: torch.DoubleTensor | None = None
    token_loss: torch.FloatTensor | None = None
    number_loss: torch.FloatTensor | None = None
    head_hidden_states: torch.FloatTensor | None = None


@dataclass
class NumberMaskedLMOutput(MaskedLMOutput):
    """Output of the masked number models (BERT, RoBERTa, ModernBERT).

    Attributes:
        loss: ``token_loss + number_loss_weight * number_loss`` (when ``labels`` are given).
        logits: token logits ``(B, L, V)``.
        number_predictions: decoded float64 value ``(B, L)`` at every position (None for a text encoding).
        token_loss: masked-token cross-entropy.
        number_loss: number loss over positions whose label is a number token (0 for a text encoding).
        hidden_states, attentions: inherited from transformers' masked LM output.
    """

    number_predictions: torch.DoubleTensor | None = None
    token_loss: torch.FloatTensor | None = None
    number_loss: torch.FloatTensor | None = None
