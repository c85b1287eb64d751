"""Evaluation for hf_numbers: number metrics and masked-word metrics (directly or through ``evaluate``),
PNG plots, and :func:`evaluate_splits`, which predicts the answers of every split of a task and scores them.

``NumberMetrics`` and ``MaskedWordMetrics`` (the ``evaluate`` modules) are imported on first
use, because importing ``evaluate`` takes seconds.

Example:
    >>> from hf_numbers.evaluation import compute_number_metrics
    >>> compute_number_metrics([1.0, None], [1.0, 2.0])["invalid_rate"]
    0.5
"""

from typing import Any

from .masked_word_metrics import (
    WORD_METRIC_NAMES,
    compute_masked_word_metrics,
    masked_token_statistics,
    summarize_masked_tokens,
)
from .masked_word_scoring import (
    MaskedTokenScores,
    evaluate_masked_words,
    masked_word_results,
    score_masked_words,
    target_spans,
)
from .number_metrics import (
    METRIC_NAMES,
    compute_number_metrics,
    compute_split_metrics,
    format_metrics_table,
    log_smape_scores,
    parse_predictions,
    parse_references,
    round_significant,
)
from .plots import plot_predicted_vs_true, plot_prediction_vs_parameter
from .splits import evaluate_splits

__all__ = [
    "METRIC_NAMES",
    "WORD_METRIC_NAMES",
    "MaskedTokenScores",
    "MaskedWordMetrics",
    "NumberMetrics",
    "compute_masked_word_metrics",
    "compute_number_metrics",
    "compute_split_metrics",
    "evaluate_masked_words",
    "evaluate_splits",
    "format_metrics_table",
    "log_smape_scores",
    "masked_token_statistics",
    "masked_word_results",
    "parse_predictions",
    "parse_references",
    "plot_predicted_vs_true",
    "plot_prediction_vs_parameter",
    "round_significant",
    "score_masked_words",
    "summarize_masked_tokens",
    "target_spans",
]


def __getattr__(name: str) -> Any:
    if name == "NumberMetrics":
        from .evaluate_number_metrics import NumberMetrics

        return NumberMetrics
    if name == "MaskedWordMetrics":
        from .evaluate_masked_word_metrics import MaskedWordMetrics

        return MaskedWordMetrics
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
