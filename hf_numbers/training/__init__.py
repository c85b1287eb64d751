"""Training on Accelerate: arguments, the loop with exact resume, and the end-to-end pipeline.

Example:
    >>> from hf_numbers.training import NumberTrainingArguments, run_training
    >>> args = NumberTrainingArguments(task="lookup", max_steps=20, output_dir="runs/try")  # doctest: +SKIP
    >>> summary = run_training(args)  # doctest: +SKIP
"""

from .arguments import NumberTrainingArguments
from .checkpoints import TrainerState, list_checkpoints, resolve_checkpoint
from .loop import TrainResult, make_accelerator, train_model
from .pipeline import (
    build_model,
    build_tokenizer,
    evaluate_splits,
    load_task,
    load_trained,
    make_scaler,
    run_training,
    tokenize_dataset,
)

__all__ = [
    "NumberTrainingArguments",
    "TrainResult",
    "TrainerState",
    "build_model",
    "build_tokenizer",
    "evaluate_splits",
    "list_checkpoints",
    "load_task",
    "load_trained",
    "make_accelerator",
    "make_scaler",
    "resolve_checkpoint",
    "run_training",
    "tokenize_dataset",
    "train_model",
]
