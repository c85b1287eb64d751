"""The ``hf-numbers`` command: make-data, train, evaluate, card, demo (:data:`COMMANDS`).

:func:`main` runs a command; ``python -m hf_numbers.cli ...`` and ``accelerate launch -m hf_numbers.cli ...``
run it directly. The ``hf-numbers`` console script starts in :mod:`hf_numbers_launcher` instead, which answers
the command's help and its unknown commands and flags without importing ``hf_numbers`` (whose import
registers the model classes) and calls :func:`main` for the rest; the help text and the names it checks
are there (``hf_numbers_launcher.USAGE``, ``OPTIONS``).

``train`` takes every field of :class:`~hf_numbers.training.NumberTrainingArguments`
(``hf-numbers train --help`` lists them) and runs unchanged under ``accelerate launch``.
A bad argument is a usage error (exit code 2); flags are never abbreviated (``--max_step`` is
unknown, not ``--max_steps``), so a mistyped flag cannot be taken for another.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import transformers
from huggingface_hub.utils import validate_repo_id
from tqdm.contrib.logging import logging_redirect_tqdm
from transformers import HfArgumentParser, pipeline
from transformers.models.auto.configuration_auto import CONFIG_MAPPING
from transformers.utils import CONFIG_NAME

from hf_numbers_launcher import HELP_FLAGS, renamed_hint, usage

from .cli_help import GroupedArgumentParser, PlainHelpParser
from .data import TASKS, load_task, parse_task_options, save_task, task_name
from .evaluation import compute_number_metrics, evaluate_splits, format_metrics_table
from .modeling import NumberConfigFields
from .modeling.hub_card import CARD_FILE
from .strict_json import write_json
from .training import NumberTrainingArguments, build_dataset, load_trained, run_training
from .training.arguments import EncodingOptionError, check_pretrained_tokenizer
from .training.builders import BosTokenError
from .training.checkpoints import checkpoint_step
from .training.loop import check_run
from .training.model_card import model_card_from_run, run_folders
from .training.run_folder import FINAL_DIR, RUN_MARKER, RunFolderInUseError

DEMO_ARGS = [
    "--task",
    "temperature",
    "--backbone",
    "gpt2",
    "--number_encoding",
    "xval",
    "--output_dir",
    "runs/demo",
    "--max_steps",
    "1000",
    "--max_length",
    "256",
    "--eval_steps",
    "500",
    "--save_steps",
    "500",
    "--overwrite_output_dir",  # runs/demo is the demo's own folder: a second demo replaces the first
    "true",
]


def _task_option_names(task: str) -> list[str]:
    """The generator options of ``task`` that are not sizes or the seed."""
    names = inspect.signature(TASKS[task].builder).parameters
    return [name for name in names if not name.endswith("_size") and name != "seed"]


def _add_task_options(parser: argparse.ArgumentParser, default: str = "") -> None:
    parser.add_argument(
        "--task_options",
        nargs="*",
        default=None,
        metavar="NAME=VALUE",
        help="Options of the task's generator, e.g. operation=subtract int_digits=3 frac_digits=2 "
        "(fone_arithmetic), digits=4 (multiplication), operands='(2, 3)' (multi_operand). "
        + "; ".join(f"{name}: {', '.join(_task_option_names(name))}" for name in sorted(TASKS))
        + default,
    )


def make_data_parser() -> argparse.ArgumentParser:
    """``hf-numbers make-data``'s argument parser."""
    parser = PlainHelpParser(
        prog="hf-numbers make-data",
        allow_abbrev=False,
        description="Generate a task and save it with datasets' save_to_disk (train/validation/test and OoD splits).",
    )
    parser.add_argument("--task", required=True, choices=sorted(TASKS), help="Which task to generate.")
    parser.add_argument("--output", required=True, help="Folder to write the DatasetDict to.")
    parser.add_argument("--train_size", type=int, default=4000, help="Training examples.")
    parser.add_argument("--eval_size", type=int, default=200, help="Examples of every other split.")
    parser.add_argument("--seed", type=int, default=0, help="Generator seed (same seed, same data).")
    _add_task_options(parser)
    return parser


def _make_data(argv: Sequence[str]) -> None:
    args = make_data_parser().parse_args(argv)
    _quiet_progress_bars()
    dataset = load_task(
        args.task,
        train_size=args.train_size,
        eval_size=args.eval_size,
        seed=args.seed,
        options=parse_task_options(args.task_options),
    )
    save_task(dataset, args.task, args.output)
    print({split: len(data) for split, data in dataset.items()}, "->", args.output)


def _json_object(parser: argparse.ArgumentParser, path: Path, what: str) -> dict[str, Any]:
    """The JSON object in ``path`` (``what`` it holds, for the messages), or a usage error naming the file."""
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        parser.error(f"cannot read {what} {path} ({error})")
    if not isinstance(values, dict):
        parser.error(f"{what} {path} must hold a JSON object, not a JSON {type(values).__name__}")
    return values


def _read_args_file(parser: HfArgumentParser, path: Path) -> None:
    """Make the arguments of a JSON file (``{"task": "lookup", ...}``) the parser's defaults."""
    values = _json_object(parser, path, "the arguments file")
    unknown = sorted(set(values) - {f.name for f in fields(NumberTrainingArguments)})
    if unknown:
        parser.error(f"{path}: unknown argument(s) {', '.join(unknown)}{renamed_hint(unknown)}")
    parser.set_defaults(**values)


def train_parser(prog: str = "hf-numbers train") -> HfArgumentParser:
    """``hf-numbers train``'s argument parser (no abbreviated flags: ``--max_step`` is not ``--max_steps``)."""
    return GroupedArgumentParser(
        NumberTrainingArguments,
        prog=prog,
        usage="%(prog)s [--option value ...]",
        allow_abbrev=False,
        description="Train a number-aware model, evaluate it, save it with its tokenizer "
        "to <output_dir>/final, and write metrics.json and a plot. The arguments can come from a "
        "JSON file given first (`hf-numbers train args.json`, e.g. a run's training_args.json).",
    )


def parse_train_args(argv: Sequence[str], prog: str = "hf-numbers train") -> NumberTrainingArguments:
    """``hf-numbers train``'s arguments: flags, or a JSON file first (its values; flags after it win).

    Unknown flags, bad values (a name outside its closed set: task, backbone, number_encoding, ...)
    and arguments that training would refuse (a used ``output_dir``, a missing checkpoint) are usage
    errors: a message and ``SystemExit(2)``, no traceback.

    Example:
        >>> parse_train_args(["--task", "lookup", "--max_steps", "10", "--output_dir", "runs/a-new-run"]).max_steps
        10
    """
    parser = train_parser(prog)
    argv = list(argv)
    if argv and argv[0].endswith(".json"):
        _read_args_file(parser, Path(argv.pop(0)))
    try:
        args, unknown = parser.parse_args_into_dataclasses(argv, return_remaining_strings=True)
    except ValueError as error:  # raised by NumberTrainingArguments.__post_init__
        parser.error(str(error))
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}{renamed_hint(unknown)}")
    try:
        check_run(args)
        if args.pretrained:
            check_pretrained_tokenizer(args.pretrained, args.gguf_file)
    except ValueError as error:
        parser.error(str(error))
    return args


def _train(argv: Sequence[str]) -> dict:
    args = parse_train_args(argv)
    _quiet_progress_bars()
    try:
        with logging_redirect_tqdm(loggers=[logging.getLogger("hf_numbers")]):  # log lines above the progress bar
            summary = run_training(args)
    except (RunFolderInUseError, BosTokenError, EncodingOptionError) as error:  # another run holds --output_dir,
        train_parser().error(str(error))  # the tokenizer cannot take --add_bos_token, an option's value is refused
    if "metrics" in summary:  # the main process: it evaluated and saved
        print(f"\nResults after {summary['steps']} steps (final training loss {summary['last_train_loss']:.4f}):")
        print(format_metrics_table(summary["metrics"]))
        print(f"plots: {', '.join(summary['plots']) or 'none'}\nmodel and tokenizer: {summary['final_dir']}")
        if "hub_model_id" in summary:
            print(f"uploaded to the Hub: {summary['hub_model_id']}")
    return summary


def evaluate_parser() -> argparse.ArgumentParser:
    """``hf-numbers evaluate``'s argument parser (parsing only: the checkpoint is read by the command).

    Example:
        >>> evaluate_parser().parse_args(["--checkpoint", "runs/x/final", "--task", "orbits"]).seed
        0
    """
    parser = PlainHelpParser(
        prog="hf-numbers evaluate",
        allow_abbrev=False,
        description="Evaluate a saved model on a task's splits; print a table and write metrics.json and a plot.",
    )
    parser.add_argument(
        "--checkpoint", required=True, help="A folder written by `hf-numbers train`: …/final or …/checkpoint-<step>."
    )
    parser.add_argument("--task", default=None, choices=sorted(TASKS), help="Task to generate (or use --data_dir).")
    parser.add_argument("--data_dir", default=None, help="A dataset saved by `hf-numbers make-data`.")
    parser.add_argument("--eval_size", type=int, default=200, help="Examples per split when generating the task.")
    parser.add_argument("--seed", type=int, default=0, help="Generator seed when generating the task.")
    _add_task_options(parser, ". Default: the training run's own when --task is the task it trained on.")
    parser.add_argument(
        "--max_length",
        type=int,
        default=None,
        help="Truncate texts to this many tokens (default: the training run's, else 128).",
    )
    parser.add_argument("--output_dir", default=None, help="Where to write metrics and plot (default: checkpoint).")
    parser.add_argument(
        "--force",
        action="store_true",
        help="Evaluate on a task other than the one the run was trained on (training_args.json); its number scaling "
        "and answers are the training task's, so the metrics may mean little.",
    )
    parser.add_argument(
        "--masked_words",
        choices=("true", "false"),
        default=None,
        help="Add masked-word perplexity and top-k accuracy (each text token masked alone) to every split; "
        "default: true if the training run used --text_only. Splits with a target word always get them.",
    )
    return parser


def _check_model_folder(parser: argparse.ArgumentParser, checkpoint: str) -> None:
    """A usage error for a ``--checkpoint`` folder that holds no hf_numbers model: a run folder (pass its final/ or
    a checkpoint-<step>/), or a plain transformers checkpoint (its base model is scored by ``hf-numbers train``).
    Other problems (no folder, no tokenizer) are :func:`load_trained`'s to name."""
    folder = Path(checkpoint)
    if not folder.is_dir():
        return
    config_file = folder / CONFIG_NAME
    if not config_file.is_file():
        models = [sub for sub in folder.iterdir() if sub.is_dir() and checkpoint_step(sub) is not None]
        models = ([folder / FINAL_DIR] if (folder / FINAL_DIR).is_dir() else []) + sorted(models, key=checkpoint_step)
        if models:
            parser.error(f"{folder} is a run folder; pass {folder / FINAL_DIR} or one of its checkpoint-<step> "
                         f"folders (here: {', '.join(str(model) for model in models)})")  # fmt: skip
        if (folder / RUN_MARKER).is_file():
            parser.error(f"{folder} is a run folder with no model yet (no {FINAL_DIR}/ nor checkpoint-<step>/ in it); "
                         "evaluate its final/ once the run has finished")  # fmt: skip
        return
    model_type = _json_object(parser, config_file, "the model config").get("model_type")
    config_class = CONFIG_MAPPING[model_type] if isinstance(model_type, str) and model_type in CONFIG_MAPPING else None
    if config_class is None or not issubclass(config_class, NumberConfigFields):
        parser.error(
            f"{folder} is not an hf_numbers checkpoint: its {CONFIG_NAME} is a plain model of model_type "
            f"{model_type!r}, with no number encoding. `hf-numbers evaluate` scores a folder written by "
            f"`hf-numbers train` (<output_dir>/final or <output_dir>/checkpoint-<step>); the base model itself is "
            f"scored with `hf-numbers train --pretrained {folder} --number_encoding text --number_token_loss none "
            "--add_bos_token false --max_steps 0 --task ... --output_dir ...` (its own digit tokens, nothing added; "
            "--max_steps 0: evaluated untrained, docs/pretrained.md)"
        )


def _evaluate(argv: Sequence[str]) -> None:
    parser = evaluate_parser()
    args = parser.parse_args(argv)
    if not (args.task or args.data_dir):
        parser.error("give --task or --data_dir")
    _check_model_folder(parser, args.checkpoint)
    # the run's record: beside final/ and checkpoint-<step>/, or two up from final/adapter
    records = [folder / "training_args.json" for folder in Path(args.checkpoint).resolve().parents[:2]]
    record = next((record for record in records if record.is_file()), records[0])  # the first: named when missing
    trained = _json_object(parser, record, "the run's training arguments") if record.is_file() else {}
    if args.max_length is None:
        args.max_length = trained.get("max_length", 128)
    try:
        trained_task = task_name(trained.get("task"), trained.get("data_dir"))
        task = task_name(args.task, args.data_dir)
    except ValueError as error:
        parser.error(str(error))
    if not trained_task:
        print(f"note: {record} is missing or names no task, so --task is not checked against the training task",
              file=sys.stderr)
    elif task and task != trained_task and not args.force:
        parser.error(
            f"the run of {args.checkpoint} was trained on task {trained_task!r} ({record}), not {task!r}: its number "
            "scaling and the answers it learned are that task's, so the metrics would mislead; pass --force to "
            "evaluate anyway"
        )
    if args.task_options is not None and args.data_dir:
        parser.error("--task_options shape a generated task (--task); a --data_dir is already made")
    options = args.task_options
    if options is None and args.task and task == trained_task and trained.get("task_options"):
        options = trained["task_options"]  # e.g. digits=4: the default generator would ask 3-digit products
        print(f"note: the training run's task options: {' '.join(options)}", file=sys.stderr)
    try:
        options = parse_task_options(options)
    except ValueError as error:
        parser.error(str(error))
    masked_words = bool(trained.get("text_only")) if args.masked_words is None else args.masked_words == "true"
    _quiet_progress_bars()
    try:
        model, tokenizer = load_trained(args.checkpoint)
    except ValueError as error:  # a missing folder, or parts that do not belong together
        parser.error(str(error))
    try:
        dataset = load_task(
            args.task, data_dir=args.data_dir, train_size=1, eval_size=args.eval_size, seed=args.seed, options=options
        )
    except ValueError as error:  # an option the task does not have, or a value out of its range
        parser.error(str(error))
    output_dir = args.output_dir or args.checkpoint
    summary = evaluate_splits(model, tokenizer, dataset, args.max_length, output_dir, masked_words)
    print(format_metrics_table(summary["metrics"]))
    print(f"plot: {summary['plot'] or 'none'}")


def card_parser() -> argparse.ArgumentParser:
    """``hf-numbers card``'s argument parser."""
    parser = PlainHelpParser(
        prog="hf-numbers card",
        allow_abbrev=False,
        description="Write the model card of a finished `hf-numbers train` run again (what training writes to "
        "final/README.md): Hub metadata with a model-index of every split's metrics, usage through the pipeline, "
        "training data, metrics, arguments, limits. Reads final/, training_args.json and metrics.json.",
    )
    parser.add_argument("run", help="The run folder (the --output_dir of train) or its final/ folder.")
    parser.add_argument("--output", default=None, help="Where to write the card; default: <run>/final/README.md.")
    parser.add_argument(
        "--model_id",
        default=None,
        help="The model's name in the card (model_name, the usage snippet): a Hub id such as me/lookup-xval, or a "
        "path; default: the name the existing card gives it, else the final folder's path as given.",
    )
    parser.add_argument("--license", default=None, help="The card's license (a Hub license id); default: the run's.")
    parser.add_argument(
        "--base_model", default=None, help="Hub id of the --pretrained backbone the run adapted; default: the run's."
    )
    return parser


def _card(argv: Sequence[str]) -> None:
    parser = card_parser()
    args = parser.parse_args(argv)
    _quiet_progress_bars()
    try:
        if args.base_model is not None:
            validate_repo_id(args.base_model)
        _, final = run_folders(args.run)
        card = model_card_from_run(args.run, model_id=args.model_id, license=args.license, base_model=args.base_model)
    except ValueError as error:
        parser.error(str(error))
    output = Path(args.output) if args.output else final / CARD_FILE
    card.save(output)
    print(f"model card: {output}")


def _demo(argv: Sequence[str]) -> None:
    args = parse_train_args([*DEMO_ARGS, *argv], prog="hf-numbers demo")
    summary = _train([*DEMO_ARGS, *argv])
    test = build_dataset(args)["test"]
    baseline = compute_number_metrics([row["numbers"][row["answer_index"] - 1] for row in test], test["answer"])
    print(
        f"reference: repeating the number before the answer (last hour's value) gives test MSE {baseline['mse']:.4f}, "
        f"R2 {baseline['r2']:.4f}"
    )

    # the saved folder alone: the pipeline (also `pipeline(model=path, trust_remote_code=True)` without hf_numbers)
    forecaster = pipeline("number-generation", model=summary["final_dir"])
    example = test[0]
    out = forecaster(example["prompt"], max_new_tokens=3)[0]
    forecast = f"{out['numbers'][0]:.1f} °F" if out["numbers"] else "no number"
    print(f'\nforecaster = pipeline("number-generation", model="{summary["final_dir"]}")')
    print(f"Next hour after a test prompt: {forecast} (true {example['answer_text']} °F); the generated text ends")
    print(f"  ...{out['generated_text'][-90:]}")


class _StdoutHandler(logging.StreamHandler):
    """A log handler writing to whatever ``sys.stdout`` is when a line is logged (as logging's last resort
    does for stderr), so that a replaced stdout (a test's capture, a notebook) gets the lines."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> Any:
        return sys.stdout


def _quiet_progress_bars() -> None:
    """No progress bar for every map, save and load of ``datasets``: called once a command's arguments are
    parsed, so that help and usage errors do not wait for ``datasets`` to import."""
    import datasets

    datasets.disable_progress_bars()


def _show_training_logs() -> None:
    """Show hf_numbers' INFO log lines (set-up, a line every --logging_steps) on stdout, once."""
    library = logging.getLogger("hf_numbers")
    if not any(isinstance(handler, _StdoutHandler) for handler in library.handlers):
        handler = _StdoutHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        library.addHandler(handler)
        library.setLevel(logging.INFO)


COMMANDS = {"make-data": _make_data, "train": _train, "evaluate": _evaluate, "card": _card, "demo": _demo}
PARSERS = {
    "make-data": make_data_parser,
    "train": train_parser,
    "evaluate": evaluate_parser,
    "card": card_parser,
    "demo": lambda: train_parser(prog="hf-numbers demo"),
}
"""Each command's argument parser (demo's is train's: it takes train's flags after its own defaults)."""


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``hf-numbers`` command.

    Example:
        >>> main(["make-data", "--task", "lookup", "--output", "/tmp/lookup"])  # doctest: +SKIP
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(usage())
        sys.exit(0 if argv and argv[0] in HELP_FLAGS else 2)
    transformers.utils.logging.disable_progress_bar()  # no bar for every save and load
    _show_training_logs()
    result = COMMANDS[argv[0]](argv[1:])
    if isinstance(result, dict) and "metrics" in result:
        write_json(Path(result["final_dir"]).parent / "summary.json", result)


if __name__ == "__main__":
    main()
