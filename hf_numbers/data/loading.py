"""Task datasets on disk and for the model: load or generate a task, save it, tokenize it.

``hf-numbers make-data`` saves a task with :func:`save_task`, which records the task's name
next to the data (``TASK_FILE``); :func:`load_task` generates a task (with generator options,
see :func:`parse_task_options`) or loads a saved one, and :func:`recorded_task` reads the
name back (training picks the task's scaler and recommended settings by it).
:func:`tokenize_dataset` turns the ``text`` column into model inputs with scaled numbers.
"""

from __future__ import annotations

import ast
import inspect
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..modeling import NEUTRAL_NUMBER
from ..modeling.parsing import writes_digits
from .checks import load_saved_task
from .collators import completions_of, number_token_masks_of, prompt_lengths_of
from .tasks import TASK_FILE, TASKS, make_task

if TYPE_CHECKING:
    from datasets import DatasetDict


def load_task(
    task: str | None = None,
    *,
    data_dir: str | Path | None = None,
    train_size: int = 4000,
    eval_size: int = 200,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
) -> DatasetDict:
    """The task's splits: loaded from ``data_dir`` (a ``make-data`` folder, checked by
    :func:`~hf_numbers.data.checks.load_saved_task`), or the task ``task`` generated with ``train_size``
    training examples and ``eval_size`` in every other split (a fixed-size task ignores them).
    ``options`` go to the task's generator and win over the sizes and seed.

    Example:
        >>> dd = load_task("lookup", train_size=20, eval_size=5)
        >>> {split: len(data) for split, data in dd.items()}
        {'train': 20, 'validation': 5, 'test': 5, 'test_ood': 5}
    """
    if data_dir:
        return load_saved_task(data_dir)
    if task not in TASKS:
        raise ValueError(f"task {task!r} is unknown; allowed: {', '.join(TASKS)}")
    accepted = inspect.signature(TASKS[task].builder).parameters
    sizes = {"train_size": train_size, "seed": seed}
    sizes |= {name: eval_size for name in accepted if name.endswith("_size") and name != "train_size"}
    return make_task(task, **{k: v for k, v in sizes.items() if k in accepted} | dict(options or {}))


def parse_task_options(items: Sequence[str] | None) -> dict[str, Any]:
    """Task generator options from ``name=value`` strings; values are Python literals or bare words.

    Example:
        >>> parse_task_options(["digits=4", "operation=add", "operands=(2, 3)"])
        {'digits': 4, 'operation': 'add', 'operands': (2, 3)}
    """
    options: dict[str, Any] = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"task_options items must be name=value, got {item!r}")
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            value = text.strip()  # a bare word such as subtract
        options[name.strip()] = value
    return options


def save_task(dataset: DatasetDict, name: str, folder: str | Path) -> None:
    """``save_to_disk`` plus a record of the task's name, which training reads back (its scaler).

    Example:
        >>> save_task(load_task("lookup", train_size=20, eval_size=5), "lookup", "data/lookup")  # doctest: +SKIP
    """
    dataset.save_to_disk(str(folder))
    (Path(folder) / TASK_FILE).write_text(json.dumps({"task": name}))


def recorded_task(data_dir: str | Path) -> str | None:
    """The task name :func:`save_task` recorded in ``data_dir``, or None.

    Example:
        >>> recorded_task("data/lookup")  # doctest: +SKIP
        'lookup'
    """
    record = Path(data_dir) / TASK_FILE
    if not record.is_file():
        return None
    try:
        name = json.loads(record.read_text(encoding="utf-8")).get("task")
    except (ValueError, AttributeError):  # not JSON, not UTF-8, or not an object
        name = None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{record} is not a task record: it should hold {{\"task\": <name>}}, e.g. "
                         f"{{\"task\": \"lookup\"}} (save_task writes it; delete the file to train without one)")
    return name


def task_name(task: str | None, data_dir: str | Path | None) -> str | None:
    """A run's task: the one ``make-data`` recorded in ``data_dir`` (when given and recorded), else ``task``.

    Example:
        >>> task_name("lookup", None)
        'lookup'
    """
    return (recorded_task(data_dir) if data_dir else None) or task


def tokenize_dataset(
    dataset: DatasetDict,
    tokenizer: Any,
    max_length: int,
    end_with_eos: bool = False,
    number_token_mask: bool = False,
) -> DatasetDict:
    """Tokenize ``text`` into ``input_ids``, ``attention_mask`` and ``input_numbers`` (the data's own values).

    Tasks with a ``prompt`` column also get ``prompt_length`` (for ``completion_only``).
    ``end_with_eos`` (causal LMs) ends every example with the end-of-text token, within ``max_length``, so
    that a model learns where an answer stops. ``number_token_mask=True`` adds that column
    (:func:`~hf_numbers.data.number_token_masks`, for ``text_only``). A ``number_output="digits"`` tokenizer
    reads each ``prompt`` with number tokens and writes the rest of its ``text`` as digits
    (``encode_prompts_and_completions``).

    Example:
        >>> tokenized = tokenize_dataset(dd, tokenizer, max_length=128)  # doctest: +SKIP
    """
    eos = tokenizer.eos_token_id if end_with_eos else None
    if end_with_eos and eos is None:
        raise ValueError("end_with_eos=True needs a tokenizer with an eos_token")
    text_length = max_length - 1 if eos is not None else max_length

    digits_out = writes_digits(tokenizer)
    if digits_out and not all("prompt" in data.column_names for data in dataset.values()):
        raise ValueError(
            "number_output='digits' writes a completion's numbers as digits after a prompt read with [NUM]: it needs "
            "a task with a prompt column in every split"
        )
    if digits_out and number_token_mask:
        raise ValueError("number_output='digits' does not take text_only's number_token_mask (completion_only is how "
                         "it trains)")  # fmt: skip

    def encode(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if digits_out:
            completions = completions_of(batch["text"], batch["prompt"])
            out = tokenizer.encode_prompts_and_completions(batch["prompt"], completions, max_length=text_length)
            return _with_eos(out, eos)
        offsets = number_token_mask or "prompt" in batch  # one tokenization serves the masks and prompt lengths
        enc = tokenizer(batch["text"], truncation=True, max_length=text_length, return_offsets_mapping=offsets)
        out = _with_eos({key: enc[key] for key in ("input_ids", "attention_mask", "input_numbers")}, eos)
        if "prompt" in batch:
            out["prompt_length"] = prompt_lengths_of(batch["text"], batch["prompt"], enc["offset_mapping"])
        if number_token_mask:
            masks = number_token_masks_of(tokenizer, batch["text"], enc["input_ids"], enc["offset_mapping"])
            out["number_token_mask"] = [[*row, 0] for row in masks] if eos is not None else masks
        return out

    from datasets import DatasetDict

    columns = ["input_ids", "attention_mask", "input_numbers"]
    if all("prompt" in data.column_names for data in dataset.values()):
        columns.append("prompt_length")
    if number_token_mask:
        columns.append("number_token_mask")
    return DatasetDict(
        {
            split: data.map(encode, batched=True, remove_columns=data.column_names).with_format(columns=columns)
            for split, data in dataset.items()
        }
    )


def _with_eos(rows: dict[str, list[Any]], eos: int | None) -> dict[str, list[Any]]:
    """``rows`` with the end-of-text token ``eos`` after each (None: as they are)."""
    if eos is not None:
        for key, value in (("input_ids", eos), ("attention_mask", 1), ("input_numbers", NEUTRAL_NUMBER)):
            rows[key] = [[*row, value] for row in rows[key]]
    return rows
