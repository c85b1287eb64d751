"""Number models that hold any language model of transformers: ``NumberForCausalLM`` and ``NumberForMaskedLM``.

The language model (any class behind ``AutoModelForCausalLM`` / ``AutoModelForMaskedLM``) is built from the
config's ``text_config`` and kept whole as ``self.language_model``, as Llava holds its language model; the
number module works around it (:class:`NumberModelMixin`: input embeddings in, the trunk's hidden states out).
What differs between families is read from facts of the model, not from its name (:func:`backbone_facts`):
whether its embedding module ends with a LayerNorm, whether it adds position embeddings, how a causal LM's
head scales its logits. A checkpoint saves the language model's weights under ``language_model.`` and loads
with ``trust_remote_code=True`` where hf_numbers is not installed.

Example:
    >>> from transformers import Qwen2Config
    >>> text = Qwen2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
    ...                    intermediate_size=64, vocab_size=100)
    >>> model = NumberForCausalLM(NumberCausalLMConfig(text_config=text, num_token_id=99, number_encoding="xval"))
    >>> ids = torch.tensor([[5, 99, 7]])
    >>> model(input_ids=ids, input_numbers=torch.tensor([[1.0, 2.5, 1.0]], dtype=torch.float64)).logits.shape
    torch.Size([1, 3, 100])
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, GenerationMixin, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput

from .configuration_number_lm import NumberCausalLMConfig, NumberMaskedLMConfig
from .generation_number import NumberFillMaskMixin, NumberGenerationMixin
from .legacy_checkpoints import legacy_key_mapping
from .modeling_number_base import NumberModelMixin
from .modeling_outputs import NumberCausalLMOutput

__all__ = ["BackboneFacts", "NumberForCausalLM", "NumberForMaskedLM", "backbone_facts"]


@dataclass(frozen=True)
class BackboneFacts:
    """What the number path needs to know of a language model, read from the model itself.

    Attributes:
        normalized_embeddings: its embedding module ends with a LayerNorm (BERT-like): xVal scales that output.
        adds_positions: it adds a position embedding to the token embeddings (rotary models do not).
        logit_softcap: the causal head's ``tanh`` soft-capping of the logits (Gemma 2), else None.
        logit_scale: a factor the causal head multiplies its logits by (Cohere's ``logit_scale``, Granite's
            ``1 / logits_scaling``), else None.
        position_ids_from_ids: the embedding module derives position ids from the ids, skipping padding
            (RoBERTa-like); with embeddings in, the number model passes them as the plain model would.
    """

    normalized_embeddings: bool
    adds_positions: bool
    logit_softcap: float | None = None
    logit_scale: float | None = None
    position_ids_from_ids: bool = False


def backbone_facts(language_model: PreTrainedModel) -> BackboneFacts:
    """The :class:`BackboneFacts` of ``language_model`` (a transformers causal or masked LM).

    Example:
        >>> backbone_facts(AutoModelForCausalLM.from_config(text)).adds_positions  # doctest: +SKIP
        False
    """
    config, trunk = language_model.config, language_model.base_model
    embeddings = getattr(trunk, "embeddings", None)
    normalized = isinstance(embeddings, nn.Module) and any(
        isinstance(module, (nn.LayerNorm, nn.RMSNorm)) for module in embeddings.children()
    )
    word_embeddings = language_model.get_input_embeddings()
    adds_positions = any(
        isinstance(module, nn.Embedding) and module is not word_embeddings
        and module.num_embeddings == getattr(config, "max_position_embeddings", None)
        for module in trunk.modules()
    )
    scaling = getattr(config, "logits_scaling", None)
    scale = getattr(config, "logit_scale", None) or (1.0 / scaling if scaling else None)
    return BackboneFacts(
        normalized_embeddings=normalized,
        adds_positions=adds_positions,
        logit_softcap=getattr(config, "final_logit_softcapping", None) or None,
        logit_scale=None if scale in (None, 1.0) else float(scale),
        position_ids_from_ids=hasattr(type(embeddings), "create_position_ids_from_input_ids"),
    )


class _NumberLanguageModel(NumberModelMixin, PreTrainedModel):
    """The number model around ``self.language_model``; the two task classes below name its Auto class."""

    base_model_prefix = "language_model"
    auto_model_class: Any = None
    supports_gradient_checkpointing = True
    _supports_sdpa = True
    _supports_flash_attn = True
    _supports_flex_attn = True

    # no ties of its own (the language model ties its head); a dict, so that PEFT looks for ties in the submodules
    _tied_weights_keys: dict[str, str] = {}  # noqa: RUF012
    legacy_prefixes: tuple[str, ...] = ()
    """The language model's top-level modules, under which checkpoints saved before composition hold its weights
    (GPT-2's ``transformer`` and ``lm_head``): loading renames them under ``language_model.``."""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        if cls.legacy_prefixes:
            kwargs.setdefault("key_mapping", legacy_key_mapping(cls.legacy_prefixes))
        return super().from_pretrained(pretrained_model_name_or_path, *args, **kwargs)

    def __init__(self, config: Any, language_model: PreTrainedModel | None = None):
        super().__init__(config)
        if language_model is None:
            language_model = self.auto_model_class.from_config(config.text_config)
        else:
            for module in language_model.modules():  # loaded already: post_init must not draw it again
                module._is_hf_initialized = True
        width = language_model.get_input_embeddings().embedding_dim
        if width != config.text_config.hidden_size:
            raise ValueError(
                f"{type(language_model).__name__}'s token embeddings are {width} wide and its hidden states "
                f"{config.text_config.hidden_size} (as ELECTRA's embedding_size): the number module reads and writes "
                "one width, so this model type cannot hold one"
            )
        self.language_model = language_model
        self.config.text_config = language_model.config  # one config: resizing updates what is saved
        self.facts = backbone_facts(language_model)
        self.post_init()

    @property
    def normalized_embeddings(self) -> bool:  # type: ignore[override]
        return self.facts.normalized_embeddings

    @property
    def adds_positions(self) -> bool:  # type: ignore[override]
        return self.facts.adds_positions

    @property
    def trunk(self) -> nn.Module:
        """The language model without its head (``language_model.base_model``): what reads the embeddings."""
        return self.language_model.base_model

    def get_input_embeddings(self) -> nn.Module:
        return self.language_model.get_input_embeddings()

    def set_input_embeddings(self, value: nn.Module) -> None:
        self.language_model.set_input_embeddings(value)

    def get_output_embeddings(self) -> nn.Module | None:
        return self.language_model.get_output_embeddings()

    def set_output_embeddings(self, value: nn.Module) -> None:
        self.language_model.set_output_embeddings(value)

    def _position_ids(self, input_ids: torch.Tensor, position_ids: torch.Tensor | None) -> torch.Tensor | None:
        if position_ids is not None or not self.facts.position_ids_from_ids:
            return position_ids
        embeddings = self.trunk.embeddings
        return type(embeddings).create_position_ids_from_input_ids(input_ids, embeddings.padding_idx)

    @classmethod
    def from_language_model(cls, language_model: PreTrainedModel, **fields: Any) -> Any:
        """The number model around ``language_model`` (its weights kept, not copied); ``fields`` are number config
        fields, or ``vocab_size`` and special ids of the language model's config.

        Example:
            >>> model = NumberForCausalLM.from_language_model(plain, number_encoding="fone")  # doctest: +SKIP
        """
        config = cls.config_class.for_text_config(language_model.config, **fields)
        language_model.config = config.text_config
        return cls(config, language_model=language_model)

    @classmethod
    def _load_plain(cls, folder: str, gguf_file: str | None, fields: dict[str, Any]) -> Any:
        """The number model around the plain checkpoint in ``folder`` (or its GGUF file, de-quantized to float32;
        transformers marks that model quantized, which refuses ``save_pretrained``: the mark is dropped)."""
        plain = cls.auto_model_class.from_pretrained(folder, **({"gguf_file": gguf_file} if gguf_file else {}))
        if gguf_file is not None:
            plain.config.quantization_config = None
            plain.hf_quantizer = None
            plain.is_quantized = False
        model = cls.from_language_model(plain, **fields)
        model.config.name_or_path = os.fspath(folder)
        return model


class NumberForCausalLM(NumberGenerationMixin, _NumberLanguageModel, GenerationMixin):
    """Any causal LM of transformers with a number encoding and number head; ``generate`` also returns numbers.

    The token head is the language model's output embeddings, with the soft-capping or scaling of its logits
    that its config names (:class:`BackboneFacts`).
    """

    config_class = NumberCausalLMConfig
    auto_model_class = AutoModelForCausalLM
    causal = True
    output_class = NumberCausalLMOutput

    def _token_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        logits = self.language_model.get_output_embeddings()(hidden_states)
        if self.facts.logit_scale is not None:
            logits = logits * self.facts.logit_scale
        if self.facts.logit_softcap is not None:
            logits = torch.tanh(logits / self.facts.logit_softcap) * self.facts.logit_softcap
        return logits


class NumberForMaskedLM(NumberFillMaskMixin, _NumberLanguageModel):
    """Any masked LM of transformers with a number encoding and number head; :meth:`fill_mask` fills numbers too.

    A masked LM's head (the transform before the output embeddings) has no common name across families, so the
    language model runs whole on the number embeddings and the trunk's hidden states are read on the way
    (:meth:`_run_trunk`): its own head gives the logits, whichever family it is.
    """

    config_class = NumberMaskedLMConfig
    auto_model_class = AutoModelForMaskedLM

    def _run_trunk(self, inputs_embeds: torch.Tensor, **kwargs: Any) -> tuple[Any, torch.Tensor | None]:
        captured: dict[str, Any] = {}

        def keep(module: nn.Module, args: Any, output: Any) -> None:
            captured["outputs"] = output

        handle = self.trunk.register_forward_hook(keep)
        try:
            out = self.language_model(inputs_embeds=inputs_embeds, **kwargs)
        finally:
            handle.remove()
        outputs = captured["outputs"]
        if not hasattr(outputs, "last_hidden_state"):
            outputs = BaseModelOutput(last_hidden_state=outputs[0])
        return outputs, out.logits

    def _token_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("a masked LM's logits come from its own forward (_run_trunk)")
