"""Training arguments as Trainer users expect them: TrainingArguments' names, usage errors with exit
code 2, an arguments JSON file, --report_to checked, and the settings of `accelerate launch` respected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from accelerate.state import AcceleratorState
from accelerate.tracking import get_available_trackers
from transformers import TrainingArguments

from hf_numbers.cli import evaluate_parser, parse_train_args
from hf_numbers.cli import main as cli_main
from hf_numbers.data import TASKS
from hf_numbers.modeling import NUMBER_ENCODINGS
from hf_numbers.training import NumberTrainingArguments, make_accelerator
from hf_numbers.training.arguments import DEFAULTS
from hf_numbers.training.loop import resolve_mixed_precision
from hf_numbers_launcher import RENAMED

CHECKOUT_ENV = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1]))  # this checkout's hf_numbers


def test_names_are_those_of_training_arguments() -> None:
    ours = {f.name for f in fields(NumberTrainingArguments)}
    theirs = {f.name for f in fields(TrainingArguments)}
    same_meaning = {
        "output_dir", "per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
        "learning_rate", "weight_decay", "warmup_steps", "max_grad_norm", "max_steps", "seed", "use_cpu",
        "eval_steps", "logging_steps", "save_steps", "save_total_limit", "resume_from_checkpoint", "report_to",
        "run_name", "disable_tqdm", "push_to_hub", "hub_model_id", "hub_token", "hub_private_repo",
    }
    assert same_meaning <= ours & theirs
    assert not set(RENAMED) & ours
    assert NumberTrainingArguments(per_device_train_batch_size=4).per_device_eval_batch_size == 4


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_recommendation_is_a_recommendable_field_and_applies(task: str) -> None:
    """A recommendation under an old or misspelt name (per_device_batch_size) would be dropped silently."""
    recommended = dict(TASKS[task].training_defaults)
    assert not set(recommended) - set(DEFAULTS), f"{task} recommends fields that are not recommendable"
    args = NumberTrainingArguments(task=task)
    assert {name: getattr(args, name) for name in recommended} == recommended


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run `hf-numbers <argv>`, expect a usage error (exit code 2) and return its message."""
    with pytest.raises(SystemExit) as exit_info:
        cli_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: hf-numbers train") and "Traceback" not in err
    return err


def test_bad_arguments_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "unrecognized arguments: --bogus 1" in _usage_error(["train", "--bogus", "1"], capsys)
    err = _usage_error(["train", "--per_device_batch_size", "8", "--progress_bar", "false"], capsys)
    assert "--per_device_batch_size is now --per_device_train_batch_size" in err and "--disable_tqdm" in err
    assert "invalid int value: 'ten'" in _usage_error(["train", "--max_steps", "ten"], capsys)
    assert "max_steps must be >= 0 (0: evaluate the model as built), got -1" in _usage_error(
        ["train", "--max_steps", "-1"], capsys)
    assert "backbone='t5' is unknown" in _usage_error(["train", "--backbone", "t5"], capsys)
    assert "report_to bogus is unknown" in _usage_error(["train", "--report_to", "bogus"], capsys)
    missing = tmp_path / "missing"
    assert "not a complete checkpoint" in _usage_error(["train", "--resume_from_checkpoint", str(missing)], capsys)

    (tmp_path / "bad.json").write_text(json.dumps({"task": "lookup", "cpu": True}))
    err = _usage_error(["train", str(tmp_path / "bad.json")], capsys)
    assert "unknown argument(s) cpu (--cpu is now --use_cpu)" in err
    (tmp_path / "list.json").write_text("[1, 2]")
    assert "must hold a JSON object" in _usage_error(["train", str(tmp_path / "list.json")], capsys)
    assert "cannot read the arguments file" in _usage_error(["train", str(tmp_path / "none.json")], capsys)


def _parse_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Parse `hf-numbers train <argv>` only (nothing trains if it is accepted), expect a usage error (exit code 2)
    whose error is one line, and return the message."""
    with pytest.raises(SystemExit) as exit_info:
        parse_train_args(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: hf-numbers train") and "Traceback" not in err
    assert err.rstrip("\n").splitlines()[-1].startswith("hf-numbers train: error: ")
    return err


def test_a_flag_is_never_abbreviated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`hf-numbers train --max_step 10` was taken as --max_steps (argparse's prefix matching): a typo could set
    another argument. Every command refuses an abbreviation."""
    err = _parse_error(["--max_step", "10", "--output_dir", str(tmp_path / "run")], capsys)
    assert "unrecognized arguments: --max_step 10" in err
    with pytest.raises(SystemExit) as exit_info:
        evaluate_parser().parse_args(["--checkpoint", str(tmp_path), "--task", "lookup", "--eval", "5"])
    assert exit_info.value.code == 2 and "unrecognized arguments: --eval 5" in capsys.readouterr().err
    data = tmp_path / "data"
    for argv in (["make-data", "--task", "lookup", "--output", str(data), "--train", "4"],
                 ["card", str(tmp_path), "--lic", "mit"]):
        with pytest.raises(SystemExit) as exit_info:
            cli_main(argv)
        assert exit_info.value.code == 2 and f"unrecognized arguments: {' '.join(argv[-2:])}" in capsys.readouterr().err
    assert not data.exists()


def test_a_name_outside_its_closed_set_is_a_usage_error_listing_the_allowed_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--task nosuchtask` ended in a 15-line traceback (exit code 1) once training had started, unlike
    `--backbone t5`; a task, an encoding and a task option are now checked with the arguments, from flags and
    from a JSON file alike."""
    run = ["--output_dir", str(tmp_path / "run")]
    err = _parse_error(["--task", "nosuchtask", *run], capsys)
    assert f"task='nosuchtask' is unknown; allowed: {', '.join(TASKS)}" in err
    err = _parse_error(["--number_encoding", "nosuch", *run], capsys)
    assert f"number_encoding='nosuch' is unknown; allowed: {', '.join(NUMBER_ENCODINGS)}" in err
    err = _parse_error(["--task", "multiplication", "--task_options", "colour=red", *run], capsys)
    assert "task 'multiplication' has no option colour; allowed: digits, train_size" in err
    for values in ({"task": "nosuchtask"}, {"number_encoding": "nosuch"}):
        (tmp_path / "args.json").write_text(json.dumps(values))
        assert "is unknown; allowed: " in _parse_error([str(tmp_path / "args.json"), *run], capsys)


def test_the_command_exits_with_code_2_and_no_traceback() -> None:
    result = subprocess.run([sys.executable, "-m", "hf_numbers.cli", "train", "--bogus"], capture_output=True,
                            text=True, env=CHECKOUT_ENV)
    assert result.returncode == 2 and "unrecognized arguments: --bogus" in result.stderr
    assert "Traceback" not in result.stderr


def test_args_json_file_is_read_and_flags_after_it_win(tmp_path: Path) -> None:
    (tmp_path / "args.json").write_text(json.dumps({"task": "multiplication", "max_steps": 7, "use_cpu": True,
                                                    "report_to": "none", "output_dir": str(tmp_path / "a")}))
    args = parse_train_args([str(tmp_path / "args.json"), "--max_steps", "9"])
    assert (args.task, args.max_steps, args.use_cpu, args.report_to) == ("multiplication", 9, True, ["none"])
    assert args.completion_only is True  # task recommendations still fill the unset fields


@pytest.mark.skipif("wandb" in map(str, get_available_trackers()), reason="wandb is installed here")
def test_a_tracker_that_is_not_installed_is_refused() -> None:
    with pytest.raises(ValueError, match=r"report_to wandb: not installed \(pip install wandb\)"):
        NumberTrainingArguments(report_to=["wandb"])
    with pytest.raises(ValueError, match="report_to none excludes other trackers"):
        NumberTrainingArguments(report_to=["none", "tensorboard"])
    assert NumberTrainingArguments(report_to="all").trackers == ["all"]  # those installed, none needed


@pytest.fixture
def fresh_accelerate_state():
    """Accelerate's process-wide state, reset before and after (precision is fixed once it is set)."""
    AcceleratorState._reset_state(reset_partial_state=True)
    yield
    AcceleratorState._reset_state(reset_partial_state=True)


def test_mixed_precision_of_accelerate_launch_is_respected(monkeypatch, fresh_accelerate_state) -> None:
    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION", raising=False)
    assert resolve_mixed_precision(NumberTrainingArguments(use_cpu=True)) == "no"
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")  # what `accelerate launch --mixed_precision bf16` sets
    assert resolve_mixed_precision(NumberTrainingArguments(use_cpu=True)) is None  # Accelerate reads it
    assert make_accelerator(NumberTrainingArguments(use_cpu=True)).mixed_precision == "bf16"
    assert resolve_mixed_precision(NumberTrainingArguments(mixed_precision="no")) == "no"  # an explicit flag wins


def test_a_launched_run_reports_the_launcher_precision(
    tmp_path: Path, monkeypatch, fresh_accelerate_state, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    cli_main(["train", "--task", "lookup", "--train_size", "32", "--eval_size", "4", "--hidden_size", "32",
              "--num_layers", "1", "--num_heads", "2", "--vocab_size", "150", "--per_device_train_batch_size", "8",
              "--max_steps", "2", "--save_steps", "0", "--eval_steps", "0", "--disable_tqdm", "--use_cpu",
              "--output_dir", str(tmp_path / "run")])
    assert "1 process(es) on cpu, mixed precision bf16" in capsys.readouterr().out
