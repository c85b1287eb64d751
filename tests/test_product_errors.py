"""benchmarks/product_errors.py: where products go wrong, by their first wrong digit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))  # as when the script runs
from product_errors import first_wrong, main, relative_error_quantiles, within_by_length  # noqa: E402


def test_each_answer_is_classed_by_its_first_wrong_digit_from_the_left() -> None:
    assert [first_wrong(56088, p) for p in (56088, 46088, 57088, 56188, 56089)] == [
        "exact", "leading digit", "second digit", "third digit or later", "third digit or later"]  # fmt: skip
    assert first_wrong(56088, 156088) == first_wrong(56088, -56088) == "length"
    assert first_wrong(56088, None) == "no number"


def test_the_quantiles_leave_out_missing_answers_and_zero_true_values() -> None:
    trues, predictions = [100.0] * 10 + [0.0], [100.0 + i for i in range(9)] + [None, 5.0]
    assert relative_error_quantiles(trues, predictions) == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08])
    assert relative_error_quantiles([1.0], [None]) == []


def test_the_share_within_one_percent_is_split_by_the_true_products_length() -> None:
    trues = [56088.0, 56088.0, 99999.0, 123456.0, 123456.0]
    predictions = [56600.0, None, 100500.0, 124690.0, 124700.0]  # 0.9% off; missing; 0.5% off but longer; 1.0%; 1.01%
    assert within_by_length(trues, predictions) == {5: (3, pytest.approx(2 / 3)), 6: (2, 0.5)}


def test_the_script_reads_a_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    predictions = {"test": {"predictions": [56088.0, 57000.0, None], "references": [56088.0, 56088.0, 12.0]}}
    (tmp_path / "predictions.json").write_text(json.dumps(predictions))
    main([str(tmp_path)])  # as `python benchmarks/product_errors.py <run>` does
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("test: 3 products; the first wrong digit: exact: 1, leading digit: 0, "
                                   "second digit: 1, third digit or later: 0, length: 0, no number: 1")
    assert out.splitlines()[2] == "within 1% by the product's digits: 2: 0.0% of 1, 5: 50.0% of 2"
