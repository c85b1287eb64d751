"""Number tokenizers with a text encoding: `number_scheme` = text / p10 / p1000 / b1999 / fp15."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from model_helpers import covering_pairs
from transformers import AutoTokenizer

from hf_numbers import BACKBONES, BYTE_LEVEL_BPE, find_numbers, format_number
from hf_numbers.data.collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM, prompt_lengths
from hf_numbers.data.tokenizer_training import train_number_tokenizer
from hf_numbers.modeling.text_schemes import NUMBER_SCHEMES, make_scheme

CLASSES = {name: spec.tokenizer_class for name, spec in BACKBONES.items()}
BYTE_LEVEL = [name for name, spec in BACKBONES.items() if spec.tokenizer_model == BYTE_LEVEL_BPE]
SCHEMES = ("text", *NUMBER_SCHEMES)
RANGE = {"scheme_min_exponent": -5, "scheme_max_exponent": 2}  # keeps FP15 small: 14,401 tokens
TEXTS = ["x = -60.2, y=2 and [1.42,-8.20]", '{"a": 1.53, "e": -0.0133}', "5 - 3 is 2.", "no numbers here"]


@pytest.fixture(scope="module")
def tokenizers(plain_tokenizer_dirs: dict[str, Path]) -> dict[tuple[str, str], object]:
    loaded = {}
    for backbone, cls in CLASSES.items():
        for scheme in SCHEMES:
            tok = cls.from_pretrained(plain_tokenizer_dirs[backbone], number_scheme=scheme, **RANGE)
            if tok.pad_token is None:
                tok.pad_token = tok.eos_token
            loaded[backbone, scheme] = tok
    return loaded


def rebuilt(text: str, scheme: str) -> str:
    """``text`` with every number written back as its tokens read it (rounded to the scheme's digits)."""
    out, cursor = [], 0
    rounder = make_scheme(scheme, min_exponent=-5, max_exponent=2).round if scheme != "text" else None
    for start, end, value in find_numbers(text):
        out += [text[cursor:start], format_number(rounder(value)) if rounder else text[start:end]]
        cursor = end
    return "".join([*out, text[cursor:]])


CASES = [(backbone, scheme) for backbone in CLASSES for scheme in SCHEMES]


@pytest.mark.parametrize(("backbone", "scheme"), CASES)
def test_numbers_become_the_schemes_tokens(backbone: str, scheme: str, tokenizers) -> None:
    tok = tokenizers[backbone, scheme]
    assert tok.num_token_ids == [] and tok.num_token_id is None
    vocabulary = set(tok.scheme.vocabulary()) if tok.scheme else set()
    for text in TEXTS:
        enc = tok(text)
        assert enc["input_numbers"] == [1.0] * len(enc["input_ids"])  # values live in the tokens
        assert not tok.number_mask(enc["input_ids"]).any()
        tokens = tok.convert_ids_to_tokens(enc["input_ids"])
        if scheme == "text":
            assert "[NUM]" not in tokens and not any("<|" in t for t in tokens)
            continue
        scheme_tokens = [t for t in tokens if t.strip() in vocabulary]
        assert len(scheme_tokens) == tok.scheme.tokens_per_number * len(find_numbers(text))  # the spaces cost none
        assert [t for t in tokens if t.startswith(" ")] == [t for t in scheme_tokens if t.startswith(" ")]
        if not tok.spaced_num_token:
            assert not any(t.startswith(" ") for t in tokens)


@pytest.mark.parametrize(("backbone", "scheme"), CASES)
def test_decode_writes_the_numbers_back(backbone: str, scheme: str, tokenizers) -> None:
    tok = tokenizers[backbone, scheme]
    enc = tok(TEXTS, padding=True, padding_side="left", return_tensors="pt")
    decoded = tok.batch_decode(enc["input_ids"], skip_special_tokens=True)
    assert decoded == tok.batch_decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
    for text, out in zip(TEXTS, decoded):
        if backbone not in BYTE_LEVEL:  # BERT's own spacing and lower-casing; numbers split into pieces in "text"
            assert out.replace(" ", "") == rebuilt(text, scheme).lower().replace(" ", "")
        else:
            assert out == rebuilt(text, scheme)
    single = tok.decode(enc["input_ids"][0].tolist(), skip_special_tokens=True)
    assert single == decoded[0]
    with pytest.raises(ValueError, match="shape"):
        tok.decode(enc["input_ids"], input_numbers=enc["input_numbers"][:, :-1])


@pytest.mark.parametrize("backbone", list(CLASSES))
@pytest.mark.parametrize("scheme", NUMBER_SCHEMES)
def test_malformed_runs_stay_visible_and_never_parse(backbone: str, scheme: str, tokenizers) -> None:
    tok = tokenizers[backbone, scheme]
    ids = tok("a = -60.2, b", add_special_tokens=False)["input_ids"]
    is_scheme = [t.strip().startswith("<|") for t in tok.convert_ids_to_tokens(ids)]
    first = is_scheme.index(True)
    width = tok.scheme.tokens_per_number
    broken = {
        "truncated": ids[: first + width - 1] + ids[first + width :],
        "doubled": ids[: first + 1] + ids[first:],
        "no first token": ids[:first] + ids[first + 1 :],
    }
    if width == 1:  # an FP15 token is always a whole number: drop it, or put a P10-looking string there
        broken = {"dropped": broken["no first token"]}
    for name, row in broken.items():
        text = tok.decode(row)
        numbers = [n.value for n in find_numbers(text)]
        if name == "doubled":
            assert numbers == [-60.2] and "<|" in text, text  # the stray token stays, the number is read
        else:
            assert numbers == [], (name, text)


@pytest.mark.parametrize("backbone", list(CLASSES))
def test_bad_input_is_a_clear_error(backbone: str, tokenizers, plain_tokenizer_dirs) -> None:
    tok = tokenizers[backbone, "p10"]
    with pytest.raises(ValueError, match=r"contains '<\|d6\|>', which is written like a number-scheme token"):
        tok("see <|d6|> here")
    with pytest.raises(ValueError, match=r"contains '<\|-E12\|>'"):  # any scheme's form, even out of range
        tok(["fine", "x <|-E12|>"])
    with pytest.raises(ValueError, match=r"123456.0 is written as 123E3 .*outside .*range \[-5, 2\]"):
        tok("x = 123456")
    with pytest.raises(ValueError, match="is_split_into_words"):
        tok(["x", "1"], is_split_into_words=True)
    decoded = tok.decode(tok("a [NUM] b")["input_ids"], skip_special_tokens=True)
    assert decoded.replace(" ", "").lower() == "a[num]b"  # no number token: just text
    with pytest.raises(ValueError, match="number_scheme='p100' is unknown; allowed: None"):
        CLASSES[backbone].from_pretrained(plain_tokenizer_dirs[backbone], number_scheme="p100")
    with pytest.raises(ValueError, match="multiple of 3"):
        CLASSES[backbone].from_pretrained(plain_tokenizer_dirs[backbone], number_scheme="b1999", scheme_digits=4)
    with pytest.raises(ValueError, match="at most 50000"):
        CLASSES[backbone].from_pretrained(plain_tokenizer_dirs[backbone], number_scheme="fp15", scheme_digits=5)


@pytest.mark.parametrize(("backbone", "scheme"), CASES)
def test_padding_truncation_and_pad(backbone: str, scheme: str, tokenizers) -> None:
    tok = tokenizers[backbone, scheme]
    for side in ("left", "right"):
        enc = tok(TEXTS, padding=True, padding_side=side, return_tensors="np")
        assert enc["input_numbers"].shape == enc["input_ids"].shape and (enc["input_numbers"] == 1.0).all()
    features = [tok(text) for text in TEXTS]
    padded = tok.pad(features, return_tensors="pt")
    assert padded["input_numbers"].dtype == torch.float64
    assert torch.equal(padded["input_ids"], tok(TEXTS, padding=True, return_tensors="pt")["input_ids"])
    cut = tok(TEXTS[0], truncation=True, max_length=6)
    assert len(cut["input_ids"]) == len(cut["input_numbers"]) == 6


@pytest.mark.parametrize(("backbone", "scheme"), CASES)
def test_offsets_map_every_token_of_a_number_to_the_number(backbone: str, scheme: str, tokenizers) -> None:
    tok = tokenizers[backbone, scheme]
    text = "x = -60.2, y=2 and 1e-3"
    enc = tok(text, return_offsets_mapping=True, add_special_tokens=False)
    pieces = {
        text[a:b].strip()
        for (a, b), t in zip(enc["offset_mapping"], tok.convert_ids_to_tokens(enc["input_ids"]))
        if t.strip().startswith("<|")
    }
    assert pieces == (set() if scheme == "text" else {"-60.2", "2", "1e-3"})
    assert all(0 <= a <= b <= len(text) for a, b in enc["offset_mapping"])


@pytest.mark.parametrize(("backbone", "scheme"), CASES)
def test_prompt_lengths_and_collators(backbone: str, scheme: str, tokenizers) -> None:
    """Completion-only training sees exactly the answer's tokens: all the scheme's tokens of the number."""
    tok = tokenizers[backbone, scheme]
    prompts, answers = ["12 + 345 = ", "-7 - 9 = "], ["357", "-16"]
    texts = [p + a for p, a in zip(prompts, answers)]
    lengths = prompt_lengths(tok, texts, prompts)
    features = [{**tok(t), "prompt_length": n} for t, n in zip(texts, lengths)]
    for (text, answer), length in zip(zip(texts, answers), lengths):
        ids = tok(text)["input_ids"]
        completion = tok.decode(ids[length:], skip_special_tokens=True)
        assert completion.replace(" ", "") == answer
    if BACKBONES[backbone].causal:
        batch = DataCollatorForNumberCausalLM(tok, completion_only=True)(features)
    else:
        batch = DataCollatorForNumberMLM(tok, completion_only=True, seed=0)(features)
    labelled = batch["labels"] != -100
    for row, answer in enumerate(answers):
        answer_ids = batch["labels"][row][labelled[row]].tolist()
        assert tok.decode(answer_ids, skip_special_tokens=True).replace(" ", "") == answer
        if scheme != "text":
            assert len(answer_ids) == tok.scheme.tokens_per_number
    assert (batch["number_labels"] == 1.0).all()


SAVED = covering_pairs(BACKBONES, SCHEMES)  # every backbone with some scheme, every scheme with some backbone


@pytest.mark.parametrize(("backbone", "scheme"), SAVED)
def test_save_load_and_auto_tokenizer(backbone: str, scheme: str, tokenizers, tmp_path: Path) -> None:
    tok = tokenizers[backbone, scheme]
    tok.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert config["number_scheme"] == scheme
    if scheme != "text":
        assert (config["scheme_digits"], config["scheme_min_exponent"], config["scheme_max_exponent"]) == (3, -5, 2)
    assert (tmp_path / "text_schemes.py").exists() and (tmp_path / "tokenization_helpers.py").exists()
    for loaded in (type(tok).from_pretrained(tmp_path), AutoTokenizer.from_pretrained(tmp_path)):
        assert type(loaded) is type(tok) and len(loaded) == len(tok)
        assert loaded.number_scheme == scheme
        assert loaded(TEXTS)["input_ids"] == tok(TEXTS)["input_ids"]
        ids = loaded(TEXTS[0])["input_ids"]
        assert loaded.decode(ids) == tok.decode(ids)


CORPUS = ["The temperature was 21.5 degrees at 10:30, and -3 degrees at night.", "x = 125 + 7.25 = 132.25"] * 10


@pytest.mark.parametrize("backbone", list(CLASSES))
def test_train_number_tokenizer_for_each_scheme(backbone: str) -> None:
    text = train_number_tokenizer(CORPUS, backbone, vocab_size=300, number_scheme="text")
    assert text.num_token_ids == [] and "[NUM]" not in text.get_vocab()
    pieces = text.convert_ids_to_tokens(text("x = 132.25")["input_ids"])
    assert any(any(c.isdigit() for c in piece) for piece in pieces)  # digits are learned sub-words
    assert text.decode(text(CORPUS[1])["input_ids"], skip_special_tokens=True).replace(" ", "") == CORPUS[1].replace(
        " ", ""
    )
    p1000 = train_number_tokenizer(CORPUS, backbone, vocab_size=300, number_scheme="p1000", **RANGE)
    byte_fallback = re.compile(r"<0x[0-9A-F]{2}>")  # Llama's byte tokens
    digit_pieces = [
        t for t in p1000.get_vocab() if "<|" not in t and not byte_fallback.fullmatch(t) and any(map(str.isdigit, t))
    ]
    assert all(len(piece) == 1 for piece in digit_pieces)  # no merges of digits: bytes of the alphabet at most
    assert p1000.scheme.encode(-3.0)[1] in p1000.convert_ids_to_tokens(p1000("-3")["input_ids"])
    spaced = len(p1000.scheme.start_tokens()) if p1000.spaced_num_token else 0
    assert len(p1000) <= 300 + p1000.scheme.vocabulary_size + spaced  # the scheme's tokens on top of the learned


WORDS = ["planet", "stepsize", "mass", "position", "velocity", "orbit", "star", "time", "series", "alpha", "beta"]
TIED_CORPUS = [" ".join(f"{WORDS[(i * 7 + j) % 11]}{(i + j) % 10}" for j in range(12)) for i in range(200)]


@pytest.mark.parametrize("backbone", list(CLASSES))
def test_trained_tokenizer_is_the_same_every_time(backbone: str) -> None:
    """Two trainings on the same texts give the same vocabulary, ids included, so a model trained from
    scratch is reproducible. The ``tokenizers`` WordPiece trainer gave BERT a different one almost every time
    on this corpus (its many tied counts): eight trainings in one process, eight vocabularies."""
    vocab = [train_number_tokenizer(TIED_CORPUS, backbone, 80).get_vocab() for _ in range(4)]
    vocabularies = {json.dumps(v, sort_keys=True) for v in vocab}
    assert len(vocabularies) == 1


def test_wordpiece_vocabulary_covers_every_character_in_both_places() -> None:
    from hf_numbers.data.tokenizer_training import _wordpiece_vocab

    tok = train_number_tokenizer(CORPUS + ["Zebra [NUM] qq"], "bert", vocab_size=120)
    vocab = tok.get_vocab()
    assert tok.unk_token_id not in tok("zebra, quiet: at 10 degrees, ez")["input_ids"]  # seen characters, any place
    assert {"z", "##z", "q", "##q"} <= set(vocab) and len(vocab) <= 120 + 1  # the [NUM] token on top
    assert [t for t in vocab if "NU" in t or "M]" in t] == ["[NUM]"]  # no pieces of the number token's text
    assert tok.convert_ids_to_tokens(tok("the temperature")["input_ids"])[1:-1] == ["the", "temperature"]
    bpe = {"[PAD]": 0, "[UNK]": 1, "a": 2, "b": 3, "\u2581": 4, "ab": 5, "\u2581a": 6, "\u2581ab": 7, "\u2581b": 8}
    specials = ["[PAD]", "[UNK]"]
    characters = ["[PAD]", "[UNK]", "a", "b", "##a", "##b"]  # both places, sorted, after the special tokens
    assert list(_wordpiece_vocab(bpe, 9, specials)) == [*characters, "##ab", "ab"]  # merges in learned order
    assert list(_wordpiece_vocab(bpe, 7, specials)) == [*characters, "##ab"]  # cut at vocab_size
    assert list(_wordpiece_vocab(bpe, 3, specials)) == characters  # characters are kept whatever vocab_size is


EVERY_FLOAT64 = {"min_exponent": -326, "max_exponent": 306}
"""An exponent range that holds every float64 (with 3 digits)."""


def _writes_every_float64(scheme: str) -> bool:
    """Whether ``scheme`` takes ``EVERY_FLOAT64`` within the vocabulary bound (FP15, a token per number: no)."""
    if scheme not in NUMBER_SCHEMES:  # the backbone's own text
        return True
    try:
        make_scheme(scheme, **EVERY_FLOAT64)
    except ValueError:
        return False
    return True


WIDE = [scheme for scheme in SCHEMES if _writes_every_float64(scheme)]


ALPHABET = st.sampled_from(list('0123456789.-+eE ,[]()=%:xyzab{}"\n')) | st.characters(
    codec="ascii", categories=["L", "N", "P", "S", "Zs"]
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(ALPHABET, max_size=40), scheme=st.sampled_from(WIDE))
def test_byte_level_round_trip_property(text: str, scheme: str, plain_tokenizer_dirs, wide_tokenizers) -> None:
    """Byte-level BPE: decoding gives the text with every number rounded to 3 digits (exactly the text for "text")."""
    tok = wide_tokenizers[scheme]
    assume("<|" not in text)
    enc = tok(text)
    decoded = tok.decode(enc["input_ids"], skip_special_tokens=True)
    expected, cursor = [], 0
    for start, end, value in find_numbers(text):
        written = text[start:end] if scheme == "text" else format_number(tok.scheme.round(value))
        expected += [text[cursor:start], written]
        cursor = end
    assert decoded == "".join([*expected, text[cursor:]])


@pytest.fixture(scope="module")
def wide_tokenizers(plain_tokenizer_dirs: dict[str, Path]) -> dict[str, object]:
    """Byte-level tokenizers whose exponent range holds every float64."""
    options = {f"scheme_{name}": exponent for name, exponent in EVERY_FLOAT64.items()}
    return {
        scheme: CLASSES[BYTE_LEVEL[0]].from_pretrained(
            plain_tokenizer_dirs[BYTE_LEVEL[0]], number_scheme=scheme, **options
        )
        for scheme in WIDE
    }


def test_number_mask_is_empty_for_every_input_type(tokenizers) -> None:
    tok = tokenizers[BYTE_LEVEL[0], "p10"]
    ids = tok(TEXTS[0], return_tensors="pt")["input_ids"]
    assert not tok.number_mask(ids).any() and tok.number_mask(ids).dtype == torch.bool
    assert tok.number_mask(ids[0].tolist()).dtype == np.bool_
