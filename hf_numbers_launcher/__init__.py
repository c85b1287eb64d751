"""The ``hf-numbers`` command's launcher: its top level, answered without importing ``hf_numbers``.

``import hf_numbers`` registers the configs, models and tokenizers with transformers' Auto classes, and
transformers' ``register`` functions take the classes themselves, so importing anything of the package
imports torch and the backbones' model classes (seconds). The console script ``hf-numbers`` therefore
starts in a separate top-level package of the same distribution: :func:`hf_numbers_launcher.launch.main`
answers the command's help (``hf-numbers``, ``hf-numbers --help``) and the usage errors it can tell from
names alone (an unknown command; an unknown flag of a command) with the standard library only, and imports
:mod:`hf_numbers.cli` (and so the registration) only to run a command or to show a command's own help,
which lists the registries' tasks, backbones and encodings.

This module declares what both sides read and imports nothing of ``hf_numbers``: the usage text, the
commands, the train options' names in their help groups (:data:`TRAIN_OPTION_GROUPS`, which
``NumberTrainingArguments`` checks its fields against), the renamed flags. The other commands' option names
(:data:`OPTIONS`) are copies of their parsers', checked by ``tests/test_startup.py``. The launcher refuses a
flag only when its name is none of the command's options (so it never refuses what the command would take);
every other check is the command's.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

USAGE = """The hf-numbers command: make-data, train, evaluate, card, demo.

    hf-numbers make-data --task lookup --output data/lookup
    hf-numbers train --task lookup --backbone gpt2 --number_encoding xval --output_dir runs/lookup
    hf-numbers train args.json --max_steps 100     # arguments from a JSON file; flags after it win
    hf-numbers train --task lookup --output_dir runs/lookup --push_to_hub --hub_model_id me/lookup-xval
    hf-numbers evaluate --checkpoint runs/lookup/checkpoint-200 --task lookup
    hf-numbers card runs/lookup                    # write runs/lookup/final/README.md (the model card) again
    hf-numbers demo

train takes every field of NumberTrainingArguments (hf-numbers train --help lists them) and runs
unchanged under accelerate launch (accelerate launch -m hf_numbers.cli train ...).
A bad argument is a usage error (exit code 2); flags are never abbreviated (--max_step is
unknown, not --max_steps), so a mistyped flag cannot be taken for another."""
"""What ``hf-numbers`` and ``hf-numbers --help`` print (before the list of commands)."""

COMMANDS = ("make-data", "train", "evaluate", "card", "demo")
"""The commands, in the order the help lists them (``hf_numbers.cli.COMMANDS``' keys)."""

TRAIN_OPTION_GROUPS: dict[str, tuple[str, ...]] = {
    "task and data": ("task", "data_dir", "task_options", "train_size", "eval_size", "data_seed", "max_length",
                      "completion_only", "text_only", "mlm_probability"),  # fmt: skip
    "model": ("backbone", "number_encoding", "pretrained", "freeze_backbone", "hidden_size", "num_layers",
              "num_heads", "dropout", "vocab_size", "number_loss_weight"),  # fmt: skip
    "adapting a pretrained model": ("gguf_file", "add_bos_token", "number_token_init", "lora_r", "lora_alpha",
                                    "lora_dropout", "lora_target_modules", "align_steps", "align_learning_rate",
                                    "number_output", "number_token_loss",
                                    "number_token_loss_weight", "digit_lookahead",
                                    "digit_lookahead_weight", "digit_lookahead_confidence",
                                    "digit_lookahead_confidence_power",
                                    "digit_lookahead_mean", "digit_lookahead_layer",
                                    "digit_lookahead_conditioned", "digit_lookahead_leading",
                                    "digit_lookahead_schedule"),  # fmt: skip
    "number encoding options (each used by the encoding it names)": (),  # every registered encoding's options
    "training": ("max_steps", "per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate",
                 "number_learning_rate",
                 "weight_decay", "warmup_steps", "min_lr_ratio", "max_grad_norm", "mixed_precision", "seed",
                 "use_cpu", "gradient_checkpointing", "torch_compile", "fused_token_loss",
                 "pad_vocab_to_multiple_of"),  # fmt: skip
    "evaluation, logging and checkpoints": ("output_dir", "overwrite_output_dir", "eval_steps", "eval_few_shot",
                                            "per_device_eval_batch_size", "logging_steps", "report_to",
                                            "logging_dir", "run_name", "disable_tqdm", "save_steps",
                                            "save_total_limit", "resume_from_checkpoint",
                                            "allow_inexact_resume"),  # fmt: skip
    "distributed training": ("fsdp", "fsdp_cpu_offload"),
    "model card and Hub": ("license", "base_model", "push_to_hub", "hub_model_id", "hub_token", "hub_private_repo"),
}
"""The fields of ``NumberTrainingArguments`` other than the encodings' options, in the groups of
``hf-numbers train --help`` (in order): the one list of the train options' names, read by the launcher (which
refuses a flag that names none of them), the help's layout and ``NumberTrainingArguments`` (which refuses a field
missing here)."""
OTHER_OPTIONS = "other options"
TRAIN_OPTIONS = tuple(name for names in TRAIN_OPTION_GROUPS.values() for name in names)
"""Every name of :data:`TRAIN_OPTION_GROUPS`."""
_OPTION_DECLARATION = re.compile(r'EncodingOption\(\s*"(\w+)"')


def encoding_option_names() -> tuple[str, ...]:
    """The number encodings' option names (each a train flag), read from their declarations in
    ``hf_numbers/modeling`` (``EncodingOption("<name>", ...)``) without importing the package, so that a new
    encoding needs no edit here.

    Example:
        >>> "fone_int_digits" in encoding_option_names()
        True
    """
    spec = importlib.util.find_spec("hf_numbers")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return ()
    sources = sorted(Path(next(iter(spec.submodule_search_locations)), "modeling").glob("*.py"))
    return tuple(dict.fromkeys(name for path in sources for name in _OPTION_DECLARATION.findall(path.read_text())))


OPTIONS: dict[str, tuple[str, ...]] = {
    "make-data": ("task", "output", "train_size", "eval_size", "seed", "task_options"),
    "train": TRAIN_OPTIONS,
    "evaluate": ("checkpoint", "task", "data_dir", "eval_size", "seed", "task_options", "max_length", "output_dir",
                 "force", "masked_words"),  # fmt: skip
    "card": ("output", "model_id", "license", "base_model"),
    "demo": TRAIN_OPTIONS,
}
"""Each command's option names besides ``-h``/``--help``, as its flags name them with ``-`` read as ``_``
(``--max_steps`` and ``--max-steps`` are ``max_steps``)."""

RENAMED = {
    "per_device_batch_size": "per_device_train_batch_size",
    "cpu": "use_cpu",
    "progress_bar": "disable_tqdm (inverted: `--progress_bar false` is `--disable_tqdm true`)",
}
"""Earlier train argument names and the names to use now (the old names are refused, naming the new)."""
RENAMED_IN = ("train", "demo")
"""The commands whose flags :data:`RENAMED` names."""

HELP_FLAGS = ("-h", "--help")
_POSSIBLE_VALUE = re.compile(r"-\.?\d")
"""A negative number (or what a newer ``argparse`` may take for one): a value, never a flag."""


def usage() -> str:
    """What ``hf-numbers`` without a command prints: :data:`USAGE` and the commands."""
    return f"{USAGE}\n\ncommands: {', '.join(COMMANDS)}; 'hf-numbers <command> --help' explains each option"


def renamed_hint(names: Iterable[str], renamed: dict[str, str] = RENAMED) -> str:
    """Where ``names`` (flags or JSON keys) hold an earlier argument name, the name to use now.

    Example:
        >>> renamed_hint(["--cpu", "--bogus"])
        ' (--cpu is now --use_cpu)'
    """
    keys = (name.lstrip("-").partition("=")[0] for name in names)
    hints = [f"--{key} is now --{renamed[key]}" for key in keys if key in renamed]
    return f" ({'; '.join(hints)})" if hints else ""


def flags_of(argv: Sequence[str]) -> list[str]:
    """The arguments ``argparse`` reads as flags: those starting with ``-``, up to a ``--``, other than ``-``,
    negative numbers and strings holding a space."""
    flags = []
    for argument in argv:
        if argument == "--":
            break
        if argument.startswith("-") and argument != "-" and not _POSSIBLE_VALUE.match(argument) and " " not in argument:
            flags.append(argument)
    return flags


def unknown_flags(command: str, argv: Sequence[str]) -> list[str]:
    """The flags of ``argv`` (the arguments after ``command``) that name none of ``command``'s options.

    Example:
        >>> unknown_flags("train", ["--task", "lookup", "--max_step", "3", "--max-steps=3", "--learning_rate", "-1"])
        ['--max_step']
    """
    names = {flag: flag.lstrip("-").partition("=")[0].replace("-", "_") for flag in flags_of(argv)}
    unknown = [flag for flag, name in names.items() if name not in ("h", "help", *OPTIONS[command])]
    if unknown and OPTIONS[command] is TRAIN_OPTIONS:  # train's flags include the encodings' options
        encoding_options = encoding_option_names()
        unknown = [flag for flag in unknown if names[flag] not in encoding_options]
    return unknown
