"""Evaluate a model on every split of a task: metrics per split, ``metrics.json`` and plots.

Used after training (``hf-numbers train``) and by ``hf-numbers evaluate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..modeling import find_numbers
from ..strict_json import write_json
from .masked_word_scoring import masked_word_results, score_masked_words, target_spans
from .number_metrics import compute_number_metrics
from .plots import plot_predicted_vs_true, plot_prediction_vs_parameter
from .predict import predict_answers

__all__ = ["evaluate_splits"]


def check_scorable(dataset: Mapping[str, Any], causal: bool, masked_words: bool = False) -> None:
    """Raise ``ValueError`` where :func:`evaluate_splits` could not score ``dataset``'s splits: masked-word
    metrics (asked for, or a split with masked-word targets, a ``word`` column) need a masked LM. Called
    before training too, so that no run trains a model it cannot evaluate."""
    if not causal:
        return
    targets = [split for split in dataset if split != "train" and "word" in dataset[split].column_names]
    if masked_words or targets:
        why = f"split {targets[0]!r} has masked-word targets (a 'word' column)" if targets else "masked_words is set"
        raise ValueError(f"{why}: masked-word metrics need a masked LM, and this model is causal; choose a masked "
                         "backbone, or data without a 'word' column")  # fmt: skip


def evaluate_splits(
    model: Any,
    tokenizer: Any,
    dataset: Mapping[str, Any],
    max_length: int,
    output_dir: str | Path,
    masked_words: bool = False,
    few_shot: Sequence[str] = (),
) -> dict[str, Any]:
    """Metrics of every non-training split, its plots, ``metrics.json`` and ``predictions.json`` in ``output_dir``.

    Splits with a number answer (``answer_index``): :func:`predict_answers` and :func:`compute_number_metrics`.
    Splits with a target word, and every split with ``masked_words``: :func:`score_masked_words`
    (``masked_*`` and ``target_*`` metrics). ``few_shot`` texts are written before every evaluated text,
    one per line. Returns ``{"metrics": {split: metrics}, "plot": first plot or None, "plots": [...]}``.

    Example:
        >>> summary = evaluate_splits(model, tokenizer, dataset, 128, "runs/eval")  # doctest: +SKIP
        >>> summary["metrics"]["test"]["mse"]  # doctest: +SKIP
    """
    output_dir = Path(output_dir)
    results, predictions, references, groups, per_split = {}, [], [], [], {}
    splits = [split for split in dataset if split != "train"]
    check_scorable(dataset, getattr(model, "causal", False), masked_words)
    for split in splits:
        data = dataset[split]
        results[split], per_split[split] = {}, {}
        if "answer_index" in data.column_names:
            prefix = "".join(f"{text}\n" for text in few_shot)
            shift = len(find_numbers(prefix))  # the answer's index among the numbers of prefix and text
            texts, indices = [prefix + text for text in data["text"]], [i + shift for i in data["answer_index"]]
            preds = predict_answers(model, tokenizer, texts, indices, max_length=max_length)
            # exact match at the answers' written precision (a float32 or continuous prediction of
            # 1.53 counts when it rounds to 1.53)
            decimals = max(len(text.partition(".")[2]) for text in data["answer_text"])
            results[split] = compute_number_metrics(preds, data["answer"], exact_decimals=decimals)
            per_split[split] = {"predictions": preds, "references": list(data["answer"])}
            predictions += preds
            references += list(data["answer"])
            groups += [split] * len(preds)
        words = "word" in data.column_names
        if masked_words or words:
            spans = target_spans(data["text"], data["word"], data["word_start"]) if words else None
            scores = score_masked_words(model, tokenizer, data["text"], spans, max_length=max_length)
            results[split] |= masked_word_results(scores, targets=words)
            per_split[split]["masked_tokens"] = scores.to_dict()
    output_dir.mkdir(parents=True, exist_ok=True)
    write_json(output_dir / "metrics.json", results)
    write_json(output_dir / "predictions.json", per_split)
    if not predictions:
        return {"metrics": results, "plot": None, "plots": []}
    plots = _plots(dataset, splits, predictions, references, groups, output_dir)
    return {"metrics": results, "plot": str(plots[0]), "plots": [str(p) for p in plots]}


def _plots(
    dataset: Mapping[str, Any],
    splits: list[str],
    predictions: list[float | None],
    references: list[float],
    groups: list[str],
    output_dir: Path,
) -> list[Path]:
    """Predicted against true answers over the scored splits, and for each out-of-distribution split
    (``test_ood_<column>``) the predictions against the parameter it holds out (xVal Fig. 5)."""
    plots = [
        plot_predicted_vs_true(
            predictions,
            references,
            output_dir / "predicted_vs_true.png",
            groups=groups,
            title="Predicted vs true answers",
        )
    ]
    # plain ``test_ood`` holds out a range of the answer itself
    scored = [split for split in splits if "answer_index" in dataset[split].column_names]
    for ood in (split for split in scored if split.startswith("test_ood")):
        column = ood.removeprefix("test_ood").lstrip("_") or "answer"
        if column not in dataset[ood].column_names:
            continue
        parameter = [value for split in scored for value in dataset[split][column]]
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
    return plots
