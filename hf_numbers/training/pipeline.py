"""From arguments to a trained, evaluated and saved model: ``run_training`` runs ``hf-numbers train``.

The steps are the public functions of :mod:`~hf_numbers.training.builders` (data, tokenizer,
model with its number scaling, collator), :func:`~hf_numbers.training.train_model` and
:func:`~hf_numbers.evaluation.evaluate_splits`, so a script can swap one (its own dataset, a
pretrained backbone) and keep the rest.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from accelerate import Accelerator
from accelerate.utils import set_seed
from transformers import AutoModel, AutoTokenizer
from transformers.tokenization_utils_base import TOKENIZER_CONFIG_FILE

from ..data.checks import check_answers_tokenized
from ..data.loading import tokenize_dataset
from ..evaluation import evaluate_splits
from ..evaluation.splits import check_scorable
from ..modeling import check_tokenizer_matches
from ..modeling.hub_card import CARD_FILE
from .arguments import NumberTrainingArguments
from .builders import (
    align_to_pretrained,
    apply_lora,
    build_dataset,
    build_model,
    build_tokenizer,
    make_collator,
    vocab_multiple,
)
from .checkpoints import replace_folder
from .hub import create_hub_repo, push_folder
from .loop import check_run, make_accelerator, train_model
from .lora import ADAPTER_DIR, AdapterBase, is_adapter_folder, load_adapter, save_adapter
from .model_card import build_model_card, card_example
from .number_token_loss import NumberTokenLoss
from .reporting import metric_values
from .run_folder import FINAL_DIR, hold_run_folder, staging_dir


def run_training(args: NumberTrainingArguments) -> dict[str, Any]:
    """Train, save, evaluate: ``<output_dir>/final`` holds the model, tokenizer and model card (with
    ``args.lora_r``: the merged model, and the adapter in ``final/adapter``); ``args.push_to_hub`` uploads it.

    Returns a summary: ``final_dir``, ``steps``, ``last_train_loss``, ``trainable_parameters``; on the main
    process also ``metrics`` per split, ``plot`` / ``plots`` (:func:`~hf_numbers.evaluation.evaluate_splits`)
    and ``hub_model_id`` after a push. A folder that another run holds raises
    :class:`~hf_numbers.training.run_folder.RunFolderInUseError` at once.

    Example:
        >>> summary = run_training(NumberTrainingArguments(task="lookup", max_steps=50))  # doctest: +SKIP
        >>> summary["metrics"]["test"]["mse"]  # doctest: +SKIP
    """
    check_run(args)  # settings, input folders, checkpoint and output folder, before any work
    accelerator = make_accelerator(args)
    with hold_run_folder(accelerator, args.output_dir):  # a second run on the folder is refused at once
        return _run_training(args, accelerator)


def _run_training(args: NumberTrainingArguments, accelerator: Accelerator) -> dict[str, Any]:
    """:func:`run_training` once the arguments are checked and the run folder's lock is held."""
    repo_id = create_hub_repo(args) if args.push_to_hub and accelerator.is_main_process else None
    set_seed(args.seed)  # the new model's initialisation too
    args.pad_vocab_to_multiple_of = vocab_multiple(args, accelerator.device)  # recorded, so a resume builds the same
    with accelerator.main_process_first():  # one process writes the datasets cache, the others read it
        dataset = build_dataset(args)
        check_scorable(dataset, args.causal, masked_words=args.text_only)  # before any training
        tokenizer = build_tokenizer(args, dataset)
        model = build_model(args, tokenizer, dataset)  # the number scaling, fitted on the training split, inside
        alignment = align_to_pretrained(args, model, tokenizer, dataset, accelerator.device)  # --align_steps
        model = apply_lora(args, model, tokenizer)  # PEFT adapters with --lora_r, else the model itself
        trainable = sum(parameter.numel() for parameter in model.parameters() if parameter.requires_grad)
        # a causal LM learns where an answer ends (the text's last token is then the end-of-text token)
        tokenized = tokenize_dataset(
            dataset, tokenizer, args.max_length, end_with_eos=args.causal, number_token_mask=args.text_only
        )
    check_answers_tokenized(dataset, tokenized, tokenizer, args.max_length, end_with_eos=args.causal)
    number_token_loss = None
    if args.number_token_loss != "none":
        number_token_loss = NumberTokenLoss(tokenizer, model.config.vocab_size, args.causal, args.number_token_loss)
    # a LoRA run's checkpoint-<step> holds what rebuilds its base, as final/adapter does (load_adapter, evaluate)
    save_with = (tokenizer, AdapterBase(model, args.pretrained, args.gguf_file)) if args.lora_r else (tokenizer,)
    model, result = train_model(
        model, tokenized["train"], make_collator(args, tokenizer), args, tokenized.get("validation"),
        accelerator=accelerator, save_with=save_with, number_token_loss=number_token_loss,
    )
    final = Path(args.output_dir) / FINAL_DIR
    summary: dict[str, Any] = {
        "final_dir": str(final),
        "steps": result.global_step,
        "last_train_loss": result.last_train_loss,
        "trainable_parameters": trainable,
        **alignment,
    }
    if accelerator.is_main_process:
        # written to final.tmp/final and renamed when complete: a killed run leaves no half final/
        staging = staging_dir(final)
        if staging.parent.exists():
            shutil.rmtree(staging.parent)
        if args.lora_r:  # the adapter (PeftModel.from_pretrained), then the merged model as the checkpoint
            save_adapter(model, tokenizer, staging / ADAPTER_DIR, args.pretrained, args.gguf_file)
            model = model.merge_and_unload()
        for part in (model, tokenizer):
            part.save_pretrained(staging)
        summary |= evaluate_splits(
            model, tokenizer, dataset, args.max_length, args.output_dir, masked_words=args.text_only,
            few_shot=dataset["train"]["text"][: args.eval_few_shot],
        )
        card = build_model_card(
            args.to_dict(), summary["metrics"], model.config, model_id=repo_id or str(final),
            steps=result.global_step, example=card_example(dataset), mask_token=tokenizer.mask_token,
        )  # fmt: skip
        card.save(staging / CARD_FILE)
        replace_folder(staging, final)
        staging.parent.rmdir()
        if repo_id is not None:
            push_folder(final, repo_id, args.hub_token)
            summary["hub_model_id"] = repo_id
        accelerator.log(metric_values(summary["metrics"]), step=result.global_step)
    accelerator.wait_for_everyone()
    accelerator.end_training()
    return summary


def load_trained(path: str | Path) -> tuple[Any, Any]:
    """Load a folder written by :func:`run_training` with the Auto classes: model and tokenizer.

    The adapter folders of a LoRA run (its ``checkpoint-<step>`` folders, ``final/adapter``) load as their base
    with the adapter merged (:func:`~hf_numbers.training.lora.load_adapter`). ``ValueError`` when ``path`` is not
    a local folder (nothing is downloaded), when its parts do not belong together
    (:func:`~hf_numbers.check_tokenizer_matches`) or when one is incomplete.

    Example:
        >>> model, tokenizer = load_trained("runs/demo/final")  # doctest: +SKIP
    """
    folder = Path(path)
    if not folder.is_dir():  # else transformers would look for a Hub repository of that name
        staged = staging_dir(folder)
        interrupted = (
            f"; {staged} is a {folder.name}/ whose writing was interrupted: resume the run (hf-numbers train ... "
            "--resume_from_checkpoint latest) to write it again"
            if staged.is_dir()
            else ""
        )
        needed = "a local folder written by hf-numbers train is needed"
        raise ValueError(f"{folder} is not a folder ({needed}){interrupted}")
    if not (folder / TOKENIZER_CONFIG_FILE).is_file():  # else: defaults, and no error
        raise ValueError(
            f"{folder} lacks {TOKENIZER_CONFIG_FILE}: its tokenizer would load with defaults (no padding token, no "
            "length limit, the default number token and scheme options); save the tokenizer there again "
            "(tokenizer.save_pretrained)"
        )
    # the base adapted again from its pretrained folder, with the adapter merged: what final/ holds
    model = load_adapter(folder).merge_and_unload() if is_adapter_folder(folder) else AutoModel.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    check_tokenizer_matches(model, tokenizer)
    return model, tokenizer
