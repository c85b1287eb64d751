"""Collators: padding with numbers, MLM masking of numbers, causal labels; DataLoader and Trainer."""

from __future__ import annotations

import pytest
import torch
from model_helpers import CAUSAL, MASKED
from torch.utils.data import DataLoader

from hf_numbers import BACKBONES
from hf_numbers.data.collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM, prompt_lengths
from hf_numbers.data.tokenizer_training import train_number_tokenizer

TEXTS = ["{a:1.53, b:-1.33, c:0.25} b=-1.33", "{d:2.5, e:0.75} d=2.5", "x = 3 and y = 4.5 so x + y = 7.5"] * 4


@pytest.fixture(scope="module")
def tokenizers():
    return {name: train_number_tokenizer(TEXTS * 5, name, vocab_size=200) for name in BACKBONES}


@pytest.mark.parametrize("name", MASKED)
def test_mlm_masks_numbers_with_their_values(name, tokenizers) -> None:
    tok = tokenizers[name]
    features = [tok(t) for t in TEXTS]
    plain = tok.pad(features, return_tensors="pt")
    batch = DataCollatorForNumberMLM(tok, mlm_probability=0.5, seed=0)(features)
    is_num = torch.isin(plain["input_ids"], torch.tensor(tok.num_token_ids))
    masked = batch["labels"] != -100
    assert masked.any() and (masked & is_num).any()
    # a masked number: mask token, neutral input value, true value kept as its label
    masked_numbers = masked & is_num
    assert (batch["input_ids"][masked_numbers] == tok.mask_token_id).all()
    assert (batch["input_numbers"][masked_numbers] == 1.0).all()
    assert torch.equal(batch["number_labels"][masked_numbers], plain["input_numbers"][masked_numbers])
    assert torch.equal(batch["labels"][masked], plain["input_ids"][masked])
    # unmasked numbers keep their values; specials and padding are never masked
    keep = is_num & ~masked
    assert torch.equal(batch["input_numbers"][keep], plain["input_numbers"][keep])
    special = torch.isin(plain["input_ids"], torch.tensor(tok.all_special_ids)) & ~is_num
    special |= plain["attention_mask"] == 0
    assert not (masked & special).any()
    assert batch["input_numbers"].dtype == torch.float64
    # BERT's scheme on other tokens: some replaced by the mask token, none by a number token
    assert not (torch.isin(batch["input_ids"], torch.tensor(tok.num_token_ids)) & masked).any()


def test_mlm_is_reproducible_and_numbers_only(tokenizers) -> None:
    tok = tokenizers[MASKED[0]]
    features = [tok(t) for t in TEXTS]
    first = DataCollatorForNumberMLM(tok, mlm_probability=0.3, seed=3)(features)
    again = DataCollatorForNumberMLM(tok, mlm_probability=0.3, seed=3)(features)
    assert all(torch.equal(first[k], again[k]) for k in first)
    whole = DataCollatorForNumberMLM(tok, numbers_only=True, whole_numbers=True)(features)
    is_num = torch.isin(tok.pad(features, return_tensors="pt")["input_ids"], torch.tensor(tok.num_token_ids))
    assert torch.equal(whole["labels"] != -100, is_num)
    some = DataCollatorForNumberMLM(tok, numbers_only=True, mlm_probability=0.5, seed=0)(features)
    assert ((some["labels"] != -100) <= is_num).all()


def test_seeded_masks_depend_on_the_batch_not_on_call_order(tokenizers) -> None:
    tok = tokenizers[MASKED[0]]
    first, second = [tok(t) for t in TEXTS[:4]], [tok(t) for t in TEXTS[4:8]]
    collator = DataCollatorForNumberMLM(tok, mlm_probability=0.4, seed=7)
    a = collator(first)
    collator(second)
    again = collator(first)  # after other batches: the same masks
    assert torch.equal(a["labels"], again["labels"]) and torch.equal(a["input_ids"], again["input_ids"])
    other_seed = DataCollatorForNumberMLM(tok, mlm_probability=0.4, seed=8)(first)
    assert not torch.equal(a["labels"], other_seed["labels"])


def test_mlm_rejects_bad_options(tokenizers) -> None:
    with pytest.raises(ValueError, match="mlm_probability"):
        DataCollatorForNumberMLM(tokenizers[MASKED[0]], mlm_probability=0.0)
    with pytest.raises(ValueError, match="numbers_only"):
        DataCollatorForNumberMLM(tokenizers[MASKED[0]], whole_numbers=True)
    with pytest.raises(ValueError, match="input_numbers"):
        DataCollatorForNumberMLM(tokenizers[MASKED[0]])([{"input_ids": [1, 2]}])


@pytest.mark.parametrize("side", ["left", "right"])
def test_causal_collator_labels(side, tokenizers) -> None:
    tok = tokenizers[CAUSAL[0]]
    features = [tok(t) for t in TEXTS]
    batch = DataCollatorForNumberCausalLM(tok, padding_side=side)(features)
    assert torch.equal(batch["labels"][batch["attention_mask"] == 1], batch["input_ids"][batch["attention_mask"] == 1])
    assert (batch["labels"][batch["attention_mask"] == 0] == -100).all()
    direct = tok(TEXTS, padding=True, padding_side=side, return_tensors="pt")
    assert torch.equal(batch["input_ids"], direct["input_ids"])
    assert torch.equal(batch["number_labels"], direct["input_numbers"])  # the true values, aligned with labels
    column = 0 if side == "left" else -1
    assert batch["attention_mask"][:, column].min() == 0


def test_collators_in_a_dataloader(tokenizers) -> None:
    tok = tokenizers[CAUSAL[0]]
    loader = DataLoader([tok(t) for t in TEXTS], batch_size=5, collate_fn=DataCollatorForNumberCausalLM(tok))
    shapes = [batch["input_ids"].shape[0] for batch in loader]
    assert shapes == [5, 5, 2]


ANSWERS = [("12 + 345 = ", "357"), ("-7 - 9 = ", "-16"), ("a 1.5 b = ", "2.25")]


@pytest.mark.parametrize("name", BACKBONES)
def test_prompt_lengths_split_prompt_and_answer(name, tokenizers) -> None:
    tok = tokenizers[name]
    texts, prompts = [p + a for p, a in ANSWERS], [p for p, _ in ANSWERS]
    lengths = prompt_lengths(tok, texts, prompts)
    for text, (_, answer), length in zip(texts, ANSWERS, lengths):
        enc = tok(text)
        ids, numbers = enc["input_ids"], enc["input_numbers"]
        completion = tok.decode(ids[length:], input_numbers=numbers[length:], skip_special_tokens=True)
        assert completion.strip() == answer  # the answer's token (with the prompt's last space) is the completion
        assert tok.number_mask(ids[length:])[0]
    with pytest.raises(ValueError, match="not a prefix"):
        prompt_lengths(tok, ["1 + 2 = 3"], ["2 + 1 = "])
    with pytest.raises(ValueError, match="2 texts but 1 prompts"):
        prompt_lengths(tok, ["1", "2"], ["1"])


@pytest.mark.parametrize("side", ["left", "right"])
def test_causal_collator_completion_only(side, tokenizers) -> None:
    tok = tokenizers[CAUSAL[0]]
    texts = [p + a for p, a in ANSWERS]
    lengths = prompt_lengths(tok, texts, [p for p, _ in ANSWERS])
    features = [{**tok(t), "prompt_length": n} for t, n in zip(texts, lengths)]
    batch = DataCollatorForNumberCausalLM(tok, padding_side=side, completion_only=True)(features)
    labelled = batch["labels"] != -100
    assert labelled.sum(1).tolist() == [1, 1, 1]  # the answer's number token only
    assert tok.number_mask(batch["labels"].clamp(min=0))[labelled].all()
    assert batch["number_labels"][labelled].tolist() == [357.0, -16.0, 2.25]
    assert (batch["number_labels"][~labelled] == 1.0).all()
    plain = DataCollatorForNumberCausalLM(tok, padding_side=side)(features)  # prompt_length is ignored without it
    assert torch.equal(plain["input_ids"], batch["input_ids"]) and (plain["labels"] != -100).sum() > 3


@pytest.mark.parametrize("name", MASKED)
def test_mlm_collator_completion_only_masks_the_answer(name, tokenizers) -> None:
    tok = tokenizers[name]
    texts = [p + a for p, a in ANSWERS]
    lengths = prompt_lengths(tok, texts, [p for p, _ in ANSWERS])
    features = [{**tok(t), "prompt_length": n} for t, n in zip(texts, lengths)]
    batch = DataCollatorForNumberMLM(tok, completion_only=True, seed=0)(features)
    masked = batch["labels"] != -100
    assert masked.sum(1).tolist() == [1, 1, 1]
    assert (batch["input_ids"][masked] == tok.mask_token_id).all()
    assert (batch["input_numbers"][masked] == 1.0).all()
    assert batch["number_labels"][masked].tolist() == [357.0, -16.0, 2.25]


def test_completion_only_needs_prompt_lengths(tokenizers) -> None:
    tok = tokenizers[CAUSAL[0]]
    with pytest.raises(ValueError, match="needs a prompt_length in every example"):
        DataCollatorForNumberCausalLM(tok, completion_only=True)([tok("1 + 2 = 3")])
    with pytest.raises(ValueError, match="prompt_length must be an integer >= 0"):
        DataCollatorForNumberCausalLM(tok, completion_only=True)([{**tok("1 + 2 = 3"), "prompt_length": -1}])
    with pytest.raises(ValueError, match="exclude each other"):
        DataCollatorForNumberMLM(tokenizers[MASKED[0]], completion_only=True, numbers_only=True)


def test_causal_examples_end_with_eos_and_its_label(tokenizers) -> None:
    """A causal LM learns where an answer stops: every example ends with the end-of-text token, labelled."""
    from datasets import Dataset, DatasetDict

    from hf_numbers.data import tokenize_dataset

    tok = tokenizers["gpt2"]
    texts = [p + a for p, a in ANSWERS]
    dataset = DatasetDict({"train": Dataset.from_dict({"text": texts, "prompt": [p for p, _ in ANSWERS]})})
    plain = tokenize_dataset(dataset, tok, max_length=64)["train"]
    ended = tokenize_dataset(dataset, tok, max_length=64, end_with_eos=True)["train"]
    for before, after in zip(plain, ended):
        assert after["input_ids"] == [*before["input_ids"], tok.eos_token_id]
        assert after["input_numbers"][-1] == 1.0 and after["prompt_length"] == before["prompt_length"]
    batch = DataCollatorForNumberCausalLM(tok, completion_only=True)(list(ended))
    assert ((batch["labels"] == tok.eos_token_id).sum(1) == 1).all()  # the answer, then the end of the text
    short = tokenize_dataset(dataset, tok, max_length=3, end_with_eos=True)["train"]
    assert all(len(row["input_ids"]) == 3 and row["input_ids"][-1] == tok.eos_token_id for row in short)
