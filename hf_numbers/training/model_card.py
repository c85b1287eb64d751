"""The model card (``README.md``) written next to a trained model, ready for ``push_to_hub``."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..evaluation import format_metrics_table
from ..modeling import get_encoding
from ..modeling.number_scaling import NumberScaling
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
from transformers import AutoModel, AutoTokenizer

model = AutoModel.from_pretrained("{path}", trust_remote_code=True)
tokenizer = AutoTokenizer.from_pretrained("{path}", trust_remote_code=True)
batch = tokenizer(["..."], return_tensors="pt")   # input_ids, attention_mask, input_numbers
```

The model and tokenizer code ship with the checkpoint (`trust_remote_code=True` loads them
without hf_numbers installed). {scaling}

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


def write_model_card(
    folder: str | Path, args: NumberTrainingArguments, task: str, summary: dict[str, Any], config: Any
) -> Path:
    """Write ``README.md`` in ``folder`` from the run's arguments, metrics and model ``config`` (its scaling).

    Example:
        >>> write_model_card("runs/demo/final", args, "temperature", summary, model.config)  # doctest: +SKIP
    """
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
        steps=summary.get("steps"),
        metrics=format_metrics_table(summary.get("metrics", {})) if summary.get("metrics") else "not evaluated",
        arguments="\n".join(f"{k}: {v}" for k, v in asdict(args).items()),
    )
    path = Path(folder) / "README.md"
    path.write_text(text)
    return path
