"""What a run reports while it trains, as ``Trainer`` does: console lines through :mod:`logging` (INFO,
main process), the same records for the trackers of ``--report_to`` (``train/<name>``, ``eval/<name>``,
``<split>/<metric>``), and a summary of the run's set-up when it starts.

Example:
    >>> format_record({"step": 4, "loss": 1.23456789, "learning_rate": 0.00095})
    "{'step': 4, 'loss': 1.235, 'learning_rate': 0.00095}"
    >>> tracker_values({"step": 4, "eval_loss": 0.5})
    {'eval/loss': 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration

from .arguments import NumberTrainingArguments

PROJECT = "hf_numbers"
"""The trackers' project name (TensorBoard: the folder under ``--logging_dir``)."""


def project_configuration(args: NumberTrainingArguments) -> ProjectConfiguration:
    """Accelerate's project folders: the run's ``output_dir``, trackers' files in ``args.tracker_dir``.

    Example:
        >>> project_configuration(NumberTrainingArguments(output_dir="runs/a")).logging_dir
        'runs/a/runs'
    """
    return ProjectConfiguration(project_dir=args.output_dir, logging_dir=args.tracker_dir)


def format_record(record: Mapping[str, Any]) -> str:
    """A log record as the console shows it (``Trainer``'s style): a dict, floats to 4 significant digits.

    Example:
        >>> format_record({"step": 2, "eval_loss": 0.123456})
        "{'step': 2, 'eval_loss': 0.1235}"
    """
    return str({key: float(f"{value:.4g}") if isinstance(value, float) else value for key, value in record.items()})


def tracker_values(record: Mapping[str, Any]) -> dict[str, Any]:
    """A log record for trackers: ``eval_<name>`` becomes ``eval/<name>``, the rest ``train/<name>``.

    The step is passed to the trackers separately; ``None`` values are left out.

    Example:
        >>> tracker_values({"step": 2, "loss": 1.5, "learning_rate": 0.001})
        {'train/loss': 1.5, 'train/learning_rate': 0.001}
    """
    values = {}
    for key, value in record.items():
        if key != "step" and value is not None:
            values[f"eval/{key.removeprefix('eval_')}" if key.startswith("eval_") else f"train/{key}"] = value
    return values


def metric_values(metrics: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """The metrics of every split (``evaluate_splits``) for trackers: ``<split>/<metric>``, numbers only.

    Example:
        >>> metric_values({"test": {"mse": 0.5, "r2": None, "count": 3}})
        {'test/mse': 0.5, 'test/count': 3}
    """
    return {
        f"{split}/{name}": value
        for split, values in metrics.items()
        for name, value in values.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }


def start_trackers(accelerator: Accelerator, args: NumberTrainingArguments) -> None:
    """Start the accelerator's trackers (``log_with``) with the arguments as the run's configuration.

    Trackers already started are kept. Values that are not scalars (lists, None) are stored as text.

    Example:
        >>> start_trackers(make_accelerator(NumberTrainingArguments(report_to="tensorboard")), args)  # doctest: +SKIP
    """
    if not accelerator.log_with or accelerator.trackers:
        return
    config = {
        key: value if isinstance(value, (bool, int, float, str)) else str(value)
        for key, value in args.to_dict().items()
    }
    name = args.run_name or Path(args.output_dir).name
    accelerator.init_trackers(PROJECT, config=config, init_kwargs={"wandb": {"name": name}, "trackio": {"name": name}})


def describe_run(
    accelerator: Accelerator, args: NumberTrainingArguments, examples: int, parameters: int, start_step: int
) -> str:
    """The set-up of a run in one line: data, processes, device, precision, batch, steps, parameters.

    Example:
        >>> describe_run(accelerator, args, examples=256, parameters=38945, start_step=0)  # doctest: +SKIP
        'training on 256 examples: 1 process(es) on cpu, mixed precision no, 8 per process x ...'
    """
    processes = accelerator.num_processes
    per_step = args.per_device_train_batch_size * processes * accelerator.gradient_accumulation_steps
    resumed = f", resumed at step {start_step}" if start_step else ""
    return (
        f"training on {examples:,} examples: {processes} process(es) on {accelerator.device.type}, mixed precision "
        f"{accelerator.mixed_precision}, {args.per_device_train_batch_size} per process x {processes} process(es) x "
        f"{accelerator.gradient_accumulation_steps} accumulation step(s) = {per_step} examples per step, "
        f"{args.max_steps} steps{resumed}, {parameters:,} trainable parameters"
    )
