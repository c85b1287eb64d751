"""What every number model shares: :class:`NumberModelMixin`.

The number models (each holding a language model, ``modeling_number_lm.py``) share this mixin, so the number
path is written once: number positions from ``isin(input_ids, config.num_token_ids)``, the encoding's embedding
at them, the losses (``modeling_number_losses.py``), loading a plain or saved checkpoint, freezing the backbone
and what ``save_pretrained`` adds. A text baseline has no number
module: the model is then the plain backbone. docs/design.md ("The path of data") tells the rest.

Example:
    >>> model = NumberGPT2ForCausalLM(config)  # doctest: +SKIP
    >>> model(**tokenizer("x = 1.5", return_tensors="pt")).number_predictions.dtype  # doctest: +SKIP
    torch.float64
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import torch
from torch import nn
from transformers.modeling_utils import slice_logits_to_keep
from transformers.utils import ModelOutput
from transformers.utils.generic import can_return_tuple

from .checks import NUMBER_MODULES, check_number_weights, checked_input_numbers, saved_config_dict
from .digit_lookahead import DigitLookahead, build_digit_lookahead, final_norm
from .encoding_base import NumberEncoding
from .encoding_digits import DigitValueEmbedding
from .encoding_registry import build_digit_values, build_number_encoding
from .hub_card import NumberModelCardMixin
from .legacy_checkpoints import move_legacy_scaler
from .modeling_number_losses import NumberLossMixin
from .modeling_outputs import CACHE_NAME, NumberMaskedLMOutput
from .number_scaling import NumberScalingMixin

__all__ = ["ADAPTER_CONFIG_FILE", "NUMBER_TOKEN_INITS", "VALUE_ROWS_INIT_SCALE", "NumberModelMixin",
           "is_adapter_folder"]

VALUE_ROWS_INIT_SCALE = 10.0
"""How many times the backbone's initializer range a fresh model's number rows start at where the first
norm sees ``value x e_[NUM]`` alone (xVal on Llama): beyond block 1 only the residual stream carries the
value, which at the default scale (norm 0.23 at width 128) the blocks' outputs (norms 1-12) drown."""

NUMBER_TOKEN_INITS = ("digits", "mean")
"""How ``from_pretrained_backbone`` starts the number tokens' new rows: the digits' mean, or transformers'
mean resizing."""


ADAPTER_CONFIG_FILE = "adapter_config.json"
"""PEFT's file: what marks a folder as an adapter."""


def is_adapter_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a PEFT adapter (``adapter_config.json``) rather than a whole model: ``final/adapter``
    or a ``checkpoint-<step>`` of a LoRA run.

    Example:
        >>> is_adapter_folder("/nonexistent")
        False
    """
    return os.path.isfile(os.path.join(folder, ADAPTER_CONFIG_FILE)) and not any(
        os.path.isfile(os.path.join(folder, name)) for name in ("model.safetensors", "model.safetensors.index.json")
    )


def _refuse_adapter_folder(path: Any) -> None:
    """A ``ValueError`` for a LoRA adapter folder (a LoRA run's ``checkpoint-<step>``, ``final/adapter``): it holds the
    number config but no model weights, and transformers would say only that ``model.safetensors`` is missing."""
    if not isinstance(path, (str, os.PathLike)) or not is_adapter_folder(path):
        return
    raise ValueError(
        f"{path} holds a LoRA adapter (adapter_config.json), not a whole model: load it with "
        f"hf_numbers.training.lora.load_adapter({str(path)!r}) (its base adapted again, the adapter on it), or load "
        "the run's final/ folder (the merged model)"
    )


class NumberModelMixin(NumberLossMixin, NumberScalingMixin, NumberModelCardMixin):
    """Number handling shared by the ``Number*`` models.

    The model class (``modeling_number_lm.py``) says how its language model runs: its trunk (``trunk``,
    ``_run_trunk``), its token head (``_token_logits``), position ids where the backbone derives them from
    ``input_ids`` (RoBERTa: ``_position_ids``) and how a plain checkpoint loads (``_load_plain``); the backbone
    itself only sees embeddings.

    The number module lives in ``self.number_encoding`` (input embedding and number head). Values
    go in and come out in the data's units: the config's number scaling (``number_scaling.py``;
    :meth:`fit_number_scaling`) maps them to and from the module's inside the model. A model loaded
    from a folder with an hf_numbers model card pushes that card (``model_card``, ``hub_card.py``).
    With ``config.freeze_backbone`` (or after :meth:`freeze_backbone`) only it and the token
    head's own parameters are trainable; see :meth:`freeze_backbone`.
    """

    accepts_loss_kwargs = False
    causal: bool = False
    normalized_embeddings: bool
    """Whether the backbone's embedding module ends with a LayerNorm (BERT, RoBERTa, ModernBERT): an encoding whose
    value multiplies the embedding (xVal, ``scales_embedding``) is then applied to that module's output."""
    adds_positions: bool
    """Whether the backbone adds a position embedding to the token embeddings (GPT-2, BERT, RoBERTa); without
    one (Llama: rotary positions) the first block's norm sees xVal's ``value x e_[NUM]`` alone and divides the
    size out, see :data:`VALUE_ROWS_INIT_SCALE`."""
    output_class: type[ModelOutput] = NumberMaskedLMOutput
    trunk: nn.Module
    """The backbone without its token head: what reads the embeddings and gives the hidden states."""
    number_encoding: NumberEncoding | None
    digit_values: DigitValueEmbedding | None
    """The value embedding of the backbone's own digit tokens (``digits``), else None."""
    digit_lookahead: DigitLookahead | None
    """The digit lookahead's training-only heads (``config.digit_lookahead``), else None."""
    _numbers_after_norm: tuple[torch.Tensor, torch.Tensor] | None = None
    _number_ids: tuple[tuple[Any, ...], torch.Tensor] | None = None

    def post_init(self) -> None:
        """Attach the number module (none for a text encoding), then run transformers' ``post_init``."""
        self.config._validate_number_fields()  # again: from_pretrained sets its kwargs after the config's checks
        self.number_encoding = build_number_encoding(self.config)
        self.digit_values = build_digit_values(self.config)
        self.digit_lookahead = build_digit_lookahead(self.config) if self.causal else None
        if self.config.digit_lookahead and not self.causal:
            raise ValueError("digit_lookahead scores the digits a causal LM writes; this is a masked LM")
        if self.digit_lookahead is not None and self.config.digit_lookahead_layer is not None:
            final_norm(self.trunk)  # a ValueError now, not at the first step, where the trunk has none
        if self.number_encoding is not None and not self.config.num_token_ids:
            raise ValueError(
                "config.num_token_id must be set to the id of the [NUM] token (tokenizer.num_token_id) "
                "and config.num_token_ids to every number token id (tokenizer.num_token_ids)"
            )
        if self._embeds_after_norm:
            self.trunk.embeddings.register_forward_hook(self._embed_numbers_after_norm)
        super().post_init()
        if self._value_blind_first_norm:  # a loaded checkpoint's rows replace these afterwards
            weight = self.get_input_embeddings().weight
            rows = [i for i in self.config.num_token_ids if i < weight.shape[0]]  # a plain checkpoint has none yet
            with torch.no_grad():
                weight[rows] *= VALUE_ROWS_INIT_SCALE
        if self.config.freeze_backbone:
            self.freeze_backbone()

    def _initialize_weights(self, module: nn.Module, is_custom_code: bool = False) -> None:
        """transformers' per-module init, except that the number module initialises its own layers (its
        ``init_parameters``, which skips loaded weights): transformers passes over a module without parameters
        of its own in custom code, and would give the module's layers the backbone's draw instead."""
        if isinstance(module, (NumberEncoding, DigitValueEmbedding, DigitLookahead)):
            if not getattr(module, "_is_hf_initialized", False):
                module.init_parameters()
                module._is_hf_initialized = True
            return
        super()._initialize_weights(module, is_custom_code)

    def _init_weights(self, module: nn.Module) -> None:
        own = [getattr(self, name, None) for name in NUMBER_MODULES]
        own = [module for module in own if module is not None]
        if any(module is layer for owner in own for layer in owner.modules()):
            return  # initialised by the module's init_parameters (above), after its layers
        super()._init_weights(module)

    @property
    def _value_blind_first_norm(self) -> bool:
        """Whether the first norm sees ``value x e_[NUM]`` alone (xVal on a backbone without positions to add)."""
        encoding = getattr(self, "number_encoding", None)
        blind = not (self.adds_positions or self.normalized_embeddings)
        return blind and encoding is not None and encoding.scales_embedding

    @property
    def _embeds_after_norm(self) -> bool:
        return self.normalized_embeddings and self.number_encoding is not None and self.number_encoding.scales_embedding

    def _embed_numbers_after_norm(self, module: nn.Module, args: Any, output: torch.Tensor) -> torch.Tensor | None:
        """Forward hook of the embedding module: the number embedding of the normalised embeddings (xVal on BERT)."""
        if self._numbers_after_norm is None:
            return None
        numbers, is_num = self._numbers_after_norm
        return self.number_encoding.embed(output, numbers, is_num)

    def _token_logits(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """Token logits from the last hidden states: the backbone's whole token head (each model class applies it)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _token_logits with its backbone's token head")

    def _position_ids(self, input_ids: torch.Tensor, position_ids: torch.Tensor | None) -> torch.Tensor | None:
        """Position ids to pass with ``inputs_embeds`` (the backbone's defaults unless overridden)."""
        return position_ids

    def _run_trunk(self, inputs_embeds: torch.Tensor, **kwargs: Any) -> tuple[Any, torch.Tensor | None]:
        """The trunk's outputs on ``inputs_embeds``, and the token logits where the backbone's own forward gave
        them (None here: :meth:`_token_logits` computes them from the hidden states)."""
        return self.trunk(inputs_embeds=inputs_embeds, **kwargs), None

    # ------------------------------------------------------------------ setup helpers
    @classmethod
    def from_pretrained_backbone(
        cls,
        pretrained_model_name_or_path: str,
        tokenizer: Any,
        pad_to_multiple_of: int | None = None,
        gguf_file: str | None = None,
        number_token_init: str = "digits",
        **kwargs: Any,
    ) -> Any:
        """Load a plain checkpoint of the backbone (a folder, or a GGUF file in it) and add the number tokens.

        Every backbone weight is reused, the embeddings grow to ``len(tokenizer)`` and the number module is
        initialised; the config takes the tokenizer's special-token and number ids. See docs/pretrained.md.

        Args:
            pretrained_model_name_or_path: the plain checkpoint, as for ``from_pretrained``.
            tokenizer: the number tokenizer (its special-token and number ids go into the config).
            pad_to_multiple_of: rounds the embeddings' size up (e.g. 64, which keeps the token head's shapes fast).
            gguf_file: a GGUF file in the folder, de-quantized to float32 by transformers (needs ``gguf``).
            number_token_init: ``"digits"``: a number token's new row (and untied output row) starts as the mean
                of its digits' rows, so the model already treats it like a number; ``"mean"``: transformers'
                mean resizing.
            **kwargs: to ``from_pretrained`` (config fields such as ``number_encoding``).

        Raises:
            ValueError: an unknown ``number_token_init``; a GGUF file whose weights do not fit the model.

        Example:
            >>> tok = NumberLlamaTokenizer.from_pretrained(folder, gguf_file="SmolLM2-135M.gguf")  # doctest: +SKIP
            >>> model = NumberLlamaForCausalLM.from_pretrained_backbone(folder, tok, gguf_file="SmolLM2-135M.gguf",
            ...                                                        number_encoding="fone")  # doctest: +SKIP
        """
        if number_token_init not in NUMBER_TOKEN_INITS:
            allowed = ", ".join(NUMBER_TOKEN_INITS)
            raise ValueError(f"number_token_init={number_token_init!r} is unknown; allowed: {allowed}")
        encoding, lookahead = kwargs.get("number_encoding"), kwargs.get("digit_lookahead", 0)
        fields = cls.config_class.token_ids_of(tokenizer, encoding, lookahead) | kwargs  # from the tokenizer
        model = cls._load_plain(pretrained_model_name_or_path, gguf_file, fields)
        plain_rows = model.get_input_embeddings().weight.shape[0]
        if len(tokenizer) > model.config.vocab_size or pad_to_multiple_of:
            model.resize_token_embeddings(len(tokenizer), pad_to_multiple_of=pad_to_multiple_of)
        if number_token_init == "digits":
            model._init_number_token_rows(tokenizer, plain_rows)
        return model

    @classmethod
    def _load_plain(cls, folder: str, gguf_file: str | None, fields: dict[str, Any]) -> Any:
        """The number model holding the plain checkpoint in ``folder`` (or its GGUF file), with config ``fields``."""
        raise NotImplementedError(f"{cls.__name__} must implement _load_plain")

    def _init_number_token_rows(self, tokenizer: Any, plain_rows: int) -> None:
        """Set the new rows of the number tokens to the mean rows of the digits they stand for.

        ``" [NUM]"`` averages the tokens of ``" 0"`` ... ``" 9"`` (a space-prefixed digit, or a space and a
        digit), ``[NUM]`` those of ``"0"`` ... ``"9"``; the input embedding, an untied output matrix and an
        output bias all get the digits' mean. Rows of the plain checkpoint are never touched.
        """
        new = [i for i in tokenizer.num_token_ids if i >= plain_rows]
        if not new:
            return
        matrices = [self.get_input_embeddings().weight]
        output = self.get_output_embeddings()
        if output is not None and output.weight is not matrices[0]:
            matrices.append(output.weight)
        if output is not None and getattr(output, "bias", None) is not None:
            matrices.append(output.bias)
        for token_id, token in zip(new, tokenizer.convert_ids_to_tokens(new)):
            texts = [token.replace(tokenizer.num_token, str(digit)) for digit in range(10)]
            digits = [tokenizer.backend_tokenizer.encode(text, add_special_tokens=False).ids for text in texts]
            with torch.no_grad():
                for matrix in matrices:
                    matrix[token_id] = torch.stack([matrix[ids].mean(0) for ids in digits]).mean(0)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Any, *args: Any, **kwargs: Any) -> Any:
        """transformers' ``from_pretrained``; the backbone stays frozen if ``config.freeze_backbone``.

        A saved number checkpoint (this class's ``model_type``) must hold its encoding's config
        fields (checked by the config's ``from_dict``; keyword arguments that set one count) and its
        number module's weights (:func:`check_number_weights`): a ``ValueError`` names what is missing
        instead of loading defaults or random weights. Another ``number_encoding`` than the saved one
        starts a new number module on purpose.

        A local folder of an older hf_numbers checkpoint, whose scaling sits in ``number_scaler.json``
        beside the model, has it moved into the config (a warning says so). The hf_numbers model card of a
        local folder (its ``README.md``) becomes ``model.model_card``, which ``push_to_hub`` uploads.
        """
        _refuse_adapter_folder(pretrained_model_name_or_path)
        saved = saved_config_dict(cls.config_class, pretrained_model_name_or_path, kwargs)
        wants_info = kwargs.pop("output_loading_info", False)
        model, info = super().from_pretrained(pretrained_model_name_or_path, *args, output_loading_info=True, **kwargs)
        if saved.get("model_type") == cls.config_class.model_type and saved.get("number_encoding") == (
            model.config.number_encoding
        ):
            check_number_weights(info, model.config.number_encoding)
        if model.config.freeze_backbone:
            model.freeze_backbone()
        if isinstance(pretrained_model_name_or_path, (str, os.PathLike)):
            folder = os.path.join(pretrained_model_name_or_path, kwargs.get("subfolder") or "")
            move_legacy_scaler(model, folder)
            model._keep_model_card(folder)
        return (model, info) if wants_info else model

    def resize_token_embeddings(self, *args: Any, **kwargs: Any) -> nn.Embedding:
        """transformers' ``resize_token_embeddings``; keeps the backbone frozen if ``config.freeze_backbone``."""
        embeddings = super().resize_token_embeddings(*args, **kwargs)
        if self.config.freeze_backbone:
            self.freeze_backbone()
        return embeddings

    def freeze_backbone(self) -> None:
        """Freeze the backbone (``self.trunk``, word embeddings included) for frozen-trunk fine-tuning.

        Trainable afterwards: the number module and the token head's own parameters, under ``language_model.``
        (BERT: ``cls.predictions.transform`` and the output bias; RoBERTa: ``lm_head.dense``,
        ``lm_head.layer_norm`` and the bias; ModernBERT: ``head`` and the decoder bias; GPT-2:
        none; Llama: its untied ``lm_head``). An output matrix tied to the word embeddings
        (all but Llama) stays frozen, and so does its ``[NUM]`` row.
        Sets ``config.freeze_backbone`` so that a reloaded model stays frozen.

        Example:
            >>> model.freeze_backbone()  # doctest: +SKIP
            >>> {n.split(".")[1] for n, p in model.named_parameters() if p.requires_grad}  # doctest: +SKIP
            {'cls', 'mlp'}
        """
        self.config.freeze_backbone = True
        backbone = {id(parameter) for parameter in self.trunk.parameters()}
        for parameter in self.parameters():  # resizing copies the tied head's frozen flag to its bias: set every one
            parameter.requires_grad_(id(parameter) not in backbone)

    def save_pretrained(self, save_directory: Any, *args: Any, **kwargs: Any) -> Any:
        """transformers' ``save_pretrained``; ``auto_map`` also maps ``AutoModel`` to this class, and
        ``custom_pipelines`` names the model's pipeline (``number-generation`` or ``number-fill-mask``),
        whose code (``pipeline_number.py``) is saved with the model's."""
        from .pipeline_number import custom_pipelines  # a relative import: transformers copies the file too

        module = type(self).__module__.rsplit(".", 1)[-1]
        auto_map = dict(getattr(self.config, "auto_map", None) or {})
        self.config.auto_map = {**auto_map, "AutoModel": f"{module}.{type(self).__name__}"}
        self.config.custom_pipelines = {**self.config.saved_custom_pipelines, **custom_pipelines(self.causal)}
        return super().save_pretrained(save_directory, *args, **kwargs)

    # ------------------------------------------------------------------ forward
    def number_mask(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Bool mask of the number tokens (``isin(input_ids, config.num_token_ids)``)."""
        if torch.compiler.is_compiling():  # a constant of the graph: caching it would change the model's guards
            return torch.isin(input_ids, torch.tensor(self.config.num_token_ids, device=input_ids.device))
        key = (input_ids.device, *self.config.num_token_ids)
        if self._number_ids is None or self._number_ids[0] != key:  # built once, not at every generation step
            self._number_ids = (key, torch.tensor(key[1:], device=input_ids.device))
        return torch.isin(input_ids, self._number_ids[1])

    def _check_digit_context(self, digit_context: torch.Tensor | None, kwargs: dict[str, Any]) -> None:
        """A ``ValueError`` for a cached continuation without the ids that its digit runs started in."""
        cache = kwargs.get(CACHE_NAME, kwargs.get("past_key_values"))  # (the old name still works, deprecated)
        if digit_context is None and cache is not None and cache.get_seq_length() > 0:
            raise ValueError(
                "number_encoding='digits' continues digit runs from the ids before input_ids: with a KV cache, pass "
                f"digit_context (the last {self.config.digits_places} ids before input_ids, or all of them)"
            )

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        input_numbers: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.LongTensor | None = None,
        position_ids: torch.LongTensor | None = None,
        labels: torch.LongTensor | None = None,
        number_labels: torch.Tensor | None = None,
        use_cache: bool | None = None,
        inputs_embeds: torch.Tensor | None = None,
        logits_to_keep: int | torch.Tensor = 0,
        number_head: bool = True,
        scaled_numbers: bool = False,
        loss_only: bool = False,
        digit_context: torch.LongTensor | None = None,
        prompt_length: torch.LongTensor | int | None = None,
        **kwargs: Any,
    ) -> ModelOutput:
        """Token logits, number predictions and (with ``labels``) the combined loss.

        Args:
            input_ids: ``(B, L)`` token ids; number tokens are ``config.num_token_ids``.
            input_numbers: ``(B, L)`` values in the data's units (float64 kept); read only at number
                tokens. May be None when there are no number tokens (ignored by a text encoding).
            labels: token labels (-100 = ignored). Causal LM: shifted inside, as in GPT-2.
            number_labels: ``(B, L)`` target values in the data's units, aligned like ``labels``. Causal
                LM: defaults to ``input_numbers``. Masked LM: required where ``labels`` hold a number token.
            logits_to_keep: as in transformers (generation); not allowed with ``labels``.
            number_head: False (causal LM, no ``labels``) skips the number head: ``number_predictions``
                is None and ``head_hidden_states`` holds what it would read (``generate`` uses it).
            scaled_numbers: ``input_numbers`` and ``number_labels`` are already in the model's units (the
                config's number scaling applied) and ``number_predictions`` stay in them (``generate`` uses it).
            loss_only: with ``labels``, compute only what the loss needs (training): the token head at the
                positions that have a label (after a causal LM's shift), the number head at those whose label
                is a number token. The losses are those of a full forward (up to float rounding); ``logits`` and
                ``number_predictions`` are None.
            digit_context: ``digits`` encoding, continuing with a KV cache: the ids before ``input_ids`` (at
                least ``config.digits_places`` of them, or all), from which the digit runs are read on.
            prompt_length: ``digits`` encoding: the tokens before it (per row, or one for all) are a prompt given
                whole, whose finished digit runs the ``below`` and ``log`` parts read whole. Default: before the first
                labelled token of a causal LM (``generate``: the prompt), every token of a masked LM.

        Other arguments, the KV cache among them (``cache``, or ``past_key_values`` before transformers
        5.24), are passed to the backbone.

        Returns ``number_predictions``, the decoded value at every position in the data's units
        (±inf where a log scaling's inverse overflows float64).

        Example:
            >>> out = model(input_ids=ids, input_numbers=nums, labels=ids)  # doctest: +SKIP
            >>> out.loss, out.token_loss, out.number_loss, out.number_predictions.shape  # doctest: +SKIP
        """
        self._check_forward_arguments(input_ids, inputs_embeds, labels, logits_to_keep, number_head, loss_only)
        if prompt_length is None:
            prompt_length = self._given_tokens(input_ids, labels)
        embeds, numbers = self._number_embeddings(
            input_ids, input_numbers, scaled_numbers, (digit_context, prompt_length), kwargs
        )
        backbone_kwargs = {"use_cache": use_cache} if self.causal else {}
        layer, asked = self._lookahead_layer(labels), kwargs.pop("output_hidden_states", None)
        if layer is not None or asked is not None:  # the lookahead's layer is one of the hidden states
            backbone_kwargs["output_hidden_states"] = True if layer is not None else asked
        if token_type_ids is not None:  # only when given: Llama and ModernBERT have no token types
            backbone_kwargs["token_type_ids"] = token_type_ids
        try:
            outputs, trunk_logits = self._run_trunk(
                embeds,
                attention_mask=attention_mask,
                position_ids=self._position_ids(input_ids, position_ids),
                **backbone_kwargs,
                **kwargs,
            )
        finally:
            self._numbers_after_norm = None
        hidden_states = slice_logits_to_keep(outputs.last_hidden_state, logits_to_keep)
        extra = {CACHE_NAME: getattr(outputs, CACHE_NAME)} if self.causal else {}
        lookahead_states = None
        if layer is not None:
            lookahead_states = final_norm(self.trunk)(outputs.hidden_states[layer])
        extra.update(hidden_states=outputs.hidden_states if layer is None or asked else None,
                     attentions=outputs.attentions)
        if loss_only:
            return self.output_class(**self._losses(
                hidden_states, labels, number_labels, numbers, scaled_numbers, trunk_logits,
                lookahead_states=lookahead_states,
            ), **extra)
        if trunk_logits is None:
            logits = self._token_logits(hidden_states)
        else:  # a masked LM's own head ran on every position: keep those asked for, as its hidden states
            logits = slice_logits_to_keep(trunk_logits, logits_to_keep)
        losses = dict.fromkeys(("loss", "token_loss", "number_loss"))
        head_output = number_predictions = None
        if self.number_encoding is not None and number_head:
            head_output, number_predictions = self._number_head(hidden_states)
            if not scaled_numbers:
                number_predictions = self.number_scaling.inverse(number_predictions)
        if labels is not None:
            losses = self._losses(hidden_states, labels, number_labels, numbers, scaled_numbers, logits, head_output,
                                  lookahead_states=lookahead_states)
        if not number_head:
            extra["head_hidden_states"] = hidden_states
        return self.output_class(**losses, logits=logits, number_predictions=number_predictions, **extra)

    def _lookahead_layer(self, labels: torch.Tensor | None) -> int | None:
        """The hidden state the digit lookahead reads where it is not the last (``config.digit_lookahead_layer``),
        when there are labels to score; else None."""
        if labels is None or self.digit_lookahead is None:
            return None
        return self.config.digit_lookahead_layer

    def _check_forward_arguments(
        self, input_ids: Any, inputs_embeds: Any, labels: Any, logits_to_keep: Any, number_head: bool, loss_only: bool
    ) -> None:
        """Refuse the combinations of :meth:`forward`'s arguments that have no meaning, before any work."""
        if input_ids is None or inputs_embeds is not None:
            raise ValueError("number models take input_ids (number positions come from them), not inputs_embeds")
        if labels is not None and not (isinstance(logits_to_keep, int) and logits_to_keep == 0):
            raise ValueError("logits_to_keep cannot be combined with labels: the loss needs every position")
        if not number_head and (labels is not None or not self.causal):
            raise ValueError("number_head=False is for causal generation: without labels, on a causal LM")
        if loss_only and labels is None:
            raise ValueError("loss_only computes the loss alone: it needs labels")

    def _given_tokens(self, input_ids: torch.Tensor, labels: torch.Tensor | None) -> torch.Tensor | int:
        """The default ``prompt_length``: a causal LM's tokens before the first labelled one (none without labels),
        a masked LM's all."""
        if not self.causal:
            return input_ids.shape[1]
        if labels is None:
            return 0
        labelled = labels != -100
        return torch.where(labelled.any(1), labelled.int().argmax(1), labels.shape[1])

    def _number_embeddings(
        self,
        input_ids: torch.Tensor,
        input_numbers: torch.Tensor | None,
        scaled_numbers: bool,
        digit_reading: tuple[torch.Tensor | None, torch.Tensor | int],
        kwargs: dict[str, Any],
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The token embeddings with the numbers in them (the digits' values, or the encoding at number tokens),
        and the checked input numbers in the model's units (None for a text encoding). ``digit_reading``: the
        ``digit_context`` and ``prompt_length`` of :meth:`forward`."""
        embeds = self.get_input_embeddings()(input_ids)
        if self.digit_values is not None:
            self._check_digit_context(digit_reading[0], kwargs)
            embeds = self.digit_values(embeds, input_ids, *digit_reading)
        if self.number_encoding is None:  # a text encoding: its numbers are ordinary tokens
            return embeds, None
        is_num = self.number_mask(input_ids)
        numbers = checked_input_numbers(
            input_ids, input_numbers, is_num, self.number_encoding, self.config.num_token_ids,
            scaling=None if scaled_numbers else self.number_scaling,
        )  # fmt: skip
        if self._embeds_after_norm:  # the embedding module's hook applies the encoding to its normalised output
            self._numbers_after_norm = (numbers, is_num)
            return embeds, numbers
        return self.number_encoding.embed(embeds, numbers, is_num), numbers


# transformers reads the signature of a registered (remote-code) model's forward at every generation step;
# a precomputed one makes that a look-up (0.1 ms a step, a few % of a small model's step)
NumberModelMixin.forward.__signature__ = inspect.signature(NumberModelMixin.forward)
