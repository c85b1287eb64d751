"""Checks that data can be trained on, made before training: a clear ``ValueError`` instead of a
failure deep inside ``datasets`` or one that only shows after the last training step.

Example:
    >>> load_saved_task("/nonexistent")
    Traceback (most recent call last):
    ...
    ValueError: data_dir '/nonexistent' is not a folder (write one with `hf-numbers make-data`)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..modeling import find_numbers, get_encoding
from ..modeling.parsing import writes_digits
from .collators import completions_of
from .splits import CORE_FEATURES, WORD_FEATURES

if TYPE_CHECKING:
    from datasets import Dataset, DatasetDict

Offsets = Sequence[Sequence[Sequence[int]]]  # per text, its tokens' (start, end) characters
_ROWS = "data rows count from 1, a CSV header not counted"


def _empty_splits(folder: Path) -> list[str]:
    """Splits that ``save_to_disk`` wrote without any rows (``datasets`` cannot load those back)."""
    empty = []
    for state in sorted(folder.glob("*/state.json")):
        try:
            if json.loads(state.read_text()).get("_data_files") == []:
                empty.append(state.parent.name)
        except (OSError, ValueError, AttributeError):
            continue  # not a split datasets wrote; load_from_disk reports it
    return empty


def load_saved_task(path: str | Path) -> DatasetDict:
    """A task saved by ``hf-numbers make-data``, checked with :func:`check_task_splits`.

    Example:
        >>> dd = load_saved_task("data/lookup")  # doctest: +SKIP
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"data_dir {str(folder)!r} is not a folder (write one with `hf-numbers make-data`)")
    empty = _empty_splits(folder)
    if empty:
        raise ValueError(f"data_dir {folder}: the split(s) {', '.join(empty)} hold no examples")
    from datasets import DatasetDict, load_from_disk

    try:
        dataset = load_from_disk(str(folder))
    except (OSError, TypeError, KeyError, IndexError, ValueError) as error:
        raise ValueError(
            f"data_dir {folder} is not a dataset saved by `hf-numbers make-data` ({type(error).__name__}: {error})"
        ) from error
    if not isinstance(dataset, DatasetDict):
        raise ValueError(
            f"data_dir {folder} holds a single {type(dataset).__name__}, not a DatasetDict of splits (train, "
            "validation, test, ...); save one with `hf-numbers make-data` or DatasetDict(...).save_to_disk"
        )
    check_task_splits(dataset, str(folder))
    return dataset


def check_task_splits(dataset: DatasetDict, source: str) -> None:
    """Raise ``ValueError`` unless ``dataset`` has a train split holding numbers and every split has rows
    and the columns of a number answer (``CORE_FEATURES``) or of a word answer (``WORD_FEATURES``), and every
    number answer can be scored (:func:`check_number_answers`): before training, not after it.

    Example:
        >>> from datasets import Dataset, DatasetDict
        >>> rows = {"text": ["no digits"], "prompt": ["no"], "answer": [1.0], "answer_text": ["1"],
        ...         "numbers": [[]], "answer_index": [0]}
        >>> check_task_splits(DatasetDict({"train": Dataset.from_dict(rows)}), "mine")
        Traceback (most recent call last):
        ...
        ValueError: mine: the train split holds no numbers, so a number-aware model has nothing to learn
    """
    if "train" not in dataset:
        raise ValueError(f"{source} has no train split (its splits: {', '.join(dataset) or 'none'})")
    for split, data in dataset.items():
        core = WORD_FEATURES if "word" in data.column_names else CORE_FEATURES
        missing = [column for column in core if column not in data.column_names]
        if missing:
            raise ValueError(
                f"{source}: split {split!r} lacks the column(s) {', '.join(missing)}; every split needs "
                f"{', '.join(CORE_FEATURES)} (a number answer) or {', '.join(WORD_FEATURES)} (a word answer), "
                "as `hf-numbers make-data` writes them"
            )
        if len(data) == 0:
            raise ValueError(f"{source}: split {split!r} holds no examples")
    if not any(len(row) for row in dataset["train"]["numbers"]):
        raise ValueError(f"{source}: the train split holds no numbers, so a number-aware model has nothing to learn")
    for split, data in dataset.items():
        if "word" not in data.column_names:
            check_number_answers(data, f"{source}, split {split!r}")


def check_number_answers(data: Dataset, source: str) -> None:
    """Raise ``ValueError``, naming the row and value, unless every row's answer can be scored after training: a
    finite ``answer``, an ``answer_text`` with at most 15 decimals, an ``answer_index`` among the row's numbers.

    Example:
        >>> from datasets import Dataset
        >>> rows = {"answer": [2.0], "answer_text": ["2"], "numbers": [[1.0, 2.0]], "answer_index": [2]}
        >>> check_number_answers(Dataset.from_dict(rows), "mine, split 'test'")
        Traceback (most recent call last):
        ...
        ValueError: mine, split 'test', row 1: answer_index 2 is not among the row's 2 numbers (allowed: 0 to 1)
    """
    columns = zip(data["answer"], data["answer_text"], data["numbers"], data["answer_index"])
    for row, (answer, text, numbers, index) in enumerate(columns, start=1):
        where = f"{source}, row {row}"
        if not isinstance(answer, (int, float)) or not np.isfinite(answer):
            raise ValueError(f"{where}: answer {answer!r} is not a finite number")
        if not isinstance(text, str) or len(text.partition(".")[2]) > 15:
            raise ValueError(f"{where}: answer_text {text!r} is not the answer as written with at most 15 decimals")
        count = len(numbers or [])
        if not isinstance(index, int) or not 0 <= index < count:
            raise ValueError(
                f"{where}: answer_index {index!r} is not among the row's {count} numbers (allowed: 0 to {count - 1})"
            )


def check_text_column(rows: Dataset, column: str, source: str) -> int:
    """Raise ``ValueError`` unless ``column`` of ``rows`` (the file ``source``) holds text in some row; return how
    many of its rows are empty. A missing column, a cell that is not text (a number a CSV reader parsed) and a
    column empty in every row are errors naming the file, row and columns.

    Example:
        >>> from datasets import Dataset
        >>> check_text_column(Dataset.from_dict({"id": [1, 2], "text": ["", None]}), "text", "days.csv")
        Traceback (most recent call last):
        ...
        ValueError: days.csv: column 'text' is empty in all 2 rows, so there is no text to train on; ...
    """
    columns = ", ".join(rows.column_names)
    if column not in rows.column_names:
        raise ValueError(f"{source} has no column {column!r} (--text_column_name); its columns: {columns}")
    if len(rows) == 0:
        raise ValueError(f"{source} holds no rows")
    cells = rows[column]
    for row, cell in enumerate(cells):
        if cell is not None and not isinstance(cell, str):
            raise ValueError(
                f"{source}, row {row + 1} ({_ROWS}), column {column!r}: holds {cell!r} ({type(cell).__name__}), "
                f"not text; --text_column_name must name a column of text (columns: {columns})"
            )
    empty = sum(cell is None or not cell.strip() for cell in cells)
    if empty == len(cells):
        raise ValueError(
            f"{source}: column {column!r} is empty in all {empty} rows, so there is no text to train on; "
            f"--text_column_name names the text column (columns: {columns})"
        )
    return empty


def check_text_numbers(
    files: Sequence[tuple[str, Sequence[str], Sequence[int]]],
    column: str,
    number_encoding: str,
    hidden_size: int,
    fields: Mapping[str, Any] | None = None,
) -> None:
    """Raise ``ValueError`` naming the file, row, column, number and range for the first number of ``files`` that
    ``number_encoding`` cannot represent (its ``data_out_of_range``), before a model is built.

    ``files`` are ``(source, texts, rows)`` of every split (0-based rows). ``fields`` are the config fields
    already fixed (a saved model's); the others count as fitted to the data, for a model of width ``hidden_size``.

    Example:
        >>> check_text_numbers([("days.csv", ["low 3 C", "low 1e300 C"], [0, 1])], "text", "float", hidden_size=32)
        Traceback (most recent call last):
        ...
        ValueError: days.csv, row 2 (...), column 'text': the number 1e300 (1e+300) cannot be represented by ...
    """
    encoding = get_encoding(number_encoding)
    found = [
        (source, row, text[number.start : number.end], number.value)
        for source, texts, rows in files
        for text, row in zip(texts, rows, strict=True)
        for number in find_numbers(text)
    ]
    if not found:
        return
    out, allowed = encoding.data_out_of_range(np.array([value for *_, value in found]), fields or {}, hidden_size)
    if out.any():
        source, row, literal, value = found[int(np.flatnonzero(out)[0])]
        raise ValueError(
            f"{source}, row {row + 1} ({_ROWS}), column {column!r}: the number {literal} ({value!r}) cannot be "
            f"represented by the {encoding.name!r} encoding, which takes {allowed}; {int(out.sum())} number(s) of "
            "the data are out of that range. Correct or remove those rows, or choose another number encoding"
        )


def check_answers_tokenized(
    dataset: DatasetDict, tokenized: DatasetDict, tokenizer: Any, max_length: int, end_with_eos: bool = False
) -> None:
    """Raise ``ValueError`` when the tokenized training texts hold no number, or when an answer to be scored
    (number ``answer_index`` of its text) was cut off by ``max_length``: before training, not after it.

    A text encoding's numbers count when all their characters survive truncation (as
    :func:`~hf_numbers.data.tokenize_dataset` truncates), and its answers must pass :func:`check_answer_boundary`.
    Splits whose answer is a word have no ``answer_index`` and are not checked here. With a
    ``number_output="digits"`` tokenizer every text's prompt and answer must fit whole.

    Example:
        >>> check_answers_tokenized(dataset, tokenized, tokenizer, 128)  # doctest: +SKIP
    """
    if writes_digits(tokenizer):
        _check_completions_kept(dataset, tokenizer, max_length - int(end_with_eos))
        return
    for split in tokenized:
        texts = dataset[split]["text"]
        offsets = None  # a text encoding's token offsets, truncated as tokenize_dataset truncates
        if not tokenizer.num_token_ids:
            truncated = {"truncation": True, "max_length": max_length - int(end_with_eos)}
            offsets = tokenizer(list(texts), return_offsets_mapping=True, **truncated)["offset_mapping"]
        counts = _numbers_kept(texts, tokenized[split]["input_ids"], tokenizer, offsets)
        if split == "train":
            if not any(counts):
                raise ValueError("the tokenized train split holds no number, so there is nothing to learn")
            continue
        if "answer_index" not in dataset[split].column_names:
            continue
        for row, (count, index) in enumerate(zip(counts, dataset[split]["answer_index"])):
            if index >= count:
                raise ValueError(
                    f"{split} example {row}: its answer is number {index} of the text, but the tokenized text "
                    f"holds {count} number(s) (max_length {max_length}); raise --max_length or fix the data"
                )
        if offsets is not None:  # a text encoding: its answers must not share a token with the prompt
            starts = [find_numbers(t)[i].start for t, i in zip(texts, dataset[split]["answer_index"])]
            check_answer_boundary(texts, starts, offsets, split)


def check_answer_boundary(
    texts: Sequence[str], answer_starts: Sequence[int], offsets: Offsets, split: str = ""
) -> None:
    """Raise ``ValueError`` when an answer's first token also holds non-blank text before the answer.

    A byte-level BPE learns ``=-`` from ``m=-2.5``: the prompt would then end before ``=`` only for negative
    answers, giving the sign away (docs/text-baselines.md). ``offsets`` are each text's ``offset_mapping``.

    Example:
        >>> check_answer_boundary(["x = 15"], [4], [[(0, 1), (1, 3), (3, 6)]])  # " 15": a space joined, allowed
        >>> check_answer_boundary(["m=-2.5"], [2], [[(0, 1), (1, 3), (3, 4), (4, 6)]])
        Traceback (most recent call last):
        ...
        ValueError: example 0: the answer's first token also holds '=' of the text before the answer ('=-'), ...
    """
    where = f"{split} " if split else ""
    for row, (text, start, tokens) in enumerate(zip(texts, answer_starts, offsets, strict=True)):
        token_start = next((first for first, end in tokens if end > start), start)
        joined = text[token_start:start]
        if joined.strip():
            raise ValueError(
                f"{where}example {row}: the answer's first token also holds {joined!r} of the text before the "
                f"answer ({text[token_start : start + 1]!r}), so what the model is given would depend on the "
                "answer. Separate the answer from the text before it (a space), or use a number encoding, whose "
                "number tokens are never joined to text."
            )


def _check_completions_kept(dataset: DatasetDict, tokenizer: Any, length: int) -> None:
    """``number_output="digits"``: every completion (the answer's digits) fits within ``length`` tokens."""
    for split, data in dataset.items():
        completions = completions_of(data["text"], data["prompt"])
        rows = tokenizer.encode_prompts_and_completions(data["prompt"], completions)["input_ids"]
        for row, ids in enumerate(rows):
            if len(ids) > length:
                raise ValueError(
                    f"{split} example {row}: its prompt and answer are {len(ids)} tokens, more than max_length "
                    f"allows ({length}); raise --max_length or fix the data"
                )


def _numbers_kept(
    texts: Sequence[str], rows: Sequence[Sequence[int]], tokenizer: Any, offsets: Offsets | None
) -> list[int]:
    """How many numbers of each text its tokenized row holds: its number tokens, or for a text encoding the
    numbers inside its truncated ``offsets``."""
    if offsets is None:
        ids = set(tokenizer.num_token_ids)
        return [sum(token in ids for token in row) for row in rows]
    ends = [max((end for _, end in row), default=0) for row in offsets]
    return [sum(number.end <= end for number in find_numbers(text)) for text, end in zip(texts, ends)]
