"""Training on Accelerate: arguments, builders from arguments, the loop with exact resume, the pipeline.

Example:
    >>> from hf_numbers.training import NumberTrainingArguments, run_training
    >>> args = NumberTrainingArguments(task="lookup", max_steps=20, output_dir="runs/try")  # doctest: +SKIP
    >>> summary = run_training(args)  # doctest: +SKIP
"""

from typing import Any

from ..data.loading import load_task, tokenize_dataset
from ..evaluation.splits import evaluate_splits
from .arguments import NumberTrainingArguments
from .builders import (
    apply_lora,
    build_dataset,
    build_model,
    build_tokenizer,
    encoding_options_for,
    make_collator,
    make_scaling,
)
from .checkpoints import TrainerState, list_checkpoints, resolve_checkpoint
from .loop import TrainResult, make_accelerator, train_model
from .lora import load_adapter, number_lora_config, save_adapter
from .number_token_loss import NumberTokenLoss
from .pipeline import FINAL_DIR, load_trained, run_training

__all__ = [
    "FINAL_DIR",
    "LinearLookaheadDecay",
    "NumberTokenLoss",
    "NumberTokenLossTrainer",
    "NumberTrainingArguments",
    "TrainResult",
    "TrainerState",
    "apply_lora",
    "build_dataset",
    "build_model",
    "build_tokenizer",
    "encoding_options_for",
    "evaluate_splits",
    "list_checkpoints",
    "load_adapter",
    "load_task",
    "load_trained",
    "make_accelerator",
    "make_collator",
    "make_scaling",
    "number_lora_config",
    "resolve_checkpoint",
    "run_training",
    "save_adapter",
    "tokenize_dataset",
    "train_model",
]


def __getattr__(name: str) -> Any:
    if name == "NumberTokenLossTrainer":  # imports transformers.Trainer: loaded on first use
        from .number_token_loss_trainer import NumberTokenLossTrainer

        return NumberTokenLossTrainer
    if name == "LinearLookaheadDecay":  # a transformers TrainerCallback: loaded on first use, as the Trainer
        from .lookahead_schedule import LinearLookaheadDecay

        return LinearLookaheadDecay
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
