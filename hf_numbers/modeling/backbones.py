"""The backbone table: everything the rest of hf_numbers knows about GPT-2, BERT, RoBERTa, Llama and ModernBERT.

One :class:`BackboneSpec` row per backbone names its number config, model and tokenizer
classes and holds the facts other code would otherwise compare names for: causal or masked
LM, how to train a new vocabulary (special tokens), how to size a new model, the tiny sizes
of the tests and the position-id offset. Training, data, evaluation, the CLI, model cards,
benchmarks and tests read :data:`BACKBONES` (through :func:`get_backbone`); no code outside this module compares
backbone names. The five rows are held by composition like any other model type (``composed_backbones.py``: a
spec made on demand); they keep a row for the model types their checkpoints were saved with and for the
vocabularies hf_numbers trains for them. Adding a backbone: nothing (docs/design.md, "Adding a backbone").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from transformers.models.auto.configuration_auto import CONFIG_MAPPING

from .configuration_number_families import (
    NumberBertConfig,
    NumberGPT2Config,
    NumberLlamaConfig,
    NumberModernBertConfig,
    NumberRobertaConfig,
)
from .modeling_number import NumberBertForMaskedLM, NumberGPT2ForCausalLM, NumberRobertaForMaskedLM
from .modeling_number_llama import NumberLlamaForCausalLM
from .modeling_number_modernbert import NumberModernBertForMaskedLM
from .tokenization_number import NumberBertTokenizer, NumberGPT2Tokenizer, NumberRobertaTokenizer
from .tokenization_number_llama import NumberLlamaTokenizer
from .tokenization_number_modernbert import MODERNBERT_SPECIAL_TOKENS, NumberModernBertTokenizer

__all__ = [
    "BACKBONES",
    "BYTE_LEVEL_BPE",
    "METASPACE_BPE",
    "WORDPIECE",
    "BackboneSpec",
    "SizeFields",
    "get_backbone",
]

BYTE_LEVEL_BPE = "byte-level-bpe"
"""Tokenizer model of GPT-2 / RoBERTa / ModernBERT: byte-level BPE (no unknown text; a space-prefixed number token)."""
METASPACE_BPE = "metaspace-bpe"
"""Tokenizer model of Llama: SentencePiece-style BPE on ``▁``-marked words with byte fallback (a space-prefixed
number token)."""
WORDPIECE = "wordpiece"
"""Tokenizer model of BERT: lower-casing WordPiece."""


@dataclass(frozen=True)
class SizeFields:
    """The names a backbone's config gives to the sizes of a new model.

    ``ffn`` is None where the config derives the feed-forward width itself (GPT-2: 4 x width);
    otherwise it is ``ffn_ratio`` x the width, rounded (gated MLPs use less than 4: Llama's
    SwiGLU 8/3, which gives GPT-2's parameter count, ModernBERT-base's GeGLU 1.5). ``kv_heads``
    names the key/value head count of grouped-query attention (Llama); a new model gets as many
    as attention heads.
    """

    hidden: str
    layers: str
    heads: str
    positions: str
    ffn: str | None = None
    ffn_ratio: float = 4.0
    kv_heads: str | None = None


def _transformers_base(cls: type) -> type:
    """The transformers class ``cls`` extends (``NumberGPT2Config`` -> ``GPT2Config``)."""
    return next(base for base in cls.__mro__[1:] if base.__module__.startswith("transformers.models."))


@dataclass(frozen=True)
class BackboneSpec:
    """One row of the backbone table (see the module docstring).

    Attributes:
        name: the backbone's name (``--backbone``).
        display_name: its name in prose (model cards).
        config_class, model_class, tokenizer_class: the number-aware classes.
        tokenizer_model: how a new vocabulary is trained (:data:`BYTE_LEVEL_BPE`, :data:`METASPACE_BPE`
            or :data:`WORDPIECE`).
        special_tokens: the special tokens of a new vocabulary, in id order.
        tokenizer_options: keyword arguments of the plain tokenizer class, for a new vocabulary and
            :meth:`load_plain_tokenizer` (Llama: add the BOS token; ModernBERT: ``[CLS] ... [SEP]``).
        size_fields: the config's names for the sizes of a new model (:meth:`new_config`).
        position_offset: positions a new model needs beyond the longest input
            (RoBERTa: 2, its positions start after the padding index).
        dropout_fields: the config's dropout probabilities.
        tiny_sizes: config fields of the tests' tiny models (hidden 32, 2 layers).

    Example:
        >>> spec = BACKBONES["roberta"]
        >>> spec.causal, spec.auto_class_name, spec.plain_model_class.__name__
        (False, 'AutoModelForMaskedLM', 'RobertaForMaskedLM')
    """

    name: str
    display_name: str
    config_class: type
    model_class: type
    tokenizer_class: type
    tokenizer_model: str
    special_tokens: tuple[str, ...]
    size_fields: SizeFields
    dropout_fields: tuple[str, ...]
    tiny_sizes: Mapping[str, Any]
    position_offset: int = 0
    tokenizer_options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def causal(self) -> bool:
        """True for a causal LM (generation), False for a masked LM (fill-mask); the model class decides."""
        return bool(self.model_class.causal)

    @property
    def auto_class_name(self) -> str:
        """The transformers Auto class of the model's task."""
        return "AutoModelForCausalLM" if self.causal else "AutoModelForMaskedLM"

    @property
    def pipeline_tag(self) -> str:
        """The Hub pipeline tag of a trained model."""
        return "text-generation" if self.causal else "fill-mask"

    @property
    def num_token_count(self) -> int:
        """How many number tokens a new vocabulary has (``[NUM]``, and ``" [NUM]"`` where spaces join the next word:
        all but WordPiece)."""
        return 1 if self.tokenizer_model == WORDPIECE else 2

    @property
    def plain_config_class(self) -> type:
        """The transformers config the number config extends, or holds as ``text_config``."""
        held = getattr(self.config_class, "text_model_type", None)
        return CONFIG_MAPPING[held] if held else _transformers_base(self.config_class)

    @property
    def plain_model_class(self) -> type:
        """The transformers model the number model extends, or holds (plain checkpoints load into both)."""
        auto_class = getattr(self.model_class, "auto_model_class", None)
        if auto_class is not None:
            return auto_class._model_mapping[self.plain_config_class]
        return _transformers_base(self.model_class)

    @property
    def plain_tokenizer_class(self) -> type:
        """The transformers tokenizer the number tokenizer extends."""
        return _transformers_base(self.tokenizer_class)

    def load_plain_tokenizer(self, folder: Any) -> Any:
        """The plain tokenizer saved in ``folder``, with the spec's ``tokenizer_options``.

        transformers does not save ``add_bos_token`` / ``add_eos_token``, and GPT-NeoX's tokenizer
        rebuilds its template from them, so a plain ModernBERT tokenizer needs them again.

        Example:
            >>> BACKBONES["modernbert"].load_plain_tokenizer("path/to/plain")  # doctest: +SKIP
        """
        return self.plain_tokenizer_class.from_pretrained(folder, **self.tokenizer_options)

    def size_config(self, hidden_size: int, num_layers: int, num_heads: int, max_length: int) -> dict[str, int]:
        """Config fields of a new model of that width, depth, head count and longest input.

        The feed-forward layer is ``ffn_ratio`` x the width; positions cover ``max_length`` (plus the offset).

        Example:
            >>> BACKBONES["gpt2"].size_config(64, 2, 2, 128)
            {'n_embd': 64, 'n_layer': 2, 'n_head': 2, 'n_positions': 128}
            >>> BACKBONES["llama"].size_config(96, 2, 4, 128)["intermediate_size"]
            256
        """
        names = self.size_fields
        sizes = {
            names.hidden: hidden_size,
            names.layers: num_layers,
            names.heads: num_heads,
            names.positions: max_length + self.position_offset,
        }
        if names.ffn:
            sizes[names.ffn] = round(names.ffn_ratio * hidden_size)
        if names.kv_heads:
            sizes[names.kv_heads] = num_heads
        return sizes

    def new_config(self, tokenizer: Any, *, hidden_size: int, num_layers: int, num_heads: int, max_length: int,
                   **fields: Any) -> Any:
        """The config of a new model for ``tokenizer``: sized, with its vocabulary and token ids.

        ``fields`` are further config fields (``number_encoding``, encoding options, dropout, ...).

        Example:
            >>> config = BACKBONES["bert"].new_config(tokenizer, hidden_size=64, num_layers=2, num_heads=2,
            ...                                       max_length=128, number_encoding="fone")  # doctest: +SKIP
        """
        return self.config_class.from_tokenizer(
            tokenizer, **self.size_config(hidden_size, num_layers, num_heads, max_length), **fields
        )


_BERT_SIZES = SizeFields(
    "hidden_size", "num_hidden_layers", "num_attention_heads", "max_position_embeddings", "intermediate_size"
)
_BERT_DROPOUT = ("hidden_dropout_prob", "attention_probs_dropout_prob")
_BERT_TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
              "max_position_embeddings": 72}

BACKBONES: dict[str, BackboneSpec] = {
    spec.name: spec
    for spec in (
        BackboneSpec(
            name="gpt2",
            display_name="GPT-2",
            config_class=NumberGPT2Config,
            model_class=NumberGPT2ForCausalLM,
            tokenizer_class=NumberGPT2Tokenizer,
            tokenizer_model=BYTE_LEVEL_BPE,
            special_tokens=("<|endoftext|>",),
            size_fields=SizeFields("n_embd", "n_layer", "n_head", "n_positions"),
            dropout_fields=("resid_pdrop", "embd_pdrop", "attn_pdrop"),
            tiny_sizes={"n_embd": 32, "n_layer": 2, "n_head": 2, "n_positions": 64, "bos_token_id": 0,
                        "eos_token_id": 0},
        ),
        BackboneSpec(
            name="bert",
            display_name="BERT",
            config_class=NumberBertConfig,
            model_class=NumberBertForMaskedLM,
            tokenizer_class=NumberBertTokenizer,
            tokenizer_model=WORDPIECE,
            special_tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
            size_fields=_BERT_SIZES,
            dropout_fields=_BERT_DROPOUT,
            tiny_sizes=_BERT_TINY,
        ),
        BackboneSpec(
            name="roberta",
            display_name="RoBERTa",
            config_class=NumberRobertaConfig,
            model_class=NumberRobertaForMaskedLM,
            tokenizer_class=NumberRobertaTokenizer,
            tokenizer_model=BYTE_LEVEL_BPE,
            special_tokens=("<s>", "<pad>", "</s>", "<unk>", "<mask>"),
            size_fields=_BERT_SIZES,
            dropout_fields=_BERT_DROPOUT,
            tiny_sizes=_BERT_TINY,
            position_offset=2,
        ),
        BackboneSpec(
            name="llama",
            display_name="Llama",
            config_class=NumberLlamaConfig,
            model_class=NumberLlamaForCausalLM,
            tokenizer_class=NumberLlamaTokenizer,
            tokenizer_model=METASPACE_BPE,
            special_tokens=("<unk>", "<s>", "</s>"),
            tokenizer_options={"add_bos_token": True},
            size_fields=SizeFields(
                "hidden_size", "num_hidden_layers", "num_attention_heads", "max_position_embeddings",
                "intermediate_size", ffn_ratio=8 / 3, kv_heads="num_key_value_heads",
            ),
            dropout_fields=("attention_dropout",),
            tiny_sizes={"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
                        "intermediate_size": 64, "max_position_embeddings": 64},
        ),
        BackboneSpec(
            name="modernbert",
            display_name="ModernBERT",
            config_class=NumberModernBertConfig,
            model_class=NumberModernBertForMaskedLM,
            tokenizer_class=NumberModernBertTokenizer,
            tokenizer_model=BYTE_LEVEL_BPE,
            special_tokens=("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"),
            tokenizer_options=MODERNBERT_SPECIAL_TOKENS,
            size_fields=dataclasses.replace(_BERT_SIZES, ffn_ratio=1.5),
            dropout_fields=("embedding_dropout", "attention_dropout", "mlp_dropout", "classifier_dropout"),
            tiny_sizes={**_BERT_TINY, "max_position_embeddings": 64, "local_attention": 8, "bos_token_id": 2,
                        "eos_token_id": 3, "cls_token_id": 2, "sep_token_id": 3},
        ),
    )
}
"""Every backbone by name."""

def get_backbone(name: str) -> BackboneSpec:
    """The spec of the backbone ``name``: a row of :data:`BACKBONES`, or any other model type of transformers'
    causal or masked LMs, held by composition (:func:`composed_backbone`); ``ValueError`` otherwise.

    Example:
        >>> get_backbone("gpt2").causal, get_backbone("qwen2").causal, get_backbone("distilbert").causal
        (True, True, False)
    """
    from .composed_backbones import composable_model_types, composed_backbone  # its specs build on this module's

    if name in BACKBONES:
        return BACKBONES[name]
    if name in composable_model_types():
        return composed_backbone(name)
    raise ValueError(
        f"backbone={name!r} is unknown; allowed: {', '.join(BACKBONES)}, or the model type of any causal or masked "
        "LM of transformers (AutoModelForCausalLM / AutoModelForMaskedLM: qwen2, mistral, gemma2, distilbert, ...)"
    )
