"""Data collators that pad ``input_ids`` and ``input_numbers`` together and build the labels.

They take tokenized examples (``input_ids``, ``input_numbers``, as a number tokenizer or
``Dataset.map`` gives them) and return tensors for the ``Number*`` models, as the ``collate_fn`` of a
``DataLoader`` or the ``data_collator`` of ``Trainer``. Labels, completion-only training and
text-only masking: docs/training.md, "Data: tasks, collators and scaling".
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..modeling import NEUTRAL_NUMBER, find_numbers


def _pad(tokenizer: Any, features: list[dict[str, Any]], pad_to_multiple_of: int | None, padding_side: str | None):
    """``tokenizer.pad`` of the model inputs of ``features`` (other keys are left out)."""
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


def prompt_lengths(tokenizer: Any, texts: Sequence[str], prompts: Sequence[str], **kwargs: Any) -> list[int]:
    """For each text, how many of its tokens belong to its prompt (a prefix of the text).

    The completion starts at the first token that ends after the prompt (so GPT-2's ``" [NUM]"``,
    holding the prompt's last space, is the completion's); leading special tokens belong to the prompt.
    ``kwargs`` go to the tokenizer call: use the model inputs' ``truncation`` and ``max_length``. A text
    whose completion was truncated away gets its full length (nothing to train on).

    Example:
        >>> tok = train_number_tokenizer(["12 + 3 = 15"] * 5, "gpt2", vocab_size=260)  # doctest: +SKIP
        >>> prompt_lengths(tok, ["12 + 3 = 15"], ["12 + 3 = "])  # doctest: +SKIP
        [4]
    """
    texts = list(texts)
    return prompt_lengths_of(texts, prompts, tokenizer(texts, return_offsets_mapping=True, **kwargs)["offset_mapping"])


def prompt_lengths_of(texts: Sequence[str], prompts: Sequence[str], offsets: Sequence[Sequence[Any]]) -> list[int]:
    """:func:`prompt_lengths` of texts already tokenized (their ``offset_mapping``).

    Example:
        >>> enc = tok(["12 + 3 = 15"], return_offsets_mapping=True)  # doctest: +SKIP
        >>> prompt_lengths_of(["12 + 3 = 15"], ["12 + 3 = "], enc["offset_mapping"])  # doctest: +SKIP
        [4]
    """
    texts, prompts = list(texts), list(prompts)
    _check_prompts_lead(texts, prompts)
    lengths = []
    for row, prompt in zip(offsets, prompts, strict=True):
        ends = [end for _, end in row]
        lengths.append(next((i for i, end in enumerate(ends) if end > len(prompt)), len(ends)))
    return lengths


def completions_of(texts: Sequence[str], prompts: Sequence[str]) -> list[str]:
    """Each text after its prompt (a prefix of the text; ``ValueError`` naming the example where it is not).

    Example:
        >>> completions_of(["12 + 3 = 15"], ["12 + 3 = "])
        ['15']
    """
    texts, prompts = list(texts), list(prompts)
    _check_prompts_lead(texts, prompts)
    return [text[len(prompt) :] for text, prompt in zip(texts, prompts)]


def _check_prompts_lead(texts: list[str], prompts: list[str]) -> None:
    if len(texts) != len(prompts):
        raise ValueError(f"{len(texts)} texts but {len(prompts)} prompts")
    for index, (text, prompt) in enumerate(zip(texts, prompts)):
        if not text.startswith(prompt):
            raise ValueError(f"example {index}: the prompt {prompt[:40]!r} is not a prefix of the text {text[:40]!r}")


def overlapping_tokens(offsets: Sequence[Sequence[int]], spans: Sequence[Sequence[float]]) -> list[bool]:
    """For each token's ``(start, end)`` characters, whether it overlaps one of ``spans`` (``(start, end, ...)``).

    Tokens without characters (special tokens, ``(0, 0)``) overlap nothing.

    Example:
        >>> overlapping_tokens([(0, 0), (0, 3), (4, 6), (6, 7)], [(4, 7, 2.5)])
        [False, False, True, True]
    """
    return [any(start < span[1] and end > span[0] for span in spans) for start, end in offsets]


def number_token_masks(tokenizer: Any, texts: Sequence[str], **kwargs: Any) -> list[list[int]]:
    """For each text, 1 for each token that covers a number's characters or is a number token, else 0.

    A tokenizer that writes numbers as text (digit sub-words) needs it to tell numbers from words.
    ``kwargs`` go to the tokenizer call: use the model inputs' ``truncation`` and ``max_length``.

    Example:
        >>> tok = NumberBertTokenizer.from_pretrained(path)  # doctest: +SKIP
        >>> number_token_masks(tok, ["it weighs 3504 pounds"])  # doctest: +SKIP
        [[0, 0, 0, 1, 0, 0]]
    """
    encoding = tokenizer(list(texts), return_offsets_mapping=True, **kwargs)
    return number_token_masks_of(tokenizer, texts, encoding["input_ids"], encoding["offset_mapping"])


def number_token_masks_of(
    tokenizer: Any, texts: Sequence[str], input_ids: Sequence[Sequence[int]], offsets: Sequence[Sequence[Any]]
) -> list[list[int]]:
    """:func:`number_token_masks` of texts already tokenized (their ``input_ids`` and ``offset_mapping``).

    Example:
        >>> texts = ["it weighs 3504 pounds"]
        >>> enc = tok(texts, return_offsets_mapping=True)  # doctest: +SKIP
        >>> number_token_masks_of(tok, texts, enc["input_ids"], enc["offset_mapping"])  # doctest: +SKIP
        [[0, 0, 0, 1, 0, 0]]
    """
    masks = []
    for text, ids, token_offsets in zip(texts, input_ids, offsets, strict=True):
        covers = overlapping_tokens(token_offsets, find_numbers(text))
        masks.append([int(c or n) for c, n in zip(covers, tokenizer.number_mask(ids).tolist())])
    return masks


def _padded_flags(features: list[dict[str, Any]], key: str, attention_mask: torch.Tensor) -> torch.Tensor:
    """Bool ``(B, L)``: each example's per-token flags ``key`` placed on its real (unpadded) tokens
    (all False for an example without them)."""
    flags = torch.zeros(attention_mask.shape, dtype=torch.bool)
    for row, feature in enumerate(features):
        if key not in feature:
            continue
        values = torch.as_tensor(feature[key], dtype=torch.bool)
        real = attention_mask[row].bool()
        if len(values) != int(real.sum()):
            raise ValueError(f"example {row}: {key} has {len(values)} entries for {int(real.sum())} tokens")
        flags[row, real] = values
    return flags


def _completion_mask(features: list[dict[str, Any]], attention_mask: torch.Tensor) -> torch.Tensor:
    """Bool ``(B, L)``: the tokens after each example's ``prompt_length`` prompt tokens (padding excluded).

    Works for left and right padding: positions are counted from each row's first real token.
    """
    lengths = []
    for index, feature in enumerate(features):
        length = feature.get("prompt_length")
        if length is None:
            raise ValueError(
                f"completion_only=True needs a prompt_length in every example (example {index} has none); "
                "compute it with hf_numbers.data.prompt_lengths(tokenizer, texts, prompts)"
            )
        if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 0:
            raise ValueError(f"prompt_length must be an integer >= 0, got {length!r} in example {index}")
        lengths.append(int(length))
    real = attention_mask.bool()
    first = real.long().argmax(1)  # index of each row's first real token (the left padding before it)
    offsets = torch.arange(attention_mask.shape[1])[None] - first[:, None]
    return real & (offsets >= torch.tensor(lengths)[:, None])


@dataclass
class DataCollatorForNumberCausalLM:
    """Pad (left or right) and build ``labels`` / ``number_labels`` for the causal LMs (``NumberGPT2ForCausalLM``, ...).

    Args:
        tokenizer: a number tokenizer (needs a ``pad_token``; for GPT-2 set ``pad_token = eos_token``).
        padding_side: ``"left"`` or ``"right"``; ``None`` uses ``tokenizer.padding_side``.
        pad_to_multiple_of: pad the length to a multiple of this.
        completion_only: label only the tokens after each example's ``prompt_length``
            (:func:`prompt_lengths`); the prompt's tokens and numbers get ``-100`` / 1.0.

    Example:
        >>> collator = DataCollatorForNumberCausalLM(tokenizer)  # doctest: +SKIP
        >>> batch = collator([tokenizer("x = 1.5"), tokenizer("y = -2 and 3")])  # doctest: +SKIP
        >>> sorted(batch)  # doctest: +SKIP
        ['attention_mask', 'input_ids', 'input_numbers', 'labels', 'number_labels']
    """

    tokenizer: Any
    padding_side: str | None = None
    pad_to_multiple_of: int | None = None
    completion_only: bool = False

    def __post_init__(self) -> None:
        if self.padding_side not in (None, "left", "right"):
            raise ValueError(f"padding_side must be 'left', 'right' or None, got {self.padding_side!r}")
        if self.tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer has no pad_token; for GPT-2 set tokenizer.pad_token = tokenizer.eos_token")

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = dict(_pad(self.tokenizer, features, self.pad_to_multiple_of, self.padding_side))
        labelled = batch["attention_mask"].bool()
        if self.completion_only:
            labelled = _completion_mask(features, batch["attention_mask"])
        batch["labels"] = batch["input_ids"].masked_fill(~labelled, -100)
        batch["number_labels"] = batch["input_numbers"].masked_fill(~labelled, NEUTRAL_NUMBER)
        return batch


@dataclass
class DataCollatorForNumberMLM:
    """Pad and mask for the masked LMs (``NumberBertForMaskedLM``, ...).

    A masked number token becomes the mask token with input value 1.0, its true value in
    ``number_labels``; other masked tokens follow BERT's 80/10/10. Special tokens and padding are
    never masked.

    Args:
        tokenizer: a number tokenizer with a ``mask_token``.
        mlm_probability: probability of masking each eligible token (xVal used 0.2–0.3).
        numbers_only: mask only number tokens (number-inference evaluation).
        whole_numbers: with ``numbers_only``, mask every number token (probability ignored).
        completion_only: mask exactly each example's tokens after ``prompt_length``, special tokens
            aside (probability ignored).
        text_only: mask text tokens only, never a number nor a token of an example's
            ``number_token_mask`` (required with a tokenizer that has no number token).
        pad_to_multiple_of: pad the length to a multiple of this.
        seed: masks depend only on the seed and the batch's padded token ids, so they repeat at
            every evaluation and after a resume; None draws from torch's global RNG.

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
    completion_only: bool = False
    text_only: bool = False

    def __post_init__(self) -> None:
        if not 0.0 < self.mlm_probability <= 1.0:
            raise ValueError(f"mlm_probability must be in (0, 1], got {self.mlm_probability}")
        if self.whole_numbers and not self.numbers_only:
            raise ValueError("whole_numbers=True needs numbers_only=True")
        chosen = [name for name in ("numbers_only", "completion_only", "text_only") if getattr(self, name)]
        if len(chosen) > 1:
            raise ValueError(f"{' and '.join(f'{name}=True' for name in chosen)} exclude each other; choose one")
        if self.tokenizer.mask_token_id is None:
            raise ValueError("the tokenizer has no mask_token; masked language modelling needs one")

    def _generator(self, input_ids: torch.Tensor) -> torch.Generator | None:
        if self.seed is None:
            return None
        digest = hashlib.blake2b(input_ids.numpy().tobytes(), digest_size=8, key=str(self.seed).encode())
        return torch.Generator().manual_seed(int.from_bytes(digest.digest(), "little") >> 1)

    def _number_flags(self, features: list[dict[str, Any]], attention_mask: torch.Tensor) -> torch.Tensor:
        """The examples' ``number_token_mask`` as a padded bool tensor (False where an example has none)."""
        missing = [row for row, feature in enumerate(features) if "number_token_mask" not in feature]
        if missing and not self.tokenizer.num_token_ids:
            raise ValueError(
                "text_only=True with a tokenizer that writes numbers as text needs a number_token_mask in every "
                f"example (example {missing[0]} has none); compute it with "
                "hf_numbers.data.number_token_masks(tokenizer, texts)"
            )
        return _padded_flags(features, "number_token_mask", attention_mask)

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        batch = dict(_pad(self.tokenizer, features, self.pad_to_multiple_of, None))
        input_ids, numbers = batch["input_ids"], batch["input_numbers"]
        generator = self._generator(input_ids)
        is_num = self.tokenizer.number_mask(input_ids)
        special = torch.isin(input_ids, torch.tensor(self.tokenizer.all_special_ids)) & ~is_num
        special |= batch["attention_mask"] == 0
        eligible = is_num if self.numbers_only else ~special
        if self.text_only:
            eligible &= ~is_num & ~self._number_flags(features, batch["attention_mask"])
        if self.completion_only:
            masked = eligible & _completion_mask(features, batch["attention_mask"])
        elif self.whole_numbers:
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
