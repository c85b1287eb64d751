"""The floating-point embedding paper's masked-word protocol: text-only masking, masked-word metrics (function
and `evaluate` module), the numeracy_words task, one-word-at-a-time scoring and a frozen all-MiniLM-L6-v2 run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from datasets import DatasetDict
from model_helpers import MASKED, one_thread, tiny_args
from safetensors.torch import load_file
from transformers import BertTokenizer

from hf_numbers import BACKBONES, get_encoding
from hf_numbers.data import make_task, number_token_masks, train_number_tokenizer
from hf_numbers.data.collators import DataCollatorForNumberMLM, overlapping_tokens
from hf_numbers.data.loading import tokenize_dataset
from hf_numbers.data.numeracy import RULES, TARGET_WORDS, TEMPLATES
from hf_numbers.evaluation import (
    compute_masked_word_metrics,
    evaluate_masked_words,
    masked_token_statistics,
    score_masked_words,
    summarize_masked_tokens,
)
from hf_numbers.modeling.parsing import find_numbers
from hf_numbers.training import NumberTrainingArguments, run_training


@pytest.fixture(scope="module")
def words():
    return make_task("numeracy_words", train_size=200, validation_size=30, test_size=30)


@pytest.fixture(scope="module")
def tokenizers(words):
    return {name: train_number_tokenizer(words["train"]["text"], name, vocab_size=300) for name in MASKED}


def _special(tok, plain: dict[str, torch.Tensor], is_num: torch.Tensor) -> torch.Tensor:
    special = torch.isin(plain["input_ids"], torch.tensor(tok.all_special_ids)) & ~is_num
    return special | (plain["attention_mask"] == 0)


# ---------------------------------------------------------------------------------------------- collator
@pytest.mark.parametrize("name", MASKED)
def test_text_only_masks_words_never_numbers_or_specials(name: str, tokenizers, words) -> None:
    tok = tokenizers[name]
    features = [tok(text) for text in words["test"]["text"][:16]]
    plain = tok.pad(features, return_tensors="pt")
    is_num = tok.number_mask(plain["input_ids"])
    special = _special(tok, plain, is_num)
    every = DataCollatorForNumberMLM(tok, mlm_probability=1.0, text_only=True, seed=0)(features)
    assert torch.equal(every["labels"] != -100, ~is_num & ~special)  # every word, nothing else
    some = DataCollatorForNumberMLM(tok, mlm_probability=0.15, text_only=True, seed=0)(features)
    masked = some["labels"] != -100
    assert masked.any() and not (masked & (is_num | special)).any()
    # numbers stay visible with their values, and no number is a target
    assert torch.equal(some["input_ids"][is_num], plain["input_ids"][is_num])
    assert torch.equal(some["input_numbers"], plain["input_numbers"]) and (some["number_labels"] == 1.0).all()


@pytest.fixture(scope="module")
def digits_as_text(real_bert_dir: Path):
    """MiniLM's tokenizer with numbers as ordinary text (the `text` encoding, the paper's default embeddings):
    digits are WordPiece tokens, there is no number token."""
    tok = BACKBONES["bert"].tokenizer_class.from_pretrained(real_bert_dir, number_scheme="text")
    assert tok.num_token_ids == []
    return tok


def test_numbers_written_as_text_are_marked_and_never_masked(digits_as_text, words) -> None:
    tok = digits_as_text
    texts = words["test"]["text"][:12]
    flags = number_token_masks(tok, texts)
    for text, row, ids in zip(texts, flags, tok(texts)["input_ids"]):
        pieces = "".join(tok.convert_ids_to_tokens([i for i, f in zip(ids, row) if f])).replace("#", "")
        assert pieces == "".join(text[s:e] for s, e, _ in find_numbers(text)).lower()  # every digit, sign and point
    features = [{**tok(text), "number_token_mask": row} for text, row in zip(texts, flags)]
    batch = DataCollatorForNumberMLM(tok, mlm_probability=1.0, text_only=True, seed=0)(features)
    plain = tok.pad([{k: f[k] for k in ("input_ids", "attention_mask", "input_numbers")} for f in features])
    in_number = torch.zeros_like(batch["labels"], dtype=torch.bool)
    for row, values in enumerate(flags):
        in_number[row, : len(values)] = torch.tensor(values, dtype=torch.bool)
    special = _special(tok, {k: torch.tensor(v) for k, v in plain.items() if k != "input_numbers"}, in_number & False)
    assert torch.equal(batch["labels"] != -100, ~in_number & ~special)
    with pytest.raises(ValueError, match="needs a number_token_mask in every example"):
        DataCollatorForNumberMLM(tok, text_only=True)([tok(text) for text in texts])


def test_tokenized_datasets_carry_the_same_number_token_masks(digits_as_text, words) -> None:
    """tokenize_dataset's one-pass column equals number_token_masks, cut and ended like the input ids."""
    data = DatasetDict({"test": words["test"].select(range(12))})
    texts = data["test"]["text"]
    causal = train_number_tokenizer(words["train"]["text"], "gpt2", vocab_size=300)  # with [NUM] and an eos
    for tok, eos, cut in ((digits_as_text, False, 128), (digits_as_text, False, 12), (causal, True, 128)):
        column = tokenize_dataset(data, tok, cut, end_with_eos=eos, number_token_mask=True)["test"]
        text_cut = cut - 1 if eos else cut
        expected = number_token_masks(tok, texts, truncation=True, max_length=text_cut)
        assert [list(row) for row in column["number_token_mask"]] == [row + [0] * eos for row in expected]
        assert [len(row) for row in column["number_token_mask"]] == [len(row) for row in column["input_ids"]]
        assert any(any(row) for row in expected)


def test_masking_options_exclude_each_other(tokenizers) -> None:
    tok = tokenizers[MASKED[0]]
    for other in ("numbers_only", "completion_only"):
        with pytest.raises(ValueError, match="exclude each other"):
            DataCollatorForNumberMLM(tok, text_only=True, **{other: True})
    assert overlapping_tokens([(0, 0), (0, 3), (3, 5), (5, 6)], [(3, 6, 1.0)]) == [False, False, True, True]


# ----------------------------------------------------------------------------------------------- metrics
def test_metric_math_on_hand_computed_logits() -> None:
    logits = np.log([[0.5, 0.25, 0.25], [0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])
    nll, rank = masked_token_statistics(logits, [0, 1, -100])
    assert np.allclose(nll, [math.log(2), math.log(4)]) and rank.tolist() == [0, 1]
    expected = {"count": 2, "perplexity": math.sqrt(8), "top1": 0.5, "top2": 1.0}
    assert compute_masked_word_metrics(logits, [0, 1, -100], top_k=(1, 2)) == pytest.approx(expected)
    # a (B, L, V) torch batch, shifted logits (softmax is shift-invariant): the same
    batch = torch.tensor(logits + 7.0).reshape(1, 3, 3)
    assert compute_masked_word_metrics(batch, torch.tensor([[0, 1, -100]]), top_k=(1, 2)) == pytest.approx(expected)
    assert compute_masked_word_metrics([[1.0, 1.0, 1.0]], [2], top_k=(1,))["top1"] == 1.0  # a tie counts
    none = {"count": 0, "perplexity": None, "top1": None, "top5": None, "top20": None}
    assert compute_masked_word_metrics(np.zeros((2, 3)), [-100, -100]) == none
    assert summarize_masked_tokens([0.0, math.log(3)], [0, 4], top_k=(5,)) == pytest.approx(
        {"count": 2, "perplexity": math.sqrt(3), "top5": 1.0}
    )
    for args, message in (
        ((np.zeros((2, 3)), [0]), "one more \\(vocabulary\\) axis"),
        ((np.zeros((1, 3)), [3]), "ids in \\[0, 3\\)"),
        ((np.zeros((1, 3)), [0.5]), "integer token ids"),
        ((np.array([[np.nan, 0.0]]), [0]), "finite"),
    ):
        with pytest.raises(ValueError, match=message):
            compute_masked_word_metrics(*args)
    with pytest.raises(ValueError, match="top_k"):
        summarize_masked_tokens([0.0], [0], top_k=(0,))


def test_evaluate_module_matches_the_function() -> None:
    evaluate = pytest.importorskip("evaluate")
    from hf_numbers.evaluation import evaluate_masked_word_metrics

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 6, 50))
    labels = np.where(rng.random((4, 6)) < 0.5, -100, rng.integers(0, 50, (4, 6)))
    metric = evaluate.load(evaluate_masked_word_metrics.__file__)  # a local file: no network
    for b in range(3):
        metric.add_batch(predictions=logits[b], references=labels[b])
    metric.add(prediction=logits[3, 0], reference=labels[3, 0] if labels[3, 0] >= 0 else 7)
    flat_labels = np.concatenate([labels[:3].reshape(-1), [labels[3, 0] if labels[3, 0] >= 0 else 7]])
    flat_logits = np.concatenate([logits[:3].reshape(-1, 50), logits[3, :1]])
    assert metric.compute() == pytest.approx(compute_masked_word_metrics(flat_logits, flat_labels))


# --------------------------------------------------------------------------------------------------- data
def _skeleton(row: dict) -> str:
    """The text with its numbers and its target word blanked out."""
    start = row["word_start"]
    spans = [(s, e, "<n>") for s, e, _ in find_numbers(row["text"])]
    spans = sorted([*spans, (start, start + len(row["word"]), "<w>")])
    text = row["text"]
    for s, e, mark in reversed(spans):
        text = text[:s] + mark + text[e:]
    return text


def test_numeracy_words_follow_from_the_numbers_alone(words) -> None:
    skeletons: dict[str, set[str]] = {}
    seen: dict[str, set[str]] = {}
    for split in words:
        for row in words[split]:
            assert row["text"][row["word_start"] :].startswith(row["word"])
            assert [value for _, _, value in find_numbers(row["text"])] == row["numbers"]
            assert RULES[row["template"]](row["numbers"]) == row["word"] in TARGET_WORDS[row["template"]]
            skeletons.setdefault(row["template"], set()).add(_skeleton(row))
            seen.setdefault(row["template"], set()).add(row["word"])
    # nothing but the numbers varies within a template, so the context alone cannot tell the word,
    # and every template needs the numbers to choose among its words
    assert set(skeletons) == set(TEMPLATES) and all(len(s) == 1 for s in skeletons.values())
    assert all(len(seen[name]) >= 2 for name in TEMPLATES)


def _source_values(rows) -> dict[str, set]:
    values: dict[str, set] = {"temperature": set(), "car_weight": set(), "job_change": set()}
    for row in rows:
        numbers, template = row["numbers"], row["template"]
        if template in ("temperature", "job_change"):
            values[template].add(numbers[0])
        elif template == "weight_unit":
            values["car_weight"].add(round(numbers[0] * (1 if row["word"] == "pounds" else 2000)))
        elif template == "weight_comparison":
            values["car_weight"] |= {round(n) for n in numbers}
    return values


def test_numeracy_test_values_are_never_trained_on() -> None:
    dd = make_task("numeracy_words", train_size=3000, validation_size=100, test_size=200, seed=3)
    train, test = _source_values(dd["train"]), _source_values(dd["test"])
    assert all(test[source] and not test[source] & train[source] for source in train)
    small = make_task("numeracy_words", train_size=50, validation_size=100, test_size=200, seed=3)
    assert small["test"].to_list() == dd["test"].to_list()  # the test split does not depend on train_size


def test_target_words_are_single_minilm_tokens(real_bert_dir: Path) -> None:
    tok = BertTokenizer.from_pretrained(real_bert_dir)
    for word in {w for group in TARGET_WORDS.values() for w in group}:
        assert tok.tokenize(word) == [word]


# ------------------------------------------------------------------------------------------------ scoring
def _tiny_bert(tok):
    spec = BACKBONES["bert"]
    torch.manual_seed(0)
    config = spec.new_config(
        tok,
        hidden_size=32,
        num_layers=2,
        num_heads=2,
        max_length=64,
        number_encoding="float",
        **dict.fromkeys(spec.dropout_fields, 0.0),
    )
    return spec.model_class(config).eval()


def test_each_word_is_scored_alone_as_a_full_forward_pass_would(tokenizers, words) -> None:
    tok = tokenizers["bert"]
    model = _tiny_bert(tok)
    rows = words["test"].select(range(5))
    spans = [(s, s + len(w)) for s, w in zip(rows["word_start"], rows["word"])]
    with one_thread():
        scores = score_masked_words(model, tok, rows["text"], spans, batch_size=7)
        expected = {}
        for index, text in enumerate(rows["text"]):
            enc = tok(text, return_tensors="pt", return_offsets_mapping=True)
            ids, flags = enc["input_ids"][0], number_token_masks(tok, [text])[0]
            target = overlapping_tokens(enc["offset_mapping"][0].tolist(), [spans[index]])
            for j in range(len(ids)):
                if ids[j] in tok.all_special_ids or flags[j]:
                    continue
                masked = ids.clone()
                masked[j] = tok.mask_token_id
                logits = model(input_ids=masked[None], input_numbers=enc["input_numbers"]).logits[0, j]
                expected[(index, j)] = (-logits.log_softmax(-1)[ids[j]].item(), target[j])
    got = {(t, p): (n, g) for t, p, n, g in zip(scores.text, scores.position, scores.nll, scores.target)}
    assert got.keys() == expected.keys()  # every word token, no number token, no special token
    assert all(got[k][1] == expected[k][1] and got[k][0] == pytest.approx(expected[k][0], abs=1e-4) for k in got)
    assert scores.target.sum() == len(rows)  # each target word is one token of this vocabulary
    metrics = evaluate_masked_words(model, tok, rows["text"], rows["word"], rows["word_start"], batch_size=7)
    assert metrics["masked_count"] == len(got) and metrics["target_count"] == len(rows)
    assert metrics["masked_perplexity"] == pytest.approx(math.exp(np.mean([v[0] for v in expected.values()])))
    with pytest.raises(ValueError, match="not the word"):
        evaluate_masked_words(model, tok, rows["text"][:1], ["warm"], [0])


# ------------------------------------------------------------------------------------- frozen MiniLM run
def test_text_only_arguments_follow_the_task_and_refuse_conflicts() -> None:
    args = NumberTrainingArguments(task="numeracy_words")
    assert (args.backbone, args.text_only, args.mlm_probability, args.completion_only) == ("bert", True, 0.15, False)
    explicit = NumberTrainingArguments(task="lookup", backbone="bert", text_only=True)  # lookup recommends completion
    assert explicit.text_only and not explicit.completion_only
    with pytest.raises(ValueError, match="causal"):
        NumberTrainingArguments(task="numeracy_words", backbone="gpt2")
    with pytest.raises(ValueError, match="exclude each other"):
        NumberTrainingArguments(task="lookup", backbone="bert", text_only=True, completion_only=True)


@pytest.mark.parametrize("encoding", ["text", "exponent", "float"])  # the paper's default, exponent and float
def test_frozen_minilm_trains_head_and_number_module_only(encoding: str, real_bert_dir: Path, tmp_path: Path) -> None:
    """The paper's set-up end to end, tiny: the real MiniLM frozen, text-only masking, masked-word metrics."""
    args = tiny_args(
        task="numeracy_words",
        pretrained=str(real_bert_dir),
        freeze_backbone=True,
        number_encoding=encoding,
        train_size=16,
        eval_size=3,
        max_steps=2,
        per_device_train_batch_size=4,
        eval_steps=0,
        save_steps=0,
        output_dir=str(tmp_path),
    )
    summary = run_training(args)
    for split in ("validation", "test"):
        metrics = summary["metrics"][split]
        assert metrics["target_count"] == 3 and metrics["masked_count"] > 3 * 8
        assert math.isfinite(metrics["masked_perplexity"]) and math.isfinite(metrics["target_perplexity"])
    trained = load_file(str(tmp_path / "final" / "model.safetensors"))
    original = load_file(str(real_bert_dir / "model.safetensors"))
    trunk = [name for name in original if not name.startswith("pooler.") and not name.endswith("position_ids")]
    assert trunk and all(f"language_model.bert.{name}" in trained for name in trunk)
    vocab = original["embeddings.word_embeddings.weight"].shape[0]
    for name in trunk:  # the trunk did not move (the [NUM] row a number encoding adds is not in the original)
        trained_rows = trained[f"language_model.bert.{name}"]
        assert torch.equal(trained_rows[: vocab if "word_embeddings" in name else None], original[name])
    reloaded = BACKBONES["bert"].model_class.from_pretrained(tmp_path / "final")  # stays frozen
    trainable = {name.removeprefix("language_model.").split(".")[0] for name, p in reloaded.named_parameters()
                 if p.requires_grad}
    number_module = {"number_encoding"} if get_encoding(encoding).has_number_module else set()  # none for text
    assert trainable == {"cls", *number_module}
    assert (tmp_path / "metrics.json").is_file()
