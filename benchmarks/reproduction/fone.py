"""The FoNE suite (Zhou et al.): 6-digit addition and subtraction, decimal addition, and data efficiency.

The headline rows use the ``fone_arithmetic`` task's defaults; the data-efficiency rows train FoNE, the
backbone's own sub-word tokens (``text``) and P10 on 400 to 25,600 examples with one model size, and the
report plots test exact match against the number of examples (FoNE's Fig. 2 direction).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from .common import Row, _minutes, _num, _pct, _result_cell, _test_metric

FONE_SIZES = (400, 1600, 6400, 25600)
# FoNE's Fig. 2 compares FoNE with the sub-word (BPE) and digit-wise tokenizations of the same model.
# Here: the backbone's own BPE trained on the raw text (`text`) and P10 with every digit of a
# 7-digit answer, so that exact match is possible for both.
FONE_BASELINES = {"fone": [], "text": [], "p10": ["--scheme_digits", "7"]}
# The headline rows, all with the task's defaults: row name -> (task options, short name, label in the
# report, the paper's figure: Zhou et al. report 100% on addition and subtraction test sets, and no
# decimal addition).
_PAPER_INTEGER = ">= 99% (100% on its test sets)"
FONE_TASKS = {
    "fone-add6": ((), "add6", "6-digit addition", _PAPER_INTEGER),
    "fone-sub6": (("operation=subtract",), "sub6", "6-digit subtraction (answers of either sign)", _PAPER_INTEGER),
    "fone-sub6-nonneg": (
        ("operation=subtract", "nonnegative=True"),
        "sub6 (a >= b)",
        "6-digit subtraction, larger operand first (answers >= 0)",
        _PAPER_INTEGER,
    ),
    "fone-add3.3": (("int_digits=3", "frac_digits=3"), "add3.3", "decimal addition (3+3 digits)", "-"),
}
# The 6-digit addition headline with other single-token encodings in FoNE's place, all else the task's defaults
# (BitTokens' claim: near-perfect single-step arithmetic).
FONE_ADD6_OTHERS = ("bittokens", "float")
# One backbone, model size and budget for every cell of the data-efficiency table (GPT-2: the table was
# measured before the FoNE recipe moved to Llama).
FONE_EFFICIENCY_SIZE = [
    "--backbone", "gpt2", "--hidden_size", "128", "--num_layers", "4", "--num_heads", "4", "--max_steps", "3000"
]


def fone_rows() -> list[Row]:
    """The headline (the task's defaults, on data drawn with a seed not used while tuning), then the sweep."""
    held_out = ["--data_seed", "1"]
    rows = []
    for name, (options, task, _, _) in FONE_TASKS.items():
        task_options = ("--task_options", *options) if options else ()
        argv = ("--task", "fone_arithmetic", "--number_encoding", "fone", *task_options, *held_out)
        rows.append(Row(name, argv, {"task": task}))
    for encoding in FONE_ADD6_OTHERS:
        argv = ("--task", "fone_arithmetic", "--number_encoding", encoding, *held_out)
        rows.append(Row(f"fone-add6-{encoding}", argv, {"task": "add6", "encoding": encoding}))
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
        "The task's defaults (`hf-numbers train --task fone_arithmetic --number_encoding fone`: Llama, "
        "hidden 256, 4 layers, 6,400 training examples, batch 64), test data drawn with `--data_seed 1` "
        "(the recipe was tuned on seeds 0, 2 and 3). Paper: FoNE reaches >= 99% exact match on 6-digit addition from "
        "6,400 examples and 100% on its test sets.",
        "",
    ]
    lines += [
        "| task | encoding | train examples | steps | test exact match | test R² | wall time | paper |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    headline = [(name, label, "fone", paper) for name, (_, _, label, paper) in FONE_TASKS.items()]
    headline += [(f"fone-add6-{e}", FONE_TASKS["fone-add6"][2], e, "-") for e in FONE_ADD6_OTHERS]
    for name, label, encoding, paper in headline:
        result = results.get(name)
        if result is None or result.get("error"):
            continue
        test = result["metrics"]["test"]
        lines.append(
            f"| {label} | {encoding} | {result['train_size']:,} | {result['steps']:,} | {_pct(test['exact_match'])} | "
            f"{_num(test['r2'])} | {_minutes(result['wall_s'])} | {paper} |"
        )
    lines += ["", "### Data efficiency (FoNE Fig. 2 direction)", ""]
    lines += [
        f"Same model for every cell (`{' '.join(FONE_EFFICIENCY_SIZE)}`), 6-digit addition, test exact "
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
