"""A run's answers on one split, read from its run folder or from its row's record in ``benchmarks/results``.

A run folder (``runs/...``, not committed) holds ``predictions.json`` and ``training_args.json``; a pretrained row's
record keeps the test split's answers and the data set-up they were drawn with (``benchmarks/reproduction/
pretrained.py``), so the error analyses (``sum_errors.py``, ``product_errors.py``) run on a row long after its folder
is gone:

    python benchmarks/product_errors.py benchmarks/results/reproduce/pretrained/mult3-digits-bos-lora-ntl-seed2.json
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from datasets import DatasetDict

from hf_numbers.data import load_task, parse_task_options


class MissingAnswers(SystemExit):
    """A record that keeps no answers, or not of the split asked for: a script exits with its message, and one that
    reads many records (``issue_bar.py``) can tell it from other exits."""


DATA_FIELDS = ("task", "task_options", "data_seed", "train_size", "eval_size")
"""What draws a run's problems again (``hf_numbers.data.load_task``)."""


def drawn_again(data: dict[str, Any]) -> DatasetDict:
    """The splits of a run's problems drawn again from its :data:`DATA_FIELDS` (a record's ``data``, or the run's
    ``training_args.json``), ``task_options`` as the command line gives them (``name=value``).

    Example:
        >>> drawn_again({"task": "multiplication", "task_options": ["digits=3"], "data_seed": 1,  # doctest: +SKIP
        ...              "train_size": 6400, "eval_size": 500})["test"]
    """
    return load_task(data["task"], seed=data["data_seed"], train_size=data["train_size"], eval_size=data["eval_size"],
                     options=parse_task_options(data.get("task_options")))  # fmt: skip


def read_answers(path: Path, split: str = "test") -> tuple[dict[str, list], dict[str, Any]]:
    """``(answers, data)``: the split's ``predictions`` and ``references``, and the :data:`DATA_FIELDS` of the run.

    ``path`` is a run folder or a record file; a record keeps the test split only, and a record written before
    records kept answers is refused by name.
    """
    if path.is_dir():
        answers = json.loads((path / "predictions.json").read_text())[split]
        arguments = path / "training_args.json"  # absent from an ``hf-numbers evaluate`` folder
        setup = json.loads(arguments.read_text()) if arguments.exists() else {}
        return answers, {key: setup.get(key) for key in DATA_FIELDS}
    record = json.loads(path.read_text())
    if "answers" not in record:
        raise MissingAnswers(f"{path}: this record keeps no answers (it was written before records kept them); pass "
                         "its run folder")
    if split not in record["answers"]:
        raise MissingAnswers(f"{path}: a record keeps the answers of {', '.join(record['answers'])}, not {split!r}")
    return record["answers"][split], record["data"]


def record_answers(run_dir: Path) -> dict[str, Any]:
    """What a row's record keeps of its run folder for :func:`read_answers`: the test answers and the data set-up."""
    answers, data = read_answers(run_dir, "test")
    return {"answers": {"test": answers}, "data": data}
