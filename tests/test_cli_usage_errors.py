"""Folders and options that are not what a command needs are usage errors (exit code 2, the message naming the file,
folder or value and what is allowed), before any model is built: an evaluate --checkpoint that is a run folder or a
plain transformers checkpoint; a --pretrained folder without a tokenizer or without the --gguf_file named; an option
of the digit-writing encodings that the chosen encoding would ignore, or out of its range; --add_bos_token true for a
tokenizer with no BOS token. Each of them once ended in a traceback (exit code 1) or was silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import AutoConfig, AutoModelForCausalLM

from hf_numbers.cli import main as cli_main
from hf_numbers.cli import parse_train_args
from hf_numbers.data.tokenizer_training import train_plain_tokenizer
from hf_numbers.modeling.encoding_digits import DIGIT_FEATURE_PARTS
from hf_numbers.training import NumberTrainingArguments, build_dataset, build_tokenizer

TEXTS = ["What is 12 plus 30? 12 + 30 = 42.", "The temperature fell from 21.5 to -3 degrees, 0123456789."] * 20
TINY_RUN = ["--task", "fone_arithmetic", "--train_size", "32", "--eval_size", "8", "--max_steps", "2",
            "--per_device_train_batch_size", "4", "--disable_tqdm", "true", "--use_cpu", "true"]  # fmt: skip


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny random Qwen2 saved with save_pretrained: with its tokenizer (``plain``), without any tokenizer file
    (``weights_only``), and with a tokenizer that has no BOS token (``no_bos``)."""
    root = tmp_path_factory.mktemp("pretrained")
    tokenizer = train_plain_tokenizer(TEXTS, "gpt2", vocab_size=300)
    config = AutoConfig.for_model("qwen2", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                  num_attention_heads=2, num_key_value_heads=1, vocab_size=len(tokenizer),
                                  max_position_embeddings=256)  # fmt: skip
    model = AutoModelForCausalLM.from_config(config)
    for name in ("plain", "weights_only", "no_bos"):
        model.save_pretrained(root / name)
    tokenizer.save_pretrained(root / "plain")
    tokenizer.bos_token = None
    tokenizer.save_pretrained(root / "no_bos")
    return {name: root / name for name in ("plain", "weights_only", "no_bos")}


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str], command: str) -> str:
    """Run ``hf-numbers <argv>``, expect a usage error of ``command`` (exit code 2, no traceback), return stderr."""
    with pytest.raises(SystemExit) as exit_info:
        cli_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: hf-numbers {command}") and "Traceback" not in err
    assert err.rstrip("\n").splitlines()[-1].startswith(f"hf-numbers {command}: error: ")
    return " ".join(err.split())  # argparse wraps nothing in the message, but join lines to be safe


def _parse_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Parse ``hf-numbers train <argv>`` only (nothing is built), expect a usage error, return the message."""
    with pytest.raises(SystemExit) as exit_info:
        parse_train_args(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: hf-numbers train") and "Traceback" not in err
    return err.rstrip("\n").splitlines()[-1]


def test_evaluate_refuses_a_plain_transformers_checkpoint_and_says_how_its_base_model_is_scored(
    folders: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """It ended in AttributeError: 'Qwen2Config' object has no attribute 'num_token_ids'."""
    plain = folders["plain"]
    err = _usage_error(["evaluate", "--checkpoint", str(plain), "--task", "lookup"], capsys, "evaluate")
    assert f"{plain} is not an hf_numbers checkpoint" in err and "model_type 'qwen2'" in err
    assert (f"hf-numbers train --pretrained {plain} --number_encoding text --number_token_loss none "
            "--add_bos_token false --max_steps 0") in err


def test_evaluate_refuses_a_run_folder_naming_the_model_folders_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said the run folder lacked tokenizer_config.json and to save the tokenizer there again."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "training_args.json").write_text("{}")
    err = _usage_error(["evaluate", "--checkpoint", str(run), "--task", "lookup"], capsys, "evaluate")
    assert f"{run} is a run folder with no model yet" in err
    for name in ("final", "checkpoint-12", "checkpoint-4", "runs"):
        (run / name).mkdir()
    err = _usage_error(["evaluate", "--checkpoint", str(run), "--task", "lookup"], capsys, "evaluate")
    assert f"{run} is a run folder; pass {run / 'final'} or one of its checkpoint-<step> folders" in err
    assert f"(here: {run / 'final'}, {run / 'checkpoint-4'}, {run / 'checkpoint-12'})" in err


def test_a_pretrained_folder_without_a_tokenizer_is_refused_before_any_model_is_built(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It ended in a traceback: 'You need to have sentencepiece or tiktoken installed to convert a slow tokenizer'."""
    folder = folders["weights_only"]
    err = _usage_error(["train", *TINY_RUN, "--pretrained", str(folder), "--output_dir", str(tmp_path / "run")],
                       capsys, "train")  # fmt: skip
    assert f"the --pretrained folder {folder} has no tokenizer (none of tokenizer.json, tokenizer_config.json" in err
    assert not (tmp_path / "run").exists()
    args = NumberTrainingArguments(task="lookup", train_size=4, eval_size=2, pretrained=str(folder))
    with pytest.raises(ValueError, match=f"the --pretrained folder {folder} has no tokenizer"):  # the Python API
        build_tokenizer(args, build_dataset(args))


def test_a_gguf_file_that_is_not_in_the_pretrained_folder_is_refused_naming_both(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It ended in a traceback suggesting a huggingface.co URL for the local folder."""
    folder = tmp_path / "with-gguf"
    folder.mkdir()
    (folder / "model.Q4_1.gguf").write_bytes(b"")
    run = ["--output_dir", str(tmp_path / "run")]
    err = _parse_error(["--pretrained", str(folder), "--gguf_file", "missing.gguf", *run], capsys)
    assert f"gguf_file 'missing.gguf' is not in the --pretrained folder {folder} (its GGUF files: model.Q4_1" in err
    assert "huggingface.co" not in err
    err = _parse_error(["--pretrained", str(folders["plain"]), "--gguf_file", "x.gguf", *run], capsys)
    assert f"the --pretrained folder {folders['plain']} (its GGUF files: none)" in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--number_encoding", "xval", "--text_digit_order", "units_first"], ["text_digit_order (an option of text, "
                                                                              "digits)"]),
        (["--number_encoding", "fone", "--digits_features", "fone"], ["digits_features (an option of digits)"]),
        (["--number_encoding", "xval", "--digits_places", "3", "--digits_zero_start", "false"],
         ["digits_places (an option of digits)", "digits_zero_start (an option of digits)"]),
        (["--number_encoding", "text", "--digits_features", "ramp+place"], ["digits_features (an option of digits)"]),
        (["--number_encoding", "p10", "--text_digit_order", "units_first"], ["text_digit_order"]),
    ],
    ids=["order-xval", "features-fone", "places-xval", "features-text", "order-p10"],
)
def test_a_digit_option_the_encoding_would_ignore_is_refused_by_name(
    flags: list[str], named: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--text_digit_order units_first with xval trained to the end and saved text_digit_order None."""
    err = _parse_error([*flags, "--output_dir", str(tmp_path / "run")], capsys)
    assert all(name in err for name in named), err
    assert f"not for number_encoding {flags[1]!r}, which would ignore" in err
    with pytest.raises(ValueError, match="which would ignore"):  # the Python API refuses them too
        NumberTrainingArguments(**dict(zip([flag[2:] for flag in flags[::2]], flags[1::2], strict=True)))


def test_the_digit_options_of_the_encoding_that_takes_them_are_accepted(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    args = parse_train_args(["--pretrained", str(folders["plain"]), "--number_encoding", "digits",
                             "--text_digit_order", "units_first", "--digits_features", "ramp+place",
                             "--digits_places", "6", "--output_dir", str(tmp_path / "run")])  # fmt: skip
    assert (args.text_digit_order, args.digits_features, args.digits_places) == ("units_first", "ramp+place", 6)
    assert parse_train_args(["--number_encoding", "text", "--text_digit_order", "units_first", "--output_dir",
                             str(tmp_path / "run")]).text_digit_order == "units_first"  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--number_encoding", "digits", "--digits_features", "fone+bogus"],
         f"digits_features='fone+bogus' is unknown; allowed: one or more of {', '.join(DIGIT_FEATURE_PARTS)}, "
         "joined by '+'"),
        (["--number_encoding", "digits", "--digits_places", "40"], "digits_places must be in [1, 18], got 40"),
        (["--number_encoding", "digits", "--digits_features", "below", "--text_digit_order", "units_first"],
         "use it with text_digit_order='as_written'"),
        (["--number_encoding", "text", "--text_digit_order", "bogus"],
         "text_digit_order='bogus' with number_encoding='text'; allowed: as_written, units_first"),
    ],
    ids=["features", "places", "below-units-first", "order"],
)
def test_a_digit_option_out_of_its_range_is_a_usage_error_naming_the_allowed_values(
    flags: list[str], message: str, folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--digits_features fone+bogus ended in a traceback (exit code 1) once the model's config was built."""
    run = ["--pretrained", str(folders["plain"]), "--output_dir", str(tmp_path / "run")]
    assert message in _parse_error([*flags, *run], capsys)


def test_add_bos_token_for_a_tokenizer_without_a_bos_token_is_a_usage_error_naming_the_folder(
    folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It ended in a traceback (ValueError from the tokenizer's set-up); the run folder is left free for a rerun."""
    folder, run = folders["no_bos"], tmp_path / "run"
    argv = ["train", *TINY_RUN, "--pretrained", str(folder), "--number_encoding", "text", "--output_dir", str(run)]
    err = _usage_error([*argv, "--add_bos_token", "true"], capsys, "train")
    assert f"add_bos_token=True: the tokenizer of {folder} has no BOS token" in err
    assert not (run / "final").exists()
    parse_train_args(argv[1:])  # the same run without the flag is not refused as a used --output_dir


def test_an_option_out_of_its_range_beside_one_fitted_to_the_data_is_a_usage_error_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--fone_int_digits 0 with --fone_frac_digits left to the data cannot be checked when parsing (the pair is
    checked together); it ended in a traceback once the model's config was built. Now it is refused once fitted,
    before any model exists."""
    run = tmp_path / "run"
    argv = [*TINY_RUN, "--number_encoding", "fone", "--fone_int_digits", "0", "--output_dir", str(run)]
    parse_train_args(argv)  # not refused while the data's options are unknown
    err = _usage_error(["train", *argv], capsys, "train")
    assert "fone_int_digits must be >= 1, got 0" in err
    assert not (run / "final").exists()
