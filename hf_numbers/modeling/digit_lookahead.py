"""The digit lookahead: training-only heads that ask a causal LM, where it writes a digit, for the digits after it.

Written left to right, a sum's digit depends on the carry from the places below it, which the model writes later.
At every position whose next ``k + 1`` labels are digits of one number, head ``k`` (``k = 1 .. digit_lookahead``)
maps the final hidden state to the token head's input space and the token head's ten digit rows score the digit
``k`` places after the next token: multi-token prediction (Gloeckle et al. 2024) on the digits only. The heads
start at zero (the loss is then ``ln 10`` each) and never touch the logits: what the model writes, before training
or after, is the model without them; they are trained and saved with it and unused by ``generate``. They read the last
hidden state, or with ``digit_lookahead_layer=k`` the output of the trunk's ``k``-th layer through its final norm
(:func:`final_norm`). With ``digit_lookahead_conditioned`` each head is also given the digits between, the labels
teacher-forced, as DeepSeek-V3's multi-token-prediction modules are given the next token: a scale and a shift per
digit (FiLM, starting at zero) on the head's output, so that a digit that could go either way (``49.5`` or ``51.0``)
is asked for given the branch taken, not of the state alone, which would press it to pick the branch early. With
``digit_lookahead_leading=False`` nothing is asked ahead where a number's first digit is written: the leading digit
(a temperature's decade) is chosen without a press to foresee the rest; the lookahead works from the second digit on.

Example:
    >>> config = NumberLlamaConfig(..., number_encoding="text", digit_lookahead=2,  # doctest: +SKIP
    ...                            digit_lookahead_ids=[tokenizer.convert_tokens_to_ids(d) for d in "0123456789"])
    >>> model(**batch).loss  # token loss + digit_lookahead_weight * this loss  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from transformers import initialization as init

__all__ = ["DigitLookahead", "build_digit_lookahead", "digit_lookaheads", "final_norm", "linear_lookahead_scale",
           "probability_of", "scale_digit_lookahead"]

FINAL_NORM_NAMES = ("norm", "ln_f", "final_layernorm", "final_layer_norm", "final_norm")
"""What transformers' decoders call the norm after their last layer (Llama, Qwen, Mistral, Gemma: ``norm``; GPT-2:
``ln_f``; Phi: ``final_layernorm``; GPT-NeoX, OPT: ``final_layer_norm``)."""


class DigitLookahead(nn.Module):
    """``config.digit_lookahead`` heads of ``(H, H)``, starting at zero, over the digit ids
    ``config.digit_lookahead_ids`` (the tokens ``0`` ... ``9``)."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        width = config.get_text_config().hidden_size
        self.heads = nn.Parameter(torch.zeros(config.digit_lookahead, width, width))  # no draw from the RNG
        self.ids = list(config.digit_lookahead_ids)
        self.confidence = bool(getattr(config, "digit_lookahead_confidence", False))
        self.power = float(getattr(config, "digit_lookahead_confidence_power", 1.0))
        self.per_token = getattr(config, "digit_lookahead_mean", "places") == "tokens"
        self.conditioned = bool(getattr(config, "digit_lookahead_conditioned", False))
        self.leading = bool(getattr(config, "digit_lookahead_leading", True))
        if self.conditioned:  # head k, the j-th digit between (j < k), that digit: a scale and a shift of its output
            self.given_scale = nn.Parameter(torch.zeros(config.digit_lookahead, config.digit_lookahead, 10, width))
            self.given_shift = nn.Parameter(torch.zeros(config.digit_lookahead, config.digit_lookahead, 10, width))
        self.register_buffer("digit_ids", torch.tensor(self.ids), persistent=False)
        # what the loss is multiplied by: 1, unless a training loop anneals it (scale_digit_lookahead)
        self.register_buffer("weight_scale", torch.ones(()), persistent=False)

    def init_parameters(self) -> None:
        """Zero heads: before training the loss is ``ln 10`` at every scored place and nothing reaches the trunk
        (loaded weights are kept: transformers' ``init`` functions skip them); the digit ids, which a checkpoint
        does not hold (``from_pretrained`` builds the module without values)."""
        init.zeros_(self.heads)
        if self.conditioned:
            init.zeros_(self.given_scale)
            init.zeros_(self.given_shift)
        init.copy_(self.digit_ids, torch.tensor(self.ids))
        init.ones_(self.weight_scale)

    def loss(self, hidden_states: torch.Tensor, targets: torch.Tensor, token_head: torch.Tensor,
             read_states: torch.Tensor | None = None) -> torch.Tensor:
        """The mean over heads of each head's mean cross-entropy among the ten digits (0 where none is scored), or
        with ``digit_lookahead_mean="tokens"`` their sum over heads and places divided by the count of scored tokens
        (``configuration_number.LOOKAHEAD_MEANS``), times :attr:`weight_scale`; with ``digit_lookahead_confidence``
        each place's cross-entropy is weighted by the token head's own probability of that digit where it is the
        next token (among the ten, detached), raised to ``digit_lookahead_confidence_power``.

        ``targets[:, t]`` is the token position ``t`` is scored on (a causal LM's labels shifted by one, -100
        ignored); head ``k`` scores ``targets[:, t + k]`` at the positions :meth:`asked` gives.
        ``token_head`` is the token head's weight ``(V, H)``. ``read_states``: what the heads read where it is not
        ``hidden_states`` (a middle layer's, ``digit_lookahead_layer``); the confidence is always the token head's
        own, from ``hidden_states``. With ``digit_lookahead_conditioned`` head ``k``'s output at ``t`` is scaled by
        ``1 + sum_j given_scale[k - 1, j, d(t + j)]`` and shifted by ``sum_j given_shift[k - 1, j, d(t + j)]``, where
        ``d(t + j)`` is the digit ``targets[:, t + j]`` (``j < k``: the digits between, as the labels give them).
        Fixed shapes and no host sync (a compiled step).
        """
        digit_rows = token_head[self.digit_ids].float()
        hidden = hidden_states.float()
        digit = self.digits_of(targets)
        length, total = targets.shape[1], hidden.new_zeros(())
        tokens = (targets != -100).sum().clamp(min=1)  # what the token loss is a mean over
        own = torch.ones_like(hidden[..., 0])
        if self.confidence:  # position t's probability of targets[:, t], the digit it writes next
            with torch.no_grad():
                own = probability_of(hidden @ digit_rows.T, digit)
                own = own if self.power == 1 else own**self.power
        if read_states is not None:
            hidden = read_states.float()
        for k, scored in enumerate(self.asked(targets), start=1):
            states = hidden[:, : length - k] @ self.heads[k - 1].T
            if self.conditioned:  # the digits between, teacher-forced (0 where not a digit: such places are unscored)
                between = [digit[:, j : length - k + j] for j in range(k)]
                scale = sum(self.given_scale[k - 1, j][d] for j, d in enumerate(between))
                states = states * (1 + scale) + sum(self.given_shift[k - 1, j][d] for j, d in enumerate(between))
            logits = states @ digit_rows.T
            losses = F.cross_entropy(logits.transpose(1, 2), digit[:, k:], reduction="none")
            placed = (losses * scored * own[:, k:]).sum()
            total = total + (placed / tokens if self.per_token else placed / scored.sum().clamp(min=1))
        return (total if self.per_token else total / self.heads.shape[0]) * self.weight_scale

    def digits_of(self, targets: torch.Tensor) -> torch.Tensor:
        """Which of the ten digits each of ``targets`` is (0 where it is no digit)."""
        return (targets.unsqueeze(-1) == self.digit_ids).float().argmax(-1)

    def asked(self, targets: torch.Tensor) -> list[torch.Tensor]:
        """Per head ``k`` (from 1), the mask ``(B, L - k)`` of the positions ``t`` where it scores ``targets[:, t +
        k]``: ``targets[:, t .. t + k]`` are all digits, and without ``digit_lookahead_leading`` ``targets[:, t - 1]``
        too (``targets[:, t]`` is not a number's first digit).

        Example:
            >>> [mask.sum().item() for mask in lookahead.asked(targets)]  # places asked for, by head  # doctest: +SKIP
            [1120, 1040]
        """
        is_digit = (targets.unsqueeze(-1) == self.digit_ids).any(-1)
        follows_digit = F.pad(is_digit[:, :-1], (1, 0))  # targets[:, t - 1] is a digit: t writes no number's first
        length, masks = targets.shape[1], []
        for k in range(1, self.heads.shape[0] + 1):
            scored = is_digit[:, k:].clone()
            for back in range(1, k + 1):
                scored &= is_digit[:, k - back : length - back]
            if not self.leading:
                scored &= follows_digit[:, : length - k]
            masks.append(scored)
        return masks


def probability_of(digit_logits: torch.Tensor, digit: torch.Tensor) -> torch.Tensor:
    """The probability, among the ten digits, that ``digit_logits`` (``(..., 10)``: the token head's digit rows) give
    each ``digit`` (:meth:`DigitLookahead.digits_of`): the confidence the lookahead weighs a place by, before its power.

    Example:
        >>> probability_of(torch.zeros(1, 10), torch.tensor([3]))
        tensor([0.1000])
    """
    return digit_logits.float().softmax(-1).gather(-1, digit.unsqueeze(-1)).squeeze(-1)


def digit_lookaheads(model: nn.Module) -> list[DigitLookahead]:
    """Every digit lookahead in ``model`` (one, or none): a training loop finds them once, not every step."""
    return [module for module in model.modules() if isinstance(module, DigitLookahead)]


def scale_digit_lookahead(heads: nn.Module | list[DigitLookahead], scale: float) -> None:
    """Multiply the loss of every digit lookahead in ``heads`` (a model, or :func:`digit_lookaheads`' list) by
    ``scale`` from now on (an annealed auxiliary loss: ``--digit_lookahead_schedule linear`` sets
    :func:`linear_lookahead_scale` before each step, so that the trunk ends trained for its tokens alone). In place, on
    the device: no host sync, and a compiled step reads the new value.

    Example:
        >>> scale_digit_lookahead(model, 0.5)  # the lookahead's loss now counts half  # doctest: +SKIP
    """
    for head in digit_lookaheads(heads) if isinstance(heads, nn.Module) else heads:
        head.weight_scale.fill_(scale)


def linear_lookahead_scale(step: int, max_steps: int) -> float:
    """The lookahead's scale at optimizer step ``step`` (from 0) of ``max_steps`` under the linear schedule: 1 at the
    first step, falling by ``1 / max_steps`` a step.

    Example:
        >>> linear_lookahead_scale(100, 400)
        0.75
    """
    return 1 - step / max_steps


def final_norm(trunk: nn.Module) -> nn.Module:
    """The norm ``trunk`` applies after its last layer, which a middle layer's output goes through before the heads
    (as the token head's input did): a ``ValueError`` naming the class where it has none of :data:`FINAL_NORM_NAMES`.

    Example:
        >>> final_norm(model.trunk)  # doctest: +SKIP
        LlamaRMSNorm((576,), eps=1e-05)
    """
    for name in FINAL_NORM_NAMES:
        if isinstance(module := getattr(trunk, name, None), nn.Module):
            return module
    raise ValueError(f"digit_lookahead_layer reads a layer's output through the trunk's final norm, but "
                     f"{type(trunk).__name__} has none of the attributes {', '.join(FINAL_NORM_NAMES)}")


def build_digit_lookahead(config: Any) -> DigitLookahead | None:
    """The lookahead heads where ``config.digit_lookahead`` asks for them, else None."""
    return DigitLookahead(config) if getattr(config, "digit_lookahead", 0) else None
