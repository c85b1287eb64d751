"""What the speed benchmarks share: their common options, clocks, alternating timing rounds, the results table.

The number model and the plain model are timed in alternating rounds (first one, then the
other first) and the median round is kept, so that drifts of a busy machine hit both alike.
By default one thread runs and the process's CPU time is the clock, which other jobs on a
shared machine hardly disturb; ``--clock wall --threads 0`` gives elapsed time with torch's
default threads instead.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
import transformers

from hf_numbers import NUMBER_ENCODINGS_REGISTRY

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
WITH_MODULE = [name for name, cls in NUMBER_ENCODINGS_REGISTRY.items() if cls.has_number_module]
"""The encodings with a number module: the text baselines are the plain backbone, nothing to compare."""


def add_common_arguments(parser: argparse.ArgumentParser, output: Path) -> None:
    """Model size (``--hidden``, ``--layers``, ``--heads``, ``--vocab``), ``--rounds``, ``--encodings`` (those
    with a number module), ``--threads``, ``--clock`` and ``--output`` (default ``output``)."""
    parser.add_argument("--hidden", type=int, default=128, help="hidden size")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8000, help="vocabulary size, number tokens included")
    parser.add_argument("--rounds", type=int, default=6, help="alternating timing rounds per model pair")
    parser.add_argument("--encodings", nargs="+", default=WITH_MODULE, choices=WITH_MODULE)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="cpu",
        help="cpu: this process's CPU time (steady on a shared machine; meant for --threads 1); wall: elapsed time",
    )
    parser.add_argument("--output", type=Path, default=output)


def alternating_rounds(measurements: Sequence[Callable[[], float]], rounds: int) -> list[list[float]]:
    """Every result of each measurement over ``rounds`` rounds; every other round runs them in reverse order."""
    results: list[list[float]] = [[] for _ in measurements]
    order = list(range(len(measurements)))
    for round_index in range(rounds):
        for index in order if round_index % 2 == 0 else order[::-1]:
            results[index].append(measurements[index]())
    return results


def alternating_medians(measurements: Sequence[Callable[[], float]], rounds: int) -> list[float]:
    """The median result of each measurement over ``rounds`` alternating rounds (:func:`alternating_rounds`)."""
    return [statistics.median(values) for values in alternating_rounds(measurements, rounds)]


def ratio_spread(numerators: Sequence[float], denominators: Sequence[float]) -> tuple[float, float, float]:
    """Median and quartiles of the ratios of the two measurements of each round: a drift of a busy machine
    between rounds cancels in each ratio, which the ratio of the two medians would not cancel."""
    ratios = [a / b for a, b in zip(numerators, denominators)]
    if len(ratios) < 2:
        return ratios[0], ratios[0], ratios[0]
    low, _, high = statistics.quantiles(ratios, n=4, method="inclusive")
    return statistics.median(ratios), low, high


def write_table(args: argparse.Namespace, title: str, description: str, columns: Sequence[str],
                rows: Sequence[str]) -> str:
    """Write the markdown results (title, description, environment, command, table) to ``args.output``."""
    environment = (
        f"torch {torch.__version__}, transformers {transformers.__version__}, threads: {torch.get_num_threads()}, "
        f"{platform.processor() or platform.machine()}."
    )
    script = f"benchmarks/{Path(sys.argv[0]).name}"
    header = [
        f"# {title}",
        "",
        f"{description} {environment}",
        "",
        f"Command: `{' '.join(['python', script, *sys.argv[1:]])}`",
        "",
        "| " + " | ".join(columns) + " |",
        "| " + " | ".join("---" if index < 2 else "---:" for index in range(len(columns))) + " |",
    ]
    table = "\n".join([*header, *rows]) + "\n"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(table)
    return table
