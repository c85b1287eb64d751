"""Aligning a new [NUM] module to a pretrained model (``--align_steps``): what trains, what it learns, what stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from test_pretrained import _pretrained_folder

from hf_numbers import NumberLlamaForCausalLM, NumberLlamaTokenizer
from hf_numbers.training import NumberTrainingArguments
from hf_numbers.training.alignment import _alignment_loss, align_number_module, alignment_texts, matched_positions

VALUES = [float(v) for v in range(0, 100000, 773)]

pytestmark = pytest.mark.smoke  # in the drift check (scripts/check_latest.sh): generation, PEFT and loading move


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _pretrained_folder(tmp_path_factory.mktemp("pretrained"), tie=False)


def tokenizers(folder: Path) -> tuple[NumberLlamaTokenizer, NumberLlamaTokenizer]:
    student, teacher = NumberLlamaTokenizer.from_pretrained(folder), NumberLlamaTokenizer.from_pretrained(
        folder, number_scheme="text"
    )
    student.pad_token, teacher.pad_token = student.eos_token, teacher.eos_token
    return student, teacher


def test_texts_hold_the_given_numbers_and_repeat_for_a_seed() -> None:
    texts = alignment_texts([1.5, 20.0], 20, seed=3)
    assert texts == alignment_texts([1.5, 20.0], 20, seed=3) and texts != alignment_texts([1.5, 20.0], 20, seed=4)
    assert all(("1.5" in text or "20" in text) for text in texts)


def test_tokens_are_matched_where_they_end_at_the_same_character_from_the_first_number_on() -> None:
    # "ab = 12 c": student  ab | " =" | " [NUM]" | " c";  teacher  ab | " =" | " " | "1" | "2" | " c"
    student = torch.tensor([[[0, 2], [2, 4], [4, 7], [7, 9]]])
    teacher = torch.tensor([[[0, 2], [2, 4], [4, 5], [5, 6], [6, 7], [7, 9]]])
    rows, s_pos, t_pos = matched_positions(student, teacher, torch.tensor([7]))
    assert rows.tolist() == [0, 0] and s_pos.tolist() == [2, 3] and t_pos.tolist() == [4, 5]


def test_alignment_trains_the_number_module_and_rows_only_and_lowers_its_loss(pretrained: Path) -> None:
    student_tok, teacher_tok = tokenizers(pretrained)
    # xVal: its [NUM] row sets the size of what the trunk reads (FoNE's features have a fixed size, 50x the tiny
    # random model's embeddings, which alignment cannot shrink: see docs/pretrained.md)
    model = NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, student_tok, number_encoding="xval")
    model.fit_number_scaling(VALUES)  # as training does for xVal
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    flags = {name: p.requires_grad for name, p in model.named_parameters()}
    held_out = alignment_texts(VALUES, 32, seed=99)
    with torch.no_grad():
        first = _alignment_loss(model, student_tok, teacher_tok, held_out)
    torch.manual_seed(0)
    align_number_module(model, student_tok, teacher_tok, VALUES, steps=30, batch_size=8, learning_rate=1e-2)
    with torch.no_grad():
        assert _alignment_loss(model, student_tok, teacher_tok, held_out) < 0.8 * first
    rows = student_tok.num_token_ids
    for name, parameter in model.named_parameters():
        assert parameter.requires_grad == flags[name], name  # the flags come back
        if name.startswith("number_encoding."):
            continue
        changed = (parameter != before[name]).reshape(parameter.shape[0], -1).any(-1)
        if name.endswith(("embed_tokens.weight", "lm_head.weight")):
            assert set(changed.nonzero().flatten().tolist()) <= set(rows) and changed.any(), name
        else:
            assert not changed.any(), name  # the trunk is frozen


def test_alignment_leaves_no_gradient_mask_behind(pretrained: Path) -> None:
    student_tok, teacher_tok = tokenizers(pretrained)
    model = NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, student_tok, number_encoding="xval")
    align_number_module(model, student_tok, teacher_tok, VALUES, steps=1, batch_size=2)
    batch = student_tok(["x = 5 and y"], return_tensors="pt")
    model(**batch, labels=batch["input_ids"]).loss.backward()
    assert model.get_input_embeddings().weight.grad[batch["input_ids"][0, 0]].abs().sum() > 0  # a word's row learns


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"align_steps": 5}, r"needs --pretrained"),
        ({"align_steps": 5, "pretrained": "x", "number_encoding": "text"}, r"has none"),
        ({"align_steps": 5, "pretrained": "x", "number_encoding": "fone", "align_learning_rate": 0.0},
         r"align_learning_rate must be"),
    ],
)
def test_alignment_arguments_are_checked_before_any_work(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NumberTrainingArguments(task="fone_arithmetic", backbone="llama", **fields)


def test_a_run_aligns_before_the_task_and_reports_it(pretrained: Path, tmp_path: Path) -> None:
    from hf_numbers.cli import main

    main(["train", "--task", "fone_arithmetic", "--backbone", "llama", "--pretrained", str(pretrained),
          "--number_encoding", "fone", "--align_steps", "2", "--lora_r", "4", "--max_steps", "1",
          "--train_size", "16", "--eval_size", "4", "--output_dir", str(tmp_path / "run"), "--eval_steps", "0",
          "--save_steps", "0", "--max_length", "64"])  # fmt: skip
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["align_first_loss"] > 0 and summary["align_last_loss"] > 0
