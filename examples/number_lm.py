"""What ``run_number_clm.py`` and ``run_number_mlm.py`` share: arguments, your files as a dataset,
the number tokenizer and model (its number scaling in its config), ``Trainer``, and the number evaluation.

Like transformers' ``run_clm.py`` / ``run_mlm.py``: ``--train_file`` / ``--validation_file``
(``.csv``, ``.json``/``.jsonl`` or ``.txt``, read by ``datasets.load_dataset``), a text column,
every ``TrainingArguments`` flag (``Trainer`` trains, saves checkpoints and reports). What
hf_numbers adds: each number of the text is one ``[NUM]`` token with its value (a causal LM adapted
from a plain checkpoint keeps its own digits by default and adds their values: ``--pretrained``'s
recipe), and after training the model predicts one number of every validation text
(``--eval_number_index``, the last by default): from the text before it (causal LM) or masked in its place
(masked LM).

Example:
    >>> from number_lm import run  # doctest: +SKIP
    >>> metrics = run(causal=True, argv=["--train_file", "examples/data/seattle_weather_2014.csv",
    ...                                  "--output_dir", "runs/clm", "--max_steps", "10"])  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import torch
import transformers
from transformers import (
    AutoConfig,
    AutoModel,
    AutoTokenizer,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)

from hf_numbers import (
    BACKBONES,
    NUMBER_ENCODINGS,
    NumberScaling,
    composable_model_types,
    find_numbers,
    get_backbone,
    get_encoding,
)
from hf_numbers.data import tokenize_dataset, train_number_tokenizer
from hf_numbers.data.checks import check_text_column, check_text_numbers
from hf_numbers.data.collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM
from hf_numbers.evaluation import compute_number_metrics
from hf_numbers.evaluation.predict import predict_answers
from hf_numbers.training.arguments import (
    LOOKAHEAD_RECIPE,
    NUMBER_TOKEN_LOSSES,
    PRETRAINED_RECIPE,
    WITHOUT_RECIPE,
    fill_lookahead,
)
from hf_numbers.training.builders import set_bos
from hf_numbers.training.lora import ADAPTER_DIR, number_lora_config, require_peft, save_adapter
from hf_numbers.training.number_token_loss import NumberTokenLoss
from hf_numbers.training.number_token_loss_trainer import NumberTokenLossTrainer

LOADERS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".txt": "text"}
logger = logging.getLogger(__name__)


NUM_TOKEN_ENCODINGS = tuple(name for name in NUMBER_ENCODINGS if get_encoding(name).has_number_module)
"""The encodings both scripts train: one ``[NUM]`` token per number plus its value."""
OWN_DIGIT_ENCODINGS = ("text", "digits")
"""What the causal script also trains: the model's own digit tokens, alone or with their values added (the default
where it adapts a plain checkpoint). The text schemes go through ``hf-numbers train`` (docs/pretrained.md)."""


def trained_encodings(causal: bool) -> tuple[str, ...]:
    """The encodings the causal (``[NUM]`` and the model's own digits) or masked script trains."""
    return NUM_TOKEN_ENCODINGS + (OWN_DIGIT_ENCODINGS if causal else ())


@dataclass
class ModelArguments:
    """Which model to train: a saved one (``--model_name_or_path``) or a new small one."""

    model_name_or_path: str | None = field(
        default=None,
        metadata={
            "help": "A local folder: a number model (`hf-numbers train`'s final/ or checkpoint-<step>/, or this "
            "script's output) to fine-tune, or a plain GPT-2/Llama/BERT/RoBERTa/ModernBERT checkpoint to adapt to "
            "numbers. "
            "Default: a new model and a tokenizer trained on --train_file."
        },
    )
    gguf_file: str | None = field(
        default=None,
        metadata={"help": "A GGUF file in --model_name_or_path to adapt (e.g. SmolLM2's; needs the gguf package)."},
    )
    lora_r: int = field(
        default=0,
        metadata={"help": "Rank of LoRA adapters on the trunk (PEFT; 0: train every weight). The number module and "
                  "the number tokens' rows train whole; output_dir gets the merged model, output_dir/adapter the "
                  "adapter."},
    )
    lora_alpha: int | None = field(default=None, metadata={"help": "LoRA scaling alpha; default: 2 x lora_r."})
    backbone: str | None = field(
        default=None, metadata={"help": f"A new model's backbone: one of {', '.join(BACKBONES)} (default per script)."}
    )
    number_encoding: str | None = field(
        default=None,
        metadata={"help": f"One of {', '.join(trained_encodings(True))} (the masked script: the [NUM] ones). Default: "
                  f"{PRETRAINED_RECIPE['number_encoding']} (value-aware digits) where the causal script adapts a plain "
                  "checkpoint, else xval."},
    )
    number_token_loss: str | None = field(
        default=None,
        metadata={"help": "none, or ntl (the ntloss package) added to the token loss on the digit labels, "
                  "number-level (its per-number form) or ntl+number-level; default: ntl where the causal script "
                  "trains the model's own digits (text, digits), else none."},
    )
    number_token_loss_weight: float = field(default=0.3, metadata={"help": "Weight of the NTL (the paper's 0.3)."})
    digit_lookahead: int | None = field(
        default=None,
        metadata={"help": "The causal script, training the model's own digits: heads that score, where it writes a "
                  "digit, the number's next N digits (training only; hf-numbers train --help). Default: the recipe's "
                  "(2, weighted by confidence, from each number's second digit) where it adapts a plain checkpoint; "
                  "else 0 (given: unweighted, from the first digit, unless the two options below say otherwise)."},
    )
    digit_lookahead_confidence: bool | None = field(
        default=None, metadata={"help": "Weight each digit --digit_lookahead asks for by the model's confidence in it."}
    )
    digit_lookahead_leading: bool | None = field(
        default=None, metadata={"help": "Ask --digit_lookahead's digits ahead at a number's first digit too."}
    )
    hidden_size: int = field(default=128, metadata={"help": "A new model's width."})
    num_layers: int = field(default=3, metadata={"help": "A new model's layers."})
    num_heads: int = field(default=4, metadata={"help": "A new model's attention heads."})
    vocab_size: int = field(default=1000, metadata={"help": "The vocabulary of a tokenizer trained for a new model."})
    number_scaler: str = field(
        default="standard",
        metadata={"help": "How a new model's number scaling (in its config) is fitted for an encoding that "
                  "needs it (xval): standard or maxabs."},
    )


@dataclass
class DataArguments:
    """Your files and how to read them."""

    train_file: str = field(metadata={"help": "Training data: a .csv, .json/.jsonl or .txt file."})
    validation_file: str | None = field(default=None, metadata={"help": "Validation data, same formats."})
    validation_split_percentage: int = field(
        default=10, metadata={"help": "Without --validation_file: the share of --train_file held out."}
    )
    text_column_name: str | None = field(
        default=None, metadata={"help": "The text column of a CSV/JSON file; default: 'text', else the first column."}
    )
    max_seq_length: int = field(default=128, metadata={"help": "Texts are truncated to this many tokens."})
    max_train_samples: int | None = field(default=None, metadata={"help": "Use at most this many training texts."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Use at most this many validation texts."})
    eval_number_index: int = field(
        default=-1,
        metadata={"help": "Which number of each validation text the model predicts after training (-1: the last)."},
    )

    def __post_init__(self) -> None:
        if not 1 <= self.validation_split_percentage <= 99:
            raise ValueError(f"--validation_split_percentage must be in 1..99, got {self.validation_split_percentage}")
        for name in ("max_train_samples", "max_eval_samples"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1 (or unset: every text), got {getattr(self, name)}")


@dataclass
class MaskingArguments:
    """Masked LM only."""

    mlm_probability: float = field(default=0.2, metadata={"help": "Probability of masking a token."})


def _read_file(loader: str, path: str) -> datasets.Dataset:
    """The rows of one user file, or a ``ValueError`` naming it and what ``datasets`` could not read (its cause: a
    missing file, bytes that are not UTF-8, a malformed row)."""
    try:
        return datasets.load_dataset(loader, data_files=path, split="train")
    except (FileNotFoundError, datasets.exceptions.DatasetGenerationError) as error:
        cause = error.__cause__ or error
        raise ValueError(f"{path}: cannot be read as {loader} ({type(cause).__name__}: {cause})") from error


def data_files(data: DataArguments) -> dict[str, str]:
    """The file of each split: without ``--validation_file``, the validation texts are held out of ``--train_file``."""
    return {"train": data.train_file, "validation": data.validation_file or data.train_file}


def load_texts(data: DataArguments, seed: int) -> datasets.DatasetDict:
    """``train`` and ``validation`` splits from the user's files: ``text``, and ``row`` (its 0-based row in its file).

    Each file is read on its own and its text column checked (``check_text_column``): a missing column, a cell that
    is not text and a column empty in every row are a ``ValueError`` naming the file. Empty rows are left out.
    ``data.text_column_name`` is set to the column used.

    Example:
        >>> load_texts(DataArguments(train_file="examples/data/seattle_weather_2014.csv"), seed=0)  # doctest: +SKIP
        DatasetDict({train: Dataset({features: ['text', 'row'], num_rows: 328}), validation: ...})
    """
    files = {"train": data.train_file, **({"validation": data.validation_file} if data.validation_file else {})}
    for split, path in files.items():
        if Path(path).suffix not in LOADERS:
            raise ValueError(f"--{split}_file {path}: the name must end in one of {', '.join(LOADERS)}")
    # one file at a time, each by its own suffix: each keeps its own columns and types (one call would cast them
    # alike or fail), and a .jsonl training file may come with a .json or .csv validation file
    raw = {split: _read_file(LOADERS[Path(path).suffix], path) for split, path in files.items()}
    columns = raw["train"].column_names
    column = data.text_column_name = data.text_column_name or ("text" if "text" in columns else columns[0])
    for split, rows in raw.items():
        empty = check_text_column(rows, column, files[split])
        if empty:
            logger.warning("%s: %d of %d rows have no text in column %r; they are left out",
                           files[split], empty, len(rows), column)
        rows = rows.select_columns([column])
        rows = rows if column == "text" else rows.rename_column(column, "text")
        raw[split] = rows.add_column("row", list(range(len(rows))))
    if "validation" not in raw:
        if len(raw["train"]) < 2:  # the held-out share is rounded up: one row for validation leaves none to train
            raise ValueError(f"{data.train_file}: {len(raw['train'])} row is too few to hold out validation rows "
                             "from; give --validation_file or more rows")
        held_out = raw["train"].train_test_split(test_size=data.validation_split_percentage / 100, seed=seed)
        raw = {"train": held_out["train"], "validation": held_out["test"]}
    limits = {"train": data.max_train_samples, "validation": data.max_eval_samples}
    texts = {}
    for split, rows in raw.items():
        rows = rows.select(range(min(limits[split] or len(rows), len(rows))))
        texts[split] = rows.filter(lambda row: bool(row["text"] and row["text"].strip()))  # no empty rows
        if not len(texts[split]):
            raise ValueError(f"{data_files(data)[split]}: the {len(rows)} rows of its {split} split hold no text "
                             f"in column {column!r}")
    return datasets.DatasetDict(texts)


def fill_recipe(model_args: ModelArguments, causal: bool) -> None:
    """Set ``number_encoding``, ``number_token_loss`` and the digit lookahead where not given, and refuse what the
    script cannot train.

    A saved number model keeps its encoding and digit lookahead; a plain causal checkpoint gets ``--pretrained``'s
    recipe (``PRETRAINED_RECIPE``: value-aware digits + NTL + the digit lookahead); a new model and the masked script,
    xVal.

    Example:
        >>> args = ModelArguments(model_name_or_path="plain-llama")  # doctest: +SKIP
        >>> fill_recipe(args, causal=True); args.number_encoding, args.number_token_loss  # doctest: +SKIP
        ('digits', 'ntl')
    """
    spec, config = _backbone_of(model_args, causal)
    saved = isinstance(config, spec.config_class)
    if saved:  # a saved number model: its own encoding and lookahead
        model_args.number_encoding = config.number_encoding
        _keep_saved_lookahead(model_args, config)
    elif model_args.number_encoding is None:
        adapting = config is not None and causal
        model_args.number_encoding = PRETRAINED_RECIPE["number_encoding"] if adapting else "xval"
    if model_args.number_encoding not in trained_encodings(causal):
        raise ValueError(f"number_encoding {model_args.number_encoding!r}: this script trains "
                         f"{', '.join(trained_encodings(causal))}; for the others use hf-numbers train "
                         "(docs/pretrained.md)")
    own_digits = causal and model_args.number_encoding in OWN_DIGIT_ENCODINGS
    if model_args.number_token_loss is None:
        model_args.number_token_loss = PRETRAINED_RECIPE["number_token_loss"] if own_digits else "none"
    ntl = model_args.number_token_loss
    if ntl not in NUMBER_TOKEN_LOSSES or (ntl != "none" and not own_digits):
        raise ValueError(f"number_token_loss {model_args.number_token_loss!r}: none, or one of "
                         f"{', '.join(NUMBER_TOKEN_LOSSES[1:])} where the causal script trains the model's own digits "
                         f"({', '.join(OWN_DIGIT_ENCODINGS)})")
    fill_lookahead(model_args, recipe=own_digits and config is not None and not saved)
    if model_args.digit_lookahead and not own_digits:
        raise ValueError(f"digit_lookahead {model_args.digit_lookahead}: the digit lookahead scores the digits the "
                         f"causal script trains the model to write ({', '.join(OWN_DIGIT_ENCODINGS)}); number_encoding "
                         f"{model_args.number_encoding!r} here")
    for name in LOOKAHEAD_RECIPE[1:]:  # its settings, unused without it
        if not model_args.digit_lookahead and getattr(model_args, name) != WITHOUT_RECIPE[name]:
            raise ValueError(f"{name} {getattr(model_args, name)!r} shapes the digit lookahead; set --digit_lookahead "
                             "too")


def _keep_saved_lookahead(model_args: ModelArguments, config: Any) -> None:
    """A saved number model's digit lookahead, from its config; ``ValueError`` naming a given value that differs."""
    for name in LOOKAHEAD_RECIPE:
        given, kept = getattr(model_args, name), getattr(config, name)
        if given is not None and given != kept:
            raise ValueError(f"{name} {given!r}: {model_args.model_name_or_path} is a number model with {name} "
                             f"{kept!r}, kept from its config")
        setattr(model_args, name, kept)


def check_numbers(model_args: ModelArguments, data: DataArguments, texts: datasets.DatasetDict, causal: bool) -> None:
    """``ValueError`` naming the file, row, column and value of a number the model's encoding cannot represent.

    Made before any model is built: a new or adapted model fits its encoding's options and number scaling to the
    data, so the numbers are checked against the widest range those can reach; a saved number model's config fixes
    them. Every split is checked (``check_text_numbers``), and the training texts must hold a number.

    Example:
        >>> check_numbers(ModelArguments(number_encoding="float"), data, texts, causal=True)  # doctest: +SKIP
        ValueError: days.csv, row 5 (...), column 'text': the number 1e300 (1e+300) cannot be represented by ...
    """
    spec, config = _backbone_of(model_args, causal)
    fields = config.to_dict() if isinstance(config, spec.config_class) else {}  # a saved model's options, scaling
    encoding = model_args.number_encoding  # as fill_recipe set it
    hidden_size = config.hidden_size if config is not None else model_args.hidden_size
    files, column = data_files(data), data.text_column_name
    if not any(find_numbers(text) for text in texts["train"]["text"]):
        raise ValueError(f"{files['train']}: the {len(texts['train'])} training rows hold no number in column "
                         f"{column!r}, so a number-aware model has nothing to learn")
    splits = [(files[split], rows["text"], rows["row"]) for split, rows in texts.items()]
    check_text_numbers(splits, column, encoding, hidden_size, fields)


def _values(texts: Sequence[str]) -> list[float]:
    return [value for text in texts for _, _, value in find_numbers(text)]


def _backbone_of(model_args: ModelArguments, causal: bool) -> tuple[Any, Any]:
    """The backbone's spec and the saved config (None for a new model); ``ValueError`` for the wrong script."""
    path = model_args.model_name_or_path
    config = AutoConfig.from_pretrained(path, gguf_file=model_args.gguf_file) if path else None
    if config is None:
        spec = get_backbone(model_args.backbone)
    else:  # a number model or a plain checkpoint: the backbone whose config class it uses
        found = [s for s in BACKBONES.values() if type(config) in (s.config_class, s.plain_model_class.config_class)]
        model_type = config.get_text_config().model_type  # a plain LM's, or the LM a composed number model holds
        if not found and model_type not in composable_model_types():
            raise ValueError(f"{model_args.model_name_or_path} holds a {type(config).__name__}; supported: "
                             f"{', '.join(BACKBONES)} and any causal or masked LM of transformers")
        spec = found[0] if found else get_backbone(model_type)
    if spec.causal != causal:
        raise ValueError(f"backbone {spec.name} is a {'causal' if spec.causal else 'masked'} LM; use the other script")
    return spec, config


def load_model(
    model_args: ModelArguments, texts: datasets.DatasetDict, causal: bool, max_length: int
) -> tuple[Any, ...]:
    """Model and tokenizer: loaded, adapted from a plain checkpoint, or new for ``texts`` (the splits).

    A new or adapted model gets its number scaling fitted on the training numbers (``--number_scaler``) and
    its encoding's options on every split's (so that each can be represented) in its config; a saved number
    model has its own. The model applies the scaling, so values stay in the data's units.

    Example:
        >>> model, tokenizer = load_model(ModelArguments(backbone="gpt2"), texts, True, 128)  # doctest: +SKIP
    """
    spec, config = _backbone_of(model_args, causal)
    path = model_args.model_name_or_path
    if isinstance(config, spec.config_class):  # a number model, its scaling in its config
        return AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    encoding = get_encoding(model_args.number_encoding)
    train = texts["train"]["text"]
    kind = model_args.number_scaler if encoding.needs_scaling else "identity"
    scaling = NumberScaling.fit(_values(train), kind).to_config()
    every_value = np.array([value for rows in texts.values() for value in _values(rows["text"])], dtype=np.float64)
    fields = {"number_encoding": encoding.name, **encoding.fit_options(every_value), **scaling}
    if model_args.digit_lookahead:  # fill_recipe checked that the model writes its own digits
        fields.update({name: getattr(model_args, name) for name in LOOKAHEAD_RECIPE})
    if config is not None and encoding.adds_digit_values:  # adapting a plain checkpoint: the recipe's value parts
        fields["digits_features"] = PRETRAINED_RECIPE["digits_features"]
    options = encoding.tokenizer_options(fields)  # [NUM] tokens, or the model's own digits
    if config is not None:
        tokenizer = spec.tokenizer_class.from_pretrained(path, gguf_file=model_args.gguf_file, **options)
        tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
        set_bos(tokenizer, None, path)  # hf-numbers train --pretrained's default: a BOS token first where none
        return spec.model_class.from_pretrained_backbone(path, tokenizer, gguf_file=model_args.gguf_file,
                                                         **fields), tokenizer
    tokenizer = train_number_tokenizer(train, spec.name, model_args.vocab_size, **options)
    config = spec.new_config(
        tokenizer, hidden_size=model_args.hidden_size, num_layers=model_args.num_layers,
        num_heads=model_args.num_heads, max_length=max_length, **fields,
    )
    return spec.model_class(config), tokenizer


def number_targets(texts: Sequence[str], tokenizer: Any, index: int, max_length: int, causal: bool) -> dict:
    """The validation texts that hold number ``index`` within ``max_length`` tokens, its index and value.

    A causal model cannot predict a text's first token, so a number there is left out. A tokenizer that keeps numbers
    as the model's own digits: the texts whose number starts within ``max_length`` tokens, after one at least.

    Example:
        >>> number_targets(["low 3 C, high 7.5 C"], tokenizer, -1, 128, causal=True)  # doctest: +SKIP
        {'text': ['low 3 C, high 7.5 C'], 'answer_index': [1], 'answer': [7.5]}
    """
    kept: dict[str, list[Any]] = {"text": [], "answer_index": [], "answer": []}
    if not tokenizer.num_token_ids:  # the model's own digits: the number is written after the text before it
        for text in texts:
            values = [number.value for number in find_numbers(text)]
            position = index if index >= 0 else len(values) + index
            if 0 <= position < len(values):
                start = find_numbers(text)[position].start
                if 0 < len(tokenizer(text[:start])["input_ids"]) < max_length:
                    kept["text"].append(text)
                    kept["answer_index"].append(position)
                    kept["answer"].append(values[position])
        return kept
    encoded = tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]
    for text, ids in zip(texts, encoded):
        is_number = tokenizer.number_mask(torch.tensor(ids))
        values = [value for _, _, value in find_numbers(text)]
        position = index if index >= 0 else len(values) + index
        if 0 <= position < int(is_number.sum()) and not (causal and position == 0 and is_number[0]):
            kept["text"].append(text)
            kept["answer_index"].append(position)
            kept["answer"].append(values[position])
    return kept


def run(causal: bool, argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Parse the arguments, train with ``Trainer``, save, evaluate; return the evaluation metrics.

    Example:
        >>> run(causal=False, argv=["--train_file", "my.txt", "--output_dir", "runs/mlm"])  # doctest: +SKIP
        {'eval_loss': ..., 'eval_number_mse': ..., ...}
    """
    kinds = (ModelArguments, DataArguments, TrainingArguments) + (() if causal else (MaskingArguments,))
    parser = HfArgumentParser(kinds, allow_abbrev=False)  # --max_step is no --max_steps
    model_args, data_args, training_args, *masking = parser.parse_args_into_dataclasses(argv)
    model_args.backbone = model_args.backbone or next(n for n, s in BACKBONES.items() if s.causal == causal)
    if training_args.disable_tqdm:  # no bars for reading the files and for every save either
        datasets.disable_progress_bars()
        transformers.utils.logging.disable_progress_bar()
    texts = load_texts(data_args, training_args.seed)
    fill_recipe(model_args, causal)
    check_numbers(model_args, data_args, texts, causal)  # before any model, tokenizer or checkpoint is made
    model, tokenizer = load_model(model_args, texts, causal, data_args.max_seq_length)
    if model_args.lora_r:  # LoRA on the trunk; the number module and the number tokens' rows train whole
        lora = number_lora_config(model, r=model_args.lora_r, alpha=model_args.lora_alpha,
                                  trainable_token_ids=tokenizer.added_number_token_ids)
        model = require_peft().get_peft_model(model, lora)
    targets = number_targets(
        texts["validation"]["text"], tokenizer, data_args.eval_number_index, data_args.max_seq_length, causal
    )
    if not targets["text"]:  # the number metrics would be left out after training, without a word
        raise ValueError(f"--eval_number_index {data_args.eval_number_index}: no validation text holds that number "
                         f"where the model can predict it (within --max_seq_length {data_args.max_seq_length} "
                         "tokens, after one token at least); choose another index, e.g. -1 (the last)")
    tokenized = tokenize_dataset(texts, tokenizer, data_args.max_seq_length)
    if causal:
        collator = DataCollatorForNumberCausalLM(tokenizer)
    else:
        collator = DataCollatorForNumberMLM(tokenizer, masking[0].mlm_probability, seed=training_args.seed)
    trainer_kwargs = {}
    if model_args.number_token_loss != "none":  # the digit labels also scored by their value (NTL)
        ntl = NumberTokenLoss(tokenizer, model.config.vocab_size, causal=True, kind=model_args.number_token_loss)
        trainer_kwargs = {"number_token_loss": ntl,
                          "number_token_loss_weight": model_args.number_token_loss_weight}
    trainer = (NumberTokenLossTrainer if trainer_kwargs else Trainer)(
        model=model, args=training_args, train_dataset=tokenized["train"], eval_dataset=tokenized["validation"],
        data_collator=collator, processing_class=tokenizer, **trainer_kwargs,
    )
    if training_args.fsdp and not trainer.is_fsdp_enabled:  # Accelerate fell back to DDP (on CPU, say)
        ran = trainer.accelerator.distributed_type.value
        raise ValueError(f"--fsdp was asked for, but Trainer would run {ran} without sharding (FSDP needs GPUs); "
                         "leave --fsdp out")
    train_result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    if model_args.lora_r:  # the adapter beside the merged model, which is an ordinary number checkpoint
        adapter = Path(training_args.output_dir) / ADAPTER_DIR
        save_adapter(trainer.model, tokenizer, adapter, model_args.model_name_or_path, model_args.gguf_file)
        trainer.model = trainer.model.merge_and_unload()
    trainer.save_model()  # model (its number scaling in config.json) and tokenizer, loadable with from_pretrained
    trainer.log_metrics("train", train_result.metrics)
    trainer.save_metrics("train", train_result.metrics)

    metrics = trainer.evaluate()
    predictions = predict_answers(
        trainer.model, tokenizer, targets["text"], targets["answer_index"], max_length=data_args.max_seq_length,
    )
    numbers = compute_number_metrics(predictions, targets["answer"])
    metrics |= {f"eval_number_{name}": value for name, value in numbers.items() if value is not None}
    trainer.log_metrics("eval", metrics)
    trainer.save_metrics("eval", metrics)
    return metrics
