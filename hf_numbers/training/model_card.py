"""Model cards of trained models, built with ``huggingface_hub``'s ``ModelCard``, ``ModelCardData`` and ``EvalResult``.

``run_training`` writes the card into ``<output_dir>/final/README.md``; :func:`model_card_from_run` rebuilds
it from a finished run folder (``hf-numbers card``). What a card holds: docs/hub.md.

Example:
    >>> card = model_card_from_run("runs/lookup")  # doctest: +SKIP
    >>> card.save("runs/lookup/final/README.md")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import math
import numbers
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData
from transformers import AutoConfig, AutoTokenizer

from ..data import TASKS
from ..data.loading import load_task, parse_task_options, task_name
from ..modeling import find_numbers, get_backbone, get_encoding
from ..modeling.hub_card import CARD_FILE, CARD_TAG, read_model_card
from ..modeling.legacy_checkpoints import read_legacy_scaler
from ..modeling.number_scaling import NumberScaling
from ..modeling.pipeline_number import PIPELINE_TASKS
from .run_folder import FINAL_DIR, RUN_MARKER

__all__ = ["build_model_card", "card_example", "hub_id_of_folder", "model_card_from_run", "run_folders"]

_logger = logging.getLogger(__name__)
METRIC_LABELS = {
    "invalid_rate": "Invalid-prediction rate",
    "mse": "MSE",
    "r2": "R²",
    "r2_log": "R² of signed-log values",
    "exact_match": "Exact match",
    "log_smape": "log-sMAPE score (share of 15 significant digits)",
    "within_1pct": "Within 1%",
    "accuracy_2sf": "Accuracy to 2 significant figures",
    "accuracy_3sf": "Accuracy to 3 significant figures",
}
"""Pretty names of the number metrics in ``model-index`` (others, such as ``masked_top1``, keep their name)."""
_EXAMPLE_COLUMNS = {"text", "prompt", "answer_index", "answer_text"}


def hub_id_of_folder(path: str | Path) -> str | None:
    """The Hub id of a folder in the Hugging Face cache (``.../models--org--name/snapshots/<revision>``), else None.

    Example:
        >>> hub_id_of_folder("/cache/hub/models--google-bert--bert-base-uncased/snapshots/86b5e09")
        'google-bert/bert-base-uncased'
        >>> hub_id_of_folder("models/minilm") is None
        True
    """
    parts = Path(path).parts
    for folder, below in zip(parts, parts[1:]):
        if folder.startswith("models--") and below == "snapshots":
            return folder.removeprefix("models--").replace("--", "/")
    return None


def _card_license(folder: str | Path) -> str | None:
    """The ``license`` of the model card in ``folder`` (a pretrained backbone's), if it has a readable one."""
    path = Path(folder) / CARD_FILE
    try:
        return ModelCard.load(path).data.license if path.is_file() else None
    except (OSError, ValueError) as error:  # a broken YAML block: no license to inherit
        _logger.warning("%s: cannot read it (%s); no license inherited", path, error)
        return None


def _reportable(name: str, value: Any) -> bool:
    """Whether a metric goes into ``model-index``: a finite number that is not a count."""
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    return number and not name.endswith("count") and math.isfinite(value)


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, numbers.Integral) or not math.isfinite(value):
        return str(value)
    return f"{value:.4g}" if abs(value) >= 1e4 or (value != 0 and abs(value) < 1e-3) else f"{value:.4f}"


def _metrics_table(metrics: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table: one row per split, one column per metric."""
    columns = list(dict.fromkeys(name for values in metrics.values() for name in values))
    rows = [["split", *columns], ["---"] * (len(columns) + 1)]
    rows += [[split, *(_cell(values.get(name)) for name in columns)] for split, values in metrics.items()]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def card_example(dataset: Mapping[str, Any]) -> dict[str, Any] | None:
    """The row the card's usage snippet runs on: the first of ``test``, else of another held-out split.

    Example:
        >>> card_example({"train": [{"text": "a"}], "test": [{"text": "b"}]})
        {'text': 'b'}
    """
    held_out = [dataset[name] for name in ("test", *dataset) if name in dataset and name != "train"]
    return next((dict(split[0]) for split in held_out if len(split)), None)


def _usage(
    causal: bool, example: Mapping[str, Any] | None, mask_token: str | None, new_tokens: int
) -> tuple[str, str]:
    """The pipeline call of the card's snippet (on ``example``, a task row, when given; a causal LM writes up to
    ``new_tokens`` tokens) and what it returns."""
    if example is not None and not _EXAMPLE_COLUMNS <= set(example):
        example = None  # not a task with a number answer (e.g. masked words): a placeholder text
    answer = f" (the true value: {example['answer_text']})" if example is not None else ""
    if causal:
        # without a trailing space: a tokenizer whose number token carries the space before it (GPT-2's " [NUM]")
        # would otherwise see a space token the model never saw before a number
        prompt = example["prompt"].rstrip() if example is not None else "text that a number follows:"
        return (
            f"pipe({prompt!r}, max_new_tokens={new_tokens})",
            f"It returns `[{{\"generated_text\": ..., \"numbers\": [...]}}]`: the continuation and the values of "
            f"the numbers it writes{answer}.",
        )
    text = f"a number goes here: {mask_token}"
    if example is not None:
        span = find_numbers(example["text"])[example["answer_index"]]
        text = example["text"][: span.start] + str(mask_token) + example["text"][span.end :]
    return (
        f"pipe({text!r}, top_k=3)",
        "It returns, for the mask, dicts with `score`, `token_str`, `sequence` and `value`: the number where the "
        f"filled token is a number token, else None{answer}.",
    )


def _snippet(model_id: str, task: str, call: str, standalone: bool) -> str:
    """The usage code: the checkpoint's own pipeline code, or (an older checkpoint without it) hf_numbers'."""
    if standalone:
        load = f'pipe = pipeline(model="{model_id}", trust_remote_code=True)  # the {task} pipeline, saved with it'
        return f"from transformers import pipeline\n\n{load}\n{call}"
    load = f'pipe = pipeline("{task}", model="{model_id}")'
    return f"import hf_numbers  # registers the pipelines\nfrom transformers import pipeline\n\n{load}\n{call}"


def _description(arguments: Mapping[str, Any], config: Any, base_model: str | None) -> str:
    """What the model is: how numbers enter it and where its weights come from."""
    encoding, spec = arguments["number_encoding"], get_backbone(arguments["backbone"])
    if get_encoding(encoding).has_number_module and config.number_output == "digits":
        what = (f"A number-aware {spec.display_name} made with hf_numbers, numbers in and digits out: every number "
                f"of a prompt is one `[NUM]` token whose value enters the model through the `{encoding}` encoding, "
                "and the model writes its answers with its own digit tokens.")
    elif get_encoding(encoding).has_number_module:
        what = (f"A number-aware {spec.display_name} made with hf_numbers: every number in the text is one `[NUM]` "
                f"token whose value enters the model through the `{encoding}` encoding, and a number head predicts "
                "values.")
    elif get_encoding(encoding).adds_digit_values:
        what = (f"A number-aware {spec.display_name} made with hf_numbers, value-aware digits: numbers stay the "
                "model's own digit tokens, in what it reads and what it writes, and at every digit token a small "
                f"module adds the value of the digits read so far (`{config.digits_features}`) through a projection "
                f"that {'starts at zero' if config.digits_zero_start else 'starts at a random draw, not zero'}.")
    else:
        what = (f"A text baseline made with hf_numbers: the tokenizer writes every number as ordinary tokens "
                f"(`{encoding}`), the model is the plain {spec.display_name}, and a predicted number is parsed from "
                "the text it writes.")
    if getattr(config, "text_digit_order", None) == "units_first":
        what += " Every number's digits reach it units first, and what it writes is turned back."
    text, sizes = config.get_text_config(), spec.size_fields  # a composed backbone's sizes are its text_config's
    shape = (f"{getattr(text, sizes.layers, None)} layers, width {getattr(text, sizes.hidden, None)}, "
             f"{getattr(text, sizes.heads, None)} heads")
    pretrained = arguments.get("pretrained")
    if pretrained:
        hub = f"[{base_model}](https://huggingface.co/{base_model})"
        source = hub if base_model else f"in the folder `{pretrained}`"
        frozen = (" with a frozen trunk (only the number module and the token head's own layers trained)"
                  if arguments.get("freeze_backbone") else "")
        origin = f"Adapted from the pretrained {spec.display_name} {source}{frozen} ({shape}){_how(arguments)}."
    else:
        origin = f"Trained from scratch ({shape}, a tokenizer trained on the task's training texts)."
    return f"{what} {origin}"


def _how(arguments: Mapping[str, Any]) -> str:
    """How a pretrained model was adapted: LoRA (merged into the weights), the number-token loss and the digit
    lookahead, where used."""
    lora_r = arguments.get("lora_r")
    parts = [f"LoRA adapters of rank {lora_r} (merged into these weights)"] if lora_r else []
    if arguments.get("number_token_loss") not in (None, "none"):
        parts.append(f"the number-token loss ({arguments['number_token_loss']}, weight "
                     f"{arguments.get('number_token_loss_weight')})")
    if arguments.get("digit_lookahead"):
        annealed = " falling linearly to 0" if arguments.get("digit_lookahead_schedule") == "linear" else ""
        power = arguments.get("digit_lookahead_confidence_power", 1)
        confident = ""
        if arguments.get("digit_lookahead_confidence"):
            sharpened = f" to the power {power}" if power != 1 else ""
            confident = f", each digit weighted by the model's own confidence{sharpened}"
        per_token = ", each place weighing one token" if arguments.get("digit_lookahead_mean") == "tokens" else ""
        layer = arguments.get("digit_lookahead_layer")
        read = f", read from layer {layer}" if layer is not None else ""
        given = ", given the digits between" if arguments.get("digit_lookahead_conditioned") else ""
        first = ", not asked at a number's first digit" if arguments.get("digit_lookahead_leading") is False else ""
        shape = f"{annealed}{confident}{per_token}{read}{given}{first}"
        parts.append(f"the digit lookahead ({arguments['digit_lookahead']} digits ahead, weight "
                     f"{arguments.get('digit_lookahead_weight')}{shape}; its heads are for training only)")
    return f", with {' and '.join(parts)}" if parts else ""


def _data_section(arguments: Mapping[str, Any], task: str) -> str:
    """Where the training data come from."""
    spec = TASKS.get(task)
    about = f" ({spec.builder.__doc__.strip().splitlines()[0].rstrip('.')})" if spec and spec.builder.__doc__ else ""
    if arguments.get("data_dir"):
        return f"Task `{task}`{about}, loaded from `{arguments['data_dir']}`, a folder of `hf-numbers make-data`."
    options = arguments.get("task_options") or []
    sizes = {"train_size": arguments.get("train_size"), "eval_size": arguments.get("eval_size")}
    flags = {"--task": task, **{f"--{name}": value for name, value in sizes.items()},
             "--seed": arguments.get("data_seed"), "--output": f"data/{task}"}  # fmt: skip
    command = ["hf-numbers", "make-data", *(str(item) for pair in flags.items() for item in pair)]
    command += ["--task_options", *options] if options else []
    return (
        f"Task `{task}`{about}, generated by hf_numbers with seed {arguments.get('data_seed')}: "
        f"{sizes['train_size']} training examples and up to {sizes['eval_size']} in every other split"
        + (f", generator options `{' '.join(options)}`" if options else "")
        + f". The same data: `{shlex.join(command)}`."
    )


def build_model_card(
    arguments: Mapping[str, Any],
    metrics: Mapping[str, Mapping[str, Any]],
    config: Any,
    *,
    model_id: str,
    steps: int | None = None,
    example: Mapping[str, Any] | None = None,
    mask_token: str | None = None,
) -> ModelCard:
    """The model card of a trained model.

    Args:
        arguments: the run's training arguments (``NumberTrainingArguments.to_dict()``, or a run's
            ``training_args.json``); ``license`` and ``base_model`` default to the ``pretrained`` folder's.
        metrics: the metrics of every evaluated split (``{split: {metric: value}}``).
        config: the trained model's config (its sizes, number scaling and ``custom_pipelines``).
        model_id: the name the card gives the model (``model_name`` and the usage snippet): a Hub id, or a path.
        steps: optimizer steps trained, when known.
        example: a row of the task (:func:`card_example`) for the usage snippet; ``mask_token``: the
            tokenizer's, for a masked LM's snippet.

    Example:
        >>> card = build_model_card(args.to_dict(), summary["metrics"], model.config, model_id="runs/demo/final",
        ...                         steps=summary["steps"], example=dataset["test"][0])  # doctest: +SKIP
        >>> card.save("runs/demo/final/README.md")  # doctest: +SKIP
    """
    spec, encoding = get_backbone(arguments["backbone"]), arguments["number_encoding"]
    task = task_name(arguments["task"], arguments.get("data_dir"))
    pretrained = arguments.get("pretrained")
    base_model = arguments.get("base_model") or (hub_id_of_folder(pretrained) if pretrained else None)
    license_id = arguments.get("license") or (_card_license(pretrained) if pretrained else None)
    pipeline_task = PIPELINE_TASKS[spec.causal][0]
    results = [
        EvalResult(
            task_type=spec.pipeline_tag, task_name=pipeline_task, dataset_type=task, dataset_name=task,
            dataset_config=" ".join(arguments.get("task_options") or []) or None, dataset_split=split,
            metric_type=name, metric_name=METRIC_LABELS.get(name, name),
            metric_value=int(value) if isinstance(value, numbers.Integral) else float(value),
        )
        for split, values in metrics.items()
        for name, value in values.items()
        if _reportable(name, value)
    ]  # fmt: skip
    data = ModelCardData(
        library_name="transformers", license=license_id, base_model=base_model, pipeline_tag=spec.pipeline_tag,
        tags=[CARD_TAG, "number-encoding", encoding, spec.name], model_name=model_id, eval_results=results or None,
    )  # fmt: skip
    has_number_module = get_encoding(encoding).has_number_module
    writes_num = has_number_module and config.number_output == "num_token"
    # a number is one [NUM] token, or written as digits up to a sign, its digits and an exponent
    call, returns = _usage(spec.causal, example, mask_token, new_tokens=3 if writes_num else 16)
    standalone = bool(config.to_dict().get("custom_pipelines"))
    scaling_text = _scaling_text(config, has_number_module)
    remote = _remote_text(pipeline_task, standalone)
    arguments_shown = {key: value for key, value in arguments.items() if not key.endswith("_token")}
    sections = [
        f"# {spec.display_name} with the `{encoding}` number encoding, trained on `{task}`",
        _description(arguments, config, base_model),
        f"## Use\n\n```python\n{_snippet(model_id, pipeline_task, call, standalone)}\n```\n\n"
        f"{returns} {remote} {scaling_text}",
        f"## Training data\n\n{_data_section(arguments, task)}",
        f"## Evaluation\n\nAfter {steps if steps is not None else 'an unrecorded number of'} optimizer steps. "
        "Answers are predicted where greedy decoding would emit them (causal LM) or with the answer masked "
        "(masked LM); exact match is at the answers' written precision; `–`: undefined. The `model-index` "
        "metadata holds the same values (counts and non-finite values left out).\n\n"
        + (_metrics_table(metrics) if metrics else "Not evaluated."),
        "## Training procedure\n\nThe run's arguments (its `training_args.json`; `hf-numbers train "
        f"training_args.json` reads such a file):\n\n```json\n{json.dumps(arguments_shown, indent=1)}\n```",
        "## Limits\n\nTrained for a research comparison of number encodings, on the task above only: it has not "
        "been evaluated outside the splits listed, and it reads numbers as hf_numbers' parser finds them (plain "
        "decimals, signs, exponents; no thousands separators or number words)."
        + ("" if license_id else " No license was chosen for this model (`--license`); ask its owner before reuse."),
    ]
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n\n".join(sections) + "\n")


def _scaling_text(config: Any, has_number_module: bool) -> str:
    """The card's sentence on the units values go in and come out in."""
    scaling = NumberScaling.from_config(config)
    if not has_number_module:
        return "Numbers are ordinary tokens of the text; there is no number scaling."
    if scaling.is_identity:
        return "Values go in and come out in the data's own units; the encoding reads them as they are."
    fields = ", ".join(f"`{k}={v}`" for k, v in scaling.to_config().items())
    return (
        "Values go in and come out in the data's own units: the model applies its number scaling "
        f"itself ({fields}, saved with it)."
    )


def _remote_text(pipeline_task: str, standalone: bool) -> str:
    """The card's sentence on loading the checkpoint with or without hf_numbers (``standalone``: it carries its
    code)."""
    if standalone:
        return (
            "The model, tokenizer and pipeline code ship with the checkpoint: `trust_remote_code=True` loads them "
            f"without hf_numbers installed; with hf_numbers imported, `pipeline(\"{pipeline_task}\", model=...)` "
            "needs no remote code."
        )
    return (
        "This checkpoint predates the pipeline code that checkpoints now carry: load it with hf_numbers "
        "installed (re-saving it with `save_pretrained` adds the code)."
    )


def _steps(run_dir: Path) -> int | None:
    """Steps a finished run trained: its ``summary.json``, else the last step of ``log_history.json``."""
    summary, history = run_dir / "summary.json", run_dir / "log_history.json"
    if summary.is_file():
        return json.loads(summary.read_text()).get("steps")
    records = json.loads(history.read_text()) if history.is_file() else []
    return max((record["step"] for record in records if "step" in record), default=None)


def run_folders(path: str | Path) -> tuple[Path, Path]:
    """The run folder and its ``final/`` folder, from either; ``ValueError`` when ``path`` is neither.

    Example:
        >>> run_folders("runs/lookup/final")  # doctest: +SKIP
        (PosixPath('runs/lookup'), PosixPath('runs/lookup/final'))
    """
    path = Path(path)
    run_dir = path if (path / RUN_MARKER).is_file() else path.parent
    final = run_dir / FINAL_DIR
    if not (run_dir / RUN_MARKER).is_file() or path not in (run_dir, final) or not (final / "config.json").is_file():
        raise ValueError(
            f"{path} is not a finished run folder of `hf-numbers train` ({RUN_MARKER} beside a {FINAL_DIR}/ "
            f"folder with config.json) or its {FINAL_DIR}/ folder"
        )
    return run_dir, final


def model_card_from_run(
    path: str | Path, *, model_id: str | None = None, license: str | None = None, base_model: str | None = None
) -> ModelCard:
    """Rebuild the model card of a finished run (``path``: the run folder or its ``final/``).

    The usage example is the task's first test row, generated again from the recorded arguments.
    ``model_id`` defaults to the name the existing card gives the model, else the final folder;
    ``license`` and ``base_model`` override the recorded ones. ``ValueError`` when ``path`` is no run.

    Example:
        >>> card = model_card_from_run("runs/lookup", model_id="me/lookup-fone")  # doctest: +SKIP
        >>> card.save("runs/lookup/final/README.md")  # doctest: +SKIP
    """
    run_dir, final = run_folders(path)
    arguments = json.loads((run_dir / RUN_MARKER).read_text())
    arguments |= {key: value for key, value in (("license", license), ("base_model", base_model)) if value}
    config = AutoConfig.from_pretrained(final)
    legacy = read_legacy_scaler(final)
    if legacy is not None and NumberScaling.from_config(config).is_identity:
        config.update(legacy.to_config())
    metrics_file = run_dir / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    try:
        options = parse_task_options(arguments.get("task_options"))
        dataset = load_task(
            arguments["task"], data_dir=arguments.get("data_dir"), train_size=arguments["train_size"],
            eval_size=arguments["eval_size"], seed=arguments["data_seed"], options=options,
        )  # fmt: skip
        example = card_example(dataset)
    except (OSError, ValueError) as error:
        _logger.warning("%s: the task's data cannot be made again (%s); the snippet has a placeholder", path, error)
        example = None
    earlier = read_model_card(final)
    return build_model_card(
        arguments,
        metrics,
        config,
        model_id=model_id or (earlier and earlier.data.model_name) or str(final),
        steps=_steps(run_dir),
        example=example,
        mask_token=AutoTokenizer.from_pretrained(final).mask_token,
    )
