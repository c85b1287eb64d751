"""Units first (``text_digit_order="units_first"``): the model reads and writes every number's digits units first.

What it promises: the tokenizer gives the backbone each number's mantissa reversed (sign in front, exponent behind)
and ``decode`` turns them back, so texts in and out read as usual; the value-aware digits module reads such a run
as the number's lowest digits; a model and a tokenizer that disagree on the order are refused, as are the orders
and encodings that cannot work.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from model_helpers import DIGIT_ENCODINGS, last_line_without_hf_numbers, tiny_config, tiny_model

from hf_numbers import check_tokenizer_matches
from hf_numbers.data import train_number_tokenizer
from hf_numbers.modeling import find_numbers
from hf_numbers.modeling.parsing import units_first

TEXTS = ["313336 + 511116 = 824452", "low -46.98 C at 1250 m, 1.5e-3 of x2 (H2O, v1.2.3)", "0 + 100 = 100"]
DIGIT, SPACED, TWELVE, WORD = 10, 20, 30, 40  # "0".."9" from 10, " 0".." 9" from 20, "12", a word


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, object]:
    """The same trained byte-level vocabulary, as written and units first."""
    return {order: train_number_tokenizer(TEXTS * 20, "gpt2", vocab_size=300, number_scheme="text",
                                          digit_order=order) for order in ("as_written", "units_first")}  # fmt: skip


@pytest.mark.parametrize(
    ("literal", "written"),
    [("1250", "0521"), ("-46.98", "-89.64"), ("+7", "+7"), ("1.5e-3", "5.1e-3"), ("12E+4", "21E+4"), ("0.5", "5.0")],
)
def test_units_first_reverses_the_mantissa_and_undoes_itself(literal: str, written: str) -> None:
    assert units_first(literal) == written and units_first(written) == literal


def test_a_leading_dot_decimal_gets_its_zero() -> None:
    assert units_first(".5") == "5.0" and units_first("-.25") == "-52.0"


def test_the_model_sees_the_digits_units_first_and_decoding_turns_them_back(tokenizers: dict) -> None:
    plain, reversed_ = tokenizers["as_written"], tokenizers["units_first"]
    for text in TEXTS:
        flipped = text
        for number in reversed(find_numbers(text)):
            flipped = flipped[: number.start] + units_first(text[number.start : number.end]) + flipped[number.end :]
        ids = reversed_(text)["input_ids"]
        assert ids == plain(flipped)["input_ids"]  # the backbone's own tokens of the reversed text
        assert reversed_.decode(ids) == text and reversed_.batch_decode([ids]) == [text]
    assert reversed_.decode(reversed_("x .5")["input_ids"]) == "x 0.5"  # same value, its zero written


def test_offsets_point_at_the_numbers_in_the_original_text(tokenizers: dict) -> None:
    text = TEXTS[0]
    encoded = tokenizers["units_first"](text, return_offsets_mapping=True)
    spans = {(n.start, n.end) for n in find_numbers(text)}
    tokens = encoded.tokens()
    for token, (start, end) in zip(tokens, encoded["offset_mapping"]):
        if token.strip("Ġ").isdigit():
            assert any(s <= start and end <= e for s, e in spans), (token, start, end)


def test_the_order_is_saved_with_the_tokenizer(tokenizers: dict, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tokenizers["units_first"].save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded.digit_order == "units_first" and loaded.decode(loaded(TEXTS[0])["input_ids"]) == TEXTS[0]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"number_scheme": "text", "digit_order": "backwards"}, r"digit_order='backwards'.*as_written, units_first"),
        ({"number_scheme": "p10", "digit_order": "units_first"}, r"units_first' only with number_scheme='text'"),
        ({"digit_order": "units_first"}, r"units_first' only with number_scheme='text'"),
    ],
)
def test_an_order_that_cannot_work_is_refused(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        train_number_tokenizer(TEXTS, "gpt2", vocab_size=300, **options)


def test_a_number_whose_reversed_mantissa_overflows_is_refused_by_name(tokenizers: dict) -> None:
    with pytest.raises(ValueError, match=r"'9\.99e307' written units first, '99\.9e307', overflows"):
        tokenizers["units_first"]("x = 9.99e307")


@pytest.mark.parametrize(
    ("encoding", "order", "message"),
    [("text", "backwards", r"text_digit_order='backwards'"),
     ("p10", "units_first", r"text_digit_order is an option of text, digits, not of number_encoding='p10'")],
)
def test_a_config_with_an_order_its_encoding_cannot_take_is_refused(encoding: str, order: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tiny_config("llama", encoding, text_digit_order=order)


def test_a_model_and_a_tokenizer_that_disagree_on_the_order_are_refused(tokenizers: dict) -> None:
    config = tiny_config("gpt2", "text", text_digit_order="units_first", vocab_size=len(tokenizers["as_written"]))
    check_tokenizer_matches(config, tokenizers["units_first"])
    with pytest.raises(ValueError, match=r"'digit_order': 'as_written'.*'digit_order': 'units_first'"):
        check_tokenizer_matches(config, tokenizers["as_written"])


def test_value_aware_digits_read_a_units_first_run_as_the_numbers_low_digits() -> None:
    module = tiny_model("llama", DIGIT_ENCODINGS[0], digits_places=3, text_digit_order="units_first").digit_values
    ids = torch.tensor([[SPACED + 3, DIGIT + 1, DIGIT + 2, WORD, TWELVE, DIGIT + 5, WORD, DIGIT + 7, DIGIT + 4]])
    prefix, read, _ = module.read_runs(ids)
    # " 3 1 2" is 213 read units first; "12" then "5" is 5 21 = 521; past 3 places nothing more is added
    assert prefix.tolist() == [[3, 13, 213, 0, 21, 521, 0, 7, 47]]
    assert read.tolist() == [[1, 2, 3, 0, 2, 3, 0, 1, 2]]
    for position in range(1, ids.shape[1]):  # what is added at a token depends only on the tokens up to it
        changed = ids.clone()
        changed[0, position] = WORD + 1
        assert torch.equal(module.features(ids)[:, :position], module.features(changed)[:, :position]), position


def test_the_generation_pipeline_writes_the_numbers_back_in_their_usual_order(tokenizers: dict) -> None:
    from transformers import pipeline

    from hf_numbers import BACKBONES

    tokenizer, spec = tokenizers["units_first"], BACKBONES["gpt2"]
    config = spec.new_config(tokenizer, hidden_size=32, num_layers=1, num_heads=2, max_length=64,
                             number_encoding="text", text_digit_order="units_first")  # fmt: skip
    model = spec.model_class(config).eval()
    prompt, lengths = "313336 + 511116 =", []
    written = [tokenizer.convert_tokens_to_ids(t) for t in ("Ġ", "2", "5", "4")] + [tokenizer.eos_token_id]

    def units_first_answer(batch: int, ids: torch.Tensor) -> list[int]:  # the model writes " 254", units first
        lengths.append(len(ids))
        return [written[min(len(ids) - lengths[0], 4)]]

    out = pipeline("number-generation", model=model, tokenizer=tokenizer)(
        prompt, max_new_tokens=5, prefix_allowed_tokens_fn=units_first_answer
    )[0]
    assert out == {"generated_text": prompt + " 452", "numbers": [452.0]}


def test_a_units_first_checkpoint_reads_and_writes_the_same_with_remote_code(tmp_path: Path) -> None:
    import json

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hf_numbers.training import NumberTrainingArguments, run_training

    args = NumberTrainingArguments(
        task="fone_arithmetic", backbone="llama", number_encoding="digits", text_digit_order="units_first",
        max_steps=2, train_size=16, eval_size=4, hidden_size=32, num_layers=1, num_heads=2, vocab_size=300,
        per_device_train_batch_size=4, warmup_steps=1, eval_steps=0, save_steps=0, disable_tqdm=True, use_cpu=True,
        output_dir=str(tmp_path / "run"),
    )  # fmt: skip
    final = run_training(args)["final_dir"]
    code = (
        "import json, torch\n"
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        "tok = AutoTokenizer.from_pretrained(sys.argv[1], trust_remote_code=True)\n"
        "model = AutoModelForCausalLM.from_pretrained(sys.argv[1], trust_remote_code=True)\n"
        "ids = tok(sys.argv[2], return_tensors='pt')['input_ids']\n"
        "print(json.dumps([ids[0].tolist(), tok.decode(ids[0]), model(input_ids=ids).logits.sum().item()]))\n"
    )
    text = "313336 + 511116 = 824452"
    remote_ids, remote_text, remote_logits = json.loads(last_line_without_hf_numbers(code, final, text, cwd=tmp_path))
    tokenizer, model = AutoTokenizer.from_pretrained(final), AutoModelForCausalLM.from_pretrained(final)
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    assert remote_ids == ids[0].tolist() and remote_text == tokenizer.decode(ids[0])
    assert remote_logits == pytest.approx(model(input_ids=ids).logits.sum().item(), rel=1e-5)
