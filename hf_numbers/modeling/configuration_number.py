"""The number fields every number config holds: :class:`NumberConfigFields`.

The configs themselves hold their language model's config as ``text_config`` (``configuration_number_lm.py``;
the five families' under their saved model types, ``configuration_number_families.py``) and add these fields:
the shared ones, and the options each registered encoding declares (``encoding_registry.py``).
Every field is validated at construction with a ``ValueError`` that names the field and
the allowed range; an encoding validates its own options. A saved number config (``config.json``
of this ``model_type``) must hold its encoding's fields: loading one without them is a ``ValueError``,
not the defaults.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

from transformers import PreTrainedConfig

from .checks import check_saved_config
from .encoding_config import coerce_option, encoding_option, option_owners, options_in_sub_dict, own_options
from .encoding_digits import digit_token_table
from .encoding_registry import get_encoding
from .number_scaling import NumberScaling
from .parsing import NUMBER_OUTPUTS

MAX_LOOKAHEAD = 8
"""The most digits ahead ``digit_lookahead`` asks for (each is an ``(H, H)`` head)."""
LOOKAHEAD_MEANS = ("places", "tokens")
"""What the lookahead's loss is a mean over (``digit_lookahead_mean``): ``places``, each head's mean over the places it
scores, averaged over heads (a batch's lookahead weighs the same however few digits it asks for); ``tokens``, every
scored place summed over heads, divided by the tokens the token loss scores (each place asked for ahead weighs what
one token written weighs, as in multi-token prediction: a task of short digit runs asks for little)."""


def _registered_pipeline_tasks() -> set[str]:
    """The tasks of transformers' pipeline registry, if this process has imported it (none otherwise)."""
    pipelines = sys.modules.get("transformers.pipelines")
    registry = getattr(pipelines, "PIPELINE_REGISTRY", None)
    return set(registry.supported_tasks) if registry is not None else set()


@dataclass
class NumberConfigFields:
    """The number fields shared by every ``Number*Config``.

    Attributes:
        number_encoding: the name of a registered encoding (``hf_numbers.NUMBER_ENCODINGS``:
            ``"xval"``, ``"fone"``, ``"float"``, ``"exponent"``, ``"bittokens"`` and the text baselines).
        num_token_id: id of the ``[NUM]`` token (``tokenizer.num_token_id``).
        num_token_ids: every id that stands for a number (``tokenizer.num_token_ids``);
            byte-level tokenizers have a second, space-prefixed ``" [NUM]"`` token.
            Defaults to ``[num_token_id]``; :meth:`from_tokenizer` takes all of the tokenizer's.
        number_loss_weight: weight of the number loss added to the token loss (>= 0).
        number_output: how an encoding with a number module writes numbers: ``"num_token"`` (its number token and
            head) or ``"digits"`` (numbers in, digits out: the prompt's numbers read as ``[NUM]``, the answers
            written with the backbone's own digit tokens by its LM head; a causal LM's, docs/pretrained.md).
        digit_tokens: the vocabulary's digit tokens (``[id, value, digit count, joins]``), for an encoding that
            adds values to the backbone's own digits (``digits``); :meth:`from_tokenizer` fills it.
        freeze_backbone: leave only the number module and heads trainable.
        digit_lookahead: a causal LM that writes digits: heads that score, where a digit is written, the digits
            1 to ``digit_lookahead`` places after it (``digit_lookahead.py``; training only); 0: none.
        digit_lookahead_weight: weight of their loss, added to the token loss (>= 0).
        digit_lookahead_confidence: weight each scored place by the probability the token head gives that digit
            where it is the next token (among the ten digits, without gradient): a digit the model cannot write even
            next (a product's middle digits) is asked for ahead little, as noise would be.
        digit_lookahead_confidence_power: the power that probability is raised to (> 0; 1: as it is): above 1, a digit
            the model writes unsurely (a temperature's units, probability 0.5) weighs far less than one it is sure of
            (a sum's, 0.95): 0.06 against 0.81 at 4.
        digit_lookahead_mean: what their loss is a mean over (:data:`LOOKAHEAD_MEANS`): ``"places"``
            (each head's scored places, then the heads) or ``"tokens"`` (each place asked for ahead weighs what one
            token written weighs: a task of short digit runs, ``44.5``, asks for little).
        digit_lookahead_layer: which hidden state the heads read: ``None``, the last (what the token head reads);
            ``k`` (1 to the text model's layers - 1), the output of its ``k``-th layer through its final norm, so that
            the digits ahead are asked of the middle of the trunk, where a model plans ahead (Future Lens, Pal et al.
            2023), and the last layers stay free for the next token.
        digit_lookahead_conditioned: give each head the digits between (teacher-forced), as a scale and a shift of
            its output per digit, so that a digit that could go either way is asked for given the branch taken
            (multi-token prediction as DeepSeek-V3 conditions it on the next token).
        digit_lookahead_leading: ask for the digits ahead where a number's first digit is written too (the default);
            ``False``: from its second digit on, so that the leading digit (a temperature's decade) is written
            without a press to foresee the rest.
        digit_lookahead_ids: the ids of the tokens ``0`` ... ``9`` (:meth:`from_tokenizer` fills it where
            ``digit_lookahead`` is set).
        tokenizer_vocab_size: how many of the vocabulary's rows stand for a token (``len(tokenizer)``) where the
            vocabulary is padded beyond them (``--pad_vocab_to_multiple_of``: a faster matmul on a GPU); the rows
            after are never chosen. ``None``: every row is a token.
        number_scaling_shift, number_scaling_scale, number_scaling_log: the map between the data's
            values and the model's, applied inside the model (``number_scaling.py``): inputs and labels
            are raw values, predictions come back raw. Identity by default; fitted for xVal by
            ``model.fit_number_scaling(values)`` or ``NumberScaling.fit(values).to_config()``.

        encoding_config: the selected encoding's options (``encoding_config.py``): ``{"fone_int_digits": 3, ...}``,
            each read and set as an attribute (``config.fone_int_digits``); construction fills in the defaults of
            those not given and refuses another encoding's.
    """

    number_encoding: str = "xval"
    num_token_id: int | None = None
    num_token_ids: list[int] | None = None
    number_loss_weight: float = 1.0
    number_output: str = "num_token"
    freeze_backbone: bool = False
    number_scaling_shift: float = 0.0
    number_scaling_scale: float = 1.0
    number_scaling_log: bool = False
    digit_tokens: list[list[int]] | None = None
    digit_lookahead: int = 0
    digit_lookahead_weight: float = 1.0
    digit_lookahead_confidence: bool = False
    digit_lookahead_confidence_power: float = 1.0
    digit_lookahead_mean: str = "places"
    digit_lookahead_layer: int | None = None
    digit_lookahead_conditioned: bool = False
    digit_lookahead_leading: bool = True
    digit_lookahead_ids: list[int] | None = None
    tokenizer_vocab_size: int | None = None
    encoding_config: dict[str, Any] | None = None

    #: Special-token ids :meth:`from_tokenizer` takes from the tokenizer: config field -> tokenizer attribute.
    tokenizer_token_ids: ClassVar[dict[str, str]] = {"pad_token_id": "pad_token_id"}

    @property
    def custom_pipelines(self) -> dict[str, Any]:
        """The checkpoint's pipelines (``config.json``), less those this process has registered itself.

        ``pipeline()`` runs a task named in ``custom_pipelines`` from the checkpoint's code, which needs
        ``trust_remote_code=True``. Where ``import hf_numbers`` registered the task (``number-generation``,
        ``number-fill-mask``), the installed classes serve it instead, so
        ``pipeline("number-generation", model=path)`` needs no remote code; elsewhere the saved code does.
        """
        registered = _registered_pipeline_tasks()
        return {task: info for task, info in self.saved_custom_pipelines.items() if task not in registered}

    @custom_pipelines.setter
    def custom_pipelines(self, value: dict[str, Any] | None) -> None:
        self.__dict__["custom_pipelines"] = dict(value or {})  # what config.json holds (to_dict reads __dict__)

    @property
    def saved_custom_pipelines(self) -> dict[str, Any]:
        """Every pipeline ``config.json`` names (``custom_pipelines`` as saved)."""
        return dict(self.__dict__.get("custom_pipelines") or {})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.from_dict = classmethod(_checked_from_dict)  # an attribute of the class: before PreTrainedConfig's
        inherited = cls.__setattr__

        def __setattr__(self: Any, name: str, value: Any) -> None:  # an option goes into encoding_config
            if encoding_option(name) is None:
                inherited(self, name, value)
            else:
                value = self._checked_option(name, value)
                inherited(self, "encoding_config", {**(self.encoding_config or {}), name: value})

        cls.__setattr__ = __setattr__

    def __getattr__(self, name: str) -> Any:
        """An encoding option reads from ``encoding_config`` (its default where unset, or another encoding's)."""
        option = encoding_option(name)
        if option is None or "encoding_config" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        return (self.__dict__["encoding_config"] or {}).get(name, option.default)

    def _checked_option(self, name: str, value: Any) -> Any:
        if name not in own_options(self.number_encoding):
            owners = ", ".join(option_owners(name))
            raise ValueError(f"{name} is an option of {owners}, not of number_encoding={self.number_encoding!r} "
                             f"(its options: {', '.join(own_options(self.number_encoding)) or 'none'})")  # fmt: skip
        return value  # typed by _validate_number_fields (a model built on the config checks it again)

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, **kwargs: Any) -> Any:
        """A config for ``tokenizer``: ``vocab_size=len(tokenizer)``, its special-token ids and every number token id.

        The special ids (pad, bos, eos, ...: :attr:`tokenizer_token_ids`) the tokenizer has come from it, not
        the backbone's defaults (GPT-2's 50256 lies outside a new 300-token vocabulary). ``num_token_ids``
        takes all of ``tokenizer.num_token_ids``: a byte-level tokenizer (GPT-2, RoBERTa) has a second
        number token ``" [NUM]"`` for a number after a space. ``kwargs`` are further fields, and win.

        Example:
            >>> config = NumberGPT2Config.from_tokenizer(tokenizer, n_embd=64, n_layer=2, n_head=2)  # doctest: +SKIP
            >>> config.num_token_ids == tokenizer.num_token_ids  # doctest: +SKIP
            True
        """
        ids = cls.token_ids_of(tokenizer, kwargs.get("number_encoding"), kwargs.get("digit_lookahead", 0))
        fields = {"vocab_size": len(tokenizer), **ids}
        return cls(**fields | kwargs)

    @classmethod
    def token_ids_of(
        cls, tokenizer: Any, number_encoding: str | None = None, digit_lookahead: int = 0
    ) -> dict[str, Any]:
        """The config fields of ``tokenizer``'s ids: the special tokens it has (:attr:`tokenizer_token_ids`),
        its number tokens, its digit tokens where ``number_encoding`` adds values to them (``digits``), and the
        tokens ``0`` ... ``9`` for ``digit_lookahead`` (a ``ValueError`` naming those it lacks)."""
        special = {name: getattr(tokenizer, attribute) for name, attribute in cls.tokenizer_token_ids.items()}
        numbers = {"num_token_id": tokenizer.num_token_id, "num_token_ids": list(tokenizer.num_token_ids)}
        if number_encoding is not None and get_encoding(number_encoding).adds_digit_values:
            numbers["digit_tokens"] = digit_token_table(tokenizer)
        if digit_lookahead:
            vocab = tokenizer.get_vocab()
            missing = [digit for digit in "0123456789" if digit not in vocab]
            if missing:
                raise ValueError(f"digit_lookahead scores the tokens 0 ... 9; the tokenizer lacks {missing}")
            numbers["digit_lookahead_ids"] = [vocab[digit] for digit in "0123456789"]
        return {name: i for name, i in special.items() if i is not None} | numbers

    def _validate_number_fields(self) -> None:
        get_encoding(self.number_encoding)  # a ValueError listing the registered encodings
        if self.num_token_id is not None and self.num_token_id < 0:
            raise ValueError(f"num_token_id must be a token id >= 0, got {self.num_token_id}")
        if not self.num_token_ids:
            self.num_token_ids = [] if self.num_token_id is None else [self.num_token_id]
        self.num_token_ids = [int(i) for i in self.num_token_ids]
        if self.num_token_ids and self.num_token_id not in self.num_token_ids:
            raise ValueError(f"num_token_ids={self.num_token_ids} must contain num_token_id={self.num_token_id}")
        self._check_token_ids_in_vocabulary()
        if self.tokenizer_vocab_size is not None and not 1 <= self.tokenizer_vocab_size <= self.vocab_size:
            raise ValueError(f"tokenizer_vocab_size must be in [1, vocab_size={self.vocab_size}] (or None), got "
                             f"{self.tokenizer_vocab_size}")
        if not (math.isfinite(self.number_loss_weight) and self.number_loss_weight >= 0):
            raise ValueError(f"number_loss_weight must be a finite number >= 0, got {self.number_loss_weight}")
        self._check_number_output()
        self._check_digit_lookahead()
        scaling = NumberScaling.from_config(self)  # a ValueError naming the scaling field
        self.number_scaling_shift, self.number_scaling_scale = scaling.shift, scaling.scale  # floats in config.json
        own = own_options(self.number_encoding)  # the defaults of those not given; another encoding's (after a
        given = {name: value for name, value in (self.encoding_config or {}).items() if name in own}  # change) go
        self.__dict__["encoding_config"] = {name: coerce_option(option, given.get(name, option.default))
                                            for name, option in own.items()}  # fmt: skip
        get_encoding(self.number_encoding).validate_options(self)


    def _check_digit_lookahead(self) -> None:
        lookahead, weight, ids = self.digit_lookahead, self.digit_lookahead_weight, self.digit_lookahead_ids
        if isinstance(lookahead, bool) or not isinstance(lookahead, int) or not 0 <= lookahead <= MAX_LOOKAHEAD:
            raise ValueError(f"digit_lookahead must be an integer in [0, {MAX_LOOKAHEAD}], got {lookahead!r}")
        if not (isinstance(weight, (int, float)) and math.isfinite(weight) and weight >= 0):
            raise ValueError(f"digit_lookahead_weight must be a finite number >= 0, got {weight!r}")
        if not isinstance(confidence := self.digit_lookahead_confidence, bool):
            raise ValueError(f"digit_lookahead_confidence must be true or false, got {confidence!r}")
        power = self.digit_lookahead_confidence_power
        if isinstance(power, bool) or not isinstance(power, (int, float)) or not (math.isfinite(power) and power > 0):
            raise ValueError(f"digit_lookahead_confidence_power must be a finite number > 0, got {power!r}")
        if power != 1 and not confidence:
            raise ValueError("digit_lookahead_confidence_power raises the digit lookahead's confidence weights to a "
                             "power; set digit_lookahead_confidence too")
        if self.digit_lookahead_mean not in LOOKAHEAD_MEANS:
            raise ValueError(f"digit_lookahead_mean must be one of {', '.join(LOOKAHEAD_MEANS)}, got "
                             f"{self.digit_lookahead_mean!r}")
        self._check_digit_lookahead_layer()
        if not isinstance(conditioned := self.digit_lookahead_conditioned, bool):
            raise ValueError(f"digit_lookahead_conditioned must be true or false, got {conditioned!r}")
        if conditioned and not lookahead:
            raise ValueError("digit_lookahead_conditioned gives the digit lookahead's heads the digits between; set "
                             "digit_lookahead too")
        if not isinstance(leading := self.digit_lookahead_leading, bool):
            raise ValueError(f"digit_lookahead_leading must be true or false, got {leading!r}")
        if not leading and not lookahead:
            raise ValueError("digit_lookahead_leading=False keeps the digit lookahead off a number's first digit; set "
                             "digit_lookahead too")
        if not lookahead:
            return
        if get_encoding(self.number_encoding).has_number_module and self.number_output != "digits":
            raise ValueError(
                f"digit_lookahead scores the digit tokens a model writes; number_encoding={self.number_encoding!r} "
                "writes numbers as its number token (use it with a digit-writing encoding, or number_output='digits')"
            )
        if ids is None or len(ids) != 10 or not all(isinstance(i, int) and 0 <= i < self.vocab_size for i in ids):
            raise ValueError(
                f"digit_lookahead_ids must be the ten ids of the tokens 0 ... 9, each in [0, vocab_size="
                f"{self.vocab_size}), got {ids!r} (from_tokenizer fills it)"
            )

    def _check_digit_lookahead_layer(self) -> None:
        layer, layers = self.digit_lookahead_layer, self.get_text_config().num_hidden_layers
        if layer is None:
            return
        if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer < layers:
            raise ValueError(f"digit_lookahead_layer must be None (the last hidden state) or a layer in "
                             f"[1, {layers - 1}] (the text model has {layers}), got {layer!r}")
        if not self.digit_lookahead:
            raise ValueError("digit_lookahead_layer sets the layer the digit lookahead's heads read; set "
                             "digit_lookahead too")

    def _check_number_output(self) -> None:
        if self.number_output not in NUMBER_OUTPUTS:
            raise ValueError(f"number_output={self.number_output!r} is unknown; allowed: {', '.join(NUMBER_OUTPUTS)}")
        if self.number_output == "digits" and not get_encoding(self.number_encoding).has_number_module:
            raise ValueError(
                f"number_output='digits' reads the prompt's numbers through a number module; number_encoding="
                f"{self.number_encoding!r} has none (it writes the backbone's digits already)"
            )

    def _check_token_ids_in_vocabulary(self) -> None:
        """A ``ValueError`` naming the field for a special-token id outside ``[0, vocab_size)``.

        The number ids are left out: adapting a plain checkpoint loads its config before the embeddings grow
        to hold them (``from_pretrained_backbone``).
        """
        for name in _SPECIAL_ID_FIELDS:
            value = getattr(self, name, None)
            values = value if isinstance(value, (list, tuple)) else [value]
            if any(i is not None and not 0 <= i < self.vocab_size for i in values):
                raise ValueError(
                    f"{name}={value} lies outside the vocabulary: token ids must be in [0, {self.vocab_size}) "
                    f"(vocab_size={self.vocab_size}); {type(self).__name__}.from_tokenizer(tokenizer) takes them "
                    "from the tokenizer"
                )


_SPECIAL_ID_FIELDS = ("pad_token_id", "bos_token_id", "eos_token_id", "cls_token_id", "sep_token_id")


def _checked_from_dict(cls: type, config_dict: dict[str, Any], **kwargs: Any) -> Any:
    """``PreTrainedConfig.from_dict`` (how a saved ``config.json`` loads), refusing a saved number config that
    lacks a field of its encoding (:func:`check_saved_config`; ``kwargs`` that set it count).

    ``kwargs`` that are config fields go into the construction, so the validation sees the values the config
    ends with (transformers would set them after it, unchecked).
    """
    check_saved_config(config_dict, cls.model_type, kwargs)
    fields = {key: kwargs.pop(key) for key in list(kwargs) if key in cls.__dataclass_fields__ or encoding_option(key)}
    return PreTrainedConfig.from_dict.__func__(cls, options_in_sub_dict(config_dict, fields), **kwargs)


__all__ = ["NumberConfigFields"]
