"""NumberScaler: fitting, round trips (numpy, torch, scalars), save/load, and clear errors."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_numbers.data import SCALER_FILE, NumberScaler, make_task

VALUES = np.array([-1234.5, -3.0, 0.0, 0.25, 7.0, 98765.0])
CONFIGS = [
    {"kind": "identity"},
    {"kind": "identity", "log": True},
    {"kind": "standard"},
    {"kind": "standard", "log": True},
    {"kind": "maxabs", "max_abs": 5.0},
    {"kind": "maxabs", "log": True},
    {"kind": "affine", "shift": 10.0, "scale": 4.0},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_round_trip_numpy_torch_and_scalars(config: dict) -> None:
    scaler = NumberScaler(**config).fit(VALUES)
    scaled = scaler.transform(VALUES)
    assert isinstance(scaled, np.ndarray) and scaled.dtype == np.float64
    np.testing.assert_allclose(scaler.inverse_transform(scaled), VALUES, rtol=1e-12, atol=1e-12)

    tensor = torch.tensor(VALUES, dtype=torch.float32).reshape(2, 3)
    scaled_tensor = scaler.transform(tensor)
    assert scaled_tensor.dtype == torch.float64 and scaled_tensor.shape == (2, 3)
    np.testing.assert_allclose(scaled_tensor.numpy().ravel(), scaler.transform(tensor.double().numpy().ravel()))
    back = scaler.inverse_transform(scaled_tensor)
    np.testing.assert_allclose(back.numpy(), tensor.double().numpy(), rtol=1e-12, atol=1e-12)

    scalar = scaler.transform(7.0)
    assert isinstance(scalar, float) and scalar == pytest.approx(float(scaled[4]), rel=1e-15)
    assert scaler.inverse_transform(scalar) == pytest.approx(7.0, rel=1e-12)
    assert isinstance(scaler.transform(7), float)


def test_standard_and_maxabs_fits() -> None:
    standard = NumberScaler("standard").fit(VALUES)
    assert standard.shift == pytest.approx(VALUES.mean()) and standard.scale == pytest.approx(VALUES.std())
    scaled = standard.transform(VALUES)
    assert abs(scaled.mean()) < 1e-12 and scaled.std() == pytest.approx(1.0)

    maxabs = NumberScaler("maxabs", max_abs=5.0).fit(VALUES)
    assert np.abs(maxabs.transform(VALUES)).max() == pytest.approx(5.0)

    logged = NumberScaler("maxabs", log=True).fit(VALUES)
    expected = np.sign(VALUES) * np.log10(1 + np.abs(VALUES)) / np.log10(1 + 98765.0)
    np.testing.assert_allclose(logged.transform(VALUES), expected, rtol=1e-12)

    affine = NumberScaler("affine", shift=1.0, scale=2.0)
    assert affine.is_fitted and affine.transform([3.0, -1.0]).tolist() == [1.0, -1.0]
    constant = NumberScaler("standard").fit([4.0, 4.0])
    assert constant.scale == 1.0 and constant.transform(4.0) == 0.0


def test_fit_accepts_ragged_lists_tensors_and_datasets() -> None:
    ragged = [[1.0, 2.0], [3.0], [], [np.float32(4.0), 5]]
    assert NumberScaler("standard").fit(ragged) == NumberScaler("standard").fit([1.0, 2.0, 3.0, 4.0, 5.0])
    assert NumberScaler("maxabs").fit(torch.tensor([[1.0, -8.0]])).scale == 8.0

    dataset = make_task("lookup", train_size=50, validation_size=0, test_size=0, test_ood_size=0)["train"]
    from_column = NumberScaler("standard").fit_dataset(dataset)
    flat = [v for row in dataset["numbers"] for v in row]
    assert from_column == NumberScaler("standard").fit(flat)
    assert from_column.num_fit_values == len(flat)

    def extract_values(text: str) -> list[float]:
        return [float(m.group()) for m in re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?", text)]

    def extract_spans(text: str) -> list[tuple[int, int, float]]:
        return [(m.start(), m.end(), float(m.group())) for m in re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?", text)]

    from_values = NumberScaler("standard").fit_dataset(dataset, "text", extract_values)
    from_spans = NumberScaler("standard").fit_dataset(dataset, "text", extract_spans)
    assert from_values == from_spans == from_column
    with pytest.raises(ValueError, match="column 'txt' is not in the dataset; columns: text, prompt"):
        NumberScaler().fit_dataset(dataset, "txt")
    with pytest.raises(ValueError, match="needs a text column; column 'answer' holds float"):
        NumberScaler().fit_dataset(dataset, "answer", extract_values)


def test_save_and_load(tmp_path) -> None:
    scaler = NumberScaler("standard", log=True).fit(VALUES)
    path = scaler.save_pretrained(tmp_path / "checkpoint")
    assert path == tmp_path / "checkpoint" / SCALER_FILE
    state = json.loads(path.read_text())
    assert state["kind"] == "standard" and state["log"] is True and state["num_fit_values"] == len(VALUES)
    for source in (path.parent, path, str(path.parent)):
        loaded = NumberScaler.from_pretrained(source)
        assert loaded == scaler and loaded.num_fit_values == len(VALUES)
        assert np.array_equal(loaded.transform(VALUES), scaler.transform(VALUES))
    unfitted = NumberScaler("maxabs")
    assert not NumberScaler.from_pretrained(unfitted.save_pretrained(tmp_path / "u")).is_fitted


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_values_raise(bad: float) -> None:
    scaler = NumberScaler("standard").fit([1.0, 2.0])
    with pytest.raises(ValueError, match="must be finite numbers; found 1 NaN or infinite value"):
        NumberScaler("standard").fit([1.0, bad])
    with pytest.raises(ValueError, match="transform input must be finite numbers"):
        scaler.transform(np.array([0.0, bad]))
    with pytest.raises(ValueError, match="transform input must be finite numbers"):
        scaler.transform(torch.tensor([bad]))
    with pytest.raises(ValueError, match="inverse_transform input must be finite numbers"):
        scaler.inverse_transform([bad])


def test_inverse_transform_can_mark_invalid_predictions_as_nan() -> None:
    scaler = NumberScaler("maxabs", log=True).fit([1.0, -99.0])
    predictions = torch.tensor([0.5, float("nan"), float("inf"), 1e6, -1.0])
    back = scaler.inverse_transform(predictions, invalid="nan")
    assert back.dtype == torch.float64
    assert back[0].item() == pytest.approx(9.0) and back[4].item() == pytest.approx(-99.0)
    assert torch.isnan(back[1:4]).all()


def test_misuse_raises_clear_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match=r'NumberScaler\("standard"\) is not fitted; call fit'):
        NumberScaler("standard").transform([1.0])
    with pytest.raises(ValueError, match="is not fitted"):
        NumberScaler("maxabs").inverse_transform([1.0])
    with pytest.raises(ValueError, match="kind='zscore' is unknown; allowed: identity, standard, maxabs, affine"):
        NumberScaler("zscore")
    with pytest.raises(ValueError, match='kind="affine" needs both shift and scale'):
        NumberScaler("affine", shift=1.0)
    with pytest.raises(ValueError, match="scale must be a finite number > 0, got 0.0"):
        NumberScaler("affine", shift=0.0, scale=0.0)
    with pytest.raises(ValueError, match="max_abs must be a finite number > 0"):
        NumberScaler("maxabs", max_abs=-1.0)
    with pytest.raises(ValueError, match="fit needs at least one value"):
        NumberScaler().fit([])
    with pytest.raises(ValueError, match="fit values must be numbers"):
        NumberScaler().fit(["1.0"])
    with pytest.raises(ValueError, match="transform input must be numbers"):
        NumberScaler("identity").transform([1.0, None])
    with pytest.raises(ValueError, match="too large for this scaler"):
        NumberScaler("identity", log=True).inverse_transform([400.0])
    with pytest.raises(ValueError, match='invalid must be "raise" or "nan"'):
        NumberScaler("identity").inverse_transform([1.0], invalid="ignore")
    with pytest.raises(ValueError, match="no number_scaler.json found"):
        NumberScaler.from_pretrained(tmp_path)
    (tmp_path / SCALER_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON"):
        NumberScaler.from_pretrained(tmp_path)
    (tmp_path / SCALER_FILE).write_text(json.dumps({"format_version": 99}))
    with pytest.raises(ValueError, match="not a NumberScaler state of format_version 1"):
        NumberScaler.from_pretrained(tmp_path)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=2, max_size=20),
    config=st.sampled_from(CONFIGS),
)
def test_round_trip_property(values: list[float], config: dict) -> None:
    scaler = NumberScaler(**config).fit(values)
    back = scaler.inverse_transform(scaler.transform(values))
    tolerance = 1e-9 * max(1.0, max(abs(v) for v in values))
    assert all(math.isclose(b, v, rel_tol=1e-9, abs_tol=tolerance) for b, v in zip(back, values))
