"""The training loop, on Accelerate: one CPU, one GPU, or several processes with ``accelerate launch``.

AdamW with a cosine schedule, gradient accumulation, mixed precision, evaluation, logging and atomic
checkpoints every N steps, an exact resume, and a stop at the first non-finite loss; the step runs compiled
with ``--torch_compile`` and sharded with ``--fsdp`` (:mod:`.sharding`). What each does, and the files it
reads and writes: docs/training.md ("Logging, trackers and processes", "Checkpoints, resume and safety").
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration, parse_flag_from_env, set_seed
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from ..modeling import get_encoding
from ..modeling.checks import NUMBER_MODULES
from ..modeling.digit_lookahead import DigitLookahead, digit_lookaheads, linear_lookahead_scale, scale_digit_lookahead
from ..modeling.encoding_base import REFUSED
from ..strict_json import write_json
from .arguments import NumberTrainingArguments
from .checkpoints import TrainerState, load_checkpoint, resolve_checkpoint, save_checkpoint
from .finite_guard import LOSS_NAMES, FiniteGuard, require_finite
from .fused_loss import fused_token_loss
from .number_token_loss import NumberTokenLoss
from .reporting import describe_run, format_record, project_configuration, start_trackers, tracker_values
from .run_folder import check_output_dir, hold_run_folder, prepare_output_dir
from .sharding import gather_model, shard_model

logger = logging.getLogger(__name__)



@dataclass
class TrainResult:
    """What a run did: final step, the last logged losses and every log/eval record."""

    global_step: int
    log_history: list[dict[str, float]] = field(default_factory=list)

    @property
    def last_train_loss(self) -> float:
        losses = [r["loss"] for r in self.log_history if "loss" in r]
        return losses[-1] if losses else math.nan


def resolve_mixed_precision(args: NumberTrainingArguments) -> str | None:
    """The precision to ask Accelerate for; None leaves the choice to ``accelerate launch``.

    An explicit ``args.mixed_precision`` wins. ``"auto"`` defers to the launcher where it set
    ``ACCELERATE_MIXED_PRECISION`` (``accelerate launch --mixed_precision bf16``), else picks bf16
    on a GPU that supports it and no precision change elsewhere.

    Example:
        >>> resolve_mixed_precision(NumberTrainingArguments(mixed_precision="fp16"))
        'fp16'
    """
    if args.mixed_precision != "auto":
        return args.mixed_precision
    if "ACCELERATE_MIXED_PRECISION" in os.environ:
        return None  # Accelerate reads the launcher's choice
    cpu = args.use_cpu or parse_flag_from_env("ACCELERATE_USE_CPU")
    return "bf16" if torch.cuda.is_available() and not cpu and torch.cuda.is_bf16_supported() else "no"


def make_accelerator(args: NumberTrainingArguments) -> Accelerator:
    """An Accelerator for ``args``: seeded sampler, accumulation, precision, trackers (``report_to``).

    Example:
        >>> accelerator = make_accelerator(NumberTrainingArguments(use_cpu=True))  # doctest: +SKIP
    """
    refuse_sharding()
    accelerator = Accelerator(
        cpu=args.use_cpu,
        mixed_precision=resolve_mixed_precision(args),
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True, data_seed=args.seed, non_blocking=True),
        log_with=args.trackers or None,
        project_config=project_configuration(args),
    )
    if accelerator.mixed_precision in ("bf16", "fp16") and get_encoding(args.number_encoding).needs_scaling:
        logger.warning(
            "%s carries each value in the size of its embedding, which the %s trunk keeps to about 3 significant "
            "digits: adapting SmolLM2 to 3-digit multiplication, answers within 1%% fell from 31.4%% (float32) to "
            "10.0%% (bf16) (docs/results/pretrained.md). Pass --mixed_precision no where the values' precision "
            "matters", args.number_encoding, accelerator.mixed_precision,
        )
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched > accelerator.num_processes:
        raise ValueError(
            f"launched as {launched} processes, but Accelerate runs {accelerator.num_processes} "
            f"({accelerator.distributed_type.value}): each would train alone. On CPU add --use_cpu true (gloo DDP)"
        )
    return accelerator


_SHARDING_FLAGS = {"ACCELERATE_USE_FSDP": "FSDP", "ACCELERATE_USE_DEEPSPEED": "DeepSpeed",
                   "ACCELERATE_USE_MEGATRON_LM": "Megatron-LM"}


def refuse_sharding() -> None:
    """``ValueError`` when the launch asks for sharding through Accelerate (an ``accelerate launch`` FSDP, DeepSpeed
    or Megatron-LM config): Accelerate would otherwise fail on CPU or fall back to DDP silently. ``--fsdp`` is the
    supported way to shard (the loop applies FSDP2 itself, see :mod:`.sharding`).

    Example:
        >>> os.environ["ACCELERATE_USE_FSDP"] = "true"; refuse_sharding()  # doctest: +SKIP
        ValueError: the launch asks for FSDP ...
    """
    asked = [name for flag, name in _SHARDING_FLAGS.items() if parse_flag_from_env(flag)]
    if asked:
        raise ValueError(
            f"the launch asks for {' and '.join(asked)} (an accelerate config), but hf-numbers train does not shard "
            "through Accelerate's plugins: it trains on one process or with DDP across processes. To shard the model, "
            "pass --fsdp true (the loop shards it with FSDP2 itself, on CPU or GPU) and launch with a config of "
            "distributed_type NO, MULTI_CPU or MULTI_GPU"
        )


def check_run(args: NumberTrainingArguments) -> Path | None:
    """Check what can be checked before any work; return the checkpoint to resume from (None: a new run).

    Raises ``ValueError`` for a non-finite learning rate, weight decay or clipping norm, a
    ``data_dir`` or ``pretrained`` that is not a folder, a checkpoint that does not exist, and an
    ``output_dir`` that holds an earlier run (see :func:`.run_folder.check_output_dir`).

    Example:
        >>> check_run(NumberTrainingArguments(weight_decay=float("inf")))
        Traceback (most recent call last):
        ...
        ValueError: weight_decay must be a finite number, got inf
    """
    for name in ("learning_rate", "weight_decay", "max_grad_norm"):
        if not math.isfinite(getattr(args, name)):
            raise ValueError(f"{name} must be a finite number, got {getattr(args, name)}")
    for name in ("data_dir", "pretrained"):
        path = getattr(args, name)
        if path is not None and not Path(path).is_dir():
            raise ValueError(f"{name} {path!r} is not a folder (a local folder is needed; nothing is downloaded)")
    checkpoint = resolve_checkpoint(args.resume_from_checkpoint, args.output_dir)
    check_output_dir(args.output_dir, checkpoint, args.overwrite_output_dir, args.resume_from_checkpoint == "latest")
    return checkpoint


def _losses(model: torch.nn.Module, batch: dict[str, torch.Tensor], args: NumberTrainingArguments,
            number_token_loss: NumberTokenLoss | None) -> list[torch.Tensor]:
    """Loss, token loss and number loss of ``batch``: the model's, or with ``number_token_loss`` (a text encoding's
    number loss is 0) the model's loss (its token loss, and the digit lookahead's where it has one) plus the weighted
    number-token loss, which is then the number loss.

    Without ``number_token_loss`` the model computes the loss alone (``loss_only``: its heads run only where the
    loss reads them)."""
    if number_token_loss is None:
        out = model(**batch, loss_only=True)
        return [out.loss, out.token_loss, out.number_loss]
    out = model(**batch)
    number_loss = number_token_loss(out.logits, batch["labels"])
    return [out.loss + args.number_token_loss_weight * number_loss, out.token_loss, number_loss]


def compiled_step(model: torch.nn.Module) -> Callable[..., Any]:
    """``model`` compiled by ``torch.compile`` for training steps (``--torch_compile``).

    ``loss_only`` gathers the labelled positions, whose number depends on the batch: the compiler traces that
    gather (``capture_dynamic_output_shape_ops``) instead of breaking the graph there.

    Example:
        >>> step = compiled_step(model); out = step(**batch, loss_only=True)  # doctest: +SKIP
    """
    compiled = torch.compile(model)

    def call(**batch: Any) -> Any:
        with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
            return compiled(**batch)

    return call


def _refusal(error: Exception, model: torch.nn.Module, batch: dict[str, torch.Tensor], step: int) -> ValueError | None:
    """The ``ValueError`` for a training batch the model refused (None: ``error`` is no refusal).

    A compiled model refuses with an assert that cannot name the value (a ``RuntimeError`` naming
    :data:`~hf_numbers.modeling.encoding_base.REFUSED`); the uncompiled ``model`` then runs the batch for the message.
    """
    if isinstance(error, RuntimeError) and REFUSED in str(error):
        try:
            with torch.no_grad():
                model(**batch)
        except ValueError as eager_error:
            error = eager_error
    if not isinstance(error, ValueError):
        return None
    return ValueError(f"step {step}: the model refused a training batch: {error}")


def _mean_loss(model: torch.nn.Module, loader: DataLoader, accelerator: Accelerator, args: NumberTrainingArguments,
               number_token_loss: NumberTokenLoss | None) -> dict[str, float]:
    """Example-weighted mean of loss, token loss and number loss over ``loader``, across processes."""
    model.eval()
    totals = torch.zeros(4, dtype=torch.float64, device=accelerator.device)
    with torch.no_grad():
        for batch in loader:
            parts = _losses(model, batch, args, number_token_loss)
            n = batch["input_ids"].shape[0]
            totals += torch.tensor([float(p) * n for p in parts] + [n], dtype=torch.float64, device=totals.device)
    totals = accelerator.reduce(totals, reduction="sum")
    model.train()
    count = max(float(totals[3]), 1.0)
    return {
        "eval_loss": float(totals[0]) / count,
        "eval_token_loss": float(totals[1]) / count,
        "eval_number_loss": float(totals[2]) / count,
    }


def train_model(
    model: torch.nn.Module,
    train_dataset: Any,
    collator: Callable[[list[dict[str, Any]]], dict[str, torch.Tensor]],
    args: NumberTrainingArguments,
    eval_dataset: Any | None = None,
    eval_collator: Callable[[list[dict[str, Any]]], dict[str, torch.Tensor]] | None = None,
    accelerator: Accelerator | None = None,
    save_with: Sequence[Any] = (),
    number_token_loss: NumberTokenLoss | None = None,
) -> tuple[torch.nn.Module, TrainResult]:
    """Train ``model`` for ``args.max_steps`` optimizer steps; return the unwrapped model and the history.

    The datasets hold tokenized examples (``input_ids``, ``attention_mask``, ``input_numbers``);
    ``collator`` pads them and builds labels. Checkpoints go to ``args.output_dir``; with
    ``args.resume_from_checkpoint`` training continues from one exactly as if never stopped.
    ``save_with`` (the tokenizer: anything with ``save_pretrained``) is saved
    into every checkpoint next to the model, so that a checkpoint loads with ``from_pretrained``.
    The trackers of ``args.report_to`` are finished at the end when ``accelerator`` is not given;
    a caller that gives one finishes them (``accelerator.end_training()``). ``number_token_loss``
    (``--number_token_loss ntl``) is added to the token loss with ``args.number_token_loss_weight``.

    Example:
        >>> model, result = train_model(model, train_ds, collator, args, eval_ds)  # doctest: +SKIP
        >>> result.last_train_loss  # doctest: +SKIP
    """
    checkpoint = check_run(args)  # fail before any work
    owns_accelerator = accelerator is None
    accelerator = accelerator or make_accelerator(args)
    with hold_run_folder(accelerator, args.output_dir):  # no other run may write to the folder meanwhile
        set_seed(args.seed)
        output_dir = prepare_output_dir(accelerator, args, checkpoint)
        model_class = type(model)
        run = _Run.prepare(model, train_dataset, collator, args, accelerator, number_token_loss, output_dir, save_with)
        if eval_dataset is not None:
            loader = DataLoader(eval_dataset, batch_size=args.per_device_eval_batch_size,
                                collate_fn=eval_collator or collator)
            run.eval_loader = accelerator.prepare(loader)
        if checkpoint is not None:
            run.resume(checkpoint)
        start_trackers(accelerator, args)
        if accelerator.is_main_process:
            count = sum(p.numel() for p in run.parameters)
            logger.info(describe_run(accelerator, args, len(train_dataset), count, run.state.global_step))
        run.fit()
        if accelerator.is_main_process:
            write_json(output_dir / "log_history.json", run.state.log_history)
        accelerator.wait_for_everyone()
        if owns_accelerator:
            for tracker in accelerator.trackers:
                tracker.finish()
        trained = gather_model(run.model, model_class) if args.fsdp else accelerator.unwrap_model(run.model)
        return trained, TrainResult(run.state.global_step, run.state.log_history)


def _fast_paths(model: torch.nn.Module, args: NumberTrainingArguments, accelerator: Accelerator) -> None:
    """Gradient checkpointing, the fused token loss and FSDP2 sharding, in that order (each wraps what it finds)."""
    if args.gradient_checkpointing:  # before sharding: the blocks are wrapped where they are
        if hasattr(model, "activation_checkpointing_enable"):  # its name since transformers 5.24
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    for module in model.modules():  # the number model itself, also inside LoRA's wrapper
        if hasattr(module, "fused_token_loss"):
            module.fused_token_loss = fused_token_loss(module, args.fused_token_loss, accelerator.device)
            break
    if args.fsdp:  # sharded by the loop itself (FSDP2), never wrapped in DDP: see .sharding
        shard_model(model, accelerator, cpu_offload=args.fsdp_cpu_offload, mode=args.fsdp)


def parameter_groups(model: torch.nn.Module, args: NumberTrainingArguments) -> list[dict[str, Any]]:
    """AdamW's parameter groups: the trainable parameters, and with ``--number_learning_rate`` the number module's
    apart at that rate (its modules named in ``NUMBER_MODULES``, also inside LoRA's wrapper).

    Example:
        >>> [len(g["params"]) for g in parameter_groups(model, args)]  # doctest: +SKIP
        [28, 6]
    """
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    if args.number_learning_rate is None:
        return [{"params": [p for _, p in named]}]
    rest, number = [], []
    for name, parameter in named:
        (number if set(name.split(".")) & set(NUMBER_MODULES) else rest).append(parameter)
    if not number:
        raise ValueError(f"--number_learning_rate: {type(model).__name__} trains no number module "
                         f"({', '.join(NUMBER_MODULES)}); leave it unset")
    return [{"params": rest}, {"params": number, "lr": args.number_learning_rate}]


@dataclass
class _Run:
    """One run's moving parts (:meth:`prepare`) and its loop (:meth:`fit`): steps, logs, evaluation, checkpoints."""

    args: NumberTrainingArguments
    accelerator: Accelerator
    model: torch.nn.Module  # as prepared: wrapped for DDP, or sharded
    step_model: Callable[..., Any]  # the model, or compiled for training steps (evaluation is eager)
    parameters: list[torch.nn.Parameter]
    optimizer: Any
    scheduler: Any
    train_loader: Any
    guard: FiniteGuard
    number_token_loss: NumberTokenLoss | None
    output_dir: Path
    save_with: Sequence[Any]
    eval_loader: Any = None
    state: TrainerState = field(default_factory=TrainerState)
    annealed: list[DigitLookahead] = field(default_factory=list)  # the lookaheads --digit_lookahead_schedule moves
    step_losses: torch.Tensor | None = None  # summed over this optimizer step's micro-batches
    window: torch.Tensor | None = None  # summed since the last log record

    @classmethod
    def prepare(cls, model: torch.nn.Module, train_dataset: Any, collator: Callable, args: NumberTrainingArguments,
                accelerator: Accelerator, number_token_loss: NumberTokenLoss | None, output_dir: Path,
                save_with: Sequence[Any]) -> _Run:
        """The model made fast and prepared, AdamW (fused on a GPU) with its cosine schedule, the train loader."""
        on_gpu = accelerator.device.type == "cuda"
        # Its own generator: starting an epoch must not draw from the global RNG (dropout, masking), or a
        # resumed run, which starts one more epoch iterator than the original, would drift from it. Pinned
        # batches copy to a GPU without waiting for its work.
        loader = DataLoader(train_dataset, batch_size=args.per_device_train_batch_size, shuffle=True,
                            collate_fn=collator, generator=torch.Generator().manual_seed(args.seed), pin_memory=on_gpu)
        _fast_paths(model, args, accelerator)
        groups = parameter_groups(model, args)
        parameters = [p for group in groups for p in group["params"]]
        if not parameters:
            raise ValueError("the model has no trainable parameters")
        from transformers.optimization import get_cosine_with_min_lr_schedule_with_warmup  # imports peft

        # fused on a GPU: one kernel for every tensor, and it skips a non-finite step on the device (FiniteGuard)
        optimizer = torch.optim.AdamW(groups, lr=args.learning_rate, weight_decay=args.weight_decay,
                                      fused=on_gpu and not args.fsdp)
        # The scheduler stays out of accelerator.prepare (which would step it once per process): it is
        # stepped by hand, once per optimizer step, and saved by save_checkpoint.
        scheduler = get_cosine_with_min_lr_schedule_with_warmup(
            optimizer, args.warmup_steps, args.max_steps, min_lr_rate=args.min_lr_ratio
        )
        if args.fsdp:
            optimizer, loader = accelerator.prepare(optimizer, loader)
        else:
            model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        compiled = args.torch_compile is True or (args.torch_compile == "auto" and on_gpu)
        zeros = torch.zeros(3, dtype=torch.float64, device=accelerator.device)
        return cls(args, accelerator, model, compiled_step(model) if compiled else model, parameters, optimizer,
                   scheduler, loader, FiniteGuard(optimizer, accelerator), number_token_loss, output_dir, save_with,
                   annealed=digit_lookaheads(model) if args.digit_lookahead_schedule == "linear" else [],
                   step_losses=zeros, window=zeros.clone())

    def resume(self, checkpoint: Path) -> None:
        """Continue from ``checkpoint``: weights, optimizer, schedule, random states, position in the data."""
        self.state, saved_window = load_checkpoint(
            self.accelerator, checkpoint, self.model, self.optimizer, self.scheduler,
            allow_inexact=self.args.allow_inexact_resume, sharded=bool(self.args.fsdp),
        )
        if self.state.global_step > self.args.max_steps:
            raise ValueError(f"{checkpoint} is at step {self.state.global_step}, beyond "
                             f"max_steps={self.args.max_steps}; raise --max_steps")
        self.window = saved_window.to(self.accelerator.device)
        logger.info("resumed from %s at step %d", checkpoint, self.state.global_step)

    def log(self, record: dict[str, float]) -> None:
        """Keep ``record`` in the history, show it on the console and send it to the trackers."""
        self.state.log_history.append(record)
        if self.accelerator.is_main_process:
            logger.info(format_record(record))
        self.accelerator.log(tracker_values(record), step=record["step"])

    def fit(self) -> None:
        """Train until ``max_steps`` optimizer steps, epoch after epoch."""
        args, state = self.args, self.state
        progress = tqdm(total=args.max_steps, initial=state.global_step,
                        disable=args.disable_tqdm or not self.accelerator.is_local_main_process, desc="training")
        self.model.train()
        while state.global_step < args.max_steps:
            self.train_loader.set_epoch(state.epoch)
            loader = self.train_loader
            if state.batches_in_epoch:
                loader = self.accelerator.skip_first_batches(self.train_loader, state.batches_in_epoch)
            for batch in loader:
                self.train_batch(batch)
                if self.accelerator.sync_gradients and self.after_optimizer_step(progress):
                    break
            else:
                state.epoch += 1
                state.batches_in_epoch = 0
        progress.close()

    def train_batch(self, batch: dict[str, torch.Tensor]) -> None:
        """Forward and backward of one micro-batch; the optimizer step where gradients sync."""
        with self.accelerator.accumulate(self.model):
            if self.annealed:
                scale = linear_lookahead_scale(self.state.global_step, self.args.max_steps)
                scale_digit_lookahead(self.annealed, scale)
            try:
                losses = _losses(self.step_model, batch, self.args, self.number_token_loss)
            except (ValueError, RuntimeError) as error:  # a value the encoding cannot carry: from the data, or
                refusal = _refusal(error, self.model, batch, self.state.global_step + 1)  # diverged weights
                if refusal is None:
                    raise
                raise refusal from error
            self.step_losses += torch.stack([loss.detach().to(self.step_losses.dtype) for loss in losses])
            self.accelerator.backward(losses[0])
            if self.accelerator.sync_gradients:
                self.guard.step(self.step_losses, self.state.global_step + 1)
                if self.args.max_grad_norm > 0:
                    self.accelerator.clip_grad_norm_(self.parameters, self.args.max_grad_norm)
            self.optimizer.step()
            self.optimizer.zero_grad()
        self.state.batches_in_epoch += 1
        self.state.window_steps += 1

    def after_optimizer_step(self, progress: tqdm) -> bool:
        """Count the step; log, evaluate and save when due. True after the last step."""
        args, state = self.args, self.state
        self.window += self.step_losses
        self.step_losses.zero_()
        self.scheduler.step()
        state.global_step += 1
        progress.update(1)
        is_last = state.global_step == args.max_steps
        evaluating = self.eval_loader is not None and (
            (args.eval_steps and state.global_step % args.eval_steps == 0) or is_last
        )
        saving = bool(args.save_steps) and state.global_step % args.save_steps == 0
        logging_now = state.global_step % args.logging_steps == 0 or is_last
        if logging_now or evaluating or saving:
            self.guard.check()  # the device is read here anyway: nothing non-finite is logged or saved
        if logging_now:
            mean = self.accelerator.reduce(self.window / state.window_steps, reduction="mean")
            record = {"step": state.global_step, **dict(zip(LOSS_NAMES, mean.tolist()))}
            record["learning_rate"] = self.scheduler.get_last_lr()[0]
            record["epoch"] = state.epoch + state.batches_in_epoch / len(self.train_loader)
            self.log(record)
            progress.set_postfix(loss=f"{record['loss']:.4f}")
            self.window.zero_()
            state.window_steps = 0
        if evaluating:
            eval_losses = _mean_loss(self.model, self.eval_loader, self.accelerator, args, self.number_token_loss)
            require_finite(eval_losses, state.global_step, "in evaluation")
            self.log({"step": state.global_step, **eval_losses})
        if saving:
            save_checkpoint(self.accelerator, self.output_dir, state, args.save_total_limit, self.model,
                            self.optimizer, self.scheduler, self.window, self.save_with, sharded=bool(args.fsdp))
        return is_last
