"""Data collators that pad ``input_ids`` and ``input_numbers`` together and build the labels.

Both take a list of tokenized examples (dicts with ``input_ids`` and ``input_numbers``, as
returned by a number tokenizer or stored by ``datasets.Dataset.map``) and return a dict of
tensors for the ``Number*`` models. They work as ``collate_fn`` of a ``DataLoader`` and as
``data_collator`` of ``Trainer``.

Labels follow the models' convention: ``labels`` and ``number_labels`` are aligned with
``input_ids`` (causal models shift them inside), ``-100`` marks ignored tokens, and
``number_labels`` holds the true value wherever ``labels`` is a number token.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import torch

from ..modeling import NEUTRAL_NUMBER


def _pad(tokenizer: Any, features: list[dict[str, Any]], pad_to_multiple_of: int | None, padding_side: str | None):
    keep = [
        {k: v for k, v in f.items() if k in ("input_ids", "attention_mask", "input_numbers", "token_type_ids")}
        for f in features
    ]
    for feature in keep:
        if "input_numbers" not in feature:
            raise ValueError("every example needs input_numbers: tokenize the text with a Number*Tokenizer")
    return tokenizer.pad(
        keep, padding=True, pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side, return_tensors="pt"
    )


@dataclass
class DataCollatorForNumberCausalLM:
    """Pad (left or right) and build ``labels`` / ``number_labels`` for ``NumberGPT2ForCausalLM``.

    Args:
        tokenizer: a number tokenizer (needs a ``pad_token``; for GPT-2 set ``pad_token = eos_token``).
        padding_side: ``"left"`` or ``"right"``; ``None`` uses ``tokenizer.padding_side``.
        pad_to_multiple_of: pad the length to a multiple of this.

    Example:
        >>> collator = DataCollatorForNumberCausalLM(tokenizer)  # doctest: +SKIP
        >>> batch = collator([tokenizer("x = 1.5"), tokenizer("y = -2 and 3")])  # doctest: +SKIP
        >>> sorted(batch)  # doctest: +SKIP
        ['attention_mask', 'input_ids', 'input_numbers', 'labels', 'number_labels']
    """

    tokenizer: Any
    padding_side: str | None = None
    pad_to_multiple_of: int | None = None

    def __post_init__(self) -> None:
        if self.padding_side not in (None, "left", "right"):
            raise ValueError(f"padding_side must be 'left', 'right' or None, got {self.padding_side!r}")
        if self.tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer has no pad_token; for GPT-2 set tokenizer.pad_token = tokenizer.eos_token")

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = dict(_pad(self.tokenizer, features, self.pad_to_multiple_of, self.padding_side))
        labels = batch["input_ids"].clone()
        labels[batch["attention_mask"] == 0] = -100
        batch["labels"] = labels
        batch["number_labels"] = batch["input_numbers"].clone()
        return batch


@dataclass
class DataCollatorForNumberMLM:
    """Pad and mask for ``NumberBertForMaskedLM`` / ``NumberRobertaForMaskedLM``.

    A masked number token becomes the mask token, its input number is reset to the neutral
    value 1.0 and its true value is kept in ``number_labels``. Other masked tokens follow
    BERT's scheme: 80% mask token, 10% a random (non-number) token, 10% unchanged.
    Special tokens and padding are never masked.

    Args:
        tokenizer: a number tokenizer with a ``mask_token``.
        mlm_probability: probability of masking each eligible token (xVal used 0.2–0.3).
        numbers_only: mask only number tokens (number-inference evaluation).
        whole_numbers: with ``numbers_only``, mask every number token (probability ignored).
        pad_to_multiple_of: pad the length to a multiple of this.
        seed: with a seed, each batch's masks are a function of (seed, the batch's padded token ids)
            only, not of the global RNG or of how many batches came before: evaluation masks are the
            same at every evaluation, and a resumed run masks exactly as the original did (a data
            loader builds a batch ahead, so masks drawn from the global RNG would not survive a
            checkpoint). Batches differ from epoch to epoch, so masks still vary. None draws from
            torch's global RNG, like transformers' collators.

    Example:
        >>> collator = DataCollatorForNumberMLM(tokenizer, mlm_probability=0.3, seed=0)  # doctest: +SKIP
        >>> batch = collator([tokenizer("a 1.5 b 2")])  # doctest: +SKIP
    """

    tokenizer: Any
    mlm_probability: float = 0.2
    numbers_only: bool = False
    whole_numbers: bool = False
    pad_to_multiple_of: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.mlm_probability <= 1.0:
            raise ValueError(f"mlm_probability must be in (0, 1], got {self.mlm_probability}")
        if self.whole_numbers and not self.numbers_only:
            raise ValueError("whole_numbers=True needs numbers_only=True")
        if self.tokenizer.mask_token_id is None:
            raise ValueError("the tokenizer has no mask_token; masked language modelling needs one")

    def _generator(self, input_ids: torch.Tensor) -> torch.Generator | None:
        if self.seed is None:
            return None
        digest = hashlib.blake2b(input_ids.numpy().tobytes(), digest_size=8, key=str(self.seed).encode())
        return torch.Generator().manual_seed(int.from_bytes(digest.digest(), "little") >> 1)

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = dict(_pad(self.tokenizer, features, self.pad_to_multiple_of, None))
        input_ids, numbers = batch["input_ids"], batch["input_numbers"]
        generator = self._generator(input_ids)
        is_num = self.tokenizer.number_mask(input_ids)
        special = torch.isin(input_ids, torch.tensor(self.tokenizer.all_special_ids)) & ~is_num
        special |= batch["attention_mask"] == 0
        eligible = is_num if self.numbers_only else ~special
        if self.whole_numbers:
            masked = eligible.clone()
        else:
            masked = eligible & (torch.rand(input_ids.shape, generator=generator) < self.mlm_probability)

        labels = torch.where(masked, input_ids, torch.full_like(input_ids, -100))
        number_labels = torch.where(masked & is_num, numbers, torch.full_like(numbers, NEUTRAL_NUMBER))

        draw = torch.rand(input_ids.shape, generator=generator)
        to_mask = masked & (is_num | (draw < 0.8))
        to_random = masked & ~is_num & (draw >= 0.8) & (draw < 0.9)
        random_ids = torch.randint(len(self.tokenizer), input_ids.shape, generator=generator)
        random_ids = torch.where(self.tokenizer.number_mask(random_ids), self.tokenizer.mask_token_id, random_ids)
        input_ids = torch.where(to_random, random_ids, input_ids)
        input_ids = torch.where(to_mask, torch.full_like(input_ids, self.tokenizer.mask_token_id), input_ids)
        numbers = torch.where(masked & is_num, torch.full_like(numbers, NEUTRAL_NUMBER), numbers)

        batch.update(input_ids=input_ids, input_numbers=numbers, labels=labels, number_labels=number_labels)
        return batch
