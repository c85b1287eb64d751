"""Outputs of the number-aware models: transformers' LM outputs plus number predictions and losses.

A model of a text encoding (no number module, see ``text_baselines.py``) returns
``number_predictions=None`` and, with labels, ``number_loss`` 0 (a zero tensor, so that
``loss == token_loss`` and training logs keep their shape).

This module is part of the flat ``hf_numbers/modeling`` folder copied into checkpoints: it
imports nothing from ``hf_numbers`` outside that folder.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers.cache_utils import Cache
from transformers.utils import ModelOutput

__all__ = ["NumberCausalLMOutput", "NumberMaskedLMOutput"]


@dataclass
class NumberCausalLMOutput(ModelOutput):
    """Output of the causal number models (:class:`NumberGPT2ForCausalLM`, ``NumberLlamaForCausalLM``).

    Attributes:
        loss: ``token_loss + number_loss_weight * number_loss`` (when ``labels`` are given).
        logits: token logits ``(B, L, V)``.
        number_predictions: decoded float64 value ``(B, L)`` at every position; at position ``t``
            it is the value of a number token at ``t + 1`` (None for a text encoding).
        token_loss: next-token cross-entropy.
        number_loss: number loss over positions whose (shifted) label is a number token (0 for a text encoding).
        past_key_values, hidden_states, attentions: as in transformers' causal LM outputs.
        head_hidden_states: with ``number_head=False``, the hidden states the number head reads
            (``generate`` runs the head on them only after choosing a number token).
    """

    loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    number_predictions: torch.DoubleTensor | None = None
    token_loss: torch.FloatTensor | None = None
    number_loss: torch.FloatTensor | None = None
    past_key_values: Cache | None = None
    head_hidden_states: torch.FloatTensor | None = None
    hidden_states: tuple[torch.FloatTensor, ...] | None = None
    attentions: tuple[torch.FloatTensor, ...] | None = None


@dataclass
class NumberMaskedLMOutput(ModelOutput):
    """Output of the masked number models (BERT, RoBERTa, ModernBERT).

    Attributes:
        loss: ``token_loss + number_loss_weight * number_loss`` (when ``labels`` are given).
        logits: token logits ``(B, L, V)``.
        number_predictions: decoded float64 value ``(B, L)`` at every position (None for a text encoding).
        token_loss: masked-token cross-entropy.
        number_loss: number loss over positions whose label is a number token (0 for a text encoding).
        hidden_states, attentions: as in transformers' masked LM outputs.
    """

    loss: torch.FloatTensor | None = None
    logits: torch.FloatTensor | None = None
    number_predictions: torch.DoubleTensor | None = None
    token_loss: torch.FloatTensor | None = None
    number_loss: torch.FloatTensor | None = None
    hidden_states: tuple[torch.FloatTensor, ...] | None = None
    attentions: tuple[torch.FloatTensor, ...] | None = None
