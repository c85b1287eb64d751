"""Faults of the model side: out-of-range values, NaN predictions, mismatched or incomplete checkpoints and
tokenizers. Each gives a clear error naming the problem (or a documented safe behaviour); faults of training
and of its checkpoints are tests/test_faults.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from model_helpers import NUM_IDS, ONE_PER_KIND, tiny_config, tiny_model
from safetensors.torch import load_file, save_file

from hf_numbers import (
    BACKBONES,
    NumberGPT2Config,
    NumberGPT2ForCausalLM,
    check_tokenizer_matches,
    get_encoding,
)
from hf_numbers.cli import main as cli_main
from hf_numbers.data import load_task, train_number_tokenizer
from hf_numbers.evaluation.predict import predict_answers
from hf_numbers.modeling.encoding_xval import XVAL_MAX
from hf_numbers.training import NumberTrainingArguments, build_model, load_trained

TEXTS = load_task("lookup", train_size=40, eval_size=4)["train"]["text"]
TINY = {"n_embd": 32, "n_layer": 2, "n_head": 2, "n_positions": 64}


@pytest.fixture(scope="module")
def tokenizer():
    return train_number_tokenizer(TEXTS, "gpt2", vocab_size=300)


def save_run(folder: Path, tokenizer, encoding: str, **fields) -> Path:
    """``folder/final`` as ``hf-numbers train`` writes it (model, tokenizer) and a training_args.json."""
    torch.manual_seed(0)
    config = NumberGPT2Config.from_tokenizer(tokenizer, **TINY, number_encoding=encoding, **fields)
    final = folder / "final"
    for part in (NumberGPT2ForCausalLM(config), tokenizer):
        part.save_pretrained(final)
    (folder / "training_args.json").write_text(json.dumps({"task": "lookup", "data_dir": None, "max_length": 64}))
    return final


@pytest.fixture(scope="module")
def saved_run(tokenizer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exponent-encoding run's final/ (bins over [0.5, 2000]); tests copy it before touching it."""
    return save_run(tmp_path_factory.mktemp("run"), tokenizer, "exponent", exponent_min=0.5, exponent_max=2000.0)


def copy_final(saved_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(saved_run, tmp_path / "final"))


def edit_config(final: Path, **changes) -> None:
    """Change (None: remove) fields of a saved config.json; an encoding's option is a field of its encoding_config."""
    from hf_numbers.modeling.encoding_config import encoding_option

    config = json.loads((final / "config.json").read_text())
    options = dict(config.get("encoding_config") or {})
    for key, value in changes.items():
        (options if encoding_option(key) else config)[key] = value
    config["encoding_config"] = {k: v for k, v in options.items() if v is not None}
    (final / "config.json").write_text(json.dumps({k: v for k, v in config.items() if v is not None}))


# ---- each encoding accepts what its float32 path carries


def test_xval_accepts_what_float32_carries_in_inputs_and_labels() -> None:
    model = tiny_model("gpt2", "xval").eval()
    ids = torch.tensor([[5, NUM_IDS["gpt2"][0], 6, NUM_IDS["gpt2"][1]]])

    def numbers(value: float) -> torch.Tensor:
        return torch.tensor([[1.0, value, 1.0, 2.0]], dtype=torch.float64)

    with torch.no_grad():
        edge = model(input_ids=ids, input_numbers=numbers(-XVAL_MAX), labels=ids)
    assert edge.loss.isfinite() and edge.logits.isfinite().all() and edge.number_predictions.isfinite().all()
    with pytest.raises(ValueError, match=r"input_numbers holds 1e\+22 .*accepts finite values with \|x\| <= 4\.612e\+"):
        model(input_ids=ids, input_numbers=numbers(1e22))  # was: NaN logits and predictions, no error
    with pytest.raises(ValueError, match=r"number_labels holds 1e\+19 .*\|x\| <= 4\.612e\+18"):
        model(input_ids=ids, input_numbers=numbers(3.0), labels=ids, number_labels=numbers(1e19))  # was: loss inf

    # the embedding's limit: |x| * ||e_[NUM]|| within sqrt(float32 max), or a LayerNorm's sum of squares overflows
    with torch.no_grad():
        model.get_input_embeddings().weight[NUM_IDS["gpt2"][0]] = 1e3
    with pytest.raises(ValueError, match=r"holds 4e\+18 .*embedding \(norm 5657\) .*\|x\| <= 3\.261e\+15"):
        model(input_ids=ids, input_numbers=numbers(4e18))

    with torch.no_grad():  # a wild prediction saturates, so generation can feed it back
        model.number_encoding.mlp[2].bias.fill_(1e30)
        assert model(input_ids=ids, input_numbers=numbers(3.0)).number_predictions.eq(XVAL_MAX).all()


# ---- a NaN logit taken by argmax is no prediction


def test_predict_answers_counts_non_finite_logits_and_values_as_invalid(tokenizer) -> None:
    model = NumberGPT2ForCausalLM(NumberGPT2Config.from_tokenizer(tokenizer, **TINY, number_encoding="xval"))
    texts, answers = ["a 3 b 4", "a 7 b 8"], [1, 1]
    poison = {}

    def steer(module, args, output):
        """The token head prefers [NUM]; ``poison`` sets logits / predictions of row 0 to NaN."""
        output.logits[..., tokenizer.num_token_id] = 50.0
        for name, index in poison.items():
            getattr(output, name)[(0, ..., *index)] = float("nan")
        return output

    model.register_forward_hook(steer)
    valid = predict_answers(model, tokenizer, texts, answers)
    assert all(isinstance(value, float) for value in valid), valid  # steered: every answer is a number
    poison["logits"] = (tokenizer.num_token_id,)  # argmax takes the NaN: before, it counted as a valid number
    assert predict_answers(model, tokenizer, texts, answers) == [None, valid[1]]
    poison["logits"] = (7,)  # a NaN elsewhere in the row: the argmax is not to be trusted either
    assert predict_answers(model, tokenizer, texts, answers) == [None, valid[1]]
    poison.clear()
    poison["number_predictions"] = ()
    assert predict_answers(model, tokenizer, texts, answers) == [None, valid[1]]


@pytest.mark.parametrize("encoding", ["text", "p10"])
@pytest.mark.parametrize("backbone", ONE_PER_KIND)
def test_text_baselines_count_non_finite_logits_as_invalid(backbone: str, encoding: str) -> None:
    """A text encoding's answer is tokens chosen by argmax, which takes a NaN as the largest logit."""
    texts, answers = ["a 3 b 4 c 5", "a 7 b 8 c 9"], [2, 2]
    options = {"scheme_min_exponent": 0, "scheme_max_exponent": 0, "scheme_digits": 1} if encoding != "text" else {}
    tokenizer = train_number_tokenizer(texts * 10, backbone, vocab_size=300, number_scheme=encoding, **options)
    spec = BACKBONES[backbone]
    model = spec.model_class(spec.new_config(tokenizer, hidden_size=32, num_layers=2, num_heads=2, max_length=64,
                                             number_encoding=encoding))  # fmt: skip
    truth = torch.tensor(tokenizer(texts, padding=True)["input_ids"])  # what a masked model is steered to fill
    written = tokenizer(" 5", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]  # a causal model's
    forwards, poison = [], {}

    def steer(module, args, output):
        """The token head prefers the steered text; ``poison`` puts a NaN at (row 0, position) of one forward."""
        forwards.append(1)
        if spec.causal:
            output.logits[:, -1, written[min(len(forwards), len(written)) - 1]] = 50.0
        else:
            output.logits.scatter_(-1, truth[..., None], 50.0)
        if poison.get("forward") == len(forwards):  # on the winning token: the text is the same, now untrusted
            logits = output.logits[0, poison["position"]]
            logits[logits.argmax()] = float("nan")
        return output

    model.register_forward_hook(steer)
    expected = [5.0, 5.0] if spec.causal else [5.0, 9.0]
    assert predict_answers(model, tokenizer, texts, answers) == expected
    # causal: a NaN at the last generated step; masked: at the answer's masked position (before its end token)
    answer_position = int(truth[0].ne(tokenizer.pad_token_id).sum()) - 2
    poison.update(forward=len(forwards), position=-1 if spec.causal else answer_position)
    forwards.clear()
    assert predict_answers(model, tokenizer, texts, answers) == [None, expected[1]]
    if not spec.causal:  # a NaN away from the masked answer leaves its prediction alone
        poison.update(position=1)
        forwards.clear()
        assert predict_answers(model, tokenizer, texts, answers) == expected


# ---- a config missing a tokenizer's number id


def test_forward_refuses_values_at_tokens_that_are_not_number_tokens(tokenizer) -> None:
    batch = tokenizer(["x=5 and 7.5"], return_tensors="pt")
    spaced = tokenizer.num_token_ids[1]
    assert spaced in batch["input_ids"][0]  # " 7.5" is the byte-level tokenizer's second number token
    eos = dict.fromkeys(["bos_token_id", "eos_token_id"], tokenizer.eos_token_id)  # GPT-2's 50256 lies outside
    partial = NumberGPT2Config(**TINY, **eos, vocab_size=len(tokenizer), num_token_id=tokenizer.num_token_id)
    message = rf"holds 7\.5 at position \(0, \d+\), whose token id {spaced} is not a number token of this model "
    with pytest.raises(ValueError, match=message + rf"\(config\.num_token_ids = \[{partial.num_token_id}\]\)"):
        NumberGPT2ForCausalLM(partial)(**batch)
    config = NumberGPT2Config.from_tokenizer(tokenizer, **TINY)
    assert config.num_token_ids == tokenizer.num_token_ids and config.vocab_size == len(tokenizer)
    assert NumberGPT2ForCausalLM(config)(**batch).number_predictions.shape == batch["input_ids"].shape


# ---- loading checks that the parts belong together


def test_load_trained_refuses_another_runs_tokenizer(saved_run: Path, tmp_path: Path) -> None:
    model, tokenizer = load_trained(saved_run)
    check_tokenizer_matches(model, tokenizer)
    final = copy_final(saved_run, tmp_path)
    other = train_number_tokenizer(TEXTS, "gpt2", vocab_size=280)  # another vocabulary: other number ids
    other.save_pretrained(final)
    with pytest.raises(ValueError, match=r"tokenizer's number token ids \[\d+, \d+\] differ from the model's "
                                         r"config\.num_token_ids \[\d+, \d+\]"):
        load_trained(final)
    bigger = train_number_tokenizer(TEXTS, "gpt2", vocab_size=280)
    bigger.add_tokens([f"extra{i}" for i in range(len(tokenizer) - len(bigger) + 5)])
    model.config.num_token_ids, model.config.num_token_id = bigger.num_token_ids, bigger.num_token_id
    with pytest.raises(ValueError, match=rf"has {len(tokenizer) + 5} tokens but the model's embeddings hold "
                                         rf"config\.vocab_size={len(tokenizer)}"):
        check_tokenizer_matches(model, bigger)
    scheme = train_number_tokenizer(TEXTS, "gpt2", vocab_size=280, number_scheme="p10")
    with pytest.raises(ValueError, match=r"writes numbers with \{'number_scheme': 'p10'\}, but number_encoding="
                                         r"'exponent' needs \{'number_scheme': None\}"):
        check_tokenizer_matches(tiny_config("gpt2", "exponent", num_token_id=None, num_token_ids=[]), scheme)


def test_a_deleted_tokenizer_json_is_an_error(saved_run: Path, tmp_path: Path) -> None:
    final = copy_final(saved_run, tmp_path)
    (final / "tokenizer.json").unlink()  # before: a 3-token tokenizer and plausible metrics
    with pytest.raises(ValueError, match=r"the tokenizer has no vocabulary: .*final lacks tokenizer\.json"):
        load_trained(final)
    final = copy_final(saved_run, tmp_path / "no-config")
    (final / "tokenizer_config.json").unlink()  # before: no padding token, model_max_length 1e30, and no error
    with pytest.raises(ValueError, match=r"final lacks tokenizer_config\.json: its tokenizer would load with defaults"):
        load_trained(final)


CONFIG_DAMAGES = {
    "no-exponent-range": ({"exponent_min": None, "exponent_max": None}, "lacks exponent_min, exponent_max"),
    "no-encoding": ({"number_encoding": None}, "number_encoding None\\) lacks number_encoding"),
    "no-number-ids": ({"num_token_id": None, "num_token_ids": None}, "lacks num_token_ids"),
    # the number scaling (config fields since it moved inside the model): corrupted values are refused, not used
    "scale-nan": ({"number_scaling_scale": float("nan")}, "number_scaling_scale must be a finite number, got nan"),
    "scale-zero": ({"number_scaling_scale": 0.0}, "number_scaling_scale must be > 0, got 0.0"),
    "shift-text": ({"number_scaling_shift": "12"}, "number_scaling_shift must be a finite number, got '12'"),
    "log-text": ({"number_scaling_log": "false"}, "number_scaling_log must be True or False, got 'false'"),
    "other-encoding": ({"number_encoding": "fone", "fone_int_digits": 4, "fone_frac_digits": 2},  # fone's options
                       "weights do not fit its number module \\(number_encoding 'fone'\\)"
                                                   ": missing number_encoding.digit_proj.bias.*unused number_encoding"
                                                   ".class_embeddings.weight"),
}


@pytest.mark.parametrize("damage", CONFIG_DAMAGES)
def test_a_checkpoint_needs_its_encoding_fields_and_weights(saved_run: Path, tmp_path: Path, damage: str) -> None:
    final = copy_final(saved_run, tmp_path)
    changes, message = CONFIG_DAMAGES[damage]
    edit_config(final, **changes)  # before: defaults (37855 instead of 0.76) or a random head, and exit 0
    with pytest.raises(ValueError, match=message):
        load_trained(final)


def test_a_checkpoint_without_number_weights_is_an_error_and_fields_can_be_given(
    saved_run: Path, tmp_path: Path
) -> None:
    final = copy_final(saved_run, tmp_path)
    weights = load_file(final / "model.safetensors")
    kept = {k: v for k, v in weights.items() if not k.startswith("number_encoding.")}
    save_file(kept, final / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ValueError, match="missing number_encoding.class_embeddings.weight, number_encoding.class_head"):
        NumberGPT2ForCausalLM.from_pretrained(final)
    final = copy_final(saved_run, tmp_path / "given")
    edit_config(final, exponent_min=None, exponent_max=None)
    model, info = NumberGPT2ForCausalLM.from_pretrained(
        final, exponent_min=0.5, exponent_max=2000.0, output_loading_info=True
    )
    assert (model.number_encoding.min_value, model.number_encoding.max_value) == (0.5, 2000.0)
    assert not info["missing_keys"]
    other = get_encoding("float")
    fresh = NumberGPT2ForCausalLM.from_pretrained(final, number_encoding=other.name)  # another encoding: a new module
    assert fresh.config.number_encoding == other.name and type(fresh.number_encoding) is other


def test_evaluate_refuses_another_task_unless_forced(tokenizer, tmp_path: Path, capsys) -> None:
    final = save_run(tmp_path / "run", tokenizer, "xval")
    common = ["evaluate", "--checkpoint", str(final), "--eval_size", "2", "--output_dir", str(tmp_path / "eval")]
    with pytest.raises(SystemExit) as exit_info:
        cli_main([*common, "--task", "multiplication"])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "trained on task 'lookup'" in error and "not 'multiplication'" in error
    assert "--force" in error and not (tmp_path / "eval").exists()
    cli_main([*common, "--task", "multiplication", "--force"])
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text())["test"]["count"] == 2
    moved = Path(shutil.copytree(final, tmp_path / "moved" / "final"))  # final/ alone: the task is unknown
    capsys.readouterr()
    cli_main(["evaluate", "--checkpoint", str(moved), "--eval_size", "2", "--task", "multiplication"])
    assert "training_args.json is missing or names no task, so --task is not checked" in capsys.readouterr().err


def test_evaluate_generates_the_task_with_the_training_runs_options(tokenizer, tmp_path: Path, capsys) -> None:
    final = save_run(tmp_path / "run", tokenizer, "xval")
    trained = {"task": "multiplication", "task_options": ["digits=4"], "data_dir": None, "max_length": 64}
    (tmp_path / "run" / "training_args.json").write_text(json.dumps(trained))
    common = ["evaluate", "--checkpoint", str(final), "--task", "multiplication", "--eval_size", "8"]

    def answers(*extra: str) -> list[float]:
        cli_main([*common, "--output_dir", str(tmp_path / "eval"), *extra])
        return json.loads((tmp_path / "eval" / "predictions.json").read_text())["test"]["references"]

    assert min(answers()) >= 1000 * 1000  # 4-digit factors, as trained (the generator's default is 3)
    assert "note: the training run's task options: digits=4" in capsys.readouterr().err
    assert max(answers("--task_options", "digits=2")) < 100 * 100  # given options win
    for bad, message in ((["digitz=4"], "has no option digitz"), (["digits=-4"], "digits must be >= 1")):
        with pytest.raises(SystemExit) as exit_info:
            cli_main([*common, "--task_options", *bad])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["evaluate", "--checkpoint", str(final), "--data_dir", str(tmp_path), "--task_options", "digits=2"])
    assert "a --data_dir is already made" in capsys.readouterr().err


def test_evaluate_names_a_damaged_training_record_or_task_record(tokenizer, tmp_path: Path, capsys) -> None:
    """A run's training_args.json or a data folder's task record that cannot be read is a usage error naming the
    file, before any model is loaded."""
    final = save_run(tmp_path / "run", tokenizer, "xval")
    common = ["evaluate", "--checkpoint", str(final), "--task", "multiplication", "--eval_size", "2"]
    for damaged, message in (("{", "cannot read the run's training arguments"),
                             ("[1]", "training_args.json must hold a JSON object, not a JSON list")):  # fmt: skip
        (tmp_path / "run" / "training_args.json").write_text(damaged)
        with pytest.raises(SystemExit) as exit_info:
            cli_main(common)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    (tmp_path / "run" / "training_args.json").write_text(json.dumps({"task": "multiplication"}))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "hf_numbers_task.json").write_text("not json")
    with pytest.raises(SystemExit):
        cli_main(["evaluate", "--checkpoint", str(final), "--data_dir", str(tmp_path / "data")])
    assert "hf_numbers_task.json is not a task record" in capsys.readouterr().err


# ---- precision and lengths


def test_input_numbers_as_python_lists_keep_float64(tokenizer) -> None:
    model = tiny_model("gpt2", "fone", fone_int_digits=2, fone_frac_digits=2).eval()
    ids = [[5, NUM_IDS["gpt2"][0], 6]]
    values = [[1.0, 12.34, 1.0]]  # float32 would be 12.34000015258789: 'more than 2 fractional digits'
    with torch.no_grad():
        from_list = model(input_ids=torch.tensor(ids), input_numbers=values, labels=torch.tensor(ids),
                          number_labels=values)
        from_tensor = model(input_ids=torch.tensor(ids), input_numbers=torch.tensor(values, dtype=torch.float64))
    assert torch.equal(from_list.logits, from_tensor.logits)
    out = model.generate(input_ids=torch.tensor(ids), input_numbers=values, max_new_tokens=2, do_sample=False,
                         return_dict_in_generate=True, pad_token_id=0)
    assert out.numbers.dtype == torch.float64 and out.numbers[0, 1].item() == 12.34
    # values given as float32 on purpose: the error says that the rounding is the cause
    for narrow in (torch.tensor(values), np.array(values, dtype=np.float32)):
        with pytest.raises(ValueError, match=r"holds 12\.34000015258789 .*at most 2 fractional digits .*\. "
                                             r"input_numbers came as (torch\.)?float32, which rounds .*pass float64"):
            model(input_ids=torch.tensor(ids), input_numbers=narrow)
    with pytest.raises(ValueError, match=r"holds 12\.345000267028809 .*fone_frac_digits=2\)$"):  # 3 digits anyway
        model(input_ids=torch.tensor(ids), input_numbers=torch.tensor([[1.0, 12.345, 1.0]]))


@pytest.mark.parametrize("backbone", BACKBONES)
def test_a_saved_tokenizer_truncates_to_the_model_positions(backbone: str, tmp_path: Path) -> None:
    args = NumberTrainingArguments(backbone=backbone, hidden_size=32, num_layers=2, num_heads=2, max_length=48)
    tokenizer = train_number_tokenizer(TEXTS, backbone, vocab_size=300)
    model = build_model(args, tokenizer)
    tokenizer.save_pretrained(tmp_path)
    reloaded = type(tokenizer).from_pretrained(tmp_path)
    assert reloaded.model_max_length == 48  # was 1e30: truncation=True kept 400 tokens
    batch = reloaded(["word " * 400 + "7.5"], truncation=True, return_tensors="pt")
    assert batch["input_ids"].shape == (1, 48)
    assert model(**batch).logits.shape[1] == 48  # before: IndexError in the position embeddings
