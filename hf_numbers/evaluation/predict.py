"""Predict the answer number of task examples with a Number* model.

Every task example has a ``text`` whose ``answer_index``-th number is the answer. A causal
model predicts it from the text before it (the prediction at the previous position, which is
what greedy generation after the prompt emits first); a masked model gets the answer's
number token masked and predicts it in place. The prediction is valid when the token head's
argmax at that position is a number token; the number head gives the value, mapped back
with the task's :class:`~hf_numbers.data.NumberScaler`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..modeling import NEUTRAL_NUMBER


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
    scaler: Any = None,
    batch_size: int = 64,
    max_length: int | None = None,
) -> list[float | None]:
    """The model's value for each example's answer number, or None where it predicts no number.

    Example:
        >>> split = dataset["test"]  # doctest: +SKIP
        >>> preds = predict_answers(model, tokenizer, split["text"], split["answer_index"], scaler)  # doctest: +SKIP
    """
    if len(texts) != len(answer_indices):
        raise ValueError(f"{len(texts)} texts but {len(answer_indices)} answer indices")
    causal = bool(getattr(model, "causal", False))
    was_training = model.training
    model.eval()
    predictions: list[float | None] = []
    for start in range(0, len(texts), batch_size):
        enc = tokenizer(
            list(texts[start : start + batch_size]),
            padding=True,
            padding_side="right",
            truncation=max_length is not None,
            max_length=max_length,
            return_tensors="pt",
        )
        ids, numbers = enc["input_ids"], enc["input_numbers"]
        is_num = tokenizer.number_mask(ids)
        positions = _answer_positions(is_num, answer_indices[start : start + batch_size])
        if scaler is not None:
            numbers = scaler.apply_at_numbers(ids, numbers, tokenizer.num_token_ids)
        rows = torch.arange(len(ids))
        if causal:
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
        chosen = out.logits[rows, query].argmax(-1).cpu()
        values = out.number_predictions[rows, query].double().cpu()
        if scaler is not None:
            values = scaler.inverse_transform(values, invalid="nan")  # counted as invalid, not a crash
        for is_number, value in zip(tokenizer.number_mask(chosen).tolist(), values.tolist()):
            predictions.append(value if is_number else None)
    model.train(was_training)
    return predictions
