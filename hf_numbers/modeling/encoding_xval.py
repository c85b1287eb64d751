"""xVal (Golkar et al.): the ``[NUM]`` embedding scaled by the value, a scalar head with MSE.

One :class:`NumberEncoding` (``encoding_base.py``) of the registry (``encoding_registry.py``). The
values it multiplies by are in the model's units: the model maps the data's values there with its
config's ``NumberScaling`` (``number_scaling.py``: shift, scale, signed log; fitted to the data).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from torch import nn
from transformers import initialization as init

from .encoding_base import FLOAT32_MAX, NumberEncoding, refuse_where
from .number_scaling import NumberScaling

__all__ = ["XVAL_MAX", "XValEncoding"]

XVAL_MAX = 2.0**62
"""The largest ``|x|`` xVal accepts (inputs and labels): its square, and that of its difference to a
prediction as large, stay finite in float32 (the MSE); see :class:`XValEncoding`."""
_SQRT_FLOAT32_MAX = math.sqrt(FLOAT32_MAX)
_SQRT_FLOAT64_MAX = math.sqrt(float(np.finfo(np.float64).max))


class XValEncoding(NumberEncoding):
    """xVal (Golkar et al.): the ``[NUM]`` embedding scaled by the value; a scalar MLP head with MSE.

    One embedding carries every value, linearly, which suits regression-like tasks; values should
    be scaled to a small range first (``needs_scaling``). It accepts ``|x| <= XVAL_MAX = 2^62`` and
    ``|x| * ||e_[NUM]|| <= sqrt(float32 max)``, so the MSE and a LayerNorm of the scaled embedding
    stay finite; on BERT and RoBERTa it scales the *normalised* embedding (``scales_embedding``).
    Why, with the head's shape: docs/models.md ("xVal here and in the paper").

    Example:
        >>> from hf_numbers import NumberBertConfig
        >>> enc = XValEncoding(NumberBertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2))
        >>> enc.head(torch.zeros(2, 5, 32)).shape
        torch.Size([2, 5])
    """

    name = "xval"
    needs_scaling = True
    scales_embedding = True
    continuous_output = True

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Beyond the square root of float64's maximum (a fitted scaling squares values), or beyond 2^62 once scaled."""
        if "number_scaling_scale" not in fields:  # the scaling is fitted to the data: its standard deviation
            words = (
                f"finite values with |x| <= {_SQRT_FLOAT64_MAX:.4g}, the square root of float64's largest value "
                "(the number scaling fitted to the data takes their standard deviation, which squares them)"
            )
            return ~(np.abs(values) <= _SQRT_FLOAT64_MAX), words
        scaling = NumberScaling.from_config(SimpleNamespace(**fields))
        out = ~(np.abs(scaling.transform(values)) <= XVAL_MAX)
        g = "sign(x) log10(1 + |x|)" if scaling.log else "x"
        words = f"values with |({g} - {scaling.shift:.6g}) / {scaling.scale:.6g}| <= 2^62 (the config's number scaling)"
        return out, words

    def __init__(self, config: Any):
        super().__init__(config)
        self.mlp = nn.Sequential(
            nn.Linear(self.hidden_size, self.hidden_size), nn.GELU(), nn.Linear(self.hidden_size, 1)
        )
        self.init_parameters()

    def init_parameters(self) -> None:
        for layer in (self.mlp[0], self.mlp[2]):
            init.normal_(layer.weight, mean=0.0, std=self.initializer_range)
            init.zeros_(layer.bias)

    def allowed_range(self) -> str:
        return f"finite values with |x| <= {XVAL_MAX:.4g} (2^62: its square stays finite in float32)"

    def _out_of_range(self, values: torch.Tensor) -> torch.Tensor:
        return values.abs() > XVAL_MAX

    def _embed_values(self, token_embeds: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        norms = token_embeds.double().norm(dim=-1)
        too_large = values.abs() * norms > _SQRT_FLOAT32_MAX
        refuse_where(too_large, lambda: self._overflow_message(values, norms, too_large))
        return token_embeds * values.to(token_embeds.dtype)[:, None]

    @staticmethod
    def _overflow_message(values: torch.Tensor, norms: torch.Tensor, too_large: torch.Tensor) -> str:
        index = int(too_large.nonzero()[0])
        return (
            f"input_numbers holds {values[index].item()!r} at a number position ({int(too_large.sum())} such "
            f"values): scaled by the number token's embedding (norm {norms[index].item():.4g}) it would overflow "
            f"float32 (|x| * norm must be <= {_SQRT_FLOAT32_MAX:.4g}), so the 'xval' encoding accepts |x| <= "
            f"{_SQRT_FLOAT32_MAX / norms[index].item():.4g} there; scale the values down (the number scaling)"
        )

    def head(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.mlp(hidden_states).squeeze(-1)

    def _item_losses(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        # float64: a batch's sum of squared errors of targets up to 2^62 stays finite (the mean is float32 again)
        return (outputs.double() - targets) ** 2

    def decode(self, head_output: torch.Tensor) -> torch.Tensor:
        return head_output.detach().double().clamp(-XVAL_MAX, XVAL_MAX)
