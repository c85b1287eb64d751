"""The model card (``README.md``) written next to a trained model, ready for ``push_to_hub``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..evaluation import format_metrics_table
from ..modeling import find_numbers, get_encoding
from ..modeling.number_scaling import NumberScaling
from ..modeling.pipeline_number import PIPELINE_TASKS
from .arguments import NumberTrainingArguments

_CARD = """---
library_name: transformers
tags:
- hf_numbers
- number-encoding
- {encoding}
pipeline_tag: {pipeline}
---

# {backbone} + {encoding} number encoding, trained on `{task}`

A number-aware {backbone} made with hf_numbers: {how} {origin}

## Use

```python
from transformers import pipeline

pipe = pipeline(model="{path}", trust_remote_code=True)  # the `{pipeline_task}` pipeline saved with the model
{call}
```

{returns} The model, tokenizer and pipeline code ship with the checkpoint (`trust_remote_code=True`
loads them without hf_numbers installed; with hf_numbers imported, `pipeline("{pipeline_task}", model=...)`
needs no remote code). {scaling}

## Evaluation

{steps} optimizer steps. Metrics per split (answers predicted where greedy decoding would
emit them, or masked for masked LMs; exact match at the answers' written precision):

```
{metrics}
```

## Training arguments

```
{arguments}
```

## Limits

Trained from generated or packaged data for a research comparison of number encodings; it
has not been evaluated outside the splits above.
"""


def _usage(causal: bool, example: Mapping[str, Any] | None, mask_token: str | None) -> tuple[str, str]:
    """The pipeline call of the card's snippet (on ``example``, a task row, when given) and what it returns."""
    if example is not None and not {"text", "prompt", "answer_index", "answer_text"} <= set(example):
        example = None  # not a task with a number answer (e.g. masked words): a placeholder text
    answer = f" (the true value: {example['answer_text']})" if example is not None else ""
    if causal:
        prompt = example["prompt"] if example is not None else "text that a number follows:"
        return (
            f"pipe({prompt!r}, max_new_tokens=3)",
            f"It returns `[{{\"generated_text\": ..., \"numbers\": [...]}}]`: the continuation and the values of "
            f"the numbers it writes{answer}.",
        )
    text = f"a number goes here: {mask_token}"
    if example is not None:
        span = find_numbers(example["text"])[example["answer_index"]]
        text = example["text"][: span.start] + str(mask_token) + example["text"][span.end :]
    return (
        f"pipe({text!r}, top_k=3)",
        "It returns, for the mask, dicts with `score`, `token_str`, `sequence` and `value`: the number where the "
        f"filled token is a number token, else None{answer}.",
    )


def write_model_card(
    folder: str | Path,
    args: NumberTrainingArguments,
    task: str,
    summary: dict[str, Any],
    config: Any,
    example: Mapping[str, Any] | None = None,
    mask_token: str | None = None,
) -> Path:
    """Write ``README.md`` in ``folder`` from the run's arguments, metrics and model ``config`` (its scaling).

    The usage snippet calls the model's pipeline on ``example`` (a row of the task: its ``prompt``, or
    for a masked LM its ``text`` with the answer replaced by ``mask_token``) when given.

    Example:
        >>> write_model_card("runs/demo/final", args, "temperature", summary, model.config,
        ...                  dataset["test"][0], tokenizer.mask_token)  # doctest: +SKIP
    """
    call, returns = _usage(args.causal, example, mask_token)
    scaling = NumberScaling.from_config(config)
    scaling_text = (
        "Numbers are ordinary tokens of the text; there is no number scaling."
        if not get_encoding(args.number_encoding).has_number_module
        else "Values go in and come out in the data's own units: the number scaling is part of `config.json` "
        f"({', '.join(f'`{k}={v}`' for k, v in scaling.to_config().items())}) and the model applies it itself."
    )
    origin = (
        (
            f"Adapted from the pretrained checkpoint `{args.pretrained}`"
            + (" with a frozen trunk." if args.freeze_backbone else ".")
        )
        if args.pretrained
        else "Trained from scratch."
    )
    how = (
        f"every number in the text is one `[NUM]` token whose value enters the model through the "
        f"`{args.number_encoding}` encoding, and a number head predicts values."
        if get_encoding(args.number_encoding).has_number_module
        else f"a text baseline: the tokenizer writes every number as ordinary tokens (`{args.number_encoding}`), the "
        "model is the plain backbone, and a predicted number is parsed from the text it writes."
    )
    text = _CARD.format(
        how=how,
        encoding=args.number_encoding,
        pipeline=args.backbone_spec.pipeline_tag,
        backbone=args.backbone_spec.display_name,
        task=task,
        origin=origin,
        path=Path(folder).name,
        scaling=scaling_text,
        call=call,
        returns=returns,
        pipeline_task=PIPELINE_TASKS[args.causal][0],
        steps=summary.get("steps"),
        metrics=format_metrics_table(summary.get("metrics", {})) if summary.get("metrics") else "not evaluated",
        arguments="\n".join(f"{k}: {v}" for k, v in asdict(args).items()),
    )
    path = Path(folder) / "README.md"
    path.write_text(text)
    return path
