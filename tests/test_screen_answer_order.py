"""benchmarks/screen_answer_order.py: the answers alone units first, and what a model writes read back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hf_numbers.data import load_task

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))  # as when the script runs
import screen_answer_order  # noqa: E402


def test_only_the_answer_is_written_units_first() -> None:
    task = load_task("fone_arithmetic", train_size=8, eval_size=4, seed=1)
    screened = screen_answer_order.answers_units_first(task)
    for split in task:
        for before, after in zip(task[split], screened[split]):
            answer, end = before["answer_text"], len(before["prompt"]) + len(before["answer_text"])
            assert after["text"] == before["prompt"] + answer[::-1] + before["text"][end:]
            assert after["answer"] == float(answer[::-1]) == after["numbers"][after["answer_index"]]


def test_a_row_whose_answer_does_not_follow_its_prompt_is_named() -> None:
    task = load_task("fone_arithmetic", train_size=4, eval_size=2, seed=1)
    task["train"] = task["train"].map(lambda row, i: {"text": "0" + row["text"] if i == 2 else row["text"]},
                                      with_indices=True)  # fmt: skip
    with pytest.raises(ValueError, match="row 2: the answer '.*' does not follow the prompt"):
        screen_answer_order.answers_units_first(task)


def test_what_a_model_writes_is_read_back_in_the_usual_order(monkeypatch: pytest.MonkeyPatch) -> None:
    split = screen_answer_order.answers_units_first(load_task("multiplication", train_size=4, eval_size=4,
                                                              seed=1, options={"digits": 3}))["test"]  # fmt: skip
    truths = [float(text[::-1]) for text in split["answer_text"]]
    written = [f" {split['answer_text'][0]}", " 1", "no number", f" {split['answer_text'][3]} and 5"]

    def fake_written_answers(model, tokenizer, texts, indices, given_digits):  # noqa: ANN001, ANN202
        return written, [True, True, True, False]  # the last one's logits were not finite

    monkeypatch.setattr(screen_answer_order, "written_answers", fake_written_answers)
    model = type("Model", (), {"eval": lambda self: None})()
    metrics, rows = screen_answer_order.score(model, None, split)
    assert [row["value"] for row in rows] == [truths[0], 1.0, None, None]
    assert metrics == {"count": 4, "exact_match": 0.25, "within_1pct": 0.25, "mse": (1.0 - truths[1]) ** 2 / 2,
                       "invalid_rate": 0.5}  # fmt: skip


def test_given_digits_lead_what_the_model_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    split = screen_answer_order.answers_units_first(load_task("multiplication", train_size=4, eval_size=2,
                                                              seed=1, options={"digits": 3}))["test"]  # fmt: skip
    handed = []

    def fake_written_answers(model, tokenizer, texts, indices, given_digits):  # noqa: ANN001, ANN202
        handed.append(given_digits)  # the library keeps them in the prompt (tests/test_text_models.py)
        return [f"{answer[2:]} = done" for answer in split["answer_text"]], [True, True]  # the rest of each answer

    monkeypatch.setattr(screen_answer_order, "written_answers", fake_written_answers)
    model = type("Model", (), {"eval": lambda self: None})()
    metrics, rows = screen_answer_order.score(model, None, split, given_digits=2)
    assert handed == [2]
    assert [row["value"] for row in rows] == [float(a[::-1]) for a in split["answer_text"]]
    assert metrics["exact_match"] == 1.0


def test_an_empty_split_and_negative_given_digits_are_refused() -> None:
    empty = load_task("fone_arithmetic", train_size=4, eval_size=2, seed=1)["test"].select([])
    with pytest.raises(ValueError, match="the split to score is empty"):
        screen_answer_order.score(None, None, empty)
    split = load_task("fone_arithmetic", train_size=4, eval_size=2, seed=1)["test"]
    model = type("Model", (), {"eval": lambda self: None, "causal": True})()
    with pytest.raises(ValueError, match="given_digits must be >= 0, got -1"):  # by the library's written_answers
        screen_answer_order.score(model, None, split, given_digits=-1)
