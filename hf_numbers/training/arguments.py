"""Training options as a dataclass, parsed by ``transformers.HfArgumentParser``.

Example:
    >>> from transformers import HfArgumentParser
    >>> (args,) = HfArgumentParser(NumberTrainingArguments).parse_args_into_dataclasses(
    ...     ["--task", "lookup", "--max_steps", "10"])
    >>> args.task, args.max_steps
    ('lookup', 10)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..data.vocab import BACKBONES

PRECISIONS = ("no", "fp16", "bf16", "auto")


@dataclass
class NumberTrainingArguments:
    """Everything ``hf-numbers train`` needs: task, model, optimisation, evaluation and checkpoints."""

    output_dir: str = field(
        default="runs/demo", metadata={"help": "Folder for checkpoints, the final model, metrics and plots."}
    )
    # ---- task
    task: str = field(
        default="lookup",
        metadata={
            "help": "Task name (see `hf-numbers make-data --help`); with --data_dir, the task make-data recorded."
        },
    )
    data_dir: str | None = field(
        default=None, metadata={"help": "A dataset saved by `hf-numbers make-data`; default: generate the task."}
    )
    train_size: int = field(default=4000, metadata={"help": "Training examples when generating the task."})
    eval_size: int = field(
        default=200, metadata={"help": "Examples of each validation/test split when generating the task."}
    )
    data_seed: int = field(default=0, metadata={"help": "Seed of the task generator."})
    max_length: int = field(default=128, metadata={"help": "Truncate tokenized texts to this many tokens."})
    # ---- model
    backbone: str = field(default="gpt2", metadata={"help": "gpt2 (causal LM), bert or roberta (masked LM)."})
    number_encoding: str = field(default="xval", metadata={"help": "xval, fone, float or exponent."})
    pretrained: str | None = field(
        default=None,
        metadata={
            "help": "Folder of a plain pretrained backbone (and its tokenizer) to adapt; default: a new small model."
        },
    )
    freeze_backbone: bool = field(
        default=False, metadata={"help": "Train only the number module and heads (frozen trunk)."}
    )
    hidden_size: int = field(default=128, metadata={"help": "Width of a new model."})
    num_layers: int = field(default=3, metadata={"help": "Layers of a new model."})
    num_heads: int = field(default=4, metadata={"help": "Attention heads of a new model."})
    vocab_size: int = field(default=600, metadata={"help": "Vocabulary of the tokenizer trained for a new model."})
    number_loss_weight: float = field(
        default=1.0, metadata={"help": "Weight of the number loss added to the token loss."}
    )
    fone_int_digits: int | None = field(
        default=None, metadata={"help": "FoNE integer digit places (default: enough for every number of the data)."}
    )
    fone_frac_digits: int | None = field(
        default=None, metadata={"help": "FoNE fractional digit places (default: as many as the data has)."}
    )
    exponent_min: float | None = field(
        default=None, metadata={"help": "Smallest magnitude of the exponent bins (default: from the data)."}
    )
    exponent_max: float | None = field(
        default=None, metadata={"help": "Largest magnitude of the exponent bins (default: from the data)."}
    )
    mlm_probability: float = field(default=0.2, metadata={"help": "Masked LM: probability of masking a token."})
    # ---- optimisation
    max_steps: int = field(default=600, metadata={"help": "Optimizer steps."})
    per_device_batch_size: int = field(default=32, metadata={"help": "Batch size per process."})
    gradient_accumulation_steps: int = field(default=1, metadata={"help": "Micro-batches per optimizer step."})
    learning_rate: float = field(default=1e-3, metadata={"help": "Peak learning rate of AdamW."})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay."})
    warmup_steps: int = field(default=50, metadata={"help": "Linear warm-up steps."})
    min_lr_ratio: float = field(
        default=0.1, metadata={"help": "Cosine schedule floor, as a fraction of the peak (xVal's setting)."}
    )
    max_grad_norm: float = field(default=1.0, metadata={"help": "Gradient clipping norm (0 disables)."})
    mixed_precision: str = field(
        default="auto", metadata={"help": "no, fp16, bf16, or auto (bf16 on a GPU that has it, else no)."}
    )
    seed: int = field(default=0, metadata={"help": "Seed of initialisation, data order, masking and dropout."})
    cpu: bool = field(default=False, metadata={"help": "Train on the CPU even if a GPU is present."})
    # ---- evaluation, logging, checkpoints
    eval_steps: int = field(default=200, metadata={"help": "Evaluate every N optimizer steps (0: only at the end)."})
    logging_steps: int = field(default=50, metadata={"help": "Log the training loss every N steps."})
    save_steps: int = field(default=200, metadata={"help": "Checkpoint every N steps (0: only the final model)."})
    save_total_limit: int = field(default=2, metadata={"help": "Keep at most this many checkpoints (0 keeps all)."})
    resume_from_checkpoint: str | None = field(
        default=None, metadata={"help": "A checkpoint folder, or 'latest' for the newest in output_dir."}
    )
    progress_bar: bool = field(default=True, metadata={"help": "Show a progress bar."})

    def __post_init__(self) -> None:
        if self.backbone not in BACKBONES:
            raise ValueError(f"backbone={self.backbone!r} is unknown; allowed: {', '.join(BACKBONES)}")
        if self.mixed_precision not in PRECISIONS:
            raise ValueError(f"mixed_precision={self.mixed_precision!r} is unknown; allowed: {', '.join(PRECISIONS)}")
        for name in (
            "max_steps",
            "per_device_batch_size",
            "gradient_accumulation_steps",
            "max_length",
            "train_size",
            "eval_size",
            "logging_steps",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("eval_steps", "save_steps", "warmup_steps", "save_total_limit"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0.0 <= self.min_lr_ratio <= 1.0:
            raise ValueError(f"min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")

    @property
    def causal(self) -> bool:
        """Whether the backbone is a causal LM (GPT-2) rather than a masked LM."""
        return self.backbone == "gpt2"
