"""BitTokens' own maths: the IEEE-754 bits in and out, exact decoding, the reciprocal, the loss and its options."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterator

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from model_helpers import check_input_numbers, one_thread, random_batch, tiny_config, tiny_model

from hf_numbers import NumberGPT2Config, build_number_encoding, get_encoding

F64 = torch.float64
FLOAT64_MAX = float(np.finfo(np.float64).max)
FLOAT32_MAX = float(np.finfo(np.float32).max)
EDGES = (0.0, -0.0, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 1.0, -1.0, 0.1, 1 / 3, -123.456, 2.0**53 + 2,
         1e300, -FLOAT64_MAX, FLOAT64_MAX)  # fmt: skip
"""Zeros of both signs, subnormals, the smallest normal, ordinary and large values, the largest finite."""


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


def encoding(**overrides):
    return build_number_encoding(tiny_config("gpt2", "bittokens", **overrides))


def column(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=F64)


def logits_of(enc, values: torch.Tensor) -> torch.Tensor:
    """Head outputs that say exactly the bits of ``values``."""
    return (2 * enc.bits(values) - 1).float() * 5


def same_floats(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-for-bit equality (so -0.0 differs from 0.0)."""
    return torch.equal(a.double().view(torch.int64), b.double().view(torch.int64))


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_the_bits_are_the_float64_bits_most_significant_first(x: float) -> None:
    bits = encoding().bits(column(x))[0]
    assert "".join(map(str, bits.tolist())) == "".join(f"{byte:08b}" for byte in struct.pack(">d", x))


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float64_decodes_back_exactly_from_its_bits(x: float) -> None:
    enc = encoding()
    assert same_floats(enc.decode(logits_of(enc, column(x))), column(x))


def test_normal_subnormal_negative_zero_and_large_values_round_trip_exactly() -> None:
    enc = encoding()
    values = column(*EDGES)
    check_input_numbers(enc, values)  # every finite float64 is accepted
    decoded = enc.decode(logits_of(enc, values)[None])[0]  # any leading shape: (1, N)
    assert decoded.dtype == F64 and same_floats(decoded, values)


def test_float32_precision_reads_and_writes_the_value_rounded_to_float32() -> None:
    enc = encoding(bittokens_precision="float32")
    values = column(0.1, -0.0, 1e-40, 3.4e38, -123.456, 1e-50)  # 1e-40 is a float32 subnormal, 1e-50 rounds to 0
    bits = enc.bits(values)
    assert bits.shape == (6, 32)
    assert "".join(map(str, bits[0].tolist())) == "".join(f"{byte:08b}" for byte in struct.pack(">f", 0.1))
    assert same_floats(enc.decode(logits_of(enc, values)), values.float().double())


@pytest.mark.parametrize(
    ("precision", "word", "largest"),
    [("float64", 0x7FF0000000000000, FLOAT64_MAX), ("float64", 0xFFF8000000000001, -FLOAT64_MAX),
     ("float32", 0x7F800000, FLOAT32_MAX), ("float32", 0xFFC00000, -FLOAT32_MAX)],
)  # fmt: skip
def test_infinity_and_nan_bit_patterns_decode_to_the_largest_finite_value_with_their_sign(
    precision: str, word: int, largest: float
) -> None:
    enc = encoding(bittokens_precision=precision)
    n = enc.format.bits
    bits = torch.tensor([(word >> shift) & 1 for shift in range(n - 1, -1, -1)], dtype=torch.float32)
    assert enc.decode((2 * bits - 1)[None] * 5).item() == largest


def test_nan_and_infinity_are_refused_and_float32_precision_refuses_values_beyond_float32() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match=re.escape(f"holds {bad!r}") + ".*finite float64 values"):
            check_input_numbers(encoding(), column(bad))
    check_input_numbers(encoding(), column(1e300))
    with pytest.raises(ValueError, match=r"holds 1e\+39 .*finite float32 values, \|x\| <= 3.4028235e\+38"):
        check_input_numbers(encoding(bittokens_precision="float32"), column(1e39))
    values = np.array([1.0, 1e39, -1e300, math.nan, math.inf])
    out, words = get_encoding("bittokens").data_out_of_range(values, {}, hidden_size=32)
    assert out.tolist() == [False, False, False, True, True] and words == "finite float64 values"
    out, words = get_encoding("bittokens").data_out_of_range(values, {"bittokens_precision": "float32"}, 32)
    assert out.tolist() == [False, True, True, True, True] and "float32" in words


def test_the_embedding_adds_the_plus_minus_one_bits_of_x_and_one_over_x_to_the_num_embedding() -> None:
    """At initialisation the projection is the identity: the reference code's zero-padded sum of the ±1 bits."""
    enc = encoding(n_embd=160)  # wider than the 2 x 64 bits
    token = torch.randn(3, 160)
    values = column(2.0, -0.5, 0.0)
    out = enc._embed_values(token, values)
    bits_x, bits_inverse = enc.bits(values), enc.bits(column(0.5, -2.0, math.inf))  # 1/0 = inf, as x.reciprocal()
    expected = torch.cat([2 * bits_x - 1, 2 * bits_inverse - 1, torch.zeros(3, 32)], -1).float()
    assert torch.allclose(out - token, expected, atol=1e-6)
    assert encoding(bittokens_reciprocal=False).bit_proj.in_features == 64


def test_zero_pad_makes_the_scaled_bits_alone_the_embedding_as_the_reference_code_does(tmp_path) -> None:
    """``bittokens_embedding="zero_pad"``: the ±1 bits of x and 1/x times sqrt(H / 128), zero-padded to H, whatever
    the ``[NUM]`` row; no projection. A model with it trains, saves and reloads with the same outputs."""
    enc = encoding(n_embd=160, bittokens_embedding="zero_pad")
    values = column(2.0, -0.5, 0.0)
    bits_x, bits_inverse = enc.bits(values), enc.bits(column(0.5, -2.0, math.inf))
    expected = torch.cat([2 * bits_x - 1, 2 * bits_inverse - 1, torch.zeros(3, 32)], -1).float() * math.sqrt(160 / 128)
    for token in (torch.randn(3, 160), torch.zeros(3, 160)):
        assert torch.allclose(enc._embed_values(token, values), expected, atol=1e-6)
    assert enc.bit_proj is None and not any("bit_proj" in name for name, _ in enc.named_parameters())
    model = tiny_model("gpt2", "bittokens", n_embd=64, bittokens_embedding="zero_pad", bittokens_reciprocal=False)
    batch = random_batch("gpt2")
    model(**batch).loss.backward()
    assert model.number_encoding.bit_head[0].weight.grad.abs().sum() > 0
    model.save_pretrained(tmp_path)
    with torch.no_grad():
        again = type(model).from_pretrained(tmp_path).eval()(**batch)
        assert torch.equal(again.logits, model.eval()(**batch).logits)


def test_the_embedding_reads_float64_bits_under_autocast() -> None:
    """bf16 autocast never reaches the bits: 1 and the next float64 above it get different embeddings."""
    enc = encoding()
    embeds, is_num = torch.zeros(1, 2, 32, dtype=torch.bfloat16), torch.tensor([[True, True]])
    enc.bit_proj.weight.data = torch.eye(32, 128)
    enc.bit_proj.weight.data[0, 63] = 1.0  # the last mantissa bit into dim 0
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = enc.embed(embeds, column(1.0, 1.0 + 2.0**-52)[None], is_num)
    assert out.dtype == torch.bfloat16 and out[0, 0, 0] != out[0, 1, 0]


def test_the_loss_is_the_mean_bce_per_bit_and_the_weighted_loss_favours_significant_bits() -> None:
    mask = torch.tensor([True])
    undecided = torch.zeros(1, 64)  # every bit at probability 1/2: ln 2 each, whatever the weights
    for weighted in (False, True):
        loss = encoding(bittokens_weighted_loss=weighted).masked_loss(undecided, column(3.0), mask)
        assert loss.item() == pytest.approx(math.log(2), rel=1e-6)
    enc, weighted = encoding(), encoding(bittokens_weighted_loss=True)
    assert weighted.bit_weights().tolist()[:2] == pytest.approx([64 / 32.5, 63 / 32.5])  # n .. 1 over their mean
    wrong_sign = logits_of(enc, column(3.0))
    wrong_sign[0, 0] *= -1  # says -3.0: only the sign bit is wrong, with logit 5
    sign_bce = math.log1p(math.exp(5)) + 63 * math.log1p(math.exp(-5))
    assert enc.masked_loss(wrong_sign, column(3.0), mask).item() == pytest.approx(sign_bce / 64, rel=1e-5)
    assert weighted.masked_loss(wrong_sign, column(3.0), mask) > enc.masked_loss(wrong_sign, column(3.0), mask)


def test_the_head_is_linear_or_an_mlp_through_half_the_width() -> None:
    assert [type(m).__name__ for m in encoding().bit_head] == ["Linear"]
    mlp = encoding(bittokens_head="mlp").bit_head
    assert [type(m).__name__ for m in mlp] == ["Linear", "ReLU", "Linear"] and mlp[0].out_features == 16
    assert encoding(bittokens_precision="float32").head(torch.zeros(2, 3, 32)).shape == (2, 3, 32)


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"bittokens_precision": "float16"}, "bittokens_precision must be one of float64, float32, got 'float16'"),
     ({"bittokens_head": "deep"}, "bittokens_head must be one of linear, mlp, got 'deep'"),
     ({"bittokens_reciprocal": "yes"}, "bittokens_reciprocal must be True or False, got 'yes'"),
     ({"bittokens_embedding": "concat"}, "bittokens_embedding must be one of added, zero_pad, got 'concat'"),
     ({"bittokens_embedding": "zero_pad"},
      "bittokens_embedding='zero_pad' writes 128 bits into the embedding, but hidden_size is 32; it needs hidden_size "
      ">= 128")],
)  # fmt: skip
def test_options_are_validated_with_the_allowed_values(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="bittokens", **fields)
