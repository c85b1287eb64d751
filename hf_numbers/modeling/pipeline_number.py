"""Pipelines that return numbers: ``number-generation`` (causal models) and ``number-fill-mask`` (masked models).

``import hf_numbers`` registers both (:func:`register_pipelines`), and every saved model names its
task in ``config.json`` (``custom_pipelines``) with this file beside it, so a checkpoint serves
numbers, in the data's units, even where hf_numbers is not installed (docs/pipelines.md).

Example:
    >>> from transformers import pipeline
    >>> pipe = pipeline("number-generation", model="runs/demo/final", trust_remote_code=True)  # doctest: +SKIP
    >>> pipe('{"data":[41.2,40.8,40.1,')  # doctest: +SKIP
    [{'generated_text': '{"data":[41.2,40.8,40.1,39.6]}', 'numbers': [39.6]}]
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LogitsProcessorList, Pipeline

from .checks import check_tokenizer_matches
from .generation_number_tokens import NumberTokensForNumbers
from .parsing import find_numbers

__all__ = ["PIPELINE_TASKS", "NumberFillMaskPipeline", "NumberGenerationPipeline", "register_pipelines"]

_FLOAT64_MAX = torch.finfo(torch.float64).max


class _TextPipeline(Pipeline):
    """What both pipelines share: a tokenizer and nothing else; one text per call of ``preprocess``."""

    _load_processor = False
    _load_image_processor = False
    _load_video_processor = False
    _load_feature_extractor = False
    _load_tokenizer = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """transformers' ``Pipeline``, refusing a model and a tokenizer that do not belong together."""
        super().__init__(*args, **kwargs)
        if getattr(self.model.config, "number_encoding", None) is None:
            raise ValueError(
                f"{self.task or type(self).__name__} needs a number model (a Number* config with number_encoding), "
                f"got a {type(self.model.config).__name__}"
            )
        check_tokenizer_matches(self.model, self.tokenizer)  # number ids, scheme and size; e.g. another run's

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Run on one text or a list of texts (one at a time: ``batch_size`` 1, which number values need)."""
        batch_size = kwargs.get("batch_size", getattr(self, "_batch_size", None))
        if batch_size not in (None, 1):
            raise ValueError(f"number pipelines run one text at a time (batch_size=1), got batch_size={batch_size}; "
                             "a list of texts is fine")
        return super().__call__(inputs, *args, **kwargs)

    def _encode(self, text: Any) -> dict[str, torch.Tensor]:
        if not isinstance(text, str):
            raise ValueError(f"{self.task or type(self).__name__} takes text (a str or a list of str), got {text!r}")
        return dict(self.tokenizer(text, return_tensors="pt"))


class NumberGenerationPipeline(_TextPipeline):
    """``pipeline("number-generation")``: continue a text and return the numbers the model writes.

    Each text gives ``[{"generated_text": str, "numbers": [float, ...]}]``: the prompt and its
    continuation (only the continuation with ``return_full_text=False``) and the values of the
    numbers in the continuation, in order, in the data's units. Generation is greedy with at most
    20 new tokens unless ``max_new_tokens``, ``do_sample`` or other ``generate`` arguments say otherwise.

    Trailing spaces of the prompt are dropped where the number token carries the space before a
    number (byte-level tokenizers; docs/pipelines.md says why). A ``[NUM]`` model writes numbers only as
    number tokens (:class:`NumberTokensForNumbers`: no digit token where the tokenizer would read a number, so
    the text reads back as it was written); ``number_tokens_only=False`` leaves the scores as they are. A
    ``number_output="digits"`` model writes digits instead, and keeps the prompt's spaces.

    Example:
        >>> pipe = pipeline("number-generation", model="runs/demo/final")  # doctest: +SKIP
        >>> pipe(prompt, max_new_tokens=3)[0]["numbers"]  # doctest: +SKIP
        [46.81]
    """

    def _sanitize_parameters(
        self, return_full_text: bool | None = None, number_tokens_only: bool | None = None, **generate_kwargs: Any
    ) -> tuple[dict, dict, dict]:
        postprocess = {} if return_full_text is None else {"return_full_text": bool(return_full_text)}
        if number_tokens_only is not None:
            generate_kwargs["number_tokens_only"] = bool(number_tokens_only)
        return {}, generate_kwargs, postprocess

    def preprocess(self, text: str) -> dict[str, Any]:
        if isinstance(text, str) and getattr(self.tokenizer, "spaced_num_token", False) and self._writes_num_tokens:
            text = text.rstrip(" ")  # the space before a number belongs to the number's token
        return {"prompt_text": text, **self._encode(text)}

    @property
    def _writes_num_tokens(self) -> bool:
        """The model writes its numbers as number tokens (not a text baseline, not ``number_output="digits"``)."""
        return bool(self.tokenizer.num_token_ids) and self.model.config.number_output == "num_token"

    def _forward(self, inputs: dict[str, Any], **generate_kwargs: Any) -> dict[str, Any]:
        prompt_text = inputs.pop("prompt_text")
        settings = {"max_new_tokens": 20, "do_sample": False, "pad_token_id": self.tokenizer.pad_token_id}
        if generate_kwargs.pop("number_tokens_only", True) and self._writes_num_tokens:
            if getattr(self, "_number_tokens", None) is None:  # built once: it reads the whole vocabulary
                self._number_tokens = NumberTokensForNumbers(self.tokenizer)
            processors = LogitsProcessorList(generate_kwargs.pop("logits_processor", None) or [])
            settings["logits_processor"] = LogitsProcessorList([*processors, self._number_tokens])
        settings |= generate_kwargs | {"return_dict_in_generate": True}
        output = self.model.generate(**inputs, **settings)
        return {
            "prompt_text": prompt_text,
            "prompt_length": inputs["input_ids"].shape[1],
            "sequences": output.sequences,
            "numbers": getattr(output, "numbers", None),  # None for a text baseline
        }

    def postprocess(self, outputs: dict[str, Any], return_full_text: bool = True) -> list[dict[str, Any]]:
        ids, length = outputs["sequences"][0], outputs["prompt_length"]
        written = None  # a text baseline: the numbers are in the text
        if outputs["numbers"] is not None:
            values = outputs["numbers"][0].double()
            written = values.nan_to_num(posinf=_FLOAT64_MAX, neginf=-_FLOAT64_MAX)  # ±inf: past a log scaling

        def decode(part: slice) -> str:
            numbers = None if written is None else written[part]
            return self.tokenizer.decode(ids[part], input_numbers=numbers, skip_special_tokens=True)

        full, prompt = decode(slice(None)), decode(slice(None, length))
        continuation = full[len(prompt) :] if full.startswith(prompt) else decode(slice(length, None))
        if written is None:
            numbers = [span.value for span in find_numbers(continuation)]
        else:
            numbers = values[length:][self.tokenizer.number_mask(ids[length:])].tolist()
        text = outputs["prompt_text"] + continuation if return_full_text else continuation
        return [{"generated_text": text, "numbers": numbers}]


class NumberFillMaskPipeline(_TextPipeline):
    """``pipeline("number-fill-mask")``: the most likely tokens at each mask, with the value of a number.

    For a text with one mask token, a list of ``top_k`` (default 5) dicts: ``score``, ``token``
    (id), ``token_str``, ``value`` (the number in the data's units where the token is a number,
    else None) and ``sequence`` (the text with the mask filled). With several masks, one such list
    per mask, as transformers' ``fill-mask`` returns. A text without a mask token is a ``ValueError``.

    Example:
        >>> fill = pipeline("number-fill-mask", model="runs/lookup-bert/final")  # doctest: +SKIP
        >>> fill("a is 1.5, b is [MASK]", top_k=1)  # doctest: +SKIP
        [{'score': 0.97, 'token': 7, 'token_str': '2.25', 'value': 2.25, 'sequence': 'a is 1.5, b is 2.25'}]
    """

    def _sanitize_parameters(self, top_k: int | None = None) -> tuple[dict, dict, dict]:
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
        return {}, {}, {} if top_k is None else {"top_k": top_k}

    def preprocess(self, text: str) -> dict[str, Any]:
        inputs = self._encode(text)
        if not (inputs["input_ids"] == self.tokenizer.mask_token_id).any():
            raise ValueError(f"the text holds no mask token {self.tokenizer.mask_token!r} to fill: {text[:80]!r}")
        return inputs

    def _forward(self, inputs: dict[str, Any]) -> dict[str, Any]:
        outputs = self.model(**inputs)
        return {
            "input_ids": inputs["input_ids"],
            "input_numbers": inputs["input_numbers"],
            "logits": outputs.logits,
            "number_predictions": outputs.number_predictions,  # None for a text baseline
        }

    def postprocess(self, outputs: dict[str, Any], top_k: int = 5) -> list[Any]:
        ids, numbers = outputs["input_ids"][0], outputs["input_numbers"][0].double()
        predictions = outputs["number_predictions"]
        masks = torch.nonzero(ids == self.tokenizer.mask_token_id).flatten().tolist()
        number_ids = set(self.tokenizer.num_token_ids)
        single = len(masks) == 1  # as in transformers: the other masks stay visible in each sequence
        result = []
        for position in masks:
            probabilities = outputs["logits"][0, position, : len(self.tokenizer)].float().softmax(-1)  # no padded row
            scores, tokens = probabilities.topk(min(top_k, probabilities.numel()))
            row = []
            for score, token in zip(scores.tolist(), tokens.tolist()):
                filled, values = ids.clone(), numbers.clone()
                filled[position] = token
                value = None
                if token in number_ids and predictions is not None:
                    value = float(predictions[0, position])
                    values[position] = min(max(value, -_FLOAT64_MAX), _FLOAT64_MAX)  # ±inf: past a log scaling
                    token_str = self.tokenizer.decode([token], input_numbers=[float(values[position])])
                else:
                    token_str = self.tokenizer.decode([token])
                    if predictions is None:  # a text baseline: a token whose text is a number
                        spans = find_numbers(token_str.strip())
                        whole = len(spans) == 1 and spans[0].end - spans[0].start == len(token_str.strip())
                        value = spans[0].value if whole else None
                sequence = self.tokenizer.decode(filled, input_numbers=values, skip_special_tokens=single)
                row.append(
                    {"score": score, "token": token, "token_str": token_str, "value": value, "sequence": sequence}
                )
            result.append(row)
        return result[0] if single else result


PIPELINE_TASKS = {
    True: ("number-generation", NumberGenerationPipeline, "AutoModelForCausalLM"),
    False: ("number-fill-mask", NumberFillMaskPipeline, "AutoModelForMaskedLM"),
}
"""For a causal (True) or masked (False) model: its pipeline task, class and Auto class."""


def custom_pipelines(causal: bool) -> dict[str, dict[str, Any]]:
    """The ``custom_pipelines`` entry of ``config.json`` for a causal or masked model (``pipeline()`` reads it).

    Example:
        >>> custom_pipelines(True)
        {'number-generation': {'impl': 'pipeline_number.NumberGenerationPipeline', 'pt': ['AutoModelForCausalLM']}}
    """
    task, pipeline_class, auto_class = PIPELINE_TASKS[causal]
    module = pipeline_class.__module__.rsplit(".", 1)[-1]
    return {task: {"impl": f"{module}.{pipeline_class.__name__}", "pt": [auto_class]}}


def register_pipelines() -> None:
    """Register ``number-generation`` and ``number-fill-mask`` with transformers' ``PIPELINE_REGISTRY``.

    Then ``pipeline("number-generation", model=path)`` uses these classes (no remote code needed).
    Safe to call more than once.

    Example:
        >>> register_pipelines()
        >>> from transformers.pipelines import PIPELINE_REGISTRY
        >>> "number-fill-mask" in PIPELINE_REGISTRY.get_supported_tasks()
        True
    """
    import transformers
    from transformers.pipelines import PIPELINE_REGISTRY

    for task, pipeline_class, auto_class in PIPELINE_TASKS.values():
        if PIPELINE_REGISTRY.supported_tasks.get(task, {}).get("impl") is not pipeline_class:
            PIPELINE_REGISTRY.register_pipeline(
                task, pipeline_class=pipeline_class, pt_model=getattr(transformers, auto_class), type="text"
            )
