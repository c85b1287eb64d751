"""The number metrics as an ``evaluate`` module, loadable offline as a local metric script::

    import evaluate
    from hf_numbers.evaluation import evaluate_number_metrics
    metric = evaluate.load(evaluate_number_metrics.__file__)

or used directly as ``NumberMetrics()``. It imports only ``number_metrics.py`` (which ``evaluate.load``
copies); it lives apart from it because importing ``evaluate`` takes seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

from .number_metrics import compute_number_metrics, parse_predictions

_DESCRIPTION = "Number metrics: MSE, R², exact match, accuracy to k significant figures, invalid rate."
_CITATION = """\
@article{golkar2023xval, title={xVal: A Continuous Number Encoding for Large Language Models},
  author={Golkar, Siavash and others}, journal={arXiv:2310.02989}, year={2023}}
@article{zhou2025fone, title={FoNE: Precise Single-Token Number Embeddings via Fourier Features},
  author={Zhou, Tianyi and others}, journal={arXiv:2502.09741}, year={2025}}
"""
_INPUTS = """\
Args:
    predictions: predicted values; numbers, numeric strings, or None / NaN / non-numbers (invalid).
    references: true values, finite numbers.
    sig_figs: significant-figure counts for the ``accuracy_{k}sf`` metrics (default (2, 3)).
    exact_decimals: if set, round both sides to this many decimals before exact matching.
Returns:
    dict with count, invalid_rate, mse, r2, r2_log, exact_match, log_smape, within_1pct and accuracy_{k}sf.
"""


class NumberMetrics(evaluate.Metric):
    """The number metrics as an ``evaluate`` module (``add``, ``add_batch``, ``compute``).

    Predictions may be numbers, numeric strings or invalid values (``None``, NaN, other
    strings); they are parsed before ``evaluate`` stores them, so invalid ones count in
    ``invalid_rate``. ``compute`` takes ``sig_figs`` and ``exact_decimals`` as keywords.

    Example:
        >>> metric = NumberMetrics(keep_in_memory=True)
        >>> metric.add_batch(predictions=["1.5", None], references=[1.5, 2.0])
        >>> metric.compute()["invalid_rate"]
        0.5
    """

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_INPUTS,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
        )

    @staticmethod
    def _clean(predictions: Any) -> list[float | None]:
        values, valid = parse_predictions(predictions)
        return [float(v) if ok else None for v, ok in zip(values, valid)]

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Add a batch of predictions and references (see the class docstring)."""
        if predictions is not None:
            predictions = self._clean(predictions)
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Add one prediction and reference (see the class docstring)."""
        if prediction is not None:
            prediction = self._clean([prediction])[0]
        super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        """Compute the metrics on the added examples plus ``predictions``/``references`` if given."""
        if predictions is not None:
            predictions = self._clean(predictions)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(
        self,
        predictions: Sequence[float | None],
        references: Sequence[float],
        sig_figs: Sequence[int] = (2, 3),
        exact_decimals: int | None = None,
    ) -> dict[str, float | int | None]:
        return compute_number_metrics(predictions, references, sig_figs=sig_figs, exact_decimals=exact_decimals)
