"""Train a small number tokenizer on a corpus, for models trained from scratch.

Numbers are replaced by the number token before training, so no vocabulary is spent on
digits; the result is a ``Number{GPT2,Bert,Roberta}Tokenizer`` like one loaded from a
pretrained folder.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import BertTokenizer, GPT2Tokenizer, RobertaTokenizer

from ..modeling import (
    BACKBONE_CLASSES,
    NumberBertTokenizer,
    NumberGPT2Tokenizer,
    NumberRobertaTokenizer,
    NumberTokenizerMixin,
    replace_numbers,
)

BACKBONES = tuple(BACKBONE_CLASSES)
_SPECIALS = {
    "gpt2": ["<|endoftext|>"],
    "roberta": ["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    "bert": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
}


def _without_numbers(texts: Iterable[str], num_token: str) -> Iterable[str]:
    for text in texts:
        yield replace_numbers(text, num_token)[0]


def train_number_tokenizer(
    texts: Iterable[str], backbone: str = "gpt2", vocab_size: int = 1000, num_token: str = "[NUM]"
) -> NumberTokenizerMixin:
    """Train a number tokenizer of the given backbone's kind on ``texts``.

    GPT-2 / RoBERTa get a byte-level BPE (every byte is in the vocabulary, so no text is
    unknown), BERT a lower-casing WordPiece. GPT-2's pad token is set to its eos token.

    Example:
        >>> tok = train_number_tokenizer(["x = 1.5, y = -2"] * 10, "gpt2", vocab_size=300)
        >>> tok("x = 3")["input_numbers"]
        [1.0, 1.0, 3.0]
    """
    if backbone not in BACKBONES:
        raise ValueError(f"backbone={backbone!r} is unknown; allowed: {', '.join(BACKBONES)}")
    number_tokens = [
        AddedToken(token, special=False, normalized=False)
        for token in ([num_token] if backbone == "bert" else [num_token, " " + num_token])
    ]
    corpus = _without_numbers(texts, num_token)
    if backbone == "bert":
        tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(
            vocab_size=vocab_size, special_tokens=_SPECIALS[backbone], show_progress=False
        )
    else:
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=_SPECIALS[backbone],
            show_progress=False,
        )
    tokenizer.add_tokens(number_tokens)  # kept whole while training, left out of the learned vocabulary
    tokenizer.train_from_iterator(corpus, trainer)
    model = json.loads(tokenizer.to_str())["model"]
    with tempfile.TemporaryDirectory() as folder:
        if backbone == "bert":
            BertTokenizer(vocab=model["vocab"]).save_pretrained(folder)
            return NumberBertTokenizer.from_pretrained(folder, num_token=num_token)
        merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
        plain, number = (
            (GPT2Tokenizer, NumberGPT2Tokenizer) if backbone == "gpt2" else (RobertaTokenizer, NumberRobertaTokenizer)
        )
        plain(vocab=model["vocab"], merges=merges).save_pretrained(folder)
        result = number.from_pretrained(folder, num_token=num_token)
    if result.pad_token is None:
        result.pad_token = result.eos_token
    return result
