"""The examples run end to end (tiny settings): run_number_clm.py and run_number_mlm.py on the CSV files
that ship in examples/data, on JSON and text files, from a new model, a saved number model and a plain
checkpoint of every backbone."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from transformers import AutoModel, AutoTokenizer

from hf_numbers import BACKBONES

EXAMPLES = Path(__file__).parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
from number_lm import run  # noqa: E402

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


@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_example_adapts_a_plain_checkpoint_on_a_text_file(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    plain = tmp_path / f"plain-{backbone}"  # a plain checkpoint (e.g. BertForMaskedLM) with its tokenizer, tiny
    shutil.copytree(plain_tokenizer_dirs[backbone], plain)
    spec = BACKBONES[backbone]
    tokenizer = spec.load_plain_tokenizer(plain)
    ids = {name: getattr(tokenizer, attribute) for name, attribute in spec.config_class.tokenizer_token_ids.items()}
    config = spec.plain_config_class(**{**spec.tiny_sizes, **ids, "vocab_size": len(tokenizer)})
    spec.plain_model_class(config).save_pretrained(plain)
    lines = [f"the parcel weighs {w / 10} kg and costs {w // 3 + 2} dollars" for w in range(12, 52)]
    (tmp_path / "parcels.txt").write_text("\n".join(lines) + "\n\n")
    out = tmp_path / "run"
    metrics = run(causal=spec.causal, argv=[
        "--model_name_or_path", str(plain), "--number_encoding", "fone", "--train_file", str(tmp_path / "parcels.txt"),
        "--max_steps", "2", "--save_strategy", "no", "--max_seq_length", "32", "--output_dir", str(out), *TINY])
    assert metrics["eval_number_count"] == 4
    model = AutoModel.from_pretrained(out)
    assert type(model) is spec.model_class and model.config.number_encoding == "fone"


def test_the_wrong_script_for_a_backbone_is_refused(tmp_path: Path) -> None:
    (tmp_path / "any.txt").write_text("x is 1\ny is 2\n" * 10)
    with pytest.raises(ValueError, match="backbone gpt2 is a causal LM; use the other script"):
        run(causal=False, argv=["--backbone", "gpt2", "--train_file", str(tmp_path / "any.txt"),
                                "--output_dir", str(tmp_path), *TINY])
