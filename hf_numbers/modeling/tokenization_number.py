"""Number-aware tokenizers: one ``[NUM]`` token per number plus its value.

``NumberGPT2Tokenizer``, ``NumberBertTokenizer`` and ``NumberRobertaTokenizer`` subclass
transformers' Rust-backed tokenizers. Every number that :func:`find_numbers` finds becomes
one ``[NUM]`` token; its float64 value goes into ``input_numbers``, a list or tensor of the
same shape as ``input_ids`` that holds 1.0 everywhere else (padding included).

Byte-level BPE (GPT-2, RoBERTa) writes the space before a word into the word's token, so
these tokenizers have a second number token, ``" [NUM]"``, for a number that follows a
space: the space costs no extra token and decoding restores it. ``num_token_ids`` lists
every id that stands for a number; models find numbers with ``isin(input_ids, num_token_ids)``.

This module is part of the flat ``hf_numbers/modeling`` folder copied into checkpoints:
it imports nothing from ``hf_numbers`` outside that folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from transformers import AddedToken, BatchEncoding, BertTokenizer, GPT2Tokenizer, RobertaTokenizer

from .parsing import NEUTRAL_NUMBER, NumberSpan, format_number, replace_numbers

__all__ = ["NumberBertTokenizer", "NumberGPT2Tokenizer", "NumberRobertaTokenizer", "NumberTokenizerMixin"]


class _Sample:
    """The numbers of one input text and where their placeholders end in the rewritten text."""

    __slots__ = ("text", "ends", "numbers", "values", "_by_end")

    def __init__(self, text: str, ends: list[int], numbers: list[NumberSpan]):
        self.text = text
        self.ends = ends
        self.numbers = numbers
        self.values = [number.value for number in numbers]
        self._by_end: dict[int, float] | None = None

    def value_at(self, end: int) -> float:
        """Value of the number whose placeholder ends at ``end`` in the rewritten text."""
        if self._by_end is None:
            self._by_end = dict(zip(self.ends, self.values))
        return self._by_end[end]

    def original_offsets(self, offsets: np.ndarray, placeholder_length: int) -> np.ndarray:
        """Map character offsets in the rewritten text back to the original text."""
        if not self.ends:
            return offsets
        original_lengths = np.array([number.end - number.start for number in self.numbers])
        shift = np.concatenate([[0], np.cumsum(original_lengths - placeholder_length)])
        return offsets + shift[np.searchsorted(np.asarray(self.ends), offsets, side="right")]


class NumberTokenizerMixin:
    """Adds ``[NUM]`` handling to a transformers tokenizer class.

    Subclasses set ``spaced_num_token`` to True for byte-level BPE, where a second token
    ``" [NUM]"`` carries the space before a number.
    """

    spaced_num_token: bool = False

    def __init__(self, *args: Any, num_token: str = "[NUM]", **kwargs: Any):
        super().__init__(*args, **kwargs)
        if not num_token or num_token != num_token.strip():
            raise ValueError(f"num_token must be a non-empty string without surrounding spaces, got {num_token!r}")
        self.num_token = num_token
        self.init_kwargs["num_token"] = num_token
        variants = [num_token, " " + num_token] if self.spaced_num_token else [num_token]
        missing = [token for token in variants if token not in self.added_tokens_encoder]
        if missing:  # also when the vocabulary has the string as an ordinary (splittable) entry
            self.add_tokens([AddedToken(token, special=False, normalized=False) for token in missing])
        self._num_token_ids = [self.convert_tokens_to_ids(token) for token in variants]
        self._num_token_ids_array = np.asarray(self._num_token_ids)

    @property
    def num_token_id(self) -> int:
        """Id of the ``[NUM]`` token."""
        return self._num_token_ids[0]

    @property
    def num_token_ids(self) -> list[int]:
        """Every id that stands for a number (``[NUM]`` and, for byte-level BPE, ``" [NUM]"``)."""
        return list(self._num_token_ids)

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

    # ------------------------------------------------------------------ encoding
    def _rewrite(self, text: str) -> _Sample:
        if not isinstance(text, str):
            raise ValueError(f"number tokenizers take text (str), got {type(text).__name__}")
        if self.num_token in text:
            raise ValueError(
                f"the text contains the literal number token {self.num_token!r}; numbers must be written "
                f"as digits so that their values are known (text starts: {text[:60]!r})"
            )
        return _Sample(*replace_numbers(text, self.num_token))

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
        encoded = super()._encode_plus(
            [s.text for s in firsts],
            None if seconds is None else [s.text for s in seconds],
            return_tensors=None,
            return_offsets_mapping=return_offsets_mapping,
            return_overflowing_tokens=return_overflowing_tokens,
            **kwargs,
        )
        data = dict(encoded)
        rows = encoded.encodings
        samples = data.get("overflow_to_sample_mapping", range(len(rows)))
        numbers = [
            self._row_numbers(rows[r], data["input_ids"][r], firsts[s], None if seconds is None else seconds[s])
            for r, s in enumerate(samples)
        ]
        if return_offsets_mapping:
            data["offset_mapping"] = [
                self._original_offsets(rows[r], data["offset_mapping"][r], firsts[s], seconds and seconds[s])
                for r, s in enumerate(samples)
            ]
        data["input_numbers"] = numbers if return_tensors else [row.tolist() for row in numbers]
        if not batched and return_tensors is None and not return_overflowing_tokens:
            return BatchEncoding({key: value[0] for key, value in data.items()}, rows)
        return BatchEncoding(data, rows, tensor_type=return_tensors)

    def _row_numbers(self, encoding: Any, ids: list[int], first: _Sample, second: _Sample | None) -> np.ndarray:
        """float64 values of one row: the number's value at number tokens, 1.0 elsewhere."""
        row = np.full(len(ids), NEUTRAL_NUMBER, dtype=np.float64)
        positions = np.flatnonzero(self.number_mask(ids))
        if second is None and len(positions) == len(first.values):
            row[positions] = first.values
            return row
        samples = (first, second)  # truncated, overflowing or paired: locate each number by its offsets
        for position in positions.tolist():
            sample = samples[encoding.token_to_sequence(position)]
            row[position] = sample.value_at(encoding.token_to_chars(position)[1])
        return row

    def _original_offsets(
        self, encoding: Any, offsets: list[tuple[int, int]], first: _Sample, second: _Sample | None
    ) -> list[tuple[int, int]]:
        array = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
        sequence = np.array([-1 if s is None else s for s in encoding.sequence_ids])
        for index, sample in enumerate((first, second)):
            if sample is not None and sample.ends:
                rows = sequence == index
                array[rows] = sample.original_offsets(array[rows], len(self.num_token))
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
            padded["input_numbers"] = _to_lists(numbers)
        return padded

    # ------------------------------------------------------------------ decoding
    def decode(
        self,
        token_ids: Any,
        skip_special_tokens: bool = False,
        input_numbers: Any = None,
        **kwargs: Any,
    ) -> str | list[str]:
        """Decode ids to text, writing each number token's value from ``input_numbers``.

        ``input_numbers`` must have the shape of ``token_ids`` (one sequence or a batch).
        Without it, number tokens decode as ``[NUM]``.

        Example:
            >>> enc = tokenizer("x = -3.5, y=2")  # doctest: +SKIP
            >>> tokenizer.decode(enc["input_ids"], input_numbers=enc["input_numbers"])  # doctest: +SKIP
            'x = -3.5, y=2'
        """
        if input_numbers is None:
            return super().decode(token_ids, skip_special_tokens=skip_special_tokens, **kwargs)
        ids = _to_lists(token_ids)
        numbers = _to_lists(input_numbers)
        if isinstance(ids, int):
            ids, numbers = [ids], numbers if isinstance(numbers, list) else [numbers]
        if _shape(ids) != _shape(numbers):
            raise ValueError(
                f"input_numbers has shape {_shape(numbers)} but token_ids has shape {_shape(ids)}; they must match"
            )
        if ids and isinstance(ids[0], list):
            return [self._decode_row(i, n, skip_special_tokens, kwargs) for i, n in zip(ids, numbers)]
        return self._decode_row(ids, numbers, skip_special_tokens, kwargs)

    def batch_decode(
        self, sequences: Any, skip_special_tokens: bool = False, input_numbers: Any = None, **kwargs: Any
    ) -> list[str]:
        """Decode a batch; ``input_numbers`` (same shape as ``sequences``) gives the numbers' values.

        Example:
            >>> out = model.generate(**batch, return_dict_in_generate=True)  # doctest: +SKIP
            >>> tokenizer.batch_decode(out.sequences, input_numbers=out.numbers)  # doctest: +SKIP
        """
        result = self.decode(sequences, skip_special_tokens=skip_special_tokens, input_numbers=input_numbers, **kwargs)
        return [result] if isinstance(result, str) else result

    def _decode_row(self, ids: list[int], numbers: list[float], skip: bool, kwargs: dict[str, Any]) -> str:
        number_ids = set(self._num_token_ids)
        if skip:  # number tokens stay even where a folder registered them as special tokens
            special = set(self.all_special_ids) - number_ids
            kept = [(token, value) for token, value in zip(ids, numbers) if token not in special]
            ids, numbers = [token for token, _ in kept], [value for _, value in kept]
        values = [value for token, value in zip(ids, numbers) if token in number_ids]
        pieces = super().decode(ids, **kwargs).split(self.num_token)
        if len(pieces) != len(values) + 1:
            raise ValueError(
                f"the decoded text contains {len(pieces) - 1} occurrences of {self.num_token!r} but the ids "
                f"have {len(values)} number tokens; cannot place the values unambiguously"
            )
        out = [pieces[0]]
        for value, piece in zip(values, pieces[1:]):
            out.append(format_number(value))
            out.append(piece)
        return "".join(out)


def _to_lists(values: Any) -> Any:
    """Tensors and arrays to (nested) Python lists; lists of arrays too."""
    if hasattr(values, "tolist"):
        return values.tolist()
    if isinstance(values, (list, tuple)):
        return [_to_lists(v) for v in values]
    return values


def _shape(values: Any) -> tuple[int, ...]:
    if not isinstance(values, list):
        return ()
    if values and isinstance(values[0], list):
        lengths = {len(row) for row in values}
        return (len(values), lengths.pop()) if len(lengths) == 1 else (len(values), -1)
    return (len(values),)


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
