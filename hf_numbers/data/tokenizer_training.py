"""Train a small tokenizer on a corpus, for models trained from scratch: the backbone's number tokenizer
(:func:`train_number_tokenizer`) or its plain transformers tokenizer (:func:`train_plain_tokenizer`).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, trainers

from ..modeling import BYTE_LEVEL_BPE, METASPACE_BPE, WORDPIECE, NumberTokenizerMixin, get_backbone, replace_numbers
from ..modeling.text_schemes import NUMBER_SCHEMES


def _without_numbers(texts: Iterable[str], num_token: str) -> Iterable[str]:
    for text in texts:
        yield replace_numbers(text, num_token)[0]


def _byte_level_bpe(vocab_size: int, special_tokens: Sequence[str]) -> tuple[Tokenizer, trainers.Trainer]:
    """GPT-2 / RoBERTa: byte-level BPE, every byte in the vocabulary, so no text is unknown."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=list(special_tokens),
        show_progress=False,
    )
    return tokenizer, trainer


def _metaspace_bpe(vocab_size: int, special_tokens: Sequence[str]) -> tuple[Tokenizer, trainers.Trainer]:
    """Llama: BPE on ``▁``-marked words (SentencePiece style) with byte fallback.

    The 256 byte tokens ``<0x00>`` ... ``<0xFF>`` follow the special tokens (and count towards
    ``vocab_size``), so a character never seen in training falls back to its UTF-8 bytes and no
    text is unknown. Merges never cross a word start, as in SentencePiece.
    """
    tokenizer = Tokenizer(models.BPE(byte_fallback=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    byte_tokens = [f"<0x{byte:02X}>" for byte in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[*special_tokens, *byte_tokens], show_progress=False
    )
    return tokenizer, trainer


_WORD_START = "\u2581"  # marks a word's first piece while the WordPiece vocabulary is learned


def _wordpiece(vocab_size: int, special_tokens: Sequence[str]) -> tuple[Tokenizer, trainers.Trainer]:
    """BERT: lower-casing WordPiece, its pieces learned by a BPE on words marked at their start.

    The ``tokenizers`` WordPiece trainer numbers its ``##`` pieces in hash-map order, so two trainings
    on the same texts give different ids and, where counts tie, different pieces (and a model trained
    from scratch on them different results). Plain BPE is reproducible, so the pieces are learned by
    a BPE on words that start with ``▁`` and :func:`_wordpiece_vocab` turns them into WordPiece's.
    """
    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.BertPreTokenizer(), pre_tokenizers.Metaspace(_WORD_START, prepend_scheme="always", split=False)]
    )
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens), show_progress=False)
    return tokenizer, trainer


def _pieces_between(texts: Iterable[str], keep_whole: Sequence[str]) -> Iterable[str]:
    """Every text cut at the ``keep_whole`` strings (longest first), which are left out."""
    if not keep_whole:
        yield from texts
        return
    pattern = re.compile("|".join(re.escape(token) for token in sorted(keep_whole, key=len, reverse=True)))
    for text in texts:
        yield from pattern.split(text)


def _wordpiece_vocab(bpe_vocab: dict[str, int], vocab_size: int, special_tokens: Sequence[str]) -> dict[str, int]:
    """WordPiece's vocabulary from the marked BPE's: ``▁piece`` starts a word (``piece``), any other
    piece continues one (``##piece``).

    Every character gets both forms, so a word of seen characters is never ``[UNK]``; then the merged
    pieces in the order BPE learned them, up to ``vocab_size`` (the characters are kept whatever it is,
    as the WordPiece trainer keeps its alphabet). The special tokens come first, in their order.
    """
    ordered = [token for token, _ in sorted(bpe_vocab.items(), key=lambda item: item[1]) if token not in special_tokens]
    chars = sorted({char for token in ordered for char in token if char != _WORD_START})
    pieces = dict.fromkeys([*special_tokens, *chars, *(f"##{char}" for char in chars)])  # ordered, no repeats
    for token in ordered:
        if len(pieces) >= vocab_size:
            break
        if len(token.lstrip(_WORD_START)) > 1:  # single characters are in already
            pieces.setdefault(token[1:] if token.startswith(_WORD_START) else f"##{token}")
    return {piece: index for index, piece in enumerate(pieces)}


_TOKENIZER_MODELS: dict[str, Callable[[int, Sequence[str]], tuple[Tokenizer, trainers.Trainer]]] = {
    BYTE_LEVEL_BPE: _byte_level_bpe,
    METASPACE_BPE: _metaspace_bpe,
    WORDPIECE: _wordpiece,
}
"""How to train each ``BackboneSpec.tokenizer_model``: a ``tokenizers`` pipeline and its trainer."""


def train_plain_tokenizer(
    texts: Iterable[str], backbone: str = "gpt2", vocab_size: int = 1000, keep_whole: Sequence[str] = ()
) -> Any:
    """Train the backbone's plain transformers tokenizer (``spec.plain_tokenizer_class``) on ``texts``.

    ``keep_whole`` strings are never split while training (BPE vocabularies still learn a few of their
    pieces, such as ``[NU``, which keeps earlier vocabularies reproducible).

    Example:
        >>> tok = train_plain_tokenizer(["x = 1.5, y = -2"] * 10, "roberta", vocab_size=300)
        >>> type(tok).__name__, tok.mask_token
        ('RobertaTokenizer', '<mask>')
    """
    spec = get_backbone(backbone)
    tokenizer, trainer = _TOKENIZER_MODELS[spec.tokenizer_model](vocab_size, spec.special_tokens)
    if spec.tokenizer_model == WORDPIECE:
        tokenizer.train_from_iterator(_pieces_between(texts, keep_whole), trainer)
        vocab = _wordpiece_vocab(json.loads(tokenizer.to_str())["model"]["vocab"], vocab_size, spec.special_tokens)
        return spec.plain_tokenizer_class(vocab=vocab, **spec.tokenizer_options)
    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in keep_whole])
    tokenizer.train_from_iterator(texts, trainer)
    model = json.loads(tokenizer.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return spec.plain_tokenizer_class(vocab=model["vocab"], merges=merges, **spec.tokenizer_options)


def train_number_tokenizer(
    texts: Iterable[str],
    backbone: str = "gpt2",
    vocab_size: int = 1000,
    num_token: str = "[NUM]",
    number_scheme: str | None = None,
    **scheme_options: Any,
) -> NumberTokenizerMixin:
    """Train a number tokenizer of the given backbone's kind on ``texts``.

    Numbers are replaced by the number token first, so no vocabulary is spent on digits; the
    backbone's spec says which tokenizer model is trained. A tokenizer without a pad token (GPT-2,
    Llama) pads with its eos token. ``number_scheme`` and ``scheme_options`` (``scheme_digits``, ``digit_order``,
    ...) go to the tokenizer; a scheme's tokens come on top of the ``vocab_size`` learned ones.

    Example:
        >>> tok = train_number_tokenizer(["x = 1.5, y = -2"] * 10, "gpt2", vocab_size=300)
        >>> tok("x = 3")["input_numbers"]
        [1.0, 1.0, 3.0]
        >>> tok = train_number_tokenizer(["x = 1.5, y = -2"] * 10, "gpt2", vocab_size=300, number_scheme="b1999")
        >>> tok.convert_ids_to_tokens(tok("x = 3")["input_ids"])
        ['x', 'Ġ=', ' <|+d300|>', '<|-E2|>']
    """
    spec = get_backbone(backbone)
    if number_scheme is not None and number_scheme not in NUMBER_SCHEMES:  # text: the backbone's own sub-words
        # (an unknown scheme gets the tokenizer's error, below, either way)
        plain = train_plain_tokenizer(texts, backbone, vocab_size)
        options: dict[str, Any] = {"number_scheme": number_scheme}
    else:
        number_tokens = [num_token, " " + num_token][: spec.num_token_count]
        plain = train_plain_tokenizer(
            _without_numbers(texts, num_token), backbone, vocab_size, keep_whole=number_tokens
        )
        options = {"num_token": num_token} if number_scheme is None else {"number_scheme": number_scheme}
    with tempfile.TemporaryDirectory() as folder:
        plain.save_pretrained(folder)
        result = spec.tokenizer_class.from_pretrained(folder, **options, **scheme_options)
    if result.pad_token is None:
        result.pad_token = result.eos_token
    return result
