"""The interface every number encoding implements (the encodings: ``encoding_<name>.py``, e.g. ``encoding_xval.py``).

A :class:`NumberEncoding` owns, for one way of representing numbers, the embedding at number
tokens, the number head, its loss and decoding, and describes itself (options, their validation
and fitting, scaling need) so that configs and training ask it instead of knowing it. The number
path runs in float32 or wider (never bf16/fp16, which would round values), with no Python branch on
tensor values and, under ``torch.compile``, fixed shapes, so the compiler traces it whole; a refused value is a
vectorised mask that :func:`refuse_where` turns into an error. docs/design.md tells the rest.

Example:
    >>> refuse_where(torch.tensor([False, False]), lambda: "never built")  # nothing refused: no error
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

__all__ = ["FILLER", "FLOAT32_MAX", "REFUSED", "EncodingOption", "NumberEncoding", "autocast_disabled", "refuse_where"]

FLOAT32_MAX = float(torch.finfo(torch.float32).max)
FILLER = 0.0
"""The value the number path computes with where there is no number (every encoding takes 0): the loss (and, under
torch.compile, the embedding) runs at every position, with fixed shapes, and keeps only the number positions."""
REFUSED = "the number model refused its inputs"
"""The start of the error a compiled model raises for a refused value (its assert cannot name the value: run the
batch without torch.compile for the full message, as ``hf-numbers train --torch_compile true`` does)."""


def refuse_where(bad: torch.Tensor, message: Callable[[], str]) -> None:
    """Raise ``ValueError(message())`` if any element of the bool tensor ``bad`` is set.

    ``message`` runs only then, so the check itself is a few vectorised operations and one host sync
    (``bad.any()``). Under ``torch.compile`` it is an asynchronous assert instead (no graph break), which
    raises a ``RuntimeError`` starting with :data:`REFUSED`.

    Example:
        >>> refuse_where(torch.tensor([False, True]), lambda: "the second value is bad")
        Traceback (most recent call last):
        ...
        ValueError: the second value is bad
    """
    if torch.compiler.is_compiling():
        torch._assert_async(~bad.any(), f"{REFUSED} (run it without torch.compile for the reason)")
    elif bad.any():
        raise ValueError(message())


def autocast_disabled(device: torch.device) -> contextlib.AbstractContextManager:
    """A context turning ``torch.autocast`` off on ``device`` (a no-op where autocast is not on)."""
    # is_autocast_available does not trace (a graph break in torch 2.11); a compiled device type has autocast
    available = torch.compiler.is_compiling() or torch.amp.is_autocast_available(device.type)
    if available and torch.is_autocast_enabled(device.type):
        return torch.autocast(device.type, enabled=False)
    return contextlib.nullcontext()


@dataclass(frozen=True)
class EncodingOption:
    """One config field of an encoding: its name in ``config.json``, type, default and help.

    A config keeps its encoding's options in ``encoding_config`` (saved with it, read as attributes:
    ``encoding_config.py``); every option of every registered encoding is an optional ``hf-numbers train`` argument.

    Attributes:
        name: the config field, prefixed with the encoding's name (``fone_int_digits``).
        type: ``int``, ``float``, ``bool`` or ``str``.
        default: the value of a config that does not set it.
        help: what it means and which values are allowed.
        fitted: whether :meth:`NumberEncoding.fit_options` sets it from the data when training.

    Example:
        >>> EncodingOption("fone_frac_digits", int, 3, "FoNE fractional digit places, >= 0", fitted=True).default
        3
    """

    name: str
    type: type
    default: Any
    help: str
    fitted: bool = False


class NumberEncoding(nn.Module, abc.ABC):
    """Interface of a number encoding (input embedding, head, loss, decoding).

    Shapes: ``B`` batch, ``L`` sequence length, ``H`` hidden size. ``numbers`` are float64
    values aligned with the tokens; ``is_num`` marks the number tokens. Positions outside
    ``is_num`` are never read, so their fill value does not matter.

    Example:
        >>> from hf_numbers import NumberGPT2Config, build_number_encoding
        >>> enc = build_number_encoding(NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="xval"))
        >>> hidden = torch.zeros(1, 3, 32)
        >>> enc.decode(enc.head(hidden)).shape
        torch.Size([1, 3])
    """

    name: ClassVar[str] = ""
    options: ClassVar[tuple[EncodingOption, ...]] = ()
    """The encoding's config fields (see :class:`EncodingOption`)."""
    needs_scaling: ClassVar[bool] = False
    """Whether values should reach this module scaled (xVal: a small range): training fits the config's
    ``NumberScaling`` (``number_scaling.py``, the task's kind) to the training numbers and the model applies it;
    False: the scaling stays the identity and the encoding sees raw values (it reads digits or bits)."""
    scales_embedding: ClassVar[bool] = False
    """True where the value multiplies the token embedding (xVal). On a backbone whose embeddings end with a
    LayerNorm (BERT, RoBERTa), the model then applies :meth:`embed` to the normalised embeddings instead of the
    word embeddings, so that the trunk's input stays linear in the value (the norm would divide it out)."""
    continuous_output: ClassVar[bool] = False
    """True where :meth:`decode` returns a regression output, whose last bits depend on the batch's
    shapes (xVal); False where it picks among discrete values (digits, bits, bins), which repeat exactly."""
    has_number_module: ClassVar[bool] = True
    """True: the model carries this module (and the tokenizer one ``[NUM]`` token per number). The
    text baselines (``encoding_text.py``) are registry entries without one."""
    adds_digit_values: ClassVar[bool] = False
    """True where the model adds a value embedding to the backbone's own digit tokens (``digits``,
    ``encoding_digits.py``); the config then holds the vocabulary's digit tokens (``digit_tokens``)."""

    @classmethod
    def validate_options(cls, config: Any) -> None:
        """Raise ``ValueError`` naming the field and the allowed values if an option of ``config`` is invalid.

        Called by every ``Number*Config`` at construction, whichever encoding it selects.
        """

    @classmethod
    def fit_options(cls, values: np.ndarray, given: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """Option values (of :attr:`options` marked ``fitted``) that represent every float64 value of ``values``.

        Training calls it with every number of every split and the options the user gave
        (``given``, which win over fitted ones and may shape the fit).
        """
        return {}

    @classmethod
    def data_out_of_range(
        cls, values: np.ndarray, fields: Mapping[str, Any], hidden_size: int
    ) -> tuple[np.ndarray, str]:
        """Mask of the data's ``values`` no config with ``fields`` (others fitted) represents; the range in words."""
        return ~np.isfinite(values), "finite values"

    @classmethod
    def tokenizer_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments of the number tokenizer this encoding needs, from its ``options``.

        ``{}``: the default tokenizer, one ``[NUM]`` token per number (the text baselines ask for
        a ``number_scheme`` instead).
        """
        return {}

    def __init__(self, config: Any):
        super().__init__()
        self.hidden_size = int(config.hidden_size)
        self.initializer_range = float(getattr(config, "initializer_range", 0.02) or 0.02)

    # ------------------------------------------------------------------ per encoding
    @abc.abstractmethod
    def allowed_range(self) -> str:
        """Human-readable description of the values this encoding accepts."""

    @abc.abstractmethod
    def _out_of_range(self, values: torch.Tensor) -> torch.Tensor:
        """Bool mask of the finite float64 ``values`` (1-D) this encoding cannot represent."""

    @abc.abstractmethod
    def _embed_values(self, token_embeds: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Embeddings ``(N, H)`` of ``N`` tokens from their token embeddings and float64 values.

        Eager, :meth:`embed` passes the number tokens; compiled, every token (fixed shapes), the rows that are
        no number holding :data:`FILLER` (0.0, a value every encoding takes, so a check never flags them)."""

    @abc.abstractmethod
    def head(self, hidden_states: torch.Tensor) -> torch.Tensor:
        """Raw number-head outputs for every position of ``hidden_states`` ``(B, L, H)``."""

    @abc.abstractmethod
    def _item_losses(self, outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Loss ``(N,)`` of each selected head output (first dim ``N``) against its float64 target."""

    @abc.abstractmethod
    def decode(self, head_output: torch.Tensor) -> torch.Tensor:
        """Decoded float64 value ``(B, L)`` at every position (finite for every head output)."""

    @abc.abstractmethod
    def init_parameters(self) -> None:
        """Initialise this encoding's parameters (skips weights already loaded from a checkpoint)."""

    # ------------------------------------------------------------------ shared
    @property
    def compute_dtype(self) -> torch.dtype:
        """The dtype of this module's parameters: float32 under mixed precision (float32 weights)."""
        return next(self.parameters()).dtype

    def refused(self, numbers: torch.Tensor, is_num: torch.Tensor) -> torch.Tensor:
        """Bool mask of the ``is_num`` positions whose value is non-finite or out of range (no host sync).

        Example:
            >>> nan = float("nan")
            >>> enc.refused(torch.tensor([[nan, nan]]), torch.tensor([[True, False]])).tolist()  # doctest: +SKIP
            [[True, False]]
        """
        values = numbers.double()
        finite = torch.isfinite(values)
        return is_num & ~(finite & ~self._out_of_range(torch.where(finite, values, FILLER)))

    def describe_refused(self, numbers: torch.Tensor, bad: torch.Tensor) -> str:
        """What ``numbers`` holds at the ``bad`` positions (the first value, the count) and what this encoding accepts.

        The caller that knows what ``numbers`` is puts its name in front, so every refusal reads alike.

        Example:
            >>> f"number_labels {enc.describe_refused(labels, enc.refused(labels, mask))}"  # doctest: +SKIP
            "number_labels holds nan at a number position (1 such values); the 'xval' encoding accepts ..."
        """
        return (
            f"holds {numbers[bad][0].item()!r} at a number position ({int(bad.sum())} such values); "
            f"the {self.name!r} encoding accepts {self.allowed_range()}"
        )

    def embed(self, inputs_embeds: torch.Tensor, numbers: torch.Tensor, is_num: torch.Tensor) -> torch.Tensor:
        """Token embeddings ``(B, L, H)`` with the number embedding at ``is_num`` positions, others untouched.

        ``numbers`` must have passed :meth:`refused` (other positions are never read). The number
        embeddings are computed with autocast off, from float32 (or float64) token embeddings, then cast to
        the dtype of ``inputs_embeds``, saturating at its largest finite value (fp16: 65504) instead of
        becoming inf. Eager, only the number positions are computed (an encoding's MLP costs per position);
        under ``torch.compile`` every position is (fixed shapes, no gather) and the number positions kept.

        Example:
            >>> out = enc.embed(torch.ones(1, 2, 32), torch.tensor([[1.0, 2.5]], dtype=torch.float64),
            ...                 torch.tensor([[False, True]]))  # doctest: +SKIP
        """
        compiling = torch.compiler.is_compiling()
        if not compiling and not torch.is_grad_enabled() and not is_num.any():
            return inputs_embeds  # most generation steps (training keeps the graph: the encoding's parameters
            # get their zero gradients, as DDP expects)
        if compiling:
            rows, values = inputs_embeds.flatten(0, -2), torch.where(is_num, numbers.double(), FILLER).flatten()
        else:
            rows, values = inputs_embeds[is_num], numbers[is_num].double()
        with autocast_disabled(inputs_embeds.device):
            new = self._embed_values(rows.to(torch.promote_types(rows.dtype, torch.float32)), values)
        limit = torch.finfo(inputs_embeds.dtype).max
        new = new.clamp(-limit, limit).to(inputs_embeds.dtype)
        if compiling:
            return torch.where(is_num[..., None], new.view_as(inputs_embeds), inputs_embeds)
        return inputs_embeds.index_put((is_num,), new)

    def masked_loss(self, head_output: torch.Tensor, number_labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean number loss over the ``mask`` positions of labels already checked (:meth:`refused`): the item losses at
        every position (fixed shapes), averaged over ``mask``; 0 (still part of the graph) when ``mask`` is empty.

        ``head_output`` may also hold only the selected rows (``(N, ...)``, with ``number_labels`` and ``mask``
        of shape ``(N,)``). Labels elsewhere than ``mask`` are never read.

        Example:
            >>> loss = enc.masked_loss(enc.head(hidden), labels, labels_are_numbers)  # doctest: +SKIP
        """
        targets = torch.where(mask, number_labels.double(), FILLER)
        per_item = self._item_losses(head_output.flatten(0, mask.dim() - 1), targets.flatten())
        total = torch.where(mask.flatten(), per_item, 0.0).sum()
        return (total / mask.sum().clamp(min=1)).to(head_output.dtype)
