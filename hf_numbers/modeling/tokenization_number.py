"""Number-aware tokenizers: one ``[NUM]`` token per number plus its value.

:class:`NumberTokenizerMixin` on transformers' Rust-backed tokenizers (``NumberGPT2Tokenizer``,
``NumberBertTokenizer``, ``NumberRobertaTokenizer`` here; Llama and ModernBERT in their own
modules) turns every number :func:`find_numbers` finds into a number token and puts its float64
value in ``input_numbers`` (1.0 elsewhere, padding included), so that the model reads values
instead of digit pieces. With ``number_scheme`` it writes a text baseline's tokens instead.
docs/tokenizers.md and docs/text-baselines.md tell the rest (the space-prefixed ``" [NUM]"``).

Example:
    >>> tok = NumberGPT2Tokenizer.from_pretrained("path/to/gpt2")  # doctest: +SKIP
    >>> tok("x = -3.5")["input_numbers"]  # doctest: +SKIP
    [1.0, 1.0, -3.5]
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import Any

import numpy as np
from tokenizers import Tokenizer
from transformers import AddedToken, BatchEncoding, BertTokenizer, GPT2Tokenizer, RobertaTokenizer, TokenizersBackend
from transformers.tokenization_utils_base import PaddingStrategy, TruncationStrategy

from .legacy_checkpoints import unflag_special
from .parsing import DIGIT_ORDERS, NEUTRAL_NUMBER, NUMBER_OUTPUTS, split_numbers
from .text_schemes import NUMBER_SCHEMES, SCHEME_TOKEN_RE, NumberScheme
from .tokenization_decoding import NumberDecodingMixin
from .tokenization_helpers import RewrittenText, pad_rows, to_lists

logger = logging.getLogger(__name__)

__all__ = [
    "NumberBertTokenizer",
    "NumberGPT2Tokenizer",
    "NumberRobertaTokenizer",
    "NumberTokenizer",
    "NumberTokenizerMixin",
    "keeps_spaces",
]


class NumberTokenizerMixin(NumberDecodingMixin):
    """Adds number handling to a transformers tokenizer class: ``[NUM]`` tokens, or a text scheme.

    Subclasses set ``spaced_num_token`` to True for byte-level BPE, where a second token
    ``" [NUM]"`` carries the space before a number (and, with a scheme, a space-prefixed copy
    of every token that starts a number does).

    The number tokens are ordinary (added, never split) tokens, not special ones, before and after a
    save: transformers' collators may mask them and ``decode(skip_special_tokens=True)`` keeps them.

    Args:
        num_token: the number token (``number_scheme=None``; default ``"[NUM]"``).
        number_scheme: None (``[NUM]`` plus values), ``"text"`` (numbers stay ordinary text) or a
            text scheme, ``"p10"``, ``"p1000"``, ``"b1999"``, ``"fp15"`` (see ``text_schemes.py``).
        scheme_digits, scheme_min_exponent, scheme_max_exponent: the scheme's significant digits
            and exponent range (a value outside it is a ``ValueError`` when tokenized).
        digit_order: with ``number_scheme="text"``, ``"as_written"`` (default) or ``"units_first"``: every
            number's digits go to the model units first (``1250`` as ``0521``, :func:`units_first`) and
            ``decode`` turns them back, so texts in and out read as usual.
        number_output: with ``[NUM]`` tokens, ``"num_token"`` (default: the model writes ``[NUM]`` and its value)
            or ``"digits"``: numbers in, digits out, the prompt's numbers read as ``[NUM]`` and the completion's
            written as the backbone's own digit tokens (:meth:`encode_prompts_and_completions`).

    Example:
        >>> tok = NumberGPT2Tokenizer.from_pretrained("path/to/gpt2", number_scheme="p10")  # doctest: +SKIP
        >>> tok.convert_ids_to_tokens(tok("x = -60.2")["input_ids"])  # doctest: +SKIP
        ['x', 'Ġ=', ' <|-|>', '<|d6|>', '<|d0|>', '<|d2|>', '<|-E1|>']
        >>> tok.decode(tok("x = -60.2")["input_ids"])  # doctest: +SKIP
        'x = -60.2'
    """

    spaced_num_token: bool = False

    @classmethod
    def from_pretrained(cls, *args: Any, **kwargs: Any) -> Any:
        """transformers' ``from_pretrained``; ``number_encoding=`` (the model's option, which a tokenizer would keep
        and ignore) is a ``ValueError`` naming the tokenizer options that encoding needs."""
        if "number_encoding" in kwargs:
            raise ValueError(_encoding_is_the_models(kwargs["number_encoding"]))
        return super().from_pretrained(*args, **kwargs)

    def __init__(
        self,
        *args: Any,
        num_token: str | None = None,
        number_scheme: str | None = None,
        scheme_digits: int = 3,
        scheme_min_exponent: int = -8,
        scheme_max_exponent: int = 7,
        digit_order: str = "as_written",
        number_output: str = "num_token",
        **kwargs: Any,
    ):
        if "number_encoding" in kwargs:  # from_pretrained refuses it; a tokenizer saved before did keep it
            logger.warning("number_encoding=%r ignored: it is the model's option, not the tokenizer's",
                           kwargs.pop("number_encoding"))
        num_token = _take_saved_num_token(kwargs, num_token)
        super().__init__(*args, **kwargs)
        backend, special = self.backend_tokenizer, set(self.all_special_tokens)  # without tokenizer.json: only these
        if backend.get_vocab_size(False) <= len(special) and set(backend.get_vocab(False)) <= special:
            raise ValueError(
                f"the tokenizer has no vocabulary: {kwargs.get('name_or_path') or 'its folder'} lacks tokenizer.json "
                "(or the vocabulary files); save the tokenizer there again (tokenizer.save_pretrained)"
            )
        _refuse_bad_options(num_token, number_scheme, digit_order, number_output)
        self.num_token = num_token
        self.number_scheme = number_scheme
        self.digit_order = digit_order
        self.number_output = number_output
        if number_output != "num_token":
            self.init_kwargs["number_output"] = number_output
        if number_scheme == "text":
            self.init_kwargs["digit_order"] = digit_order
        self.scheme: NumberScheme | None = None
        self.init_kwargs["number_scheme"] = number_scheme
        self._num_token_ids: list[int] = []
        self._scheme_ids: dict[int, str] = {}  # id -> the scheme token it stands for (without a leading space)
        if number_scheme is None:
            self.init_kwargs["num_token"] = num_token  # (saved only here: transformers adds saved *_token strings)
            variants = [num_token, " " + num_token] if self.spaced_num_token else [num_token]
            self._num_token_ids = self._whole_token_ids(variants)
            rebuilt = unflag_special(self._tokenizer, self._num_token_ids)  # a folder saved before 0.2
            self._tokenizer = rebuilt or self._tokenizer
        else:
            self.init_kwargs.pop("num_token", None)
        if number_scheme in NUMBER_SCHEMES:
            self.scheme = NUMBER_SCHEMES[number_scheme](scheme_digits, scheme_min_exponent, scheme_max_exponent)
            self.init_kwargs.update(
                scheme_digits=scheme_digits,
                scheme_min_exponent=scheme_min_exponent,
                scheme_max_exponent=scheme_max_exponent,
            )
            tokens = self.scheme.vocabulary()
            spaced = [" " + token for token in self.scheme.start_tokens()] if self.spaced_num_token else []
            ids = self._whole_token_ids(tokens + spaced)
            self._scheme_ids = dict(zip(ids, tokens + [token[1:] for token in spaced]))
        self._num_token_ids_array = np.asarray(self._num_token_ids, dtype=np.int64)

    def _whole_token_ids(self, tokens: list[str]) -> list[int]:
        """Ids of ``tokens``, added as tokens that are never split or normalised where missing."""
        added = self.added_tokens_encoder  # a property that builds a dict: read it once
        missing = [token for token in tokens if token not in added]
        if missing:  # also when the vocabulary has the string as an ordinary (splittable) entry
            self.add_tokens([AddedToken(token, special=False, normalized=False) for token in missing])
        return self.convert_tokens_to_ids(tokens)

    @property
    def num_token_id(self) -> int | None:
        """Id of the ``[NUM]`` token (None for a text scheme, which has no number token)."""
        return self._num_token_ids[0] if self._num_token_ids else None

    @property
    def num_token_ids(self) -> list[int]:
        """Every id that stands for a number (``[NUM]`` and, for byte-level BPE, ``" [NUM]"``); [] for text schemes."""
        return list(self._num_token_ids)

    @property
    def numbers_as_text(self) -> bool:
        """True where numbers stay the backbone's own sub-word text (``number_scheme="text"``): a number scheme
        without a :class:`NumberScheme` to rewrite them and without a number token."""
        return self.number_scheme is not None and self.scheme is None

    @property
    def added_number_token_ids(self) -> list[int]:
        """Every id the tokenizer adds for numbers: its number tokens, or its text scheme's tokens ([] for ``text``).

        A pretrained model never trained these rows (``from_pretrained_backbone`` adds them; LoRA trains them whole).
        """
        return sorted(set(self._num_token_ids) | set(self._scheme_ids))

    def number_mask(self, input_ids: Any) -> Any:
        """Bool mask of the number tokens: a tensor for a tensor, a numpy array otherwise.

        Example:
            >>> tok.number_mask(tok("a 1.5 b")["input_ids"])  # doctest: +SKIP
            array([False,  True, False])
        """
        if type(input_ids).__module__.startswith("torch"):
            import torch  # tokenizers work without torch; only tensors need it

            return torch.isin(input_ids, torch.tensor(self._num_token_ids, device=input_ids.device))
        return np.isin(np.asarray(input_ids), self._num_token_ids_array)

    @contextmanager
    def _numbers_as_digits(self) -> Iterator[None]:
        """Within it, numbers stay the backbone's own digit tokens (a ``[NUM]`` tokenizer reads them as text)."""
        scheme = self.number_scheme
        self.number_scheme = "text"
        try:
            yield
        finally:
            self.number_scheme = scheme

    def encode_prompts_and_completions(
        self, prompts: Sequence[str], completions: Sequence[str], max_length: int | None = None
    ) -> dict[str, list[list[Any]]]:
        """Each prompt's tokens (numbers as number tokens with their values) followed by its completion's, the
        completion's numbers written as the backbone's own digit tokens: what ``number_output="digits"`` trains
        on, and what its model generates after the prompt. Rows keep their prompt and are cut to ``max_length``;
        ``prompt_length`` is the count of prompt tokens (the completion starts there).

        Example:
            >>> rows = tok.encode_prompts_and_completions(["12 + 3 = "], ["15"])  # doctest: +SKIP
            >>> tok.convert_ids_to_tokens(rows["input_ids"][0]), rows["prompt_length"]  # doctest: +SKIP
            (['[NUM]', 'Ġ+', 'Ġ[NUM]', 'Ġ=', 'Ġ', '1', '5'], 5)
        """
        if len(prompts) != len(completions):
            raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
        head = self(list(prompts))
        with self._numbers_as_digits():
            tail = self(list(completions), add_special_tokens=False)
        rows: dict[str, list[list[Any]]] = {"input_ids": [], "attention_mask": [], "input_numbers": [],
                                            "prompt_length": []}  # fmt: skip
        for index, (ids, numbers, more) in enumerate(zip(head["input_ids"], head["input_numbers"], tail["input_ids"])):
            if max_length is not None and len(ids) >= max_length:
                raise ValueError(
                    f"example {index}: its prompt is {len(ids)} tokens, max_length {max_length} leaves no room for "
                    "its completion; raise max_length"
                )
            row = [*ids, *more][:max_length]
            rows["input_ids"].append(row)
            rows["attention_mask"].append([1] * len(row))
            rows["input_numbers"].append([*numbers, *[NEUTRAL_NUMBER] * len(more)][: len(row)])
            rows["prompt_length"].append(len(ids))
        return rows

    # ------------------------------------------------------------------ encoding
    def _rewrite(self, text: str) -> RewrittenText:
        if not isinstance(text, str):
            raise ValueError(f"number tokenizers take text (str), got {type(text).__name__}")
        if self.numbers_as_text:
            if self.digit_order == "as_written":
                return RewrittenText.unchanged(text)
            rewritten = RewrittenText.units_first(text)
            overflowing = rewritten.overflowing()
            if overflowing:
                raise ValueError(
                    f"the number {overflowing[0]!r} written units first, {overflowing[1]!r}, overflows float64 and "
                    "could not be read back; digit_order='units_first' takes numbers whose reversed mantissa stays "
                    "below 1.8e308"
                )
            return rewritten
        if self.scheme is not None:
            found = SCHEME_TOKEN_RE.search(text)
            if found:
                raise ValueError(
                    f"the text contains {found.group()!r}, which is written like a number-scheme token; numbers "
                    f"must be written as digits (text starts: {text[:60]!r})"
                )
            pieces = split_numbers(text)
            return RewrittenText(pieces, ["".join(self.scheme.encode(value)) for value in pieces.values])
        if self.num_token in text:
            raise ValueError(
                f"the text contains the literal number token {self.num_token!r}; numbers must be written "
                f"as digits so that their values are known (text starts: {text[:60]!r})"
            )
        return RewrittenText(split_numbers(text), self.num_token)

    def _encode_plus(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        is_split_into_words: bool = False,
        return_tensors: str | None = None,
        return_offsets_mapping: bool = False,
        return_overflowing_tokens: bool = False,
        **kwargs: Any,
    ) -> BatchEncoding:
        if is_split_into_words:
            raise ValueError(
                "is_split_into_words=True is not supported by number tokenizers: pass the untokenized text so "
                "that numbers and their values can be found"
            )
        batched = isinstance(text, (list, tuple))
        firsts = [self._rewrite(t) for t in (text if batched else [text])]
        seconds = None
        if text_pair is not None and (batched or text_pair):
            pairs = text_pair if batched else [text_pair]
            if isinstance(pairs, str) or len(pairs) != len(firsts):
                raise ValueError("text_pair must be a list of the same length as text when text is a batch")
            seconds = [self._rewrite(t) for t in pairs]
        asked = return_offsets_mapping or return_overflowing_tokens
        if firsts and seconds is None and not asked and self._one_pass(kwargs):  # else offsets find the values
            data, rows = self._encode_whole([s.text for s in firsts], **kwargs)
        else:
            encoded = super()._encode_plus(
                [s.text for s in firsts],
                None if seconds is None else [s.text for s in seconds],
                return_tensors=None,
                return_offsets_mapping=return_offsets_mapping,
                return_overflowing_tokens=return_overflowing_tokens,
                **kwargs,
            )
            data, rows = dict(encoded), encoded.encodings
        samples = data.get("overflow_to_sample_mapping", range(len(rows)))
        ids = data["input_ids"]
        if not isinstance(ids, np.ndarray) and ids and len(set(map(len, ids))) == 1:  # rectangular (padded): one
            ids = np.array(ids, dtype=np.int64)  # array, also the ids' tensor
        row_seconds = None if seconds is None else [seconds[s] for s in samples]
        numbers = self._batch_numbers(ids, rows, [firsts[s] for s in samples], row_seconds)
        if return_offsets_mapping:
            data["offset_mapping"] = [
                self._original_offsets(rows[r], data["offset_mapping"][r], firsts[s], seconds and seconds[s])
                for r, s in enumerate(samples)
            ]
        if return_tensors:
            data["input_numbers"] = numbers
            data["input_ids"] = ids
        else:
            data = {key: value.tolist() if isinstance(value, np.ndarray) else value for key, value in data.items()}
            data["input_numbers"] = numbers.tolist() if isinstance(numbers, np.ndarray) else to_lists(numbers)
        if not batched and return_tensors is None and not return_overflowing_tokens:
            return BatchEncoding({key: value[0] for key, value in data.items()}, rows)
        return BatchEncoding(data, rows, tensor_type=return_tensors)

    @staticmethod
    def _one_pass(kwargs: dict[str, Any]) -> bool:
        """Whether a call without pairs, offsets or overflow takes :meth:`_encode_whole`: no truncation may cut a
        text's tokens, and no output needs transformers' own path (special-tokens mask, lengths, chat control
        tokens). The other calls find each number's value from its token's offsets, which Rust then tracks."""
        own = ("return_special_tokens_mask", "return_length", "sanitize_control_tokens")
        truncation = kwargs.get("truncation_strategy", TruncationStrategy.DO_NOT_TRUNCATE)
        return truncation == TruncationStrategy.DO_NOT_TRUNCATE and not any(kwargs.get(key) for key in own)

    def _encode_whole(
        self,
        texts: list[str],
        add_special_tokens: bool = True,
        padding_strategy: PaddingStrategy = PaddingStrategy.DO_NOT_PAD,
        truncation_strategy: TruncationStrategy = TruncationStrategy.DO_NOT_TRUNCATE,
        max_length: int | None = None,
        stride: int = 0,
        pad_to_multiple_of: int | None = None,
        padding_side: str | None = None,
        return_token_type_ids: bool | None = None,
        return_attention_mask: bool | None = None,
        verbose: bool = True,
        split_special_tokens: bool | None = None,
        **kwargs: Any,
    ) -> tuple[dict[str, Any], list[Any]]:
        """Encode texts that are never cut in one pass, without character offsets (see :meth:`_one_pass`).

        Every number of such a text is one number token of its row, so the values go in order and need no
        offsets: the Rust tokenizer's ``encode_batch_fast`` skips tracking them. The rows come out of Rust
        unpadded, once, and are padded here into one array (the attention mask follows from their lengths;
        a batch that stays ragged keeps lists). The keys are transformers' (``input_ids``, and
        ``token_type_ids`` and ``attention_mask`` where its ``_convert_encoding`` would write them).
        """
        self.set_truncation_and_padding(
            padding_strategy=PaddingStrategy.DO_NOT_PAD,  # padded below
            truncation_strategy=truncation_strategy,
            max_length=max_length,
            stride=stride,
            pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side,
        )
        split = self.split_special_tokens if split_special_tokens is None else split_special_tokens
        if self._tokenizer.encode_special_tokens != split:
            self._tokenizer.encode_special_tokens = split
        encodings = self._tokenizer.encode_batch_fast(texts, add_special_tokens=add_special_tokens)
        if return_token_type_ids is None:
            return_token_type_ids = "token_type_ids" in self.model_input_names
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self.model_input_names
        rows = [encoding.ids for encoding in encodings]
        lengths = np.fromiter(map(len, rows), np.int64, len(rows))
        widths = lengths  # each row's padded length: the Rust tokenizer's, which leaves longer rows as they are
        if padding_strategy != PaddingStrategy.DO_NOT_PAD:
            width = max_length if padding_strategy == PaddingStrategy.MAX_LENGTH else int(lengths.max())
            if pad_to_multiple_of and width % pad_to_multiple_of:
                width += pad_to_multiple_of - width % pad_to_multiple_of
            widths = np.maximum(lengths, width)
        side = padding_side or self.padding_side
        data: dict[str, Any] = {"input_ids": pad_rows(rows, lengths, widths, side, self.pad_token_id)}
        if return_token_type_ids:
            types = [encoding.type_ids for encoding in encodings]
            data["token_type_ids"] = pad_rows(types, lengths, widths, side, self.pad_token_type_id)
        if return_attention_mask:
            data["attention_mask"] = pad_rows(None, lengths, widths, side, 0)
        for ids in data["input_ids"]:
            self._eventual_warn_about_too_long_sequence(ids, max_length, verbose)
        return data, encodings

    def _batch_numbers(
        self,
        ids: np.ndarray | list[list[int]],
        rows: list[Any],
        firsts: list[RewrittenText],
        seconds: list[RewrittenText] | None,
    ) -> np.ndarray | list[np.ndarray]:
        """float64 values of a batch: the number's value at number tokens, 1.0 elsewhere, in one pass.

        ``ids`` is one array (rows of one length; the values come back as one array) or a list of rows.
        ``firsts[r]`` (and ``seconds[r]`` for pairs) is the text of row ``r``. A row of one text holding as
        many number tokens as the text has numbers takes the values in order; the others (truncated,
        overflowing or paired) find each number from its token's offsets.
        """
        if isinstance(ids, np.ndarray):
            flat, lengths = ids.ravel(), np.full(len(ids), ids.shape[1])
        else:
            lengths = np.fromiter(map(len, ids), np.int64, len(ids))
            flat = np.fromiter(chain.from_iterable(ids), np.int64, lengths.sum())
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        numbers = np.full(len(flat), NEUTRAL_NUMBER, dtype=np.float64)
        if self._num_token_ids:  # a text scheme: numbers are tokens, not values
            mask = np.isin(flat, self._num_token_ids_array)
            counts = np.diff(np.concatenate([[0], np.cumsum(mask)])[bounds])
            whole = counts == [len(first.values) for first in firsts]
            if seconds is not None:
                whole[:] = False
            values = chain.from_iterable(first.values for first, ok in zip(firsts, whole.tolist()) if ok)
            numbers[mask & np.repeat(whole, lengths)] = np.fromiter(values, np.float64, counts[whole].sum())
            for r in np.flatnonzero(~whole).tolist():
                samples = (firsts[r], None if seconds is None else seconds[r])
                for position in np.flatnonzero(mask[bounds[r] : bounds[r + 1]]).tolist():
                    sample = samples[rows[r].token_to_sequence(position)]
                    numbers[bounds[r] + position] = sample.value_at(rows[r].token_to_chars(position)[1])
        if isinstance(ids, np.ndarray):
            return numbers.reshape(ids.shape)
        return np.split(numbers, bounds[1:-1]) if len(ids) else []

    def _original_offsets(
        self, encoding: Any, offsets: list[tuple[int, int]], first: RewrittenText, second: RewrittenText | None
    ) -> list[tuple[int, int]]:
        array = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
        sequence = np.array([-1 if s is None else s for s in encoding.sequence_ids])
        for index, sample in enumerate((first, second)):
            if sample is not None and sample.values:
                rows = sequence == index
                array[rows] = sample.original_offsets(array[rows])
        return [tuple(pair) for pair in array.tolist()]

    # ------------------------------------------------------------------ padding
    def _pad(self, encoded_inputs: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        numbers = encoded_inputs.get("input_numbers")
        ids = encoded_inputs[self.model_input_names[0]]
        if numbers is not None and len(numbers) != len(ids):
            raise ValueError(
                f"input_numbers has {len(numbers)} values but input_ids has {len(ids)} tokens; they must align"
            )
        length = len(ids)
        padding_side = kwargs.get("padding_side") or self.padding_side
        outputs = super()._pad(encoded_inputs, *args, **kwargs)
        if numbers is not None:
            extra = np.full(len(outputs[self.model_input_names[0]]) - length, NEUTRAL_NUMBER)
            numbers = np.asarray(numbers, dtype=np.float64)
            parts = (numbers, extra) if padding_side == "right" else (extra, numbers)
            outputs["input_numbers"] = np.concatenate(parts)
        return outputs

    def pad(self, *args: Any, **kwargs: Any) -> BatchEncoding:
        """``PreTrainedTokenizerBase.pad`` that also pads ``input_numbers`` (with 1.0, kept float64).

        Example:
            >>> batch = [tokenizer("x = 1.5"), tokenizer("y = -2 and 3")]  # doctest: +SKIP
            >>> tokenizer.pad(batch, return_tensors="pt")["input_numbers"].dtype  # doctest: +SKIP
            torch.float64
        """
        padded = super().pad(*args, **kwargs)
        numbers = padded.get("input_numbers")
        if isinstance(numbers, list):  # return_tensors=None: plain lists, as for the other keys
            padded["input_numbers"] = to_lists(numbers)
        return padded


class NumberGPT2Tokenizer(NumberTokenizerMixin, GPT2Tokenizer):
    """GPT-2 byte-level BPE tokenizer with ``[NUM]`` and ``" [NUM]"`` number tokens.

    Example:
        >>> tok = NumberGPT2Tokenizer.from_pretrained("path/to/gpt2")  # doctest: +SKIP
        >>> enc = tok("x = -3.5, y=2", return_tensors="pt")  # doctest: +SKIP
        >>> enc["input_numbers"]  # doctest: +SKIP
        tensor([[ 1.0000,  1.0000, -3.5000,  1.0000,  1.0000,  1.0000,  2.0000]], dtype=torch.float64)
    """

    spaced_num_token = True
    model_input_names = [*GPT2Tokenizer.model_input_names, "input_numbers"]


class NumberRobertaTokenizer(NumberTokenizerMixin, RobertaTokenizer):
    """RoBERTa byte-level BPE tokenizer with ``[NUM]`` and ``" [NUM]"`` number tokens.

    Example:
        >>> tok = NumberRobertaTokenizer.from_pretrained("path/to/roberta")  # doctest: +SKIP
        >>> tok.decode(tok("a 1.5")["input_ids"], input_numbers=tok("a 1.5")["input_numbers"])  # doctest: +SKIP
        '<s>a 1.5</s>'
    """

    spaced_num_token = True
    model_input_names = [*RobertaTokenizer.model_input_names, "input_numbers"]


class NumberBertTokenizer(NumberTokenizerMixin, BertTokenizer):
    """BERT WordPiece tokenizer with a ``[NUM]`` number token.

    BERT's pre-tokenizer splits on spaces, so one number token suffices; like any BERT
    tokenizer it lower-cases (if configured) and decodes with its own spacing.

    Example:
        >>> tok = NumberBertTokenizer.from_pretrained("path/to/bert")  # doctest: +SKIP
        >>> tok("x = -3.5")["input_numbers"]  # doctest: +SKIP
        [1.0, 1.0, 1.0, -3.5, 1.0]
    """

    model_input_names = [*BertTokenizer.model_input_names, "input_numbers"]


def keeps_spaces(backend: Tokenizer) -> bool:
    """Whether the Rust tokenizer ``backend`` keeps the spaces between words as text (byte-level BPE's ``Ġ``,
    SentencePiece's ``▁``), rather than dropping them between pieces (WordPiece): then a number after a space
    gets the space-prefixed number token ``" [NUM]"``.

    Example:
        >>> keeps_spaces(Tokenizer.from_pretrained("gpt2"))  # doctest: +SKIP
        True
    """
    text = "a 7"
    if backend.normalizer is not None:
        text = backend.normalizer.normalize_str(text)
    if backend.pre_tokenizer is None:
        return True
    pieces = backend.pre_tokenizer.pre_tokenize_str(text)
    return sum(len(piece) for piece, _ in pieces) >= len(text)


class NumberTokenizer(NumberTokenizerMixin, TokenizersBackend):
    """Any Rust-backed (``tokenizer.json``) tokenizer with number tokens: the tokenizer of a number model that
    holds any language model (``NumberForCausalLM``, ``NumberForMaskedLM``).

    Its vocabulary, pre-tokenizer, special tokens and template are the folder's own; the number tokens are added
    to them. Whether a space-prefixed ``" [NUM]"`` is added is read from the tokenizer (:func:`keeps_spaces`).

    Example:
        >>> tok = NumberTokenizer.from_pretrained("path/to/qwen2")  # doctest: +SKIP
        >>> tok("x = -3.5")["input_numbers"]  # doctest: +SKIP
        [1.0, 1.0, -3.5]
    """

    model_input_names = [*TokenizersBackend.model_input_names, "input_numbers"]

    @property
    def spaced_num_token(self) -> bool:  # type: ignore[override]
        return keeps_spaces(self.backend_tokenizer)


def _take_saved_num_token(kwargs: dict[str, Any], num_token: str | None) -> str:
    """The number token: ``num_token``, else the one a saved tokenizer holds, else ``[NUM]``.

    transformers 5 reads every saved ``*_token`` string (our ``num_token``) back as a named special token
    (``model_specific_special_tokens`` in ``kwargs``); it is taken back out as the number token, an ordinary token.
    """
    specific = kwargs.pop("model_specific_special_tokens", None)
    if isinstance(specific, dict):
        specific = dict(specific)
        saved = specific.pop("num_token", None)
        num_token = str(saved) if num_token is None and saved is not None else num_token
        if specific:
            kwargs["model_specific_special_tokens"] = specific
    elif specific is not None:
        kwargs["model_specific_special_tokens"] = specific  # transformers' own error for a non-dict
    return "[NUM]" if num_token is None else num_token


def _encoding_is_the_models(name: Any) -> str:
    """The message for ``number_encoding=`` given to a tokenizer: the tokenizer options that encoding needs."""
    from .encoding_registry import get_encoding  # only on this error: the registry imports the model classes

    try:
        options = get_encoding(name).tokenizer_options({})
    except (KeyError, ValueError) as error:
        return f"number_encoding is the model's option, not the tokenizer's (and {error})"
    given = ", ".join(f"{key}={value!r}" for key, value in options.items())
    needs = f"takes {given}" if given else "takes no option (one [NUM] token per number)"
    return (f"number_encoding={name!r} is the model's option, not the tokenizer's; the tokenizer that encoding "
            f"needs {needs}: hf_numbers.get_encoding({name!r}).tokenizer_options({{}})")


def _refuse_bad_options(num_token: Any, number_scheme: Any, digit_order: Any, number_output: Any) -> None:
    """A ``ValueError`` naming the first unknown or incompatible tokenizer option and what is allowed."""
    if not isinstance(num_token, str) or not num_token or num_token != num_token.strip():
        raise ValueError(f"num_token must be a non-empty string without surrounding spaces, got {num_token!r}")
    if number_scheme not in (None, "text", *NUMBER_SCHEMES):
        raise ValueError(
            f"number_scheme={number_scheme!r} is unknown; allowed: None ([NUM] tokens), "
            f"{', '.join(('text', *NUMBER_SCHEMES))}"
        )
    if digit_order not in DIGIT_ORDERS or digit_order != "as_written" and number_scheme != "text":
        raise ValueError(
            f"digit_order={digit_order!r} with number_scheme={number_scheme!r}; allowed: "
            f"{', '.join(DIGIT_ORDERS)}, and 'units_first' only with number_scheme='text'"
        )
    if number_output not in NUMBER_OUTPUTS or number_output != "num_token" and number_scheme is not None:
        raise ValueError(
            f"number_output={number_output!r} with number_scheme={number_scheme!r}; allowed: "
            f"{', '.join(NUMBER_OUTPUTS)}, and 'digits' only with [NUM] tokens (number_scheme=None)"
        )
