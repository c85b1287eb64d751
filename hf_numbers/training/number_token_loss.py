"""The number-token loss (NTL, Zausinger et al., ICML 2025) for models that write numbers as digit tokens.

Where the label is a digit, NTL is the Wasserstein distance between the predicted digit distribution and
the true digit (4 for 5 costs less than 9 for 5). Its number-level form (``ntloss.NumberLevelLoss``) scores each
whole number instead: the digits' expected values, each times its place, summed into the predicted number, and
its symmetric relative error to the true one (bounded by 1, so a wrong leading digit costs most and a wrong last
digit of a 6-digit number almost nothing). ``ntloss`` computes both; this module aligns them with a causal LM's
shifted labels and refuses tokenizers whose numbers are not digit tokens.

``Trainer`` users add it with :class:`~hf_numbers.training.number_token_loss_trainer.NumberTokenLossTrainer`.

Example:
    >>> ntl = NumberTokenLoss(tokenizer, vocab_size=model.config.vocab_size, causal=True)  # doctest: +SKIP
    >>> loss = out.token_loss + 0.3 * ntl(out.logits, batch["labels"])  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import torch

from ..modeling.parsing import writes_digits

__all__ = ["NUMBER_TOKEN_LOSS_KINDS", "NumberTokenLoss"]

DIGITS = tuple("0123456789")
NUMBER_TOKEN_LOSS_KINDS = ("ntl", "number-level", "ntl+number-level")
"""Per digit (the paper's NTL), per number (``NumberLevelLoss``), or their sum."""


class _Vocabulary:
    """What ``ntloss`` reads of a tokenizer (its vocabulary), read-only: it never adds tokens to ours."""

    def __init__(self, vocab: dict[str, int]):
        self._vocab = dict(vocab)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def __len__(self) -> int:
        return len(self._vocab)

    def convert_tokens_to_ids(self, token: str) -> int:
        return self._vocab.get(token, -1)  # -1: no label is an absent token

    def add_tokens(self, tokens: Any) -> int:
        return 0


class NumberTokenLoss:
    """``ntloss``'s losses over the digit tokens ``0`` ... ``9`` of ``tokenizer``, for logits of ``vocab_size``.

    ``kind``: one of :data:`NUMBER_TOKEN_LOSS_KINDS`; the number level reads ``12.5`` as one number where ``.`` is
    a token (a ``.`` between digits joins them) and is not reweighed by the digits' share of the probability
    (ntloss: reweighing explodes it). ``causal``: the logits at position t are scored against the label at t + 1,
    as the token loss is. A tokenizer that writes numbers as ``[NUM]`` (unless ``number_output="digits"``) or as
    a text scheme's tokens, or lacks a digit token, is a ``ValueError``: these losses score digit tokens only.
    """

    def __init__(self, tokenizer: Any, vocab_size: int, causal: bool, kind: str = "ntl"):
        if kind not in NUMBER_TOKEN_LOSS_KINDS:
            raise ValueError(f"number-token loss {kind!r}: one of {', '.join(NUMBER_TOKEN_LOSS_KINDS)}")
        try:
            from ntloss import NTLoss, NumberLevelLoss
        except ImportError:  # an optional extra
            raise ImportError("--number_token_loss needs the ntloss package: pip install 'hf_numbers[ntl]'") from None
        writes_num_tokens = getattr(tokenizer, "num_token_ids", None) and not writes_digits(tokenizer)
        if writes_num_tokens or getattr(tokenizer, "scheme", None) is not None:
            raise ValueError(
                "the number-token loss scores digit tokens, but this tokenizer writes numbers as "
                f"{'[NUM] tokens' if tokenizer.num_token_ids else 'a text scheme'}; use the text encoding"
            )
        vocab = tokenizer.get_vocab()
        missing = [digit for digit in DIGITS if digit not in vocab]
        if missing:
            raise ValueError(f"the number-token loss needs a token for each digit; the tokenizer lacks {missing}")
        read = _Vocabulary(vocab)
        build = {"ntl": lambda: NTLoss(read, vocab_size=vocab_size),
                 "number-level": lambda: NumberLevelLoss(read, vocab_size=vocab_size, float_level="." in vocab,
                                                         reweigh=False)}
        self.losses = [build[part]() for part in kind.split("+")]
        self.causal = causal

    def __call__(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """The mean loss over the positions whose label is a digit token, or over the numbers (0 where there is
        none); for ``ntl+number-level`` the sum of the two means."""
        if self.causal:
            logits, labels = logits[:, :-1], labels[:, 1:]
        logits = logits.float()
        return sum(loss(logits, labels) for loss in self.losses)
