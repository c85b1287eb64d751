"""Faults of training and checkpoints: resume, output folders, log history, non-finite settings and losses,
damaged resume state, final/ written whole, a full disk, bad data. Each gives a clear error or a documented
safe behaviour, and nothing of an earlier run is lost by starting a new one (faults of the model side:
tests/test_model_faults.py).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from accelerate.utils import set_seed
from datasets import DatasetDict
from safetensors import SafetensorError
from safetensors.torch import load_file

from hf_numbers.cli import main as cli_main
from hf_numbers.data import make_task, save_task, task_name
from hf_numbers.data.checks import load_saved_task
from hf_numbers.data.collators import DataCollatorForNumberCausalLM
from hf_numbers.data.tasks import TASK_FILE
from hf_numbers.training import (
    NumberTrainingArguments,
    build_dataset,
    build_model,
    build_tokenizer,
    list_checkpoints,
    load_trained,
    run_training,
    tokenize_dataset,
    train_model,
)
from hf_numbers.training import checkpoints as checkpoints_module
from hf_numbers.training import pipeline as pipeline_module
from hf_numbers.training.loop import check_run
from hf_numbers.training.run_folder import LOCK_FILE, check_output_dir

SMALL = dict(task="lookup", train_size=64, eval_size=8, hidden_size=32, num_layers=2, num_heads=2, vocab_size=150,
             per_device_train_batch_size=8, warmup_steps=2, logging_steps=2, disable_tqdm=True, use_cpu=True,
             max_steps=6, save_steps=3, eval_steps=3, save_total_limit=0)
CLI = ["--task", "lookup", "--train_size", "64", "--eval_size", "8", "--hidden_size", "32", "--num_layers", "2",
       "--num_heads", "2", "--vocab_size", "150", "--per_device_train_batch_size", "8", "--logging_steps", "2",
       "--disable_tqdm", "true", "--use_cpu", "true", "--max_steps", "4", "--save_steps", "4", "--eval_steps", "0"]


def small_args(output_dir: Path, **overrides) -> NumberTrainingArguments:
    return NumberTrainingArguments(**{**SMALL, "output_dir": str(output_dir), **overrides})


@pytest.fixture(scope="module")
def data():
    args = NumberTrainingArguments(**SMALL)
    dataset = build_dataset(args)
    tokenizer = build_tokenizer(args, dataset)
    return tokenizer, tokenize_dataset(dataset, tokenizer, args.max_length)


def train(data, args: NumberTrainingArguments, collator=None):
    """A fresh model (same initialisation every time) trained by ``train_model``."""
    tokenizer, tokenized = data
    set_seed(0)
    model = build_model(args, tokenizer)
    plain = DataCollatorForNumberCausalLM(tokenizer)
    return train_model(model, tokenized["train"], collator or plain, args, tokenized["validation"], plain)


class Crash(Exception):
    """Stands for a kill: raised by the collator in the middle of a run."""


def crashing_collator(tokenizer, after: int):
    collator, calls = DataCollatorForNumberCausalLM(tokenizer), []

    def collate(features):
        calls.append(1)
        if len(calls) > after:
            raise Crash
        return collator(features)

    return collate


@pytest.fixture(scope="module")
def finished_run(data, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 6-step run with checkpoints at steps 3 and 6; tests copy it before touching it."""
    folder = tmp_path_factory.mktemp("finished") / "run"
    train(data, small_args(folder))
    return folder


def copy_run(finished_run: Path, tmp_path: Path, drop_newest: bool = False) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(finished_run, folder)
    if drop_newest:
        shutil.rmtree(folder / "checkpoint-6")
    return folder


# ---- resume runs no pickle


class Payload:
    """Unpickling it runs a shell command that creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_resume_runs_no_pickle_planted_in_a_checkpoint(data, finished_run: Path, tmp_path: Path) -> None:
    folder = copy_run(finished_run, tmp_path, drop_newest=True)
    checkpoint = folder / "checkpoint-3"
    names = {p.name for p in checkpoint.iterdir()}
    assert {"model.safetensors", "optimizer.pt", "process_0.safetensors", "trainer_state.json", "config.json"} <= names
    assert not [name for name in names if name.endswith((".pkl", ".bin", ".pth"))]
    marker = tmp_path / "payload-ran"
    # every file name Accelerate's load_state would unpickle
    for name in ("custom_checkpoint_0.pkl", "random_states_0.pkl", "scheduler.bin", "optimizer.bin", "scaler.pt"):
        torch.save(Payload(marker), checkpoint / name)
    _, result = train(data, small_args(folder, resume_from_checkpoint="latest"))
    assert result.global_step == 6 and not marker.exists()

    shutil.rmtree(folder / "checkpoint-6")
    torch.save({"state": {}, "param_groups": [Payload(marker)]}, checkpoint / "optimizer.pt")
    with pytest.raises(ValueError, match=r"optimizer\.pt is not this optimizer's state"):
        train(data, small_args(folder, resume_from_checkpoint="latest"))
    assert not marker.exists()


# ---- one run per output_dir


def test_a_used_output_dir_is_refused_unless_overwritten(data, finished_run: Path, tmp_path: Path) -> None:
    folder = copy_run(finished_run, tmp_path)
    def snapshot() -> dict[str, int]:
        return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}

    before = snapshot()
    with pytest.raises(ValueError, match="already holds an earlier run.*--overwrite_output_dir"):
        train(data, small_args(folder))
    assert snapshot() == before  # nothing of the earlier run was touched

    with pytest.raises(ValueError, match="holds newer checkpoints"):  # resuming an older step would mix two runs
        train(data, small_args(folder, resume_from_checkpoint=str(folder / "checkpoint-3")))

    _, result = train(data, small_args(folder, overwrite_output_dir=True, max_steps=4, save_steps=4))
    assert [p.name for p in list_checkpoints(folder)] == ["checkpoint-4"]  # the earlier run's are gone
    history = json.loads((folder / "checkpoint-4" / "trainer_state.json").read_text())["log_history"]
    assert history == result.log_history and max(r["step"] for r in history) == 4

    finished = tmp_path / "no-checkpoints"  # a finished run saved without checkpoints: 'latest' finds none
    finished.mkdir()
    shutil.copy(folder / "training_args.json", finished)
    with pytest.raises(ValueError, match=r"already holds an earlier run \(training_args\.json\) but no complete "
                                         r"checkpoint for --resume_from_checkpoint latest: it saved none"):
        train(data, small_args(finished, resume_from_checkpoint="latest"))
    (finished / "checkpoint-2").mkdir()  # killed before its trainer_state.json was written (or it was deleted)
    with pytest.raises(ValueError, match=r"no complete checkpoint .*: checkpoint-2 lack\(s\) trainer_state\.json"):
        train(data, small_args(finished, resume_from_checkpoint="latest"))

    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="not an hf-numbers run folder"):
        train(data, small_args(other, overwrite_output_dir=True))
    assert (other / "keep.txt").read_text() == "mine"
    with pytest.raises(ValueError, match=r"not a writable folder \(.*keep\.txt is a file\)"):
        train(data, small_args(other / "keep.txt" / "run"))
    with pytest.MonkeyPatch.context() as patch:  # a read-only parent (root may write anywhere, so pretend)
        patch.setattr(os, "access", lambda path, mode: Path(path) != other)
        with pytest.raises(ValueError, match=r"output_dir .*notes/run is not a writable folder \(.*notes is not "):
            check_run(small_args(other / "run"))


HOLD_LOCK = "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', " \
            "flush=True); time.sleep(600)"
"""Another run working in a folder, as far as the folder's lock tells (argument: the lock file)."""


def test_a_second_run_on_the_same_folder_is_refused(data, finished_run: Path, tmp_path: Path, capsys) -> None:
    """Two runs started at once with --overwrite_output_dir on one folder mixed their files (training_args.json
    of one, final/ of the other): the second is refused before it writes anything."""
    folder = copy_run(finished_run, tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(folder / LOCK_FILE)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        before = {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}
        with pytest.raises(SystemExit) as exit_info:
            cli_main(["train", *CLI, "--output_dir", str(folder), "--overwrite_output_dir", "true"])
        assert exit_info.value.code == 2
        assert f"output_dir {folder} is in use: another run holds it" in capsys.readouterr().err
        assert {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")} == before
    finally:
        holder.kill()
        holder.wait()

    # the holder ended (killed): its lock file stays, locks nothing, and no check counts it as a file of the folder
    _, result = train(data, small_args(folder, resume_from_checkpoint="latest"))
    assert result.global_step == 6 and (folder / LOCK_FILE).exists()
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / LOCK_FILE).touch()
    assert check_output_dir(stale, None, overwrite=False) is False  # as good as empty


# ---- the log history survives resume


def test_resume_after_crash_restores_log_history_and_weights(data, tmp_path: Path) -> None:
    """Logging every 2 steps and saving every 3 leaves a half-filled loss window in checkpoint-3."""
    tokenizer, _ = data
    full_model, full = train(data, small_args(tmp_path / "full"))
    with pytest.raises(Crash):
        train(data, small_args(tmp_path / "crashed"), crashing_collator(tokenizer, after=4))
    assert [p.name for p in list_checkpoints(tmp_path / "crashed")] == ["checkpoint-3"]
    model, resumed = train(data, small_args(tmp_path / "crashed", resume_from_checkpoint="latest"))
    assert resumed.log_history == full.log_history
    assert json.loads((tmp_path / "crashed" / "log_history.json").read_text()) == full.log_history
    for (name, expected), actual in zip(full_model.state_dict().items(), model.state_dict().values()):
        assert torch.equal(expected, actual), name


def test_resuming_a_finished_run_keeps_its_history_and_writes_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    cli_main(["train", *CLI, "--output_dir", str(run)])
    first = json.loads((run / "log_history.json").read_text())
    cli_main(["train", *CLI, "--output_dir", str(run), "--resume_from_checkpoint", "latest"])
    assert json.loads((run / "log_history.json").read_text()) == first

    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} in JSON")

    for name in ("summary.json", "metrics.json", "log_history.json", "training_args.json"):
        json.loads((run / name).read_text(), parse_constant=no_constants)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["last_train_loss"] == [record["loss"] for record in first if "loss" in record][-1]
    assert "final training loss nan" not in capsys.readouterr().out


# ---- non-finite settings and losses


def test_non_finite_settings_are_refused_before_any_work(data, tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:  # a usage error of hf-numbers train
        cli_main(["train", *CLI, "--output_dir", str(tmp_path / "run"), "--learning_rate", "inf"])
    assert exit_info.value.code == 2 and "learning_rate must be a finite number" in capsys.readouterr().err
    args = small_args(tmp_path / "run", max_grad_norm=float("nan"))
    with pytest.raises(ValueError, match="max_grad_norm must be a finite number, got nan"):
        train(data, args)
    args.max_grad_norm, args.learning_rate = 1.0, float("inf")  # changed after the arguments were checked
    with pytest.raises(ValueError, match="learning_rate must be a finite number, got inf"):
        train(data, args)
    assert not (tmp_path / "run").exists()


def test_training_stops_at_the_first_non_finite_loss(data, tmp_path: Path) -> None:
    tokenizer, tokenized = data
    plain = DataCollatorForNumberCausalLM(tokenizer)

    def poisoning(model, after: int):
        """A collator that sets the number head's output weights to NaN when batch ``after + 1`` is fetched."""
        calls = []

        def collate(features):
            calls.append(1)
            if len(calls) == after + 1:
                model.number_encoding.mlp[-1].weight.data.fill_(float("nan"))
            return plain(features)

        return collate

    folder = tmp_path / "run"
    args = small_args(folder, save_steps=1)
    set_seed(0)
    model = build_model(args, tokenizer)
    # batch 6 is fetched (Accelerate looks one batch ahead) once step 4 is done: step 5 is the first bad one
    with pytest.raises(FloatingPointError, match=r"step 5: loss and number_loss not finite on process 0 "
                                                 r"\(loss nan, token_loss [0-9.]+, number_loss nan\)"):
        train_model(model, tokenized["train"], poisoning(model, 5), args, tokenized["validation"], plain)
    assert [p.name for p in list_checkpoints(folder)] == [f"checkpoint-{s}" for s in range(1, 5)]
    assert all(t.isfinite().all() for t in load_file(folder / "checkpoint-4" / "model.safetensors").values())
    assert not (folder / "log_history.json").exists()

    args = small_args(tmp_path / "eval")
    set_seed(0)
    model = build_model(args, tokenizer)
    with pytest.raises(FloatingPointError, match="step 3: eval_loss and eval_number_loss not finite in evaluation"):
        train_model(model, tokenized["train"], plain, args, tokenized["validation"], poisoning(model, 0))

    # xVal scales the [NUM] embedding by the value: once that embedding has grown too large (diverged
    # weights) the model refuses the batch before the loss can overflow, and the error names the step
    args = small_args(tmp_path / "grown")
    set_seed(0)
    model = build_model(args, tokenizer)
    calls = []

    def growing(features):
        calls.append(1)
        if len(calls) == 3:
            model.get_input_embeddings().weight.data[tokenizer.num_token_ids] = 1e30
        return plain(features)

    with pytest.raises(ValueError, match=r"step 2: the model refused a training batch: input_numbers .*embedding "
                                         r"\(norm [0-9.e+]+\) it would overflow float32"):
        train_model(model, tokenized["train"], growing, args)


# ---- damaged resume state


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


DAMAGES = {
    "rng-truncated": (lambda c: _truncate(c / "process_0.safetensors"), r"process_0\.safetensors is unreadable"),
    "rng-missing": (lambda c: (c / "process_0.safetensors").unlink(), r"process_0\.safetensors is missing"),
    "state-empty": (lambda c: (c / "trainer_state.json").write_text(""), r"trainer_state\.json is unreadable"),
    "state-bad-step": (
        lambda c: (c / "trainer_state.json").write_text(
            json.dumps({**json.loads((c / "trainer_state.json").read_text()), "global_step": -3})),
        "global_step must be an integer >= 0, got -3"),
    "state-accelerate-format": (lambda c: (c / "trainer_state.json").write_text('{"global_step": 3}'),
                                "format_version None"),
    "model-truncated": (lambda c: _truncate(c / "model.safetensors"), r"model\.safetensors does not fit"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_checkpoint_fails_clearly(data, finished_run: Path, tmp_path: Path, damage: str) -> None:
    folder = copy_run(finished_run, tmp_path, drop_newest=True)
    spoil, message = DAMAGES[damage]
    spoil(folder / "checkpoint-3")
    with pytest.raises(ValueError, match=f"cannot resume from .*checkpoint-3: .*{message}"):
        train(data, small_args(folder, resume_from_checkpoint="latest"))
    assert not (folder / "final").exists() and [p.name for p in list_checkpoints(folder)] == ["checkpoint-3"]


def test_inexact_resume_only_when_allowed(data, finished_run: Path, tmp_path: Path, caplog) -> None:
    folder = copy_run(finished_run, tmp_path, drop_newest=True)
    (folder / "checkpoint-3" / "process_0.safetensors").unlink()
    with pytest.raises(ValueError, match="cannot continue exactly.*--allow_inexact_resume"):
        train(data, small_args(folder, resume_from_checkpoint="latest"))
    with caplog.at_level(logging.WARNING, logger="hf_numbers.training.checkpoints"):
        _, result = train(data, small_args(folder, resume_from_checkpoint="latest", allow_inexact_resume=True))
    assert result.global_step == 6 and "inexactly" in caplog.text


# ---- final/ is written whole


def test_a_run_killed_while_writing_final_leaves_no_half_final(tmp_path: Path, monkeypatch, capsys) -> None:
    def killed(*args, **kwargs):
        raise Crash

    run = tmp_path / "run"
    monkeypatch.setattr(pipeline_module, "build_model_card", killed)
    with pytest.raises(Crash):
        cli_main(["train", *CLI, "--output_dir", str(run)])
    assert not (run / "final").exists() and (run / "final.tmp" / "final" / "model.safetensors").is_file()
    # before: a network error after a minute of retries (transformers took the missing path for a Hub name)
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["evaluate", "--checkpoint", str(run / "final"), "--task", "lookup", "--eval_size", "2"])
    assert exit_info.value.code == 2
    assert "final is not a folder" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"final\.tmp/final is a final/ whose writing was interrupted: resume the run"):
        load_trained(run / "final")
    monkeypatch.undo()
    cli_main(["train", *CLI, "--output_dir", str(run), "--resume_from_checkpoint", "latest"])
    assert (run / "final" / "README.md").is_file() and not (run / "final.tmp").exists()


# ---- a full disk while saving a checkpoint

UNEXPECTED_POS = "[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534"
DISK_FULL = {  # how each writer of a checkpoint reports a full disk (the texts met on a full tmpfs)
    "torch.save": (torch, "save", lambda: RuntimeError(UNEXPECTED_POS)),
    "torch.save-enospc": (torch, "save", lambda: OSError(errno.ENOSPC, "No space left on device")),
    "safetensors": (checkpoints_module, "save_file", lambda: SafetensorError(
        "Error while serializing: I/O error: No space left on device (os error 28)")),
    "open": (checkpoints_module, "write_json", lambda: OSError(errno.ENOSPC, "No space left on device")),
}


def _failing(monkeypatch, target, name: str, error: Exception) -> None:
    def write(*args, **kwargs):
        raise error

    monkeypatch.setattr(target, name, write)


@pytest.mark.parametrize("case", DISK_FULL)
def test_a_full_disk_while_saving_a_checkpoint_says_so_and_keeps_the_earlier_one(
    data, finished_run: Path, tmp_path: Path, monkeypatch, case: str
) -> None:
    """torch.save's `RuntimeError: ... unexpected pos 576 vs 534` did not say the disk was full."""
    folder = copy_run(finished_run, tmp_path, drop_newest=True)
    earlier = folder / "checkpoint-3"
    files = {p.name: p.read_bytes() for p in earlier.iterdir() if p.is_file()}
    target, name, make_error = DISK_FULL[case]
    error = make_error()
    _failing(monkeypatch, target, name, error)
    message = f"no space left on device while writing {re.escape(str(folder / 'checkpoint-6'))}; it was not saved"
    with pytest.raises(OSError, match=message) as raised:
        train(data, small_args(folder, resume_from_checkpoint="latest"))
    assert raised.value.errno == errno.ENOSPC and raised.value.__cause__ is error
    monkeypatch.undo()
    assert sorted(p.name for p in folder.iterdir() if "checkpoint" in p.name) == ["checkpoint-3"]  # no .tmp left
    assert {p.name: p.read_bytes() for p in earlier.iterdir() if p.is_file()} == files
    _, result = train(data, small_args(folder, resume_from_checkpoint="latest"))  # space freed: the run goes on
    assert result.global_step == 6 and [p.name for p in list_checkpoints(folder)] == ["checkpoint-3", "checkpoint-6"]


@pytest.mark.parametrize("error", [RuntimeError("PytorchStreamWriter failed writing file data/0: invalid parameter"),
                                   OSError(errno.EACCES, "Permission denied")], ids=["torch", "eacces"])
def test_other_errors_while_saving_a_checkpoint_pass_through_unchanged(
    data, finished_run: Path, tmp_path: Path, monkeypatch, error: Exception
) -> None:
    folder = copy_run(finished_run, tmp_path, drop_newest=True)
    _failing(monkeypatch, torch, "save", error)
    with pytest.raises(type(error)) as raised:
        train(data, small_args(folder, resume_from_checkpoint="latest"))
    assert raised.value is error


# ---- bad data and missing paths fail before training


@pytest.fixture(scope="module")
def saved_task() -> DatasetDict:
    return make_task("lookup", train_size=16, validation_size=4, test_size=4, test_ood_size=4)


def _no_numbers(dataset: DatasetDict) -> DatasetDict:
    return dataset.map(lambda row: {"text": "no digits here", "numbers": []})


BAD_DATA = {
    "single-dataset": (lambda d, f: d["train"].save_to_disk(f), "holds a single Dataset, not a DatasetDict"),
    "bogus-dict-json": (lambda d, f: (d.save_to_disk(f), (Path(f) / "dataset_dict.json").write_text("[]")),
                        "is not a dataset saved by `hf-numbers make-data` \\(TypeError"),
    "empty-train": (lambda d, f: DatasetDict({**d, "train": d["train"].select([])}).save_to_disk(f),
                    "the split\\(s\\) train hold no examples"),
    "no-train": (lambda d, f: DatasetDict({"test": d["test"]}).save_to_disk(f), "has no train split"),
    "no-answer-column": (lambda d, f: d.remove_columns("answer").save_to_disk(f), "lacks the column\\(s\\) answer"),
    "no-numbers": (lambda d, f: _no_numbers(d).save_to_disk(f), "the train split holds no numbers"),
    "nan-answer": (lambda d, f: _first_test_row(d, answer=float("nan")).save_to_disk(f),
                   "split 'test', row 1: answer nan is not a finite number"),
    "answer-index-out-of-range": (lambda d, f: _first_test_row(d, answer_index=-1).save_to_disk(f),
                                  r"split 'test', row 1: answer_index -1 is not among the row's \d+ numbers"),
    "answer-text-too-precise": (lambda d, f: _first_test_row(d, answer_text="0.1234567890123456").save_to_disk(f),
                                "split 'test', row 1: answer_text '0.1234567890123456' is not the answer as written "
                                "with at most 15 decimals"),
}


def _first_test_row(dataset: DatasetDict, **cells) -> DatasetDict:
    """``dataset`` with the test split's first row's ``cells`` replaced (the answers a run scores after training)."""
    test = dataset["test"].map(lambda row, i: {k: v if i == 0 else row[k] for k, v in cells.items()}, with_indices=True)
    return DatasetDict({**dataset, "test": test})


@pytest.mark.parametrize("case", BAD_DATA)
def test_malformed_data_dir_fails_clearly(saved_task: DatasetDict, tmp_path: Path, case: str) -> None:
    write, message = BAD_DATA[case]
    write(saved_task, str(tmp_path / "data"))
    with pytest.raises(ValueError, match=message):
        load_saved_task(tmp_path / "data")


def test_a_damaged_task_record_or_task_flags_on_made_data_are_refused_before_training(
    saved_task: DatasetDict, tmp_path: Path
) -> None:
    """hf_numbers_task.json that is not ``{"task": <name>}`` names the file; --task_options and --data_seed, which
    only shape a generated task, are refused with --data_dir instead of ignored."""
    save_task(saved_task, "lookup", tmp_path / "data")
    assert task_name(None, tmp_path / "data") == "lookup"
    for damaged in ("", "[1]", "{}", '{"task": 3}'):
        (tmp_path / "data" / TASK_FILE).write_text(damaged)
        with pytest.raises(ValueError, match=f"{TASK_FILE} is not a task record: it should hold"):
            small_args(tmp_path / "run", data_dir=str(tmp_path / "data"))
    save_task(saved_task, "lookup", tmp_path / "data")
    for flags in ({"task_options": ["digits=2"]}, {"data_seed": 1}):
        with pytest.raises(ValueError, match="task_options and data_seed shape a generated task"):
            small_args(tmp_path / "run", data_dir=str(tmp_path / "data"), **flags)
    assert not (tmp_path / "run").exists()


def test_a_number_of_made_data_the_encoding_cannot_hold_is_refused_by_split_and_row(
    saved_task: DatasetDict, tmp_path: Path
) -> None:
    """--data_dir is checked as the example scripts check user files: 1e300 in a test text stops float before
    a model is built (before: refused mid-training or at the final evaluation, naming neither split nor row)."""
    save_task(_first_test_row(saved_task, text="a value of 1e300 here"), "lookup", tmp_path / "data")
    with pytest.raises(ValueError, match=r"data, split 'test', row 1 \(.*\), column 'text': the number 1e300"):
        run_training(small_args(tmp_path / "run", data_dir=str(tmp_path / "data"), number_encoding="float"))
    assert not (tmp_path / "run").exists()


def test_made_data_without_a_task_record_trains_as_task_with_a_warning(
    saved_task: DatasetDict, tmp_path: Path, caplog
) -> None:
    saved_task.save_to_disk(str(tmp_path / "data"))  # by hand: no hf_numbers_task.json beside it
    with caplog.at_level(logging.WARNING, logger="hf_numbers.training.builders"):
        build_dataset(small_args(tmp_path / "run", data_dir=str(tmp_path / "data")))
    assert f"has no task record ({TASK_FILE}): its number scaling and recommended settings are those of --task lookup" \
        in caplog.text


def test_missing_paths_and_cut_off_answers_fail_before_training(saved_task: DatasetDict, tmp_path: Path) -> None:
    run = tmp_path / "run"
    with pytest.raises(ValueError, match="pretrained '/nonexistent/gpt2' is not a folder"):
        run_training(small_args(run, pretrained="/nonexistent/gpt2"))
    with pytest.raises(ValueError, match="data_dir '/nonexistent/data' is not a folder"):
        run_training(small_args(run, data_dir="/nonexistent/data"))
    save_task(saved_task, "lookup", tmp_path / "data")
    with pytest.raises(ValueError, match=r"validation example 0: its answer is number \d+ of the text, but the "
                                         r"tokenized text holds \d+ number\(s\) \(max_length 8\)"):
        run_training(small_args(run, data_dir=str(tmp_path / "data"), max_length=8))
    assert not run.exists()


def test_a_causal_model_on_masked_word_data_is_refused_before_any_training(tmp_path: Path, monkeypatch) -> None:
    """numeracy_words' splits carry masked-word targets, which only a masked LM can score: a causal backbone
    with ``--text_only false`` used to train and then fail in the evaluation."""
    trained = []
    monkeypatch.setattr(pipeline_module, "train_model", lambda *a, **k: trained.append(1))
    args = NumberTrainingArguments(**{**SMALL, "task": "numeracy_words", "backbone": "gpt2", "text_only": False,
                                      "output_dir": str(tmp_path / "run")})  # fmt: skip
    with pytest.raises(ValueError, match="split 'validation' has masked-word targets .* this model is causal"):
        run_training(args)
    assert trained == []
