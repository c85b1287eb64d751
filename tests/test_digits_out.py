"""Numbers in, digits out (``number_output="digits"``): the prompt's numbers as ``[NUM]``, the answer as the backbone's
own digit tokens, on the tiny random Llama with a byte-level tokenizer of test_pretrained.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from datasets import Dataset, DatasetDict
from test_pretrained import _pretrained_folder
from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline

from hf_numbers import NumberGPT2Config, NumberLlamaTokenizer, check_tokenizer_matches
from hf_numbers.data import tokenize_dataset
from hf_numbers.data.checks import check_answers_tokenized
from hf_numbers.training import NumberTrainingArguments, run_training
from hf_numbers.training.number_token_loss import NumberTokenLoss

pytestmark = pytest.mark.smoke


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _pretrained_folder(tmp_path_factory.mktemp("digits_out"), tie=True)


def _tokenizer(folder: Path) -> NumberLlamaTokenizer:
    tokenizer = NumberLlamaTokenizer.from_pretrained(folder, number_output="digits")
    tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def test_the_prompt_reads_numbers_as_number_tokens_and_the_completion_writes_digits(folder: Path) -> None:
    tokenizer = _tokenizer(folder)
    text = NumberLlamaTokenizer.from_pretrained(folder, number_scheme="text")
    rows = tokenizer.encode_prompts_and_completions(["12 + 30 = ", "x 7 = "], ["42", "-3.5"])
    for ids, numbers, length, prompt, completion in zip(
        rows["input_ids"], rows["input_numbers"], rows["prompt_length"], ["12 + 30 = ", "x 7 = "], ["42", "-3.5"]
    ):
        assert ids[:length] == tokenizer(prompt)["input_ids"]  # the prompt as generation will see it
        assert ids[length:] == text(completion, add_special_tokens=False)["input_ids"]  # digits, as the LLM writes
        prompt_numbers = tokenizer(prompt)["input_numbers"]
        assert numbers == [*prompt_numbers, *[1.0] * (len(ids) - length)]  # values in the prompt, none after
        assert tokenizer.decode(ids[length:]) == completion
    assert rows["input_numbers"][0][:3] == [12.0, 1.0, 30.0]
    cut = tokenizer.encode_prompts_and_completions(["12 + 30 = "], ["424242"], max_length=6)
    assert len(cut["input_ids"][0]) == 6
    with pytest.raises(ValueError, match="example 0: its prompt is 5 tokens, max_length 5 leaves no room"):
        tokenizer.encode_prompts_and_completions(["12 + 30 = "], ["42"], max_length=5)
    with pytest.raises(ValueError, match="1 prompts but 2 completions"):
        tokenizer.encode_prompts_and_completions(["1 = "], ["1", "2"])


def test_the_tokenizer_keeps_number_output_through_save_and_refuses_it_with_a_text_scheme(
    folder: Path, tmp_path: Path
) -> None:
    _tokenizer(folder).save_pretrained(tmp_path)
    assert AutoTokenizer.from_pretrained(tmp_path).number_output == "digits"
    with pytest.raises(ValueError, match="'digits' only with \\[NUM\\] tokens"):
        NumberLlamaTokenizer.from_pretrained(folder, number_scheme="text", number_output="digits")
    with pytest.raises(ValueError, match="number_output='words' with number_scheme=None; allowed: num_token, digits"):
        NumberLlamaTokenizer.from_pretrained(folder, number_output="words")


def test_config_and_arguments_refuse_digits_out_where_nothing_reads_the_prompt_as_numbers(folder: Path) -> None:
    assert NumberGPT2Config(n_embd=32, n_layer=1, n_head=2).number_output == "num_token"
    with pytest.raises(ValueError, match="number_encoding='text' has none"):
        NumberGPT2Config(n_embd=32, n_layer=1, n_head=2, number_encoding="text", number_output="digits")
    with pytest.raises(ValueError, match="number_output=.words. is unknown; allowed: num_token, digits"):
        NumberTrainingArguments(number_output="words")
    text_on_a_pretrained = {"pretrained": str(folder), "backbone": "llama", "number_encoding": "text"}
    for bad in ({"number_encoding": "fone"}, text_on_a_pretrained):
        with pytest.raises(ValueError, match="number_output digits reads the prompt's numbers as \\[NUM\\]"):
            NumberTrainingArguments(number_output="digits", **bad)
    args = NumberTrainingArguments(pretrained=str(folder), backbone="llama", number_encoding="fone",
                                   number_output="digits", task="fone_arithmetic")  # fmt: skip
    assert args.number_token_loss == "ntl"  # it writes the LLM's digits: NTL by default, as for digit tokens
    NumberTokenLoss(_tokenizer(folder), 302, causal=True)  # scores the completion's digits


def test_a_dataset_tokenizes_to_prompt_numbers_then_answer_digits_and_long_answers_are_refused(folder: Path) -> None:
    tokenizer = _tokenizer(folder)
    rows = {"text": ["12 + 30 = 42"], "prompt": ["12 + 30 = "], "numbers": [[12.0, 30.0, 42.0]], "answer_index": [2]}
    dataset = DatasetDict({"train": Dataset.from_dict(rows), "test": Dataset.from_dict(rows)})
    tokenized = tokenize_dataset(dataset, tokenizer, max_length=16, end_with_eos=True)
    row = tokenized["test"][0]
    prompt = tokenizer("12 + 30 = ")["input_ids"]
    assert row["input_ids"][: row["prompt_length"]] == prompt and row["input_ids"][-1] == tokenizer.eos_token_id
    assert tokenizer.decode(row["input_ids"][row["prompt_length"] : -1]) == "42"
    check_answers_tokenized(dataset, tokenized, tokenizer, 16, end_with_eos=True)
    length = len(row["input_ids"])  # with the end-of-text token
    with pytest.raises(ValueError, match=f"train example 0: its prompt and answer are {length - 1} tokens, more than"):
        check_answers_tokenized(dataset, tokenized, tokenizer, length - 1, end_with_eos=True)
    with pytest.raises(ValueError, match="needs a task with a prompt column"):
        tokenize_dataset(DatasetDict({"train": Dataset.from_dict({"text": ["1 2"]})}), tokenizer, max_length=8)


def test_a_digits_out_run_trains_on_digits_and_its_model_writes_digits_only(folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("ntloss")
    args = NumberTrainingArguments(
        task="fone_arithmetic", backbone="llama", pretrained=str(folder), number_encoding="fone",
        number_output="digits", lora_r=4, max_steps=4, train_size=16, eval_size=4, per_device_train_batch_size=4,
        warmup_steps=1, logging_steps=2, disable_tqdm=True, use_cpu=True, output_dir=str(tmp_path / "run"),
    )  # fmt: skip
    run_training(args)
    history = json.loads((tmp_path / "run" / "log_history.json").read_text())
    assert all(r["number_loss"] > 0 for r in history if "loss" in r)  # NTL on the answers' digits
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["test"]["count"] == 4
    final = tmp_path / "run" / "final"
    assert "numbers in and digits out" in (final / "README.md").read_text()
    tokenizer, model = AutoTokenizer.from_pretrained(final), AutoModelForCausalLM.from_pretrained(final).eval()
    assert tokenizer.number_output == model.config.number_output == "digits"
    check_tokenizer_matches(model, tokenizer)
    with pytest.raises(ValueError, match="the tokenizer has number_output='num_token' but the model's config"):
        check_tokenizer_matches(model, NumberLlamaTokenizer.from_pretrained(final, number_output="num_token"))
    batch = tokenizer(["12 + 30 = ", "7 + 5 = "], padding=True, padding_side="left", return_tensors="pt")
    num_ids = tokenizer.num_token_ids
    head = model.get_output_embeddings().weight.data
    head[num_ids] = 50 * head[num_ids].sign()  # number tokens now tempt it
    sequences = model.generate(**batch, max_new_tokens=4, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    assert not torch.isin(sequences[:, batch["input_ids"].shape[1] :], torch.tensor(num_ids)).any()
    out = pipeline("number-generation", model=model, tokenizer=tokenizer)("12 + 30 = ", max_new_tokens=3)[0]
    assert out["generated_text"].startswith("12 + 30 = ") and "[NUM]" not in out["generated_text"]
