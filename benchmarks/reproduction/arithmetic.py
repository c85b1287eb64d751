"""The arithmetic suite: xVal's Tables 2 and 3 (Golkar et al.), multiplication and multi-operand expressions.

Every (task, encoding) cell is one row at one model size and step budget; the report gives R² beside the
paper's, then R² of log values, share within 1%, exact match, invalid predictions and wall time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import Row, _minutes, _num, _pct, _result_cell

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
