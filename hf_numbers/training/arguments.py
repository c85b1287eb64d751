"""Training options as a dataclass, parsed by ``transformers.HfArgumentParser``.

Fields whose default is ``None`` and that a task recommends (``TaskSpec.training_defaults``:
model size, steps, batch, learning rate, completion-only loss...) are filled from the task's
recommendation, else from :data:`DEFAULTS`, when the arguments are built. So
``hf-numbers train --task fone_arithmetic --number_encoding fone`` runs the recipe that reproduces
FoNE's addition result, and an explicit flag always wins.

Example:
    >>> from transformers import HfArgumentParser
    >>> (args,) = HfArgumentParser(NumberTrainingArguments).parse_args_into_dataclasses(
    ...     ["--task", "lookup", "--max_steps", "10"])
    >>> args.task, args.max_steps
    ('lookup', 10)

Names follow ``transformers.TrainingArguments`` where the meaning is the same
(``per_device_train_batch_size``, ``use_cpu``, ``disable_tqdm``, ``report_to``, ``logging_steps``...);
``hf_numbers_launcher.RENAMED`` lists the earlier names, which ``hf-numbers train`` answers with the new one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from accelerate.tracking import get_available_trackers
from accelerate.utils import LoggerType
from huggingface_hub.utils import validate_repo_id

from hf_numbers_launcher import TRAIN_OPTION_GROUPS

from ..data.loading import parse_task_options, task_name
from ..data.tasks import TASKS, check_task_options
from ..modeling import (
    BACKBONES,
    NUMBER_ENCODINGS,
    NUMBER_OUTPUTS,
    NUMBER_TOKEN_INITS,
    BackboneSpec,
    add_option_fields,
    encoding_options,
    get_backbone,
    get_encoding,
)
from ..modeling.configuration_number import LOOKAHEAD_MEANS, MAX_LOOKAHEAD
from ..modeling.encoding_config import coerce_option, option_owners, own_options
from .number_token_loss import NUMBER_TOKEN_LOSS_KINDS
from .sharding import SWITCH_WORDS, parse_fsdp

PRECISIONS = ("no", "fp16", "bf16", "auto")
NUMBER_TOKEN_LOSSES = ("none", *NUMBER_TOKEN_LOSS_KINDS)
"""``--number_token_loss`` values: none, or a number-token loss (``ntloss``) for encodings that write digits."""
TRACKERS = ("none", *LoggerType.list())
"""``--report_to`` values: Accelerate's trackers, ``all`` (those installed) and ``none``."""

DEFAULTS: dict[str, Any] = {
    "train_size": 4000,
    "eval_size": 200,
    "max_length": 128,
    "backbone": "gpt2",
    "hidden_size": 128,
    "num_layers": 3,
    "num_heads": 4,
    "max_steps": 600,
    "per_device_train_batch_size": 32,
    "learning_rate": 1e-3,
    "warmup_steps": 50,
    "completion_only": False,
    "text_only": False,
    "mlm_probability": 0.2,
}
"""The value of each task-recommendable field when neither the flag nor the task sets it."""


PRETRAINED_RECIPE = {"number_encoding": "digits", "number_token_loss": "ntl", "digit_lookahead": 2,
                     "digit_lookahead_confidence": True, "digit_lookahead_leading": False,
                     "digits_features": "fone+place+column"}
"""How ``--pretrained`` adapts a causal LM unless told otherwise (with ``--add_bos_token``'s default): value-aware
digits (its own digit tokens, each with the value read so far added through a zero-started projection, and each digit
of a number the prompt gives whole its place from the units: ``column``), the number-token loss, and the digit
lookahead (two digits ahead, each weighted by the model's confidence in it, from each number's second digit; training
only). On SmolLM2 + LoRA, against its digit tokens + NTL alone (training seeds 0 / 2): 6-digit addition 85.6 / 83.6%
exact against 73.8 / 72.2% (one machine), 3-digit multiplication 36.4 / 33.8% within 1% against 35.2 / 37.2%, the
next hourly temperature test MSE 0.412 / 0.152 against 0.184 / 0.191 (level; seed 0's is one answer off by 8.4 °F)
(docs/pretrained.md)."""
LOOKAHEAD_RECIPE = tuple(name for name in PRETRAINED_RECIPE if name.startswith("digit_lookahead"))
"""The recipe's digit lookahead fields (:func:`fill_lookahead`)."""
WITHOUT_RECIPE = {"number_encoding": "xval", "number_token_loss": "none", "digit_lookahead": 0,
                  "digit_lookahead_confidence": False, "digit_lookahead_leading": True}
"""The same fields' values where the recipe does not apply: a new model, a masked LM, an encoding that writes numbers
as ``[NUM]`` (no NTL, no lookahead), and the lookahead's settings where ``--digit_lookahead`` is given (the plain
lookahead: unweighted, from a number's first digit)."""


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt",
                   "spiece.model", "sentencepiece.bpe.model")  # fmt: skip
"""The files a tokenizer of transformers loads from: a ``--pretrained`` folder without a GGUF file needs one of them."""


def check_gguf_file(folder: str, gguf_file: str | None) -> None:
    """``ValueError`` naming both where ``gguf_file`` is not in the ``--pretrained`` folder (listing the folder's GGUF
    files): transformers would look for it on the Hub. A path that is no folder is left to ``check_run``, which says so.

    Example:
        >>> check_gguf_file("path/to/smollm2", "SmolLM2.Q4_1.gguf")  # doctest: +SKIP
    """
    path = Path(folder)
    if gguf_file and path.is_dir() and not (path / gguf_file).is_file():
        present = ", ".join(sorted(file.name for file in path.glob("*.gguf"))) or "none"
        raise ValueError(f"gguf_file {gguf_file!r} is not in the --pretrained folder {folder} (its GGUF files: "
                         f"{present}); a local file is needed, nothing is downloaded")  # fmt: skip


class EncodingOptionError(ValueError):
    """An encoding option's value that the encoding refuses (``--fone_int_digits 0``): a bad argument, which
    ``hf-numbers train`` answers with a usage error, also where it is found only once the data's options are fitted."""


def check_pretrained_tokenizer(folder: str, gguf_file: str | None = None) -> None:
    """``ValueError`` naming ``folder`` where a ``--pretrained`` folder holds no tokenizer file
    (:data:`TOKENIZER_FILES`; a GGUF file holds its own), before the tokenizer is loaded: transformers would try to
    convert one from nothing.
    ``hf-numbers train`` checks it with the arguments, ``build_tokenizer`` before loading.

    Example:
        >>> check_pretrained_tokenizer("path/to/weights-only")  # doctest: +SKIP
        Traceback (most recent call last):
        ...
        ValueError: the --pretrained folder path/to/weights-only has no tokenizer (...)
    """
    path = Path(folder)
    if gguf_file or not path.is_dir() or any((path / name).is_file() for name in TOKENIZER_FILES):
        return
    raise ValueError(
        f"the --pretrained folder {folder} has no tokenizer (none of {', '.join(TOKENIZER_FILES)}): save the "
        "backbone's tokenizer there (tokenizer.save_pretrained), or name a GGUF file of the folder with --gguf_file"
    )


def plain_text_config(folder: str, gguf_file: str | None = None) -> Any:
    """The text config of a plain checkpoint in ``folder`` (or of its GGUF file): what its language model is.

    Example:
        >>> plain_text_config("path/to/qwen2.5-0.5b").hidden_size  # doctest: +SKIP
        896
    """
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(folder, **({"gguf_file": gguf_file} if gguf_file else {})).get_text_config()


def backbone_of_folder(folder: str, gguf_file: str | None = None) -> str | None:
    """The backbone of a pretrained checkpoint: its config's model type (a table row, or held by composition);
    None where the folder has no config to read (loading it then says what is missing).

    Example:
        >>> backbone_of_folder("path/to/qwen2.5-0.5b")  # doctest: +SKIP
        'qwen2'
    """
    if not os.path.isdir(folder):
        return None
    try:
        model_type = plain_text_config(folder, gguf_file).model_type
    except (OSError, ValueError):
        return None
    get_backbone(model_type)  # a ValueError naming what can be a backbone
    return model_type


def parse_switch(name: str, value: bool | str) -> bool | str:
    """A true/false/auto option's value: True, False or ``"auto"`` (``ValueError`` for anything else).

    Example:
        >>> parse_switch("torch_compile", "yes"), parse_switch("torch_compile", "auto")
        (True, 'auto')
    """
    if isinstance(value, bool) or value == "auto":
        return value
    if str(value).strip().lower() not in SWITCH_WORDS:
        raise ValueError(f"{name}={value!r} is unknown; allowed: true, false, auto")
    return SWITCH_WORDS[str(value).strip().lower()]


def _recommended(name: str, help_text: str) -> dict[str, Any]:
    """Field metadata of a task-recommendable field (its help names the fallback default)."""
    return {"help": f"{help_text} Default: the task's recommendation, else {DEFAULTS[name]}."}


@dataclass
@add_option_fields(unset_default=True)
class NumberTrainingArguments:
    """Everything ``hf-numbers train`` needs: task, model, optimisation, evaluation and checkpoints.

    The options of every registered number encoding (``hf_numbers.encoding_options()``, such as
    ``fone_int_digits``) are fields too, at the end; None (the default) means fitted to the data
    where the encoding fits that option, else the encoding's default.
    """

    output_dir: str = field(
        default="runs/train", metadata={"help": "Folder for checkpoints, the final model, metrics and plots."}
    )
    # ---- task
    task: str = field(
        default="lookup",
        metadata={
            "help": f"One of {', '.join(TASKS)} (see `hf-numbers make-data --help`); with --data_dir, the task "
            "make-data recorded."
        },
    )
    data_dir: str | None = field(
        default=None, metadata={"help": "A dataset saved by `hf-numbers make-data`; default: generate the task."}
    )
    task_options: list[str] | None = field(
        default=None,
        metadata={
            "help": "Options of the task generator as name=value pairs, e.g. `--task_options operation=subtract "
            "int_digits=3 frac_digits=2` (fone_arithmetic) or `digits=4` (multiplication); values are Python "
            "literals. See `hf-numbers make-data --help` for each task's options."
        },
    )
    train_size: int | None = field(
        default=None, metadata=_recommended("train_size", "Training examples when generating the task.")
    )
    eval_size: int | None = field(
        default=None,
        metadata=_recommended("eval_size", "Examples of each validation/test split when generating the task."),
    )
    data_seed: int = field(default=0, metadata={"help": "Seed of the task generator."})
    max_length: int | None = field(
        default=None, metadata=_recommended("max_length", "Truncate tokenized texts to this many tokens.")
    )
    completion_only: bool | None = field(
        default=None,
        metadata=_recommended(
            "completion_only",
            "Train only on what follows each example's prompt (the answer): the prompt is left unlabelled "
            "(causal LM) or the answer alone is masked (masked LM).",
        ),
    )
    text_only: bool | None = field(
        default=None,
        metadata=_recommended(
            "text_only",
            "Masked LM: mask text tokens only, numbers stay visible (the floating-point embedding paper's "
            "masked-word protocol); evaluation then adds masked-word perplexity and top-k accuracy.",
        ),
    )
    # ---- model
    backbone: str | None = field(
        default=None,
        metadata=_recommended(
            "backbone",
            "One of "
            + ", ".join(f"{name} ({'causal' if spec.causal else 'masked'} LM)" for name, spec in BACKBONES.items())
            + ", or the model type of any other causal or masked LM of transformers (qwen2, mistral, gemma2, "
            "distilbert, ...: held by composition); with --pretrained and no --backbone, the folder's model type.",
        ),
    )
    number_encoding: str | None = field(
        default=None,
        metadata={
            "help": f"One of {', '.join(NUMBER_ENCODINGS)}; default: digits where --pretrained is a causal LM (its "
            "own digit tokens plus their values, with the number-token loss; docs/pretrained.md says why), else xval."
        },
    )
    pretrained: str | None = field(
        default=None,
        metadata={
            "help": "Folder of a plain pretrained backbone (and its tokenizer) to adapt; default: a new small model."
        },
    )
    gguf_file: str | None = field(
        default=None,
        metadata={"help": "A GGUF file in the --pretrained folder to load (de-quantized to float32; needs gguf)."},
    )
    add_bos_token: bool | None = field(
        default=None,
        metadata={
            "help": "With --pretrained: start every text with the tokenizer's BOS token (true) or not (false); "
            "default: true where the tokenizer has a BOS token and adds none (SmolLM2), else as it does. A causal "
            "LM reads its first token where attention sinks, so a number there is read poorly."
        },
    )
    number_token_init: str = field(
        default="digits",
        metadata={
            "help": "How a --pretrained model's new number-token rows start: digits (the mean of the digits' rows) "
            "or mean (transformers' mean resizing)."
        },
    )
    freeze_backbone: bool = field(
        default=False, metadata={"help": "Train only the number module and heads (frozen trunk)."}
    )
    lora_r: int = field(
        default=0,
        metadata={
            "help": "Rank of LoRA adapters on the trunk's linear layers (PEFT; 0: no LoRA). The number module and "
            "the number tokens' rows train whole; final/ holds the merged model and final/adapter the adapter."
        },
    )
    lora_alpha: int | None = field(default=None, metadata={"help": "LoRA scaling alpha; default: 2 x lora_r."})
    lora_dropout: float = field(default=0.0, metadata={"help": "Dropout on the LoRA adapters' input."})
    lora_target_modules: list[str] | None = field(
        default=None,
        metadata={"help": "Names of the trunk's linear layers to adapt (e.g. q_proj v_proj); default: all of them."},
    )
    align_steps: int = field(
        default=0,
        metadata={
            "help": "Steps that align a --pretrained model's new [NUM] module to it before the task: the trunk "
            "frozen, the model reading its own digits the teacher (hf_numbers.training.alignment); 0: none."
        },
    )
    align_learning_rate: float = field(default=1e-3, metadata={"help": "Learning rate of the --align_steps."})
    number_output: str = field(
        default="num_token",
        metadata={
            "help": "How a [NUM] encoding's model writes numbers: num_token (its number token and head), or digits: "
            "numbers in, digits out, the prompt's numbers read as [NUM] and answers written with a --pretrained "
            "causal LM's own digit tokens (number_token_loss then applies)."
        },
    )
    number_token_loss: str | None = field(
        default=None,
        metadata={
            "help": "none, or ntl: the number-token loss of Zausinger et al. (the ntloss package) on the digit "
            "tokens of a text encoding, added to the token loss and reported as the number loss; number-level: its "
            "per-number form (the relative error of the number the digits' expected values make); ntl+number-level: "
            "both. Default: ntl where --pretrained is a causal LM and the encoding writes digits (text, digits), "
            "else none."
        },
    )
    number_token_loss_weight: float = field(
        default=0.3, metadata={"help": "Weight of --number_token_loss (the paper's 0.3)."}
    )
    digit_lookahead: int | None = field(
        default=None,
        metadata={
            "help": "A causal LM that writes digits: heads that score, where it writes a digit, the number's next 1 "
            f"to N digits after it (training only; hf_numbers.modeling.digit_lookahead), N <= {MAX_LOOKAHEAD}; 0: "
            "none. Default: 2, weighted by confidence and from each number's second digit, where --pretrained is a "
            "causal LM that writes its own digits as written (not units first; the recipe, docs/pretrained.md); else "
            "0. Given, the plain lookahead: unweighted, from the first digit, unless the options below say otherwise."
        },
    )
    digit_lookahead_weight: float = field(default=1.0, metadata={"help": "Weight of --digit_lookahead's loss."})
    digit_lookahead_confidence: bool | None = field(
        default=None,
        metadata={
            "help": "Weight each digit --digit_lookahead asks for by the probability the model gives it where it is "
            "the next token (a digit it cannot write even next, such as a product's middle digits, adds little noise). "
            "Default: true with --pretrained's lookahead, else false."
        },
    )
    digit_lookahead_confidence_power: float = field(
        default=1.0,
        metadata={
            "help": "The power --digit_lookahead_confidence's weights are raised to: above 1, a digit the model writes "
            "unsurely (a temperature's units, probability 0.5) is asked for ahead far less than one it is sure of (a "
            "sum's, 0.95): 0.06 against 0.81 at 4."
        },
    )
    digit_lookahead_mean: str = field(
        default="places",
        metadata={
            "help": "What --digit_lookahead's loss is a mean over: places (each head's scored places, then the heads: "
            "a batch weighs the same however few digits it asks for), or tokens (each place asked for weighs what one "
            "token written weighs, as in multi-token prediction: a task of short digit runs, 44.5, asks for little)."
        },
    )
    digit_lookahead_layer: int | None = field(
        default=None,
        metadata={
            "help": "Which hidden state --digit_lookahead's heads read: unset, the last (what the token head reads); "
            "k, the output of the backbone's k-th layer through its final norm (the digits ahead asked of the middle "
            "of the trunk, the last layers left to the next token)."
        },
    )
    digit_lookahead_conditioned: bool = field(
        default=False,
        metadata={
            "help": "Give --digit_lookahead's heads the digits between (teacher-forced), as multi-token prediction "
            "conditions on the next token: a digit that could go either way is asked for given the branch taken."
        },
    )
    digit_lookahead_leading: bool | None = field(
        default=None,
        metadata={
            "help": "Ask --digit_lookahead's digits ahead where a number's first digit is written too; false: from "
            "its second digit on (the leading digit, a temperature's decade, written without a press to foresee the "
            "rest). Default: false with --pretrained's lookahead, else true."
        },
    )
    digit_lookahead_schedule: str = field(
        default="constant",
        metadata={
            "help": "How --digit_lookahead_weight moves over training: constant, or linear (from the weight at the "
            "first step down to 0 at the last: an annealed auxiliary loss, the trunk ending trained for its tokens)."
        },
    )
    hidden_size: int | None = field(default=None, metadata=_recommended("hidden_size", "Width of a new model."))
    num_layers: int | None = field(default=None, metadata=_recommended("num_layers", "Layers of a new model."))
    num_heads: int | None = field(default=None, metadata=_recommended("num_heads", "Attention heads of a new model."))
    dropout: float = field(
        default=0.0,
        metadata={
            "help": "Every dropout probability of a new model (embeddings, attention, residuals). 0 by default: "
            "dropout noise on the number features keeps FoNE from learning exact digits and biases xVal's "
            "values at evaluation. A --pretrained backbone keeps its own dropout."
        },
    )
    vocab_size: int = field(default=600, metadata={"help": "Vocabulary of the tokenizer trained for a new model."})
    number_loss_weight: float = field(
        default=1.0, metadata={"help": "Weight of the number loss added to the token loss."}
    )
    mlm_probability: float | None = field(
        default=None, metadata=_recommended("mlm_probability", "Masked LM: probability of masking a token.")
    )
    # ---- optimisation
    max_steps: int | None = field(
        default=None, metadata=_recommended("max_steps", "Optimizer steps (0: evaluate the model as built).")
    )
    per_device_train_batch_size: int | None = field(
        default=None, metadata=_recommended("per_device_train_batch_size", "Training batch size per process.")
    )
    per_device_eval_batch_size: int | None = field(
        default=None, metadata={"help": "Evaluation batch size per process; default: per_device_train_batch_size."}
    )
    gradient_accumulation_steps: int = field(default=1, metadata={"help": "Micro-batches per optimizer step."})
    learning_rate: float | None = field(
        default=None, metadata=_recommended("learning_rate", "Peak learning rate of AdamW.")
    )
    number_learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "Peak learning rate of the number module (the [NUM] encoding, or the digits' value embedding), "
            "on the same schedule; default: --learning_rate. LLaVA trains its projector 10x slower than the rest "
            "once aligned; this sets that ratio."
        },
    )
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay."})
    warmup_steps: int | None = field(default=None, metadata=_recommended("warmup_steps", "Linear warm-up steps."))
    min_lr_ratio: float = field(
        default=0.1, metadata={"help": "Cosine schedule floor, as a fraction of the peak (xVal's setting)."}
    )
    max_grad_norm: float = field(default=1.0, metadata={"help": "Gradient clipping norm (0 disables)."})
    mixed_precision: str = field(
        default="auto",
        metadata={
            "help": "no, fp16, bf16, or auto: what `accelerate launch` chose (ACCELERATE_MIXED_PRECISION) when "
            "launched by it, else bf16 on a GPU that has it and no elsewhere."
        },
    )
    seed: int = field(default=0, metadata={"help": "Seed of initialisation, data order, masking and dropout."})
    use_cpu: bool = field(default=False, metadata={"help": "Train on the CPU even if a GPU is present."})
    gradient_checkpointing: bool = field(
        default=False,
        metadata={
            "help": "Recompute each transformer block's activations in the backward pass instead of keeping them "
            "(less memory for a slower step; transformers' gradient checkpointing, non-reentrant)."
        },
    )
    torch_compile: str = field(
        default="auto",
        metadata={
            "help": "true, false, or auto (true on a CUDA GPU): compile the model's training step with torch.compile "
            "(TorchInductor; on CPU it needs a C++ compiler). The first steps, and the first of each new batch "
            "shape, wait for the compilation; evaluation runs uncompiled. See docs/benchmarks.md (Training step)."
        },
    )
    fused_token_loss: str = field(
        default="false",
        metadata={
            "help": "true, false, or auto (where it can run: a CUDA GPU with Liger Kernel, pip install "
            "'hf_numbers[gpu]'): the token head's cross-entropy fused with its matrix product, so a step's logits "
            "never sit in memory. Causal models whose token head is their output embeddings; not yet timed."
        },
    )
    pad_vocab_to_multiple_of: int | None = field(
        default=None,
        metadata={
            "help": "A new model's embedding and token-head rows, rounded up to a multiple of this (nanoGPT's 50304 "
            "rows for GPT-2's 50257 tokens: matrix shapes a GPU multiplies fastest). Unset: 64 on a CUDA GPU, none "
            "elsewhere; 1: none. No token has the extra rows, so training pushes their logits down."
        },
    )
    fsdp: str = field(
        default="false",
        metadata={
            "help": "Shard the model across the processes with FSDP2 (each transformer block, then the rest): each "
            "process holds a slice of every weight and of the optimizer state. true, false, or TrainingArguments' "
            "words: full_shard (= true), shard_grad_op, auto_wrap, offload. On CPU with --use_cpu true (gloo). "
            "Checkpoints are sharded (torch.distributed.checkpoint) and resume with the same number of processes; "
            "final/ is gathered into one ordinary folder."
        },
    )
    fsdp_cpu_offload: bool = field(
        default=False,
        metadata={
            "help": "With --fsdp on GPUs: keep the parameter shards, their gradients and the optimizer state in CPU "
            "memory (the optimizer step runs on the CPU)."
        },
    )
    # ---- evaluation, logging, checkpoints
    eval_steps: int = field(default=200, metadata={"help": "Evaluate every N optimizer steps (0: only at the end)."})
    eval_few_shot: int = field(
        default=0,
        metadata={"help": "Write the first N training examples before every evaluated text (a few-shot prompt)."},
    )
    logging_steps: int = field(
        default=50,
        metadata={"help": "Log the training losses every N steps: a console line, log_history.json, --report_to."},
    )
    report_to: list[str] = field(
        default_factory=lambda: ["none"],
        metadata={
            "help": f"Experiment trackers for the logs and metrics, through Accelerate: {', '.join(TRACKERS)} "
            "(all: every one installed). TensorBoard writes to --logging_dir."
        },
    )
    logging_dir: str | None = field(
        default=None, metadata={"help": "Folder of TensorBoard-style tracker files; default: <output_dir>/runs."}
    )
    run_name: str | None = field(
        default=None, metadata={"help": "The run's name for trackers such as wandb and trackio; default: output_dir."}
    )
    save_steps: int = field(default=200, metadata={"help": "Checkpoint every N steps (0: only the final model)."})
    save_total_limit: int = field(default=2, metadata={"help": "Keep at most this many checkpoints (0 keeps all)."})
    resume_from_checkpoint: str | None = field(
        default=None, metadata={"help": "A checkpoint folder, or 'latest' for the newest in output_dir."}
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "Delete the earlier run in output_dir and start again (else a used folder is refused)."},
    )
    allow_inexact_resume: bool = field(
        default=False,
        metadata={
            "help": "Resume even when the checkpoint's random states are missing or damaged or the number of "
            "processes changed (the run then differs from an uninterrupted one); without it, such a resume fails."
        },
    )
    disable_tqdm: bool = field(
        default=False, metadata={"help": "Hide the progress bar (the log lines every --logging_steps remain)."}
    )
    # ---- model card and Hub
    license: str | None = field(
        default=None,
        metadata={
            "help": "The model card's license, a Hub license id (apache-2.0, mit, ...); default: the license of the "
            "--pretrained backbone's card, else none (the card says so: choosing one is the model's owner's call)."
        },
    )
    base_model: str | None = field(
        default=None,
        metadata={
            "help": "Hub id of the --pretrained backbone (org/name), the card's base_model; default: read from the "
            "folder's path where it is a Hugging Face cache snapshot (models--org--name/snapshots/...), else none."
        },
    )
    push_to_hub: bool = field(
        default=False,
        metadata={
            "help": "Upload the final folder (model, tokenizer, code, model card) to --hub_model_id after training. "
            "The repository is created (or reused) before training, so a bad token or name fails early."
        },
    )
    hub_model_id: str | None = field(
        default=None, metadata={"help": "Repository of --push_to_hub: name or org/name; default: output_dir's name."}
    )
    hub_token: str | None = field(
        default=None,
        metadata={
            "help": "Token for --push_to_hub; default: the login of `hf auth login` or HF_TOKEN. Never written to "
            "training_args.json, the trackers or the model card."
        },
    )
    hub_private_repo: bool | None = field(
        default=None, metadata={"help": "Create the repository private; default: the Hub's (an existing one is kept)."}
    )

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task={self.task!r} is unknown; allowed: {', '.join(TASKS)}")
        if self.pretrained:  # before its config is read: a GGUF file that is not there reads as no config
            check_gguf_file(self.pretrained, self.gguf_file)
        if self.backbone is None and self.pretrained:  # else the task's recommendation, or the default
            self.backbone = backbone_of_folder(self.pretrained, self.gguf_file)
        self._fill_recommended()
        causal = get_backbone(self.backbone).causal  # a ValueError listing the known backbones
        self._fill_encoding_defaults(adapting=bool(self.pretrained) and causal)
        get_encoding(self.number_encoding)  # and the registered encodings
        if self.per_device_eval_batch_size is None:
            self.per_device_eval_batch_size = self.per_device_train_batch_size
        self.fsdp, offload = parse_fsdp(self.fsdp)  # "" when not sharding, so the field reads as a switch
        self.fsdp_cpu_offload = self.fsdp_cpu_offload or offload
        for name in ("torch_compile", "fused_token_loss"):
            setattr(self, name, parse_switch(name, getattr(self, name)))
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}={getattr(self, name)!r} is unknown; allowed: {', '.join(allowed)}")
        for name, holds, rule in VALUE_RULES:
            if not holds(getattr(self, name)):
                raise ValueError(f"{name} must be {rule}, got {getattr(self, name)}")
        for conflict, message in CONFLICTS:
            if conflict(self):
                raise ValueError(message(self))
        self._check_encoding_options()
        options = self.task_generator_options()  # fail early on a malformed name=value
        if not self.data_dir:  # or on an option the generator lacks
            check_task_options(self.task, options)
        self._check_trackers()
        repo_ids = {"base_model": self.base_model, "hub_model_id": self.hub_repo_id if self.push_to_hub else None}
        for name, repo_id in repo_ids.items():
            try:
                if repo_id is not None:
                    validate_repo_id(repo_id)
            except ValueError as error:
                raise ValueError(f"{name} {repo_id!r} is not a Hub repository id ({error})") from None

    @property
    def hub_repo_id(self) -> str:
        """The repository of ``push_to_hub``: ``hub_model_id``, else the name of ``output_dir`` (as in
        ``TrainingArguments``; the Hub puts a name without a namespace in the token's).

        Example:
            >>> NumberTrainingArguments(output_dir="runs/lookup-fone").hub_repo_id
            'lookup-fone'
        """
        return self.hub_model_id or Path(self.output_dir).resolve().name

    def to_dict(self) -> dict[str, Any]:
        """The arguments as a dict, without the secret ``hub_token`` (None): what ``training_args.json``,
        the trackers and the model card record.

        Example:
            >>> NumberTrainingArguments(hub_token="hf_secret").to_dict()["hub_token"] is None
            True
        """
        return {**asdict(self), "hub_token": None}

    def _check_trackers(self) -> None:
        """``report_to`` as a list of known trackers, each installed; ``ValueError`` naming the problem."""
        if isinstance(self.report_to, str):
            self.report_to = [self.report_to]
        unknown = [name for name in self.report_to if name not in TRACKERS]
        if unknown:
            raise ValueError(f"report_to {', '.join(unknown)} is unknown; allowed: {', '.join(TRACKERS)}")
        if "none" in self.report_to and len(self.report_to) > 1:
            raise ValueError(f"report_to none excludes other trackers, got {' '.join(self.report_to)}")
        installed = {str(tracker) for tracker in get_available_trackers()}
        missing = [name for name in self.report_to if name not in ("none", "all") and name not in installed]
        if missing:
            raise ValueError(f"report_to {', '.join(missing)}: not installed (pip install {' '.join(missing)})")

    @property
    def trackers(self) -> list[str]:
        """The Accelerate trackers to log to (``log_with``); empty for ``report_to none``.

        Example:
            >>> NumberTrainingArguments(report_to="none").trackers
            []
        """
        return [name for name in self.report_to if name != "none"]

    @property
    def tracker_dir(self) -> str:
        """Where trackers that write files (TensorBoard) write them: ``logging_dir``, else ``<output_dir>/runs``.

        Example:
            >>> NumberTrainingArguments(output_dir="runs/a").tracker_dir
            'runs/a/runs'
        """
        return self.logging_dir or str(Path(self.output_dir) / "runs")

    @property
    def task_name(self) -> str:
        """The task's name: the one ``make-data`` recorded next to ``data_dir``, else ``task``."""
        return task_name(self.task, self.data_dir)

    def _check_encoding_options(self) -> None:
        """The chosen encoding's options given here, checked before any work where the data cannot change the
        verdict: every option the encoding fits to the data is given, or it fits none (``digits_features``,
        ``text_digit_order``, ``bittokens_head``). The others are checked once fitted (:meth:`check_encoding_values`).
        """
        encoding = get_encoding(self.number_encoding)
        given = {option.name: getattr(self, option.name) for option in encoding.options}
        given = {name: value for name, value in given.items() if value is not None}
        if given and all(not option.fitted or option.name in given for option in encoding.options):
            self.check_encoding_values(given)

    def check_encoding_values(self, options: dict[str, Any]) -> None:
        """``options`` of the chosen encoding checked by the encoding itself (``validate_options``, as the model's
        config will): :class:`EncodingOptionError` naming the value, which ``hf-numbers train`` answers with a
        usage error.

        The config's fields that come from the tokenizer and the backbone (number and digit token ids, a
        ``--pretrained`` width) are checked when the model is built; here they take values that pass.

        Example:
            >>> NumberTrainingArguments(number_encoding="fone").check_encoding_values({"fone_int_digits": 0})
            Traceback (most recent call last):
            ...
            hf_numbers.training.arguments.EncodingOptionError: fone_int_digits must be >= 1, got 0
        """
        encoding = get_encoding(self.number_encoding)
        own = {option.name: option for option in encoding.options}
        options = {name: coerce_option(own[name], value) for name, value in options.items()}
        defaults = {option.name: option.default for option in encoding_options()}  # a config reads any option
        try:
            encoding.validate_options(SimpleNamespace(
                **defaults | options, number_encoding=self.number_encoding, num_token_ids=[], vocab_size=1,
                digit_tokens=[[0, 0, 1, 1]], hidden_size=math.inf if self.pretrained else self.hidden_size,
            ))  # fmt: skip
        except ValueError as error:
            raise EncodingOptionError(str(error)) from None

    def _fill_encoding_defaults(self, adapting: bool) -> None:
        """The fields of :data:`PRETRAINED_RECIPE` where not given: the recipe's when ``adapting`` a ``--pretrained``
        causal LM (NTL and the lookahead only where it writes its own digits, the lookahead only as written), else
        :data:`WITHOUT_RECIPE`'s."""
        if self.number_encoding is None:
            self.number_encoding = (PRETRAINED_RECIPE if adapting else WITHOUT_RECIPE)["number_encoding"]
        digits_out = adapting and (_writes_own_digits(self.number_encoding) or self.number_output == "digits")
        if self.number_token_loss is None:
            self.number_token_loss = (PRETRAINED_RECIPE if digits_out else WITHOUT_RECIPE)["number_token_loss"]
        # written units first, the places whose carries decide a digit are written before it: nothing to look ahead to,
        # and the place from the left is the place from the units
        as_written = self.text_digit_order in (None, "as_written")
        fill_lookahead(self, recipe=digits_out and as_written)
        if self.digits_features is None and adapting and as_written and _adds_digit_values(self.number_encoding):
            self.digits_features = PRETRAINED_RECIPE["digits_features"]

    def _fill_recommended(self) -> None:
        """Fill every ``None`` field from the task's recommendation, else from :data:`DEFAULTS`.

        The two masking recipes exclude each other: one asked for explicitly (``--text_only true``)
        turns the other off instead of taking the task's recommendation of it.
        """
        spec = TASKS.get(self.task_name)
        recommended = dict(spec.training_defaults) if spec is not None else {}
        for chosen, other in (("text_only", "completion_only"), ("completion_only", "text_only")):
            if getattr(self, chosen) and getattr(self, other) is None:
                setattr(self, other, False)
        for name in DEFAULTS:
            if getattr(self, name) is None:
                setattr(self, name, recommended.get(name, DEFAULTS[name]))

    def task_generator_options(self) -> dict[str, Any]:
        """``task_options`` as a dict: ``["digits=4", "operation=add"]`` -> ``{"digits": 4, "operation": "add"}``.

        Example:
            >>> NumberTrainingArguments(task="multi_operand", task_options=["operands=(2, 3)"]).task_generator_options()
            {'operands': (2, 3)}
        """
        return parse_task_options(self.task_options)

    @property
    def backbone_spec(self) -> BackboneSpec:
        """The backbone's row of the backbone table."""
        return get_backbone(self.backbone)

    @property
    def causal(self) -> bool:
        """Whether the backbone is a causal LM rather than a masked LM."""
        return self.backbone_spec.causal


def _check_declared(cls: type) -> None:
    """Every field of ``cls`` is in ``hf_numbers_launcher.TRAIN_OPTION_GROUPS`` or an encoding's option: the launcher
    refuses a flag it does not declare, so a field missing there could never be set from the command line."""
    encodings = {option.name for option in encoding_options()}
    declared = {name for names in TRAIN_OPTION_GROUPS.values() for name in names}
    missing = [f.name for f in fields(cls) if f.name not in declared | encodings]
    if missing:
        raise TypeError(f"{cls.__name__} fields {missing} are in no group of hf_numbers_launcher.TRAIN_OPTION_GROUPS")


_check_declared(NumberTrainingArguments)


def _has_module(encoding: str) -> bool:
    return get_encoding(encoding).has_number_module


def fill_lookahead(args: Any, recipe: bool) -> None:
    """The digit lookahead's fields of :data:`PRETRAINED_RECIPE` left ``None`` on ``args``: the recipe's where
    ``recipe`` and ``--digit_lookahead`` is not given, else :data:`WITHOUT_RECIPE`'s (the plain lookahead's settings
    where it is given). Shared with the example scripts (their ``ModelArguments``).

    Example:
        >>> args = SimpleNamespace(digit_lookahead=3, digit_lookahead_confidence=None, digit_lookahead_leading=None)
        >>> fill_lookahead(args, recipe=True); args.digit_lookahead_confidence, args.digit_lookahead_leading
        (False, True)
    """
    values = PRETRAINED_RECIPE if recipe and args.digit_lookahead is None else WITHOUT_RECIPE
    for name in LOOKAHEAD_RECIPE:
        if getattr(args, name) is None:
            setattr(args, name, values[name])


def _adds_digit_values(encoding: str) -> bool:
    """The encoding adds a value embedding at the backbone's digit tokens (``digits``): ``digits_features`` applies."""
    return encoding in NUMBER_ENCODINGS and get_encoding(encoding).adds_digit_values


def _writes_own_digits(encoding: str) -> bool:
    """The encoding leaves numbers to the backbone's own digit tokens (``text``, ``digits``; not a text scheme's)."""
    return encoding in NUMBER_ENCODINGS and get_encoding(encoding).tokenizer_options({}).get("number_scheme") == "text"


def _ignored_options(args: Any) -> list[str]:
    """Encoding options given that the chosen encoding does not take (it would ignore them: ``--text_digit_order``
    or ``--fone_int_digits`` with xval), each with the encodings that do."""
    own = own_options(args.number_encoding)
    return [f"{option.name} (an option of {', '.join(option_owners(option.name))})" for option in encoding_options()
            if getattr(args, option.name) is not None and option.name not in own]  # fmt: skip


def _ignored_options_message(args: Any) -> str:
    names = _ignored_options(args)
    it = "them" if len(names) > 1 else "it"
    return (f"{'; '.join(names)}: not for number_encoding {args.number_encoding!r}, which would ignore {it} (its "
            f"options: {', '.join(own_options(args.number_encoding)) or 'none'}); drop {it} or choose an encoding "
            f"that takes {it}")


LOOKAHEAD_SCHEDULES = ("constant", "linear")
"""How ``--digit_lookahead_weight`` moves over training (``--digit_lookahead_schedule``)."""
CHOICES = {"mixed_precision": PRECISIONS, "number_token_init": NUMBER_TOKEN_INITS, "number_output": NUMBER_OUTPUTS,
           "number_token_loss": NUMBER_TOKEN_LOSSES, "digit_lookahead_schedule": LOOKAHEAD_SCHEDULES,
           "digit_lookahead_mean": LOOKAHEAD_MEANS}
"""Arguments that name one of a few choices."""
_AT_LEAST_ONE = ("per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
                 "max_length", "train_size", "eval_size", "logging_steps")
VALUE_RULES: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("max_steps", lambda v: v >= 0, ">= 0 (0: evaluate the model as built)"),
    ("eval_few_shot", lambda v: v >= 0, ">= 0"),
    *((name, lambda v: v >= 1, ">= 1") for name in _AT_LEAST_ONE),
    *((name, lambda v: v >= 0, ">= 0") for name in ("eval_steps", "save_steps", "warmup_steps", "save_total_limit")),
    ("min_lr_ratio", lambda v: 0.0 <= v <= 1.0, "in [0, 1]"),
    ("learning_rate", lambda v: math.isfinite(v) and v > 0, "a finite number > 0"),
    ("align_learning_rate", lambda v: math.isfinite(v) and v > 0, "a finite number > 0"),
    ("number_learning_rate", lambda v: v is None or (math.isfinite(v) and v > 0), "a finite number > 0 (or unset)"),
    ("dropout", lambda v: 0.0 <= v < 1.0, "in [0, 1)"),
    ("lora_dropout", lambda v: 0.0 <= v < 1.0, "in [0, 1)"),
    ("mlm_probability", lambda v: 0.0 < v <= 1.0, "in (0, 1]"),
    ("lora_r", lambda v: v >= 0, ">= 0 (0: no LoRA)"),
    ("number_token_loss_weight", lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0"),
    ("digit_lookahead", lambda v: 0 <= v <= MAX_LOOKAHEAD, f"in [0, {MAX_LOOKAHEAD}] (0: none)"),
    ("digit_lookahead_weight", lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0"),
    ("digit_lookahead_confidence_power", lambda v: math.isfinite(v) and v > 0, "a finite number > 0"),
    ("pad_vocab_to_multiple_of", lambda v: v is None or v >= 1, ">= 1 (or unset)"),
)
"""(argument, whether a value is allowed, the rule in words): each argument's own range."""
LOOKAHEAD_SETTINGS = {
    "digit_lookahead_confidence": "weights the digits the digit lookahead asks for",
    "digit_lookahead_confidence_power": "sharpens the digit lookahead's confidence weights",
    "digit_lookahead_mean": "sets what the digit lookahead's loss is a mean over",
    "digit_lookahead_layer": "sets the layer the digit lookahead's heads read",
    "digit_lookahead_conditioned": "gives the digit lookahead's heads the digits between",
    "digit_lookahead_leading": "keeps the digit lookahead off a number's first digit",
    "digit_lookahead_schedule": "moves the weight of the digit lookahead",
}
"""The options that shape ``--digit_lookahead``, and what each does: set away from its default without it, refused."""


def _set(args: Any, name: str) -> bool:
    """Whether ``name`` is away from its default (:data:`WITHOUT_RECIPE`'s, else ``NumberTrainingArguments``'
    field's)."""
    default = WITHOUT_RECIPE.get(name, NumberTrainingArguments.__dataclass_fields__[name].default)
    return getattr(args, name) != default


def _named(args: Any, name: str) -> str:
    """``name`` with its value, as a refusal shows it (a switch turned on by its name alone)."""
    value = getattr(args, name)
    if isinstance(value, bool):
        return name if value else f"{name} false"
    return f"{name} {value}"


CONFLICTS: tuple[tuple[Callable[[Any], Any], Callable[[Any], str]], ...] = (
    (lambda a: a.data_dir and (a.task_options or a.data_seed),
     lambda a: f"task_options and data_seed shape a generated task (--task); --data_dir {a.data_dir} is already made "
               f"(hf-numbers make-data takes them): drop them, or generate the task here with --task"),
    (lambda a: a.gguf_file and not a.pretrained,
     lambda a: "gguf_file names a file in the --pretrained folder; it needs --pretrained"),
    (lambda a: a.add_bos_token is not None and not a.pretrained,
     lambda a: "add_bos_token sets a --pretrained tokenizer's BOS; a new vocabulary follows its backbone's"),
    (lambda a: a.align_steps < 0 or a.align_steps and not a.pretrained,
     lambda a: f"align_steps must be >= 0 and needs --pretrained (a model to align to), got {a.align_steps}"),
    (lambda a: a.align_steps and not _has_module(a.number_encoding),
     lambda a: f"align_steps aligns a [NUM] module; number_encoding {a.number_encoding!r} has none"),
    (lambda a: not a.lora_r and (a.lora_alpha is not None or a.lora_target_modules or a.lora_dropout),
     lambda a: "lora_alpha, lora_dropout and lora_target_modules shape LoRA adapters; set --lora_r too"),
    (lambda a: a.lora_r and a.fsdp,
     lambda a: "--lora_r with --fsdp is not supported yet: train LoRA on one process or with DDP"),
    (lambda a: a.number_output == "digits" and not (_has_module(a.number_encoding) and a.pretrained and a.causal),
     lambda a: f"number_output digits reads the prompt's numbers as [NUM] and writes the answer with a --pretrained "
               f"causal LM's own digits; number_encoding {a.number_encoding!r}, --pretrained {a.pretrained!r}, "
               f"backbone {a.backbone!r} (causal: {a.causal}) is not that"),
    (lambda a: a.number_output == "digits" and not a.completion_only,
     lambda a: "number_output digits trains on each answer after its prompt: it needs --completion_only true"),
    (lambda a: a.number_token_loss != "none" and _has_module(a.number_encoding) and a.number_output != "digits",
     lambda a: f"number_token_loss {a.number_token_loss} scores digit tokens; number_encoding {a.number_encoding!r} "
               f"writes numbers as [NUM] tokens and has its own number loss. Use a text encoding "
               f"({', '.join(n for n in NUMBER_ENCODINGS if not _has_module(n))})"),
    (lambda a: a.digit_lookahead and not a.causal,
     lambda a: f"digit_lookahead scores the digits a causal LM writes; backbone {a.backbone!r} is a masked LM"),
    (lambda a: a.digit_lookahead and _has_module(a.number_encoding) and a.number_output != "digits",
     lambda a: f"digit_lookahead scores digit tokens; number_encoding {a.number_encoding!r} writes numbers as [NUM] "
               f"tokens (use a text encoding, or --number_output digits)"),
    *((lambda a, name=name: _set(a, name) and not a.digit_lookahead,
       lambda a, name=name, does=does: f"{_named(a, name)} {does}; set --digit_lookahead too")
      for name, does in LOOKAHEAD_SETTINGS.items()),
    (lambda a: a.digit_lookahead and a.digit_lookahead_confidence_power != 1 and not a.digit_lookahead_confidence,
     lambda a: f"digit_lookahead_confidence_power {a.digit_lookahead_confidence_power} raises the digit lookahead's "
               f"confidence weights to a power; set --digit_lookahead_confidence true too"),
    (_ignored_options, _ignored_options_message),
    (lambda a: a.fsdp_cpu_offload and not a.fsdp,
     lambda a: "fsdp_cpu_offload offloads the shards of --fsdp; it needs --fsdp true"),
    (lambda a: a.text_only and a.completion_only,
     lambda a: "text_only and completion_only exclude each other (a task may recommend one); choose one"),
    (lambda a: a.text_only and a.causal,
     lambda a: f"text_only masks words for a masked LM, but backbone {a.backbone!r} is causal; choose a masked "
               "backbone or --text_only false"),
    (lambda a: (a.pad_vocab_to_multiple_of or 1) > 1 and a.pretrained,
     lambda a: f"pad_vocab_to_multiple_of rounds up a new model's vocabulary; a --pretrained model keeps its own "
               f"(with its number tokens), got {a.pad_vocab_to_multiple_of}"),
    (lambda a: a.base_model is not None and not a.pretrained,
     lambda a: "base_model names the --pretrained backbone's Hub id; it needs --pretrained"),
)  # fmt: skip
"""(whether the arguments conflict, the message): rules across arguments, checked in this order."""
