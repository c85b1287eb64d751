"""Evaluate a model on every split of a task: metrics per split, ``metrics.json`` and plots.

Used after training (``hf-numbers train``) and by ``hf-numbers evaluate``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..strict_json import write_json
from .metrics import compute_number_metrics
from .plots import plot_predicted_vs_true, plot_prediction_vs_parameter
from .predict import predict_answers

__all__ = ["evaluate_splits"]


def evaluate_splits(
    model: Any, tokenizer: Any, dataset: Mapping[str, Any], max_length: int, output_dir: str | Path
) -> dict[str, Any]:
    """Metrics of every non-training split, its plots, ``metrics.json`` and ``predictions.json`` in ``output_dir``.

    Every split except ``train`` is scored (:func:`predict_answers`, then
    :func:`compute_number_metrics`, exact match at the answers' written precision). Plots: the
    predicted-vs-true scatter, and for each ``test_ood_<column>`` split the prediction against
    the held-out parameter. Values are the data's own (the model applies its number scaling).
    ``predictions.json`` holds, per split, every prediction (None where invalid) and reference,
    for analyses beyond the metrics (e.g. comparing encodings example by example).

    Returns ``{"metrics": {split: metrics}, "plot": first plot path, "plots": every plot path}``.

    Example:
        >>> summary = evaluate_splits(model, tokenizer, dataset, 128, "runs/eval")  # doctest: +SKIP
        >>> summary["metrics"]["test"]["mse"]  # doctest: +SKIP
    """
    output_dir = Path(output_dir)
    results, predictions, references, groups, per_split = {}, [], [], [], {}
    splits = [split for split in dataset if split != "train"]
    for split in splits:
        data = dataset[split]
        preds = predict_answers(model, tokenizer, data["text"], data["answer_index"], max_length=max_length)
        # exact match at the answers' written precision (a float32 or continuous prediction of
        # 1.53 counts when it rounds to 1.53)
        decimals = max(len(text.partition(".")[2]) for text in data["answer_text"])
        results[split] = compute_number_metrics(preds, data["answer"], exact_decimals=decimals)
        per_split[split] = {"predictions": preds, "references": list(data["answer"])}
        predictions += preds
        references += list(data["answer"])
        groups += [split] * len(preds)
    output_dir.mkdir(parents=True, exist_ok=True)
    write_json(output_dir / "metrics.json", results)
    write_json(output_dir / "predictions.json", per_split)
    plots = [
        plot_predicted_vs_true(
            predictions,
            references,
            output_dir / "predicted_vs_true.png",
            groups=groups,
            title="Predicted vs true answers",
        )
    ]
    # xVal Fig. 5: prediction against the parameter an out-of-distribution split holds out
    # (``test_ood_<column>``; plain ``test_ood`` holds out a range of the answer itself).
    for ood in (split for split in splits if split.startswith("test_ood")):
        column = ood.removeprefix("test_ood").lstrip("_") or "answer"
        if column not in dataset[ood].column_names:
            continue
        parameter = [value for split in splits for value in dataset[split][column]]
        heldout = (min(dataset[ood][column]), max(dataset[ood][column]))
        plots.append(
            plot_prediction_vs_parameter(
                parameter,
                predictions,
                output_dir / f"prediction_vs_{column}.png",
                references=references,
                heldout=heldout,
                groups=groups,
                parameter_name=column,
                value_name="predicted answer",
            )
        )
    return {"metrics": results, "plot": str(plots[0]), "plots": [str(p) for p in plots]}
