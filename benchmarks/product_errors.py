"""Where a model's products go wrong: the first wrong digit of each answer, from the left, and the spread of the
relative error.

A product written left to right is an estimate refined digit by digit; "within 1%" needs its first two digits, and
mostly the third. This counts, over the answers of a run, those exact, those whose first wrong digit is the leading
one, the second, the third or later, those of another length, and those missing; the quantiles of
``|predicted - true| / |true|`` over the answered ones; and the share within 1% by the true product's length (do
two set-ups part on the short products, whose factors are small, or on the long ones?).

    python benchmarks/product_errors.py runs/reproduce/pretrained/mult3-digits-bos-lora-ntl

The run folder's ``predictions.json`` (written by ``hf-numbers train`` and ``hf-numbers evaluate``) holds the
answers and the true values; a pretrained row's record keeps them for its test split (``run_answers.py``).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np
from run_answers import read_answers

from hf_numbers.evaluation.number_metrics import parse_predictions, parse_references, within_relative

KINDS = ("exact", "leading digit", "second digit", "third digit or later", "length", "no number")
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def first_wrong(true: int, predicted: int | None) -> str:
    """Where ``predicted`` first departs from ``true``, reading from the left: one of :data:`KINDS`.

    Example:
        >>> first_wrong(56088, 56088), first_wrong(56088, 57088), first_wrong(56088, 5608), first_wrong(56088, None)
        ('exact', 'second digit', 'length', 'no number')
    """
    if predicted is None:
        return "no number"
    written, wanted = str(abs(predicted)), str(abs(true))
    if len(written) != len(wanted) or (predicted < 0) != (true < 0):
        return "length"
    place = next((i for i, (w, t) in enumerate(zip(written, wanted)) if w != t), None)
    return "exact" if place is None else KINDS[1 + min(place, 2)]


def relative_error_quantiles(trues: list[float], predictions: list[float | None]) -> list[float]:
    """The :data:`QUANTILES` of ``|predicted - true| / |true|`` over the answered problems (true values of 0 left out).

    Example:
        >>> relative_error_quantiles([100.0, 100.0], [101.0, None])
        [0.01, 0.01, 0.01, 0.01, 0.01]
    """
    errors = sorted(abs(p - t) / abs(t) for t, p in zip(trues, predictions, strict=True) if p is not None and t)
    return [errors[min(int(q * len(errors)), len(errors) - 1)] for q in QUANTILES] if errors else []


def within_by_length(trues: list[float], predictions: list[float | None]) -> dict[int, tuple[int, float]]:
    """``{digits of the true value: (problems, share within 1%)}``; a missing answer is not within.

    Example:
        >>> within_by_length([56088.0, 56088.0, 123456.0], [56100.0, None, 200000.0])
        {5: (2, 0.5), 6: (1, 0.0)}
    """
    values, _ = parse_predictions(predictions)
    within = within_relative(values, parse_references(trues))
    lengths = np.array([len(str(abs(int(t)))) for t in trues])
    return {int(n): (int((lengths == n).sum()), float(within[lengths == n].mean())) for n in np.unique(lengths)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run folder holding predictions.json, or a row's record")
    parser.add_argument("--split", default="test")
    args = parser.parse_args(argv)
    answers, _ = read_answers(args.run, args.split)
    trues, predictions = answers["references"], answers["predictions"]
    kinds = Counter(first_wrong(int(t), None if p is None else int(p)) for t, p in zip(trues, predictions, strict=True))
    print(
        f"{args.split}: {len(trues)} products; the first wrong digit: "
        + ", ".join(f"{kind}: {kinds[kind]}" for kind in KINDS)
    )
    quantiles = relative_error_quantiles(trues, predictions)
    print("relative error quantiles " + ", ".join(f"{q:.0%}: {e:.4f}" for q, e in zip(QUANTILES, quantiles)))
    by_length = within_by_length(trues, predictions).items()
    print("within 1% by the product's digits: " + ", ".join(f"{n}: {s:.1%} of {count}" for n, (count, s) in by_length))


if __name__ == "__main__":
    main()
