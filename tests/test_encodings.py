"""The maths of each number encoding: features, bits, scaling, bins, heads, losses and range checks."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from model_helpers import ENCODINGS, VALUES, check_input_numbers, check_number_labels, one_thread, tiny_config

from hf_numbers import (
    NUMBER_ENCODINGS,
    NUMBER_ENCODINGS_REGISTRY,
    NumberGPT2Config,
    NumberScaling,
    build_number_encoding,
    encoding_options,
    get_encoding,
)
from hf_numbers.modeling.encoding_base import FLOAT32_MAX
from hf_numbers.modeling.encoding_text import SCHEME_OPTIONS

F64 = torch.float64


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


def encoding(name: str, **overrides):
    return build_number_encoding(tiny_config("gpt2", name, **overrides))


def column(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=F64)


def test_registry_covers_config_encodings() -> None:
    assert set(NUMBER_ENCODINGS_REGISTRY) == set(NUMBER_ENCODINGS)


def test_unknown_encoding_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=re.escape(f"unknown; allowed: {', '.join(NUMBER_ENCODINGS_REGISTRY)}")):
        build_number_encoding(SimpleNamespace(number_encoding="bogus", hidden_size=32))
    with pytest.raises(ValueError, match="number_encoding='bogus'"):
        NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="bogus")
    with pytest.raises(ValueError, match="number_encoding='bogus' is unknown"):
        get_encoding("bogus")


def test_registry_names_and_options_are_the_config_fields() -> None:
    """Each class is registered under its own name; its options are config fields prefixed with that name or the
    name of an encoding it extends (``digits`` takes ``text_digit_order``; the text schemes share ``scheme_``)."""
    assert all(cls.name == name for name, cls in NUMBER_ENCODINGS_REGISTRY.items())
    names = [option.name for option in encoding_options()]
    assert len(names) == len(set(names))
    config = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2)
    for cls in NUMBER_ENCODINGS_REGISTRY.values():
        for option in cls.options:
            owners = {getattr(base, "name", None) for base in cls.__mro__} - {None}
            assert any(option.name.startswith(f"{owner}_") for owner in owners) or option in SCHEME_OPTIONS
            assert isinstance(option.default, option.type)
            assert getattr(config, option.name) == option.default
    saved_fields = {"fone_int_digits", "fone_frac_digits", "exponent_num_bins", "exponent_min", "exponent_max"}
    assert saved_fields <= set(names)  # the fields saved checkpoints hold stay config fields


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"fone_int_digits": 0}, "fone_int_digits must be >= 1, got 0"),
        ({"fone_frac_digits": -1}, "fone_frac_digits must be >= 0, got -1"),
        ({"exponent_num_bins": 1}, "exponent_num_bins must be >= 2, got 1"),
        ({"exponent_min": 5.0, "exponent_max": 1.0}, "0 < exponent_min < exponent_max < inf, got 5.0 and 1.0"),
        ({"exponent_max": float("inf")}, "exponent_max < inf"),
    ],
)
def test_each_encoding_validates_its_options_and_refuses_others(fields: dict, message: str) -> None:
    for encoding_name in NUMBER_ENCODINGS:  # its own options checked; another encoding's refused by name
        own = set(fields) <= set(option.name for option in get_encoding(encoding_name).options)
        with pytest.raises(ValueError, match=re.escape(message) if own else "is an option of .*, not of"):
            NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding=encoding_name, **fields)


@pytest.mark.parametrize("name", ENCODINGS)
def test_fitted_options_represent_every_value(name: str) -> None:
    values = column(*VALUES, -0.001, 98765.4321)
    fitted = get_encoding(name).fit_options(values.numpy())
    assert set(fitted) == {option.name for option in get_encoding(name).options if option.fitted}
    check_input_numbers(encoding(name, n_embd=64, **fitted), values)


@pytest.mark.parametrize("name", NUMBER_ENCODINGS)
def test_data_out_of_range_agrees_with_the_encoding_fitted_on_the_rest(name: str) -> None:
    """The check made on a user's data before any model (``data_out_of_range``) flags what the model would refuse."""
    values = np.array([*VALUES, -0.001, 98765.4321, 1e300, -3e39, math.inf, math.nan])
    out, words = get_encoding(name).data_out_of_range(values, {}, hidden_size=64)
    assert out[-2:].all() and words  # inf and nan: never a number of any encoding
    kept = values[~out]
    if get_encoding(name).has_number_module:  # the model's own check accepts every value the data check kept
        scaling = NumberScaling.fit(kept, "standard" if get_encoding(name).needs_scaling else "identity")
        module = encoding(name, n_embd=64, **get_encoding(name).fit_options(kept))
        check_input_numbers(module, torch.from_numpy(scaling.transform(kept)))


def test_fitted_options_are_tight() -> None:
    values = np.array([12.5, -0.25, 300.0, 0.0])
    assert get_encoding("fone").fit_options(values) == {"fone_int_digits": 3, "fone_frac_digits": 2}
    assert get_encoding("exponent").fit_options(values) == {"exponent_min": 0.25 / 1.01, "exponent_max": 300.0 * 1.01}
    assert get_encoding("exponent").fit_options(np.zeros(3)) == {}  # no magnitude: the defaults


@pytest.mark.parametrize(
    ("name", "needs_scaling"), [("xval", True), ("fone", False), ("float", False), ("exponent", False)]
)
def test_xval_alone_of_the_papers_encodings_needs_scaled_values(name: str, needs_scaling: bool) -> None:
    """xVal multiplies an embedding by the value, so it wants a small range; the others read digits, bits or bins."""
    assert get_encoding(name).needs_scaling is needs_scaling


@pytest.mark.parametrize("name", [name for name, cls in NUMBER_ENCODINGS_REGISTRY.items() if not cls.has_number_module])
def test_a_text_baseline_never_needs_scaled_values(name: str) -> None:
    assert get_encoding(name).needs_scaling is False  # its numbers are tokens: no module would see a scaled value


# ---------------------------------------------------------------------- FoNE
@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**6) + 1, max_value=10**6 - 1))
def test_fone_features_recover_x_mod_10k(hundredths: int) -> None:
    enc = encoding("fone")  # 4 integer + 2 fractional places: periods 10^-1 .. 10^4
    x = hundredths / 100
    features = enc.features(column(x))[0].view(enc.places, 2)
    angles = torch.atan2(features[:, 1], features[:, 0]) % (2 * math.pi)
    for place in range(enc.places):
        period_hundredths = 10 ** (place + 1)
        expected = (abs(hundredths) % period_hundredths) / period_hundredths  # |x| mod T, as a fraction of T
        recovered = angles[place].item() / (2 * math.pi)
        assert min(abs(recovered - expected), 1 - abs(recovered - expected)) < 1e-9


def test_fone_features_are_exact_for_many_digits() -> None:
    enc = encoding("fone", fone_int_digits=12, fone_frac_digits=3)
    features = enc.features(column(987654321098.765))[0].view(enc.places, 2)
    assert torch.allclose(features[0], column(math.cos(2 * math.pi * 0.5), math.sin(2 * math.pi * 0.5)), atol=1e-12)
    assert enc.digits(column(987654321098.765)).flip(-1).tolist() == [[9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5]]


def fone_head_output(enc, values: torch.Tensor, scale: float = 8.0) -> torch.Tensor:
    """Head outputs that put all their mass on the digits and sign of ``values``."""
    digit_logits = torch.nn.functional.one_hot(enc.digits(values), 10).float().flatten(1) * scale
    sign = torch.where(values < 0, scale, -scale).float()[:, None]
    return torch.cat([digit_logits, sign], dim=-1)


def test_fone_decodes_sign_and_decimals() -> None:
    enc = encoding("fone")
    values = column(*VALUES, -0.01, 9999.99)
    assert enc.decode(fone_head_output(enc, values)).tolist() == values.tolist()


def test_fone_head_reads_two_dims_per_place_at_init() -> None:
    enc = encoding("fone")
    hidden = torch.zeros(1, 1, 32)
    hidden[0, 0, 2 * 3 : 2 * 3 + 2] = torch.tensor([math.cos(2 * math.pi * 0.7), math.sin(2 * math.pi * 0.7)])
    logits = enc.head(hidden)[0, 0, :-1].view(enc.places, 10)
    assert logits[3].argmax().item() == 7


def test_fone_readout_is_normalised_and_its_loss_sums_the_places() -> None:
    """As FoNE's reference: the hidden state is layer-normalised before the read-out, the places' losses add up."""
    enc = encoding("fone")
    hidden = torch.randn(2, 3, 32)
    assert torch.allclose(enc.head(hidden), enc.head(5 * hidden + 2), atol=1e-5)
    uniform = torch.zeros(1, 10 * enc.places + 1)  # every digit equally likely, sign undecided
    loss = enc.masked_loss(uniform[:, None], column(12.5)[:, None], torch.tensor([[True]]))
    assert loss.item() == pytest.approx(enc.places * math.log(10) + math.log(2), rel=1e-6)


def test_fone_rejects_more_digits_than_configured() -> None:
    enc = encoding("fone")
    check_input_numbers(enc, column(9999.99))
    check_input_numbers(enc, column(0.1 + 0.2))  # float noise below the last place is not a digit
    for too_large in (12345.0, 10000.0, 9999.999999999999):  # the last one rounds to 10^4
        with pytest.raises(ValueError, match=r"\|x\| < 10\^4 and at most 2 fractional digits"):
            check_input_numbers(enc, column(too_large))
    with pytest.raises(ValueError, match="1.234"):
        check_input_numbers(enc, column(1.234))


def test_fone_hidden_size_must_fit_features() -> None:
    with pytest.raises(ValueError, match=r"2 \* \(fone_int_digits \+ fone_frac_digits\) <= hidden_size"):
        encoding("fone", fone_int_digits=15, fone_frac_digits=2)
    with pytest.raises(ValueError, match="<= 15"):
        encoding("fone", n_embd=64, fone_int_digits=14, fone_frac_digits=2)


# ---------------------------------------------------------------------- float bits
@settings(max_examples=200, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float_bits_match_struct_pack(x: float) -> None:
    bits = encoding("float").bits(column(x))[0]
    expected = "".join(f"{byte:08b}" for byte in struct.pack(">f", x))
    assert "".join(str(int(b)) for b in bits.tolist()) == expected


def test_float_decode_round_trips_float32() -> None:
    enc = encoding("float")
    values = column(*VALUES, 3.14159, -1e-40, 1e30, FLOAT32_MAX)
    logits = (2 * enc.bits(values) - 1) * 5
    assert enc.decode(logits).tolist() == values.float().double().tolist()


@pytest.mark.parametrize("word", [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFFFFFFF])
def test_float_decode_saturates_inf_and_nan_patterns(word: int) -> None:
    bits = torch.tensor([(word >> shift) & 1 for shift in range(31, -1, -1)], dtype=torch.float32)
    decoded = encoding("float").decode((2 * bits - 1)[None] * 5).item()
    assert math.isfinite(decoded) and abs(decoded) == FLOAT32_MAX
    assert (decoded < 0) == bool(word >> 31)


def test_float_rejects_values_beyond_float32() -> None:
    with pytest.raises(ValueError, match="finite float32"):
        check_input_numbers(encoding("float"), column(1e39))


# ---------------------------------------------------------------------- xVal
def test_xval_scaling_is_linear_in_the_value() -> None:
    enc = encoding("xval")
    base = torch.randn(1, 1, 32)
    is_num = torch.tensor([[True]])

    def embed(x: float) -> torch.Tensor:
        return enc.embed(base, torch.tensor([[x]], dtype=F64), is_num)[0, 0]

    assert torch.allclose(embed(2.5), 2.5 * base[0, 0])
    assert torch.allclose(embed(-1.5) + embed(4.0), embed(2.5), atol=1e-6)
    assert torch.equal(embed(0.0), torch.zeros(32))


def test_xval_head_is_a_scalar_mlp_with_mse() -> None:
    enc = encoding("xval")
    assert [type(m).__name__ for m in enc.mlp] == ["Linear", "GELU", "Linear"]
    assert enc.mlp[0].out_features == 32 and enc.mlp[0].bias is not None
    outputs = torch.tensor([[1.0, 2.0]], requires_grad=True)
    loss = enc.masked_loss(outputs, torch.tensor([[3.0, 2.0]], dtype=F64), torch.tensor([[True, True]]))
    assert loss.item() == pytest.approx(2.0)
    assert enc.decode(outputs).dtype == F64


# ---------------------------------------------------------------------- exponent
def test_exponent_bins_and_centres() -> None:
    enc = encoding("exponent")  # 16 bins over [1e-2, 1e4]
    values = column(0.0, 1e-2, 0.5, 12.5, 1e4, -3.0, -1e4)
    classes = enc.classes(values)
    assert classes[0] == 0 and classes[1] == 1 and classes[4] == 16 and classes[6] == 32
    centres = enc.centres(classes)
    assert centres[0] == 0
    width = enc.log_width
    for value, centre in zip(values[1:].tolist(), centres[1:].tolist(), strict=True):
        assert (value < 0) == (centre < 0)
        assert abs(math.log10(abs(centre)) - math.log10(abs(value))) <= width / 2 + 1e-9 or abs(value) == 1e4
    logits = torch.nn.functional.one_hot(classes, 33).float()
    assert enc.decode(logits).tolist() == centres.tolist()


def test_exponent_rejects_magnitudes_outside_the_bins() -> None:
    enc = encoding("exponent")
    check_input_numbers(enc, column(0.0, 1e-2, -1e4))
    for bad in (1e-3, -1e5):
        with pytest.raises(ValueError, match=r"0 or finite values with 0.01 <= \|x\| <= 10000"):
            check_input_numbers(enc, column(bad))


# ---------------------------------------------------------------------- all encodings
@pytest.mark.parametrize("name", ENCODINGS)
def test_embed_touches_only_number_positions(name: str) -> None:
    enc = encoding(name)
    embeds = torch.randn(2, 4, 32)
    numbers = torch.tensor([[12.5, float("nan"), -3.25, 1.0], [0.0, 7.0, float("inf"), 150.0]], dtype=F64)
    is_num = torch.tensor([[True, False, True, False], [True, True, False, True]])
    assert not enc.refused(numbers, is_num).any()  # non-finite fill values at other positions are never read
    out = enc.embed(embeds, numbers, is_num)
    assert torch.equal(out[~is_num], embeds[~is_num])
    assert torch.isfinite(out).all() and not torch.equal(out[is_num], embeds[is_num])


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_numbers_are_value_errors(name: str, bad: float) -> None:
    with pytest.raises(ValueError, match=f"input_numbers holds {bad!r} at a number position"):
        check_input_numbers(encoding(name), column(1.5, bad))


@pytest.mark.parametrize("name", ENCODINGS)
def test_loss_is_zero_with_a_graph_when_nothing_is_labelled(name: str) -> None:
    enc = encoding(name)
    head_output = enc.head(torch.randn(2, 3, 32, requires_grad=True))
    labels = torch.full((2, 3), float("nan"), dtype=F64)  # unlabelled positions are never read
    loss = enc.masked_loss(head_output, labels, torch.zeros(2, 3, dtype=torch.bool))
    assert loss.item() == 0 and loss.requires_grad
    loss.backward()


@pytest.mark.parametrize("name", ENCODINGS)
def test_loss_is_finite_and_decode_has_one_value_per_position(name: str) -> None:
    enc = encoding(name)
    head_output = enc.head(torch.randn(2, 3, 32))
    labels = column(*VALUES[:6]).view(2, 3)
    mask = torch.tensor([[True, False, True], [True, True, False]])
    assert torch.isfinite(enc.masked_loss(head_output, labels, mask))
    decoded = enc.decode(head_output)
    assert decoded.shape == (2, 3) and decoded.dtype == F64 and torch.isfinite(decoded).all()
    with pytest.raises(ValueError, match="number_labels holds nan"):
        check_number_labels(enc, labels.masked_fill(mask, float("nan")), mask)


def _fone_truth(enc, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    right, wrong = fone_head_output(enc, values), fone_head_output(enc, column(13.5, 3.25, 151.0))
    return right, wrong, values


def _float_truth(enc, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (2 * enc.bits(values) - 1) * 5, (2 * enc.bits(-values * 2) - 1) * 5, values.float().double()


def _exponent_truth(enc, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    classes = enc.classes(values)
    right = torch.nn.functional.one_hot(classes, 33).float() * 8
    wrong = torch.nn.functional.one_hot(classes + 1, 33).float() * 8
    return right, wrong, enc.centres(classes)


TRUTHS = {"fone": _fone_truth, "float": _float_truth, "exponent": _exponent_truth}
"""Per encoding (its own maths): head outputs at the truth and off it, and what the truth decodes to."""


@pytest.mark.parametrize("name", TRUTHS)
def test_loss_is_lowest_at_the_truth(name: str) -> None:
    enc = encoding(name)
    values = column(12.5, -3.25, 150.0)
    right, wrong, decoded = TRUTHS[name](enc, values)
    mask = torch.ones(3, dtype=torch.bool)
    assert enc.masked_loss(right, values, mask) < 0.1 < enc.masked_loss(wrong, values, mask)
    assert enc.decode(right).tolist() == decoded.tolist()
