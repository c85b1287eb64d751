"""Two set-ups of the pretrained suite on the same test problems, over their training seeds: is a gap larger than
the draw of the problems explains?

A row's record keeps its test answers (``run_answers.py``). Per problem, a set-up scores the mean over its seeds of
the task's measure (sums: exact; products: within 1%; temperatures: squared error); the difference of the two
set-ups' means gets a 95% interval from resampling the problems, both set-ups on the same resampled problems
(paired, so that easy and hard problems cancel). The seeds' own spread is printed beside it: with two or three
seeds it is a large part of the noise, and the interval does not hold it. The temperatures' problems are not drawn
one by one: they are windows every few hours of a few stretches of two cities' series (the split's weeks), and a warm
spell near a decade makes a dozen neighbours go wrong together, so for them a second interval resamples whole
stretches, the unit the split draws (:func:`series_stretches`).

    python benchmarks/compare_rows.py mult3 digits-below-bos-lora-ntl-look2-conf-second text-bos-lora-ntl
    python benchmarks/compare_rows.py mult3 digits-below-bos-lora-ntl-look2-conf-second text-bos-lora-ntl --seeds 0
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from run_answers import drawn_again, read_answers

from hf_numbers.evaluation.number_metrics import parse_predictions, parse_references, within_relative

RECORDS = Path(__file__).resolve().parent / "results" / "reproduce" / "pretrained"
MEASURES = {
    "add6": ("exact", lambda values, refs: (values == refs).astype(float)),
    "mult3": ("within 1%", lambda values, refs: within_relative(values, refs).astype(float)),
    "temp": ("squared error", lambda values, refs: (values - refs) ** 2),
}
"""The suite's task -> the name and per-problem form of the measure its tables lead with, on the parsed answers (an
invalid answer is NaN: wrong, or left out of the squared errors as the MSE leaves it out)."""


def seed_records(
    task: str, setup: str, records: Path = RECORDS, only: Collection[int] | None = None
) -> dict[int, Path]:
    """The record of every seed of ``setup`` (of the seeds in ``only``, where given; the unnamed row is seed 0), by
    seed; none found is a ``FileNotFoundError`` naming the rows, as is a seed of ``only`` not found.

    Example:
        >>> seed_records("add6", "text-bos-lora-ntl", only=[0, 2])  # doctest: +SKIP
        {0: PosixPath('.../add6-text-bos-lora-ntl.json'), 2: PosixPath('.../add6-text-bos-lora-ntl-seed2.json')}
    """
    seeds = {}
    for path in records.glob(f"{task}-{setup}*.json"):
        rest = path.stem.removeprefix(f"{task}-{setup}")
        if not rest or rest.startswith("-seed") and rest[5:].isdigit():  # else another set-up starting with this one
            seed = int(rest[5:] or 0)
            if only is None or seed in only:
                seeds[seed] = path
    missing = sorted(set(only or ()) - set(seeds))
    if not seeds or missing:
        which = f" of seed {', '.join(map(str, missing))}" if seeds else " (or its seeds)"
        raise FileNotFoundError(f"no record of {task}-{setup}{which} in {records}")
    return dict(sorted(seeds.items()))


def seed_scores(
    task: str, setup: str, records: Path = RECORDS, only: Collection[int] | None = None
) -> dict[str, np.ndarray]:
    """``{row name: per-problem scores}`` of every seed of ``setup`` (:func:`seed_records`); a record that keeps no
    answers is refused by name."""
    paths = seed_records(task, setup, records, only).values()
    return {path.stem: scores_of(task, read_answers(path)[0]) for path in paths}


def scores_of(task: str, answers: dict[str, list]) -> np.ndarray:
    """The per-problem scores of one row's test ``answers`` (:func:`read_answers`) by ``task``'s measure."""
    values, _ = parse_predictions(answers["predictions"])
    return MEASURES[task][1](values, parse_references(answers["references"]))


def same_problems(rows: dict[Path, dict[str, list]]) -> None:
    """Refuse, naming the two records, rows (record -> its test answers) whose answers are not of the same problems
    (another data set-up): a paired difference of those would mean nothing."""
    (first, answers), *rest = rows.items()
    for path, other in rest:
        if other["references"] != answers["references"]:
            raise SystemExit(f"{path} and {first} hold answers to different test problems (their data set-ups differ)")


def series_stretches(data: dict[str, Any]) -> np.ndarray:
    """Per test problem of the temperature task built as ``data`` says (a record's data set-up), the stretch of the
    series it is a window of (0, 1, ...): a new stretch where the city changes or a window does not start one stride
    (the smallest step between two of the city's windows) after the one before, i.e. at each of the split's blocks.

    Example:
        >>> series_stretches({"task": "temperature", "task_options": ["window=8"], "data_seed": 1,  # doctest: +SKIP
        ...                   "train_size": 6400, "eval_size": 500})[:30]
        array([0, 0, ..., 0, 1, 1, 1])
    """
    test = drawn_again(data)["test"]
    cities, starts = np.asarray(test["city"]), np.asarray(test["start_index"])
    same_city = cities[1:] == cities[:-1]
    steps = np.diff(starts)
    forward = steps[same_city & (steps > 0)]
    stride = forward.min() if forward.size else 0
    return np.concatenate([[0], np.cumsum(~same_city | (steps != stride))])


GROUPS = {"temp": ("stretches of the series", series_stretches)}
"""The tasks whose problems are not drawn one by one -> what to resample whole instead, and how to find it from a
record's data set-up."""


def paired_interval(
    first: np.ndarray, second: np.ndarray, draws: int = 2000, seed: int = 0, groups: np.ndarray | None = None
) -> tuple[float, float]:
    """The 95% interval of ``mean(first) - mean(second)`` over the problems resampled with replacement, the same
    problems for both; with ``groups`` (a label per problem), whole groups resampled instead (a cluster bootstrap).

    Example:
        >>> low, high = paired_interval(np.ones(100), np.zeros(100))
        >>> low, high
        (1.0, 1.0)
    """
    if first.shape != second.shape:
        raise ValueError(f"the two set-ups' answers are of different problems: {first.shape} vs {second.shape}")
    labels = np.arange(len(first)) if groups is None else np.unique(groups, return_inverse=True)[1]
    if labels.shape != first.shape:
        raise ValueError(f"{len(labels)} group labels for {len(first)} problems")
    units = int(labels.max()) + 1
    picks = np.random.default_rng(seed).integers(0, units, size=(draws, units))
    taken = np.stack([np.bincount(row, minlength=units) for row in picks])  # (draws, units): times each unit drawn

    def means(scores: np.ndarray) -> np.ndarray:  # each draw's mean over its problems, NaN (no answer) left out
        valid = ~np.isnan(scores)
        sums = np.bincount(labels, weights=np.where(valid, scores, 0.0), minlength=units)
        return taken @ sums / (taken @ np.bincount(labels, weights=valid, minlength=units))

    low, high = np.quantile(means(first) - means(second), [0.025, 0.975])
    return float(low), float(high)


@dataclass
class Comparison:
    """Two set-ups on one task: each seed's mean score, and the difference of the seeds' means with its 95% intervals
    (over the problems; for a task of :data:`GROUPS`, also over its groups: ``(unit, count, low, high)``)."""

    seed_means: dict[str, dict[int, float]]
    rows: dict[str, dict[int, str]]
    difference: float
    problems: tuple[float, float]
    groups: tuple[str, int, float, float] | None = None


def compare(
    task: str, setups: tuple[str, str], records: Path = RECORDS, seeds: Collection[int] | None = None
) -> Comparison:
    """The :class:`Comparison` of ``setups`` on ``task`` from their records (each record read once), over ``seeds``
    (default: every seed each has); records of different problems are refused by name.

    Example:
        >>> round(compare("temp", ("digits-bos-lora-ntl-look2-conf", "text-bos-lora-ntl"), seeds=[0, 2]).difference, 4)
        0.0151
    """
    found = {setup: seed_records(task, setup, records, seeds) for setup in setups}
    read = {setup: {seed: (path, *read_answers(path)) for seed, path in paths.items()}
            for setup, paths in found.items()}  # fmt: skip
    same_problems({path: answers for rows in read.values() for path, answers, _ in rows.values()})
    scores = {setup: {seed: scores_of(task, answers) for seed, (_, answers, _) in rows.items()}
              for setup, rows in read.items()}  # fmt: skip
    means = [np.mean(np.stack(list(scores[setup].values())), axis=0) for setup in setups]
    comparison = Comparison(
        seed_means={setup: {seed: float(np.nanmean(values)) for seed, values in by_seed.items()}
                    for setup, by_seed in scores.items()},  # fmt: skip
        rows={setup: {seed: path.stem for seed, (path, _, _) in rows.items()} for setup, rows in read.items()},
        difference=float(np.nanmean(means[0]) - np.nanmean(means[1])),
        problems=paired_interval(*means),
    )
    if task in GROUPS:
        unit, find = GROUPS[task]
        _, _, data = next(iter(read[setups[0]].values()))
        groups = find(data)
        if len(groups) != len(means[0]):
            raise SystemExit(f"the records hold {len(means[0])} test answers, the task as they name it {len(groups)} "
                             "problems")  # fmt: skip
        comparison.groups = (unit, int(groups.max()) + 1, *paired_interval(*means, groups=groups))
    return comparison


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", choices=sorted(MEASURES))
    parser.add_argument("setups", nargs=2, help="two set-ups of the suite (the rows' names without task and seed)")
    parser.add_argument("--records", type=Path, default=RECORDS)
    parser.add_argument("--seeds", type=int, nargs="+", help="only these training seeds (0: the row without -seed)")
    args = parser.parse_args(argv)
    try:
        result = compare(args.task, tuple(args.setups), args.records, args.seeds)
    except FileNotFoundError as error:
        raise SystemExit(str(error)) from None
    name = MEASURES[args.task][0]
    for setup, means in result.seed_means.items():
        per_seed = ", ".join(f"{result.rows[setup][seed]}: {mean:.4f}" for seed, mean in means.items())
        print(f"{setup}: {name} by seed: {per_seed}")
    low, high = result.problems
    print(f"difference of the seeds' means: {result.difference:+.4f} (95% over the problems: {low:+.4f} to "
          f"{high:+.4f})")  # fmt: skip
    if result.groups is not None:
        unit, count, low, high = result.groups
        print(f"95% over the {count} {unit}, each resampled whole: {low:+.4f} to {high:+.4f}")


if __name__ == "__main__":
    main()
