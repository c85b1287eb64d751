"""Training: the Accelerate loop (loss falls, exact resume after a kill, 2 CPU processes), Trainer, CLI."""

from __future__ import annotations

import ast
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from accelerate.state import AcceleratorState
from model_helpers import CAUSAL, MASKED, ONE_PER_KIND, tiny_args
from safetensors.torch import load_file
from transformers import AutoModel, AutoTokenizer, Trainer, TrainingArguments, pipeline

from hf_numbers import BACKBONES
from hf_numbers.cli import main as cli_main
from hf_numbers.data.collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM
from hf_numbers.evaluation.predict import predict_answers
from hf_numbers.training import (
    NumberTrainingArguments,
    build_dataset,
    build_model,
    build_tokenizer,
    encoding_options_for,
    list_checkpoints,
    make_accelerator,
    run_training,
    tokenize_dataset,
    train_model,
)
from hf_numbers.training.builders import vocab_multiple

# Subprocesses import hf_numbers from this checkout (not whichever copy is installed).
CHECKOUT_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                                          os.environ.get("PYTHONPATH")])))
TINY = [
    "--task",
    "lookup",
    "--train_size",
    "256",
    "--eval_size",
    "16",
    "--hidden_size",
    "32",
    "--num_layers",
    "2",
    "--num_heads",
    "2",
    "--vocab_size",
    "150",
    "--per_device_train_batch_size",
    "8",
    "--warmup_steps",
    "2",
    "--logging_steps",
    "2",
    "--disable_tqdm",
    "true",
    "--use_cpu",
    "true",
]


def prepared(args: NumberTrainingArguments):
    dataset = build_dataset(args)
    tokenizer = build_tokenizer(args, dataset)
    return tokenizer, build_model(args, tokenizer), tokenize_dataset(dataset, tokenizer, args.max_length)


@pytest.mark.parametrize("backbone", ONE_PER_KIND)
def test_loop_lowers_the_loss(backbone: str, tmp_path: Path) -> None:
    args = tiny_args(
        backbone=backbone,
        output_dir=str(tmp_path),
        max_steps=60,
        learning_rate=3e-3,
        save_steps=0,
        eval_steps=0,
        logging_steps=4,
    )
    tokenizer, model, data = prepared(args)
    causal = BACKBONES[backbone].causal
    collator = DataCollatorForNumberCausalLM(tokenizer) if causal else DataCollatorForNumberMLM(tokenizer)
    model, result = train_model(model, data["train"], collator, args, data["validation"])
    losses = [r["loss"] for r in result.log_history if "loss" in r]
    assert result.global_step == 60 and len(losses) == 15
    assert sum(losses[-3:]) / 3 < 0.8 * sum(losses[:3]) / 3
    assert any("eval_loss" in r for r in result.log_history)


@pytest.mark.parametrize("backbone", ONE_PER_KIND)
def test_gradient_checkpointing_trains_the_same_weights(backbone: str, tmp_path: Path) -> None:
    """Recomputing the blocks' activations (``--gradient_checkpointing``) changes memory, not the result."""
    trained = {}
    for checkpointing in (False, True):
        args = tiny_args(backbone=backbone, output_dir=str(tmp_path / str(checkpointing)), max_steps=4,
                         save_steps=0, eval_steps=0, gradient_checkpointing=checkpointing)
        torch.manual_seed(0)  # the same new model both times
        tokenizer, model, data = prepared(args)
        causal = BACKBONES[backbone].causal
        collator = DataCollatorForNumberCausalLM(tokenizer) if causal else DataCollatorForNumberMLM(tokenizer, seed=0)
        model, _ = train_model(model, data["train"], collator, args)
        flag = "is_activation_checkpointing"  # transformers 5.24 renamed is_gradient_checkpointing
        assert getattr(model, flag if hasattr(type(model), flag) else "is_gradient_checkpointing") == checkpointing
        trained[checkpointing] = model.state_dict()
    for name, weight in trained[False].items():
        assert torch.allclose(trained[True][name], weight, atol=1e-5), name


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "final" / "model.safetensors"))


@pytest.mark.parametrize(
    ("backbone", "accumulation"), [(CAUSAL[0], "1"), (MASKED[0], "2")], ids=[CAUSAL[0], f"{MASKED[0]}-accumulate2"]
)
def test_resume_after_kill_matches_uninterrupted_run(backbone: str, accumulation: str, tmp_path: Path) -> None:
    """Kill a run after a checkpoint, resume it: same final weights, bit for bit, as a run never stopped.

    256 examples in batches of 8 make 32 micro-batches an epoch, so the runs cross epochs.
    """
    base = [*TINY, "--backbone", backbone, "--gradient_accumulation_steps", accumulation, "--max_steps", "40",
            "--save_steps", "4", "--eval_steps", "20", "--save_total_limit", "3"]
    command = [sys.executable, "-m", "hf_numbers.cli", "train", *base]
    full = subprocess.run([*command, "--output_dir", str(tmp_path / "full")], capture_output=True, text=True,
                          env=CHECKOUT_ENV)
    assert full.returncode == 0, full.stderr[-3000:]

    killed_dir = tmp_path / "killed"
    process = subprocess.Popen([*command, "--output_dir", str(killed_dir)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True, env=CHECKOUT_ENV)
    deadline = time.time() + 240
    while not list_checkpoints(killed_dir) and process.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (killed_dir / "final").exists(), "the run finished before it could be killed"
    checkpoints = list_checkpoints(killed_dir)
    assert checkpoints, "no checkpoint was written before the kill"
    step = json.loads((checkpoints[-1] / "trainer_state.json").read_text())["global_step"]
    assert 0 < step < 40

    resumed = subprocess.run([*command, "--output_dir", str(killed_dir), "--resume_from_checkpoint", "latest"],
                             capture_output=True, text=True, env=CHECKOUT_ENV)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    expected, actual = _weights(tmp_path / "full"), _weights(killed_dir)
    assert expected.keys() == actual.keys()
    for name in expected:
        assert torch.equal(expected[name], actual[name]), name
    full_history = json.loads((tmp_path / "full" / "log_history.json").read_text())
    history = json.loads((killed_dir / "log_history.json").read_text())
    assert history == full_history  # the log of the steps before the kill came back with the checkpoint


DISTRIBUTED_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import torch
    from hf_numbers.data.collators import DataCollatorForNumberCausalLM
    from hf_numbers.training import (NumberTrainingArguments, build_dataset, build_model, build_tokenizer,
                                     make_accelerator, tokenize_dataset, train_model)
    args = NumberTrainingArguments(task="lookup", train_size=128, eval_size=8, hidden_size=32, num_layers=2,
                                   num_heads=2, vocab_size=150, per_device_train_batch_size=4, max_steps=6,
                                   save_steps=3, eval_steps=3, logging_steps=1, disable_tqdm=True, use_cpu=True,
                                   output_dir=sys.argv[1], resume_from_checkpoint=(sys.argv[2:] or [None])[0])
    accelerator = make_accelerator(args)
    dataset = build_dataset(args)
    tokenizer = build_tokenizer(args, dataset)
    model = build_model(args, tokenizer)
    data = tokenize_dataset(dataset, tokenizer, args.max_length)
    seen = []
    collator = DataCollatorForNumberCausalLM(tokenizer)
    def recording(features):
        seen.extend(hashlib.md5(str(f["input_ids"]).encode()).hexdigest() for f in features)
        return collator(features)
    model, result = train_model(model, data["train"], recording, args, data["validation"], accelerator=accelerator)
    digest = hashlib.md5(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()
    out = {"rank": accelerator.process_index, "world": accelerator.num_processes, "digest": digest,
           "seen": seen, "loss": result.last_train_loss,
           "evals": [r["eval_loss"] for r in result.log_history if "eval_loss" in r]}
    with open(f"{sys.argv[1]}/rank{accelerator.process_index}.json", "w") as f:
        json.dump(out, f)
    accelerator.end_training()
    """
)


def _run_two_processes(script: Path, output_dir: Path, *extra: str) -> list[dict]:
    """Run ``script`` on 2 CPU processes (gloo) with the checked-out hf_numbers; each rank's result."""
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", _free_port(),
               str(script), str(output_dir), *extra]
    env = dict(CHECKOUT_ENV, OMP_NUM_THREADS="1")
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    ranks = [json.loads((output_dir / f"rank{r}.json").read_text())
             for r in (0, 1) if (output_dir / f"rank{r}.json").exists()]
    assert len(ranks) == 2, result.stderr[-3000:]
    # gloo may abort at interpreter exit after a clean run; the ranks' results above are what counts
    return ranks


def _free_port() -> str:
    with socket.socket() as probe:  # a fixed port collides with another test session on the machine
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.mark.parametrize("flag", ["ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED"])
def test_a_sharded_launch_is_refused_before_any_work(flag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """FSDP v2 through an accelerate config with --use_cpu ran as plain DDP, with no warning."""
    monkeypatch.setenv(flag, "true")
    with pytest.raises(ValueError, match="the launch asks for (FSDP|DeepSpeed) .* hf-numbers train does not shard"):
        make_accelerator(NumberTrainingArguments(use_cpu=True))


def test_processes_that_would_each_train_alone_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """torchrun without --use_cpu on a CPU machine: Accelerate ran each process alone into one folder."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    try:
        with pytest.raises(ValueError, match=r"launched as 2 processes, but Accelerate runs 1 .*--use_cpu true"):
            make_accelerator(NumberTrainingArguments(use_cpu=False))
    finally:
        AcceleratorState._reset_state(reset_partial_state=True)


def test_the_example_refuses_fsdp_that_would_fall_back_to_ddp(tmp_path: Path) -> None:
    """Trainer with --fsdp on 2 CPU processes ran plain DDP (is_fsdp_enabled False)."""
    (tmp_path / "any.txt").write_text("x is 1\ny is 2\n" * 10)
    example = Path(__file__).parents[1] / "examples" / "run_number_clm.py"
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", _free_port(),
               str(example), "--train_file", str(tmp_path / "any.txt"), "--output_dir", str(tmp_path / "run"),
               "--max_steps", "1", "--fsdp", "full_shard", "--use_cpu", "true", "--hidden_size", "32",
               "--num_layers", "1", "--num_heads", "2", "--vocab_size", "200", "--report_to", "none"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env=dict(CHECKOUT_ENV, OMP_NUM_THREADS="1"))
    assert result.returncode != 0
    assert "--fsdp was asked for, but Trainer would run MULTI_CPU without sharding" in result.stderr
    assert not list((tmp_path / "run").glob("checkpoint-*"))


def test_two_cpu_processes_end_with_identical_weights_and_resume_exactly(tmp_path: Path) -> None:
    script = tmp_path / "train_two.py"
    script.write_text(DISTRIBUTED_SCRIPT)
    ranks = _run_two_processes(script, tmp_path / "run")
    assert [r["world"] for r in ranks] == [2, 2]
    assert ranks[0]["digest"] == ranks[1]["digest"]
    assert not set(ranks[0]["seen"]) & set(ranks[1]["seen"]), "both processes trained on the same examples"
    assert all(r["loss"] == r["loss"] for r in ranks)  # finite, not NaN
    assert len(ranks[0]["evals"]) == 2 and ranks[0]["evals"] == ranks[1]["evals"]  # reduced across ranks
    checkpoints = list_checkpoints(tmp_path / "run")
    assert [p.name for p in checkpoints] == ["checkpoint-3", "checkpoint-6"]
    assert sorted(p.name for p in checkpoints[0].glob("process_*")) == [f"process_{r}.safetensors" for r in (0, 1)]

    resumed = _run_two_processes(script, tmp_path / "resumed", str(checkpoints[0]))  # into a new output_dir
    assert [r["digest"] for r in resumed] == [ranks[0]["digest"]] * 2
    assert resumed[0]["evals"] == ranks[0]["evals"]  # the evaluation before the checkpoint is in its history


@pytest.mark.smoke
def test_hf_trainer_runs_with_number_models(tmp_path: Path) -> None:
    args = tiny_args(output_dir=str(tmp_path))
    tokenizer, model, data = prepared(args)
    trainer_args = TrainingArguments(output_dir=str(tmp_path / "trainer"), max_steps=12, per_device_train_batch_size=8,
                                     learning_rate=3e-3, logging_steps=4, report_to=[], use_cpu=True,
                                     save_strategy="no", remove_unused_columns=False)
    trainer = Trainer(model=model, args=trainer_args, train_dataset=data["train"], eval_dataset=data["validation"],
                      data_collator=DataCollatorForNumberCausalLM(tokenizer))
    before = trainer.evaluate()["eval_loss"]
    trainer.train()
    losses = [r["loss"] for r in trainer.state.log_history if "loss" in r]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert trainer.evaluate()["eval_loss"] < before


@pytest.mark.smoke
def test_cli_train_evaluate_and_reload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli_main(["make-data", "--task", "lookup", "--output", str(tmp_path / "data"), "--train_size", "128",
              "--eval_size", "16"])
    run = tmp_path / "run"
    cli_main(["train", *TINY, "--data_dir", str(tmp_path / "data"), "--output_dir", str(run), "--max_steps", "6",
              "--save_steps", "3", "--eval_steps", "3"])
    out = capsys.readouterr().out
    assert "test_ood" in out and "invalid_rate" in out
    # without a progress bar, a line every --logging_steps (2) and after each evaluation, as Trainer prints
    lines = [line for line in out.splitlines() if line.startswith("{'step'")]
    assert [ast.literal_eval(line)["step"] for line in lines] == [2, 3, 4, 6, 6]
    assert "'loss'" in lines[0] and "'eval_loss'" in lines[1] and "1 process(es) on cpu" in out
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics) == {"validation", "test", "test_ood"}
    predictions = json.loads((run / "predictions.json").read_text())
    assert len(predictions["test_ood"]["predictions"]) == len(predictions["test_ood"]["references"]) == 16
    assert (run / "predicted_vs_true.png").stat().st_size > 1000
    card = (run / "final" / "README.md").read_text()
    assert "library_name: transformers" in card and "test_ood" in card and "trust_remote_code=True" in card
    model = AutoModel.from_pretrained(run / "final")
    assert type(model).__name__ == "NumberGPT2ForCausalLM"
    assert not (run / "final" / "number_scaler.json").exists()  # the scaling is in the config (identity: lookup)

    # every checkpoint is a saved model too: Auto classes and `hf-numbers evaluate` load it
    checkpoint = run / "checkpoint-6"
    saved = AutoModel.from_pretrained(checkpoint)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), saved.state_dict().values()))
    vocab = AutoTokenizer.from_pretrained(run / "final").get_vocab()
    assert AutoTokenizer.from_pretrained(checkpoint).get_vocab() == vocab
    assert type(AutoModel.from_pretrained(run / "checkpoint-3")).__name__ == "NumberGPT2ForCausalLM"
    for folder in ("final", "checkpoint-6"):
        cli_main(["evaluate", "--checkpoint", str(run / folder), "--data_dir", str(tmp_path / "data"),
                  "--output_dir", str(tmp_path / folder)])
        assert json.loads((tmp_path / folder / "metrics.json").read_text()) == metrics


def test_args_json_file_and_tensorboard(tmp_path: Path) -> None:
    """`hf-numbers train args.json --flag value` (flags win); --report_to tensorboard writes event files."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    values = dict(zip(TINY[::2], TINY[1::2]))
    arguments = {key.removeprefix("--"): value for key, value in values.items()}
    arguments |= {"max_steps": 2, "save_steps": 0, "eval_steps": 0, "train_size": 64, "eval_size": 8,
                  "output_dir": str(tmp_path / "elsewhere"), "report_to": ["tensorboard"]}
    (tmp_path / "args.json").write_text(json.dumps(arguments))
    run = tmp_path / "run"
    cli_main(["train", str(tmp_path / "args.json"), "--output_dir", str(run), "--max_steps", "4"])
    recorded = json.loads((run / "training_args.json").read_text())
    assert recorded["max_steps"] == 4 and recorded["train_size"] == 64 and not (tmp_path / "elsewhere").exists()

    events = list((run / "runs").rglob("events.out.tfevents.*"))
    assert events, "no TensorBoard event file"
    scalars = {}
    for path in events:
        accumulator = EventAccumulator(str(path.parent)).Reload()
        scalars |= {tag: [(e.step, e.value) for e in accumulator.Scalars(tag)] for tag in accumulator.Tags()["scalars"]}
    history = json.loads((run / "log_history.json").read_text())
    assert [step for step, _ in scalars["train/loss"]] == [2, 4]
    assert scalars["train/loss"][-1][1] == pytest.approx(history[-2]["loss"], rel=1e-6)
    assert [step for step, _ in scalars["eval/loss"]] == [4]
    metrics = json.loads((run / "metrics.json").read_text())
    # invalid_rate is always a number (a 4-step model may write no valid answer)
    assert scalars["test/invalid_rate"] == [(4, pytest.approx(metrics["test"]["invalid_rate"], rel=1e-6))]


def test_encoding_options_are_fitted_to_the_data_unless_given() -> None:
    dataset = build_dataset(tiny_args())
    fitted = encoding_options_for(tiny_args(number_encoding="fone"), dataset)
    assert set(fitted) == {"fone_int_digits", "fone_frac_digits"}
    assert encoding_options_for(tiny_args(number_encoding="fone", fone_int_digits=9), dataset) == fitted | {
        "fone_int_digits": 9
    }
    assert encoding_options_for(tiny_args(number_encoding="exponent", exponent_num_bins=8)) == {"exponent_num_bins": 8}
    with pytest.raises(ValueError, match=r"fone_int_digits \(an option of fone\): not for number_encoding 'xval'"):
        tiny_args(number_encoding="xval", fone_int_digits=9)  # it would be ignored


@pytest.mark.parametrize(("backbone", "encoding"), [(CAUSAL[0], "text"), (CAUSAL[0], "xval"), (MASKED[0], "fone")])
def test_a_new_models_vocabulary_is_padded_to_the_multiple_asked(backbone: str, encoding: str, tmp_path: Path) -> None:
    """``--pad_vocab_to_multiple_of 64``: rows that no token has, trained (the digit tokens with NTL), evaluated, saved
    and reloaded; the value is recorded, so a resume builds the same model."""
    ntl = {"number_token_loss": "ntl"} if encoding == "text" else {}
    args = tiny_args(backbone=backbone, number_encoding=encoding, output_dir=str(tmp_path), max_steps=4,
                     save_steps=0, eval_steps=0, pad_vocab_to_multiple_of=64, **ntl)
    summary = run_training(args)
    model, tokenizer = AutoModel.from_pretrained(tmp_path / "final"), AutoTokenizer.from_pretrained(tmp_path / "final")
    rows, tokens = model.config.vocab_size, len(tokenizer)
    assert rows % 64 == 0 and tokens < rows < tokens + 64 and model.get_input_embeddings().weight.shape[0] == rows
    assert json.loads((tmp_path / "training_args.json").read_text())["pad_vocab_to_multiple_of"] == 64
    assert model.config.tokenizer_vocab_size == tokens  # saved with the model
    assert summary["metrics"]["test"]["count"] == 16 and summary["metrics"]["test"]["invalid_rate"] < 1
    # were the extra rows' logits the highest, generation, fill_mask and its pipeline would still never give one
    texts, answers = ["1 + 2 = 3", "4 + 1 = 5"], [2, 2]
    before = predict_answers(model, tokenizer, texts, answers)
    padded = torch.arange(tokens, rows)
    model.get_output_embeddings().register_forward_hook(lambda _, __, logits: logits.index_fill(-1, padded, 1e4))
    assert predict_answers(model, tokenizer, texts, answers) == before  # evaluation reads the tokenizer's rows only
    if BACKBONES[backbone].causal:
        assert model.generation_config.suppress_tokens == padded.tolist()
        batch = tokenizer(["1 + 2 ="], return_tensors="pt")
        assert (model.generate(**batch, max_new_tokens=3, suppress_tokens=[]) >= tokens).any()
        assert (model.generate(**batch, max_new_tokens=3) < tokens).all()
    else:
        fill = pipeline("number-fill-mask", model=model, tokenizer=tokenizer)
        text = f"the {tokenizer.mask_token} is 3"
        assert model(**tokenizer(text, return_tensors="pt")).logits[..., tokens:].min() > 1e3
        assert all(result["token"] < tokens for result in fill(text, top_k=3))
        batch = tokenizer(text, return_tensors="pt")
        ids, _ = model.fill_mask(**batch, mask_token_id=tokenizer.mask_token_id)
        assert (ids < tokens).all()


def test_the_vocabulary_is_padded_unasked_only_for_a_new_model_on_a_gpu(tmp_path: Path) -> None:
    new, pretrained = NumberTrainingArguments(), NumberTrainingArguments(pretrained=str(tmp_path), backbone="llama")
    assert (vocab_multiple(new, "cuda"), vocab_multiple(new, "cpu"), vocab_multiple(pretrained, "cuda")) == (64, 1, 1)
    assert vocab_multiple(NumberTrainingArguments(pad_vocab_to_multiple_of=8), "cpu") == 8
    with pytest.raises(ValueError, match="pad_vocab_to_multiple_of must be >= 1 .or unset., got 0"):
        NumberTrainingArguments(pad_vocab_to_multiple_of=0)
    with pytest.raises(ValueError, match="a --pretrained model keeps its own"):
        NumberTrainingArguments(pretrained=str(tmp_path), backbone="llama", pad_vocab_to_multiple_of=64)


def test_bad_training_arguments() -> None:
    with pytest.raises(ValueError, match="backbone"):
        NumberTrainingArguments(backbone="t5")
    with pytest.raises(ValueError, match="max_steps"):
        NumberTrainingArguments(max_steps=-1)
    with pytest.raises(ValueError, match="checkpoint"):
        train_model(None, [], None, tiny_args(resume_from_checkpoint="/nonexistent"))  # type: ignore[arg-type]


def test_task_recommendations_fill_unset_arguments(tmp_path: Path) -> None:
    fone = NumberTrainingArguments(task="fone_arithmetic")
    assert (fone.backbone, fone.hidden_size, fone.num_layers, fone.train_size) == ("llama", 256, 4, 6400)
    assert fone.completion_only
    assert NumberTrainingArguments(task="fone_arithmetic", hidden_size=64, completion_only=False).hidden_size == 64
    assert NumberTrainingArguments(task="temperature").completion_only is False  # a series: every value is trained
    assert not BACKBONES[NumberTrainingArguments(task="orbits").backbone].causal  # targets inside the text: masked LM
    # a saved task is recognised by the record make-data writes
    options = ["--task_options", "operation=subtract", "int_digits=2"]
    cli_main(["make-data", "--task", "fone_arithmetic", "--output", str(tmp_path / "d"), "--train_size", "4",
              "--eval_size", "2", *options])
    saved = NumberTrainingArguments(task="lookup", data_dir=str(tmp_path / "d"))
    assert saved.task_name == "fone_arithmetic" and saved.hidden_size == 256
    rows = build_dataset(saved)["train"]
    assert all(r["operation"] == "subtract" and max(r["operands"]) < 100 for r in rows)


def test_task_options_reach_the_generator() -> None:
    args = NumberTrainingArguments(task="multi_operand", train_size=8, eval_size=2, task_options=["operands=(3, 3)"])
    assert {len(r["operands"]) for r in build_dataset(args)["test"]} == {3}
    with pytest.raises(ValueError, match="name=value"):
        NumberTrainingArguments(task_options=["digits"])
    with pytest.raises(ValueError, match="has no option colour"):
        build_dataset(NumberTrainingArguments(task="multiplication", task_options=["colour=1"]))
    with pytest.raises(ValueError, match="dropout"):
        NumberTrainingArguments(dropout=1.0)
    with pytest.raises(ValueError, match="learning_rate must be a finite number"):
        NumberTrainingArguments(learning_rate=float("inf"))
