"""Fitting a number scaling (``NumberScaling.fit``) on training numbers: kinds, round trips (numpy, torch,
scalars), ragged lists and dataset columns (``column_numbers``), and clear errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_numbers.data import column_numbers, make_task
from hf_numbers.modeling import NumberScaling

VALUES = np.array([-1234.5, -3.0, 0.0, 0.25, 7.0, 98765.0])
FITS = [
    {"kind": "identity"},
    {"kind": "identity", "log": True},
    {"kind": "standard"},
    {"kind": "standard", "log": True},
    {"kind": "maxabs", "max_abs": 5.0},
    {"kind": "maxabs", "log": True},
]


@pytest.mark.parametrize("fit", FITS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_round_trip_numpy_torch_and_scalars(fit: dict) -> None:
    scaling = NumberScaling.fit(VALUES, **fit)
    scaled = scaling.transform(VALUES)
    assert isinstance(scaled, np.ndarray) and scaled.dtype == np.float64
    np.testing.assert_allclose(scaling.inverse(scaled), VALUES, rtol=1e-12, atol=1e-12)
    tensor = torch.tensor(VALUES, dtype=torch.float32).reshape(2, 3)
    scaled_tensor = scaling.transform(tensor)
    assert scaled_tensor.dtype == torch.float64 and scaled_tensor.shape == (2, 3)
    np.testing.assert_allclose(scaled_tensor.numpy().ravel(), scaling.transform(tensor.double().numpy().ravel()))
    np.testing.assert_allclose(scaling.inverse(scaled_tensor).numpy(), tensor.double().numpy(), rtol=1e-12)
    scalar = scaling.transform(7.0)
    assert isinstance(scalar, float) and scalar == pytest.approx(float(scaled[4]), rel=1e-15)
    assert scaling.inverse(scalar) == pytest.approx(7.0, rel=1e-12) and isinstance(scaling.transform(7), float)


def test_standard_and_maxabs_fits() -> None:
    standard = NumberScaling.fit(VALUES)
    assert standard.shift == pytest.approx(VALUES.mean()) and standard.scale == pytest.approx(VALUES.std())
    scaled = standard.transform(VALUES)
    assert abs(scaled.mean()) < 1e-12 and scaled.std() == pytest.approx(1.0)
    assert np.abs(NumberScaling.fit(VALUES, "maxabs", max_abs=5.0).transform(VALUES)).max() == pytest.approx(5.0)
    logged = NumberScaling.fit(VALUES, "maxabs", log=True)
    expected = np.sign(VALUES) * np.log10(1 + np.abs(VALUES)) / np.log10(1 + 98765.0)
    np.testing.assert_allclose(logged.transform(VALUES), expected, rtol=1e-12)
    constant = NumberScaling.fit([4.0, 4.0])
    assert constant.scale == 1.0 and constant.transform(4.0) == 0.0


def test_fit_accepts_ragged_lists_tensors_and_dataset_columns() -> None:
    ragged = [[1.0, 2.0], [3.0], [], [np.float32(4.0), 5]]
    assert NumberScaling.fit(ragged) == NumberScaling.fit([1.0, 2.0, 3.0, 4.0, 5.0])
    assert NumberScaling.fit(torch.tensor([[1.0, -8.0]]), "maxabs").scale == 8.0
    dataset = make_task("lookup", train_size=50, validation_size=0, test_size=0, test_ood_size=0)["train"]
    flat = [v for row in dataset["numbers"] for v in row]
    assert column_numbers(dataset).tolist() == flat

    def extract_values(text: str) -> list[float]:
        return [float(m.group()) for m in re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?", text)]

    def extract_spans(text: str) -> list[tuple[int, int, float]]:
        return [(m.start(), m.end(), float(m.group())) for m in re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?", text)]

    from_values = NumberScaling.fit(column_numbers(dataset, "text", extract_values))
    assert from_values == NumberScaling.fit(column_numbers(dataset, "text", extract_spans)) == NumberScaling.fit(flat)
    with pytest.raises(ValueError, match="column 'txt' is not in the dataset; columns: text, prompt"):
        column_numbers(dataset, "txt")
    with pytest.raises(ValueError, match="needs a text column; column 'answer' holds float"):
        column_numbers(dataset, "answer", extract_values)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_values_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="must be finite numbers; found 1 NaN or infinite value"):
        NumberScaling.fit([1.0, bad])
    with pytest.raises(ValueError, match="column 'numbers' must be finite numbers"):
        column_numbers({"numbers": [[1.0], [bad]]})


def test_misuse_raises_clear_errors() -> None:
    with pytest.raises(ValueError, match="kind='zscore' is unknown; allowed: identity, standard, maxabs"):
        NumberScaling.fit([1.0], "zscore")
    with pytest.raises(ValueError, match="max_abs must be a finite number > 0"):
        NumberScaling.fit([1.0], "maxabs", max_abs=-1.0)
    with pytest.raises(ValueError, match="fit needs at least one value"):
        NumberScaling.fit([])
    with pytest.raises(ValueError, match="fit values must be numbers"):
        NumberScaling.fit(["1.0"])
    with pytest.raises(ValueError, match="number_scaling_scale must be > 0, got 0.0"):
        NumberScaling(0.0, 0.0)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=2, max_size=20), fit=st.sampled_from(FITS))
def test_round_trip_property(values: list[float], fit: dict) -> None:
    scaling = NumberScaling.fit(values, **fit)
    back = scaling.inverse(scaling.transform(np.array(values)))
    tolerance = 1e-9 * max(1.0, max(abs(v) for v in values))
    assert all(math.isclose(b, v, rel_tol=1e-9, abs_tol=tolerance) for b, v in zip(back, values))
