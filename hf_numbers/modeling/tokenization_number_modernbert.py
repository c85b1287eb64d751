"""Number-aware ModernBERT tokenizer: one ``[NUM]`` token per number plus its value.

ModernBERT's checkpoints store a GPT-NeoX-style byte-level BPE (spaces written as ``Ġ`` into
the next word's token, NFC normalisation) with BERT's special tokens, and a
``[CLS] ... [SEP]`` template; transformers loads them as a generic ``TokenizersBackend``.
:class:`NumberModernBertTokenizer` builds on ``GPTNeoXTokenizer`` with those special tokens
and that template, so a plain ModernBERT folder loads into it and a new vocabulary can be
trained for it. As for GPT-2, a number after a space becomes the one token ``" [NUM]"``.
"""

from __future__ import annotations

from typing import Any

from tokenizers import processors
from transformers import GPTNeoXTokenizer

from .tokenization_number import NumberTokenizerMixin

__all__ = ["MODERNBERT_SPECIAL_TOKENS", "NumberModernBertTokenizer"]

MODERNBERT_SPECIAL_TOKENS = {
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "mask_token": "[MASK]",
    "bos_token": "[CLS]",
    "eos_token": "[SEP]",
    "add_bos_token": True,
    "add_eos_token": True,
}
"""ModernBERT's special tokens (its config's ``bos_token_id`` / ``eos_token_id`` are those of ``[CLS]`` / ``[SEP]``),
and that they enclose every sequence (what a plain ``GPTNeoXTokenizer`` needs to do so)."""


class NumberModernBertTokenizer(NumberTokenizerMixin, GPTNeoXTokenizer):
    """ModernBERT's GPT-NeoX byte-level BPE with ``[NUM]`` and ``" [NUM]"`` number tokens.

    Special tokens default to :data:`MODERNBERT_SPECIAL_TOKENS`; sequences are
    ``[CLS] a [SEP]`` and pairs ``[CLS] a [SEP] b [SEP]``, as in ModernBERT's ``tokenizer.json``.

    Example:
        >>> tok = NumberModernBertTokenizer.from_pretrained("path/to/modernbert")  # doctest: +SKIP
        >>> tok.convert_ids_to_tokens(tok("x = 5")["input_ids"])  # doctest: +SKIP
        ['[CLS]', 'x', 'Ġ=', ' [NUM]', '[SEP]']
    """

    spaced_num_token = True
    model_input_names = [*GPTNeoXTokenizer.model_input_names, "input_numbers"]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **{**MODERNBERT_SPECIAL_TOKENS, **kwargs})

    def update_post_processor(self) -> None:
        """ModernBERT's template: ``[CLS] a [SEP]``, and ``[CLS] a [SEP] b [SEP]`` for pairs."""
        cls, sep = str(self.cls_token), str(self.sep_token)
        self._tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{cls}:0 $A:0 {sep}:0",
            pair=f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1",
            special_tokens=[(cls, self.cls_token_id), (sep, self.sep_token_id)],
        )
