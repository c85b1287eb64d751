"""Value-aware digits (``digits``): the backbone's own digit tokens plus a value embedding that starts at zero.

What it promises: before training the model's outputs are the plain backbone's; what is added at a token depends
only on the tokens up to it (teacher forcing sees what generation sees); generation with a KV cache reads digit
runs on across steps; checkpoints, LoRA and the CLI carry the module; bad tables and checkpoints are refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from model_helpers import (
    CAUSAL,
    DIGIT_ENCODINGS,
    DIGIT_MATRIX,
    backbone_config,
    backbone_state,
    needs_smollm2,
    tiny_config,
    tiny_model,
)
from safetensors.torch import load_file, save_file

from hf_numbers import BACKBONES, NumberLlamaForCausalLM, NumberLlamaTokenizer
from hf_numbers.data import train_number_tokenizer
from hf_numbers.modeling.encoding_digits import DigitValueEmbedding, digit_token_table
from hf_numbers.modeling.modeling_outputs import CACHE_NAME
from hf_numbers.training.arguments import PRETRAINED_RECIPE

EVERY_PAIR = pytest.mark.parametrize("backbone,encoding", DIGIT_MATRIX)
DIGIT = {d: 10 + d for d in range(10)}  # "0".."9" in the tiny vocabulary (model_helpers.DIGIT_TOKENS)
SPACED = {d: 20 + d for d in range(10)}  # " 0".." 9"
TWELVE, WORD = 30, 40  # "12", and a word

pytestmark = pytest.mark.smoke  # in the drift check (scripts/check_latest.sh): generation, PEFT and loading move


def ids_of(*tokens: int) -> torch.Tensor:
    return torch.tensor([tokens])


def digit_batch(backbone: str) -> dict[str, torch.Tensor]:
    """Words and digit runs: `` 3 1 3 word 12 5 word 9 0 0 0 0 0 0 0 0 0 0 7``, twice."""
    ids = ids_of(SPACED[3], DIGIT[1], DIGIT[3], WORD, TWELVE, DIGIT[5], WORD + 1, SPACED[9], *[DIGIT[0]] * 10, DIGIT[7])
    ids = ids.repeat(2, 1)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def test_digit_runs_are_read_from_the_ids_alone() -> None:
    module = DigitValueEmbedding(tiny_config("llama", DIGIT_ENCODINGS[0], digits_places=4))
    prefix, read, is_digit = module.read_runs(digit_batch("llama")["input_ids"][:1])
    # a space starts a run, a word ends it, "12" counts two digits, runs longer than 4 places keep the last 4
    assert prefix[0].tolist() == [3, 31, 313, 0, 12, 125, 0, 9, 90, 900, 9000, 0, 0, 0, 0, 0, 0, 0, 7]
    assert read[0].tolist() == [1, 2, 3, 0, 2, 3, 0, 1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4]
    assert is_digit[0].tolist() == [True] * 3 + [False, True, True, False] + [True] * 12
    after = module.read_runs(ids_of(DIGIT[4], SPACED[5], DIGIT[6]))[0]  # " 5" starts a new run after "4"
    assert after.tolist() == [[4, 5, 56]]


@EVERY_PAIR
def test_a_zero_started_model_gives_the_plain_backbones_outputs(backbone: str, encoding: str) -> None:
    model = tiny_model(backbone, encoding, digits_zero_start=True).eval()
    plain = BACKBONES[backbone].plain_model_class(backbone_config(model)).eval()
    plain.load_state_dict(backbone_state(model))  # strict: every weight of the plain model
    assert len(model.state_dict()) == len(backbone_state(model)) + 1  # and the projection: digit_values.proj
    batch = digit_batch(backbone)
    with torch.no_grad():
        assert torch.equal(model(**batch).logits, plain(**batch).logits)
        model.digit_values.proj.weight.normal_()
        assert not torch.equal(model(**batch).logits, plain(**batch).logits)  # the module does act once trained


@EVERY_PAIR
def test_what_is_added_at_a_token_depends_only_on_the_tokens_before_it(backbone: str, encoding: str) -> None:
    module = tiny_model(backbone, encoding).digit_values
    ids = digit_batch(backbone)["input_ids"]
    for position in range(1, ids.shape[1]):
        changed = ids.clone()
        changed[:, position] = DIGIT[(position + 3) % 10] if ids[0, position] != DIGIT[(position + 3) % 10] else WORD
        before, after = module.features(ids), module.features(changed)
        assert torch.equal(before[:, :position], after[:, :position]), position


@pytest.mark.parametrize("backbone", CAUSAL)
def test_a_causal_model_never_sees_a_later_digit(backbone: str) -> None:
    model = tiny_model(backbone, DIGIT_ENCODINGS[0]).eval()
    ids = digit_batch(backbone)["input_ids"]
    changed = ids.clone()
    changed[:, 9] = DIGIT[4]  # the 3rd digit of the long run
    with torch.no_grad():
        before, after = model(input_ids=ids).logits, model(input_ids=changed).logits
    assert torch.equal(before[:, :9], after[:, :9]) and not torch.equal(before[:, 9:], after[:, 9:])


def test_the_ramps_of_two_numbers_sum_above_zero_where_their_sum_carries() -> None:
    module = DigitValueEmbedding(tiny_config("llama", DIGIT_ENCODINGS[0], digits_places=4, digits_features="ramp"))
    ramps = module.features(ids_of(SPACED[3], DIGIT[1], DIGIT[3]))[0]  # 3, 31, 313: value mod 10^k over 10^k, - 1/2
    assert torch.allclose(ramps[2], torch.tensor([0.3, 0.13, 0.313, 0.0313], dtype=torch.float64) - 0.5)
    generator = torch.Generator().manual_seed(0)
    for a, b in torch.randint(0, 10_000, (50, 2), generator=generator).tolist():
        last = [module.features(ids_of(*[DIGIT[int(d)] for d in str(n).zfill(4)]))[0, -1] for n in (a, b)]
        carries = [(a % 10**k + b % 10**k) >= 10**k for k in range(1, 5)]
        margin = 0.5 / 10 ** torch.arange(1, 5)  # without a carry the sum is at most -1/10^k; a sum of 10^k gives 0
        assert ((last[0] + last[1]) > -margin).tolist() == carries, (a, b)


def given_features(module: DigitValueEmbedding, a: int, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The features of the prompt ``a word b word``, given whole: those at a's digits and at b's, units last."""
    digits_a, digits_b = [[DIGIT[int(d)] for d in str(n)] for n in (a, b)]
    ids = ids_of(*digits_a, WORD, *digits_b, WORD + 1)
    features = module.features(ids, prompt_length=ids.shape[1])[0]
    return features[: len(digits_a)], features[len(digits_a) + 1 : -1]


def test_the_ramps_below_two_given_numbers_sum_above_zero_where_their_sum_carries() -> None:
    module = DigitValueEmbedding(tiny_config("llama", DIGIT_ENCODINGS[0], digits_places=6, digits_features="below"))
    at_a, _ = given_features(module, 3137, 5)
    expected = [[0.137, 0.37, 0.7, 0.0], [0.37, 0.7, 0.0], [0.7, 0.0], [0.0]]  # the digits under 3, 1, 3, 7
    for features, ramps in zip(at_a, expected, strict=True):
        torch.testing.assert_close(features[: len(ramps)], torch.tensor(ramps, dtype=torch.float64) - 0.5)
        assert not features[len(ramps) :].any()
    generator = torch.Generator().manual_seed(0)
    for a, b in torch.randint(0, 100_000, (50, 2), generator=generator).tolist():
        at_a, at_b = given_features(module, a, b)
        for place in range(min(len(at_a), len(at_b))):  # the first feature at each place: its digits under it
            carries = (a % 10**place + b % 10**place) >= 10**place
            total = at_a[-1 - place][0] + at_b[-1 - place][0]
            assert bool(total > -0.5 / 10**place) == carries, (a, b, place)  # no carry: at most -1/10^place


def test_below_reads_only_the_numbers_the_prompt_gives_whole() -> None:
    module = DigitValueEmbedding(tiny_config("llama", DIGIT_ENCODINGS[0], digits_places=4, digits_features="below"))
    ids = ids_of(DIGIT[1], DIGIT[2], WORD, DIGIT[3], DIGIT[4], WORD, DIGIT[5], DIGIT[6])
    reads = {given: module.features(ids, prompt_length=given)[0, :, 0].tolist() for given in (0, 3, 5, 6, 8)}
    reads = {given: [round(x, 9) for x in read] for given, read in reads.items()}
    assert reads[0] == [0.0] * 8  # nothing given: nothing read ahead
    assert reads[3] == reads[5] == [-0.3, -0.5] + [0.0] * 6  # 12 ends before the token after it is given
    assert reads[6] == reads[8] == [-0.3, -0.5, 0.0, -0.1, -0.5, 0.0, 0.0, 0.0]  # 56 may go on: not whole
    long = module.features(ids_of(*[DIGIT[7]] * 4, WORD), prompt_length=5)  # 4 places' digits: not held whole
    assert not long.any()


def test_the_log_part_gives_a_given_numbers_mantissa_whose_sum_is_a_products() -> None:
    module = DigitValueEmbedding(tiny_config("llama", DIGIT_ENCODINGS[0], digits_places=6, digits_features="log"))
    at_a, at_b = given_features(module, 250, 4)
    harmonics = torch.arange(1, 7, dtype=torch.float64)
    for features, number in ((at_a, 250), (at_b, 4)):  # every digit of a number: the number's mantissa
        angles = 2 * torch.pi * harmonics * (torch.tensor(number, dtype=torch.float64).log10() % 1)
        torch.testing.assert_close(features, torch.cat([angles.cos(), angles.sin()]).expand_as(features))
    generator = torch.Generator().manual_seed(0)
    for a, b in torch.randint(1, 1000, (50, 2), generator=generator).tolist():
        (cos_a, sin_a), (cos_b, sin_b) = ((part[0, 0], part[0, 6]) for part in given_features(module, a, b))
        mantissa = torch.atan2(sin_a * cos_b + cos_a * sin_b, cos_a * cos_b - sin_a * sin_b) / (2 * torch.pi) % 1
        leading = int(10 ** float(mantissa) + 1e-9)  # the angle sum's leading digit
        assert leading == int(str(a * b)[0]), (a, b)


def test_the_log_part_reads_only_whole_given_numbers_above_zero() -> None:
    module = DigitValueEmbedding(tiny_config("llama", DIGIT_ENCODINGS[0], digits_places=4, digits_features="log"))
    ids = ids_of(DIGIT[1], DIGIT[2], WORD, DIGIT[0], WORD, DIGIT[5], DIGIT[6])
    read = {given: module.features(ids, prompt_length=given)[0, :, 0] for given in (0, 3, 7)}
    assert not read[0].any()  # nothing given: nothing read ahead
    twelve = (2 * torch.pi * (torch.tensor(12.0, dtype=torch.float64).log10() % 1)).cos()
    torch.testing.assert_close(read[3][:2], twelve.expand(2))
    assert not read[3][2:].any()  # 0 has no mantissa; 56 is not given
    assert not read[7][3:].any()  # 56 may go on: not whole
    assert not module.features(ids_of(*[DIGIT[7]] * 4, WORD), prompt_length=5).any()  # 4 places: not held whole


def test_the_column_part_gives_digits_of_one_place_one_feature_whatever_the_numbers_lengths() -> None:
    module = DigitValueEmbedding(tiny_config("llama", DIGIT_ENCODINGS[0], digits_places=6, digits_features="column"))
    at_a, at_b = given_features(module, 31375, 62)
    assert at_a.argmax(-1).tolist() == [4, 3, 2, 1, 0] and at_b.argmax(-1).tolist() == [1, 0]  # counted from the units
    torch.testing.assert_close(at_a[-2:], at_b)  # the tens and units of both numbers: the same features
    assert (at_a.sum(-1) == 1).all()
    ids = ids_of(DIGIT[1], DIGIT[2], WORD, DIGIT[5], DIGIT[6])
    assert module.features(ids, prompt_length=4)[0, :3].argmax(-1).tolist() == [1, 0, 0]
    assert not module.features(ids, prompt_length=4)[0, 2:].any()  # 56 may go on (and a word has none): not given
    assert not module.features(ids, prompt_length=0).any()  # nothing given: nothing read ahead
    assert not module.features(ids_of(*[DIGIT[7]] * 6, WORD), prompt_length=7).any()  # 6 places: not held whole


@pytest.mark.parametrize("backbone", CAUSAL)
@pytest.mark.parametrize("part", ["below", "log", "column"])
def test_parts_reading_given_numbers_see_in_training_what_generation_sees(backbone: str, part: str) -> None:
    model = tiny_model(backbone, DIGIT_ENCODINGS[0], digits_features=f"fone+place+{part}").eval()
    with torch.no_grad():
        model.digit_values.proj.weight.normal_(std=5.0)  # large enough that reading ahead would show
    prompt = ids_of(SPACED[3], DIGIT[1], WORD, SPACED[7], DIGIT[4], WORD + 1, SPACED[2]).repeat(2, 1)
    for use_cache in (True, False):
        out = model.generate(input_ids=prompt, max_new_tokens=5, do_sample=False, output_logits=True,
                             use_cache=use_cache, return_dict_in_generate=True, pad_token_id=0)  # fmt: skip
        labels = out.sequences.clone()
        labels[:, : prompt.shape[1]] = -100  # the answer alone carries the loss, as the collator masks it
        with torch.no_grad():
            taught = model(input_ids=out.sequences, labels=labels).logits[:, prompt.shape[1] - 1 : -1]
            unlabelled = model(input_ids=out.sequences).logits[:, prompt.shape[1] - 1 : -1]
        torch.testing.assert_close(torch.stack(out.logits, 1), taught, rtol=1e-5, atol=1e-5)
        assert not torch.allclose(taught, unlabelled)  # the prompt's numbers were read whole
    changed = out.sequences.clone()
    last = int(changed[0, -2])
    changed[:, -2] = DIGIT[(last - DIGIT[0] + 1) % 10] if last in DIGIT.values() else DIGIT[5]
    with torch.no_grad():  # a later answer token changes no earlier logits
        later = model(input_ids=changed, labels=labels).logits
    assert torch.equal(later[:, :-2], model(input_ids=out.sequences, labels=labels).logits[:, :-2])


@pytest.mark.parametrize("backbone", CAUSAL)
def test_cached_generation_reads_digit_runs_on_across_steps(backbone: str) -> None:
    model = tiny_model(backbone, DIGIT_ENCODINGS[0]).eval()
    with torch.no_grad():
        model.digit_values.proj.weight.mul_(50)  # large enough that a wrong run changes what is generated
    prompt = digit_batch(backbone)["input_ids"][:, :10]  # ends inside a digit run
    out = model.generate(input_ids=prompt, max_new_tokens=6, do_sample=False, output_logits=True,
                         return_dict_in_generate=True, pad_token_id=0)  # fmt: skip
    with torch.no_grad():
        full = model(input_ids=out.sequences).logits[:, prompt.shape[1] - 1 : -1]
    torch.testing.assert_close(torch.stack(out.logits, 1), full, rtol=1e-5, atol=1e-5)  # cache vs no cache


@pytest.mark.parametrize("backbone", CAUSAL)
def test_a_cached_step_without_the_ids_before_it_is_refused(backbone: str) -> None:
    model = tiny_model(backbone, DIGIT_ENCODINGS[0]).eval()
    ids = digit_batch(backbone)["input_ids"]
    with torch.no_grad():
        cache = getattr(model(input_ids=ids[:, :5], use_cache=True), CACHE_NAME)
        with pytest.raises(ValueError, match="pass digit_context"):
            model(input_ids=ids[:, 5:6], use_cache=True, **{CACHE_NAME: cache})
        model(input_ids=ids[:, 5:6], use_cache=True, digit_context=ids[:, :5], **{CACHE_NAME: cache})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"digit_tokens": None}, r"needs config\.digit_tokens"),
        ({"digit_tokens": [[500, 1, 1, 1]]}, r"row \[500, 1, 1, 1\] is not \[token id in \[0, 100\)"),
        ({"digit_tokens": [[5, 1, 0, 1]]}, r"digits >= 1"),
        ({"digits_features": "abacus"}, r"'abacus' is unknown; allowed: one or more of fone, place, ramp"),
        ({"digits_features": "fone+fone"}, r"digits_features='fone\+fone' is unknown"),
        ({"digits_places": 19}, r"digits_places must be in \[1, 18\], got 19"),
        ({"digits_features": "below", "text_digit_order": "units_first"}, r"'below' describes the digits written"),
        ({"digits_features": "place+column", "text_digit_order": "units_first"}, r"'column' describes the digits"),
    ],
)
def test_a_bad_digits_config_is_refused_naming_the_field(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tiny_config("llama", DIGIT_ENCODINGS[0], **fields)


def test_a_checkpoint_without_the_value_weights_is_refused(tmp_path: Path) -> None:
    tiny_model("llama", DIGIT_ENCODINGS[0]).save_pretrained(tmp_path)
    weights = load_file(tmp_path / "model.safetensors")
    del weights["digit_values.proj.weight"]
    save_file(weights, tmp_path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"missing digit_values\.proj\.weight"):
        NumberLlamaForCausalLM.from_pretrained(tmp_path)


def test_lora_trains_the_value_embedding_whole() -> None:
    pytest.importorskip("peft")
    from hf_numbers.training.lora import number_lora_config

    config = number_lora_config(tiny_model("llama", DIGIT_ENCODINGS[0]), r=4)
    assert config.modules_to_save == ["digit_values"] and not config.trainable_token_indices


def test_the_table_of_a_byte_level_tokenizer_holds_its_multi_digit_tokens() -> None:
    tokenizer = train_number_tokenizer(["x = 12345 and 678, 90 ok 2024"] * 30, "gpt2", vocab_size=300,
                                       number_scheme="text")  # fmt: skip
    rows = digit_token_table(tokenizer)
    assert any(count > 1 for _, _, count, _ in rows) and {joins for *_, joins in rows} == {0, 1}
    for token_id, value, count, joins in rows:
        text = tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens([token_id]))
        assert (int(text), len(text.strip()), int(not text.startswith(" "))) == (value, count, joins)


@pytest.mark.parametrize("loss", ["ntl", "ntl+number-level"])
def test_the_cli_trains_value_aware_digits_with_the_number_token_loss(loss: str, tmp_path: Path) -> None:
    pytest.importorskip("ntloss")
    from hf_numbers.cli import main

    main(["train", "--task", "fone_arithmetic", "--backbone", "llama", "--number_encoding", "digits",
          "--number_token_loss", loss, "--max_steps", "3", "--train_size", "32", "--eval_size", "8",
          "--hidden_size", "32", "--num_layers", "1", "--num_heads", "2", "--vocab_size", "300",
          "--output_dir", str(tmp_path / "run"), "--eval_steps", "0", "--save_steps", "0"])  # fmt: skip
    model = NumberLlamaForCausalLM.from_pretrained(tmp_path / "run" / "final")
    assert model.digit_values is not None and model.digit_values.proj.weight.abs().sum() > 0  # it trained


@needs_smollm2
def test_smollm2_with_value_aware_digits_starts_with_its_own_outputs(smollm2_dir: Path, smollm2_plain) -> None:
    """With the default's value parts (``PRETRAINED_RECIPE``), the prompt's numbers read whole: the base's logits."""
    tokenizer = NumberLlamaTokenizer.from_pretrained(smollm2_dir, number_scheme="text")
    model = NumberLlamaForCausalLM.from_pretrained_backbone(
        smollm2_dir, tokenizer, number_encoding="digits", digits_features=PRETRAINED_RECIPE["digits_features"]).eval()
    assert [row[:3] for row in model.config.digit_tokens] == [[32 + d, d, 1] for d in range(10)]
    batch = tokenizer(["313336 + 511116 = 824452"], return_tensors="pt")
    labels = batch["input_ids"].clone()
    labels[:, :-6] = -100  # the answer's digits carry the loss: the operands are given whole
    features = model.digit_values.features(batch["input_ids"], prompt_length=labels.shape[1] - 6)
    assert features[0, :, -model.config.digits_places :].sum() == 12  # the column part: at each operand digit
    with torch.no_grad():
        assert torch.equal(model(**batch, labels=labels).logits, smollm2_plain(**batch).logits)
