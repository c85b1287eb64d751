"""The FoNE number encoding (Zhou et al.): Fourier features of every digit place, read back digit by digit.

``fone``: the ``[NUM]`` embedding plus ``[cos 2pi x/T, sin 2pi x/T]`` for ``T = 10^k`` (one pair
per digit place, zero-padded to the hidden size); the head gives 10 logits per digit place
(cross-entropy per digit) and decodes to the value those digits write. The interface is
``encoding_base.py``, the registry ``encoding_registry.py``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import initialization as init

from .encoding_base import EncodingOption, NumberEncoding
from .parsing import format_number

__all__ = ["FoNEEncoding"]

MAX_PLACES = 15
"""Most digit places in all (``fone_int_digits + fone_frac_digits``): the exact digits of a float64."""


class FoNEEncoding(NumberEncoding):
    """FoNE (Zhou et al.): Fourier features of every digit place, read back digit by digit.

    Place ``p`` of ``fone_int_digits + fone_frac_digits`` adds ``cos, sin(2 pi |x| / 10^(p-F+1))``
    (from the exact float64 digits) to the ``[NUM]`` embedding, and the head reads 10 digit logits
    per place from two dims, so every digit is a class and exact answers can be learned. Unlike the
    reference code it handles the sign and refuses values with more digits than configured; the
    formulas and the other differences are in docs/models.md ("FoNE here and in the paper").

    Example:
        >>> from hf_numbers import NumberGPT2Config
        >>> cfg = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="fone",
        ...                        fone_int_digits=3, fone_frac_digits=2)
        >>> enc = FoNEEncoding(cfg)
        >>> enc.features(torch.tensor([12.34], dtype=torch.float64)).shape
        torch.Size([1, 10])
    """

    name = "fone"
    options = (
        EncodingOption(
            "fone_int_digits", int, 7, "FoNE integer digit places (periods 10^1 .. 10^int_digits), >= 1", fitted=True
        ),
        EncodingOption(
            "fone_frac_digits",
            int,
            3,
            "FoNE fractional digit places (periods 10^0 .. 10^-(frac_digits-1)), >= 0",
            fitted=True,
        ),
    )

    @classmethod
    def validate_options(cls, config: Any) -> None:
        if config.fone_int_digits < 1:
            raise ValueError(f"fone_int_digits must be >= 1, got {config.fone_int_digits}")
        if config.fone_frac_digits < 0:
            raise ValueError(f"fone_frac_digits must be >= 0, got {config.fone_frac_digits}")

    @classmethod
    def fit_options(cls, values: np.ndarray, given: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """As many integer and fractional places as the values' shortest decimal forms have.

        Example:
            >>> FoNEEncoding.fit_options(np.array([12.5, -0.25, 300.0]))
            {'fone_int_digits': 3, 'fone_frac_digits': 2}
        """
        places = [Decimal(format_number(v)).as_tuple() for v in values]
        int_digits = max([len(t.digits) + t.exponent for t in places if len(t.digits) + t.exponent > 0], default=1)
        frac_digits = max([-t.exponent for t in places], default=0)
        return {"fone_int_digits": int_digits, "fone_frac_digits": frac_digits}

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Values needing more places than the given options, or (with the data's widest integer part) than 15 and
        ``hidden_size / 2``."""
        int_given, frac_given = fields.get("fone_int_digits"), fields.get("fone_frac_digits")
        if int_given is not None and frac_given is not None:  # the instance's own check (float noise tolerated)
            out = cls._beyond_places(torch.from_numpy(values.astype(np.float64)), int(int_given), int(frac_given))
            return out.numpy(), cls._places_words(int(int_given), int(frac_given))
        limit = min(MAX_PLACES, hidden_size // 2)
        finite = np.isfinite(values)
        places = [Decimal(format_number(v) if ok else 0).as_tuple() for v, ok in zip(values, finite)]
        ints = np.array([max(len(t.digits) + t.exponent, 1) for t in places], dtype=np.int64)
        fracs = np.array([max(-t.exponent, 0) for t in places], dtype=np.int64)
        needed = (ints if int_given is None else int_given) + (fracs if frac_given is None else frac_given)
        out = ~finite | (needed > limit)
        if int_given is not None:
            out |= ints > int_given
            words = f"|x| < 10^{int_given} (fone_int_digits) and at most {limit - int_given} fractional digits"
        elif frac_given is not None:
            out |= fracs > frac_given
            words = f"at most {frac_given} fractional digits (fone_frac_digits) and |x| < 10^{limit - frac_given}"
        else:
            words = f"at most {limit} digits, integer and fractional places together (|x| < 10^{limit} for an integer)"
            widest = int(ints[~out].max(initial=1))  # the fitted fone_int_digits, if every value fits on its own
            if not out.any() and (fracs > limit - widest).any():  # then they do not fit together
                out = fracs > limit - widest
                words += (
                    f"; these data's widest integer part takes {widest} places (fone_int_digits), which leaves "
                    f"{limit - widest} fractional digits"
                )
        return out, (
            f"finite values with {words}: fone_int_digits + fone_frac_digits <= {limit}, the smaller of "
            f"{MAX_PLACES} (a float64's exact digits) and hidden_size / 2 = {hidden_size // 2}"
        )

    @staticmethod
    def _places_words(int_digits: int, frac_digits: int) -> str:
        """The range of ``int_digits`` integer and ``frac_digits`` fractional places, in words."""
        return (
            f"finite values with |x| < 10^{int_digits} and at most {frac_digits} fractional digits "
            f"(fone_int_digits={int_digits}, fone_frac_digits={frac_digits})"
        )

    @staticmethod
    def _beyond_places(values: torch.Tensor, int_digits: int, frac_digits: int) -> torch.Tensor:
        """Bool mask of the finite float64 ``values`` with more places than ``int_digits`` and ``frac_digits``."""
        scaled = values.abs() * 10.0**frac_digits
        rounded = scaled.round()  # float noise below the last place is tolerated, a further digit is not
        tolerance = 1e-6 + 8 * torch.finfo(torch.float64).eps * scaled
        further_digit = (scaled - rounded).abs() > tolerance
        return ~torch.isfinite(values) | (rounded >= 10.0 ** (int_digits + frac_digits)) | further_digit

    def __init__(self, config: Any):
        super().__init__(config)
        self.int_digits = int(config.fone_int_digits)
        self.frac_digits = int(config.fone_frac_digits)
        self.places = self.int_digits + self.frac_digits
        if 2 * self.places > self.hidden_size:
            raise ValueError(
                f"fone needs 2 * (fone_int_digits + fone_frac_digits) <= hidden_size, got "
                f"2 * ({self.int_digits} + {self.frac_digits}) > {self.hidden_size}"
            )
        if self.places > MAX_PLACES:
            raise ValueError(
                f"fone_int_digits + fone_frac_digits must be <= {MAX_PLACES} (the exact digits of a float64), "
                f"got {self.places}"
            )
        self.negative = nn.Parameter(torch.empty(self.hidden_size))
        self.digit_proj = nn.Linear(self.hidden_size, 2 * self.places)
        self.sign = nn.Linear(self.hidden_size, 1)
        self.init_parameters()

    def init_parameters(self) -> None:
        init.normal_(self.negative, mean=0.0, std=self.initializer_range)
        init.eye_(self.digit_proj.weight)
        init.zeros_(self.digit_proj.bias)
        init.normal_(self.sign.weight, mean=0.0, std=self.initializer_range)
        init.zeros_(self.sign.bias)

    def allowed_range(self) -> str:
        return self._places_words(self.int_digits, self.frac_digits)

    def _scaled(self, values: torch.Tensor) -> torch.Tensor:
        """``|x| * 10^F`` as float64 before rounding."""
        return values.abs() * 10.0**self.frac_digits

    def _out_of_range(self, values: torch.Tensor) -> torch.Tensor:
        return self._beyond_places(values, self.int_digits, self.frac_digits)

    def digits(self, values: torch.Tensor) -> torch.Tensor:
        """Digits ``(N, P)`` of ``|values|`` (in range), place 0 = the smallest (``10^-F``)."""
        scaled = self._scaled(values).round().long()
        powers = 10 ** torch.arange(self.places, device=values.device, dtype=torch.long)
        return torch.div(scaled[:, None], powers, rounding_mode="floor") % 10

    def features(self, values: torch.Tensor) -> torch.Tensor:
        """Fourier features ``(N, 2P)`` of ``|values|`` (in range), float64: dims ``2p, 2p+1`` = cos, sin."""
        scaled = self._scaled(values).round().long()
        periods = 10 ** torch.arange(1, self.places + 1, device=values.device, dtype=torch.long)
        angles = 2 * math.pi * (scaled[:, None] % periods).double() / periods.double()
        return torch.stack([angles.cos(), angles.sin()], dim=-1).flatten(1)

    def _embed_values(self, token_embeds: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        features = F.pad(self.features(values).to(token_embeds.dtype), (0, self.hidden_size - 2 * self.places))
        negative = (values < 0).to(token_embeds.dtype)[:, None] * self.negative
        return token_embeds + features + negative

    def head(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """``(B, L, 10 P + 1)``: the digit logits of place 0..P-1 (10 each), then the sign logit (> 0: negative)."""
        hidden_states = F.layer_norm(hidden_states, (self.hidden_size,))
        pairs = self.digit_proj(hidden_states).unflatten(-1, (self.places, 2))
        angles = 2 * math.pi * torch.arange(10, device=pairs.device, dtype=torch.float64) / 10
        digit_logits = pairs @ torch.stack([angles.cos(), angles.sin()]).to(pairs.dtype)
        return torch.cat([digit_logits.flatten(-2), self.sign(hidden_states)], dim=-1)

    def _item_losses(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        digit_logits = outputs[:, :-1].unflatten(-1, (self.places, 10))
        digit_loss = F.cross_entropy(digit_logits.flatten(0, 1), self.digits(targets).flatten(), reduction="none")
        sign_loss = F.binary_cross_entropy_with_logits(
            outputs[:, -1], (targets < 0).to(outputs.dtype), reduction="none"
        )
        return digit_loss.view(-1, self.places).sum(-1) + sign_loss

    def decode(self, head_output: torch.Tensor) -> torch.Tensor:
        digits = head_output[..., :-1].detach().unflatten(-1, (self.places, 10)).argmax(-1)
        powers = 10 ** torch.arange(self.places, device=digits.device, dtype=torch.long)
        magnitude = (digits * powers).sum(-1).double() / 10.0**self.frac_digits
        return torch.where(head_output[..., -1].detach() > 0, -magnitude, magnitude)
