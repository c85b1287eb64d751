"""Number metrics on hand-computed cases, invalid predictions, the evaluate module, and plots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from hf_numbers.evaluation import (
    METRIC_NAMES,
    compute_number_metrics,
    compute_split_metrics,
    evaluate_number_metrics,
    format_metrics_table,
    log_smape_scores,
    parse_predictions,
    plot_predicted_vs_true,
    plot_prediction_vs_parameter,
    round_significant,
)
from hf_numbers.evaluation.evaluate_number_metrics import NumberMetrics


def test_hand_computed_mse_r2_and_exact_match() -> None:
    result = compute_number_metrics([1.0, 2.0, 4.0], [1.0, 3.0, 5.0])
    # errors 0, -1, -1: MSE 2/3; references' mean 3, total sum of squares 4 + 0 + 4 = 8.
    assert result["mse"] == pytest.approx(2 / 3)
    assert result["r2"] == pytest.approx(1 - 2 / 8)
    assert result["exact_match"] == pytest.approx(1 / 3)
    assert result["invalid_rate"] == 0.0 and result["count"] == 3
    assert list(result) == list(METRIC_NAMES)


def test_log_space_r2_and_relative_error() -> None:
    references = [10.0, 1000.0, -100000.0, 0.0]
    predictions = [10.05, 1100.0, -100500.0, 0.0]  # errors 0.5%, 10%, 0.5%, exact
    result = compute_number_metrics(predictions, references)
    assert result["within_1pct"] == pytest.approx(3 / 4)
    ref_log, pred_log = (np.sign(x) * np.log10(1 + np.abs(x)) for x in (np.array(references), np.array(predictions)))
    expected = 1 - np.sum((pred_log - ref_log) ** 2) / np.sum((ref_log - ref_log.mean()) ** 2)
    assert result["r2_log"] == pytest.approx(expected)
    assert compute_number_metrics([None, 5.0], [5.0, 5.0])["within_1pct"] == 0.5  # invalid counts as wrong


def test_log_smape_is_the_share_of_fifteen_significant_digits_that_are_right() -> None:
    """sMAPE = |p - r| / (|p| + |r|): 11 vs 9 is 0.1 (score 1/15), 1.0001 vs 0.9999 is 1e-4 (4/15), a wrong sign
    is 1 (score 0), an exact answer 0 (score 1, the cap); an invalid prediction scores 0."""
    references = [9.0, 9.0, 0.9999, 5.0, 1.0, 0.0]
    predictions = [9.0, 11.0, 1.0001, -5.0, None, 0.0]
    assert compute_number_metrics(predictions, references)["log_smape"] == pytest.approx((2 + 5 / 15) / 6)
    huge = np.array([1.7e308, -1.7e308])  # |p| + |r| would overflow: still compared as ratios
    assert log_smape_scores(huge, huge[::-1] * -0.5).tolist() == pytest.approx([np.log10(3) / 15] * 2)
    assert log_smape_scores(np.array([1.0 + 2**-52]), np.array([1.0])).tolist() == [1.0]


def test_significant_figure_accuracy() -> None:
    references = [1.234, -0.0456, 2500.0, 0.0, 7.0]
    predictions = [1.2349, -0.04549, 2549.0, -0.0, 7.04]
    # 3 s.f.: 1.23 = 1.23, -0.0455 != -0.0456, 2.55e3 != 2.50e3, 0 = -0, 7.04 != 7.00
    # 2 s.f.: 1.2 = 1.2, -0.045 != -0.046, 2.5e3 = 2.5e3, 0 = -0, 7.0 = 7.0
    result = compute_number_metrics(predictions, references)
    assert result["accuracy_3sf"] == pytest.approx(2 / 5)
    assert result["accuracy_2sf"] == pytest.approx(4 / 5)
    assert compute_number_metrics([1.0], [1.04], sig_figs=(1, 2))["accuracy_1sf"] == 1.0
    assert round_significant(np.array([123456.0, -0.000123456]), 2) == ["1.2e+05", "-1.2e-04"]


def test_invalid_predictions_count_as_wrong_and_leave_mse_to_valid_ones() -> None:
    predictions = [2.0, None, float("nan"), float("inf"), "abc", "", True, [1.0], " 5.5 ", "1e400"]
    references = [2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 5.0, 1.0]
    values, valid = parse_predictions(predictions)
    assert valid.tolist() == [True] + [False] * 7 + [True, False]
    assert np.isnan(values[~valid]).all()
    result = compute_number_metrics(predictions, references)
    assert result["invalid_rate"] == pytest.approx(0.8)
    assert result["mse"] == pytest.approx(0.125)  # (0 + 0.25) / 2 valid predictions
    assert result["exact_match"] == pytest.approx(0.1)
    assert result["accuracy_2sf"] == pytest.approx(0.1)  # 5.5 vs 5.0 differs at 2 s.f.
    everything_invalid = compute_number_metrics([None, "x"], [1.0, 2.0])
    assert everything_invalid["mse"] is None and everything_invalid["r2"] is None
    assert everything_invalid["exact_match"] == 0.0 and everything_invalid["invalid_rate"] == 1.0


def test_undefined_r2_and_array_inputs() -> None:
    assert compute_number_metrics([1.0, 2.0], [3.0, 3.0])["r2"] is None  # references do not vary
    assert compute_number_metrics([1.0], [1.0])["r2"] is None
    from_numpy = compute_number_metrics(np.array([1.0, np.nan, 3.0]), np.array([1.0, 2.0, 4.0]))
    from_torch = compute_number_metrics(torch.tensor([1.0, float("nan"), 3.0]), [1, 2, 4])
    assert from_numpy == from_torch and from_numpy["invalid_rate"] == pytest.approx(1 / 3)


def test_exact_decimals_forgives_float32_decoding() -> None:
    references = [123.45, 0.1, 99999.99]
    predictions = np.array(references, dtype=np.float32)
    assert compute_number_metrics(predictions, references)["exact_match"] == 0.0
    assert compute_number_metrics(predictions, references, exact_decimals=2)["exact_match"] == 1.0


@pytest.mark.parametrize(
    ("predictions", "references", "options", "message"),
    [
        ([1.0], [1.0, 2.0], {}, "differ in length: 1 vs 2"),
        ([], [], {}, "no examples"),
        ([1.0], [None], {}, "reference 0 is None"),
        ([1.0], [float("nan")], {}, "references must be finite numbers"),
        (np.ones((2, 2)), [1.0, 2.0], {}, r"must be one-dimensional, got shape \(2, 2\)"),
        ("12", [1.0], {}, "predictions must be a sequence"),
        ([1.0], [1.0], {"exact_decimals": -1}, r"exact_decimals must be None or an integer in \[0, 15\]"),
        ([1.0], [1.0], {"sig_figs": (0,)}, "significant figures must be an integer >= 1"),
    ],
)
def test_bad_inputs_raise(predictions, references, options, message) -> None:
    with pytest.raises(ValueError, match=message):
        compute_number_metrics(predictions, references, **options)


def test_split_metrics_and_table() -> None:
    predictions = {"test": [1.0, 2.0], "test_ood": [0.4, None]}
    references = {"test": [1.0, 2.5], "test_ood": [0.41, 0.45]}
    results = compute_split_metrics(predictions, references)
    assert results["test"] == compute_number_metrics([1.0, 2.0], [1.0, 2.5])
    assert results["test_ood"]["invalid_rate"] == 0.5 and results["test_ood"]["r2"] is None
    table = format_metrics_table(results).splitlines()
    assert table[0].split() == ["split", *METRIC_NAMES]
    assert table[2].split()[0] == "test_ood" and table[2].split()[METRIC_NAMES.index("r2") + 1] == "-"
    with pytest.raises(ValueError, match="must cover the same splits"):
        compute_split_metrics({"test": [1.0]}, {"validation": [1.0]})


def test_evaluate_module_matches_direct_computation() -> None:
    predictions = ["1.5", None, 3.0, "x", 4.25]
    references = [1.5, 2.0, 3.5, 1.0, 4.0]
    metric = NumberMetrics(keep_in_memory=True)
    assert metric.compute(predictions=predictions, references=references) == compute_number_metrics(
        predictions, references
    )
    metric.add_batch(predictions=predictions[:2], references=references[:2])
    metric.add(prediction=predictions[2], reference=references[2])
    metric.add_batch(predictions=predictions[3:], references=references[3:])
    assert metric.compute(sig_figs=(2,), exact_decimals=1) == compute_number_metrics(
        predictions, references, sig_figs=(2,), exact_decimals=1
    )


def test_evaluate_load_of_the_metric_file_works_offline(tmp_path) -> None:
    script = textwrap.dedent(
        f"""
        import json, evaluate
        metric = evaluate.load({evaluate_number_metrics.__file__!r}, keep_in_memory=True)
        print(json.dumps(metric.compute(predictions=["2", None], references=[2.0, 1.0])))
        """
    )
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["invalid_rate"] == 0.5 and result["exact_match"] == 0.5


def test_plots_are_written(tmp_path) -> None:
    rng = np.random.default_rng(0)
    truth = rng.uniform(-3, 3, 60)
    predictions = list(truth + rng.normal(0, 0.1, 60))
    predictions[3] = None
    splits = ["test"] * 40 + ["test_ood"] * 20
    first = plot_predicted_vs_true(predictions, truth, tmp_path / "plots" / "pred_vs_true.png", groups=splits)
    second = plot_prediction_vs_parameter(
        truth, predictions, tmp_path / "a1.png", references=truth, heldout=(0.3, 0.5), parameter_name="a1"
    )
    for path in (first, second):
        assert path.is_file() and path.stat().st_size > 5_000
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="path must end with .png"):
        plot_predicted_vs_true([1.0], [1.0], tmp_path / "plot.jpg")
    with pytest.raises(ValueError, match="one label per prediction: 1 labels for 2 predictions"):
        plot_predicted_vs_true([1.0, 2.0], [1.0, 2.0], tmp_path / "p.png", groups=["a"])
    with pytest.raises(ValueError, match="heldout must be a pair"):
        plot_prediction_vs_parameter([1.0], [1.0], tmp_path / "p.png", heldout=(2.0, 1.0))
