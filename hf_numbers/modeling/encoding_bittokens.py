"""The BitTokens number encoding (Kreitner, Hager et al., arXiv 2510.06824): a value's IEEE-754 bits in and out.

``bittokens``: the ``[NUM]`` embedding plus a projection of the value's float64 bits (and optionally
those of ``1/x``), each mapped to -1 / +1; the head predicts the value's bits (BCE) and decodes them
to exactly the float those bits write. Each other number encoding has its ``encoding_<name>.py``; the
interface is ``encoding_base.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import initialization as init

from .encoding_base import FLOAT32_MAX, EncodingOption, NumberEncoding

__all__ = ["BitTokensEncoding"]


class _Format(NamedTuple):
    """An IEEE-754 binary format: its width, its float and integer dtypes, the exponent mask, the largest finite."""

    bits: int
    float_dtype: torch.dtype
    int_dtype: torch.dtype
    exponent_mask: int
    largest_finite: int


FORMATS = {
    "float64": _Format(64, torch.float64, torch.int64, 0x7FF0000000000000, 0x7FEFFFFFFFFFFFFF),
    "float32": _Format(32, torch.float32, torch.int32, 0x7F800000, 0x7F7FFFFF),
}
"""``bittokens_precision`` -> its format."""
HEADS = ("linear", "mlp")
"""``bittokens_head`` values: one linear layer, or Linear(H, H/2)-ReLU-Linear as in the reference code."""
EMBEDDINGS = ("added", "zero_pad")
"""``bittokens_embedding`` values: the ``[NUM]`` embedding plus a learned projection of the bits (ours), or the
reference code's ``zero_pad``: the bits themselves, scaled and zero-padded to the hidden size, as the embedding."""


class BitTokensEncoding(NumberEncoding):
    """BitTokens: the IEEE-754 bits of the value (and of ``1/x``) added to the ``[NUM]`` embedding; a bit head.

    Each of the ``n`` = 64 (or 32) bits, most significant first, becomes ``2b - 1`` and a projection
    (initialised to the identity) adds them to the ``[NUM]`` embedding; the head predicts ``n`` bit
    logits (BCE), which decode exactly to the float they write, so a generated value is fed back bit
    for bit (an infinity or NaN pattern saturates to the largest finite value). Any finite float64 is
    accepted. The options and the differences from the reference code are in docs/models.md.

    Example:
        >>> from hf_numbers import NumberGPT2Config
        >>> enc = BitTokensEncoding(NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="bittokens"))
        >>> enc.bits(torch.tensor([-2.0], dtype=torch.float64))[0, :12].tolist()
        [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    """

    name = "bittokens"
    options = (
        EncodingOption(
            "bittokens_precision", str, "float64", "IEEE-754 format of the bits: float64 (64 bits) or float32 (32 bits)"
        ),
        EncodingOption("bittokens_reciprocal", bool, True, "Also embed the bits of 1/x (2n inputs), true or false"),
        EncodingOption("bittokens_head", str, "linear", "Bit head: linear, or mlp (Linear(H, H/2)-ReLU-Linear)"),
        EncodingOption(
            "bittokens_embedding",
            str,
            "added",
            "added (the [NUM] embedding plus a learned projection of the bits) or zero_pad (the reference code's: "
            "the +-1 bits times sqrt(H / inputs), zero-padded to the hidden size H, are the embedding)",
        ),
        EncodingOption(
            "bittokens_weighted_loss",
            bool,
            False,
            "Weight each bit's BCE by its significance (n for the sign bit down to 1), true or false",
        ),
    )

    @classmethod
    def validate_options(cls, config: Any) -> None:
        choices = (("bittokens_precision", tuple(FORMATS)), ("bittokens_head", HEADS),
                   ("bittokens_embedding", EMBEDDINGS))  # fmt: skip
        for field, allowed in choices:
            if getattr(config, field) not in allowed:
                raise ValueError(f"{field} must be one of {', '.join(allowed)}, got {getattr(config, field)!r}")
        for field in ("bittokens_reciprocal", "bittokens_weighted_loss"):
            if not isinstance(getattr(config, field), bool):
                raise ValueError(f"{field} must be True or False, got {getattr(config, field)!r}")
        inputs = cls.input_width(config)
        if config.bittokens_embedding == "zero_pad" and config.hidden_size < inputs:
            raise ValueError(f"bittokens_embedding='zero_pad' writes {inputs} bits into the embedding, but hidden_size "
                             f"is {config.hidden_size}; it needs hidden_size >= {inputs}")

    @staticmethod
    def input_width(config: Any) -> int:
        """How many ±1 bits a value embeds: n, or 2n with the bits of 1/x (``bittokens_reciprocal``)."""
        return FORMATS[config.bittokens_precision].bits * (2 if config.bittokens_reciprocal else 1)

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Non-finite values; with ``bittokens_precision="float32"``, those not finite once rounded to float32."""
        precision = fields.get("bittokens_precision", "float64")
        return cls._beyond(values, precision), cls._range_words(precision)

    @staticmethod
    def _beyond(values: np.ndarray, precision: str) -> np.ndarray:
        with np.errstate(over="ignore"):
            return ~np.isfinite(values.astype(np.float32 if precision == "float32" else np.float64))

    @staticmethod
    def _range_words(precision: str) -> str:
        if precision == "float32":
            return f"finite float32 values, |x| <= {FLOAT32_MAX:.8g} (bittokens_precision='float32')"
        return "finite float64 values"

    def __init__(self, config: Any):
        super().__init__(config)
        self.precision = str(config.bittokens_precision)
        self.format = FORMATS[self.precision]
        self.reciprocal = bool(config.bittokens_reciprocal)
        self.weighted_loss = bool(config.bittokens_weighted_loss)
        n = self.format.bits
        self.inputs = self.input_width(config)
        self.zero_pad = config.bittokens_embedding == "zero_pad"
        self.bit_proj = None if self.zero_pad else nn.Linear(self.inputs, self.hidden_size, bias=False)
        if config.bittokens_head == "mlp":
            half = max(self.hidden_size // 2, 1)
            self.bit_head = nn.Sequential(nn.Linear(self.hidden_size, half), nn.ReLU(), nn.Linear(half, n))
        else:
            self.bit_head = nn.Sequential(nn.Linear(self.hidden_size, n))
        self.init_parameters()

    def init_parameters(self) -> None:
        if self.bit_proj is not None:
            init.eye_(self.bit_proj.weight)
        for layer in self.bit_head:
            if isinstance(layer, nn.Linear):
                init.normal_(layer.weight, mean=0.0, std=self.initializer_range)
                init.zeros_(layer.bias)

    def allowed_range(self) -> str:
        return self._range_words(self.precision)

    def _out_of_range(self, values: torch.Tensor) -> torch.Tensor:
        return ~torch.isfinite(values.to(self.format.float_dtype))

    def bits(self, values: torch.Tensor) -> torch.Tensor:
        """The ``n`` IEEE-754 bits ``(N, n)`` of float64 ``values`` (rounded to float32 first for that
        precision), as 0/1 integers, most significant first; read with integer ops, never via a narrower float."""
        words = values.to(self.format.float_dtype).view(self.format.int_dtype).long()
        shifts = torch.arange(self.format.bits - 1, -1, -1, device=values.device)
        return (words[:, None] >> shifts) & 1

    def _embed_values(self, token_embeds: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        bits = self.bits(values)
        if self.reciprocal:  # in the format's own arithmetic: 1/0 is inf, 1/(-0) is -inf
            bits = torch.cat([bits, self.bits(1.0 / values.to(self.format.float_dtype))], dim=-1)
        if self.zero_pad:  # the embedding is the bits, at the scale of a unit-variance vector of the hidden size
            signs = (2 * bits - 1).to(token_embeds.dtype) * math.sqrt(self.hidden_size / self.inputs)
            return F.pad(signs, (0, self.hidden_size - self.inputs))
        signs = (2 * bits - 1).to(self.bit_proj.weight.dtype)
        return token_embeds + self.bit_proj(signs).to(token_embeds.dtype)

    def head(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """``(B, L, n)`` bit logits, most significant bit first."""
        return self.bit_head(hidden_states)

    def bit_weights(self, device: torch.device | None = None) -> torch.Tensor:
        """Per-bit loss weights ``(n,)``, mean 1: all ones, or ``n .. 1`` from the sign bit down (weighted loss)."""
        n = self.format.bits
        if not self.weighted_loss:
            return torch.ones(n, device=device)
        ramp = torch.arange(n, 0, -1, device=device, dtype=torch.float32)
        return ramp / ramp.mean()

    def _item_losses(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        bits = self.bits(targets).to(outputs.dtype)
        per_bit = F.binary_cross_entropy_with_logits(outputs, bits, reduction="none")
        return (per_bit * self.bit_weights(outputs.device).to(outputs.dtype)).mean(-1)

    def decode(self, head_output: torch.Tensor) -> torch.Tensor:
        n, fmt = self.format.bits, self.format
        bits = (head_output.detach() > 0).long()
        shifts = torch.arange(n - 2, -1, -1, device=bits.device)
        magnitude = (bits[..., 1:] << shifts).sum(-1)  # exponent and mantissa: < 2^(n-1), no overflow
        not_finite = (magnitude & fmt.exponent_mask) == fmt.exponent_mask  # inf or NaN: saturate
        magnitude = torch.where(not_finite, fmt.largest_finite, magnitude)
        words = magnitude + bits[..., 0] * -(2 ** (n - 1))  # the sign bit: two's complement of the n-bit word
        return words.to(fmt.int_dtype).view(fmt.float_dtype).double()
