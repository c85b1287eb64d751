"""benchmarks/sum_errors.py: the wrong digits of a sum, by what the carry into their place needs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))  # as when the script runs
from run_answers import record_answers  # noqa: E402
from sum_errors import carry_kind, exact_by_lengths, main, wrong_digits  # noqa: E402

from hf_numbers.data import load_task  # noqa: E402


def test_each_place_is_classed_by_the_pair_below_it() -> None:
    assert [carry_kind(1995, 5, place) for place in range(4)] == ["units", "pair >= 10", "pair = 9", "pair = 9"]
    assert carry_kind(123, 456, 2) == "pair <= 8"


def test_wrong_sums_count_their_wrong_digits_and_a_missing_answer_counts_as_wrong() -> None:
    operands = [(1995, 5), (1995, 5), (12, 30), (12, 30)]
    wrong, kinds = wrong_digits(operands, [2000.0, 1900.0, 52.0, None])
    assert wrong == 3  # 1900 (its hundreds and thousands), 52 (its tens), no number
    assert kinds == {"pair = 9": 2, "pair <= 8": 1}


def test_exact_sums_are_counted_by_whether_the_operands_have_as_many_digits() -> None:
    operands = [(100000, 99999), (123456, 654321), (5, 7), (5, 70)]
    assert exact_by_lengths(operands, [199999.0, 777777.0, 13.0, None]) == {
        "same length": (2, 1), "other lengths": (2, 1)}  # fmt: skip


def test_the_script_reads_a_run_folder_and_a_rows_record_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = {"task": "fone_arithmetic", "train_size": 8, "eval_size": 4, "data_seed": 1, "task_options": None}
    rows = load_task("fone_arithmetic", seed=1, train_size=8, eval_size=4)["test"]
    sums = [float(a + b) for a, b in rows["operands"]]
    (tmp_path / "training_args.json").write_text(json.dumps(setup))
    predictions = {"test": {"predictions": [sums[0] + 10, *sums[1:]], "references": sums}}
    (tmp_path / "predictions.json").write_text(json.dumps(predictions))
    main([str(tmp_path)])  # as `python benchmarks/sum_errors.py <run>` does
    out = capsys.readouterr().out
    assert out.startswith("test: 1 wrong sums of 4;")
    record = tmp_path / "row.json"  # what the pretrained suite keeps of the folder
    record.write_text(json.dumps({"name": "add6-x", **record_answers(tmp_path)}))
    main([str(record)])
    assert capsys.readouterr().out == out
    record.write_text(json.dumps({"name": "add6-old"}))
    with pytest.raises(SystemExit, match="row.json: this record keeps no answers"):
        main([str(record)])


def test_a_run_of_another_operation_is_refused_by_name_and_its_options_are_read_as_the_command_line_gives_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = {"task": "fone_arithmetic", "train_size": 8, "eval_size": 4, "data_seed": 1,
             "task_options": ["operation=add", "int_digits=3"]}  # fmt: skip
    rows = load_task("fone_arithmetic", seed=1, train_size=8, eval_size=4,
                     options={"operation": "add", "int_digits": 3})["test"]  # fmt: skip
    sums = [float(a + b) for a, b in rows["operands"]]
    (tmp_path / "training_args.json").write_text(json.dumps(setup))
    (tmp_path / "predictions.json").write_text(json.dumps({"test": {"predictions": sums, "references": sums}}))
    main([str(tmp_path)])  # the options drew the run's own 3-digit problems: their references match
    assert capsys.readouterr().out.startswith("test: 0 wrong sums of 4;")
    setup["task_options"] = ["operation=subtract"]
    (tmp_path / "training_args.json").write_text(json.dumps(setup))
    with pytest.raises(SystemExit, match="addition run is needed, got task 'fone_arithmetic' .operation 'subtract'."):
        main([str(tmp_path)])
