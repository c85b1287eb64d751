"""Floating-point embedding (Jin et al.): the 32 IEEE-754 bits of the value through a residual MLP, 32 bit logits.

One :class:`NumberEncoding` (``encoding_base.py``) of the registry (``encoding_registry.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import initialization as init

from .encoding_base import FLOAT32_MAX, NumberEncoding

__all__ = ["FloatBitEncoding"]


class FloatBitEncoding(NumberEncoding):
    """Floating-point embedding (Jin et al.): the 32 IEEE-754 bits of the float32 value.

    The bits (most significant first, as ``struct.pack('>f', x)``) go through the paper's residual MLP
    without biases, ``out = ReLU(x1 + L3 ReLU(L2 x1))`` with ``x1 = ReLU(L1 b)``, which replaces the
    ``[NUM]`` embedding; the head predicts 32 bit logits (BCE). An all-ones exponent (infinity, NaN)
    decodes to the largest finite float32 with the predicted sign, so decoded values are always finite.

    Example:
        >>> from hf_numbers import NumberRobertaConfig
        >>> enc = FloatBitEncoding(NumberRobertaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2))
        >>> enc.bits(torch.tensor([1.0], dtype=torch.float64))[0, :9].tolist()
        [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """

    name = "float"

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Values that are not finite once rounded to float32."""
        with np.errstate(over="ignore"):
            return ~np.isfinite(values.astype(np.float32)), f"finite float32 values, |x| <= {FLOAT32_MAX:.8g}"

    def __init__(self, config: Any):
        super().__init__(config)
        self.l1 = nn.Linear(32, self.hidden_size, bias=False)
        self.l2 = nn.Linear(self.hidden_size, self.hidden_size, bias=False)
        self.l3 = nn.Linear(self.hidden_size, self.hidden_size, bias=False)
        self.bit_head = nn.Linear(self.hidden_size, 32)
        self.init_parameters()

    def init_parameters(self) -> None:
        for layer in (self.l1, self.l2, self.l3, self.bit_head):
            init.normal_(layer.weight, mean=0.0, std=self.initializer_range)
        init.zeros_(self.bit_head.bias)

    def allowed_range(self) -> str:
        return self.data_out_of_range(np.zeros(0), {}, self.hidden_size)[1]

    def _out_of_range(self, values: torch.Tensor) -> torch.Tensor:
        return ~torch.isfinite(values.float())

    @staticmethod
    def bits(values: torch.Tensor) -> torch.Tensor:
        """The 32 IEEE-754 bits ``(N, 32)`` of ``values`` rounded to float32, as 0./1. floats, MSB first."""
        words = values.float().view(torch.int32).long() & 0xFFFFFFFF
        shifts = torch.arange(31, -1, -1, device=values.device)
        return ((words[:, None] >> shifts) & 1).float()

    def _embed_values(self, token_embeds: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        x1 = F.relu(self.l1(self.bits(values).to(self.l1.weight.dtype)))
        x2 = self.l3(F.relu(self.l2(x1)))
        return F.relu(x1 + x2)

    def head(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """``(B, L, 32)`` bit logits, most significant bit first."""
        return self.bit_head(hidden_states)

    def _item_losses(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        bits = self.bits(targets).to(outputs.dtype)
        return F.binary_cross_entropy_with_logits(outputs, bits, reduction="none").mean(-1)

    def decode(self, head_output: torch.Tensor) -> torch.Tensor:
        bits = (head_output.detach() > 0).long()
        shifts = torch.arange(31, -1, -1, device=bits.device)
        words = (bits << shifts).sum(-1)
        exponent_all_ones = (words & 0x7F800000) == 0x7F800000
        words = torch.where(exponent_all_ones, (words & 0x80000000) | 0x7F7FFFFF, words)
        words = torch.where(words >= 2**31, words - 2**32, words)
        return words.to(torch.int32).view(torch.float32).double()
