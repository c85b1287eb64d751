"""The masked-word metrics (perplexity, top-k accuracy) as an ``evaluate`` module, loadable offline::

    import evaluate
    from hf_numbers.evaluation import evaluate_masked_word_metrics
    metric = evaluate.load(evaluate_masked_word_metrics.__file__)
    metric.add_batch(predictions=logits, references=labels)   # (B, L, V) and (B, L), -100 ignored
    metric.compute()                                          # {'count', 'perplexity', 'top1', 'top5', 'top20'}

or used directly as ``MaskedWordMetrics()``. Each batch is reduced on arrival to two numbers per masked
token, so logits are never stored. It imports only ``masked_word_metrics.py`` (which ``evaluate.load`` copies).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

from .masked_word_metrics import DEFAULT_TOP_K, masked_token_statistics, summarize_masked_tokens

_DESCRIPTION = "Masked-word perplexity and top-k accuracy of the masked tokens (floating-point embedding paper)."
_CITATION = """\
@article{jin2024float, title={Floating-Point Embedding: Enhancing the Mathematical Comprehension of Large Language
  Models}, author={Jin, Xiaoxiao and others}, journal={Symmetry}, volume={16}, number={4}, year={2024}}
"""
_INPUTS = """\
Args:
    predictions: token logits, (N, V) or (B, L, V) (numpy, torch or lists).
    references: true token ids, (N,) or (B, L); -100 marks positions that were not masked.
    top_k: the k of the top-k accuracies (default (1, 5, 20)), to ``compute``.
Returns:
    dict with count, perplexity (exp of the mean cross-entropy) and top{k} for each k.
"""


class MaskedWordMetrics(evaluate.Metric):
    """Masked-word perplexity and top-k accuracy as an ``evaluate`` module (``add``, ``add_batch``, ``compute``).

    Example:
        >>> import numpy as np
        >>> metric = MaskedWordMetrics(keep_in_memory=True)
        >>> metric.add_batch(predictions=np.log([[0.5, 0.25, 0.25]]), references=[0])
        >>> metric.add_batch(predictions=np.log([[[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]]), references=[[1, -100]])
        >>> out = metric.compute(top_k=(1, 2))
        >>> out["count"], out["top1"], out["top2"], round(out["perplexity"], 4)
        (2, 0.5, 1.0, 2.8284)
    """

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_INPUTS,
            features=datasets.Features({"nll": datasets.Value("float64"), "rank": datasets.Value("int64")}),
        )

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Add a batch of logits (``predictions``) and true ids (``references``, -100 ignored)."""
        if predictions is None or references is None:
            raise ValueError("add_batch needs predictions (logits) and references (token ids)")
        nll, rank = masked_token_statistics(predictions, references)
        super().add_batch(nll=nll.tolist(), rank=rank.tolist(), **kwargs)

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Add one masked token: its logits ``(V,)`` and its true id."""
        self.add_batch(predictions=[prediction], references=[reference], **kwargs)

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        """The metrics of everything added, plus ``predictions``/``references`` if given; ``top_k`` as a keyword."""
        if predictions is not None or references is not None:
            self.add_batch(predictions=predictions, references=references)
        return super().compute(**kwargs)

    def _compute(
        self, nll: Sequence[float], rank: Sequence[int], top_k: Sequence[int] = DEFAULT_TOP_K
    ) -> dict[str, float | int | None]:
        return summarize_masked_tokens(nll, rank, top_k=top_k)
