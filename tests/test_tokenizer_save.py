"""A tokenizer reloaded from disk behaves exactly like the fresh one: `[NUM]` is the same (ordinary) token
before and after `save_pretrained` -> `AutoTokenizer.from_pretrained`, for every backbone of the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import CORPUS
from transformers import AutoTokenizer, DataCollatorForLanguageModeling

from hf_numbers import BACKBONES
from hf_numbers.data import train_number_tokenizer

TEXTS = [
    "The temperature fell from 21.5 to -3 degrees at 10:30.",
    '{"mass": 1.53, "a": -1.33, "e": 0.02}',
    "x = 5 - 3 and y=-2.6, [1.42, -8.20] of the planet0",
    "hello world 12.5% and 1.5e-3",
] * 4


def _fresh(backbone: str, origin: str, plain_tokenizer_dirs: dict[str, Path]):
    """A number tokenizer as users make one: from a plain tokenizer folder, or trained on texts."""
    spec = BACKBONES[backbone]
    if origin == "plain folder":
        tokenizer = spec.tokenizer_class.from_pretrained(plain_tokenizer_dirs[backbone])
    elif origin == "trained":
        tokenizer = train_number_tokenizer(CORPUS, backbone, vocab_size=400)
    else:  # a text scheme: no number token, scheme tokens instead
        tokenizer = train_number_tokenizer(CORPUS, backbone, vocab_size=400, number_scheme="p10")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


@pytest.mark.parametrize("origin", ["plain folder", "trained", "p10 scheme"])
@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_a_reloaded_tokenizer_behaves_like_the_fresh_one(
    backbone: str, origin: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    fresh = _fresh(backbone, origin, plain_tokenizer_dirs)
    fresh.save_pretrained(tmp_path / "once")
    reloaded = AutoTokenizer.from_pretrained(tmp_path / "once")
    reloaded.save_pretrained(tmp_path / "twice")
    twice = AutoTokenizer.from_pretrained(tmp_path / "twice")
    assert type(reloaded) is type(fresh) is type(twice)
    assert fresh.num_token_ids == reloaded.num_token_ids == twice.num_token_ids
    if origin != "p10 scheme":
        assert fresh.num_token_ids and fresh.num_token_id == fresh.convert_tokens_to_ids("[NUM]")
    # numbers are ordinary tokens: never special, before or after a save
    for tokenizer in (fresh, reloaded, twice):
        assert tokenizer.all_special_ids == fresh.all_special_ids
        assert tokenizer.all_special_tokens == fresh.all_special_tokens
        assert tokenizer.special_tokens_map == fresh.special_tokens_map
        assert not set(tokenizer.num_token_ids) & set(tokenizer.all_special_ids)
        assert "[NUM]" not in tokenizer.all_special_tokens

    features = [fresh(text) for text in TEXTS]
    assert features == [reloaded(text) for text in TEXTS]
    ids = [row["input_ids"] for row in features]
    numbers = [row["input_numbers"] for row in features]
    for skip in (True, False):  # transformers' decode, and with the values
        assert fresh.batch_decode(ids, skip_special_tokens=skip) == reloaded.batch_decode(ids, skip_special_tokens=skip)
        with_values = fresh.batch_decode(ids, input_numbers=numbers, skip_special_tokens=skip)
        assert with_values == reloaded.batch_decode(ids, input_numbers=numbers, skip_special_tokens=skip)
    if fresh.num_token_ids:  # skip_special_tokens keeps the number tokens, as it keeps words
        assert all("[NUM]" in text for text in fresh.batch_decode(ids, skip_special_tokens=True))

    # transformers' own collator masks the same tokens, numbers included, with either tokenizer
    masked_lm = fresh.mask_token is not None
    batches = [
        DataCollatorForLanguageModeling(tokenizer, mlm=masked_lm, mlm_probability=0.5, seed=3)(features)
        for tokenizer in (fresh, reloaded)
    ]
    for key in ("input_ids", "labels", "input_numbers"):
        assert torch.equal(batches[0][key], batches[1][key]), key
    if masked_lm and fresh.num_token_ids:
        originals = fresh.pad(features, return_tensors="pt")["input_ids"]
        is_number = torch.isin(originals, torch.tensor(fresh.num_token_ids))
        assert (batches[0]["labels"][is_number] != -100).any(), "the collator never picks a number"
        special = torch.isin(originals, torch.tensor(fresh.all_special_ids))
        assert (batches[0]["labels"][special] == -100).all()


@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_an_older_folder_with_num_saved_as_a_special_token_loads_with_an_ordinary_num(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """Folders saved before this fix list `[NUM]` as a named special token and flag it special in tokenizer.json."""
    fresh = _fresh(backbone, "plain folder", plain_tokenizer_dirs)
    fresh.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    config["model_specific_special_tokens"] = {"num_token": "[NUM]"}
    for token in config.get("added_tokens_decoder", {}).values():
        token["special"] = token["special"] or "[NUM]" in token["content"]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    state = json.loads((tmp_path / "tokenizer.json").read_text())
    for token in state["added_tokens"]:
        token["special"] = token["special"] or "[NUM]" in token["content"]
    (tmp_path / "tokenizer.json").write_text(json.dumps(state))

    old = AutoTokenizer.from_pretrained(tmp_path)
    assert old.num_token_ids == fresh.num_token_ids and old.all_special_ids == fresh.all_special_ids
    enc = fresh(TEXTS[0])
    decoded = old.decode(enc["input_ids"], skip_special_tokens=True)
    assert decoded == fresh.decode(enc["input_ids"], skip_special_tokens=True) and "[NUM]" in decoded
    old.save_pretrained(tmp_path / "again")  # saved again: as a fresh tokenizer saves it
    again = json.loads((tmp_path / "again" / "tokenizer_config.json").read_text())
    assert "model_specific_special_tokens" not in again and again["num_token"] == "[NUM]"
    saved = json.loads((tmp_path / "again" / "tokenizer.json").read_text())["added_tokens"]
    assert not any(token["special"] for token in saved if "[NUM]" in token["content"])
