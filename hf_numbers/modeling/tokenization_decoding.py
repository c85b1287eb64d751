"""Decoding of the number tokenizers: number tokens and scheme runs written back as numbers.

:class:`NumberDecodingMixin` gives :class:`NumberTokenizerMixin` (``tokenization_number.py``) its
``decode`` and ``batch_decode``: each number token's value comes from ``input_numbers`` and is
written with :func:`format_number`; a text-scheme tokenizer writes every complete run of scheme
tokens as its number (malformed runs stay as their token strings). It reads the number tokens
and scheme that :class:`NumberTokenizerMixin` sets up (``num_token``, ``number_scheme``,
``scheme``, ``digit_order``, ``_num_token_ids``, ``_scheme_ids``); numbers that a ``text`` tokenizer gave
the model units first are turned back.
"""

from __future__ import annotations

from typing import Any

from .parsing import format_number
from .tokenization_helpers import RewrittenText, nested_shape, to_lists

__all__ = ["NumberDecodingMixin"]


class NumberDecodingMixin:
    """``decode`` / ``batch_decode`` with numbers; the tokenizer class after it in the MRO decodes the text."""

    def decode(
        self,
        token_ids: Any,
        skip_special_tokens: bool = False,
        input_numbers: Any = None,
        **kwargs: Any,
    ) -> str | list[str]:
        """Decode ids to text, writing each number token's value from ``input_numbers``.

        ``input_numbers`` must have the shape of ``token_ids`` (one sequence or a batch).
        Without it, number tokens decode as ``[NUM]``. A text-scheme tokenizer needs no values:
        every complete run of scheme tokens is written as its number with ``format_number``,
        and malformed runs stay as their token strings (``input_numbers``, all 1.0, is ignored).

        Example:
            >>> enc = tokenizer("x = -3.5, y=2")  # doctest: +SKIP
            >>> tokenizer.decode(enc["input_ids"], input_numbers=enc["input_numbers"])  # doctest: +SKIP
            'x = -3.5, y=2'
        """
        if input_numbers is None and self.scheme is None and self.digit_order == "as_written":
            return super().decode(token_ids, skip_special_tokens=skip_special_tokens, **kwargs)
        ids = to_lists(token_ids)
        numbers = ids if input_numbers is None else to_lists(input_numbers)  # a scheme decodes without values
        if isinstance(ids, int):
            ids, numbers = [ids], numbers if isinstance(numbers, list) else [numbers]
        if nested_shape(ids) != nested_shape(numbers):
            raise ValueError(
                f"input_numbers has shape {nested_shape(numbers)} but token_ids has shape {nested_shape(ids)}; "
                "they must match"
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
        if self.scheme is not None:
            return self._decode_scheme_row(ids, skip, kwargs)
        if self.numbers_as_text:
            text = super().decode(ids, skip_special_tokens=skip, **kwargs)
            if self.digit_order == "as_written":
                return text
            return RewrittenText.units_first(text).text  # digits written units first, turned back
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

    def _decode_scheme_row(self, ids: list[int], skip: bool, kwargs: dict[str, Any]) -> str:
        """One row of a scheme tokenizer: each complete run of scheme tokens becomes its number's text."""
        if skip:
            special = set(self.all_special_ids)
            ids = [token for token in ids if token not in special]
        numbers = dict(self.scheme.parse([self._scheme_ids.get(token, "") for token in ids]))
        tokens, index = [], 0
        while index < len(ids):
            token = self._tokenizer.id_to_token(ids[index])  # None for an id beyond the vocabulary
            if index in numbers:  # a space-prefixed first token keeps its space
                tokens.append(" " * token.startswith(" ") + format_number(numbers[index]))
                index += self.scheme.tokens_per_number
            else:
                tokens += [] if token is None else [token]
                index += 1
        text = self.convert_tokens_to_string(tokens)
        clean_up = kwargs.get("clean_up_tokenization_spaces")
        clean_up = self.clean_up_tokenization_spaces if clean_up is None else clean_up
        if clean_up and type(self.backend_tokenizer.model).__name__ != "BPE":  # as transformers' decode
            text = self.clean_up_tokenization(text)
        return text
