"""Align a new ``[NUM]`` module to a pretrained model before the task: the model reading its own digits teaches it.

An adapted LLM meets ``[NUM]`` + an encoding it has never seen. Before the task (``--align_steps``), with the
trunk frozen, the number module and the number tokens' rows learn to stand in for the digits: on texts of the
training split's numbers (no task labels), the student (``[NUM]`` and its value) is trained to give the hidden
states the frozen model gives reading the same text as its own digit tokens, at every block's output, at the
number's token (matched with the teacher's last digit token) and at every token after it; and its heads learn
to write ``[NUM]`` and the value where the text has a number. Tokens are matched where they end at the same
character of the text, which holds for the text between numbers (it tokenizes alike in both tokenizers).

Example:
    >>> losses = align_number_module(model, tokenizer, teacher_tokenizer, values, steps=200)  # doctest: +SKIP
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import torch

from ..modeling import format_number

__all__ = ["ALIGN_TEMPLATES", "align_number_module", "alignment_texts", "matched_positions"]

ALIGN_TEMPLATES = (
    "x = {}", "The value is {}.", "{} and {}", "It was {} then {}, and {}.", "{}, {}, {}", "from {} to {}",
    "a = {}, b = {}", "Total: {}", "{} + {}", "We measured {} units.",
)  # fmt: skip
"""Texts the alignment fills with numbers: plain prose and notation, no task."""


def alignment_texts(values: Sequence[float], count: int, seed: int) -> list[str]:
    """``count`` texts of :data:`ALIGN_TEMPLATES`, each filled with numbers drawn from ``values``.

    Example:
        >>> alignment_texts([1.5, 20.0], 2, seed=0)
        ['a = 20, b = 1.5', '20, 20, 20']
    """
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        template = rng.choice(ALIGN_TEMPLATES)
        texts.append(template.format(*(format_number(rng.choice(values)) for _ in range(template.count("{}")))))
    return texts


def matched_positions(student_offsets: torch.Tensor, teacher_offsets: torch.Tensor, first_number_end: torch.Tensor,
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """``(rows, student positions, teacher positions)`` of the tokens that end at the same character in both
    tokenizations, from the first number's token on (``first_number_end``: its end character per row), the first
    token of either left out (Llama-like models give it huge activations wherever it stands)."""
    s_end, t_end = student_offsets[..., 1], teacher_offsets[..., 1]
    real_s, real_t = s_end > student_offsets[..., 0], t_end > teacher_offsets[..., 0]
    same = (s_end[:, :, None] == t_end[:, None, :]) & real_s[:, :, None] & real_t[:, None, :]
    same &= (s_end >= first_number_end[:, None])[:, :, None]
    same[:, 0, :] = same[:, :, 0] = False  # a text's first token is its model's attention sink, not a reading of it
    return same.nonzero(as_tuple=True)


def align_number_module(model: Any, tokenizer: Any, teacher_tokenizer: Any, values: Sequence[float], steps: int,
                        batch_size: int = 16, learning_rate: float = 1e-3, seed: int = 0) -> list[float]:  # fmt: skip
    """Train ``model``'s number module and number-token rows for ``steps`` steps to read numbers as its digits did.

    ``teacher_tokenizer`` writes numbers as the backbone's own text (``number_scheme="text"``); ``values`` are
    the numbers the texts hold (the training split's). Returns the loss of every step.
    """
    flags = {parameter: parameter.requires_grad for parameter in model.parameters()}
    trained, hooks = _trainable_for_alignment(model)
    optimizer = torch.optim.AdamW(trained, lr=learning_rate, weight_decay=0.0)
    texts = alignment_texts(values, steps * batch_size, seed)
    was_training, losses = model.training, []
    model.train()
    try:
        for step in range(steps):
            batch = texts[step * batch_size : (step + 1) * batch_size]
            loss = _alignment_loss(model, tokenizer, teacher_tokenizer, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    finally:  # the task's training starts from the model's own trainable parameters
        for hook in hooks:
            hook.remove()
        for parameter, flag in flags.items():
            parameter.requires_grad_(flag)
        model.train(was_training)
    return losses


def _trainable_for_alignment(model: Any) -> tuple[list[torch.nn.Parameter], list[Any]]:
    """Freeze all but the number module and the embeddings, whose gradient keeps the number tokens' rows only
    (through hooks, returned to be removed)."""
    rows = torch.tensor(model.config.num_token_ids)
    embeddings = {model.get_input_embeddings().weight}
    output = model.get_output_embeddings()
    if output is not None:
        embeddings.add(output.weight)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    trained = [*model.number_encoding.parameters(), *embeddings]
    for parameter in trained:
        parameter.requires_grad_(True)
    hooks = []
    for matrix in embeddings:
        keep = torch.zeros(matrix.shape[0], 1, dtype=matrix.dtype)
        keep[rows] = 1
        hooks.append(matrix.register_hook(lambda grad, keep=keep: grad * keep.to(grad.device)))
    return trained, hooks


def _alignment_loss(model: Any, tokenizer: Any, teacher_tokenizer: Any, texts: list[str]) -> torch.Tensor:
    """Hidden states like the teacher's (mean over blocks of the squared error relative to the teacher's size)
    plus the model's own loss on its number tokens (write ``[NUM]`` and the value where a number stands)."""
    device = model.device
    encode = {"padding": True, "padding_side": "right", "return_offsets_mapping": True, "return_tensors": "pt"}
    student, teacher = tokenizer(texts, **encode), teacher_tokenizer(texts, **encode)
    is_num = tokenizer.number_mask(student["input_ids"])
    first_end = torch.where(is_num, student["offset_mapping"][..., 1], 10**9).min(1).values
    rows, s_pos, t_pos = matched_positions(student["offset_mapping"], teacher["offset_mapping"], first_end)
    with torch.no_grad():
        taught = model(input_ids=teacher["input_ids"].to(device), attention_mask=teacher["attention_mask"].to(device),
                       output_hidden_states=True).hidden_states[1:]  # fmt: skip
    labels = student["input_ids"].masked_fill(~is_num, -100)
    out = model(input_ids=student["input_ids"].to(device), input_numbers=student["input_numbers"].to(device),
                attention_mask=student["attention_mask"].to(device), labels=labels.to(device),
                output_hidden_states=True)  # fmt: skip
    matched = [
        ((s[rows, s_pos] - t[rows, t_pos]) ** 2).mean() / (t[rows, t_pos] ** 2).mean()
        for s, t in zip(out.hidden_states[1:], taught)
    ]
    return torch.stack(matched).mean() + out.loss
