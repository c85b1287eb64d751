"""The number scaling lives in the config and is applied inside the model: raw values in, raw values out."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from model_helpers import (
    CAUSAL,
    ENCODINGS,
    MASK_ID,
    MASKED,
    MATRIX,
    NUM_IDS,
    PAD_ID,
    TEXT_ENCODINGS,
    VOCAB,
    inputs_only,
    one_thread,
    random_batch,
    tiny_model,
)
from transformers import AutoModel

from hf_numbers import BACKBONES, NUMBER_ENCODINGS_REGISTRY, NumberGPT2Config
from hf_numbers.modeling.legacy_checkpoints import LEGACY_SCALER_FILE
from hf_numbers.modeling.number_scaling import NumberScaling

SCALING = NumberScaling(shift=0.5, scale=0.8, log=True)  # signed log, then shift and scale: nothing cancels out
SCALED = [name for name in ENCODINGS if NUMBER_ENCODINGS_REGISTRY[name].needs_scaling]
RAW = [name for name in ENCODINGS if not NUMBER_ENCODINGS_REGISTRY[name].needs_scaling]
SCALED_PAIRS = [(backbone, encoding) for backbone in BACKBONES for encoding in SCALED]


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


def scaled_by_hand(batch: dict[str, torch.Tensor], backbone: str) -> dict[str, torch.Tensor]:
    """The batch with ``SCALING`` applied outside the model, as callers had to before."""
    is_num = torch.isin(batch["input_ids"], torch.tensor(NUM_IDS[backbone]))
    numbers = batch["input_numbers"]
    out = dict(batch, input_numbers=torch.where(is_num, SCALING.transform(numbers), numbers))
    if "number_labels" in batch:
        out["number_labels"] = SCALING.transform(batch["number_labels"])
    return out


def test_the_matrix_holds_encodings_that_need_scaling_and_encodings_that_do_not() -> None:
    """Both kinds go through the tests below, none of which may be empty (which is which: tests/test_encodings.py)."""
    assert SCALED and RAW


@pytest.mark.parametrize("backbone,encoding", SCALED_PAIRS)
def test_the_model_applies_its_scaling_to_inputs_labels_and_predictions(backbone: str, encoding: str) -> None:
    """Same weights: scaling inside (raw values) == no scaling fed values scaled by hand, predictions mapped back."""
    inside = tiny_model(backbone, encoding, **SCALING.to_config()).eval()
    by_hand = tiny_model(backbone, encoding).eval()
    batch = random_batch(backbone)
    ours, theirs = inside(**batch), by_hand(**scaled_by_hand(batch, backbone))
    assert torch.equal(ours.logits, theirs.logits)
    assert torch.equal(ours.number_loss, theirs.number_loss) and torch.equal(ours.loss, theirs.loss)
    assert torch.equal(ours.number_predictions, SCALING.inverse(theirs.number_predictions))
    assert not torch.allclose(ours.number_predictions, theirs.number_predictions)  # the units differ
    plain = by_hand(**batch)  # raw values into a model without the scaling: another result
    assert not torch.equal(plain.logits, ours.logits)


@pytest.mark.parametrize("backbone", CAUSAL)
def test_generate_feeds_back_model_units_and_returns_raw_values(backbone: str) -> None:
    inside = tiny_model(backbone, "xval", **SCALING.to_config()).eval()
    by_hand = tiny_model(backbone, "xval").eval()
    batch = inputs_only(random_batch(backbone, batch=2, length=7))
    # only number tokens may be generated: every new value is fed back into the next step
    settings = dict(max_new_tokens=4, do_sample=False, return_dict_in_generate=True, pad_token_id=PAD_ID,
                    suppress_tokens=[i for i in range(VOCAB) if i not in NUM_IDS[backbone]])
    ours = inside.generate(**batch, **settings)
    theirs = by_hand.generate(**scaled_by_hand(batch, backbone), **settings)
    assert torch.equal(ours.sequences, theirs.sequences)
    prompt = batch["input_ids"].shape[1]
    assert torch.equal(ours.numbers[:, :prompt], batch["input_numbers"])  # the prompt's values as given
    assert torch.equal(ours.numbers[:, prompt:], SCALING.inverse(theirs.numbers[:, prompt:]))
    assert torch.isin(ours.sequences[:, prompt:], torch.tensor(NUM_IDS[backbone])).all()


@pytest.mark.parametrize("backbone", MASKED)
def test_fill_mask_returns_raw_values(backbone: str) -> None:
    inside = tiny_model(backbone, "xval", **SCALING.to_config()).eval()
    by_hand = tiny_model(backbone, "xval").eval()
    for model in (inside, by_hand):  # the token head picks a number token at every mask
        with torch.no_grad():
            model.get_output_embeddings().bias[NUM_IDS[backbone]] += 100.0
    batch = inputs_only(random_batch(backbone))
    ids, numbers = inside.fill_mask(**batch, mask_token_id=MASK_ID)
    their_ids, their_numbers = by_hand.fill_mask(**scaled_by_hand(batch, backbone), mask_token_id=MASK_ID)
    filled = batch["input_ids"] == MASK_ID
    assert filled.any() and torch.equal(ids, their_ids)
    assert torch.isin(ids[filled], torch.tensor(NUM_IDS[backbone])).all()
    assert torch.equal(numbers[filled], SCALING.inverse(their_numbers[filled]))
    assert torch.equal(numbers[~filled], batch["input_numbers"][~filled])


@pytest.mark.parametrize("backbone,encoding", MATRIX)
def test_scaling_is_saved_in_config_json_and_identity_by_default(backbone: str, encoding: str, tmp_path: Path) -> None:
    model = tiny_model(backbone, encoding)
    assert model.number_scaling == NumberScaling() and model.number_scaling.is_identity
    if encoding in SCALED:
        model.set_number_scaling(SCALING)
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    expected = SCALING if encoding in SCALED else NumberScaling()
    defaults = NumberGPT2Config().to_dict()
    assert {key: saved.get(key, defaults[key]) for key in expected.to_config()} == expected.to_config()
    assert not (tmp_path / LEGACY_SCALER_FILE).exists()
    loaded = AutoModel.from_pretrained(tmp_path).eval()
    assert loaded.number_scaling == expected
    batch = inputs_only(random_batch(backbone))
    with torch.no_grad():
        assert torch.equal(loaded(**batch).number_predictions, model.eval()(**batch).number_predictions)


def test_fit_number_scaling_on_xval_and_refused_where_values_stay_raw() -> None:
    values = [41.2, 40.8, 44.6, 52.0, -3.0]
    model = tiny_model("gpt2", "xval")
    fitted = model.fit_number_scaling(values, "maxabs", log=True, max_abs=5.0)
    assert fitted == model.number_scaling
    assert {name: getattr(model.config, name) for name in fitted.to_config()} == fitted.to_config()
    assert model.fit_number_scaling(values).shift == pytest.approx(sum(values) / len(values))
    assert model.set_number_scaling(NumberScaling.fit([1.0, 3.0])) == NumberScaling(2.0, 1.0) == model.number_scaling
    with pytest.raises(ValueError, match=r"needs a NumberScaling \(NumberScaling.fit\(values\)\), got 'standard'"):
        model.set_number_scaling("standard")
    with pytest.raises(ValueError, match="fit values must be finite numbers; found 1 NaN"):
        model.fit_number_scaling([1.0, float("nan")])
    with pytest.raises(ValueError, match="kind='zscore' is unknown; allowed: identity, standard, maxabs"):
        model.fit_number_scaling(values, "zscore")
    for encoding in (*RAW, *TEXT_ENCODINGS):
        with pytest.raises(ValueError, match=f"the '{encoding}' encoding reads raw values"):
            tiny_model("gpt2", encoding).fit_number_scaling(values)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"number_scaling_scale": 0.0}, "number_scaling_scale must be > 0, got 0.0"),
        ({"number_scaling_scale": -2.0}, "number_scaling_scale must be > 0"),
        ({"number_scaling_shift": float("nan")}, "number_scaling_shift must be a finite number, got nan"),
        ({"number_scaling_scale": float("inf")}, "number_scaling_scale must be a finite number"),
        ({"number_scaling_log": 1}, "number_scaling_log must be True or False"),
    ],
)
def test_invalid_scaling_fields_are_value_errors(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, **fields)


def test_bad_values_are_value_errors_before_and_after_scaling() -> None:
    batch = inputs_only(random_batch("gpt2"))
    model = tiny_model("gpt2", "xval", **SCALING.to_config())
    position = torch.isin(batch["input_ids"], torch.tensor(NUM_IDS["gpt2"])).nonzero()[0].tolist()
    batch["input_numbers"][tuple(position)] = float("nan")
    with pytest.raises(ValueError, match="input_numbers .*holds nan at a number position"):
        model(**batch)
    batch["input_numbers"][tuple(position)] = 1e300  # finite, but beyond float32 once scaled
    huge = tiny_model("gpt2", "xval", number_scaling_scale=1e-300)
    with pytest.raises(ValueError, match=r"input_numbers \(after the config's number scaling\) holds inf"):
        huge(**batch)
    # labels too are checked in the model's units, and the message says so (the value given was 1.0)
    batch["input_numbers"][tuple(position)] = 2.5
    is_num = torch.isin(batch["input_ids"], torch.tensor(NUM_IDS["gpt2"]))
    tiny = {**batch, "input_numbers": torch.where(is_num, batch["input_numbers"] * 1e-300, 1.0)}  # 2.5... scaled
    labels = {"labels": batch["input_ids"], "number_labels": tiny["input_numbers"].clone()}
    assert huge(**tiny, **labels).loss.isfinite()
    labels["number_labels"][tuple(position)] = 1.0
    scaled = r"number_labels \(after the config's number scaling\) holds (1e\+300|9\.9+e\+299)"
    with pytest.raises(ValueError, match=scaled):
        huge(**tiny, **labels)


def test_an_overflowing_log_inverse_is_infinite_and_an_invalid_prediction() -> None:
    scaling = NumberScaling(scale=100.0, log=True)
    assert scaling.inverse(torch.tensor([400.0, -400.0, 1.0])).tolist()[:2] == [float("inf"), float("-inf")]


# ---------------------------------------------------------------------- checkpoints from before: number_scaler.json
def _legacy_checkpoint(folder: Path, scaling: NumberScaling, **config) -> Path:
    tiny_model("gpt2", "xval", **config).save_pretrained(folder)
    state = {"format_version": 1, "kind": "standard", "shift": scaling.shift, "scale": scaling.scale,
             "log": scaling.log, "max_abs": 1.0, "num_fit_values": 3}  # what run_training wrote beside the model
    (folder / LEGACY_SCALER_FILE).write_text(json.dumps(state))
    return folder


def test_an_older_checkpoints_number_scaler_json_moves_into_the_config(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scaler = NumberScaling.fit([3.0, -250.0, 12.5], "maxabs", log=True)
    folder = _legacy_checkpoint(tmp_path / "old", scaler)
    with caplog.at_level(logging.WARNING):
        model = AutoModel.from_pretrained(folder).eval()
    assert model.number_scaling == NumberScaling(scaler.shift, scaler.scale, scaler.log)
    assert "moved number_scaler.json" in caplog.text and "number_scaling_scale=" in caplog.text
    expected = tiny_model("gpt2", "xval", **scaler.to_config()).eval()
    batch = inputs_only(random_batch("gpt2"))
    with torch.no_grad():
        assert torch.equal(model(**batch).number_predictions, expected(**batch).number_predictions)
    model.save_pretrained(tmp_path / "new")  # saved again: the scaling is in config.json
    assert json.loads((tmp_path / "new" / "config.json").read_text())["number_scaling_log"] is True
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert AutoModel.from_pretrained(tmp_path / "new").number_scaling == model.number_scaling
        AutoModel.from_pretrained(folder.parent / "old")  # the same file again: moved again, said again
    assert caplog.text.count("moved number_scaler.json") == 1


def test_a_number_scaler_json_that_disagrees_or_is_damaged_is_refused(tmp_path: Path) -> None:
    scaler = NumberScaling.fit([1.0, 5.0])
    folder = _legacy_checkpoint(tmp_path / "both", scaler, **SCALING.to_config())
    with pytest.raises(ValueError, match="disagrees with the number scaling of the config"):
        AutoModel.from_pretrained(folder)
    folder = _legacy_checkpoint(tmp_path / "same", scaler, **scaler.to_config())
    assert AutoModel.from_pretrained(folder).number_scaling.shift == 3.0  # a leftover file that agrees is fine
    (folder / LEGACY_SCALER_FILE).write_text('{"format_version": 7}')
    with pytest.raises(ValueError, match="is not a number_scaler.json of hf_numbers"):
        AutoModel.from_pretrained(folder)
    (folder / LEGACY_SCALER_FILE).write_text("{broken")
    with pytest.raises(ValueError, match="cannot read .*number_scaler.json"):
        AutoModel.from_pretrained(folder)
