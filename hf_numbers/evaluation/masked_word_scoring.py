"""Masked-word evaluation of a masked LM, one word at a time (the floating-point embedding paper's protocol).

Every text token (not a special token, not part of a number: numbers stay visible) is masked alone and
scored by its cross-entropy and rank; the tokens of a text's target word are also reported on their own.
Cost: one forward pass per scored token (batched; logits at the masked position only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..data.collators import number_token_masks_of, overlapping_tokens
from ..modeling import NEUTRAL_NUMBER
from .masked_word_metrics import DEFAULT_TOP_K, masked_token_statistics, summarize_masked_tokens

__all__ = ["MaskedTokenScores", "evaluate_masked_words", "masked_word_results", "score_masked_words", "target_spans"]


@dataclass
class MaskedTokenScores:
    """Per scored token: ``nll`` (cross-entropy, natural log), ``rank`` of the true id, ``text`` (its
    text's index), ``position`` (its index among the text's tokens) and ``target`` (whether it belongs
    to its text's target word)."""

    nll: np.ndarray
    rank: np.ndarray
    text: np.ndarray
    position: np.ndarray
    target: np.ndarray

    def to_dict(self) -> dict[str, list[Any]]:
        """Plain lists (for JSON)."""
        return {name: getattr(self, name).tolist() for name in ("text", "position", "nll", "rank", "target")}


def _queries(
    tokenizer: Any,
    texts: Sequence[str],
    ids: list[list[int]],
    offsets: list[list[tuple[int, int]]],
    target_spans: Sequence[tuple[int, int]] | None,
    targets_only: bool,
) -> list[tuple[int, int, bool]]:
    """(text index, token position, is a target token) of every token to mask."""
    specials = set(tokenizer.all_special_ids) - set(tokenizer.num_token_ids)
    in_number = number_token_masks_of(tokenizer, texts, ids, offsets)
    queries = []
    for index, (row, flags) in enumerate(zip(ids, in_number)):
        target = overlapping_tokens(offsets[index], [target_spans[index]]) if target_spans else [False] * len(row)
        eligible = [token not in specials and not flag for token, flag in zip(row, flags)]
        if target_spans and not any(t and e for t, e in zip(target, eligible)):
            raise ValueError(
                f"text {index}: its target word (characters {target_spans[index][0]}-{target_spans[index][1]}) "
                "is not among its word tokens; was it truncated? Raise max_length."
            )
        queries += [(index, j, target[j]) for j in range(len(row)) if eligible[j] and (target[j] or not targets_only)]
    return queries


@torch.no_grad()
def score_masked_words(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    target_spans: Sequence[tuple[int, int]] | None = None,
    batch_size: int = 64,
    max_length: int | None = None,
    targets_only: bool = False,
) -> MaskedTokenScores:
    """Mask each text token of each text alone and score the model's prediction of it.

    ``target_spans`` gives each text's target word as ``(start, end)`` characters; the tokens that
    overlap it are flagged in ``target`` (``targets_only=True`` scores only them: one pass per
    target token). Numbers are the data's own (the model applies its number scaling).

    Example:
        >>> scores = score_masked_words(model, tokenizer, ["The car weighs 3504 pounds."], [(20, 26)])  # doctest: +SKIP
        >>> float(np.exp(scores.nll[scores.target].mean()))  # doctest: +SKIP
    """
    texts = list(texts)
    if target_spans is not None and len(target_spans) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(target_spans)} target spans")
    cut = {"truncation": max_length is not None, "max_length": max_length}
    enc = tokenizer(texts, return_offsets_mapping=True, **cut)
    ids, numbers = enc["input_ids"], enc["input_numbers"]
    queries = _queries(tokenizer, texts, ids, enc["offset_mapping"], target_spans, targets_only)
    queries.sort(key=lambda query: len(ids[query[0]]))  # similar lengths together: little padding
    was_training = model.training
    model.eval()
    nll, rank = [], []
    for start in range(0, len(queries), batch_size):
        chunk = queries[start : start + batch_size]
        width = max(len(ids[index]) for index, _, _ in chunk)
        input_ids = torch.full((len(chunk), width), tokenizer.pad_token_id, dtype=torch.long)
        input_numbers = torch.full((len(chunk), width), NEUTRAL_NUMBER, dtype=torch.float64)
        attention = torch.zeros((len(chunk), width), dtype=torch.long)
        for row, (index, _, _) in enumerate(chunk):
            length = len(ids[index])
            input_ids[row, :length] = torch.tensor(ids[index])
            input_numbers[row, :length] = torch.tensor(numbers[index], dtype=torch.float64)
            attention[row, :length] = 1
        positions = torch.tensor([position for _, position, _ in chunk])
        rows = torch.arange(len(chunk))
        true_ids = input_ids[rows, positions].clone()
        input_ids[rows, positions] = tokenizer.mask_token_id
        out = model(
            input_ids=input_ids.to(model.device),
            input_numbers=input_numbers.to(model.device),
            attention_mask=attention.to(model.device),
            logits_to_keep=positions[:, None].to(model.device),  # logits at the masked position only
        )
        chunk_nll, chunk_rank = masked_token_statistics(out.logits[:, 0], true_ids)
        nll.append(chunk_nll)
        rank.append(chunk_rank)
    model.train(was_training)
    return MaskedTokenScores(
        nll=np.concatenate(nll) if nll else np.zeros(0),
        rank=np.concatenate(rank) if rank else np.zeros(0, dtype=np.int64),
        text=np.array([index for index, _, _ in queries], dtype=np.int64),
        position=np.array([position for _, position, _ in queries], dtype=np.int64),
        target=np.array([target for _, _, target in queries], dtype=bool),
    )


def target_spans(texts: Sequence[str], words: Sequence[str], word_starts: Sequence[int]) -> list[tuple[int, int]]:
    """``(start, end)`` characters of each text's target word, checked against the text.

    Example:
        >>> target_spans(["The car weighs 3504 pounds."], ["pounds"], [20])
        [(20, 26)]
    """
    if len(words) != len(texts) or len(word_starts) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(words)} words and {len(word_starts)} word starts")
    spans = [(start, start + len(word)) for word, start in zip(words, word_starts)]
    for index, (text, word, (start, end)) in enumerate(zip(texts, words, spans)):
        if text[start:end] != word:
            found = text[start:end]
            raise ValueError(f"text {index}: characters {start}-{end} are {found!r}, not the word {word!r}")
    return spans


def masked_word_results(
    scores: MaskedTokenScores, targets: bool = False, top_k: Sequence[int] = DEFAULT_TOP_K
) -> dict[str, float | int | None]:
    """``masked_*`` metrics over every scored token and, with ``targets``, ``target_*`` over the target tokens.

    Each is ``count``, ``perplexity`` and ``top{k}`` (see :mod:`~hf_numbers.evaluation.masked_word_metrics`).
    """
    results = {f"masked_{k}": v for k, v in summarize_masked_tokens(scores.nll, scores.rank, top_k).items()}
    if targets:
        target = summarize_masked_tokens(scores.nll[scores.target], scores.rank[scores.target], top_k)
        results |= {f"target_{k}": v for k, v in target.items()}
    return results


def evaluate_masked_words(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    words: Sequence[str] | None = None,
    word_starts: Sequence[int] | None = None,
    max_length: int | None = None,
    top_k: Sequence[int] = DEFAULT_TOP_K,
    batch_size: int = 64,
) -> dict[str, float | int | None]:
    """Masked-word metrics of a split: ``masked_*`` over every text token, and with target words
    (``words`` at character offsets ``word_starts``) ``target_*`` over their tokens.

    Example:
        >>> split = dataset["test"]  # doctest: +SKIP
        >>> evaluate_masked_words(model, tokenizer, split["text"], split["word"], split["word_start"])  # doctest: +SKIP
        {'masked_count': 4120, 'masked_perplexity': 3.1, ..., 'target_top1': 0.82, ...}
    """
    if (words is None) != (word_starts is None):
        raise ValueError("give both words and word_starts, or neither")
    spans = None if words is None else target_spans(texts, words, word_starts)
    scores = score_masked_words(model, tokenizer, texts, spans, batch_size=batch_size, max_length=max_length)
    return masked_word_results(scores, targets=spans is not None, top_k=top_k)
