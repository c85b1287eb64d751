"""The BitTokens suite (Kreitner, Hager et al., arXiv 2510.06824): MinMax, Interval and division.

Every (task, encoding) cell is one row with the tasks' defaults and one model size and budget; the
report gives test exact match and log-sMAPE (the paper scores division with log-sMAPE, MinMax with
exact match and Interval with class accuracy, which is exact match of the interval's index here).
The encodings are the paper's comparison at CPU scale: BitTokens, xVal, FoNE, the backbone's own
sub-word tokens (``text``) and one token per digit (``p10``, the paper's single-digit baseline).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import Row, _minutes, _num, _pct, _result_cell

BITTOKENS_ENCODINGS = ("bittokens", "bittokens-zeropad", "xval", "fone", "text", "p10")
"""The columns: an encoding's name, or ``bittokens-zeropad``: BitTokens with the paper's input
(``--bittokens_embedding zero_pad``: the bits themselves as the embedding) beside ours (added to ``[NUM]``)."""
VARIANTS = {"bittokens-zeropad": ("--number_encoding", "bittokens", "--bittokens_embedding", "zero_pad")}
BITTOKENS_TASKS = {"minmax": "MinMax", "interval": "Interval", "division": "division (6 significant digits)"}
# One model size and budget for every cell (the paper trained far longer on far more data).
BITTOKENS_SIZE = [
    "--hidden_size", "128", "--num_layers", "4", "--num_heads", "4", "--max_steps", "2000",
    "--train_size", "10000", "--eval_size", "1000", "--per_device_train_batch_size", "64",
]  # fmt: skip


def bittokens_rows() -> list[Row]:
    """One row per task and encoding, on data drawn with ``--data_seed 1``."""
    return [
        Row(
            f"{task}-{encoding}",
            ("--task", task, *VARIANTS.get(encoding, ("--number_encoding", encoding)), *BITTOKENS_SIZE,
             "--data_seed", "1"),
            {"task": task, "encoding": encoding},
        )
        for task in BITTOKENS_TASKS
        for encoding in BITTOKENS_ENCODINGS
    ]


def bittokens_report(results: dict[str, dict[str, Any]], out: Path) -> list[str]:
    """Markdown of the BitTokens suite: test exact match and log-sMAPE of every (task, encoding)."""
    lines = ["## BitTokens: MinMax, Interval and division (Kreitner, Hager et al.)", ""]
    lines += [
        f"Same model for every cell (`{' '.join(BITTOKENS_SIZE)}`), the tasks' defaults, test data drawn with "
        "`--data_seed 1`. Cells: test exact match / log-sMAPE (1: all 15 significant digits right). The "
        "paper's figures, from a far larger model and budget, are on the results page (docs/results/bittokens.md).",
        "",
        "| task | " + " | ".join(BITTOKENS_ENCODINGS) + " |",
        "|---|" + "---:|" * len(BITTOKENS_ENCODINGS),
    ]
    for task, label in BITTOKENS_TASKS.items():
        cells = []
        for encoding in BITTOKENS_ENCODINGS:
            result = results.get(f"{task}-{encoding}")
            cells.append(f"{_result_cell(result, 'exact_match', _pct)} / {_result_cell(result, 'log_smape', _num)}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    wall = sum(r["wall_s"] for r in results.values() if "wall_s" in r)
    lines += ["", f"Wall time of the rows: {_minutes(wall)}."]
    return lines
