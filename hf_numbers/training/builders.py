"""Build what training needs from :class:`NumberTrainingArguments`: data, tokenizer, model (with its scaling), collator.

The backbone's spec (``args.backbone_spec``) and the encoding's class (``get_encoding``) supply
everything backbone- or encoding-specific; nothing here compares names.

Example:
    >>> args = NumberTrainingArguments(task="lookup", backbone="bert", number_encoding="fone")  # doctest: +SKIP
    >>> dataset = build_dataset(args)  # doctest: +SKIP
    >>> tokenizer = build_tokenizer(args, dataset)  # doctest: +SKIP
    >>> model = build_model(args, tokenizer, dataset)  # doctest: +SKIP
    >>> collator = make_collator(args, tokenizer)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import TASKS, task_scaling
from ..data.checks import check_text_numbers
from ..data.collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM
from ..data.loading import load_task, recorded_task
from ..data.tasks import TASK_FILE
from ..data.tokenizer_training import train_number_tokenizer
from ..modeling import NumberScaling, get_encoding
from ..modeling.configuration_number import NumberConfigFields
from .alignment import align_number_module
from .arguments import NumberTrainingArguments, check_pretrained_tokenizer, plain_text_config
from .lora import number_lora_config, require_peft

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from datasets import DatasetDict


def build_dataset(args: NumberTrainingArguments) -> DatasetDict:
    """The task's splits: loaded from ``args.data_dir``, or generated with the size, seed and task options.

    Example:
        >>> dataset = build_dataset(NumberTrainingArguments(task="lookup", train_size=20, eval_size=5))
        >>> len(dataset["train"])
        20
    """
    dataset = load_task(
        args.task,
        data_dir=args.data_dir,
        train_size=args.train_size,
        eval_size=args.eval_size,
        seed=args.data_seed,
        options=args.task_generator_options(),
    )
    if args.data_dir:  # made elsewhere: its numbers must fit the encoding (a generated task's do by construction)
        _check_made_numbers(args, dataset)
        if recorded_task(args.data_dir) is None:
            logger.warning("%s has no task record (%s): its number scaling and recommended settings are those of "
                           "--task %s; save data with `hf-numbers make-data` or save_task to record its task",
                           args.data_dir, TASK_FILE, args.task)
    return dataset


def _check_made_numbers(args: NumberTrainingArguments, dataset: DatasetDict) -> None:
    """A ``ValueError`` naming the split, row and number of ``--data_dir`` that the encoding cannot represent at
    the widest options it can be fitted to (``check_text_numbers``), before any model is built."""
    width = plain_text_config(args.pretrained, args.gguf_file).hidden_size if args.pretrained else args.hidden_size
    splits = [(f"{args.data_dir}, split {name!r}", data["text"], range(len(data))) for name, data in dataset.items()]
    check_text_numbers(splits, "text", args.number_encoding, width)


def make_scaling(args: NumberTrainingArguments, dataset: DatasetDict) -> NumberScaling:
    """The task's number scaling for an encoding that ``needs_scaling`` (xVal: values must stay small), else the
    identity. Fitted on the training split; :func:`build_model` puts it into the model's config, which applies it.

    Example:
        >>> make_scaling(NumberTrainingArguments(task="temperature"), dataset)  # doctest: +SKIP
        NumberScaling(shift=57.2..., scale=8.1..., log=False)
    """
    name = args.task_name
    if get_encoding(args.number_encoding).needs_scaling and name in TASKS:
        return task_scaling(name, dataset)
    return NumberScaling()


def build_tokenizer(args: NumberTrainingArguments, dataset: DatasetDict) -> Any:
    """The pretrained backbone's tokenizer with number tokens, or one trained on the training texts.

    The encoding says which number tokenizer it needs (``tokenizer_options``): ``[NUM]`` tokens,
    or for a text baseline a ``number_scheme`` with its options fitted to ``dataset``.

    Example:
        >>> args = NumberTrainingArguments(backbone="bert", vocab_size=300)
        >>> tokenizer = build_tokenizer(args, dataset)  # doctest: +SKIP
    """
    options = get_encoding(args.number_encoding).tokenizer_options(encoding_options_for(args, dataset))
    if args.number_output != "num_token":
        options["number_output"] = args.number_output
    if args.pretrained:
        check_pretrained_tokenizer(args.pretrained, args.gguf_file)  # not transformers' "convert a slow tokenizer"
        tokenizer = args.backbone_spec.tokenizer_class.from_pretrained(
            args.pretrained, gguf_file=args.gguf_file, **options
        )
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        set_bos(tokenizer, args.add_bos_token, args.pretrained)
        return tokenizer
    return train_number_tokenizer(dataset["train"]["text"], args.backbone, args.vocab_size, **options)


def bos_choice(add_bos_token: bool | None, tokenizer: Any) -> bool | None:
    """Whether a ``--pretrained`` tokenizer should start every text with its BOS token: ``add_bos_token`` where
    given; by default True where it has a BOS token and adds none (SmolLM2), else None (left as it is).

    Why the default: a causal LM's first position is where its attention sinks, and a number read there is read
    poorly; on SmolLM2 + LoRA the BOS token lifted every set-up measured (docs/results/pretrained.md: 6-digit
    addition 52.0% -> 70.6% for the digit tokens + NTL, multiplication 18.4% -> 34.8% within 1% for value-aware
    digits), and lost on none.

    Example:
        >>> bos_choice(None, smollm2_tokenizer), bos_choice(False, smollm2_tokenizer)  # doctest: +SKIP
        (True, False)
    """
    if add_bos_token is not None or tokenizer.bos_token_id is None:
        return add_bos_token
    return None if tokenizer("1")["input_ids"][:1] == [tokenizer.bos_token_id] else True


class BosTokenError(ValueError):
    """``add_bos_token`` asks what the ``--pretrained`` tokenizer cannot do (it has no BOS token, or ignores the
    setting): a bad argument, which ``hf-numbers train`` answers with a usage error."""


def set_bos(tokenizer: Any, add: bool | None, source: str) -> None:
    """Make ``tokenizer`` start every text with its BOS token (``add``) or not, and check that it does; None: the
    default of :func:`bos_choice`. :class:`BosTokenError` naming ``source`` where it cannot.

    Example:
        >>> set_bos(smollm2_tokenizer, True, "SmolLM2")  # doctest: +SKIP
    """
    add = bos_choice(add, tokenizer)
    if add is None:
        return
    if add and tokenizer.bos_token_id is None:
        raise BosTokenError(f"add_bos_token=True: the tokenizer of {source} has no BOS token (no bos_token); drop "
                            "--add_bos_token, or pass --add_bos_token false")  # fmt: skip
    tokenizer.add_bos_token = add  # transformers rebuilds the template, which tokenizer.json then keeps
    starts = tokenizer("1")["input_ids"][:1] == [tokenizer.bos_token_id]
    if starts != add:
        raise BosTokenError(f"add_bos_token={add}: the tokenizer of {source} ({type(tokenizer).__name__}) did not "
                            "take it; pass --add_bos_token false to leave it as it is")  # fmt: skip


def encoding_options_for(args: NumberTrainingArguments, dataset: DatasetDict | None = None) -> dict[str, Any]:
    """The chosen encoding's options: those given in ``args``, the others fitted to ``dataset``'s numbers.

    Fitted options (FoNE's digit places, the exponent bins' range, ...) represent every number of every
    split; without ``dataset``, the others keep the config's defaults.

    Example:
        >>> encoding_options_for(NumberTrainingArguments(number_encoding="fone"), dd)  # doctest: +SKIP
        {'fone_int_digits': 1, 'fone_frac_digits': 2}
    """
    encoding = get_encoding(args.number_encoding)
    given = {option.name: getattr(args, option.name) for option in encoding.options}
    given = {name: value for name, value in given.items() if value is not None}
    fitted = {}
    if dataset is not None:
        values = np.array([v for data in dataset.values() for row in data["numbers"] for v in row], dtype=np.float64)
        fitted = dict(encoding.fit_options(values, given))
        args.check_encoding_values(fitted | given)  # all of them now: the data's verdict, before the model is built
    return fitted | given


def vocab_multiple(args: NumberTrainingArguments, device: Any) -> int:
    """What a new model's vocabulary is rounded up to a multiple of: ``--pad_vocab_to_multiple_of`` where set, else
    64 for a new model on a CUDA device and 1 (none) otherwise (a pretrained model keeps its own size).

    Example:
        >>> args = NumberTrainingArguments()
        >>> vocab_multiple(args, "cuda"), vocab_multiple(args, "cpu")
        (64, 1)
    """
    if args.pad_vocab_to_multiple_of is not None:
        return args.pad_vocab_to_multiple_of
    return 64 if not args.pretrained and torch.device(device).type == "cuda" else 1


def build_model(args: NumberTrainingArguments, tokenizer: Any, dataset: DatasetDict | None = None) -> Any:
    """A pretrained backbone adapted to numbers, or a new small model sized by ``args``.

    With ``dataset``, the encoding's options (:func:`encoding_options_for`) and the number scaling
    (:func:`make_scaling`) are fitted to it. The tokenizer's ``model_max_length`` is capped at the model's
    positions, so that ``truncation=True`` cuts a text to what the model can read. A new model's vocabulary is
    rounded up to a multiple of ``args.pad_vocab_to_multiple_of`` (:func:`vocab_multiple`).

    Example:
        >>> model = build_model(args, tokenizer, dataset)  # doctest: +SKIP
        >>> tokenizer.model_max_length  # doctest: +SKIP
        128
    """
    model = _new_model(args, tokenizer, dataset)
    spec = args.backbone_spec
    positions = getattr(model.config.get_text_config(), spec.size_fields.positions) - spec.position_offset
    tokenizer.model_max_length = min(tokenizer.model_max_length, positions)
    return model


LOOKAHEAD_FIELDS = tuple(field.name for field in dataclasses.fields(NumberConfigFields)
                         if field.name.startswith("digit_lookahead")
                         and field.name in NumberTrainingArguments.__dataclass_fields__)
"""The digit lookahead's config fields that ``hf-numbers train`` sets (the ids come from the tokenizer): a new
option is passed on by having the same name in both."""


def _new_model(args: NumberTrainingArguments, tokenizer: Any, dataset: DatasetDict | None) -> Any:
    spec = args.backbone_spec
    number_fields = {
        "number_encoding": args.number_encoding,
        "number_loss_weight": args.number_loss_weight,
        "number_output": args.number_output,
        "freeze_backbone": args.freeze_backbone,
        **({name: getattr(args, name) for name in LOOKAHEAD_FIELDS} if args.digit_lookahead else {}),
        **encoding_options_for(args, dataset),
        **(make_scaling(args, dataset).to_config() if dataset is not None else {}),
    }
    if args.pretrained:
        return spec.model_class.from_pretrained_backbone(
            args.pretrained, tokenizer, gguf_file=args.gguf_file, number_token_init=args.number_token_init,
            **number_fields,
        )
    config = spec.new_config(
        tokenizer,
        hidden_size=args.hidden_size,
        num_layers=args.num_layers,
        num_heads=args.num_heads,
        max_length=args.max_length,
        **dict.fromkeys(spec.dropout_fields, args.dropout),
        **number_fields,
    )
    multiple = args.pad_vocab_to_multiple_of or 1
    config.vocab_size = -(-len(tokenizer) // multiple) * multiple
    padded = range(len(tokenizer), config.vocab_size)  # rows no token has: never chosen (fill_mask) nor written
    if padded:
        config.tokenizer_vocab_size = len(tokenizer)
    model = spec.model_class(config)
    if padded and model.can_generate():
        model.generation_config.suppress_tokens = list(padded)
    return model


def align_to_pretrained(args: NumberTrainingArguments, model: Any, tokenizer: Any, dataset: DatasetDict,
                        device: Any) -> dict[str, float]:  # fmt: skip
    """``args.align_steps`` of :func:`~hf_numbers.training.alignment.align_number_module` on the training split's
    numbers, the pretrained tokenizer reading them as digits the teacher; the first and last losses (none: {}).

    Example:
        >>> args = NumberTrainingArguments(pretrained="smollm2", align_steps=100)  # doctest: +SKIP
        >>> align_to_pretrained(args, model, tokenizer, dataset, "cpu")  # doctest: +SKIP
        {'align_first_loss': 164.9, 'align_last_loss': 21.3}
    """
    if not args.align_steps:
        return {}
    teacher = args.backbone_spec.tokenizer_class.from_pretrained(args.pretrained, gguf_file=args.gguf_file,
                                                                 number_scheme="text")  # fmt: skip
    if teacher.pad_token is None:
        teacher.pad_token = teacher.eos_token
    set_bos(teacher, args.add_bos_token, args.pretrained)
    values = sorted({v for row in dataset["train"]["numbers"] for v in row})
    losses = align_number_module(model.to(device), tokenizer, teacher, values, args.align_steps,
                                 args.per_device_train_batch_size, args.align_learning_rate, args.seed)  # fmt: skip
    return {"align_first_loss": losses[0], "align_last_loss": losses[-1]}


def apply_lora(args: NumberTrainingArguments, model: Any, tokenizer: Any) -> Any:
    """``model`` with LoRA adapters (``args.lora_r`` > 0; PEFT), else ``model`` itself.

    The number module and the rows of the tokens the tokenizer added for numbers (``[NUM]``, or a text
    scheme's tokens) train whole; see :func:`~hf_numbers.training.lora.number_lora_config`.

    Example:
        >>> model = apply_lora(NumberTrainingArguments(pretrained="smollm2", lora_r=16), model, tok)  # doctest: +SKIP
    """
    if not args.lora_r:
        return model
    config = number_lora_config(
        model, r=args.lora_r, alpha=args.lora_alpha, dropout=args.lora_dropout,
        target_modules=args.lora_target_modules, trainable_token_ids=tokenizer.added_number_token_ids,
    )  # fmt: skip
    return require_peft().get_peft_model(model, config)


def make_collator(args: NumberTrainingArguments, tokenizer: Any) -> Any:
    """The collator of the backbone's kind: causal LM labels, or masked-LM masking (``completion_only``: the
    answer; ``text_only``: words only, numbers visible).

    MLM masks are seeded by batch content (``args.seed``), so a resume is exact.

    Example:
        >>> collator = make_collator(NumberTrainingArguments(backbone="bert"), tokenizer)  # doctest: +SKIP
    """
    if args.causal:
        return DataCollatorForNumberCausalLM(tokenizer, completion_only=args.completion_only)
    return DataCollatorForNumberMLM(
        tokenizer,
        mlm_probability=args.mlm_probability,
        seed=args.seed,
        completion_only=args.completion_only,
        text_only=args.text_only,
    )
