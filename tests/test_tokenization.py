"""Number tokenizers of every backbone: ids, values, padding, truncation, decoding, saving."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from model_helpers import TEXT_ENCODINGS, covering_pairs, last_line_without_hf_numbers
from transformers import AutoTokenizer

from hf_numbers import (
    BACKBONES,
    BYTE_LEVEL_BPE,
    METASPACE_BPE,
    NUMBER_ENCODINGS_REGISTRY,
    WORDPIECE,
    NumberBertTokenizer,
    find_numbers,
    format_number,
    get_encoding,
)

pytestmark = pytest.mark.smoke  # in the drift check's subset (scripts/check_latest.sh)

EXACT = [name for name, spec in BACKBONES.items() if spec.tokenizer_model in (BYTE_LEVEL_BPE, METASPACE_BPE)]
"""Byte-level BPE (GPT-2, RoBERTa, ModernBERT) and Llama's BPE: exact decoding (Llama drops a leading space, as
SentencePiece does)."""
SPACED = [name for name, spec in BACKBONES.items() if spec.tokenizer_class.spaced_num_token]
"""Tokenizers that write the space into the next word's token, and so have a space-prefixed number token."""
WORDPIECES = [name for name, spec in BACKBONES.items() if spec.tokenizer_model == WORDPIECE]
TEXTS = [
    "x = -3.5, y=2 and [1.42,-8.20]",
    '{"a": 1.53, "e": -1.33}',
    "5 - 3 costs 3.",
    "no numbers here",
]


@pytest.fixture(scope="module")
def tokenizers(plain_tokenizer_dirs: dict[str, Path]) -> dict[str, object]:
    loaded = {}
    for name, spec in BACKBONES.items():
        tok = spec.tokenizer_class.from_pretrained(plain_tokenizer_dirs[name])
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        loaded[name] = tok
    return loaded


def expected_values(text: str) -> list[float]:
    return [n.value for n in find_numbers(text)]


def numbers_at_num_tokens(tok, ids, numbers) -> list[float]:
    ids, numbers = np.asarray(ids), np.asarray(numbers)
    return numbers[np.isin(ids, tok.num_token_ids)].tolist()


@pytest.mark.parametrize("name", BACKBONES)
def test_plain_folder_gets_num_token(name: str, tokenizers, plain_tokenizer_dirs) -> None:
    tok = tokenizers[name]
    plain = BACKBONES[name].load_plain_tokenizer(plain_tokenizer_dirs[name])
    assert tok.num_token == "[NUM]"
    assert "[NUM]" not in plain.get_vocab()
    assert tok.convert_ids_to_tokens(tok.num_token_id) == "[NUM]"
    assert len(tok.num_token_ids) == (2 if name in SPACED else 1)
    assert len(tok) == len(plain) + len(tok.num_token_ids)


@pytest.mark.parametrize("name", BACKBONES)
@pytest.mark.parametrize("text", TEXTS)
def test_one_token_per_number_and_values(name: str, text: str, tokenizers) -> None:
    tok = tokenizers[name]
    enc = tok(text)
    ids, numbers = enc["input_ids"], enc["input_numbers"]
    assert len(ids) == len(numbers)
    assert sum(i in tok.num_token_ids for i in ids) == len(find_numbers(text))
    assert numbers_at_num_tokens(tok, ids, numbers) == expected_values(text)
    others = [v for i, v in zip(ids, numbers) if i not in tok.num_token_ids]
    assert others == [1.0] * len(others)


@pytest.mark.parametrize("name", SPACED)
def test_space_before_number_costs_no_token(name: str, tokenizers) -> None:
    tok = tokenizers[name]
    for word in ["hello", "x =", "the value"]:
        base = tok(word, add_special_tokens=False)["input_ids"]
        for number in ["5", "-2.75", "1e-3"]:
            spaced = tok(f"{word} {number}", add_special_tokens=False)["input_ids"]
            assert spaced == base + [tok.num_token_ids[1]]
            glued = tok(f"{word}={number}", add_special_tokens=False)["input_ids"]
            assert glued == tok(f"{word}=", add_special_tokens=False)["input_ids"] + [tok.num_token_id]
            text = f"{word} {number}"
            enc = tok(text)
            assert tok.decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True) == (
                f"{word} {format_number(float(number))}"
            )


@pytest.mark.parametrize("name", BACKBONES)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("return_tensors", ["pt", "np", None])
def test_padding_keeps_ids_and_numbers_aligned(name: str, side: str, return_tensors, tokenizers) -> None:
    tok = tokenizers[name]
    enc = tok(TEXTS, padding=True, padding_side=side, return_tensors=return_tensors)
    ids, numbers = np.asarray(enc["input_ids"]), np.asarray(enc["input_numbers"])
    assert ids.shape == numbers.shape
    if return_tensors == "pt":
        assert enc["input_numbers"].dtype == torch.float64
    if return_tensors == "np":
        assert enc["input_numbers"].dtype == np.float64
    mask = np.asarray(enc["attention_mask"])
    assert (numbers[mask == 0] == 1.0).all()
    pad_column = 0 if side == "left" else -1
    assert mask[:, pad_column].min() == 0
    for row, text in enumerate(TEXTS):
        assert numbers_at_num_tokens(tok, ids[row], numbers[row]) == expected_values(text)


@pytest.mark.parametrize("name", BACKBONES)
@pytest.mark.parametrize("side", ["left", "right"])
def test_truncation_keeps_the_right_values(name: str, side: str, tokenizers) -> None:
    tok = tokenizers[name]
    text = " ".join(f"v{i} {i}.5" for i in range(20))
    full = tok(text)
    tok.truncation_side = side
    try:
        enc = tok(text, truncation=True, max_length=15)
    finally:
        tok.truncation_side = "right"
    assert len(enc["input_ids"]) == 15
    kept = numbers_at_num_tokens(tok, enc["input_ids"], enc["input_numbers"])
    values = expected_values(text)
    assert 0 < len(kept) < len(values)
    assert kept == (values[: len(kept)] if side == "right" else values[-len(kept) :])
    assert numbers_at_num_tokens(tok, full["input_ids"], full["input_numbers"]) == values


@pytest.mark.parametrize("name", BACKBONES)
def test_pairs_and_overflow(name: str, tokenizers) -> None:
    tok = tokenizers[name]
    first, second = "a 1 b 2 c 3 d 4", "e 5.5 f -6"
    enc = tok(first, second, truncation="only_first", max_length=12)
    kept = numbers_at_num_tokens(tok, enc["input_ids"], enc["input_numbers"])
    assert kept[-2:] == [5.5, -6.0] and kept[:-2] == expected_values(first)[: len(kept) - 2]
    windows = tok(first, truncation=True, max_length=6, stride=2, return_overflowing_tokens=True)
    assert len(windows["input_ids"]) > 1
    for ids, numbers in zip(windows["input_ids"], windows["input_numbers"]):
        kept = numbers_at_num_tokens(tok, ids, numbers)
        assert all(v in expected_values(first) for v in kept)


@pytest.mark.parametrize("name", BACKBONES)
def test_offsets_refer_to_the_original_text(name: str, tokenizers) -> None:
    tok = tokenizers[name]
    text = "x = -3.5, y=2 and 10000"
    enc = tok(text, return_offsets_mapping=True)
    pieces = [text[a:b] for (a, b), i in zip(enc["offset_mapping"], enc["input_ids"]) if i in tok.num_token_ids]
    assert [p.strip() for p in pieces] == ["-3.5", "2", "10000"]


@pytest.mark.parametrize("name", BACKBONES)
def test_a_batch_that_nothing_cuts_skips_character_offsets_and_keeps_its_values(name: str, tokenizers) -> None:
    """Without pairs, truncation, overflow or ``return_offsets_mapping`` every number is a token of its row, so the
    Rust tokenizer does not track character offsets (they would describe the text with ``[NUM]`` written in);
    asked for, the offsets are the original text's, and ids, masks and values are the same either way."""
    tok = tokenizers[name]
    fast = tok(TEXTS, padding=True, return_tensors="np")
    assert all(offset == (0, 0) for encoding in fast.encodings for offset in encoding.offsets)
    tracked = tok(TEXTS, padding=True, return_tensors="np", return_offsets_mapping=True)
    assert any(offset != (0, 0) for encoding in tracked.encodings for offset in encoding.offsets)
    assert set(tracked) == {*fast, "offset_mapping"}
    for key in fast:
        assert np.array_equal(fast[key], tracked[key]) and fast[key].dtype == tracked[key].dtype, key
    for text, ids, numbers in zip(TEXTS, fast["input_ids"], fast["input_numbers"]):
        assert numbers_at_num_tokens(tok, ids, numbers) == expected_values(text)


@pytest.mark.parametrize("name", BACKBONES)
def test_decode_writes_values_back(name: str, tokenizers) -> None:
    tok = tokenizers[name]
    enc = tok(TEXTS, padding=True, return_tensors="pt")
    decoded = tok.batch_decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
    for text, out in zip(TEXTS, decoded):
        assert [n.value for n in find_numbers(out)] == expected_values(text)
        if name in EXACT:
            assert out == expected_decoding(name, text)
    single = tok.decode(enc["input_ids"][0], input_numbers=enc["input_numbers"][0])
    assert "[NUM]" not in single and format_number(-3.5) in single
    assert "[NUM]" in tok.decode(enc["input_ids"][0])  # without values, the token shows
    with pytest.raises(ValueError, match="shape"):
        tok.decode(enc["input_ids"], input_numbers=enc["input_numbers"][:, :-1])
    with pytest.raises(ValueError, match="shape"):
        tok.batch_decode(enc["input_ids"], input_numbers=enc["input_numbers"][:1])


def _rebuild(text: str) -> list[str]:
    out, cursor = [], 0
    for start, end, value in find_numbers(text):
        out += [text[cursor:start], format_number(value)]
        cursor = end
    return [*out, text[cursor:]]


def expected_decoding(name: str, text: str) -> str:
    """The exact decoding of ``text``: numbers rewritten by format_number; Llama also drops one leading space."""
    rebuilt = "".join(_rebuild(text))
    if BACKBONES[name].tokenizer_model == METASPACE_BPE:
        return rebuilt.removeprefix(" ")
    return rebuilt


@pytest.mark.parametrize("name", BACKBONES)
def test_bad_input_is_a_clear_error(name: str, tokenizers) -> None:
    tok = tokenizers[name]
    with pytest.raises(ValueError, match="literal number token"):
        tok("the [NUM] token")
    with pytest.raises(ValueError, match="is_split_into_words"):
        tok(["x", "1"], is_split_into_words=True)
    with pytest.raises(ValueError, match="must align"):
        tok.pad([{"input_ids": [1, 2, 3], "input_numbers": [1.0, 2.0]}, {"input_ids": [1], "input_numbers": [1.0]}])
    ids = tok.convert_tokens_to_ids(["[NUM]"])
    with pytest.raises(ValueError, match="non-finite"):
        tok.decode(ids, input_numbers=[float("nan")])


@pytest.mark.parametrize("name", BACKBONES)
def test_pad_pads_numbers(name: str, tokenizers) -> None:
    tok = tokenizers[name]
    features = [tok(text) for text in TEXTS]
    batch = tok.pad(features, return_tensors="pt")
    assert batch["input_numbers"].dtype == torch.float64
    assert batch["input_numbers"].shape == batch["input_ids"].shape
    direct = tok(TEXTS, padding=True, return_tensors="pt")
    assert torch.equal(batch["input_ids"], direct["input_ids"])
    assert torch.equal(batch["input_numbers"], direct["input_numbers"])
    assert isinstance(tok.pad(features)["input_numbers"][0], list)


@pytest.mark.parametrize("name", BACKBONES)
def test_datasets_map_batched(name: str, tokenizers) -> None:
    datasets = pytest.importorskip("datasets")
    tok = tokenizers[name]
    data = datasets.Dataset.from_dict({"text": TEXTS * 3})
    mapped = data.map(lambda batch: tok(batch["text"], truncation=True, max_length=32), batched=True, batch_size=4)
    for text, ids, numbers in zip(mapped["text"], mapped["input_ids"], mapped["input_numbers"]):
        assert numbers_at_num_tokens(tok, ids, numbers) == expected_values(text)


@pytest.mark.parametrize("name", BACKBONES)
def test_save_load_and_auto_tokenizer(name: str, tokenizers, tmp_path: Path) -> None:
    tok = tokenizers[name]
    tok.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert config["num_token"] == "[NUM]"
    module = type(tok).__module__.rsplit(".", 1)[-1]  # tokenization_number, or the backbone's own module
    assert config["auto_map"]["AutoTokenizer"][0] == f"{module}.{type(tok).__name__}"
    code_files = (module, "tokenization_number", "tokenization_decoding", "parsing")
    assert all((tmp_path / f"{file}.py").exists() for file in code_files)
    for loaded in (type(tok).from_pretrained(tmp_path), AutoTokenizer.from_pretrained(tmp_path)):
        assert type(loaded) is type(tok)
        assert loaded.num_token_ids == tok.num_token_ids
        assert loaded(TEXTS)["input_ids"] == tok(TEXTS)["input_ids"]
        assert loaded(TEXTS)["input_numbers"] == tok(TEXTS)["input_numbers"]


def test_remote_code_load_without_hf_numbers(tokenizers, plain_tokenizer_dirs, tmp_path: Path) -> None:
    """The Hub rule: saved tokenizers load with trust_remote_code where hf_numbers cannot be imported
    (with [NUM] tokens, and with a text scheme: see tests/test_text_tokenization.py)."""
    saved = dict(tokenizers)
    for name, scheme in covering_pairs(BACKBONES, TEXT_ENCODINGS):  # every backbone and every text baseline
        saved[f"{name}-{scheme}"] = BACKBONES[name].tokenizer_class.from_pretrained(
            plain_tokenizer_dirs[name], number_scheme=scheme, scheme_min_exponent=-3, scheme_max_exponent=1
        )
    expected = {}
    for name, tok in saved.items():
        tok.save_pretrained(tmp_path / name)
        enc = tok(TEXTS)
        decoded = tok.batch_decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
        expected[name] = [type(tok).__name__, enc["input_ids"], enc["input_numbers"], decoded]
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.modules["hf_numbers"] = None  # importing hf_numbers now fails
        from transformers import AutoTokenizer
        out = {{}}
        for name in {list(saved)!r}:
            tok = AutoTokenizer.from_pretrained({str(tmp_path)!r} + "/" + name, trust_remote_code=True)
            assert "hf_numbers" not in type(tok).__module__
            enc = tok({TEXTS!r})
            decoded = tok.batch_decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
            out[name] = [type(tok).__name__, enc["input_ids"], enc["input_numbers"], decoded]
        print(json.dumps(out))
        """
    )
    assert json.loads(last_line_without_hf_numbers(script, cwd=tmp_path)) == expected


@pytest.mark.parametrize("name", BACKBONES)
def test_special_tokens_are_the_plain_tokenizers(name: str, tokenizers, plain_tokenizer_dirs) -> None:
    """BOS (Llama), [CLS] ... [SEP] (BERT, ModernBERT), <s> ... </s> (RoBERTa) or none (GPT-2): as the plain one."""
    tok = tokenizers[name]
    plain = BACKBONES[name].load_plain_tokenizer(plain_tokenizer_dirs[name])
    for text in TEXTS:
        ids, plain_ids = tok(text)["input_ids"], plain(text)["input_ids"]
        special = [i for i in ids if i in tok.all_special_ids]
        assert special == [i for i in plain_ids if i in plain.all_special_ids]
        assert (ids[0] in tok.all_special_ids) == (plain_ids[0] in plain.all_special_ids)
    if BACKBONES[name].tokenizer_options.get("add_bos_token"):
        assert tok(TEXTS[0])["input_ids"][0] == tok.bos_token_id


def test_modernbert_folder_as_on_the_hub(tmp_path: Path) -> None:
    """ModernBERT's Hub folders hold a GPT-NeoX-style tokenizer.json (NFC, byte-level BPE, [CLS] $A [SEP]) that
    transformers loads as a generic TokenizersBackend: the number tokenizer loads it and keeps its special tokens."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import TokenizersBackend

    backend = Tokenizer(models.BPE())
    backend.normalizer = normalizers.NFC()
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    backend.train_from_iterator(TEXTS * 5, trainer)
    backend.add_special_tokens(["[UNK]", "[CLS]", "[SEP]", "[PAD]", AddedToken("[MASK]", lstrip=True, special=True)])
    cls, sep = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    TokenizersBackend(tokenizer_object=backend, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                      pad_token="[PAD]", mask_token="[MASK]").save_pretrained(tmp_path)
    plain = AutoTokenizer.from_pretrained(tmp_path)
    tok = BACKBONES["modernbert"].tokenizer_class.from_pretrained(tmp_path)
    text, pair = "x = -3.5 and [MASK] y", "z 7"
    enc = tok(text, pair)
    assert plain(text, pair)["input_ids"][:3] == enc["input_ids"][:3] == [cls, *plain("x =", add_special_tokens=False)[
        "input_ids"]]
    assert [i for i in enc["input_ids"] if i in (cls, sep)] == [cls, sep, sep]
    assert numbers_at_num_tokens(tok, enc["input_ids"], enc["input_numbers"]) == [-3.5, 7.0]
    assert tok.mask_token_id == plain.mask_token_id and tok.pad_token_id == plain.pad_token_id
    decoded = tok.decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
    assert decoded == "x = -3.5 and y" + "z 7"  # [MASK] takes the space before it, as in ModernBERT


def test_real_bert_vocabulary(real_bert_dir: Path) -> None:
    tok = NumberBertTokenizer.from_pretrained(real_bert_dir)
    assert len(tok) == 30522 + 1
    text = "The temperature was 21.5 degrees at 10:30, and -3 degrees at night; COVID-19 peaked in 2020."
    enc = tok(text)
    assert numbers_at_num_tokens(tok, enc["input_ids"], enc["input_numbers"]) == expected_values(text)
    decoded = tok.decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
    assert decoded == (
        "the temperature was 21.5 degrees at 10 : 30, and -3 degrees at night ; covid - 19 peaked in 2020."
    )
    assert [n.value for n in find_numbers(decoded)] == expected_values(text)


# ------------------------------------------------------------------ properties
ALPHABET = st.sampled_from(list("0123456789.-+eE ,[]()=%:xyzab{}\"\n")) | st.characters(
    codec="ascii", categories=["L", "N", "P", "S", "Zs"]
)
RAW_TEXTS = st.text(ALPHABET, max_size=50).filter(lambda t: "[NUM]" not in t)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.parametrize("name", EXACT)
@given(text=RAW_TEXTS)
def test_exact_round_trip_property(name: str, text: str, tokenizers) -> None:
    """GPT-2 / RoBERTa / ModernBERT / Llama: decoding gives exactly the text with numbers rewritten by
    format_number (Llama: less one leading space, as plain Llama).

    Texts holding a special-token string such as ``<s>`` are left out: as in transformers,
    that string becomes the special token, which ``skip_special_tokens`` drops.
    """
    tok = tokenizers[name]
    assume(not any(special in text for special in tok.all_special_tokens if special not in ("[NUM]", " [NUM]")))
    enc = tok(text)
    decoded = tok.decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
    assert decoded == expected_decoding(name, text)
    assert [n.value for n in find_numbers(decoded)] == expected_values(text)


WORDS = st.text(st.sampled_from("abcdefghxyz"), min_size=1, max_size=6)
NUMBERS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12).map(format_number)
SEPARATORS = st.sampled_from([" ", ", ", " = ", ": ", " ; "])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.parametrize("name", WORDPIECES)
@given(parts=st.lists(st.tuples(WORDS | NUMBERS, SEPARATORS), max_size=10))
def test_wordpiece_round_trip_property(name: str, parts, tokenizers) -> None:
    """BERT: same values, and the same text up to BERT's own normalisation (case and spacing)."""
    tok = tokenizers[name]
    text = "".join(a + b for a, b in parts)
    enc = tok(text)
    decoded = tok.decode(enc["input_ids"], input_numbers=enc["input_numbers"], skip_special_tokens=True)
    assert [n.value for n in find_numbers(decoded)] == expected_values(text)
    assert decoded.replace(" ", "") == "".join(_rebuild(text)).lower().replace(" ", "")


@pytest.mark.parametrize("name", BACKBONES)
def test_number_mask_for_lists_arrays_and_tensors(name: str, tokenizers) -> None:
    tok = tokenizers[name]
    enc = tok(TEXTS[0], return_tensors="pt")
    expected = [i in tok.num_token_ids for i in enc["input_ids"][0].tolist()]
    assert tok.number_mask(enc["input_ids"][0]).tolist() == expected  # tensor in, tensor out
    assert tok.number_mask(enc["input_ids"][0].tolist()).tolist() == expected
    assert tok.number_mask(enc["input_ids"][0].numpy()).dtype == bool


@pytest.mark.parametrize("encoding", NUMBER_ENCODINGS_REGISTRY)
def test_number_encoding_given_to_a_tokenizer_is_refused_with_the_options_it_needs(
    encoding: str, plain_tokenizer_dirs: dict[str, Path]
) -> None:
    """``number_encoding=`` is the model's option: a tokenizer kept it silently and built the default ``[NUM]``
    tokenizer, which the model then refused (a value-aware digits model asks for ``number_scheme='text'``)."""
    name = next(iter(BACKBONES))
    with pytest.raises(ValueError) as error:
        BACKBONES[name].tokenizer_class.from_pretrained(plain_tokenizer_dirs[name], number_encoding=encoding)
    options = get_encoding(encoding).tokenizer_options({})
    assert f"number_encoding={encoding!r} is the model's option, not the tokenizer's" in str(error.value)
    assert all(f"{key}={value!r}" in str(error.value) for key, value in options.items())



def test_a_saved_tokenizer_that_kept_number_encoding_still_loads(plain_tokenizer_dirs: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    """Before the refusal above a tokenizer kept ``number_encoding`` and saved it: such a folder loads (the key is
    ignored with a warning, as it always was ignored), and only a caller's keyword is refused."""
    name = next(iter(BACKBONES))
    BACKBONES[name].tokenizer_class.from_pretrained(plain_tokenizer_dirs[name]).save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({**config, "number_encoding": "xval"}))
    assert AutoTokenizer.from_pretrained(tmp_path).num_token_ids
