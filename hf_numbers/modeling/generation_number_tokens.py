"""What a ``[NUM]`` model writes reads back as itself: no digit token where the tokenizer would read a number.

A number tokenizer turns every standalone digit run into ``[NUM]`` and keeps digits as text only where they
are glued to a word on the left (``H2O``, ``x2``: the rule of ``parsing.find_numbers``). A model adapted from a
pretrained LLM still has the LLM's digit tokens and may write them where a number belongs; the text would then
re-tokenize to other ids and its numbers would come back without values. :class:`NumberTokensForNumbers` bans,
at each step, every digit token that would start a standalone number, and every number token that would be
glued to the text before it (``x`` + ``[NUM]`` reads ``x2``, a word; ``[NUM][NUM]`` reads one number).
``number-generation`` applies it by default for ``[NUM]`` models; ``generate`` takes it as a logits processor.

Example:
    >>> processor = NumberTokensForNumbers(tokenizer)  # doctest: +SKIP
    >>> model.generate(**batch, logits_processor=[processor])  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LogitsProcessor

from .tokenization_helpers import token_texts

__all__ = ["NumberTokensForNumbers"]


class NumberTokensForNumbers(LogitsProcessor):
    """Sets to -inf the scores of the tokens whose text would not read back as written (the module's docstring).

    Three rules, on the last token's text: a token that starts with a digit is allowed only glued to a word on
    its left (no leading space, after a letter, digit or ``_`` that is not a number token); a number token without
    a leading space is allowed only where it is not glued (not after such a character, a ``.`` or a number token);
    right after a number token, no token glued to it starts with ``e`` or ``E`` (``5`` + ``e2`` reads ``5e2``).
    """

    def __init__(self, tokenizer: Any) -> None:
        texts = token_texts(tokenizer)
        size = max(len(tokenizer), max(texts) + 1)
        tables = (torch.zeros(size, dtype=torch.bool) for _ in range(6))
        starts_digit, spaced, word_end, dot_end, number, starts_e = tables
        for token_id, text in texts.items():
            stripped = text.lstrip()
            starts_digit[token_id] = "0" <= stripped[:1] <= "9"
            spaced[token_id] = stripped != text
            word_end[token_id] = text[-1:].isalnum() or text[-1:] == "_"
            dot_end[token_id] = text[-1:] == "."
            starts_e[token_id] = text[:1] in ("e", "E")
        number[list(tokenizer.num_token_ids)] = True
        self.digit_first = starts_digit & ~number
        self.glued_number = number & ~spaced
        self.spaced, self.starts_e, self.number = spaced, starts_e, number
        self.takes_digit = word_end & ~number  # a digit after it is part of a word
        self.takes_number = ~(word_end | dot_end | number)  # an unspaced number token after it is its own number

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        last = input_ids[:, -1:].to(self.spaced.device)
        banned = self.digit_first & ~(self.takes_digit[last] & ~self.spaced)
        banned |= self.glued_number & ~self.takes_number[last]
        banned |= self.starts_e & self.number[last]
        width = scores.shape[-1]
        banned = torch.nn.functional.pad(banned[:, :width], (0, max(0, width - banned.shape[-1])))
        return scores.masked_fill(banned.to(scores.device), -torch.inf)
