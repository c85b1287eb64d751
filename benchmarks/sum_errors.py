"""Where a model's wrong sums go wrong: each wrong digit of a ``fone_arithmetic`` addition run, by what the carry
into its place needs.

A digit written left to right needs the carry from the places below it. This counts, over the wrong test sums of a
run, the wrong digits whose place below holds a pair summing to 10 or more (a carry the pair makes), to 9 (a carry
only if one comes from further down: a chain), to 8 or less (no carry), and the units (no carry at all); and how
often the digits of places 1 to 6 are wrong where the carry into them is a near tie (the two operands' lower digits
sum to within 5% of 10^k: a long chain, or a pair just over or under ten) and elsewhere; and the share of sums
written exactly where the operands have as many digits and where they have not (then, counted from the left, digits
of one place stand at different places).

    python benchmarks/sum_errors.py runs/reproduce/pretrained/add6-digits-below-bos-lora-ntl

The run folder's ``predictions.json`` (written by ``hf-numbers train`` and ``hf-numbers evaluate``) holds the
answers; the problems are drawn again from its ``training_args.json`` (the same task, sizes and data seed), so a
folder of ``hf-numbers evaluate`` takes ``--training_args`` from the run it evaluated. A pretrained row's record
keeps both for its test split (``run_answers.py``): pass the record instead of the folder.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from run_answers import drawn_again, read_answers

from hf_numbers.data import parse_task_options

KINDS = ("units", "pair >= 10", "pair = 9", "pair <= 8")


def digit(n: int, place: int) -> int:
    """The digit of ``n`` at ``place`` (0: the units)."""
    return n // 10**place % 10


def carry_kind(a: int, b: int, place: int) -> str:
    """What the carry into ``place`` (0: the units) of ``a + b`` depends on: one of :data:`KINDS`.

    Example:
        >>> carry_kind(15, 5, 1), carry_kind(14, 5, 1), carry_kind(194, 6, 2)
        ('pair >= 10', 'pair = 9', 'pair = 9')
    """
    if place == 0:
        return "units"
    pair = digit(a, place - 1) + digit(b, place - 1)
    return "pair >= 10" if pair >= 10 else "pair = 9" if pair == 9 else "pair <= 8"


def wrong_digits(operands: list[tuple[int, int]], predictions: list[float | None]) -> tuple[int, Counter]:
    """The number of wrong sums (no number counts as wrong) and their wrong digits by :func:`carry_kind`."""
    wrong, kinds = 0, Counter()
    for (a, b), predicted in zip(operands, predictions, strict=True):
        if predicted is not None and int(predicted) == a + b:
            continue
        wrong += 1
        if predicted is None:
            continue
        total, written = a + b, int(predicted)
        for place in range(len(str(max(total, written)))):
            if digit(total, place) != digit(written, place):
                kinds[carry_kind(a, b, place)] += 1
    return wrong, kinds


def near_ties(operands: list[tuple[int, int]], predictions: list[float | None], width: float = 0.05) -> dict:
    """``{"near tie": (places, wrong), "other": (places, wrong)}`` over places 1 to 6 of every answered sum: a near
    tie where the operands' lowest ``k`` digits sum to within ``width * 10^k`` of ``10^k``.

    Example:
        >>> near_ties([(1995, 5)], [1900.0])
        {'near tie': (3, 2), 'other': (3, 0)}
    """
    counts = {"near tie": [0, 0], "other": [0, 0]}
    for (a, b), predicted in zip(operands, predictions, strict=True):
        if predicted is None:
            continue
        for place in range(1, 7):
            lower = (a % 10**place + b % 10**place) / 10**place
            kind = counts["near tie" if abs(lower - 1) < width else "other"]
            kind[0] += 1
            kind[1] += digit(a + b, place) != digit(int(predicted), place)
    return {kind: tuple(pair) for kind, pair in counts.items()}


def exact_by_lengths(operands: list[tuple[int, int]], predictions: list[float | None]) -> dict:
    """``{"same length": (sums, exact), "other lengths": (sums, exact)}``: the sums written exactly, by whether the
    operands have as many digits.

    Example:
        >>> exact_by_lengths([(12, 30), (12, 3), (99, 1)], [42.0, 15.0, 90.0])
        {'same length': (1, 1), 'other lengths': (2, 1)}
    """
    counts = {"same length": [0, 0], "other lengths": [0, 0]}
    for (a, b), predicted in zip(operands, predictions, strict=True):
        group = counts["same length" if len(str(a)) == len(str(b)) else "other lengths"]
        group[0] += 1
        group[1] += predicted is not None and int(predicted) == a + b
    return {group: tuple(pair) for group, pair in counts.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run folder holding predictions.json, or a row's record")
    parser.add_argument("--training_args", type=Path, help="default: the run's own training_args.json")
    parser.add_argument("--split", default="test")
    args = parser.parse_args(argv)
    predicted, setup = read_answers(args.run, args.split)
    if args.training_args is not None:
        setup = json.loads(args.training_args.read_text())
    if setup.get("task") is None:
        raise SystemExit(f"{args.run}: no training_args.json says how its problems were drawn; pass --training_args")
    operation = parse_task_options(setup.get("task_options")).get("operation", "add")
    if setup["task"] != "fone_arithmetic" or operation != "add":
        raise SystemExit(f"{args.run}: a fone_arithmetic addition run is needed, got task {setup['task']!r} "
                         f"(operation {operation!r})")
    rows = drawn_again(setup)[args.split]
    operands = [(int(a), int(b)) for a, b in rows["operands"]]
    if [a + b for a, b in operands] != [int(x) for x in predicted["references"]]:
        raise SystemExit(f"{args.run}: its references are not the sums of the problems drawn again; pass the "
                         "training run's --training_args")
    wrong, kinds = wrong_digits(operands, predicted["predictions"])
    print(f"{args.split}: {wrong} wrong sums of {len(rows)}; their wrong digits by the pair in the place below: "
          + ", ".join(f"{kind}: {kinds[kind]}" for kind in KINDS))
    for kind, (places, wrong) in near_ties(operands, predicted["predictions"]).items():
        print(f"places 1-6, the carry {'a near tie' if kind == 'near tie' else 'no near tie'}: {wrong} of {places} "
              f"wrong ({wrong / max(places, 1):.1%})")
    for group, (sums, exact) in exact_by_lengths(operands, predicted["predictions"]).items():
        print(f"operands of {group}: {exact} of {sums} sums exact ({exact / max(sums, 1):.1%})")


if __name__ == "__main__":
    main()
