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
