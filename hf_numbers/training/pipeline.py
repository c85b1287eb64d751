"""From arguments to a trained, evaluated and saved model: data, tokenizer, scaler, model, training.

``run_training(args)`` is what ``hf-numbers train`` runs. The pieces are public so a script can
swap one (its own dataset, a pretrained backbone) and keep the rest.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import numpy as np
from accelerate.utils import set_seed
from datasets import DatasetDict, load_from_disk
from transformers import AutoModel, AutoTokenizer

from ..data import TASKS, NumberScaler, make_task, task_scaler
from ..data.collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM, prompt_lengths
from ..data.tasks import TASK_FILE
from ..data.tokenizer_training import train_number_tokenizer
from ..evaluation import (
    compute_number_metrics,
    format_metrics_table,
    plot_predicted_vs_true,
    plot_prediction_vs_parameter,
)
from ..evaluation.predict import predict_answers
from ..modeling import get_encoding
from .arguments import NumberTrainingArguments
from .loop import make_accelerator, train_model
from .model_card import write_model_card

FINAL_DIR = "final"


def load_task(args: NumberTrainingArguments) -> DatasetDict:
    """The task's splits: loaded from ``args.data_dir`` or generated with the size/seed arguments.

    Generated tasks take ``train_size`` and, for every other split, ``eval_size``; tasks of a
    fixed size (``temperature``, cut from a real series) ignore them. ``task_options`` go to the
    task's generator as keyword arguments (they win over the sizes and seed).

    Example:
        >>> dd = load_task(NumberTrainingArguments(task="lookup", train_size=20, eval_size=5))  # doctest: +SKIP
    """
    if args.data_dir:
        return load_from_disk(args.data_dir)
    if args.task not in TASKS:
        raise ValueError(f"task {args.task!r} is unknown; allowed: {', '.join(TASKS)}")
    accepted = inspect.signature(TASKS[args.task].builder).parameters
    options = {"train_size": args.train_size, "seed": args.data_seed}
    options |= {name: args.eval_size for name in accepted if name.endswith("_size") and name != "train_size"}
    options = {k: v for k, v in options.items() if k in accepted} | args.task_generator_options()
    return make_task(args.task, **options)


def save_task(dataset: DatasetDict, name: str, folder: str | Path) -> None:
    """``save_to_disk`` plus a record of the task's name, which training reads back (its scaler)."""
    dataset.save_to_disk(str(folder))
    (Path(folder) / TASK_FILE).write_text(json.dumps({"task": name}))


def make_scaler(args: NumberTrainingArguments, dataset: DatasetDict) -> NumberScaler:
    """The task's scaler for an encoding that ``needs_scaling`` (xVal: values must stay small), else identity."""
    name = args.task_name
    if get_encoding(args.number_encoding).needs_scaling and name in TASKS:
        return task_scaler(name, dataset)
    return NumberScaler("identity")


def build_tokenizer(args: NumberTrainingArguments, dataset: DatasetDict) -> Any:
    """The pretrained backbone's tokenizer with number tokens, or one trained on the training texts."""
    if args.pretrained:
        tokenizer = args.backbone_spec.tokenizer_class.from_pretrained(args.pretrained)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        return tokenizer
    return train_number_tokenizer(dataset["train"]["text"], args.backbone, args.vocab_size)


def encoding_options_for(args: NumberTrainingArguments, dataset: DatasetDict | None = None) -> dict[str, Any]:
    """The chosen encoding's options: those given in ``args``, the others fitted to ``dataset``'s numbers.

    The encoding fits its options (FoNE's digit places, the exponent bins' range) so that every
    number of every split is representable (an out-of-range value is a ``ValueError`` in the
    model); options it does not fit, or without ``dataset``, keep the config's defaults.

    Example:
        >>> encoding_options_for(NumberTrainingArguments(number_encoding="fone"), dd)  # doctest: +SKIP
        {'fone_int_digits': 1, 'fone_frac_digits': 2}
    """
    encoding = get_encoding(args.number_encoding)
    fitted = {}
    if dataset is not None:
        values = np.array([v for data in dataset.values() for row in data["numbers"] for v in row], dtype=np.float64)
        fitted = dict(encoding.fit_options(values))
    given = {option.name: getattr(args, option.name) for option in encoding.options}
    return fitted | {name: value for name, value in given.items() if value is not None}


def build_model(args: NumberTrainingArguments, tokenizer: Any, dataset: DatasetDict | None = None) -> Any:
    """A pretrained backbone adapted to numbers, or a new small model sized by ``args``.

    With ``dataset``, the encoding's options are fitted to its numbers (see :func:`encoding_options_for`).
    """
    spec = args.backbone_spec
    number_fields = {
        "number_encoding": args.number_encoding,
        "number_loss_weight": args.number_loss_weight,
        "freeze_backbone": args.freeze_backbone,
        **encoding_options_for(args, dataset),
    }
    if args.pretrained:
        return spec.model_class.from_pretrained_backbone(args.pretrained, tokenizer, **number_fields)
    config = spec.new_config(
        tokenizer,
        hidden_size=args.hidden_size,
        num_layers=args.num_layers,
        num_heads=args.num_heads,
        max_length=args.max_length,
        **dict.fromkeys(spec.dropout_fields, args.dropout),
        **number_fields,
    )
    return spec.model_class(config)


def tokenize_dataset(dataset: DatasetDict, tokenizer: Any, scaler: NumberScaler, max_length: int) -> DatasetDict:
    """Tokenize ``text`` into ``input_ids``, ``attention_mask`` and scaled ``input_numbers``.

    Tasks with a ``prompt`` column also get ``prompt_length`` (its tokens), which the collators'
    ``completion_only`` option reads.
    """

    def encode(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        enc = tokenizer(batch["text"], truncation=True, max_length=max_length)
        numbers = [
            scaler.apply_at_numbers(ids, row, tokenizer.num_token_ids).tolist()
            for ids, row in zip(enc["input_ids"], enc["input_numbers"])
        ]
        out = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "input_numbers": numbers}
        if "prompt" in batch:
            out["prompt_length"] = prompt_lengths(
                tokenizer, batch["text"], batch["prompt"], truncation=True, max_length=max_length
            )
        return out

    columns = ["input_ids", "attention_mask", "input_numbers"]
    if all("prompt" in data.column_names for data in dataset.values()):
        columns.append("prompt_length")
    return DatasetDict(
        {
            split: data.map(encode, batched=True, remove_columns=data.column_names).with_format(columns=columns)
            for split, data in dataset.items()
        }
    )


def evaluate_splits(
    model: Any, tokenizer: Any, scaler: NumberScaler, dataset: DatasetDict, max_length: int, output_dir: Path
) -> dict[str, dict[str, Any]]:
    """Metrics of every non-training split, a predicted-vs-true plot, and ``metrics.json`` in ``output_dir``."""
    results, predictions, references, groups = {}, [], [], []
    splits = [split for split in dataset if split != "train"]
    for split in splits:
        data = dataset[split]
        preds = predict_answers(model, tokenizer, data["text"], data["answer_index"], scaler, max_length=max_length)
        # exact match at the answers' written precision (a float32 or continuous prediction of
        # 1.53 counts when it rounds to 1.53)
        decimals = max(len(text.partition(".")[2]) for text in data["answer_text"])
        results[split] = compute_number_metrics(preds, data["answer"], exact_decimals=decimals)
        predictions += preds
        references += list(data["answer"])
        groups += [split] * len(preds)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "metrics.json").write_text(json.dumps(results, indent=1))
    plots = [
        plot_predicted_vs_true(
            predictions,
            references,
            output_dir / "predicted_vs_true.png",
            groups=groups,
            title="Predicted vs true answers",
        )
    ]
    # xVal Fig. 5: prediction against the parameter an out-of-distribution split holds out
    # (``test_ood_<column>``; plain ``test_ood`` holds out a range of the answer itself).
    for ood in (split for split in splits if split.startswith("test_ood")):
        column = ood.removeprefix("test_ood").lstrip("_") or "answer"
        if column not in dataset[ood].column_names:
            continue
        parameter = [value for split in splits for value in dataset[split][column]]
        heldout = (min(dataset[ood][column]), max(dataset[ood][column]))
        plots.append(
            plot_prediction_vs_parameter(
                parameter,
                predictions,
                output_dir / f"prediction_vs_{column}.png",
                references=references,
                heldout=heldout,
                groups=groups,
                parameter_name=column,
                value_name="predicted answer",
            )
        )
    return {"metrics": results, "plot": str(plots[0]), "plots": [str(p) for p in plots]}


def run_training(args: NumberTrainingArguments) -> dict[str, Any]:
    """Train, evaluate and save: ``<output_dir>/final`` holds model, tokenizer and scaler.

    Returns the metrics per split, the plot path and the final folder; prints a results table.

    Example:
        >>> summary = run_training(NumberTrainingArguments(task="lookup", max_steps=50))  # doctest: +SKIP
    """
    accelerator = make_accelerator(args)
    set_seed(args.seed)  # the new model's initialisation too
    with accelerator.main_process_first():  # one process writes the datasets cache, the others read it
        dataset = load_task(args)
        scaler = make_scaler(args, dataset)
        tokenizer = build_tokenizer(args, dataset)
        model = build_model(args, tokenizer, dataset)
        tokenized = tokenize_dataset(dataset, tokenizer, scaler, args.max_length)
    if args.causal:
        collator = DataCollatorForNumberCausalLM(tokenizer, completion_only=args.completion_only)
    else:  # masks seeded by batch content: exact resume, same evaluation masks every time
        collator = DataCollatorForNumberMLM(
            tokenizer, mlm_probability=args.mlm_probability, seed=args.seed, completion_only=args.completion_only
        )
    model, result = train_model(
        model, tokenized["train"], collator, args, tokenized.get("validation"), accelerator=accelerator
    )
    output_dir = Path(args.output_dir)
    final = output_dir / FINAL_DIR
    summary: dict[str, Any] = {
        "final_dir": str(final),
        "steps": result.global_step,
        "last_train_loss": result.last_train_loss,
    }
    if accelerator.is_main_process:
        model.save_pretrained(final)
        tokenizer.save_pretrained(final)
        scaler.save_pretrained(final)
        summary |= evaluate_splits(model, tokenizer, scaler, dataset, args.max_length, output_dir)
        write_model_card(final, args, args.task_name, summary, scaler)
        print(f"\nResults after {result.global_step} steps (final training loss {result.last_train_loss:.4f}):")
        print(format_metrics_table(summary["metrics"]))
        print(f"plots: {', '.join(summary['plots'])}\nmodel, tokenizer and scaler: {final}")
    accelerator.wait_for_everyone()
    accelerator.end_training()
    return summary


def load_trained(path: str | Path) -> tuple[Any, Any, NumberScaler]:
    """Load a folder written by :func:`run_training` with the Auto classes: model, tokenizer, scaler.

    Example:
        >>> model, tokenizer, scaler = load_trained("runs/demo/final")  # doctest: +SKIP
    """
    model = AutoModel.from_pretrained(path)
    return model, AutoTokenizer.from_pretrained(path), NumberScaler.from_pretrained(path)
