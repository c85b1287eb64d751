"""PNG plots of number predictions, drawn on a matplotlib ``Figure`` with an Agg canvas (never ``pyplot``: no
display needed, the global backend untouched). Points are coloured by ``groups`` (e.g. the split); invalid
predictions are skipped and counted in the legend. matplotlib is imported
when a plot is drawn, not with the package.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .number_metrics import parse_predictions, parse_references

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _png_path(path: str | os.PathLike) -> Path:
    file = Path(path)
    if file.suffix.lower() != ".png":
        raise ValueError(f"path must end with .png, got {str(path)!r}")
    file.parent.mkdir(parents=True, exist_ok=True)
    return file


def _groups(groups: Sequence[str] | None, count: int) -> np.ndarray:
    if groups is None:
        return np.full(count, "")
    labels = np.asarray([str(g) for g in groups])
    if len(labels) != count:
        raise ValueError(f"groups must have one label per prediction: {len(labels)} labels for {count} predictions")
    return labels


def _new_figure(size: tuple[float, float]) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=size)


def _save(figure: Figure, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=120)
    return path


def _scatter_groups(axes: Axes, x: np.ndarray, y: np.ndarray, valid: np.ndarray, labels: np.ndarray) -> None:
    for label in dict.fromkeys(labels.tolist()):
        chosen = labels == label
        shown = chosen & valid
        invalid = int((chosen & ~valid).sum())
        name = label or "predictions"
        if invalid:
            name += f" ({invalid} invalid not shown)"
        axes.scatter(x[shown], y[shown], s=10, alpha=0.7, label=name)


def plot_predicted_vs_true(
    predictions: Any,
    references: Any,
    path: str | os.PathLike,
    *,
    groups: Sequence[str] | None = None,
    title: str = "Predicted vs true",
    value_name: str = "value",
) -> Path:
    """Scatter predicted against true values with the ``y = x`` line; write a PNG to ``path``.

    Example:
        >>> import tempfile, os
        >>> p = plot_predicted_vs_true([1.0, 2.1, None], [1.0, 2.0, 3.0], os.path.join(tempfile.mkdtemp(), "pvt.png"))
        >>> p.stat().st_size > 0
        True
    """
    values, valid = parse_predictions(predictions)
    refs = parse_references(references)
    if len(values) != len(refs):
        raise ValueError(f"predictions and references differ in length: {len(values)} vs {len(refs)}")
    file = _png_path(path)
    labels = _groups(groups, len(refs))
    figure = _new_figure((5, 5))
    axes = figure.add_subplot()
    _scatter_groups(axes, refs, values, valid, labels)
    shown = np.concatenate([refs, values[valid]])
    if shown.size:
        low, high = float(shown.min()), float(shown.max())
        axes.plot([low, high], [low, high], color="black", linewidth=1, label="y = x")
    axes.set_xlabel(f"true {value_name}")
    axes.set_ylabel(f"predicted {value_name}")
    axes.set_title(title)
    axes.legend(loc="best", fontsize="small")
    figure.tight_layout()
    return _save(figure, file)


def plot_prediction_vs_parameter(
    parameter: Any,
    predictions: Any,
    path: str | os.PathLike,
    *,
    references: Any = None,
    heldout: tuple[float, float] | None = None,
    groups: Sequence[str] | None = None,
    parameter_name: str = "parameter",
    value_name: str = "prediction",
    title: str | None = None,
) -> Path:
    """Predictions against a (held-out) parameter, xVal Figure 5 style; write a PNG to ``path``.

    ``references`` (optional) are drawn as crosses (pass ``references=parameter`` when the prediction is the
    parameter, e.g. a masked ``a1``); ``heldout=(low, high)`` shades the interval training never saw.

    Example:
        >>> import tempfile, os
        >>> a1 = [1.0, 1.45, 2.0]
        >>> out = os.path.join(tempfile.mkdtemp(), "a1.png")
        >>> p = plot_prediction_vs_parameter(a1, [1.01, 1.40, 1.98], out, references=a1, heldout=(1.4, 1.5))
        >>> p.suffix
        '.png'
    """
    params = parse_references(parameter)
    values, valid = parse_predictions(predictions)
    if len(values) != len(params):
        raise ValueError(f"parameter and predictions differ in length: {len(params)} vs {len(values)}")
    refs = None if references is None else parse_references(references)
    if refs is not None and len(refs) != len(params):
        raise ValueError(f"parameter and references differ in length: {len(params)} vs {len(refs)}")
    if heldout is not None:
        if len(heldout) != 2 or not float(heldout[0]) < float(heldout[1]):
            raise ValueError(f"heldout must be a pair (low, high) with low < high, got {heldout!r}")
    file = _png_path(path)
    labels = _groups(groups, len(params))
    figure = _new_figure((6, 4))
    axes = figure.add_subplot()
    if heldout is not None:
        axes.axvspan(float(heldout[0]), float(heldout[1]), color="grey", alpha=0.25, label="held out of training")
    _scatter_groups(axes, params, values, valid, labels)
    if refs is not None:
        order = np.argsort(params, kind="stable")
        axes.scatter(params[order], refs[order], marker="x", s=12, color="black", linewidths=0.8, label="true")
    axes.set_xlabel(parameter_name)
    axes.set_ylabel(value_name)
    axes.set_title(title or f"{value_name} vs {parameter_name}")
    axes.legend(loc="best", fontsize="small")
    figure.tight_layout()
    return _save(figure, file)
