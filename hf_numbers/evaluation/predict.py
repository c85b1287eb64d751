"""Predict the answer number of task examples (the ``answer_index``-th number of each ``text``) with a Number* model.

A number encoding's value comes from the number head where the token head picks a number token; a text
encoding's is the number in the text the model generates (causal) or fills in (masked). When a prediction
is valid, and why an answer may not share a token with the text before it: docs/training.md, "Evaluation
and metrics", and docs/text-baselines.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from ..data.checks import check_answer_boundary
from ..data.collators import prompt_lengths_of
from ..modeling import NEUTRAL_NUMBER, find_numbers, get_encoding
from ..modeling.parsing import writes_digits

TEXT_ANSWER_TOKENS = 24
"""New tokens generated for a ``text`` model's answer (``format_number`` writes a float64 in 24 characters at most)."""


def _answer_positions(is_num: torch.Tensor, answer_indices: Sequence[int]) -> torch.Tensor:
    counts = is_num.cumsum(dim=1) - 1  # index of each number token among the row's numbers
    positions = []
    for row, index in enumerate(answer_indices):
        hits = torch.nonzero(is_num[row] & (counts[row] == index)).flatten()
        if len(hits) == 0:
            raise ValueError(
                f"example {row}: its answer (number {index}) is not in the tokenized text; was it truncated? "
                "Raise max_length."
            )
        positions.append(int(hits[0]))
    return torch.tensor(positions)


@torch.no_grad()
def predict_answers(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    answer_indices: Sequence[int],
    *,
    batch_size: int = 64,
    max_length: int | None = None,
) -> list[float | None]:
    """The model's value for each example's answer number (in the data's units), or None where it predicts none.

    ``ValueError`` when an answer is missing from the tokenized text (raise ``max_length``) or, for a text
    encoding, shares its first token with the text before it.

    Example:
        >>> split = dataset["test"]  # doctest: +SKIP
        >>> preds = predict_answers(model, tokenizer, split["text"], split["answer_index"])  # doctest: +SKIP
    """
    if len(texts) != len(answer_indices):
        raise ValueError(f"{len(texts)} texts but {len(answer_indices)} answer indices")
    with_module = get_encoding(model.config.number_encoding).has_number_module
    with_module &= model.config.number_output == "num_token"  # else it writes digits, read as a text encoding's
    was_training = model.training
    model.eval()
    predictions: list[float | None] = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size]), list(answer_indices[start : start + batch_size])
        if with_module:
            predictions += _predict_numbers(model, tokenizer, *batch, max_length)
        else:
            predictions += _predict_text(model, tokenizer, *batch, max_length)
    model.train(was_training)
    return predictions


def _predict_numbers(
    model: Any, tokenizer: Any, texts: list[str], answer_indices: list[int], max_length: int | None
) -> list[float | None]:
    """A number encoding: the number head's value where the token head picks a number token."""
    enc = tokenizer(
        texts,
        padding=True,
        padding_side="right",
        truncation=max_length is not None,
        max_length=max_length,
        return_tensors="pt",
    )
    ids, numbers = enc["input_ids"], enc["input_numbers"]
    positions = _answer_positions(tokenizer.number_mask(ids), answer_indices)
    rows = torch.arange(len(ids))
    if model.causal:
        if (positions == 0).any():
            raise ValueError("an answer is the first token: a causal model has no context to predict it from")
        query = positions - 1
    else:
        ids[rows, positions] = tokenizer.mask_token_id
        numbers[rows, positions] = NEUTRAL_NUMBER
        query = positions
    out = model(
        input_ids=ids.to(model.device),
        input_numbers=numbers.to(model.device),
        attention_mask=enc["attention_mask"].to(model.device),
    )
    logits = out.logits[rows, query, : len(tokenizer)].cpu()  # never a row no token has (a padded vocabulary)
    values = out.number_predictions[rows, query].double().cpu()  # ±inf past a log scaling's range: invalid
    # argmax takes a NaN logit as the largest: a row with a non-finite logit or value predicts nothing
    valid = tokenizer.number_mask(logits.argmax(-1)) & logits.isfinite().all(-1) & values.isfinite()
    return [value if ok else None for ok, value in zip(valid.tolist(), values.tolist())]


def _predict_text(
    model: Any, tokenizer: Any, texts: list[str], answer_indices: list[int], max_length: int | None
) -> list[float | None]:
    """A text encoding: the first number of the text the model generates (causal) or fills (masked)."""
    written, finite = written_answers(model, tokenizer, texts, answer_indices, max_length=max_length)
    found = [find_numbers(text) for text in written]
    return [numbers[0].value if numbers and ok else None for numbers, ok in zip(found, finite)]


@torch.no_grad()
def written_answers(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    answer_indices: Sequence[int],
    *,
    max_length: int | None = None,
    given_digits: int = 0,
) -> tuple[list[str], list[bool]]:
    """What a model that writes digits puts where each example's answer is, as text: the greedy continuation of the
    text before it (causal) or the filled-in answer (masked); and whether every logit it came from was finite.
    ``given_digits``: the answer's first that many characters stay in the prompt, and what follows them is written.

    :func:`predict_answers` reads the first number of each; a script that reads them otherwise (answers written in
    another order: ``benchmarks/screen_answer_order.py``) starts here. Call it on a model in eval mode.

    Example:
        >>> written_answers(model, tokenizer, ["12 + 30 = 42"], [2])  # doctest: +SKIP
        ([' 42'], [True])
    """
    if given_digits < 0:
        raise ValueError(f"given_digits must be >= 0, got {given_digits}")
    spans = []
    for row, (text, index) in enumerate(zip(texts, answer_indices)):
        numbers = find_numbers(text)
        if not 0 <= index < len(numbers):
            raise ValueError(f"example {row}: answer_index is {index} but the text has {len(numbers)} numbers")
        spans.append((min(numbers[index].start + given_digits, numbers[index].end), numbers[index].end))
    return (_generate_answers if model.causal else _fill_answers)(model, tokenizer, list(texts), spans, max_length)


@contextmanager
def _finite_logits(model: Any, last_only: bool) -> Iterator[list[torch.Tensor]]:
    """While active, every forward of ``model`` appends whether its logits are finite: ``(B, T)`` per position,
    or ``(B,)`` for the last position only (what ``generate`` picks the next token from)."""
    seen: list[torch.Tensor] = []

    def record(module: Any, args: Any, output: Any) -> None:
        logits = output.logits[:, -1] if last_only else output.logits
        seen.append(logits.detach().isfinite().all(-1).cpu())

    handle = model.register_forward_hook(record)
    try:
        yield seen
    finally:
        handle.remove()


def _generate_answers(
    model: Any, tokenizer: Any, texts: list[str], spans: list[tuple[int, int]], max_length: int | None
) -> tuple[list[str], list[bool]]:
    """Greedy continuations of the prompts (each text's tokens before its answer's first token), and whether
    every logit each row's tokens were chosen from was finite."""
    if writes_digits(tokenizer):
        prompts = _number_prompts(tokenizer, [text[:start] for text, (start, _) in zip(texts, spans)], max_length)
    else:
        prompts = _text_prompts(tokenizer, texts, spans, max_length)
    batch = tokenizer.pad(prompts, padding_side="left", return_tensors="pt")
    new_tokens = tokenizer.scheme.tokens_per_number if tokenizer.scheme else TEXT_ANSWER_TOKENS
    with _finite_logits(model, last_only=True) as steps:
        sequences = model.generate(
            input_ids=batch["input_ids"].to(model.device),
            attention_mask=batch["attention_mask"].to(model.device),
            **({"input_numbers": batch["input_numbers"].to(model.device)} if model.number_encoding else {}),
            max_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id,
        )
    finite = torch.ones(len(prompts), dtype=torch.bool)
    for step in steps:
        finite &= step
    written = tokenizer.batch_decode(sequences[:, batch["input_ids"].shape[1] :].cpu(), skip_special_tokens=True)
    return written, finite.tolist()


def _number_prompts(tokenizer: Any, prompts: list[str], max_length: int | None) -> list[dict[str, Any]]:
    """``number_output="digits"``: each prompt as ``encode_prompts_and_completions`` trained it (tokenized alone, its
    numbers as number tokens with their values), with nothing after it."""
    rows = tokenizer.encode_prompts_and_completions(prompts, [""] * len(prompts), max_length=max_length)
    keys = ("input_ids", "attention_mask", "input_numbers")
    return [dict(zip(keys, row)) for row in zip(*(rows[key] for key in keys))]


def _text_prompts(
    tokenizer: Any, texts: list[str], spans: list[tuple[int, int]], max_length: int | None
) -> list[dict[str, Any]]:
    """Each text's tokens before its answer's first token (a text encoding writes the answer's tokens)."""
    truncation = {"truncation": max_length is not None, "max_length": max_length}
    enc = tokenizer(texts, return_offsets_mapping=True, **truncation)
    lengths = prompt_lengths_of(texts, [text[:start] for text, (start, _) in zip(texts, spans)], enc["offset_mapping"])
    prompts = []
    for row, (ids, length) in enumerate(zip(enc["input_ids"], lengths)):
        if length == len(ids):
            raise ValueError(
                f"example {row}: its answer is not in the tokenized text; was it truncated? Raise max_length."
            )
        if length == 0:
            raise ValueError("an answer is the first token: a causal model has no context to predict it from")
        prompts.append(
            {"input_ids": ids[:length], "attention_mask": [1] * length, "input_numbers": [NEUTRAL_NUMBER] * length}
        )
    check_answer_boundary(texts, [start for start, _ in spans], enc["offset_mapping"])
    return prompts


def _fill_answers(
    model: Any, tokenizer: Any, texts: list[str], spans: list[tuple[int, int]], max_length: int | None
) -> tuple[list[str], list[bool]]:
    """The text of each answer's tokens, all masked and filled at once (whitespace removed), and whether every
    logit at each row's masked positions was finite."""
    enc = tokenizer(
        texts,
        padding=True,
        truncation=max_length is not None,
        max_length=max_length,
        return_offsets_mapping=True,
        return_tensors="pt",
    )
    starts, ends = torch.tensor(spans).unbind(-1)
    token_starts, token_ends = enc["offset_mapping"].unbind(-1)
    masked = (token_starts < ends[:, None]) & (token_ends > starts[:, None]) & (token_ends > token_starts)
    masked &= enc["attention_mask"].bool()
    if not masked.any(-1).all():
        row = int((~masked.any(-1)).nonzero()[0])
        raise ValueError(f"example {row}: its answer is not in the tokenized text; was it truncated? Raise max_length.")
    check_answer_boundary(texts, [start for start, _ in spans], enc["offset_mapping"].tolist())
    with _finite_logits(model, last_only=False) as forwards:
        filled, _ = model.fill_mask(
            input_ids=enc["input_ids"].masked_fill(masked, tokenizer.mask_token_id).to(model.device),
            attention_mask=enc["attention_mask"].to(model.device),
            mask_token_id=tokenizer.mask_token_id,
        )
    finite = torch.ones(len(texts), dtype=torch.bool)
    for positions in forwards:
        finite &= (positions | ~masked).all(-1)
    written = [
        "".join(tokenizer.decode(row[mask], skip_special_tokens=True).split())
        for row, mask in zip(filled.cpu(), masked)
    ]
    return written, finite.tolist()
