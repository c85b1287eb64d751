"""Batches encode as the row-by-row reference does (tests/reference_numbers.py), on random mixed texts and options.

The tokenizers find numbers in one regex pass and fill ``input_numbers`` for a whole batch at once; the
reference rewrites each text with the older number scan and finds every value and offset from the
token's characters. Every output (ids, masks, values, offsets, overflow rows, tensors) and every error
must be the same, for every backbone, with ``[NUM]`` tokens and with text schemes.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import reference_numbers
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_helpers import TEXT_ENCODINGS, covering_pairs
from reference_numbers import MIXED_TEXTS, MODERATE, mixed_texts

from hf_numbers import BACKBONES
from hf_numbers.modeling.text_schemes import SCHEME_TOKEN_RE

CASES = [(name, None) for name in BACKBONES] + covering_pairs(BACKBONES, TEXT_ENCODINGS)
"""Every backbone with [NUM] tokens, and every text baseline with some backbone."""
TEXTS = {
    kind: texts.filter(lambda text: "[NUM]" not in text and not SCHEME_TOKEN_RE.search(text))
    for kind, texts in (("num", MIXED_TEXTS), ("scheme", mixed_texts(MODERATE)))
}
"""Texts for [NUM] tokens, and for text schemes (numbers within their range, mostly)."""
OPTIONS = st.fixed_dictionaries(
    {
        "padding": st.sampled_from([False, True, "max_length"]),
        "truncation": st.sampled_from([False, True, "only_first", "longest_first"]),
        "max_length": st.none() | st.integers(2, 40),
        "return_offsets_mapping": st.booleans(),
        "return_tensors": st.sampled_from([None, "np", "pt"]),
        "padding_side": st.sampled_from(["left", "right"]),
        "add_special_tokens": st.booleans(),
    },
    optional={
        "return_overflowing_tokens": st.booleans(),
        "stride": st.integers(0, 3),
        "pad_to_multiple_of": st.integers(1, 8),
        "return_attention_mask": st.booleans(),
        "return_token_type_ids": st.booleans(),
        "return_special_tokens_mask": st.booleans(),
        "return_length": st.booleans(),
    },
)


class Tokenizers(dict):
    """The tokenizers by case; a short repr keeps Hypothesis' reports readable."""

    def __repr__(self) -> str:
        return f"<{len(self)} tokenizers>"


@pytest.fixture(scope="module")
def tokenizers(plain_tokenizer_dirs: dict[str, Path]) -> Tokenizers:
    loaded = Tokenizers()
    for name, scheme in CASES:
        tok = BACKBONES[name].tokenizer_class.from_pretrained(
            plain_tokenizer_dirs[name], number_scheme=scheme, scheme_min_exponent=-5, scheme_max_exponent=2
        )
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        loaded[name, scheme] = tok
    return loaded


def outcome(call, *args, **kwargs):
    """What ``call`` returns, or the error it raises (transformers', a scheme's, or a panic of the Rust tokenizer)."""
    try:
        return call(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # tokenizers' PanicException is not an Exception
        return error


def row_errors(tok, first, second, options) -> list[tuple[type, str]]:
    """The (type, message) of the reference's error for each row of a batch on its own (the one text: its error)."""
    if isinstance(first, str):
        rows = [(first, second)]
    else:
        rows = list(zip(first, second if second is not None else [None] * len(first)))
    errors = []
    for one, other in rows:
        error = outcome(reference_numbers.encode, tok, [one], None if other is None else [other], **options)
        if isinstance(error, BaseException):
            errors.append((type(error), str(error)))
    return errors


def assert_identical(got, expected, where: str = "") -> None:
    """Equal values of equal types: arrays and tensors with their dtype and shape, floats bit for bit."""
    assert type(got) is type(expected), where
    if isinstance(expected, torch.Tensor):
        expected, got = expected.numpy(), got.numpy()
    if isinstance(expected, np.ndarray):
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape), where
        if expected.dtype != object:
            assert got.tobytes() == expected.tobytes(), where
            return
    if isinstance(expected, (list, tuple, np.ndarray)):
        assert len(got) == len(expected), where
        for index, (a, b) in enumerate(zip(got, expected)):
            assert_identical(a, b, f"{where}[{index}]")
    elif isinstance(expected, float):
        assert struct.pack("<d", got) == struct.pack("<d", expected), where
    else:
        assert got == expected, where


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.filterwarnings("ignore:`max_length` is ignored")
@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case[0]}-{case[1] or 'num'}")
@given(pairs=st.booleans(), options=OPTIONS, data=st.data())
def test_batches_encode_as_the_row_by_row_reference(case, pairs, options, data, tokenizers) -> None:
    tok = tokenizers[case]
    texts = TEXTS["num" if case[1] is None else "scheme"]
    first = data.draw(st.lists(texts, min_size=1, max_size=4) | texts)
    second = None
    if pairs:
        size = None if isinstance(first, str) else len(first)
        second = data.draw(texts if size is None else st.lists(texts, min_size=size, max_size=size))
    expected = outcome(reference_numbers.encode, tok, first, second, **options)
    got = outcome(tok, first, second, **options)
    if isinstance(expected, BaseException):  # or any of its rows' errors: the Rust tokenizer encodes them in parallel
        reported = (type(got), str(got))
        assert reported == (type(expected), str(expected)) or reported in row_errors(tok, first, second, options)
        return
    assert isinstance(got, type(expected)) and list(got) == list(expected)
    for key in expected:
        assert_identical(got[key], expected[key], key)
