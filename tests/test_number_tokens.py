"""What a ``[NUM]`` model writes reads back as itself (``NumberTokensForNumbers``, on by default in the pipeline).

The oracle is the tokenizer's own parser: the numbers ``find_numbers`` reads in the decoded continuation must be
the number tokens the model wrote, with their values. Models are pushed towards digit and number tokens (a
logits processor adds to their scores), where the backbone's digits would otherwise slip in.
"""

from __future__ import annotations

import pytest
import torch
from model_helpers import needs_smollm2
from transformers import LogitsProcessor, LogitsProcessorList, pipeline

from hf_numbers import BACKBONES, NumberLlamaForCausalLM, NumberLlamaTokenizer, find_numbers
from hf_numbers.data import train_number_tokenizer
from hf_numbers.modeling.generation_number_tokens import NumberTokensForNumbers
from hf_numbers.modeling.tokenization_helpers import token_texts

CORPUS = ["Water is H2O, x2 and v1 at 12.5 degrees, (3 apples) and 7 pears: 4.5%", "a1 b_2 c=3 d.4"] * 30
PROMPT = "Water is H2O, x2 and"

pytestmark = pytest.mark.smoke  # in the drift check (scripts/check_latest.sh): generation, PEFT and loading move


class Towards(LogitsProcessor):
    """Adds ``boost`` to the scores of ``ids`` (digit and number tokens), so that they are chosen often, and bans
    ``banned`` (lone bytes of no valid UTF-8 text, which decoding would merge with their neighbours)."""

    def __init__(self, ids: list[int], boost: float, banned: list[int]) -> None:
        self.ids, self.boost, self.banned = ids, boost, banned

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        scores = scores.clone()
        scores[:, self.ids] += self.boost
        scores[:, self.banned] = -torch.inf
        return scores


def tiny(backbone: str):
    spec = BACKBONES[backbone]
    tokenizer = train_number_tokenizer(CORPUS, backbone, vocab_size=300)
    config = spec.new_config(tokenizer, hidden_size=32, num_layers=1, num_heads=2, max_length=128,
                             number_encoding="fone", fone_int_digits=3, fone_frac_digits=1)  # fmt: skip
    torch.manual_seed(0)
    return spec.model_class(config).eval(), tokenizer


def pushed(tokenizer) -> Towards:
    texts = token_texts(tokenizer)
    digits = [i for i, text in texts.items() if text.lstrip()[:1].isdigit()]
    return Towards([*digits, *tokenizer.num_token_ids], 4.0, [i for i, text in texts.items() if "\ufffd" in text])


def read_back(tokenizer, sequences: torch.Tensor, numbers: torch.Tensor, start: int) -> tuple[list, list]:
    """(values of the number tokens written, values the parser reads in the decoded continuation) for each row."""
    written, read = [], []
    for ids, values in zip(sequences, numbers):
        full = tokenizer.decode(ids, input_numbers=values, skip_special_tokens=True)
        prompt = tokenizer.decode(ids[:start], input_numbers=values[:start], skip_special_tokens=True)
        assert full.startswith(prompt)
        is_num = tokenizer.number_mask(ids[start:])
        written.append([round(abs(v), 1) for v in values[start:][is_num].tolist()])
        read.append([round(abs(span.value), 1) for span in find_numbers(full) if span.start >= len(prompt)])
    return written, read


@pytest.mark.parametrize("backbone", [name for name, spec in BACKBONES.items() if spec.causal])
def test_sampled_text_reads_back_with_the_numbers_written(backbone: str) -> None:
    model, tokenizer = tiny(backbone)
    batch = tokenizer([PROMPT] * 8, return_tensors="pt")
    start = batch["input_ids"].shape[1]
    results = {}
    for only in (True, False):
        processors = [pushed(tokenizer), *([NumberTokensForNumbers(tokenizer)] if only else [])]
        torch.manual_seed(1)
        out = model.generate(**batch, max_new_tokens=30, do_sample=True,
                             logits_processor=LogitsProcessorList(processors), return_dict_in_generate=True,
                             pad_token_id=tokenizer.pad_token_id)  # fmt: skip
        results[only] = read_back(tokenizer, out.sequences, out.numbers, start)
    written, read = results[True]
    assert sum(map(len, written)) > 8 and written == read
    written, read = results[False]  # without it the backbone's digits slip in: numbers without values
    assert written != read


def test_the_pipeline_writes_numbers_as_number_tokens_unless_told_otherwise() -> None:
    model, tokenizer = tiny("llama")
    pipe = pipeline("number-generation", model=model, tokenizer=tokenizer)
    for only in (True, False):
        torch.manual_seed(2)
        [out] = pipe(PROMPT, max_new_tokens=30, do_sample=True, logits_processor=[pushed(tokenizer)],
                     number_tokens_only=only)  # fmt: skip
        spans = find_numbers(out["generated_text"])
        read = [round(abs(span.value), 1) for span in spans if span.start >= len(PROMPT)]
        assert (read == [round(abs(v), 1) for v in out["numbers"]]) is only, out


@needs_smollm2
def test_smollm2_adapted_with_fone_answers_with_a_number_token(smollm2_dir) -> None:
    tokenizer = NumberLlamaTokenizer.from_pretrained(smollm2_dir)
    model = NumberLlamaForCausalLM.from_pretrained_backbone(smollm2_dir, tokenizer, number_encoding="fone")
    pipe = pipeline("number-generation", model=model.eval(), tokenizer=tokenizer)
    [out] = pipe("12 + 30 = ", max_new_tokens=4, return_full_text=False)  # untrained: the value is arbitrary
    assert out["numbers"] and [span.value for span in find_numbers(out["generated_text"])] == out["numbers"]
