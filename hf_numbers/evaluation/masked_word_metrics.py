"""Masked-word metrics of the floating-point embedding paper (Jin et al., Table 1), from token logits.

``perplexity`` (exp of the mean cross-entropy) and ``top{k}`` accuracy over the masked tokens (labels other
than -100; a tie counts for the true id), None when none is masked. Both follow from two numbers per token
(:func:`masked_token_statistics`), so batches combine (:func:`summarize_masked_tokens`). Numpy only.

Example:
    >>> logits = np.log([[[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]])
    >>> m = compute_masked_word_metrics(logits, [[0, 1]], top_k=(1, 2))
    >>> m["count"], m["top1"], m["top2"], round(m["perplexity"], 4)
    (2, 0.5, 1.0, 2.1822)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

DEFAULT_TOP_K = (1, 5, 20)
WORD_METRIC_NAMES = ("count", "perplexity", *(f"top{k}" for k in DEFAULT_TOP_K))


def _selected_rows(logits: Any, labels: Any, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """The logits rows ``(N, V)`` (float64) and true ids ``(N,)`` of the labelled positions."""
    if hasattr(labels, "detach"):
        labels = labels.detach().cpu().numpy()
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integer token ids, got dtype {labels.dtype}")
    keep = labels != ignore_index
    if hasattr(logits, "detach"):  # a torch tensor: select first, so a (B, L, V) batch is never copied whole
        shape = tuple(logits.shape)
        rows = logits.detach()[logits.new_tensor(keep).bool()] if shape[:-1] == labels.shape else None
        rows = None if rows is None else rows.double().cpu().numpy()
    else:
        array = np.asarray(logits)
        shape = array.shape
        rows = array[keep].astype(np.float64) if shape[:-1] == labels.shape else None
    if rows is None:
        raise ValueError(
            f"logits have shape {shape} but labels have shape {labels.shape}; logits need one more (vocabulary) axis"
        )
    targets = labels[keep].astype(np.int64)
    if len(targets) and (targets.min() < 0 or targets.max() >= shape[-1]):
        raise ValueError(
            f"labels must be ids in [0, {shape[-1]}) or {ignore_index}, got {targets.min()}..{targets.max()}"
        )
    if not np.isfinite(rows).all():
        raise ValueError("logits at masked positions must be finite")
    return rows, targets


def masked_token_statistics(logits: Any, labels: Any, ignore_index: int = -100) -> tuple[np.ndarray, np.ndarray]:
    """Cross-entropy (natural log) and rank of the true id, for every labelled token.

    ``logits`` has the shape of ``labels`` plus a vocabulary axis: ``(N, V)`` with ``(N,)``, or
    ``(B, L, V)`` with ``(B, L)``; numpy arrays, torch tensors or nested lists.

    Example:
        >>> nll, rank = masked_token_statistics([[2.0, 1.0, 1.0], [0.0, 0.0, 5.0]], [0, -100])
        >>> nll.round(4).tolist(), rank.tolist()
        ([0.5514], [0])
    """
    rows, targets = _selected_rows(logits, labels, ignore_index)
    index = np.arange(len(targets))
    true = rows[index, targets]
    peak = rows.max(axis=1)
    log_norm = peak + np.log(np.exp(rows - peak[:, None]).sum(axis=1))
    rank = (rows > true[:, None]).sum(axis=1).astype(np.int64)
    return log_norm - true, rank


def summarize_masked_tokens(nll: Any, rank: Any, top_k: Sequence[int] = DEFAULT_TOP_K) -> dict[str, float | int | None]:
    """``count``, ``perplexity`` and ``top{k}`` from per-token cross-entropies and ranks.

    Example:
        >>> summarize_masked_tokens([0.0, np.log(4)], [0, 3], top_k=(1, 5))
        {'count': 2, 'perplexity': 2.0, 'top1': 0.5, 'top5': 1.0}
    """
    nll, rank = np.asarray(nll, dtype=np.float64), np.asarray(rank, dtype=np.int64)
    if nll.shape != rank.shape or nll.ndim != 1:
        raise ValueError(f"nll and rank must be 1-D of one length, got shapes {nll.shape} and {rank.shape}")
    for k in top_k:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"top_k must hold integers >= 1, got {k!r}")
    count = len(nll)
    results: dict[str, float | int | None] = {"count": count}
    results["perplexity"] = float(np.exp(nll.mean())) if count else None
    for k in top_k:
        results[f"top{k}"] = float((rank < k).mean()) if count else None
    return results


def compute_masked_word_metrics(
    logits: Any, labels: Any, top_k: Sequence[int] = DEFAULT_TOP_K, ignore_index: int = -100
) -> dict[str, float | int | None]:
    """Perplexity and top-k accuracy of the masked tokens (labels other than ``ignore_index``).

    Example:
        >>> compute_masked_word_metrics([[0.0, 0.0]], [1], top_k=(1,))
        {'count': 1, 'perplexity': 2.0, 'top1': 1.0}
    """
    return summarize_masked_tokens(*masked_token_statistics(logits, labels, ignore_index), top_k=top_k)
