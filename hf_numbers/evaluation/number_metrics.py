"""Number metrics of the xVal, FoNE and BitTokens papers (:data:`METRIC_NAMES`), with numpy only.

What each metric means, and which count invalid predictions: docs/training.md, "Evaluation and metrics".
``evaluate_number_metrics.py`` wraps them as an ``evaluate`` metric (``NumberMetrics``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

LOG_SMAPE_DIGITS = 15
"""The significant digits a ``log_smape`` of 1 stands for: a float64's (BitTokens' ``logSMAPE``)."""
METRIC_NAMES = (
    "count",
    "invalid_rate",
    "mse",
    "r2",
    "r2_log",
    "exact_match",
    "log_smape",
    "within_1pct",
    "accuracy_2sf",
    "accuracy_3sf",
)


def parse_predictions(predictions: Any) -> tuple[np.ndarray, np.ndarray]:
    """Predictions as float64 values and a validity mask: a finite number, or a string ``float()`` parses
    to one, is valid; anything else (``None``, NaN, ``bool``, ``"inf"``, lists) is invalid and NaN.

    Example:
        >>> values, valid = parse_predictions([1.5, "2", None, "abc", float("nan")])
        >>> valid.tolist()
        [True, True, False, False, False]
    """
    items = _as_list(predictions, "predictions")
    values = np.full(len(items), np.nan)
    for i, item in enumerate(items):
        value = _to_float(item)
        if value is not None:
            values[i] = value
    return values, np.isfinite(values)


def _as_list(values: Any, what: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or values is None:
        raise ValueError(f"{what} must be a sequence of values, got {values!r}")
    if hasattr(values, "detach"):  # a torch tensor
        values = values.detach().cpu().numpy()
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{what} must be one-dimensional, got shape {values.shape}")
        return values.tolist()
    try:
        return list(values)
    except TypeError:
        raise ValueError(f"{what} must be a sequence of values, got {type(values).__name__}") from None


def _to_float(item: Any) -> float | None:
    if isinstance(item, (bool, np.bool_)):
        return None
    if isinstance(item, (int, float, np.integer, np.floating)):
        value = float(item)
    elif isinstance(item, str):
        try:
            value = float(item.strip())
        except ValueError:
            return None
    else:
        return None
    return value if math.isfinite(value) else None


def parse_references(references: Any) -> np.ndarray:
    """References as float64; each must be a finite number (or numeric string).

    Example:
        >>> parse_references([1, "2.5"]).tolist()
        [1.0, 2.5]
    """
    items = _as_list(references, "references")
    values = np.empty(len(items))
    for i, item in enumerate(items):
        value = _to_float(item)
        if value is None:
            raise ValueError(f"references must be finite numbers; reference {i} is {item!r}")
        values[i] = value
    return values


def within_relative(values: np.ndarray, refs: np.ndarray, tolerance: float = 0.01) -> np.ndarray:
    """Per value, whether it lies within ``tolerance`` of its reference, relative to the reference (``within_1pct``'s
    test, per problem: a NaN value is not within).

    Example:
        >>> within_relative(np.array([101.0, 98.0, np.nan]), np.array([100.0, 100.0, 100.0])).tolist()
        [True, False, False]
    """
    return np.abs(values - refs) <= tolerance * np.abs(refs)


def round_significant(values: np.ndarray, digits: int) -> list[str]:
    """Each value rounded to ``digits`` significant figures, as a canonical string.

    Example:
        >>> round_significant(np.array([1.2345, -0.0, 0.0]), 3)
        ['1.23e+00', '0.00e+00', '0.00e+00']
    """
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        raise ValueError(f"significant figures must be an integer >= 1, got {digits!r}")
    return [f"{value + 0.0:.{digits - 1}e}" for value in values.tolist()]


def compute_number_metrics(
    predictions: Any,
    references: Any,
    sig_figs: Sequence[int] = (2, 3),
    exact_decimals: int | None = None,
) -> dict[str, float | int | None]:
    """All number metrics (:data:`METRIC_NAMES`; docs/training.md, "Evaluation and metrics") of one set of
    predictions. ``exact_decimals`` rounds both sides before exact matching.

    Example:
        >>> m = compute_number_metrics([1.0, 2.1, None, 4.0], [1.0, 2.0, 3.0, 4.0])
        >>> m["invalid_rate"], m["exact_match"], round(m["mse"], 4), m["accuracy_2sf"], m["within_1pct"]
        (0.25, 0.5, 0.0033, 0.5, 0.5)
    """
    values, valid = parse_predictions(predictions)
    refs = parse_references(references)
    if len(values) != len(refs):
        raise ValueError(f"predictions and references differ in length: {len(values)} vs {len(refs)}")
    if len(refs) == 0:
        raise ValueError("no examples: predictions and references are empty")
    if exact_decimals is not None and (
        not isinstance(exact_decimals, int) or isinstance(exact_decimals, bool) or not 0 <= exact_decimals <= 15
    ):
        raise ValueError(f"exact_decimals must be None or an integer in [0, 15], got {exact_decimals!r}")
    count = len(refs)
    valid_values, valid_refs = values[valid], refs[valid]
    results: dict[str, float | int | None] = {
        "count": count,
        "invalid_rate": float(1.0 - valid.mean()),
        "mse": float(np.mean((valid_values - valid_refs) ** 2)) if valid.any() else None,
        "r2": _r2(valid_values, valid_refs),
        "r2_log": _r2(_signed_log(valid_values), _signed_log(valid_refs)),
    }
    if exact_decimals is None:
        matches = valid_values == valid_refs
    else:
        matches = np.round(valid_values, exact_decimals) == np.round(valid_refs, exact_decimals)
    results["exact_match"] = float(matches.sum() / count)
    results["log_smape"] = float(log_smape_scores(values, refs).sum() / count)
    results["within_1pct"] = float(within_relative(valid_values, valid_refs).sum() / count)
    for digits in sig_figs:
        same = [p == r for p, r in zip(round_significant(valid_values, digits), round_significant(valid_refs, digits))]
        results[f"accuracy_{digits}sf"] = float(sum(same) / count)
    return results


def log_smape_scores(values: np.ndarray, refs: np.ndarray, digits: int = LOG_SMAPE_DIGITS) -> np.ndarray:
    """BitTokens' log-sMAPE score of each prediction, in [0, 1]: ``min(1, -log10(sMAPE + 1e-100) / digits)``.

    ``sMAPE = |p - r| / (|p| + |r|)`` (0 where both are 0), so the score is about the share of ``digits``
    significant digits that are right: 0 for the wrong sign or an invalid (NaN) prediction.

    Example:
        >>> log_smape_scores(np.array([9.0, 11.0, 1.0001, -5.0, np.nan]), np.array([9.0, 9.0, 0.9999, 5.0, 1.0]))
        array([1.        , 0.06666667, 0.26666667, 0.        , 0.        ])
    """
    scale = np.maximum(np.abs(values), np.abs(refs))
    with np.errstate(invalid="ignore", divide="ignore"):
        p, r = values / scale, refs / scale
        smape = np.where(scale == 0, 0.0, np.abs(p - r) / (np.abs(p) + np.abs(r)))  # NaN stays NaN
        scores = np.clip(-np.log10(smape + 1e-100) / digits, 0.0, 1.0) + 0.0  # + 0.0: no -0.0
    return np.nan_to_num(scores, nan=0.0)


def _signed_log(values: np.ndarray) -> np.ndarray:
    return np.sign(values) * np.log10(1.0 + np.abs(values))


def _r2(values: np.ndarray, refs: np.ndarray) -> float | None:
    if len(refs) < 2:
        return None
    total = float(np.sum((refs - refs.mean()) ** 2))
    if total == 0.0:
        return None
    return 1.0 - float(np.sum((values - refs) ** 2)) / total


def compute_split_metrics(
    predictions: Mapping[str, Any], references: Mapping[str, Any], **options: Any
) -> dict[str, dict[str, float | int | None]]:
    """``compute_number_metrics`` for every split, e.g. ``test`` and ``test_ood``.

    ``options`` go to :func:`compute_number_metrics`. The two mappings must have the same splits.

    Example:
        >>> out = compute_split_metrics({"test": [1.0], "test_ood": [2.5]}, {"test": [1.0], "test_ood": [2.0]})
        >>> out["test"]["exact_match"], out["test_ood"]["mse"]
        (1.0, 0.25)
    """
    if set(predictions) != set(references):
        raise ValueError(
            f"predictions and references must cover the same splits, got {sorted(predictions)} and {sorted(references)}"
        )
    return {split: compute_number_metrics(predictions[split], references[split], **options) for split in predictions}


def format_metrics_table(results: Mapping[str, Mapping[str, float | int | None]]) -> str:
    """A plain-text table: one row per split, one column per metric (``-`` where undefined).

    Example:
        >>> print(format_metrics_table({"test": {"count": 2, "mse": 0.5}}))
        split  count     mse
        test       2  0.5000
    """
    columns: list[str] = []
    for metrics in results.values():
        columns.extend(name for name in metrics if name not in columns)

    def cell(value: float | int | None) -> str:
        if value is None:
            return "-"
        if isinstance(value, int):
            return str(value)
        return f"{value:.4g}" if abs(value) >= 1e4 or (value != 0 and abs(value) < 1e-3) else f"{value:.4f}"

    rows = [["split", *columns]] + [
        [split, *(cell(metrics.get(name)) for name in columns)] for split, metrics in results.items()
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            text.ljust(width) if i == 0 else text.rjust(width) for i, (text, width) in enumerate(zip(row, widths))
        )
        for row in rows
    )
