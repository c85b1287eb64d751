"""The number models' heads and losses: :class:`NumberLossMixin`, a base of ``NumberModelMixin``.

The loss is ``token cross-entropy + number_loss_weight * number loss`` (plus ``digit_lookahead_weight`` times the
digit lookahead's loss where the model has its heads: ``digit_lookahead.py``); the number loss is the encoding's,
over the positions whose label (a causal LM's shifted by one) is a number token, with the labelled values
checked first. One path computes it (:meth:`NumberLossMixin._losses`), from a full forward's outputs or, with
``forward(..., loss_only=True)`` (training), running each head only where its loss reads it. The number
head, its loss and decoding run with autocast off (float32 or wider, never bf16/fp16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.nn import functional as F

from .checks import to_float64
from .encoding_base import autocast_disabled, refuse_where
from .parsing import NEUTRAL_NUMBER

__all__ = ["NumberLossMixin"]


class NumberLossMixin:
    """Heads and losses of a number model (``self.number_encoding``, ``self.config``, ``self.causal``,
    ``self.number_mask`` and ``self._token_logits`` come from ``NumberModelMixin`` and the model class)."""

    number_encoding: Any
    causal: bool
    gather_scored: bool | None = None
    """Whether ``loss_only`` gathers the scored rows before the heads; None: on the CPU only (:meth:`_losses`)."""
    fused_token_loss: Callable[[torch.Tensor, torch.nn.Module, torch.Tensor], torch.Tensor] | None = None
    """``(hidden (N, d), output embeddings, targets (N,)) -> summed cross-entropy``, ignoring -100, computed without
    the logits in memory (a fused kernel; ``hf_numbers.training.fused_loss`` sets it); None: logits, then the loss."""

    def _number_head(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The number head's output (float32 or wider) and its decoded float64 values; never bf16/fp16."""
        with autocast_disabled(hidden_states.device):
            head_output = self._number_head_output(hidden_states)
            return head_output, self.number_encoding.decode(head_output)

    def _number_head_output(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """The number head's raw output (float32 or wider, never bf16/fp16), without decoding."""
        with autocast_disabled(hidden_states.device):
            head_output = self.number_encoding.head(hidden_states.to(self.number_encoding.compute_dtype))
            return head_output.to(torch.promote_types(head_output.dtype, torch.float32))

    def _loss_targets(
        self,
        labels: torch.Tensor,
        number_labels: Any,
        numbers: torch.Tensor | None,
        scaled_numbers: bool,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """What position ``t`` is scored on: its token label, its number label in the model's units (float64) and
        whether that label is a number token (the last two None without a number encoding). A causal LM's labels
        are shifted here, the one place: position ``t`` predicts token ``t + 1`` (the labels move, not the logits).

        ``ValueError`` where a labelled value is one the encoding refuses, named as the model sees it (scaled).
        """
        def next_token(tensor: torch.Tensor, fill: float) -> torch.Tensor:
            return F.pad(tensor[:, 1:], (0, 1), value=fill) if self.causal else tensor

        labels = next_token(labels, -100)
        if self.number_encoding is None:  # a text encoding: its numbers are tokens
            return labels, None, None
        scaled = False
        if number_labels is None and self.causal:
            number_labels = numbers  # the inputs' values, in the model's units already
        elif number_labels is not None:
            number_labels = to_float64(number_labels, labels.device)
            if number_labels.shape != labels.shape:
                raise ValueError(
                    f"number_labels has shape {tuple(number_labels.shape)} but labels has shape "
                    f"{tuple(labels.shape)}; they must match"
                )
            scaled = not scaled_numbers and not self.number_scaling.is_identity
            if scaled:  # the encoding's range is in the model's units
                number_labels = self.number_scaling.transform(number_labels)
        if number_labels is not None:
            number_labels = next_token(number_labels, NEUTRAL_NUMBER)
        labelled_numbers = self.number_mask(labels)
        if number_labels is None:
            refuse_where(labelled_numbers, lambda: "labels contain number tokens but number_labels is None; pass "
                                                   "their target values")
            number_labels = torch.full(labels.shape, NEUTRAL_NUMBER, dtype=torch.float64, device=labels.device)
        bad = self.number_encoding.refused(number_labels, labelled_numbers)
        name = "number_labels (after the config's number scaling)" if scaled else "number_labels"
        refuse_where(bad, lambda: f"{name} {self.number_encoding.describe_refused(number_labels, bad)}")
        return labels, number_labels, labelled_numbers

    def _losses(
        self,
        hidden_states: torch.Tensor,
        labels: torch.Tensor,
        number_labels: torch.Tensor | None,
        numbers: torch.Tensor | None,
        scaled_numbers: bool,
        logits: torch.Tensor | None = None,
        head_output: torch.Tensor | None = None,
        lookahead_states: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor]:
        """Loss, token loss and number loss (means; 0 where nothing is labelled): the one loss path.

        A full forward passes its ``logits`` and ``head_output``. Without them (``loss_only``) each head runs only
        where its loss reads it: on the rows of those positions where :meth:`_gathers_scored` (the CPU), else (a
        GPU) at every position, masked: the same losses with fixed shapes and no host sync (a gather's size is
        one), which a compiled step needs, and :attr:`fused_token_loss` where set. ``lookahead_states``: what the
        digit lookahead reads where it is not ``hidden_states`` (``digit_lookahead_layer``).
        """
        targets, number_targets, labelled = self._loss_targets(labels, number_labels, numbers, scaled_numbers)
        gather = logits is None and self._gathers_scored(hidden_states)
        token_loss = self._scored_token_loss(hidden_states, targets, gather, logits)
        lookahead = self._lookahead_loss(hidden_states, targets, lookahead_states)
        if self.number_encoding is None:
            zero = torch.zeros_like(token_loss)
            return {"loss": token_loss + lookahead, "token_loss": token_loss, "number_loss": zero}
        with autocast_disabled(hidden_states.device):  # the number path is never bf16/fp16
            if gather:  # the rows of the labelled numbers
                hidden_states, number_targets, labelled = (
                    hidden_states[labelled], number_targets[labelled], labelled[labelled]
                )
            if head_output is None:
                head_output = self._number_head_output(hidden_states)
            number_loss = self.number_encoding.masked_loss(head_output, number_targets, labelled)
        loss = token_loss + self.config.number_loss_weight * number_loss + lookahead
        return {"loss": loss, "token_loss": token_loss, "number_loss": number_loss}

    def _lookahead_loss(self, hidden_states: torch.Tensor, targets: torch.Tensor,
                        read_states: torch.Tensor | None = None) -> torch.Tensor | float:
        """``digit_lookahead_weight`` times the digit lookahead's loss (``digit_lookahead.py``) over every position
        (the hidden states before any gather; the heads read ``read_states`` where given), in float32; 0 without
        the heads."""
        lookahead = getattr(self, "digit_lookahead", None)
        if lookahead is None:
            return 0.0
        with autocast_disabled(hidden_states.device):
            loss = lookahead.loss(hidden_states, targets, self.get_output_embeddings().weight, read_states)
        return self.config.digit_lookahead_weight * loss

    def _gathers_scored(self, hidden_states: torch.Tensor) -> bool:
        """Whether ``loss_only`` gathers the scored rows: ``self.gather_scored`` where set, else off CUDA only."""
        return not hidden_states.is_cuda if self.gather_scored is None else self.gather_scored

    def _scored_token_loss(
        self, hidden_states: torch.Tensor, targets: torch.Tensor, gather: bool, logits: torch.Tensor | None
    ) -> torch.Tensor:
        """Mean cross-entropy of the token head at the positions whose target is not -100 (0 when there are none),
        from ``logits`` where given, else from ``hidden_states`` (gathered rows, fused kernel or logits)."""
        scored = targets != -100
        if logits is None and gather:
            hidden_states, targets = hidden_states[scored], targets[scored]
        if logits is None and self.fused_token_loss is not None:
            head = self.get_output_embeddings()
            token_sum = self.fused_token_loss(hidden_states.flatten(0, -2), head, targets.flatten())
        else:
            logits = self._token_logits(hidden_states) if logits is None else logits
            token_sum = F.cross_entropy(logits.flatten(0, -2).float(), targets.flatten(), reduction="sum")
        return token_sum / scored.sum().clamp(min=1)
