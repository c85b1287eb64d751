"""Evaluation for hf_numbers: number metrics (directly or through ``evaluate``), PNG plots, and
:func:`evaluate_splits`, which predicts the answers of every split of a task and scores them.

``NumberMetrics`` (the ``evaluate`` module) is imported on first use, because importing
``evaluate`` takes seconds.

Example:
    >>> from hf_numbers.evaluation import compute_number_metrics
    >>> compute_number_metrics([1.0, None], [1.0, 2.0])["invalid_rate"]
    0.5
"""

from typing import Any

from .metrics import (
    METRIC_NAMES,
    compute_number_metrics,
    compute_split_metrics,
    format_metrics_table,
    parse_predictions,
    parse_references,
    round_significant,
)
from .plots import plot_predicted_vs_true, plot_prediction_vs_parameter
from .splits import evaluate_splits

__all__ = [
    "METRIC_NAMES",
    "NumberMetrics",
    "compute_number_metrics",
    "compute_split_metrics",
    "evaluate_splits",
    "format_metrics_table",
    "parse_predictions",
    "parse_references",
    "plot_predicted_vs_true",
    "plot_prediction_vs_parameter",
    "round_significant",
]


def __getattr__(name: str) -> Any:
    if name == "NumberMetrics":
        from .number_metrics import NumberMetrics

        return NumberMetrics
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
