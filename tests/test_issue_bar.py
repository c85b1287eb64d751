"""benchmarks/issue_bar.py: issue 39's bar read from the pretrained suite's records."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))  # as when the script runs
from issue_bar import main  # noqa: E402

from hf_numbers.data import load_task, parse_task_options  # noqa: E402

TEMPERATURES = {"task": "temperature", "task_options": ["window=8"], "data_seed": 1, "train_size": 64,
                "eval_size": 500}  # fmt: skip
SUMS = [float(100 + n) for n in range(20)]


def write(folder: Path, name: str, predictions: list[float | None], references: list[float], data: dict) -> None:
    answers = {"test": {"predictions": predictions, "references": references}}
    (folder / f"{name}.json").write_text(json.dumps({"name": name, "answers": answers, "data": data}))


def sums_right(count: int) -> list[float]:
    """The first ``count`` of :data:`SUMS` right, the rest wrong."""
    return SUMS[:count] + [value + 1 for value in SUMS[count:]]


@pytest.fixture
def records(tmp_path: Path) -> Path:
    """Set-up ``a`` 18 / 20 sums right (seeds 0 / 2), the baseline ``b`` 15 and 16: +15 and +10 points; products
    alike; ``a``'s temperatures 0.5 off each (MSE 0.25), ``b``'s and ``c``'s exact."""
    temps = load_task("temperature", seed=1, train_size=64, eval_size=500,
                      options=parse_task_options(["window=8"]))["test"]["answer"]  # fmt: skip
    temps = [float(value) for value in temps]
    for suffix in ("", "-seed2"):
        write(tmp_path, f"add6-a{suffix}", sums_right(18), SUMS, {})
        write(tmp_path, f"add6-b{suffix}", sums_right(15 if not suffix else 16), SUMS, {})
        write(tmp_path, f"mult3-a{suffix}", SUMS, SUMS, {})
        write(tmp_path, f"mult3-b{suffix}", SUMS, SUMS, {})
        write(tmp_path, f"temp-a{suffix}", [value + 0.5 for value in temps], temps, TEMPERATURES)
        write(tmp_path, f"temp-b{suffix}", temps, temps, TEMPERATURES)
        write(tmp_path, f"temp-c{suffix}", temps, temps, TEMPERATURES)
    return tmp_path


def run(records: Path, capsys: pytest.CaptureFixture[str], *options: str) -> list[str]:
    main(["a", "--baseline", "b", "--records", str(records), *options])
    return capsys.readouterr().out.splitlines()


def test_ten_points_with_every_seed_and_no_loss_elsewhere_meets_the_bar(
    records: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = run(records, capsys, "--temp_setup", "c")  # the temperature rows of a set-up that asks nothing there
    assert lines[0] == ("sums exact, seed 0: 90.0% vs 75.0% (+15.0), seed 2: 90.0% vs 80.0% (+10.0); mean +12.5 "
                        f"({lines[0].split('(')[-1].split(')')[0]}): meets +10 with every seed")  # fmt: skip
    assert lines[1].startswith("products within 1%, points: +0.000 over seeds 0, 2") and lines[1].endswith("level")
    assert lines[2].startswith("temperature MSE: +0.000 over seeds 0, 2 (95% over the 10 stretches of the series")
    assert lines[3] == "a: meets the bar's accuracy terms on seeds 0, 2"


def test_a_seed_under_ten_points_or_a_lost_task_misses_it(records: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = run(records, capsys)  # a's own temperatures: 0.25 worse on every problem
    assert lines[2].startswith("temperature MSE: +0.250") and lines[2].endswith(": loses")
    assert lines[3] == "a: misses the bar's accuracy terms on seeds 0, 2"
    write(records, "add6-a-seed2", sums_right(17), SUMS, {})  # +5 points with seed 2
    lines = run(records, capsys, "--temp_setup", "c")
    assert "seed 2: 85.0% vs 80.0% (+5.0)" in lines[0] and lines[0].endswith("misses +10 with every seed")
    assert lines[3] == "a: misses the bar's accuracy terms on seeds 0, 2"


def test_a_missing_row_or_answers_leave_it_undecided_by_name(records: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (records / "add6-a-seed2.json").unlink()
    (records / "mult3-a-seed2.json").write_text(json.dumps({"name": "mult3-a-seed2"}))  # a record without answers
    lines = run(records, capsys, "--temp_setup", "c")
    assert lines[0].startswith("add6: not decided, no record of add6-a of seed 2 in ")
    assert lines[1].startswith("mult3: not decided, ")
    assert "mult3-a-seed2.json: this record keeps no answers" in lines[1]
    assert lines[3] == "a: not decided (rows missing)"
