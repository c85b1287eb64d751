"""Producing numbers: generation for the causal model, mask filling for the masked models.

:class:`NumberGenerationMixin` makes ``generate`` carry ``input_numbers`` between steps:
the number head's prediction at the last position becomes the value of the token chosen there,
so a generated number token is fed back with its predicted value, and the output has
``numbers`` aligned with ``sequences``. The head runs only for steps that chose a number token
(the forward skips it and keeps its input hidden states), which keeps generation close to the
plain backbone's speed (``benchmarks/bench_generation.py``). :class:`NumberFillMaskMixin` adds
``fill_mask`` to the masked LMs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import torch
from torch.nn import functional as F
from transformers import GenerationConfig
from transformers.generation.configuration_utils import GenerationMode
from transformers.generation.utils import GenerateDecoderOnlyOutput
from transformers.utils import ModelOutput

from .checks import check_neutral_elsewhere, to_float64
from .parsing import NEUTRAL_NUMBER

__all__ = ["NumberFillMaskMixin", "NumberGenerateOutput", "NumberGenerationMixin"]

_SUPPORTED_MODES = (GenerationMode.GREEDY_SEARCH, GenerationMode.SAMPLE)


@dataclass
class NumberGenerateOutput(GenerateDecoderOnlyOutput):
    """``GenerateDecoderOnlyOutput`` plus ``numbers``: float64 ``(B, T)``, aligned with ``sequences``.

    ``numbers`` holds the prompt's ``input_numbers`` for the prompt, the predicted value at
    every generated number token and 1.0 (the tokenizer's fill value) at other generated tokens.
    """

    numbers: torch.DoubleTensor | None = None


class _NumberTrace:
    """The running ``input_numbers`` of one ``generate`` call, and the hidden states of its last step.

    ``hidden`` is what the number head would read at the last position of the last forward; the
    value of the token chosen there is decoded from it once that token is known to be a number.
    """

    __slots__ = ("numbers", "hidden")

    def __init__(self) -> None:
        self.numbers: torch.Tensor | None = None
        self.hidden: torch.Tensor | None = None


class NumberGenerationMixin:
    """``generate`` with numbers for the causal number model (greedy search and sampling)."""

    @torch.no_grad()
    def generate(
        self,
        inputs: torch.Tensor | None = None,
        generation_config: GenerationConfig | None = None,
        *,
        input_numbers: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> ModelOutput | torch.LongTensor:
        """transformers' ``generate``, with the values of number tokens read and written.

        Each number token it emits gets the number head's value, fed back as predicted. A text baseline
        (no number module) runs transformers' ``generate`` unchanged; a ``number_output="digits"`` model writes
        no number token (``suppress_tokens``), only digits. Modes and speed: docs/models.md.

        Args:
            inputs: the prompt's token ids (or ``input_ids=`` in ``kwargs``).
            generation_config: as in transformers.
            input_numbers: the prompt's values (the tokenizer's, the shape of ``input_ids``); needed where the
                prompt holds number tokens; ignored by a text baseline.
            **kwargs: transformers' ``generate`` arguments (greedy search or sampling, KV cache, left padding).

        Returns:
            With ``return_dict_in_generate=True`` a :class:`NumberGenerateOutput` whose ``numbers`` align with
            ``sequences``, in the data's units; else the token ids, as in transformers.

        Raises:
            ValueError: no prompt; number tokens without ``input_numbers``; ``input_numbers`` of another shape, or
                with a value at a token that is not a number token; beam search, assisted decoding or chunked
                prefill (the values of reordered beams or draft tokens are not tracked).

        Example:
            >>> batch = tokenizer(["x = 3.5, y ="], return_tensors="pt")  # doctest: +SKIP
            >>> out = model.generate(**batch, max_new_tokens=5, return_dict_in_generate=True)  # doctest: +SKIP
            >>> tokenizer.batch_decode(out.sequences, input_numbers=out.numbers)  # doctest: +SKIP
        """
        if self.number_encoding is None:  # a text encoding: numbers are ordinary tokens
            if self.digit_values is not None:  # value-aware digits read the prompt's numbers whole
                prompt = inputs if inputs is not None else kwargs.get("input_ids")
                kwargs["prompt_length"] = None if prompt is None else prompt.shape[1]
            return super().generate(inputs, generation_config, **kwargs)
        input_ids = inputs if inputs is not None else kwargs.get("input_ids")
        if input_ids is None:
            raise ValueError("generate() of a number model needs a prompt: pass input_ids (and input_numbers)")
        self._check_generation_mode(generation_config, kwargs)
        if self.config.number_output == "digits" and kwargs.get("suppress_tokens") is None:
            kwargs["suppress_tokens"] = list(self.config.num_token_ids)  # numbers in, digits out: it writes digits
        is_num = self.number_mask(input_ids)
        if input_numbers is None and is_num.any():
            raise ValueError("the prompt contains number tokens but input_numbers is None; pass their values")
        if input_numbers is None:
            input_numbers = torch.full(input_ids.shape, NEUTRAL_NUMBER, dtype=torch.float64, device=input_ids.device)
        input_numbers = to_float64(input_numbers, input_ids.device)
        if input_numbers.shape != input_ids.shape:  # (the first step's slice would hide a longer input_numbers)
            raise ValueError(
                f"input_numbers has shape {tuple(input_numbers.shape)} but input_ids has shape "
                f"{tuple(input_ids.shape)}; they must match (one value per token)"
            )
        check_neutral_elsewhere(input_ids, input_numbers, is_num, self.config.num_token_ids)
        # the loop runs in the model's units, so a generated value is fed back exactly as predicted
        scaling = self.number_scaling
        model_numbers = torch.where(is_num, scaling.transform(input_numbers), input_numbers)
        trace = _NumberTrace()
        output = super().generate(
            inputs,
            generation_config,
            input_numbers=model_numbers,
            scaled_numbers=True,
            number_trace=trace,
            **kwargs,
        )
        if isinstance(output, torch.Tensor):
            return output
        if trace.numbers.shape[1] == output.sequences.shape[1]:  # else transformers undid a last, extra step
            self._set_chosen_numbers(output.sequences, trace)  # the last chosen tokens
        sequences = output.sequences
        numbers = trace.numbers[:, : sequences.shape[1]]
        numbers = torch.where(self.number_mask(sequences), scaling.inverse(numbers), numbers)  # the data's units
        numbers[:, : input_ids.shape[1]] = input_numbers  # the prompt's values as given
        return NumberGenerateOutput(**output, numbers=numbers)

    def _check_generation_mode(self, generation_config: GenerationConfig | None, kwargs: dict[str, Any]) -> None:
        config = copy.deepcopy(generation_config if generation_config is not None else self.generation_config)
        config.update(**kwargs)
        mode = config.get_generation_mode(kwargs.get("assistant_model"))
        if mode not in _SUPPORTED_MODES:
            raise ValueError(
                f"number generation supports greedy search and sampling (num_beams=1, no assistant), got {mode!s}: "
                "the values of beams or draft tokens are not tracked"
            )
        if config.prefill_chunk_size is not None:
            raise ValueError("number generation does not support prefill_chunk_size; leave it None")

    def prepare_inputs_for_generation(
        self,
        input_ids: torch.LongTensor,
        input_numbers: torch.Tensor | None = None,
        number_trace: _NumberTrace | None = None,
        scaled_numbers: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """transformers' preparation plus ``input_numbers`` sliced like ``input_ids`` (and ``scaled_numbers``).

        The values of the tokens chosen since the last forward are set first (:meth:`_set_chosen_numbers`);
        the forward then skips the number head (``number_head=False``). A generated token that is not a
        number token already holds the neutral 1.0 (:meth:`_set_chosen_numbers`), so the slice needs no mask.
        """
        if number_trace is not None:
            self._set_chosen_numbers(input_ids, number_trace)
            kwargs["number_head"] = False
        if scaled_numbers:  # generate's loop: values in the model's units
            kwargs["scaled_numbers"] = True
        model_inputs = super().prepare_inputs_for_generation(input_ids, **kwargs)
        prompt_length = model_inputs.pop("prompt_length", None)
        if getattr(self, "digit_values", None) is not None:  # value-aware digits read runs on from earlier ids
            fed, places = model_inputs["input_ids"].shape[1], self.config.digits_places
            model_inputs["digit_context"] = input_ids[:, max(0, input_ids.shape[1] - fed - places) : -fed]
            model_inputs["prompt_length"] = prompt_length if fed == input_ids.shape[1] else 0  # the prompt, given
        if input_numbers is not None:
            ids = model_inputs["input_ids"]
            model_inputs["input_numbers"] = input_numbers[:, -ids.shape[1] :].to(ids.device)
        return model_inputs

    def _set_chosen_numbers(self, input_ids: torch.LongTensor, trace: _NumberTrace) -> None:
        """Write the value of each number token chosen at the last forward's positions into ``trace.numbers``.

        The number head runs on the stored hidden states only if one of those tokens is a number token.
        """
        if trace.hidden is None:
            return
        chosen = self.number_mask(input_ids[:, -trace.hidden.shape[1] :])
        if chosen.any():
            values = self._number_head(trace.hidden)[1].to(trace.numbers.device)
            trace.numbers[:, -chosen.shape[1] :] = torch.where(chosen, values, NEUTRAL_NUMBER)
        trace.hidden = None

    def _update_model_kwargs_for_generation(
        self,
        outputs: ModelOutput,
        model_kwargs: dict[str, Any],
        is_encoder_decoder: bool = False,
        num_new_tokens: int = 1,
    ) -> dict[str, Any]:
        """Append the value(s) of the token(s) about to be chosen: 1.0 until they are known to be numbers.

        The last hidden states go into the trace; the next preparation (or the end of ``generate``)
        decodes the values of the chosen number tokens from them.
        """
        model_kwargs = super()._update_model_kwargs_for_generation(
            outputs, model_kwargs, is_encoder_decoder=is_encoder_decoder, num_new_tokens=num_new_tokens
        )
        numbers, trace = model_kwargs.get("input_numbers"), model_kwargs.get("number_trace")
        if numbers is not None and trace is not None:
            model_kwargs["input_numbers"] = F.pad(numbers, (0, num_new_tokens), value=NEUTRAL_NUMBER)
            trace.numbers = model_kwargs["input_numbers"]
            trace.hidden = outputs.head_hidden_states[:, -num_new_tokens:]
        return model_kwargs


class NumberFillMaskMixin:
    """``fill_mask`` for the masked number models."""

    @torch.no_grad()
    def fill_mask(
        self,
        input_ids: torch.LongTensor,
        input_numbers: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        *,
        mask_token_id: int,
        **kwargs: Any,
    ) -> tuple[torch.LongTensor, torch.DoubleTensor]:
        """Fill every ``mask_token_id`` position with its most likely token, and numbers with their value.

        Returns ``(ids, numbers)``: the ids with each masked position replaced by the token head's argmax over
        the tokenizer's rows (``config.tokenizer_vocab_size``); the float64 numbers (the data's units) with the
        number head's value where that token is a number token and 1.0 (the tokenizer's fill value) at other
        filled positions. Other positions keep their ids and values. ``kwargs`` go to ``forward``. A text
        encoding fills tokens only (its numbers are tokens; ``numbers`` stays 1.0 at filled positions).

        Example:
            >>> batch = tokenizer(["it costs [MASK] dollars"], return_tensors="pt")  # doctest: +SKIP
            >>> ids, nums = model.fill_mask(**batch, mask_token_id=tokenizer.mask_token_id)  # doctest: +SKIP
            >>> tokenizer.decode(ids[0], input_numbers=nums[0], skip_special_tokens=True)  # doctest: +SKIP
        """
        outputs = self(input_ids=input_ids, input_numbers=input_numbers, attention_mask=attention_mask, **kwargs)
        masked = input_ids == mask_token_id
        token_logits = outputs.logits[..., : self.config.tokenizer_vocab_size]  # never a padded row
        ids = torch.where(masked, token_logits.argmax(-1), input_ids)
        if input_numbers is None:
            numbers = torch.full(input_ids.shape, NEUTRAL_NUMBER, dtype=torch.float64, device=input_ids.device)
        else:
            numbers = to_float64(input_numbers, input_ids.device)
        numbers = torch.where(masked, NEUTRAL_NUMBER, numbers)
        if outputs.number_predictions is None:  # a text encoding
            return ids, numbers
        filled_numbers = masked & self.number_mask(ids)
        return ids, torch.where(filled_numbers, outputs.number_predictions, numbers)
