"""The digit lookahead (``digit_lookahead``): training-only heads that score a number's next digits ahead.

What it promises: it never changes what the model writes (the logits are the model's without it, before and after
its heads train); its loss starts at ln 10 and scores exactly the places whose next digits are one number's; it
trains whole under LoRA, is saved and reloaded with the model; settings it cannot serve are refused by name.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from model_helpers import CAUSAL, MODEL_CLASSES, last_line_without_hf_numbers, tiny_config, tiny_model

from hf_numbers.modeling.digit_lookahead import DigitLookahead, final_norm, scale_digit_lookahead
from hf_numbers.training.lora import number_lora_config

DIGIT_IDS = list(range(10, 20))  # "0".."9" in the tiny vocabulary (model_helpers.DIGIT_TOKENS)
WRITING_DIGITS = [(backbone, encoding) for backbone in CAUSAL for encoding in ("text", "digits")]
LOOKAHEAD = {"digit_lookahead": 2, "digit_lookahead_ids": DIGIT_IDS}

pytestmark = pytest.mark.smoke  # in the drift check (scripts/check_latest.sh): PEFT and loading move


def batch() -> dict[str, torch.Tensor]:
    """Words and two digit runs, ``w 1 2 3 w 4 5 6 7 w``, as input and labels."""
    ids = torch.tensor([[5, 11, 12, 13, 6, 14, 15, 16, 17, 7]] * 2)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}


@pytest.mark.parametrize("backbone,encoding", WRITING_DIGITS)
def test_the_heads_never_change_what_the_model_writes_and_start_at_ln_10(backbone: str, encoding: str) -> None:
    plain, model = tiny_model(backbone, encoding).eval(), tiny_model(backbone, encoding, **LOOKAHEAD).eval()
    with torch.no_grad():
        without, with_heads = plain(**batch()), model(**batch())
        assert torch.equal(with_heads.logits, without.logits)  # the heads draw nothing: the same weights
        assert torch.equal(with_heads.token_loss, without.token_loss)
        assert with_heads.loss.item() == pytest.approx(without.loss.item() + math.log(10), abs=1e-5)
        model.digit_lookahead.heads.normal_()  # trained heads: another loss, the same logits
        trained = model(**batch())
        assert torch.equal(trained.logits, without.logits) and trained.loss.item() != with_heads.loss.item()
        assert model(**batch(), loss_only=True).loss.item() == pytest.approx(trained.loss.item(), rel=1e-5)


def test_per_token_each_place_asked_for_weighs_one_token_so_short_runs_ask_for_little() -> None:
    plain = tiny_model("llama", "text").eval()
    model = tiny_model("llama", "text", **LOOKAHEAD, digit_lookahead_mean="tokens").eval()
    with torch.no_grad():  # 9 scored tokens a row (the labels shifted by one): 5 places one digit ahead, 3 two ahead
        assert (model(**batch()).loss - plain(**batch()).loss).item() == pytest.approx(math.log(10) * 8 / 9, abs=1e-5)
        short = torch.tensor([[5, 14, 14, 6, 15, 7]])  # `w 4 4 w 5 w`: one place to ask ahead among 5 tokens
        short_batch = {"input_ids": short, "attention_mask": torch.ones_like(short), "labels": short}
        lookahead = model(**short_batch).loss - plain(**short_batch).loss
    assert lookahead.item() == pytest.approx(math.log(10) / 5, abs=1e-5)  # by places: ln 10 / 2 (the mean of heads)


def reference_loss(module: DigitLookahead, hidden: torch.Tensor, targets: torch.Tensor, rows: torch.Tensor,
                   read: torch.Tensor | None = None) -> torch.Tensor:
    """The loss written out position by position: head k scores targets[t + k] where targets[t .. t + k] are
    digits (with ``confidence``, times the token head's probability of targets[t + k] at position t + k, among the
    ten digits, to the module's power, a weight without gradient; with ``conditioned``, the head's output scaled and
    shifted by the digits between; without ``leading``, only where targets[t - 1] is a digit too); with
    ``per_token``, every place summed and divided by the scored tokens instead of each head's mean, averaged. The
    heads read ``read`` where given (a middle layer's states), the confidence is the token head's own, from
    ``hidden``."""
    read = hidden if read is None else read
    digits = module.digit_ids.tolist()
    per_head, tokens = [], int((targets != -100).sum())
    for k in range(1, module.heads.shape[0] + 1):
        losses = []
        for b in range(targets.shape[0]):
            for t in range(targets.shape[1] - k):
                first = t == 0 or int(targets[b, t - 1]) not in digits  # targets[b, t] begins a number
                if all(int(targets[b, t + i]) in digits for i in range(k + 1)) and (module.leading or not first):
                    target = digits.index(int(targets[b, t + k]))
                    state = module.heads[k - 1] @ read[b, t]
                    if module.conditioned:  # given targets[t .. t + k - 1], the digits between
                        between = [digits.index(int(targets[b, t + j])) for j in range(k)]
                        scale = sum(module.given_scale[k - 1, j, d] for j, d in enumerate(between))
                        shift = sum(module.given_shift[k - 1, j, d] for j, d in enumerate(between))
                        state = state * (1 + scale) + shift
                    logits = state @ rows[digits].T
                    own = torch.softmax(hidden[b, t + k] @ rows[digits].T, -1)[target].detach()
                    losses.append(-torch.log_softmax(logits, -1)[target] * (own**module.power if module.confidence
                                                                            else 1))
        if module.per_token:
            per_head.append(torch.stack(losses).sum() / tokens if losses else torch.tensor(0.0))
        else:
            per_head.append(torch.stack(losses).mean() if losses else torch.tensor(0.0))
    return torch.stack(per_head).sum() if module.per_token else torch.stack(per_head).mean()


@pytest.mark.parametrize("leading", [True, False], ids=["from-the-first", "from-the-second"])
@pytest.mark.parametrize("conditioned", [False, True], ids=["alone", "given"])
@pytest.mark.parametrize("mean", ["places", "tokens"])
@pytest.mark.parametrize("confidence,power", [(False, 1.0), (True, 1.0), (True, 4.0)],
                         ids=["plain", "confidence", "confidence-to-the-4th"])
def test_the_loss_scores_each_digit_ahead_within_one_number_only(
    confidence: bool, power: float, mean: str, conditioned: bool, leading: bool
) -> None:
    torch.manual_seed(0)
    module = DigitLookahead(tiny_config("llama", "text", digit_lookahead=3, digit_lookahead_ids=DIGIT_IDS,
                                        digit_lookahead_confidence=confidence, digit_lookahead_mean=mean,
                                        digit_lookahead_confidence_power=power,
                                        digit_lookahead_conditioned=conditioned,
                                        digit_lookahead_leading=leading))  # fmt: skip
    module.heads.data.normal_()
    if conditioned:  # tables of the scale the heads' outputs are
        module.given_scale.data.normal_(std=0.1)
        module.given_shift.data.normal_(std=0.1)
    targets = torch.tensor([[11, 12, 13, 5, 14, 15, -100, 16, 17, 18, 19, 6], [5, 6, 11, 12, 7, 13, 14, 15, 16, 17, 5,
                                                                               -100]])  # fmt: skip
    hidden, rows = torch.randn(2, 12, 32), torch.randn(100, 32)
    with torch.no_grad():
        loss = module.loss(hidden, targets, rows)
    assert loss.item() == pytest.approx(reference_loss(module, hidden, targets, rows).item(), rel=1e-5)
    assert module.loss(hidden, torch.full_like(targets, 5), rows).item() == 0.0  # no digits: nothing scored
    read = torch.randn(2, 12, 32)  # heads reading other states (a middle layer's): the confidence stays hidden's
    with torch.no_grad():
        apart = module.loss(hidden, targets, rows, read_states=read).item()
    assert apart == pytest.approx(reference_loss(module, hidden, targets, rows, read=read).item(), rel=1e-5)
    if confidence:
        assert apart != pytest.approx(reference_loss(module, read, targets, rows).item(), rel=1e-3)
    hidden.requires_grad_(True)  # with confidence, the weights carry no gradient: the trunk is not taught to doubt
    grad = torch.autograd.grad(module.loss(hidden, targets, rows), hidden)[0]  # its own next digit
    expected = torch.autograd.grad(reference_loss(module, hidden, targets, rows), hidden)[0]
    assert torch.allclose(grad, expected, atol=1e-6)


def test_from_the_second_digit_a_temperature_asks_for_nothing_and_a_longer_number_from_its_second_digit() -> None:
    module = DigitLookahead(tiny_config("llama", "text", digit_lookahead=2, digit_lookahead_ids=DIGIT_IDS,
                                        digit_lookahead_leading=False))  # fmt: skip
    module.heads.data.normal_()
    hidden, rows = torch.randn(1, 8, 32, requires_grad=True), torch.randn(100, 32)
    temperatures = torch.tensor([[-100, 14, 19, 5, 15, -100, 16, 11]])  # 49.5 and 61: the second digit ends the run
    loss = module.loss(hidden, temperatures, rows)
    assert loss.item() == 0.0 and not torch.autograd.grad(loss, hidden, allow_unused=True)[0].any()
    module.leading = True  # from the first digit, the tens digit asks for the units
    assert module.loss(hidden, temperatures, rows).item() > 0
    module.leading = False
    longer = torch.tensor([[-100, 11, 12, 13, 14, 5, 15, 16]])  # 1234: heads ask from the 2 (for 3, then 4)
    expected = reference_loss(module, hidden, longer, rows)
    assert module.loss(hidden, longer, rows).item() == pytest.approx(expected.item(), rel=1e-5) and expected > 0


@pytest.mark.parametrize("backbone", CAUSAL)
def test_read_from_a_middle_layer_the_heads_score_its_normed_output_and_teach_only_the_layers_below(
    backbone: str,
) -> None:
    plain = tiny_model(backbone, "digits").eval()
    model = tiny_model(backbone, "digits", **LOOKAHEAD, digit_lookahead_layer=1, digit_lookahead_confidence=True).eval()
    with torch.no_grad():
        without, start = plain(**batch()), model(**batch())
    assert torch.equal(start.logits, without.logits) and start.hidden_states is None  # not asked for: not returned
    assert 0 < (start.loss - without.loss).item() < math.log(10)  # ln 10 a place, times the confidence (< 1)
    model.digit_lookahead.heads.data.normal_()
    out = model(**batch(), output_hidden_states=True)
    middle = final_norm(model.trunk)(out.hidden_states[1])  # the first layer's output, normed as the last one is
    targets = torch.nn.functional.pad(batch()["labels"][:, 1:], (0, 1), value=-100)
    head = model.get_output_embeddings().weight
    lookahead = out.loss - out.token_loss  # value-aware digits have no number head: no number loss
    last = out.hidden_states[-1]  # the confidence is the token head's own, from the last state
    expected = reference_loss(model.digit_lookahead, last, targets, head, read=middle)
    assert lookahead.item() == pytest.approx(expected.item(), rel=1e-5)
    assert not torch.allclose(middle, out.hidden_states[-1])  # another state than the token head's
    lookahead.backward()
    layers = [name for name, _ in model.trunk.named_children() if name in ("layers", "h")][0]
    last, first = getattr(model.trunk, layers)[-1], getattr(model.trunk, layers)[0]
    assert all(p.grad is None or not p.grad.any() for p in last.parameters())  # the last layer: the next token's
    assert any(p.grad is not None and p.grad.any() for p in first.parameters())
    with torch.no_grad():
        assert model(**batch(), loss_only=True).loss.item() == pytest.approx(out.loss.item(), rel=1e-5)


@pytest.mark.parametrize("backbone", CAUSAL)
def test_given_the_digits_between_the_heads_start_as_the_heads_alone_and_learn_from_the_branch_taken(
    backbone: str,
) -> None:
    alone = tiny_model(backbone, "digits", **LOOKAHEAD).eval()
    given = tiny_model(backbone, "digits", **LOOKAHEAD, digit_lookahead_conditioned=True).eval()
    assert given.digit_lookahead.given_scale.shape == (2, 2, 10, given.config.hidden_size)
    with torch.no_grad():
        assert torch.equal(given(**batch()).loss, alone(**batch()).loss)  # the tables start at zero
        given.digit_lookahead.heads.normal_()
        alone.digit_lookahead.heads.copy_(given.digit_lookahead.heads)
        assert given(**batch()).loss.item() == pytest.approx(alone(**batch()).loss.item(), rel=1e-6)
    loss = given(**batch()).loss
    loss.backward()  # the shift learns from the first step; the scale once the heads are not zero (here: drawn)
    assert given.digit_lookahead.given_shift.grad.any() and given.digit_lookahead.given_scale.grad.any()
    rows = given.digit_lookahead.given_shift.grad[0, 0].abs().sum(-1)  # head 1's table: the next digit, as written
    assert rows[[1, 2, 4, 5, 6]].all() and not rows[[0, 3, 7, 8, 9]].any()  # 1 2 3 / 4 5 6 7: 3 and 7 end the runs
    with torch.no_grad():
        given.digit_lookahead.given_shift.normal_()
        before = given(**batch())
        assert torch.equal(before.logits, alone(**batch()).logits)  # what the model writes is never touched
        assert before.loss.item() != pytest.approx(alone(**batch()).loss.item(), rel=1e-6)


def test_a_trunk_without_a_final_norm_is_named() -> None:
    with pytest.raises(ValueError, match="Sequential has none of the attributes norm, ln_f"):
        final_norm(torch.nn.Sequential())


def test_lora_trains_the_heads_whole_and_a_checkpoint_keeps_them(tmp_path: Path) -> None:
    from peft import get_peft_model

    adapted = tiny_model("llama", "text", **LOOKAHEAD)
    adapted = get_peft_model(adapted, number_lora_config(adapted, r=4))  # wraps the model in place
    trainable = {name for name, p in adapted.named_parameters() if p.requires_grad}
    assert any("digit_lookahead" in name for name in trainable) and any("lora_" in name for name in trainable)
    model = tiny_model("llama", "text", **LOOKAHEAD, digit_lookahead_conditioned=True)
    for parameter in model.digit_lookahead.parameters():
        parameter.data.normal_()
    model.save_pretrained(tmp_path)
    reloaded = MODEL_CLASSES["llama"].from_pretrained(tmp_path)
    assert reloaded.config.digit_lookahead == 2 and reloaded.config.digit_lookahead_ids == DIGIT_IDS
    for name, parameter in model.digit_lookahead.named_parameters():
        assert torch.equal(reloaded.digit_lookahead.get_parameter(name), parameter), name


def test_a_scaled_weight_scales_the_lookahead_alone_and_a_reloaded_model_starts_at_one(tmp_path: Path) -> None:
    model = tiny_model("llama", "text", **LOOKAHEAD).eval()
    model.digit_lookahead.heads.data.normal_()
    with torch.no_grad():
        full = model(**batch())
        scale_digit_lookahead(model, 0.5)
        half = model(**batch())
    assert torch.equal(half.logits, full.logits) and torch.equal(half.token_loss, full.token_loss)
    lookahead = full.loss - full.token_loss
    assert (half.loss - half.token_loss).item() == pytest.approx(0.5 * lookahead.item(), rel=1e-5)
    model.save_pretrained(tmp_path)  # the scale is the loop's, not the checkpoint's
    with torch.no_grad():
        reloaded = MODEL_CLASSES["llama"].from_pretrained(tmp_path).eval()(**batch())
    assert reloaded.loss.item() == pytest.approx(full.loss.item(), rel=1e-5)


def test_under_the_trainer_the_linear_decay_sets_one_minus_the_finished_fraction(tmp_path: Path) -> None:
    from transformers import Trainer, TrainingArguments

    from hf_numbers.training import LinearLookaheadDecay

    model = tiny_model("llama", "text", **LOOKAHEAD)
    rows = [{key: value[0] for key, value in batch().items()}] * 8
    seen = []

    class Spy(LinearLookaheadDecay):
        def on_step_begin(self, *args: object, **kwargs: object) -> None:
            super().on_step_begin(*args, **kwargs)
            seen.append(model.digit_lookahead.weight_scale.item())

    args = TrainingArguments(output_dir=str(tmp_path), max_steps=4, per_device_train_batch_size=4, report_to=[],
                             use_cpu=True, save_strategy="no", logging_steps=1)  # fmt: skip
    Trainer(model=model, args=args, train_dataset=rows, callbacks=[Spy()]).train()
    assert seen == [1.0, 0.75, 0.5, 0.25]


@pytest.mark.parametrize(
    "backbone,encoding,fields,message",
    [
        ("llama", "xval", LOOKAHEAD, "writes numbers as its number token"),
        ("llama", "text", {"digit_lookahead": 2, "digit_lookahead_ids": DIGIT_IDS[:9]}, "the ten ids of the tokens"),
        ("llama", "text", {"digit_lookahead": 2}, "the ten ids of the tokens 0 ... 9"),
        ("llama", "text", {"digit_lookahead": 9, "digit_lookahead_ids": DIGIT_IDS}, "an integer in [0, 8]"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_weight": float("nan")}, "a finite number >= 0"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_confidence": "yes"}, "must be true or false, got 'yes'"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_mean": "digits"}, "one of places, tokens, got 'digits'"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_confidence": True, "digit_lookahead_confidence_power": 0},
         "digit_lookahead_confidence_power must be a finite number > 0, got 0"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_confidence_power": 4.0},
         "confidence weights to a power; set digit_lookahead_confidence too"),
        ("bert", "text", LOOKAHEAD, "this is a masked LM"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_layer": 2}, "a layer in [1, 1] (the text model has 2)"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_layer": 0}, "a layer in [1, 1]"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_layer": True}, "got True"),
        ("llama", "text", {"digit_lookahead_layer": 1}, "set digit_lookahead too"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_conditioned": 1}, "must be true or false, got 1"),
        ("llama", "text", {"digit_lookahead_conditioned": True}, "the digits between; set digit_lookahead too"),
        ("llama", "text", {**LOOKAHEAD, "digit_lookahead_leading": 0}, "must be true or false, got 0"),
        ("llama", "text", {"digit_lookahead_leading": False}, "a number's first digit; set digit_lookahead too"),
    ],
    ids=["num-token", "nine-ids", "no-ids", "too-far", "nan-weight", "confidence-not-bool", "unknown-mean",
         "power-zero", "power-without-confidence", "masked",
         "layer-the-last", "layer-the-embeddings", "layer-bool", "layer-without-heads", "given-not-bool",
         "given-without-heads", "leading-not-bool", "leading-without-heads"],
)
def test_settings_it_cannot_serve_are_refused_by_name(backbone: str, encoding: str, fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match="digit_lookahead") as error:
        tiny_model(backbone, encoding, **fields)
    assert message in str(error.value)


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Qwen2 (held by composition) saved with its byte-level tokenizer."""
    from transformers import AutoConfig, AutoModelForCausalLM

    from hf_numbers.data.tokenizer_training import train_plain_tokenizer

    folder = tmp_path_factory.mktemp("qwen2")
    tokenizer = train_plain_tokenizer(["What is 12 plus 30? 12 + 30 = 42. 0123456789"] * 20, "gpt2", vocab_size=300)
    config = AutoConfig.for_model("qwen2", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                  num_attention_heads=2, num_key_value_heads=1, vocab_size=len(tokenizer),
                                  max_position_embeddings=256)  # fmt: skip
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("encoding", ["text", "digits"])
def test_hf_numbers_train_adds_the_loss_and_saves_the_trained_heads(
    encoding: str, pretrained: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    from hf_numbers.cli import main

    run = tmp_path / "run"
    main(["train", "--task", "fone_arithmetic", "--train_size", "32", "--eval_size", "8", "--max_steps", "2",
          "--per_device_train_batch_size", "8", "--disable_tqdm", "true", "--use_cpu", "true", "--logging_steps", "1",
          "--pretrained", str(pretrained), "--number_encoding", encoding, "--lora_r", "4", "--digit_lookahead", "2",
          "--output_dir", str(run)])  # fmt: skip
    first = json.loads((run / "log_history.json").read_text())[0]
    ntl = 0.3 * first["number_loss"]  # the loss is the token loss, NTL's and the lookahead's (ln 10 at the start)
    assert first["loss"] == pytest.approx(first["token_loss"] + ntl + math.log(10), abs=1e-3)
    model = AutoModelForCausalLM.from_pretrained(run / "final")
    assert model.config.digit_lookahead == 2 and model.digit_lookahead.heads.abs().sum() > 0  # trained, and kept
    ids = torch.tensor([[int(i) for i in model.config.digit_lookahead_ids[:5]]])
    with torch.no_grad():
        loss = model(input_ids=ids, labels=ids).loss.item()
    code = (  # the same checkpoint where hf_numbers is absent: its remote code holds the heads and their ids
        "import torch\n"
        "from transformers import AutoModelForCausalLM\n"
        "model = AutoModelForCausalLM.from_pretrained(sys.argv[1], trust_remote_code=True)\n"
        "ids = torch.tensor([model.config.digit_lookahead_ids[:5]])\n"
        "print(model(input_ids=ids, labels=ids).loss.item())\n"
    )
    assert float(last_line_without_hf_numbers(code, str(run / "final"), cwd=tmp_path)) == pytest.approx(loss, rel=1e-5)


def test_from_the_second_digit_on_temperatures_training_is_the_run_without_the_lookahead(
    pretrained: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    from hf_numbers.cli import main

    common = ["train", "--task", "temperature", "--task_options", "window=4", "--train_size", "16", "--eval_size", "4",
              "--max_steps", "2", "--per_device_train_batch_size", "8", "--disable_tqdm", "true", "--use_cpu", "true",
              "--logging_steps", "1", "--pretrained", str(pretrained), "--number_encoding", "digits", "--lora_r", "4",
              "--eval_steps", "0"]  # fmt: skip
    main([*common, "--digit_lookahead", "0", "--output_dir", str(tmp_path / "without")])
    main([*common, "--digit_lookahead", "2", "--digit_lookahead_confidence", "true", "--digit_lookahead_leading",
          "false", "--output_dir", str(tmp_path / "second")])  # fmt: skip
    logs = [json.loads((tmp_path / run / "log_history.json").read_text())[:2] for run in ("without", "second")]
    assert [r["loss"] for r in logs[0]] == [r["loss"] for r in logs[1]]  # 38.6: nothing asked at 3, 8 ends the run
    without, second = (AutoModelForCausalLM.from_pretrained(tmp_path / run / "final") for run in ("without", "second"))
    assert second.config.digit_lookahead_leading is False and not second.digit_lookahead.heads.any()  # never taught
    weights = second.state_dict()
    for name, tensor in without.state_dict().items():
        assert torch.equal(weights[name], tensor), name


def test_hf_numbers_train_anneals_the_lookahead_linearly(pretrained: Path, tmp_path: Path) -> None:
    from hf_numbers.cli import main

    run = tmp_path / "run"
    main(["train", "--task", "fone_arithmetic", "--train_size", "32", "--eval_size", "8", "--max_steps", "2",
          "--per_device_train_batch_size", "8", "--disable_tqdm", "true", "--use_cpu", "true", "--logging_steps", "1",
          "--pretrained", str(pretrained), "--number_encoding", "text", "--lora_r", "4", "--digit_lookahead", "2",
          "--digit_lookahead_schedule", "linear", "--output_dir", str(run)])  # fmt: skip
    first, second = json.loads((run / "log_history.json").read_text())[:2]
    lookahead = [r["loss"] - r["token_loss"] - 0.3 * r["number_loss"] for r in (first, second)]
    # heads at zero score ln 10 a place; one small step later they still score about that, now at half the weight
    assert lookahead[0] == pytest.approx(math.log(10), abs=1e-3)
    assert lookahead[1] == pytest.approx(0.5 * math.log(10), abs=0.05)


def test_hf_numbers_train_passes_the_weighting_the_mean_the_layer_and_the_digits_given_to_model_and_card(
    pretrained: Path, tmp_path: Path
) -> None:
    from transformers import AutoConfig

    from hf_numbers.cli import main

    run = tmp_path / "run"
    main(["train", "--task", "fone_arithmetic", "--train_size", "16", "--eval_size", "4", "--max_steps", "1",
          "--per_device_train_batch_size", "8", "--disable_tqdm", "true", "--use_cpu", "true",
          "--pretrained", str(pretrained), "--number_encoding", "digits", "--lora_r", "4", "--digit_lookahead", "2",
          "--digit_lookahead_confidence", "true", "--digit_lookahead_confidence_power", "4",
          "--digit_lookahead_mean", "tokens", "--digit_lookahead_layer", "1",
          "--digit_lookahead_conditioned", "true", "--digit_lookahead_leading", "false",
          "--output_dir", str(run)])  # fmt: skip
    config = AutoConfig.from_pretrained(run / "final")
    assert config.digit_lookahead_confidence is True and config.digit_lookahead_mean == "tokens"
    assert config.digit_lookahead_confidence_power == 4
    assert config.digit_lookahead_layer == 1 and config.digit_lookahead_conditioned is True
    assert config.digit_lookahead_leading is False
    card = (run / "final" / "README.md").read_text()
    assert ("each digit weighted by the model's own confidence to the power 4.0, each place weighing one token, read "
            "from layer 1, "
            "given the digits between, not asked at a number's first digit") in card


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--number_encoding", "xval"], "digit_lookahead scores digit tokens; number_encoding 'xval' writes"),
        (["--backbone", "bert"], "backbone 'bert' is a masked LM"),
        (["--number_encoding", "text", "--digit_lookahead", "9"], "digit_lookahead must be in [0, 8]"),
        (["--number_encoding", "text", "--digit_lookahead_schedule", "cosine"],
         "digit_lookahead_schedule='cosine' is unknown; allowed: constant, linear"),
        (["--number_encoding", "text", "--digit_lookahead", "0", "--digit_lookahead_schedule", "linear"],
         "digit_lookahead_schedule linear moves the weight of the digit lookahead; set --digit_lookahead too"),
        (["--number_encoding", "text", "--digit_lookahead", "0", "--digit_lookahead_confidence", "true"],
         "digit_lookahead_confidence weights the digits the digit lookahead asks for; set --digit_lookahead too"),
        (["--number_encoding", "text", "--digit_lookahead_confidence_power", "4"],
         "digit_lookahead_confidence_power 4.0 raises the digit lookahead's confidence weights to a power; set "
         "--digit_lookahead_confidence true too"),
        (["--number_encoding", "text", "--digit_lookahead_confidence", "true", "--digit_lookahead_confidence_power",
          "-1"], "digit_lookahead_confidence_power must be a finite number > 0, got -1.0"),
        (["--number_encoding", "text", "--digit_lookahead", "0", "--digit_lookahead_confidence_power", "4"],
         "digit_lookahead_confidence_power 4.0 sharpens the digit lookahead's confidence weights; set "
         "--digit_lookahead too"),
        (["--number_encoding", "text", "--digit_lookahead_mean", "digits"],
         "digit_lookahead_mean='digits' is unknown; allowed: places, tokens"),
        (["--number_encoding", "text", "--digit_lookahead", "0", "--digit_lookahead_mean", "tokens"],
         "digit_lookahead_mean tokens sets what the digit lookahead's loss is a mean over; set --digit_lookahead too"),
        (["--number_encoding", "text", "--digit_lookahead", "0", "--digit_lookahead_layer", "1"],
         "digit_lookahead_layer 1 sets the layer the digit lookahead's heads read; set --digit_lookahead too"),
        (["--number_encoding", "text", "--digit_lookahead", "0", "--digit_lookahead_conditioned", "true"],
         "digit_lookahead_conditioned gives the digit lookahead's heads the digits between; set --digit_lookahead too"),
        (["--number_encoding", "text", "--digit_lookahead", "0", "--digit_lookahead_leading", "false"],
         "digit_lookahead_leading false keeps the digit lookahead off a number's first digit; set --digit_lookahead "
         "too"),
    ],
    ids=["num-token", "masked", "too-far", "unknown-schedule", "schedule-without-heads", "confidence-without-heads",
         "power-without-confidence", "power-not-positive", "power-without-heads",
         "unknown-mean", "mean-without-heads", "layer-without-heads", "given-without-heads", "leading-without-heads"],
)
def test_hf_numbers_train_refuses_what_the_lookahead_cannot_serve(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hf_numbers.cli import parse_train_args

    with pytest.raises(SystemExit) as exit_info:
        parse_train_args(["--digit_lookahead", "2", *flags, "--output_dir", str(tmp_path / "run")])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_lookahead_weights_measures_the_weights_the_loss_uses(
    pretrained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/lookahead_weights.py on a run: with the heads at zero every place's cross-entropy is ln 10, so the
    lookahead's loss is ln 10 times the mean over heads of the mean weight, at the power the run trained with."""
    import sys

    from hf_numbers.cli import main as hf_numbers

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))  # as when the script runs
    from lookahead_weights import main, path_of, place_weights

    from hf_numbers.training.pipeline import load_trained

    run = tmp_path / "run"
    hf_numbers(["train", "--task", "fone_arithmetic", "--train_size", "16", "--eval_size", "8", "--max_steps", "1",
                "--per_device_train_batch_size", "8", "--disable_tqdm", "true", "--use_cpu", "true",
                "--pretrained", str(pretrained), "--number_encoding", "text", "--lora_r", "4", "--digit_lookahead", "2",
                "--digit_lookahead_confidence", "true", "--digit_lookahead_confidence_power", "4",
                "--output_dir", str(run)])  # fmt: skip
    capsys.readouterr()  # the training's log
    main([str(run), "--examples", "6", "--batch_size", "4"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "run, validation, 6 examples (power trained with: 4.0)"
    assert [line.split(":")[0] for line in out[1:]] == ["head 1", "head 2"] and "mean weight at power 1:" in out[1]
    assert ", of the path: " in out[1]
    model, _ = load_trained(run / "final")
    model.digit_lookahead.heads.data.zero_()
    digits = model.config.digit_lookahead_ids
    other = next(i for i in range(model.config.vocab_size) if i not in digits)
    ids = torch.tensor([[other, *digits[3:9], other, *digits[:4]], [*digits[1:7], other, other, *digits[5:9]]])
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}
    weights, paths = zip(*place_weights(model, batch), strict=True)
    assert [w.numel() for w in weights] == [5 + 3 + 4 + 3, 4 + 2 + 3 + 2]  # head k: a run of n targets asks n - k
    # a path's weight is the product of the weights on the way to its place, so never above the place's own
    assert all(bool((p <= w + 1e-7).all()) for w, p in zip(weights, paths, strict=True))
    assert torch.allclose(path_of(torch.tensor([[0.5, 1.0, 0.8, 0.5]]), 1), torch.tensor([[0.5, 0.8, 0.4]]))
    with torch.no_grad():
        loss = model(**batch).loss.item()
        model.digit_lookahead = None
        without = model(**batch).loss.item()
    expected = math.log(10) * torch.stack([(w**4).mean() for w in weights]).mean().item()
    assert loss - without == pytest.approx(expected, abs=2e-6)  # float32 losses near 10: their ulp is 1e-6
