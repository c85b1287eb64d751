"""Two set-ups of the pretrained suite on the same test problems, over their training seeds: is a gap larger than
the draw of the problems explains?

A row's record keeps its test answers (``run_answers.py``). Per problem, a set-up scores the mean over its seeds of
the task's measure (sums: exact; products: within 1%; temperatures: squared error); the difference of the two
set-ups' means gets a 95% interval from resampling the problems, both set-ups on the same resampled problems
(paired, so that easy and hard problems cancel). The seeds' own spread is printed beside it: with two or three
seeds it is a large part of the noise, and the interval does not hold it.

    python benchmarks/compare_rows.py mult3 digits-below-bos-lora-ntl-look2-conf-second text-bos-lora-ntl
    python benchmarks/compare_rows.py mult3 digits-below-bos-lora-ntl-look2-conf-second text-bos-lora-ntl --seeds 0
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from pathlib import Path

import numpy as np
from run_answers import read_answers

from hf_numbers.evaluation.number_metrics import parse_predictions, parse_references, within_relative

RECORDS = Path(__file__).resolve().parent / "results" / "reproduce" / "pretrained"
MEASURES = {
    "add6": ("exact", lambda values, refs: (values == refs).astype(float)),
    "mult3": ("within 1%", lambda values, refs: within_relative(values, refs).astype(float)),
    "temp": ("squared error", lambda values, refs: (values - refs) ** 2),
}
"""The suite's task -> the name and per-problem form of the measure its tables lead with, on the parsed answers (an
invalid answer is NaN: wrong, or left out of the squared errors as the MSE leaves it out)."""


def seed_scores(
    task: str, setup: str, records: Path = RECORDS, only: Collection[int] | None = None
) -> dict[str, np.ndarray]:
    """``{row name: per-problem scores}`` of every seed of ``setup`` (of the seeds in ``only``, where given; the
    unnamed row is seed 0); a record that keeps no answers is refused by name."""
    measure = MEASURES[task][1]
    seeds = {}
    for path in records.glob(f"{task}-{setup}*.json"):
        rest = path.stem.removeprefix(f"{task}-{setup}")
        if not rest or rest.startswith("-seed") and rest[5:].isdigit():  # else another set-up starting with this one
            seed = int(rest[5:] or 0)
            if only is None or seed in only:
                seeds[seed] = path
    found = {}
    for _, path in sorted(seeds.items()):
        answers, _ = read_answers(path)
        values, _ = parse_predictions(answers["predictions"])
        found[path.stem] = measure(values, parse_references(answers["references"]))
    if not found:
        raise SystemExit(f"no record of {task}-{setup} (or its seeds) in {records}")
    return found


def paired_interval(first: np.ndarray, second: np.ndarray, draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The 95% interval of ``mean(first) - mean(second)`` over the problems resampled with replacement, the same
    problems for both.

    Example:
        >>> low, high = paired_interval(np.ones(100), np.zeros(100))
        >>> low, high
        (1.0, 1.0)
    """
    if first.shape != second.shape:
        raise ValueError(f"the two set-ups' answers are of different problems: {first.shape} vs {second.shape}")
    picks = np.random.default_rng(seed).integers(0, len(first), size=(draws, len(first)))
    differences = np.nanmean(first[picks], axis=1) - np.nanmean(second[picks], axis=1)
    low, high = np.quantile(differences, [0.025, 0.975])
    return float(low), float(high)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", choices=sorted(MEASURES))
    parser.add_argument("setups", nargs=2, help="two set-ups of the suite (the rows' names without task and seed)")
    parser.add_argument("--records", type=Path, default=RECORDS)
    parser.add_argument("--seeds", type=int, nargs="+", help="only these training seeds (0: the row without -seed)")
    args = parser.parse_args(argv)
    name = MEASURES[args.task][0]
    means = []
    for setup in args.setups:
        seeds = seed_scores(args.task, setup, args.records, args.seeds)
        per_seed = ", ".join(f"{row}: {np.nanmean(scores):.4f}" for row, scores in seeds.items())
        print(f"{setup}: {name} by seed: {per_seed}")
        means.append(np.mean(np.stack(list(seeds.values())), axis=0))
    low, high = paired_interval(*means)
    print(
        f"difference of the seeds' means: {np.nanmean(means[0]) - np.nanmean(means[1]):+.4f} (95% over the "
        f"problems: {low:+.4f} to {high:+.4f})"
    )


if __name__ == "__main__":
    main()
