"""Number encodings: how a value enters the model at a ``[NUM]`` token and how it comes back out.

Every encoding is one :class:`NumberEncoding` (``encoding_base.py``) holding its input
embedding, its number head, its loss and the decoding of head outputs into values:

=============  ===================================================  =====================================
name           input at ``[NUM]`` positions                         head / loss / decoding
=============  ===================================================  =====================================
``xval``       ``[NUM]`` embedding x value                          MLP -> scalar, MSE, the scalar
``fone``       ``[NUM]`` embedding + [cos 2pi x/T, sin 2pi x/T]     10 logits per digit place, CE, digits
``float``      residual MLP over the 32 IEEE-754 bits (replaces)    32 bit logits, BCE, float32 value
``exponent``   embedding of one of N log-spaced bins (replaces)     bin logits, CE, bin centre
=============  ===================================================  =====================================

FoNE is in its own module, ``encoding_fone.py``, and so is BitTokens, ``encoding_bittokens.py``.

Values stay float64 until an encoding turns them into features; ``check_numbers`` rejects
values an encoding cannot represent with a ``ValueError``. Each class also declares its config
options, validates them, fits them to data and says whether it wants scaled values (see
``encoding_base.py``). The registry of encodings is ``encoding_registry.py``.

This module is part of the flat ``hf_numbers/modeling`` folder copied into checkpoints: it
imports nothing from ``hf_numbers`` outside that folder.
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

from .encoding_base import FLOAT32_MAX, EncodingOption, NumberEncoding

__all__ = ["XVAL_MAX", "ExponentEncoding", "FloatBitEncoding", "XValEncoding"]

XVAL_MAX = 2.0**62
"""The largest ``|x|`` xVal accepts (inputs and labels): its square, and that of its difference to a
prediction as large, stay finite in float32 (the MSE); see :class:`XValEncoding`."""
_SQRT_FLOAT32_MAX = math.sqrt(FLOAT32_MAX)
_SQRT_FLOAT64_MAX = math.sqrt(float(np.finfo(np.float64).max))


class XValEncoding(NumberEncoding):
    """xVal (Golkar et al.): the ``[NUM]`` embedding scaled by the value; a scalar MLP head with MSE.

    The head is an MLP with one hidden layer of the model width (with biases), as in the
    paper's appendix. xVal works best with values normalised to a small range (the paper
    uses about [-5, 5]).

    Accepted: what the float32 path carries, ``|x| <= XVAL_MAX = 2^62`` (about 4.6e18), where the
    square of a target, and of its difference to a prediction as large, stays finite (the MSE);
    and, at each number token, ``|x| * ||e|| <= sqrt(float32 max)`` for its embedding ``e``, so that
    the sum of squares a LayerNorm takes of the scaled embedding stays finite (beyond it, NaN
    logits). Decoding saturates at ``+-XVAL_MAX``, so a generated value can be fed back.

    The paper's trunk (GPT-2-like, layer norms inside the blocks) sees ``x * e_[NUM] + position``,
    linear in ``x``. BERT and RoBERTa normalise their embeddings (a LayerNorm after adding positions
    and token types), which would divide the value out (100 and 10000 would look alike); on those
    backbones the model scales the *normalised* ``[NUM]`` embedding instead (``scales_embedding``),
    so the trunk's input is ``x * LayerNorm(e_[NUM] + position + type)``, again linear in ``x``.

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
        shift, scale = float(fields["number_scaling_shift"]), float(fields["number_scaling_scale"])
        log = bool(fields.get("number_scaling_log", False))
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.sign(values) * np.log10(np.abs(values) + 1.0) if log else values
            out = ~(np.abs((g - shift) / scale) <= XVAL_MAX)
        g_words = "sign(x) log10(1 + |x|)" if log else "x"
        return out, f"values with |({g_words} - {shift:.6g}) / {scale:.6g}| <= 2^62 (the config's number scaling)"

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
        if too_large.any():
            index = int(too_large.nonzero()[0])
            raise ValueError(
                f"input_numbers holds {values[index].item()!r} at a number position ({int(too_large.sum())} such "
                f"values): scaled by the number token's embedding (norm {norms[index].item():.4g}) it would overflow "
                f"float32 (|x| * norm must be <= {_SQRT_FLOAT32_MAX:.4g}), so the 'xval' encoding accepts |x| <= "
                f"{_SQRT_FLOAT32_MAX / norms[index].item():.4g} there; scale the values down (a NumberScaler)"
            )
        return token_embeds * values.to(token_embeds.dtype)[:, None]

    def head(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.mlp(hidden_states).squeeze(-1)

    def _item_losses(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        # float64: a batch's sum of squared errors of targets up to 2^62 stays finite (the mean is float32 again)
        return (outputs.double() - targets) ** 2

    def decode(self, head_output: torch.Tensor) -> torch.Tensor:
        return head_output.detach().double().clamp(-XVAL_MAX, XVAL_MAX)


class FloatBitEncoding(NumberEncoding):
    """Floating-point embedding (Jin et al.): the 32 IEEE-754 bits of the float32 value.

    The bits (sign, exponent, mantissa; most significant first, as ``struct.pack('>f', x)``)
    go through the paper's residual MLP without biases, ``x1 = ReLU(L1 b)``,
    ``x2 = L3 ReLU(L2 x1)``, ``out = ReLU(x1 + x2)``, which replaces the ``[NUM]`` embedding.
    The head predicts 32 bit logits (BCE). Values are rounded to float32 (any finite float32
    is accepted).

    Decoding: an all-ones exponent is infinity or NaN in IEEE-754, never a value the model
    should emit or read back, so such bit patterns decode to the largest finite float32 with
    the predicted sign (saturation, ``+-3.4028235e38``); decoded values are always finite.

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

