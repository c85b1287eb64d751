"""Training checkpoints that load no pickle: written atomically, checked on resume, rotated.

``<output_dir>/checkpoint-<step>/`` is also a saved model (``save_pretrained`` of the model and the
tokenizer). Resume reads only ``model.safetensors``, ``optimizer.pt`` (``torch.load(weights_only=True)``),
``trainer_state.json`` and one ``process_<rank>.safetensors`` of random states per process; ``--fsdp``
and ``--lora_r`` change the weights' files. The format and its safety rules: docs/training.md,
"Checkpoints, resume and safety".

Example:
    >>> list_checkpoints("/nonexistent")
    []
"""

from __future__ import annotations

import errno
import json
import logging
import pickle
import re
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from accelerate import Accelerator
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, load_model, save_file

from ..strict_json import write_json
from .rng_state import capture_rng_state, restore_rng_state
from .sharding import DCP_DIR, load_sharded, save_sharded

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
STATE_FILE = "trainer_state.json"
MODEL_FILE = "model.safetensors"
ADAPTER_FILE = "adapter_model.safetensors"
"""A LoRA run's weights in a checkpoint: the adapter, the number module and the new token rows (PEFT's file)."""
OPTIMIZER_FILE = "optimizer.pt"
_NAME = re.compile(r"^checkpoint-(\d+)$")
_WINDOW = "loss_window"


@dataclass
class TrainerState:
    """Where training stands: optimizer steps done, epoch, micro-batches seen in it, and the logs so far.

    ``window_steps`` counts the micro-batches whose losses are summed towards the next log record.
    """

    global_step: int = 0
    epoch: int = 0
    batches_in_epoch: int = 0
    window_steps: int = 0
    log_history: list[dict[str, float]] = field(default_factory=list)


def checkpoint_step(path: str | Path) -> int | None:
    """The step in a ``checkpoint-<step>`` folder's name, or None for another name.

    Example:
        >>> checkpoint_step("runs/x/checkpoint-40"), checkpoint_step("runs/x/final")
        (40, None)
    """
    match = _NAME.match(Path(path).name)
    return int(match.group(1)) if match else None


def list_checkpoints(output_dir: str | Path) -> list[Path]:
    """Complete checkpoints in ``output_dir``, oldest first.

    Example:
        >>> list_checkpoints("/nonexistent")
        []
    """
    folder = Path(output_dir)
    if not folder.is_dir():
        return []
    found = [(checkpoint_step(p), p) for p in folder.iterdir() if checkpoint_step(p) is not None]
    return [p for _, p in sorted(found) if (p / STATE_FILE).is_file()]


def resolve_checkpoint(resume_from_checkpoint: str | None, output_dir: str | Path) -> Path | None:
    """The checkpoint to resume from: a folder, ``"latest"`` (None if there is none yet) or None.

    Example:
        >>> resolve_checkpoint(None, "runs/x") is None
        True
    """
    if resume_from_checkpoint is None:
        return None
    if resume_from_checkpoint == "latest":
        checkpoints = list_checkpoints(output_dir)
        return checkpoints[-1] if checkpoints else None
    path = Path(resume_from_checkpoint)
    if not (path / STATE_FILE).is_file():
        raise ValueError(f"{path} is not a complete checkpoint (no {STATE_FILE}); pass a checkpoint-<step> folder")
    return path


def replace_folder(staging: Path, target: Path) -> None:
    """Put the complete folder ``staging`` in the place of ``target`` (which may exist), by renames.

    Example:
        >>> replace_folder(Path("runs/x/final.tmp"), Path("runs/x/final"))  # doctest: +SKIP
    """
    old = target.with_name(target.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    if old.exists():
        shutil.rmtree(old)


def _process_file(index: int) -> str:
    return f"process_{index}.safetensors"


def _disk_full(error: Exception) -> bool:
    """Whether ``error`` reports a full disk: ENOSPC, safetensors' ``No space left on device``, or
    ``torch.save``'s short write without an errno (``unexpected pos ...``, ``file write failed``).

    Example:
        >>> _disk_full(RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534"))
        True
    """
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return True
    text = str(error)
    torch_writer = isinstance(error, RuntimeError) and ("unexpected pos" in text or "file write failed" in text)
    return torch_writer or "No space left on device" in text


def save_checkpoint(
    accelerator: Accelerator,
    output_dir: str | Path,
    state: TrainerState,
    keep: int,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    loss_window: torch.Tensor,
    save_with: Sequence[Any] = (),
    sharded: bool = False,
) -> Path:
    """Save the current step atomically, then keep only the newest ``keep`` checkpoints (0 keeps all).

    The model and each object of ``save_with`` (the tokenizer) are written with ``save_pretrained``. A full
    disk is an ``OSError`` (ENOSPC) naming the checkpoint; the half-written one is removed, the earlier ones
    stay. With ``sharded`` (``--fsdp``) the model and optimizer go into ``dcp/`` shards, for resuming only.
    """
    final = Path(output_dir) / f"checkpoint-{state.global_step}"
    partial = final.with_name(final.name + ".tmp")
    if accelerator.is_main_process:
        if partial.exists():
            shutil.rmtree(partial)
        partial.mkdir()
    accelerator.wait_for_everyone()
    try:
        tensors, rng = capture_rng_state()
        tensors[_WINDOW] = loss_window.detach().cpu()
        save_file(tensors, str(partial / _process_file(accelerator.process_index)), metadata={"rng": json.dumps(rng)})
        param_groups = save_sharded(partial, model, optimizer) if sharded else None
        if accelerator.is_main_process:
            if sharded:  # the weights and the optimizer state are in the shards
                model.config.save_pretrained(partial)
            else:
                unwrapped = accelerator.unwrap_model(model)  # config, code and model.safetensors, or an adapter
                unwrapped.save_pretrained(partial, **({"save_embedding_layers": False} if _is_peft(unwrapped) else {}))
                torch.save(optimizer.state_dict(), partial / OPTIMIZER_FILE)
            for part in save_with:
                part.save_pretrained(partial)
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            scaler = accelerator.scaler
            record = {
                "format_version": FORMAT_VERSION,
                **asdict(state),
                "accelerator_step": accelerator.step,
                "num_processes": accelerator.num_processes,
                "scheduler": scheduler.state_dict(),
                "grad_scaler": scaler.state_dict() if scaler is not None else None,
            }
            if sharded:
                record |= {"sharded": True, "optimizer_param_groups": param_groups}
            write_json(partial / STATE_FILE, record)  # last: its presence marks the checkpoint complete
    except Exception as error:
        if not _disk_full(error):
            raise
        if accelerator.is_main_process:
            shutil.rmtree(partial, ignore_errors=True)  # give back the space; the earlier checkpoints are untouched
        raise OSError(
            errno.ENOSPC,
            f"no space left on device while writing {final}; it was not saved and the earlier checkpoints are "
            "intact: free some space and resume with --resume_from_checkpoint latest",
        ) from error
    if accelerator.is_main_process:
        replace_folder(partial, final)
        for old in list_checkpoints(output_dir)[:-keep] if keep else []:
            shutil.rmtree(old)
    accelerator.wait_for_everyone()
    return final


def _is_peft(model: torch.nn.Module) -> bool:
    """Whether ``model`` is a PEFT model (LoRA): its ``save_pretrained`` writes only the adapter."""
    return hasattr(model, "peft_config") and hasattr(model, "get_base_model")


def _load_weights(model: torch.nn.Module, path: Path) -> None:
    """Load ``model.safetensors`` into the model, or a PEFT model's adapter (``adapter_model.safetensors``)."""
    if not _is_peft(model):
        load_model(model, path)
        return
    from peft import set_peft_model_state_dict  # only LoRA runs get here

    state = load_file(path, device=str(next(model.parameters()).device))
    result = set_peft_model_state_dict(model, state)
    if result.unexpected_keys:
        raise RuntimeError(f"unexpected adapter weights {result.unexpected_keys[:5]}")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _read_state(checkpoint: Path) -> dict[str, Any]:
    """``trainer_state.json``, checked field by field; ``ValueError`` saying what is wrong."""
    try:
        record = json.loads((checkpoint / STATE_FILE).read_text(), parse_constant=_reject_constant)
    except (OSError, ValueError) as error:
        raise ValueError(f"{STATE_FILE} is unreadable ({error})") from error
    if not isinstance(record, dict) or record.get("format_version") != FORMAT_VERSION:
        version = record.get("format_version") if isinstance(record, dict) else None
        raise ValueError(
            f"{STATE_FILE} has format_version {version!r}, not {FORMAT_VERSION}: the checkpoint was not written "
            "by this version of hf_numbers (older ones saved pickles, which are not loaded)"
        )
    minimum = {"global_step": 0, "epoch": 0, "batches_in_epoch": 0, "window_steps": 0, "accelerator_step": 0}
    for name, low in {**minimum, "num_processes": 1}.items():
        value = record.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{STATE_FILE}: {name} must be an integer >= {low}, got {value!r}")
    history = record.get("log_history")
    if not isinstance(history, list) or not all(isinstance(entry, dict) for entry in history):
        raise ValueError(f"{STATE_FILE}: log_history must be a list of records, got {history!r:.80}")
    if not isinstance(record.get("scheduler"), dict):
        raise ValueError(f"{STATE_FILE}: scheduler must be the scheduler's state, got {record.get('scheduler')!r:.80}")
    return record


def _read_process_file(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The random-state tensors (loss window included) and the JSON companions of one process's file."""
    if not path.is_file():
        raise ValueError(f"{path.name} is missing")
    try:
        with safe_open(str(path), framework="pt") as file:
            tensors = {key: file.get_tensor(key) for key in file.keys()}
            rng = json.loads((file.metadata() or {})["rng"])
    except (SafetensorError, OSError, KeyError, ValueError) as error:
        raise ValueError(f"{path.name} is unreadable ({error})") from error
    window = tensors.get(_WINDOW)
    if window is None or window.shape != (3,) or window.dtype != torch.float64:
        raise ValueError(f"{path.name} holds no loss window of 3 float64 values")
    return tensors, rng


def _fail(checkpoint: Path, problem: str) -> ValueError:
    return ValueError(f"cannot resume from {checkpoint}: {problem}")


def _load_whole(checkpoint: Path, model: torch.nn.Module, weights: str, optimizer: torch.optim.Optimizer) -> None:
    """Load an unsharded checkpoint's ``weights`` file (onto the model's device) and optimizer state, or raise a
    ``ValueError`` naming the file that does not fit."""
    try:
        _load_weights(model, checkpoint / weights)
    except (SafetensorError, OSError, RuntimeError) as error:
        raise _fail(checkpoint, f"{weights} does not fit the model ({error})") from None
    try:
        optimizer.load_state_dict(torch.load(checkpoint / OPTIMIZER_FILE, map_location="cpu", weights_only=True))
    except (pickle.UnpicklingError, EOFError, OSError, RuntimeError, KeyError, ValueError) as error:
        raise _fail(checkpoint, f"{OPTIMIZER_FILE} is not this optimizer's state ({error})") from None


def load_checkpoint(
    accelerator: Accelerator,
    checkpoint: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    allow_inexact: bool = False,
    sharded: bool = False,
) -> tuple[TrainerState, torch.Tensor]:
    """Restore model, optimizer, scheduler, gradient scaler and random states; return the trainer state
    and this process's loss window.

    Anything missing or malformed is a ``ValueError`` naming it. A resume that could not continue exactly
    (random states, number of processes, gradient scaler state) is refused too, unless ``allow_inexact``:
    then it warns and starts from fresh random states. A sharded checkpoint resumes only under ``--fsdp``
    with as many processes as saved it.

    Example:
        >>> state, window = load_checkpoint(accelerator, Path("run/checkpoint-40"), model, opt, sch)  # doctest: +SKIP
    """
    try:
        record = _read_state(checkpoint)
    except ValueError as error:
        raise _fail(checkpoint, str(error)) from None
    if bool(record.get("sharded", False)) != sharded:
        saved = "with --fsdp (sharded)" if record.get("sharded") else "without --fsdp"
        raise _fail(checkpoint, f"it was saved {saved}; resume with the same --fsdp setting")
    if sharded and record["num_processes"] != accelerator.num_processes:
        raise _fail(checkpoint, f"its shards were written by {record['num_processes']} processes, this run has "
                    f"{accelerator.num_processes}; resume a --fsdp run with as many processes as saved it")
    weights = ADAPTER_FILE if _is_peft(accelerator.unwrap_model(model)) else MODEL_FILE
    for name in (f"{DCP_DIR}/.metadata",) if sharded else (weights, OPTIMIZER_FILE):
        if not (checkpoint / name).is_file():
            raise _fail(checkpoint, f"{name} is missing")
    inexact = []
    if record["num_processes"] != accelerator.num_processes:
        inexact.append(f"it was saved by {record['num_processes']} processes, this run has {accelerator.num_processes}")
    try:
        tensors, rng = _read_process_file(checkpoint / _process_file(accelerator.process_index))
    except ValueError as error:
        inexact.append(str(error))
        tensors, rng = {}, {}
    scaler = accelerator.scaler
    if scaler is not None and not isinstance(record.get("grad_scaler"), dict):
        inexact.append("it holds no fp16 gradient scaler state (it was saved with another --mixed_precision)")

    if sharded:
        try:
            load_sharded(checkpoint, model, optimizer, record.get("optimizer_param_groups"))
        except (pickle.UnpicklingError, OSError, RuntimeError, KeyError, ValueError, TypeError) as error:
            raise _fail(checkpoint, f"{DCP_DIR}/ does not hold this model's and optimizer's shards ({error})") from None
    else:
        _load_whole(checkpoint, accelerator.unwrap_model(model), weights, optimizer)
    if set(record["scheduler"]) != set(scheduler.state_dict()):
        raise _fail(checkpoint, f"the scheduler state in {STATE_FILE} has other fields than this run's scheduler")
    scheduler.load_state_dict(record["scheduler"])
    accelerator.step = record["accelerator_step"]

    window = tensors.pop(_WINDOW, None)
    if tensors:
        try:
            restore_rng_state(tensors, rng, cuda=accelerator.device.type == "cuda")
        except ValueError as error:
            inexact.append(f"{_process_file(accelerator.process_index)}: {error}")
    if scaler is not None and isinstance(record.get("grad_scaler"), dict):
        try:
            scaler.load_state_dict(record["grad_scaler"])
        except (KeyError, RuntimeError) as error:
            raise _fail(checkpoint, f"the gradient scaler state in {STATE_FILE} is malformed ({error})") from None
    state = TrainerState(**{f.name: record[f.name] for f in fields(TrainerState)})
    if not inexact:
        return state, window
    problem = f"it cannot continue exactly: {'; '.join(inexact)}"
    if not allow_inexact:
        raise _fail(checkpoint, f"{problem}. Pass --allow_inexact_resume true to continue anyway")
    logger.warning("resuming from %s inexactly (allow_inexact_resume): %s", checkpoint, problem)
    state.window_steps = 0
    return state, torch.zeros(3, dtype=torch.float64)
