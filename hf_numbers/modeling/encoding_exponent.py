"""Exponent embedding (Thawani et al. baseline): one embedding per log-spaced magnitude bin, bin classification.

One :class:`NumberEncoding` (``encoding_base.py``) of the registry (``encoding_registry.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import initialization as init

from .encoding_base import EncodingOption, NumberEncoding

__all__ = ["ExponentEncoding"]


class ExponentEncoding(NumberEncoding):
    """Exponent embedding (Thawani et al. baseline): one embedding per log-spaced magnitude bin.

    ``N = exponent_num_bins`` bins split ``[exponent_min, exponent_max]`` evenly in log10.
    Classes: 0 is the value zero, ``1..N`` the positive bins, ``N+1..2N`` the negative bins.
    The class embedding replaces the ``[NUM]`` embedding; the head classifies the class (CE)
    and decoding returns the (geometric) bin centre with its sign, or 0.

    Example:
        >>> from hf_numbers import NumberBertConfig
        >>> enc = ExponentEncoding(NumberBertConfig(hidden_size=32, number_encoding="exponent",
        ...                                         exponent_num_bins=10, exponent_min=1.0, exponent_max=1e10))
        >>> enc.classes(torch.tensor([0.0, 5.0, -5.0], dtype=torch.float64)).tolist()
        [0, 1, 11]
    """

    name = "exponent"
    options = (
        EncodingOption("exponent_num_bins", int, 64, "Number of log-spaced magnitude bins, >= 2"),
        EncodingOption(
            "exponent_min", float, 1e-3, "Smallest magnitude of the exponent bins, 0 < exponent_min", fitted=True
        ),
        EncodingOption(
            "exponent_max", float, 1e7, "Largest magnitude of the exponent bins, exponent_min < exponent_max < inf",
            fitted=True,
        ),
    )

    @classmethod
    def validate_options(cls, config: Any) -> None:
        if config.exponent_num_bins < 2:
            raise ValueError(f"exponent_num_bins must be >= 2, got {config.exponent_num_bins}")
        if not (0 < config.exponent_min < config.exponent_max and math.isfinite(config.exponent_max)):
            raise ValueError(
                "exponent_min and exponent_max must satisfy 0 < exponent_min < exponent_max < inf, "
                f"got {config.exponent_min} and {config.exponent_max}"
            )

    @classmethod
    def fit_options(cls, values: np.ndarray, given: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """The magnitude range of the non-zero values, widened by 1% on each side (none: the defaults).

        Example:
            >>> ExponentEncoding.fit_options(np.array([0.0, -2.0, 50.0]))
            {'exponent_min': 1.9801980198019802, 'exponent_max': 50.5}
        """
        magnitudes = np.abs(values[values != 0])
        if not len(magnitudes):
            return {}
        return {"exponent_min": float(magnitudes.min() / 1.01), "exponent_max": float(magnitudes.max() * 1.01)}

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Non-zero magnitudes outside the given bins' range, or (fitted) too large to widen by 1%."""
        low, high = float(fields.get("exponent_min", 0.0)), fields.get("exponent_max")
        high = float(np.finfo(np.float64).max) / 1.01 if high is None else float(high)
        magnitude = np.abs(values)
        out = ~(magnitude <= high) | ((values != 0) & (magnitude < low))
        low_words = f"{low:g} <= |x| <= " if low > 0 else "|x| <= "
        return out, f"0 or finite values with {low_words}{high:.6g} (exponent_min, exponent_max)"

    def __init__(self, config: Any):
        super().__init__(config)
        self.num_bins = int(config.exponent_num_bins)
        self.min_value = float(config.exponent_min)
        self.max_value = float(config.exponent_max)
        self.log_min = math.log10(self.min_value)
        self.log_width = (math.log10(self.max_value) - self.log_min) / self.num_bins
        self.class_embeddings = nn.Embedding(2 * self.num_bins + 1, self.hidden_size)
        self.class_head = nn.Linear(self.hidden_size, 2 * self.num_bins + 1)
        self.init_parameters()

    def init_parameters(self) -> None:
        init.normal_(self.class_embeddings.weight, mean=0.0, std=self.initializer_range)
        init.normal_(self.class_head.weight, mean=0.0, std=self.initializer_range)
        init.zeros_(self.class_head.bias)

    def allowed_range(self) -> str:
        return f"0 or finite values with {self.min_value:g} <= |x| <= {self.max_value:g} (exponent_min, exponent_max)"

    def _out_of_range(self, values: torch.Tensor) -> torch.Tensor:
        magnitude = values.abs()
        return (values != 0) & ((magnitude < self.min_value) | (magnitude > self.max_value))

    def classes(self, values: torch.Tensor) -> torch.Tensor:
        """Class index ``(N,)`` of in-range float64 ``values``."""
        safe = values.abs().clamp(min=self.min_value)
        bins = ((safe.log10() - self.log_min) / self.log_width).floor().long().clamp(0, self.num_bins - 1)
        return torch.where(values == 0, 0, torch.where(values > 0, 1 + bins, 1 + self.num_bins + bins))

    def centres(self, classes: torch.Tensor) -> torch.Tensor:
        """Float64 value of each class: 0, or the geometric centre of its bin with its sign."""
        bins = (classes - 1) % self.num_bins
        magnitude = 10.0 ** (self.log_min + (bins.double() + 0.5) * self.log_width)
        return torch.where(classes == 0, 0.0, torch.where(classes <= self.num_bins, magnitude, -magnitude))

    def _embed_values(self, token_embeds: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        return self.class_embeddings(self.classes(values))

    def head(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """``(B, L, 2N + 1)`` class logits."""
        return self.class_head(hidden_states)

    def _item_losses(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(outputs, self.classes(targets), reduction="none")

    def decode(self, head_output: torch.Tensor) -> torch.Tensor:
        return self.centres(head_output.detach().argmax(-1))

