"""The examples run end to end (tiny settings): run_number_clm.py and run_number_mlm.py on the CSV files
that ship in examples/data, on JSON and text files, from a new model, a saved number model and a plain
checkpoint of every backbone; data they cannot train on is refused, naming its file, row and value, before training."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from hf_numbers import BACKBONES

EXAMPLES = Path(__file__).parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
from number_lm import DataArguments, ModelArguments, fill_recipe, load_texts, run  # noqa: E402

TINY = ["--hidden_size", "32", "--num_layers", "1", "--num_heads", "2", "--vocab_size", "200",
        "--per_device_train_batch_size", "8", "--learning_rate", "3e-3", "--logging_steps", "2", "--use_cpu", "true",
        "--report_to", "none", "--disable_tqdm", "true", "--max_eval_samples", "16"]


@pytest.fixture(scope="module")
def clm_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """run_number_clm.py on the shipped CSVs: 2014 to train, 2015 to validate; checkpoints at 2 and 4."""
    out = tmp_path_factory.mktemp("clm") / "run"
    metrics = run(causal=True, argv=[
        "--train_file", str(EXAMPLES / "data" / "seattle_weather_2014.csv"),
        "--validation_file", str(EXAMPLES / "data" / "seattle_weather_2015.csv"),
        "--max_train_samples", "64", "--max_steps", "4", "--save_steps", "2", "--output_dir", str(out), *TINY])
    return out, metrics


def test_clm_example_trains_saves_and_evaluates_numbers(clm_run: tuple[Path, dict]) -> None:
    out, metrics = clm_run
    assert metrics["eval_number_count"] == 16  # the last number (the day's high) of every validation text
    assert metrics["eval_loss"] > 0 and 0 <= metrics["eval_number_invalid_rate"] <= 1
    assert json.loads((out / "eval_results.json").read_text())["eval_number_count"] == 16
    for folder in (out, out / "checkpoint-2", out / "checkpoint-4"):
        model = AutoModel.from_pretrained(folder)
        assert type(model).__name__ == "NumberGPT2ForCausalLM"
        assert AutoTokenizer.from_pretrained(folder).num_token_ids
        # xVal's values are standardised inside the model (the scaling is in its config, no file beside it)
        assert model.config.number_scaling_scale > 1 and not model.number_scaling.is_identity
        assert not (folder / "number_scaler.json").exists()


def test_clm_example_fine_tunes_a_saved_model_on_a_json_file(clm_run: tuple[Path, dict], tmp_path: Path) -> None:
    saved, _ = clm_run
    rows = [{"id": i, "sentence": f"Day {i}: low {i % 7 + 1.5} C, high {i % 7 + 8.5} C"} for i in range(40)]
    (tmp_path / "days.jsonl").write_text("\n".join(json.dumps(row) for row in rows))
    out = tmp_path / "tuned"
    metrics = run(causal=True, argv=[
        "--model_name_or_path", str(saved), "--train_file", str(tmp_path / "days.jsonl"),
        "--text_column_name", "sentence", "--max_steps", "2", "--save_strategy", "no", "--output_dir", str(out),
        *TINY])
    assert metrics["eval_number_count"] == 4  # 10% of 40 held out
    assert AutoTokenizer.from_pretrained(out).get_vocab() == AutoTokenizer.from_pretrained(saved).get_vocab()
    assert AutoModel.from_pretrained(out).number_scaling == AutoModel.from_pretrained(saved).number_scaling


def _plain_checkpoint(backbone: str, plain_tokenizer_dirs: dict[str, Path], plain: Path) -> Path:
    """A plain checkpoint (e.g. BertForMaskedLM) of ``backbone`` with its tokenizer, tiny, saved in ``plain``."""
    shutil.copytree(plain_tokenizer_dirs[backbone], plain)
    spec = BACKBONES[backbone]
    tokenizer = spec.load_plain_tokenizer(plain)
    ids = {name: getattr(tokenizer, attribute) for name, attribute in spec.config_class.tokenizer_token_ids.items()}
    config = spec.plain_config_class(**{**spec.tiny_sizes, **ids, "vocab_size": len(tokenizer)})
    spec.plain_model_class(config).save_pretrained(plain)
    return plain


@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_example_adapts_a_plain_checkpoint_on_a_text_file(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    plain = _plain_checkpoint(backbone, plain_tokenizer_dirs, tmp_path / f"plain-{backbone}")
    spec = BACKBONES[backbone]
    lines = [f"the parcel weighs {w / 10} kg and costs {w // 3 + 2} dollars" for w in range(12, 52)]
    (tmp_path / "parcels.txt").write_text("\n".join(lines) + "\n\n")
    out = tmp_path / "run"
    encoding = "fone"
    metrics = run(causal=spec.causal, argv=[
        "--model_name_or_path", str(plain), "--number_encoding", encoding,
        "--train_file", str(tmp_path / "parcels.txt"), "--max_steps", "2", "--save_strategy", "no",
        "--max_seq_length", "32", "--output_dir", str(out), *TINY])
    assert metrics["eval_number_count"] == 4
    model = AutoModel.from_pretrained(out)
    assert type(model) is spec.model_class and model.config.number_encoding == encoding


@pytest.mark.parametrize("model_type", ["qwen2", "distilbert"])
def test_example_adapts_a_plain_checkpoint_of_a_composed_backbone(model_type: str, tmp_path: Path) -> None:
    """A plain Qwen2 / DistilBERT checkpoint, which no table of hf_numbers names, adapted by the example scripts."""
    from hf_numbers import get_backbone
    from hf_numbers.data.tokenizer_training import train_plain_tokenizer

    lines = [f"the parcel weighs {w / 10} kg and costs {w // 3 + 2} dollars" for w in range(12, 52)]
    spec, plain = get_backbone(model_type), tmp_path / "plain"
    tokenizer = train_plain_tokenizer(lines, model_type, vocab_size=200)
    tokenizer.save_pretrained(plain)
    ids = {name: getattr(tokenizer, attribute) for name, attribute in spec.config_class.tokenizer_token_ids.items()}
    config = spec.plain_config_class(**{**spec.tiny_sizes, **ids, "vocab_size": len(tokenizer)})
    spec.plain_model_class(config).save_pretrained(plain)
    (tmp_path / "parcels.txt").write_text("\n".join(lines) + "\n\n")
    metrics = run(causal=spec.causal, argv=[
        "--model_name_or_path", str(plain), "--number_encoding", "fone", "--train_file", str(tmp_path / "parcels.txt"),
        "--max_steps", "2", "--save_strategy", "no", "--max_seq_length", "64", "--output_dir", str(tmp_path / "run"),
        *TINY])  # fmt: skip
    assert metrics["eval_number_count"] == 4
    model = AutoModel.from_pretrained(tmp_path / "run")
    assert type(model) is spec.model_class and model.config.text_config.model_type == model_type


@pytest.mark.parametrize("backbone", [name for name, spec in BACKBONES.items() if spec.causal])
def test_the_clm_example_adapts_a_plain_checkpoint_with_the_pretrained_recipe_by_default(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """No --number_encoding: a plain causal LM keeps its own digits, gets their values added and trains with NTL
    (``--pretrained``'s recipe); the answers it writes are read back as numbers."""
    pytest.importorskip("ntloss")
    from hf_numbers.training.arguments import PRETRAINED_RECIPE

    plain = _plain_checkpoint(backbone, plain_tokenizer_dirs, tmp_path / "plain")
    lines = [f"the parcel weighs {w / 10} kg and costs {w // 3 + 2} dollars" for w in range(12, 52)]
    (tmp_path / "parcels.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    metrics = run(causal=True, argv=[
        "--model_name_or_path", str(plain), "--train_file", str(tmp_path / "parcels.txt"), "--max_steps", "2",
        "--save_strategy", "no", "--max_seq_length", "32", "--output_dir", str(out), *TINY])  # fmt: skip
    assert metrics["eval_number_count"] == 4 and 0 <= metrics["eval_number_invalid_rate"] <= 1
    model = AutoModel.from_pretrained(out)
    assert model.config.number_encoding == PRETRAINED_RECIPE["number_encoding"] and model.digit_values is not None
    lookahead = {name: getattr(model.config, name) for name in PRETRAINED_RECIPE if name.startswith("digit_look")}
    assert lookahead == {name: PRETRAINED_RECIPE[name] for name in lookahead} and len(lookahead) == 3
    assert model.digit_lookahead is not None  # the heads train (in the model's loss) and are saved
    assert not AutoTokenizer.from_pretrained(out).num_token_ids  # numbers stay the model's own digit tokens
    chosen = ModelArguments(model_name_or_path=str(plain))
    fill_recipe(chosen, causal=True)
    assert {name: getattr(chosen, name) for name in PRETRAINED_RECIPE if hasattr(chosen, name)} == {
        name: value for name, value in PRETRAINED_RECIPE.items() if name != "digits_features"}  # fmt: skip
    assert model.config.digits_features == PRETRAINED_RECIPE["digits_features"]  # the recipe's value parts
    saved = ModelArguments(model_name_or_path=str(out), digit_lookahead=1)  # a number model keeps its own
    with pytest.raises(ValueError, match=f"digit_lookahead 1: {out} is a number model with digit_lookahead 2"):
        fill_recipe(saved, causal=True)
    numbers_as_num = ModelArguments(model_name_or_path=str(plain), number_encoding="xval", digit_lookahead=2)
    with pytest.raises(ValueError, match="digit_lookahead 2: the digit lookahead scores the digits .* 'xval' here"):
        fill_recipe(numbers_as_num, causal=True)
    fill_recipe(plain_xval := ModelArguments(model_name_or_path=str(plain), number_encoding="xval"), causal=True)
    assert (plain_xval.digit_lookahead, plain_xval.number_token_loss) == (0, "none")
    unused = ModelArguments(model_name_or_path=str(plain), digit_lookahead=0, digit_lookahead_leading=False)
    with pytest.raises(ValueError, match="digit_lookahead_leading False shapes the digit lookahead; set"):
        fill_recipe(unused, causal=True)


@pytest.mark.parametrize("backbone", [name for name, spec in BACKBONES.items() if spec.causal])
def test_example_adapts_a_plain_checkpoint_with_lora_and_saves_the_merged_model_and_its_adapter(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    pytest.importorskip("peft")
    from hf_numbers.training.lora import load_adapter

    plain = _plain_checkpoint(backbone, plain_tokenizer_dirs, tmp_path / "plain")
    spec = BACKBONES[backbone]
    lines = [f"the parcel weighs {w / 10} kg and costs {w // 3 + 2} dollars" for w in range(12, 52)]
    (tmp_path / "parcels.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    run(causal=True, argv=[
        "--model_name_or_path", str(plain), "--number_encoding", "xval", "--lora_r", "4",
        "--train_file", str(tmp_path / "parcels.txt"), "--max_steps", "2", "--save_strategy", "no",
        "--max_seq_length", "32", "--output_dir", str(out), *TINY])
    merged = AutoModel.from_pretrained(out).eval()
    assert type(merged) is spec.model_class and not (out / "adapter_config.json").exists()
    batch = AutoTokenizer.from_pretrained(out)(lines[:2], padding=True, return_tensors="pt")
    with torch.no_grad():
        again = load_adapter(out / "adapter").merge_and_unload().eval()(**batch)
        assert torch.equal(merged(**batch).logits, again.logits)


def test_the_wrong_script_for_a_backbone_is_refused(tmp_path: Path) -> None:
    (tmp_path / "any.txt").write_text("x is 1\ny is 2\n" * 10)
    with pytest.raises(ValueError, match="backbone gpt2 is a causal LM; use the other script"):
        run(causal=False, argv=["--backbone", "gpt2", "--train_file", str(tmp_path / "any.txt"),
                                "--output_dir", str(tmp_path), *TINY])


def test_an_abbreviated_flag_is_refused_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "any.txt").write_text("x is 1\ny is 2\n" * 10)
    with pytest.raises(ValueError, match=r"not used by the HfArgumentParser: \['--max_step', '1'\]"):
        run(causal=True, argv=["--train_file", str(tmp_path / "any.txt"), "--output_dir", str(tmp_path),
                               "--max_step", "1", *TINY])  # taken for --max_steps before


def _csv(path: Path, texts: list[str], column: str = "text") -> Path:
    """A CSV file of ``id`` and ``column`` (one row per text; "" writes an empty cell)."""
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["id", column])
        writer.writerows(enumerate(texts))
    return path


DAYS = [f"day {i}: low {i % 7 + 1.5} C, high {i % 7 + 8.5} C" for i in range(30)]


def _refused(out: Path, *argv: str, causal: bool = True) -> str:
    """The ``ValueError`` message of a run meant to save a checkpoint every step, which must have saved none."""
    with pytest.raises(ValueError) as error:
        run(causal=causal, argv=[*argv, "--max_steps", "2", "--save_steps", "1", "--output_dir", str(out), *TINY])
    assert not list(out.glob("checkpoint-*"))
    return str(error.value)


@pytest.mark.parametrize(("encoding", "allowed"), [
    ("xval", "|x| <= 1.341e+154"), ("fone", "|x| < 10^15"), ("float", "|x| <= 3.4028235e+38")])
def test_a_value_the_encoding_cannot_hold_is_refused_before_training(
    encoding: str, allowed: str, tmp_path: Path
) -> None:
    """1e300 in a CSV: one error naming the file, row, column, value and the encoding's range, before any
    checkpoint (before: xval's scaling, fone's size and float's check mid-training failed with internal errors)."""
    days = _csv(tmp_path / "days.csv", DAYS[:4] + ["day 4: low 1e300 C, high 9 C"] + DAYS[5:])
    message = _refused(tmp_path / "run", "--train_file", str(days), "--number_encoding", encoding)
    assert f"{days}, row 5 (data rows count from 1, a CSV header not counted), column 'text'" in message
    assert "the number 1e300 (1e+300)" in message and f"the {encoding!r} encoding" in message and allowed in message


@pytest.mark.parametrize(("causal", "encoding"), [(True, "p10"), (False, "text"), (False, "digits")])
def test_an_encoding_the_script_does_not_train_is_refused_by_name(causal: bool, encoding: str, tmp_path: Path) -> None:
    """The causal script trains [NUM] encodings and the model's own digits, the masked one [NUM] encodings; the others
    are refused before any model is built (before: a config error after the model was loaded)."""
    message = _refused(tmp_path / "run", "--train_file", str(_csv(tmp_path / "days.csv", DAYS)),
                       "--number_encoding", encoding, causal=causal)  # fmt: skip
    assert f"number_encoding {encoding!r}: this script trains xval, " in message
    assert ("text, digits;" in message) == causal and "hf-numbers train" in message


def test_the_number_token_loss_with_a_num_token_encoding_is_refused_by_name(tmp_path: Path) -> None:
    message = _refused(tmp_path / "run", "--train_file", str(_csv(tmp_path / "days.csv", DAYS)),
                       "--number_encoding", "xval", "--number_token_loss", "ntl")  # fmt: skip
    assert ("number_token_loss 'ntl': none, or one of ntl, number-level, ntl+number-level where the causal script "
            "trains the model's own digits") in message


def test_a_value_in_the_validation_file_is_refused_before_training(tmp_path: Path) -> None:
    """Every split is checked: 1e300 in --validation_file stops float before training, not at evaluation."""
    train = _csv(tmp_path / "train.csv", DAYS)
    validation = _csv(tmp_path / "valid.csv", DAYS[:2] + ["day 2: low 3 C, high -1e300 C"])
    message = _refused(tmp_path / "run", "--train_file", str(train), "--validation_file", str(validation),
                       "--number_encoding", "float")
    assert f"{validation}, row 3 " in message and "the number -1e300 (-1e+300)" in message and "'float'" in message


def test_numbers_fone_can_hold_apart_but_not_together_are_refused_before_training(tmp_path: Path) -> None:
    """fone's places are fitted to every split at once: 13 integer places (train) leave 2 of 15 for fractions, so
    0.0001 in the validation file is refused (before: the options fitted to train only, evaluation failed)."""
    train = _csv(tmp_path / "train.csv", DAYS[:3] + ["day 3: population 1000000000000, low 2 C"])
    validation = _csv(tmp_path / "valid.csv", DAYS[:1] + ["day 1: rain 0.0001 mm, low 2 C"])
    message = _refused(tmp_path / "run", "--train_file", str(train), "--validation_file", str(validation),
                       "--number_encoding", "fone")
    assert f"{validation}, row 2 " in message and "the number 0.0001 (0.0001)" in message
    assert "widest integer part takes 13 places (fone_int_digits), which leaves 2 fractional digits" in message


@pytest.mark.parametrize("empty_file", ["train", "validation"])
def test_a_text_column_empty_in_every_row_is_refused_with_its_name(empty_file: str, tmp_path: Path) -> None:
    """An empty column names its file and column (before: "fit needs at least one value", or for an empty validation
    column a pyarrow cast error from reading both files as one)."""
    files = {split: _csv(tmp_path / f"{split}.csv", [""] * 20 if split == empty_file else DAYS)
             for split in ("train", "validation")}
    message = _refused(tmp_path / "run", "--train_file", str(files["train"]),
                       "--validation_file", str(files["validation"]))
    assert f"{files[empty_file]}: column 'text' is empty in all 20 rows" in message
    assert "(columns: id, text)" in message


def test_a_missing_text_column_is_refused_with_the_columns_its_file_has(tmp_path: Path) -> None:
    """--text_column_name missing from the validation file: the error names that file and lists its columns."""
    train = _csv(tmp_path / "train.csv", DAYS, column="sentence")
    validation = _csv(tmp_path / "valid.csv", DAYS, column="text")
    message = _refused(tmp_path / "run", "--train_file", str(train), "--validation_file", str(validation),
                       "--text_column_name", "sentence")
    assert f"{validation} has no column 'sentence' (--text_column_name); its columns: id, text" in message


def test_a_column_of_numbers_is_refused_with_its_first_cell(tmp_path: Path) -> None:
    """A CSV column the reader parses as numbers (inf included) is not text: its first cell's row and value."""
    readings = _csv(tmp_path / "readings.csv", ["inf", "2.5", "nan"], column="reading")
    message = _refused(tmp_path / "run", "--train_file", str(readings), "--text_column_name", "reading")
    assert f"{readings}, row 1 (data rows count from 1, a CSV header not counted), column 'reading'" in message
    assert "holds inf (float), not text" in message


def test_bad_data_flags_and_unreadable_files_are_refused_by_name_before_training(tmp_path: Path) -> None:
    """Flags that would be ignored or fail inside datasets, a file that is not UTF-8 and one row with nothing to hold
    out: each a ValueError naming the flag or the file, before any checkpoint."""
    days = str(_csv(tmp_path / "days.csv", DAYS))
    for flags, message in ((["--validation_split_percentage", "0"], "--validation_split_percentage must be in 1..99"),
                           (["--max_train_samples", "0"], "--max_train_samples must be >= 1 (or unset"),
                           (["--max_train_samples", "-2"], "--max_train_samples must be >= 1 (or unset"),
                           (["--eval_number_index", "5"], "--eval_number_index 5: no validation text holds that")):
        assert message in _refused(tmp_path / "run", "--train_file", days, *flags)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("id,text\n0,caf\xe9 at 3 pm\n".encode("latin-1"))
    assert f"{latin}: cannot be read as csv (" in _refused(tmp_path / "run", "--train_file", str(latin))
    one = _csv(tmp_path / "one.csv", DAYS[:1])
    message = _refused(tmp_path / "run", "--train_file", str(one))
    assert f"{one}: 1 row is too few to hold out validation rows" in message


def test_the_two_files_may_differ_in_format_and_a_name_no_reader_knows_is_refused_by_its_flag(tmp_path: Path) -> None:
    """A .jsonl training file with a .csv validation file: each is read by its own suffix (before: refused, with a
    message saying both must be one of the suffixes both were). A .parquet name is refused by its flag."""
    train = tmp_path / "days.jsonl"
    train.write_text("".join(json.dumps({"text": day}) + "\n" for day in DAYS))
    validation = _csv(tmp_path / "valid.csv", DAYS[:3])
    texts = load_texts(DataArguments(train_file=str(train), validation_file=str(validation)), seed=0)
    assert texts["train"]["text"] == DAYS and texts["validation"]["text"] == DAYS[:3]
    with pytest.raises(ValueError, match=r"--validation_file .*valid\.parquet: the name must end in one of .csv, "):
        load_texts(DataArguments(train_file=str(train), validation_file=str(tmp_path / "valid.parquet")), seed=0)
