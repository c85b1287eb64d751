"""Value-aware digits: the backbone keeps its own digit tokens, and each digit token also gets the number's value.

``digits`` is a text encoding (the tokenizer leaves numbers to the backbone's sub-words, the LM head writes
them, the number-token loss applies) with a small module beside the embeddings, :class:`DigitValueEmbedding`:
at every digit token it adds ``W f``, where ``f`` describes the digit run read so far (the number's digits up
to and including this token): Fourier features of its value mod ``10^k`` for every place ``k`` (FoNE's, which
line the digits up by place from the right), and the count of digits read (Abacus' place from the left); or,
in place of the Fourier features, its value mod ``10^k`` as a fraction of ``10^k`` (``ramp``: linear, so two
numbers' ramps, centred, sum above zero exactly where their sum carries into place ``k``).
``f`` depends only on the tokens up to the position, so teacher-forced training sees what generation will
see, and ``W`` starts at zero, so an adapted pretrained model starts with the base model's outputs exactly.
Two parts look ahead, where that leaks nothing: they describe a run the prompt gives whole (``prompt_length``:
before the first labelled token in training, the prompt in ``generate``), and are zero elsewhere. ``below`` gives
each digit of a given operand the ramp of the digits under it (a sum carries into a place where the ramps at that
place of its operands sum above zero); ``log`` gives every digit of it the Fourier features of its mantissa
(``log10(value) mod 1``), from which a product's leading digits follow by one angle addition; ``column`` gives
each digit of it its place counted from the units (Abacus' embedding), so that digits of one place in numbers of
different lengths share it.

The module reads digit runs from the token ids alone, through a table of the vocabulary's digit tokens
(``config.digit_tokens``: id, the digits' value, their count, whether the token joins a run before it), so it
needs no values from the tokenizer; a continuation with a KV cache passes the ids before it as
``digit_context`` (``generate`` does). Digits glued to a word (``x2``) and the parts of ``21.5`` count as
runs of their own.

Example:
    >>> DigitsEncoding.has_number_module, DigitsEncoding.tokenizer_options({})
    (False, {'number_scheme': 'text', 'digit_order': 'as_written'})
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
from torch import nn
from transformers import initialization as init

from .encoding_base import EncodingOption
from .encoding_text import TextEncoding
from .tokenization_helpers import token_texts

__all__ = ["DIGIT_FEATURE_PARTS", "DigitValueEmbedding", "DigitsEncoding", "digit_token_table"]

DIGIT_FEATURE_PARTS = {"fone": 2, "place": 1, "ramp": 1, "below": 1, "log": 2, "column": 1}
"""What can describe the digit run read so far (``digits_features``: one or more, joined by ``+``), and the features
each gives a place: FoNE's cosine and sine of the value mod ``10^k``; the one-hot count of digits read; the value
mod ``10^k`` over ``10^k``, less one half; in a run the prompt gives whole, the ramp of the ``p``, ``p - 1``, ...
lowest digits, where ``p`` digits follow the token (the digits under it first); in a run the prompt gives whole, the
cosine and sine of ``2 pi k m`` for harmonics ``k = 1 .. places``, where ``m = log10(value) mod 1`` is the number's
mantissa (a product's mantissa is its factors' summed mod 1: an angle addition, as FoNE's is for sums); in a run the
prompt gives whole, the one-hot count of the digits after the token (its column: 0 at the units)."""
MAX_PLACES = 18
"""The most digit places the features describe (the run's value mod 10^18 fits int64)."""


class DigitsEncoding(TextEncoding):
    """``digits``: the backbone's own digit tokens plus a zero-started value embedding at each of them.

    Example:
        >>> [option.name for option in DigitsEncoding.options]
        ['text_digit_order', 'digits_features', 'digits_places', 'digits_zero_start']
    """

    name = "digits"
    adds_digit_values: ClassVar[bool] = True
    options = (
        *TextEncoding.options,
        EncodingOption("digits_features", str, "fone+place",
                       "Value-aware digits: what is added at each digit token, parts joined by '+': "
                       f"{', '.join(DIGIT_FEATURE_PARTS)} (FoNE features of the number read so far; the count of its "
                       "digits read; its value mod 10^k as a fraction of 10^k; in a number the prompt gives whole, "
                       "the same of the digits under each digit; in such a number, Fourier features of log10 of its "
                       "value mod 1; in such a number, each digit's place counted from the units). --pretrained, "
                       "digits as written: fone+place+column"),
        EncodingOption("digits_places", int, 10,
                       f"Value-aware digits: digit places the features describe, 1-{MAX_PLACES}"),
        EncodingOption("digits_zero_start", bool, True,
                       "Value-aware digits: start the projection at zero (outputs equal the base model's before "
                       "training), true or false"),
    )  # fmt: skip

    @classmethod
    def validate_options(cls, config: Any) -> None:
        """The options in range (every config holds them); when selected, the digit-token table too."""
        super().validate_options(config)
        parts = str(config.digits_features).split("+")
        if not set(parts) <= set(DIGIT_FEATURE_PARTS) or len(set(parts)) < len(parts):
            allowed = ", ".join(DIGIT_FEATURE_PARTS)
            raise ValueError(
                f"digits_features={config.digits_features!r} is unknown; allowed: one or more of {allowed}, "
                "joined by '+'"
            )
        for part in ("below", "column"):
            if part in parts and config.text_digit_order == "units_first":
                raise ValueError(
                    f"digits_features {part!r} describes the digits written after each digit; units first, those are "
                    "read before it (the other parts have them): use it with text_digit_order='as_written'"
                )
        if not 1 <= config.digits_places <= MAX_PLACES:
            raise ValueError(f"digits_places must be in [1, {MAX_PLACES}], got {config.digits_places}")
        if config.number_encoding == cls.name:
            _check_digit_tokens(config.digit_tokens, config.vocab_size)


def _check_digit_tokens(rows: Any, vocab_size: int) -> None:
    if not rows:
        raise ValueError(
            "number_encoding='digits' needs config.digit_tokens, the vocabulary's digit tokens: build the config "
            "with from_tokenizer(tokenizer, number_encoding='digits') or from_pretrained_backbone"
        )
    for row in rows:
        if len(row) != 4 or not 0 <= row[0] < vocab_size or row[1] < 0 or not 1 <= row[2] or row[3] not in (0, 1):
            raise ValueError(
                f"config.digit_tokens row {row} is not [token id in [0, {vocab_size}), value >= 0, digits >= 1, "
                "joins 0 or 1]"
            )


def digit_token_table(tokenizer: Any) -> list[list[int]]:
    """``[id, value, digit count, joins]`` for every token of ``tokenizer`` that is digits (after a space or not).

    ``joins`` is 1 where the token has no leading space, so that it continues a digit run before it.

    Example:
        >>> digit_token_table(smollm2_tokenizer)[:2]  # doctest: +SKIP
        [[32, 0, 1, 1], [33, 1, 1, 1]]
    """
    rows = []
    for token_id, text in token_texts(tokenizer).items():
        digits = text.lstrip(" ")
        if digits and len(digits) <= MAX_PLACES and all("0" <= c <= "9" for c in digits):
            rows.append([token_id, int(digits), len(digits), int(digits == text)])
    return sorted(rows)


class DigitValueEmbedding(nn.Module):
    """Adds ``proj(features of the digit run read so far)`` to the embedding of every digit token.

    Example:
        >>> from hf_numbers import NumberLlamaConfig
        >>> config = NumberLlamaConfig(hidden_size=8, num_attention_heads=2, vocab_size=20, number_encoding="digits",
        ...                            digit_tokens=[[i, i, 1, 1] for i in range(10)], digits_places=3)
        >>> module = DigitValueEmbedding(config)
        >>> prefix, read, _ = module.read_runs(torch.tensor([[1, 2, 15, 3, 4, 5, 6]]))
        >>> prefix.tolist(), read.tolist()
        ([[1, 12, 0, 3, 34, 345, 456]], [[1, 2, 0, 1, 2, 3, 3]])
    """

    def __init__(self, config: Any) -> None:
        super().__init__()
        self.places, self.parts = config.digits_places, config.digits_features.split("+")
        self.units_first = config.text_digit_order == "units_first"
        self.zero_start, self.init_std = config.digits_zero_start, config.initializer_range
        self.digit_tokens, vocab_size = [list(row) for row in config.digit_tokens], config.vocab_size
        # value, digit count (0: no digits), joins; rebuilt from the config by init_parameters, never saved
        self.register_buffer("table", torch.zeros(vocab_size, 3, dtype=torch.long), persistent=False)
        self.register_buffer("powers", torch.zeros(self.places + 1, dtype=torch.long), persistent=False)
        features = sum(DIGIT_FEATURE_PARTS[part] for part in self.parts) * self.places
        self.proj = nn.Linear(features, config.hidden_size, bias=False)
        self.init_parameters()

    def init_parameters(self) -> None:
        """Zero (``digits_zero_start``: the base model's outputs before training) or the backbone's normal draw, and
        the digit-token table (loaded weights are kept: transformers' ``init`` functions skip them)."""
        table = torch.zeros(self.table.shape, dtype=torch.long)
        for token_id, value, count, joins in self.digit_tokens:
            if self.units_first:  # the token's digits as the number has them
                value = int(str(value).zfill(count)[::-1])
            table[token_id] = torch.tensor([value, count, joins])
        init.copy_(self.table, table)
        init.copy_(self.powers, 10 ** torch.arange(self.places + 1, dtype=torch.long))
        if self.zero_start:
            init.zeros_(self.proj.weight)
        else:
            init.normal_(self.proj.weight, mean=0.0, std=self.init_std)

    def read_runs(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per position: the value of the digit run read so far mod ``10^places``, its digits read (at most
        ``places``), and whether the token is a digit token. Looks back ``places`` tokens at most (every digit
        token has a digit). Units first (``text_digit_order``), the run read so far is the number's lowest digits."""
        known = ids < self.table.shape[0]  # tokens added after the table was built are no digits
        value, count, joins = self.table[torch.where(known, ids, 0)].unbind(-1)
        count = torch.where(known, count, 0)
        is_digit = count > 0
        links, alive = [], is_digit  # links[b - 1]: the token b tokens before belongs to the same run
        for back in range(1, self.places + 1):
            alive = alive & _shifted(is_digit & (joins > 0), back - 1) & _shifted(is_digit, back)
            links.append(alive)
        if self.units_first:
            return self._read_units_first(value, count, links, is_digit)
        prefix, read = value % self.powers[-1], count.clone()
        for back, link in enumerate(links, 1):
            shift = read.clamp(max=self.places)  # the digits after the token `back` tokens before
            earlier = (_shifted(value, back) % self.powers[self.places - shift]) * self.powers[shift]
            prefix = prefix + torch.where(link, earlier, 0)
            read = read + torch.where(link, _shifted(count, back), 0)
        return prefix % self.powers[-1], read.clamp(max=self.places), is_digit

    def _read_units_first(
        self, value: torch.Tensor, count: torch.Tensor, links: list[torch.Tensor], is_digit: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`read_runs` for runs written units first: a token's digits (``value``: theirs reversed, so as
        the number has them) are worth ``10^(digits before it in the run)``; past ``places`` digits, nothing."""
        before = sum(torch.where(link, _shifted(count, b), 0) for b, link in enumerate(links, 1))
        shift = before.clamp(max=self.places)  # a run longer than `places` tokens has at least `places` digits
        worth = (value % self.powers[self.places - shift]) * self.powers[shift]
        prefix = worth + sum(torch.where(link, _shifted(worth, b), 0) for b, link in enumerate(links, 1))
        return prefix % self.powers[-1], (before + count).clamp(max=self.places), is_digit

    def features(self, ids: torch.Tensor, prompt_length: torch.Tensor | int | None = None) -> torch.Tensor:
        """``(B, L, F)`` float64: the parts of ``digits_features`` in their order; zero at other tokens.
        ``prompt_length`` (per row, or one for all): the tokens before it are given whole (``below``, ``log`` and
        ``column`` read them)."""
        prefix, read, is_digit = self.read_runs(ids)
        reads_given = {"below", "log", "column"} & set(self.parts)  # the parts that read given runs whole: read once
        whole_runs = self._whole_runs(ids, prefix, read, is_digit, prompt_length) if reads_given else None
        periods = self.powers[1:]
        fraction = (prefix.unsqueeze(-1) % periods).double() / periods.double()  # of 10^k, for k = 1..places
        parts = {
            "fone": lambda: torch.cat([(2 * math.pi * fraction).cos(), (2 * math.pi * fraction).sin()], -1),
            "place": lambda: nn.functional.one_hot((read - 1).clamp(min=0), self.places).double(),
            "ramp": lambda: fraction - 0.5,
            "below": lambda: self._below(read, *whole_runs),
            "log": lambda: self._log(*whole_runs),
            "column": lambda: self._column(read, *whole_runs[1:]),
        }
        return torch.cat([parts[part]() for part in self.parts], -1) * is_digit.unsqueeze(-1)

    def _whole_runs(
        self, ids: torch.Tensor, prefix: torch.Tensor, read: torch.Tensor, is_digit: torch.Tensor, prompt_length: Any
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per position: the value and digit count of the whole run the token is in, and whether the run ends before
        ``prompt_length`` with the token after it (the prompt gives it whole) and has fewer than ``places`` digits
        (its value is held whole)."""
        joins = self.table[torch.where(ids < self.table.shape[0], ids, 0), 2]
        continued = _ahead(is_digit & (joins > 0) & _shifted(is_digit, 1), 1)  # the next token joins this run
        is_end = is_digit & ~continued
        positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        end_value, end_read, end_at = (torch.where(is_end, x, -1) for x in (prefix, read, positions))
        chain = continued
        for ahead in range(1, self.places + 1):  # the run's last token, up to `places` tokens ahead
            reached = chain & _ahead(is_end, ahead)
            end_value, end_read, end_at = (
                torch.where(reached, _ahead(x, ahead), y)
                for x, y in ((prefix, end_value), (read, end_read), (positions, end_at))
            )
            chain = chain & _ahead(continued, ahead)
        given = 0 if prompt_length is None else torch.as_tensor(prompt_length, device=ids.device).reshape(-1, 1)
        whole = is_digit & (end_at >= 0) & (end_at + 1 < given) & (end_read < self.places)
        return end_value, end_read, whole

    def _below(
        self, read: torch.Tensor, end_value: torch.Tensor, end_read: torch.Tensor, whole: torch.Tensor
    ) -> torch.Tensor:
        """The ``below`` part, from :meth:`_whole_runs`: at a token of a run the prompt gives whole, with ``p`` digits
        after the token, the ramps ``(value mod 10^k) / 10^k - 1/2`` for ``k = p, p - 1, ..., 0`` (``k = 0``: -1/2,
        nothing carries into the units), then zeros. Zero elsewhere."""
        under = (end_read - read).unsqueeze(-1) - torch.arange(self.places, device=read.device)  # k for each feature
        span = self.powers[under.clamp(min=0)]
        ramps = (end_value.unsqueeze(-1) % span).double() / span.double() - 0.5
        return torch.where(whole.unsqueeze(-1) & (under >= 0), ramps, 0.0)

    def _log(self, end_value: torch.Tensor, end_read: torch.Tensor, whole: torch.Tensor) -> torch.Tensor:
        """The ``log`` part, from :meth:`_whole_runs`: at every token of a run the prompt gives whole and worth more
        than zero, ``cos`` then ``sin`` of ``2 pi k m`` for ``k = 1 .. places``, ``m = log10(value) mod 1``. Zero
        elsewhere."""
        mantissa = end_value.clamp(min=1).double().log10().remainder(1.0)
        harmonics = torch.arange(1, self.places + 1, device=end_value.device, dtype=torch.float64)
        angles = 2 * math.pi * mantissa.unsqueeze(-1) * harmonics
        return torch.cat([angles.cos(), angles.sin()], -1) * (whole & (end_value > 0)).unsqueeze(-1)

    def _column(self, read: torch.Tensor, end_read: torch.Tensor, whole: torch.Tensor) -> torch.Tensor:
        """The ``column`` part, from :meth:`_whole_runs`: at a token of a run the prompt gives whole, the one-hot
        count of the digits after it (0: the units), as Abacus counts places. Zero elsewhere."""
        after = (end_read - read).clamp(min=0, max=self.places - 1)
        return nn.functional.one_hot(after, self.places).double() * whole.unsqueeze(-1)

    def forward(
        self,
        embeds: torch.Tensor,
        ids: torch.Tensor,
        context: torch.Tensor | None = None,
        prompt_length: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        """``embeds`` plus the projected features; ``context``: the ids before ``ids`` (a cached continuation, whose
        tokens are all generated); ``prompt_length``: the tokens given whole (see :meth:`features`)."""
        if context is not None and context.shape[1] > 0:
            ids, prompt_length = torch.cat([context.to(ids.device), ids], 1), None
        features = self.features(ids, prompt_length)[:, -embeds.shape[1] :]
        return embeds + self.proj(features.to(self.proj.weight.dtype)).to(embeds.dtype)


def _shifted(x: torch.Tensor, back: int) -> torch.Tensor:
    """``x`` moved ``back`` positions right along the sequence, zero-filled (the value ``back`` tokens before)."""
    if back == 0:
        return x
    return nn.functional.pad(x, (back, 0))[:, : x.shape[1]]


def _ahead(x: torch.Tensor, ahead: int) -> torch.Tensor:
    """``x`` moved ``ahead`` positions left along the sequence, zero-filled (the value ``ahead`` tokens after)."""
    return nn.functional.pad(x, (0, ahead))[:, ahead:]
