"""benchmarks/compare_rows.py: two set-ups on the same test problems, over their seeds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))  # as when the script runs
from compare_rows import main, paired_interval, seed_scores  # noqa: E402

REFERENCES = [100.0, 200.0, 300.0, 400.0]


def write_record(folder: Path, name: str, predictions: list[float | None]) -> None:
    answers = {"test": {"predictions": predictions, "references": REFERENCES}}
    (folder / f"{name}.json").write_text(json.dumps({"name": name, "answers": answers, "data": {}}))


def test_each_seed_of_a_set_up_and_no_other_set_up_is_read(tmp_path: Path) -> None:
    write_record(tmp_path, "mult3-a", [100.5, 250.0, None, 400.0])
    write_record(tmp_path, "mult3-a-seed2", [100.0, 200.0, 300.0, 401.0])
    write_record(tmp_path, "mult3-a-look2", [0.0] * 4)  # another set-up whose name starts with a's
    scores = seed_scores("mult3", "a", tmp_path)
    assert {row: list(values) for row, values in scores.items()} == {
        "mult3-a": [1.0, 0.0, 0.0, 1.0], "mult3-a-seed2": [1.0, 1.0, 1.0, 1.0]}  # fmt: skip


def test_the_difference_of_the_seeds_means_and_its_paired_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_record(tmp_path, "add6-a", [100.0, 200.0, 300.0, 400.0])
    write_record(tmp_path, "add6-a-seed2", [100.0, 200.0, 300.0, 1.0])
    write_record(tmp_path, "add6-b", [100.0, 1.0, None, 1.0])
    main(["add6", "a", "b", "--records", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "a: exact by seed: add6-a: 1.0000, add6-a-seed2: 0.7500"
    assert lines[2].startswith("difference of the seeds' means: +0.6250 (95% over the problems: ")
    with pytest.raises(SystemExit, match="no record of add6-c"):
        main(["add6", "a", "c", "--records", str(tmp_path)])


def test_squared_errors_leave_out_missing_answers_and_the_interval_needs_the_same_problems(tmp_path: Path) -> None:
    write_record(tmp_path, "temp-a", [101.0, None, 300.0, 398.0])
    assert np.nanmean(seed_scores("temp", "a", tmp_path)["temp-a"]) == pytest.approx(5 / 3)
    assert paired_interval(np.ones(50), np.zeros(50)) == (1.0, 1.0)
    with pytest.raises(ValueError, match="different problems"):
        paired_interval(np.ones(5), np.ones(4))


def test_seeds_picks_the_rows_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_record(tmp_path, "add6-a", [100.0, 200.0, 300.0, 400.0])
    write_record(tmp_path, "add6-a-seed2", [100.0, 200.0, 300.0, 1.0])
    write_record(tmp_path, "add6-b", [100.0, 1.0, None, 1.0])
    (tmp_path / "add6-b-seed2.json").write_text(json.dumps({"name": "add6-b-seed2"}))  # no answers: not asked for
    main(["add6", "a", "b", "--records", str(tmp_path), "--seeds", "0"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "a: exact by seed: add6-a: 1.0000"
    assert lines[2].startswith("difference of the seeds' means: +0.7500 ")
    with pytest.raises(SystemExit, match="no record of add6-a"):
        main(["add6", "a", "b", "--records", str(tmp_path), "--seeds", "3"])


def test_the_problem_interval_is_the_resampled_nanmean_and_whole_groups_widen_it() -> None:
    first = np.array([1.0, np.nan, 3.0, 0.0, 2.0, 5.0])
    second = np.array([0.0, 1.0, np.nan, 0.0, 1.0, 1.0])
    picks = np.random.default_rng(0).integers(0, 6, size=(2000, 6))  # what paired_interval draws, problem by problem
    expected = np.quantile(np.nanmean(first[picks], 1) - np.nanmean(second[picks], 1), [0.025, 0.975])
    assert paired_interval(first, second) == pytest.approx(tuple(expected))
    ones, zeros = np.array([1.0] * 4 + [0.0] * 4), np.zeros(8)  # all of the gap in one stretch of two
    assert paired_interval(ones, zeros, groups=np.array([7] * 4 + [3] * 4)) == (0.0, 1.0)
    assert paired_interval(ones, zeros)[0] > 0.0  # problem by problem, the gap looks sure
    with pytest.raises(ValueError, match="3 group labels for 8 problems"):
        paired_interval(ones, zeros, groups=np.zeros(3))


TEMPERATURES = {"task": "temperature", "task_options": ["window=8"], "data_seed": 1, "train_size": 64,
                "eval_size": 500}  # fmt: skip


def test_a_temperature_problems_stretch_is_one_citys_windows_a_stride_apart() -> None:
    from compare_rows import series_stretches

    from hf_numbers.data import load_task, parse_task_options

    groups = series_stretches(TEMPERATURES)
    test = load_task("temperature", seed=1, train_size=64, eval_size=500,
                     options=parse_task_options(["window=8"]))["test"]  # fmt: skip
    assert len(groups) == len(test) and groups[0] == 0 and set(np.diff(groups)) <= {0, 1}
    for group in range(groups.max() + 1):
        rows = test.select(np.flatnonzero(groups == group))
        assert len(set(rows["city"])) == 1 and set(np.diff(rows["start_index"])) == {6}  # the task's stride
    assert groups.max() + 1 == 10  # the split's weeks, two cities


def test_temperatures_get_a_second_interval_over_stretches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hf_numbers.data import load_task, parse_task_options

    references = load_task("temperature", seed=1, train_size=64, eval_size=500,
                           options=parse_task_options(["window=8"]))["test"]["answer"]  # fmt: skip
    references = [float(value) for value in references]
    for name, shift in (("temp-a", 0.5), ("temp-b", 0.0)):
        answers = {"test": {"predictions": [r + shift for r in references], "references": references}}
        (tmp_path / f"{name}.json").write_text(json.dumps({"name": name, "answers": answers, "data": TEMPERATURES}))
    main(["temp", "a", "b", "--records", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("difference of the seeds' means: +0.2500 (95% over the problems: +0.2500 to +0.2500)")
    assert lines[3] == "95% over the 10 stretches of the series, each resampled whole: +0.2500 to +0.2500"


def test_rows_of_different_problems_are_refused_by_name(tmp_path: Path) -> None:
    write_record(tmp_path, "add6-a", [100.0, 200.0, 300.0, 400.0])
    other = {"test": {"predictions": [1.0] * 4, "references": [1.0, 2.0, 3.0, 4.0]}}
    (tmp_path / "add6-b.json").write_text(json.dumps({"name": "add6-b", "answers": other, "data": {}}))
    with pytest.raises(SystemExit, match="add6-b.json and .*add6-a.json hold answers to different test problems"):
        main(["add6", "a", "b", "--records", str(tmp_path)])
