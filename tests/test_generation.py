"""Producing numbers: causal generation with fed-back values, masked LMs' mask filling, decoding to text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from model_helpers import (
    CAUSAL,
    ENCODINGS,
    MASK_ID,
    MASKED,
    NUM_IDS,
    PAD_ID,
    backbone_state,
    inputs_only,
    one_thread,
    random_batch,
    tiny_model,
)
from transformers import GPT2Config, GPT2LMHeadModel, LogitsProcessor, LogitsProcessorList

from hf_numbers import (
    NumberBertConfig,
    NumberBertForMaskedLM,
    NumberBertTokenizer,
    NumberGPT2ForCausalLM,
    NumberGPT2Tokenizer,
    format_number,
    get_encoding,
)

pytestmark = pytest.mark.smoke  # in the drift check's subset (scripts/check_latest.sh)


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


class ForceNumbers(LogitsProcessor):
    """Forces a number token whenever the sequence length is a multiple of 3, so that numbers get generated."""

    def __init__(self, num_ids: list[int]):
        self.num_ids = num_ids

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.shape[1] % 3:
            return scores
        forced = torch.full_like(scores, -float("inf"))
        forced[:, self.num_ids[input_ids.shape[1] % len(self.num_ids)]] = 0
        return forced


def left_padded_prompt() -> dict[str, torch.Tensor]:
    """Two prompts with numbers, the second two tokens shorter and left-padded."""
    ids = torch.tensor([[10, 98, 11, 12, 99, 13], [PAD_ID, PAD_ID, 20, 99, 21, 22]])
    numbers = torch.tensor([[1.0, 12.5, 1.0, 1.0, -3.25, 1.0], [1.0, 1.0, 1.0, 150.0, 1.0, 1.0]], dtype=torch.float64)
    attention_mask = (ids != PAD_ID).long()
    return {"input_ids": ids, "input_numbers": numbers, "attention_mask": attention_mask}


def generate(model: NumberGPT2ForCausalLM, prompt: dict[str, torch.Tensor], **kwargs):
    processors = LogitsProcessorList([ForceNumbers(model.config.num_token_ids)])
    return model.generate(
        **prompt, max_new_tokens=7, return_dict_in_generate=True, logits_processor=processors, **kwargs
    )


@pytest.mark.parametrize("backbone", CAUSAL)
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("do_sample", [False, True], ids=["greedy", "sample"])
@pytest.mark.parametrize("use_cache", [True, False], ids=["cache", "no-cache"])
def test_generate_returns_numbers_aligned_and_fed_back(
    backbone: str, encoding: str, do_sample: bool, use_cache: bool
) -> None:
    model = tiny_model(backbone, encoding).eval()
    prompt = left_padded_prompt()
    torch.manual_seed(0)
    out = generate(model, prompt, do_sample=do_sample, use_cache=use_cache)
    sequences, numbers = out.sequences, out.numbers
    assert numbers.shape == sequences.shape and numbers.dtype == torch.float64
    prompt_length = prompt["input_ids"].shape[1]
    assert torch.equal(sequences[:, :prompt_length], prompt["input_ids"])
    assert torch.equal(numbers[:, :prompt_length], prompt["input_numbers"])
    is_num = torch.isin(sequences, torch.tensor(NUM_IDS[backbone]))
    generated_num = is_num.clone()
    generated_num[:, :prompt_length] = False
    assert generated_num.sum() >= 4
    assert (numbers[:, prompt_length:][~is_num[:, prompt_length:]] == 1.0).all()
    # Teacher-forcing the result: each generated number is the head's prediction one step earlier, given the
    # earlier generated numbers as inputs (so they were fed back).
    attention_mask = torch.cat([prompt["attention_mask"], torch.ones_like(sequences[:, prompt_length:])], dim=1)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        full = model(sequences, input_numbers=numbers, attention_mask=attention_mask, position_ids=position_ids)
    rows, columns = generated_num.nonzero(as_tuple=True)
    predicted = full.number_predictions[rows, columns - 1]
    if get_encoding(encoding).continuous_output:
        assert torch.allclose(predicted, numbers[rows, columns], rtol=1e-4, atol=1e-6)
    else:
        assert torch.equal(predicted, numbers[rows, columns])


@pytest.mark.parametrize("backbone", CAUSAL)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_greedy_generation_is_the_same_with_and_without_cache(backbone: str, encoding: str) -> None:
    """With the KV cache, without it, and with transformers' static (fixed-size) cache, which compiled decoding
    uses (``bench_generation.py --cache static``)."""
    model = tiny_model(backbone, encoding).eval()
    uncached = generate(model, left_padded_prompt(), use_cache=False)
    for cache in ({}, {"cache_implementation": "static"}):
        cached = generate(model, left_padded_prompt(), use_cache=True, **cache)
        assert torch.equal(cached.sequences, uncached.sequences)
        assert torch.allclose(cached.numbers, uncached.numbers, rtol=1e-5)


@pytest.mark.parametrize("backbone", CAUSAL)
def test_generate_without_return_dict_gives_ids_and_rejects_what_it_cannot_track(backbone: str) -> None:
    model = tiny_model(backbone, "fone").eval()
    prompt = left_padded_prompt()
    ids = model.generate(**prompt, max_new_tokens=3)
    assert isinstance(ids, torch.Tensor) and ids.shape == (2, 9)
    with pytest.raises(ValueError, match="greedy search and sampling"):
        model.generate(**prompt, max_new_tokens=3, num_beams=2)
    with pytest.raises(ValueError, match="input_numbers is None"):
        model.generate(input_ids=prompt["input_ids"], attention_mask=prompt["attention_mask"], max_new_tokens=3)
    with pytest.raises(ValueError, match="input_numbers has shape"):
        model.generate(**prompt | {"input_numbers": prompt["input_numbers"][:, 1:]}, max_new_tokens=3)
    longer = torch.cat([prompt["input_numbers"], torch.ones(2, 2, dtype=torch.float64)], dim=1)  # 2 values too many
    for return_dict in (False, True):
        with pytest.raises(ValueError, match="input_numbers has shape"):
            model.generate(**prompt | {"input_numbers": longer}, max_new_tokens=3, return_dict_in_generate=return_dict)


@pytest.mark.parametrize("backbone", CAUSAL)
def test_forward_without_the_number_head_keeps_what_it_reads(backbone: str) -> None:
    """generate skips the number head at steps that chose no number token: the hidden states it keeps give the
    same values later."""
    model = tiny_model(backbone, "fone").eval()
    batch = random_batch(backbone)
    inputs = inputs_only(batch)
    with torch.no_grad():
        full, lazy = model(**inputs), model(**inputs, number_head=False)
        assert lazy.number_predictions is None and torch.equal(lazy.logits, full.logits)
        assert torch.equal(model._number_head(lazy.head_hidden_states)[1], full.number_predictions)
    with pytest.raises(ValueError, match="number_head=False"):
        model(**batch, number_head=False)  # with labels
    with pytest.raises(ValueError, match="number_head=False"):
        tiny_model(MASKED[0], "fone")(**inputs_only(random_batch(MASKED[0])), number_head=False)


@pytest.mark.parametrize("backbone", MASKED)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fill_mask_fills_tokens_and_numbers(backbone: str, encoding: str) -> None:
    model = tiny_model(backbone, encoding).eval()
    batch = random_batch(backbone)
    masked = batch["input_ids"] == MASK_ID
    head_bias = model.get_output_embeddings().bias
    for number_bias in (0.0, 50.0):  # untouched head: words are filled; a strong [NUM] bias: numbers are
        with torch.no_grad():
            head_bias[NUM_IDS[backbone][0]] = number_bias
            out = model(input_ids=batch["input_ids"], input_numbers=batch["input_numbers"])
        ids, numbers = model.fill_mask(batch["input_ids"], batch["input_numbers"], mask_token_id=MASK_ID)
        assert torch.equal(ids[~masked], batch["input_ids"][~masked])
        assert torch.equal(numbers[~masked], batch["input_numbers"][~masked])
        assert torch.equal(ids[masked], out.logits.argmax(-1)[masked])
        filled_num = masked & torch.isin(ids, torch.tensor(NUM_IDS[backbone]))
        assert torch.equal(numbers[filled_num], out.number_predictions[filled_num])
        assert (numbers[masked & ~filled_num] == 1.0).all()
        assert torch.equal(filled_num, masked) == bool(number_bias)


# ---------------------------------------------------------------------- with the real tokenizers
def test_plain_gpt2_checkpoint_to_generated_text(plain_tokenizer_dirs: dict[str, Path], tmp_path: Path) -> None:
    """tokenize -> model (from a plain GPT-2 checkpoint) -> loss -> generate with numbers -> decode."""
    tokenizer = NumberGPT2Tokenizer.from_pretrained(plain_tokenizer_dirs["gpt2"], padding_side="left")
    tokenizer.pad_token = tokenizer.eos_token
    torch.manual_seed(0)
    plain_vocab = len(tokenizer) - len(tokenizer.num_token_ids)
    GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=plain_vocab)).save_pretrained(tmp_path)
    plain = GPT2LMHeadModel.from_pretrained(tmp_path)
    model = NumberGPT2ForCausalLM.from_pretrained_backbone(tmp_path, tokenizer, number_encoding="fone").eval()
    state = backbone_state(model)
    for name, weight in plain.state_dict().items():
        assert torch.equal(state[name][: weight.shape[0]], weight), name
    digit_proj = model.number_encoding.digit_proj.weight  # new parameters get their own initialisation
    assert torch.equal(digit_proj, torch.eye(*digit_proj.shape))
    batch = tokenizer(["x = 3.5, y = -2 and", "a 12"], padding=True, return_tensors="pt")
    assert torch.isfinite(
        model(**batch, labels=batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)).loss
    )
    out = model.generate(
        **batch,
        max_new_tokens=6,
        return_dict_in_generate=True,
        pad_token_id=tokenizer.pad_token_id,
        logits_processor=LogitsProcessorList([ForceNumbers(tokenizer.num_token_ids)]),
    )
    texts = [
        text.replace(tokenizer.pad_token, "")
        for text in tokenizer.batch_decode(out.sequences, input_numbers=out.numbers)
    ]
    assert texts[0].startswith("x = 3.5, y = -2 and") and texts[1].startswith("a 12")
    generated = torch.isin(out.sequences, torch.tensor(tokenizer.num_token_ids))
    generated[:, : batch["input_ids"].shape[1]] = False
    for row, text in enumerate(texts):
        for value in out.numbers[row][generated[row]].tolist():
            assert format_number(value) in text


def test_bert_fill_mask_to_text(plain_tokenizer_dirs: dict[str, Path]) -> None:
    tokenizer = NumberBertTokenizer.from_pretrained(plain_tokenizer_dirs["bert"])
    torch.manual_seed(0)
    config = NumberBertConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        vocab_size=len(tokenizer),
        num_token_id=tokenizer.num_token_id,
        number_encoding="exponent",
    )
    model = NumberBertForMaskedLM(config).eval()
    with torch.no_grad():
        model.language_model.cls.predictions.bias[tokenizer.num_token_id] += 50.0  # the fill is a number
    batch = tokenizer(["it was 21.5 degrees and [MASK] people came"], return_tensors="pt")
    ids, numbers = model.fill_mask(**batch, mask_token_id=tokenizer.mask_token_id)
    position = (batch["input_ids"][0] == tokenizer.mask_token_id).nonzero().item()
    assert ids[0, position] == tokenizer.num_token_id
    text = tokenizer.decode(ids[0], input_numbers=numbers[0])
    assert f"it was 21.5 degrees and {format_number(numbers[0, position].item())} people came" in text
