"""Number-aware Llama tokenizer: one ``[NUM]`` token per number plus its value.

transformers' ``LlamaTokenizer`` is a SentencePiece-style BPE: a space becomes ``▁`` at the
start of the next word's token (no ``Ġ`` byte-level alphabet), characters outside the
vocabulary fall back to their UTF-8 byte tokens ``<0x..>``, and sequences start with the BOS
token ``<s>``. As for GPT-2, a number after a space becomes the one token ``" [NUM]"``.
"""

from __future__ import annotations

from transformers import LlamaTokenizer

from .tokenization_number import NumberTokenizerMixin

__all__ = ["NumberLlamaTokenizer"]


class NumberLlamaTokenizer(NumberTokenizerMixin, LlamaTokenizer):
    """Llama tokenizer with ``[NUM]`` and ``" [NUM]"`` number tokens.

    It adds the BOS token where the folder's tokenizer does, and like Llama's own tokenizer its
    decoder drops one leading space of the text (SentencePiece's prefix space); everything else
    decodes exactly. It pads on the left, as ``LlamaTokenizer`` does.

    Example:
        >>> tok = NumberLlamaTokenizer.from_pretrained("path/to/llama")  # doctest: +SKIP
        >>> tok.convert_ids_to_tokens(tok("x = -3.5")["input_ids"])  # doctest: +SKIP
        ['<s>', '▁x', '▁=', ' [NUM]']
    """

    spaced_num_token = True
    model_input_names = [*LlamaTokenizer.model_input_names, "input_numbers"]
