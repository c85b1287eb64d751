"""Training checkpoints: written atomically, found by step, rotated.

A checkpoint is ``<output_dir>/checkpoint-<step>/`` holding Accelerate's state (model,
optimizer, scheduler, RNG states of every process) and ``trainer_state.json`` (step, epoch,
batches seen in the epoch). It is written to ``checkpoint-<step>.tmp`` and renamed when
complete, so a run killed while saving never leaves a half checkpoint that resume would pick.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from accelerate import Accelerator

STATE_FILE = "trainer_state.json"
_NAME = re.compile(r"^checkpoint-(\d+)$")


@dataclass
class TrainerState:
    """Where training stands: optimizer steps done, current epoch and micro-batches seen in it."""

    global_step: int = 0
    epoch: int = 0
    batches_in_epoch: int = 0


def list_checkpoints(output_dir: str | Path) -> list[Path]:
    """Complete checkpoints in ``output_dir``, oldest first.

    Example:
        >>> list_checkpoints("/nonexistent")
        []
    """
    folder = Path(output_dir)
    if not folder.is_dir():
        return []
    found = [
        (int(m.group(1)), p) for p in folder.iterdir() if (m := _NAME.match(p.name)) and (p / STATE_FILE).is_file()
    ]
    return [p for _, p in sorted(found)]


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


def save_checkpoint(accelerator: Accelerator, output_dir: str | Path, state: TrainerState, keep: int) -> Path:
    """Save a checkpoint of the current step atomically and keep only the newest ``keep`` ones."""
    final = Path(output_dir) / f"checkpoint-{state.global_step}"
    partial = final.with_name(final.name + ".tmp")
    if accelerator.is_main_process and partial.exists():
        shutil.rmtree(partial)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(partial))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        (partial / STATE_FILE).write_text(json.dumps(asdict(state)))
        if final.exists():
            shutil.rmtree(final)
        partial.rename(final)
        for old in list_checkpoints(output_dir)[:-keep] if keep else []:
            shutil.rmtree(old)
    accelerator.wait_for_everyone()
    return final


def load_checkpoint(accelerator: Accelerator, checkpoint: Path) -> TrainerState:
    """Restore model, optimizer, scheduler and RNG states; return the saved trainer state."""
    accelerator.load_state(str(checkpoint))
    return TrainerState(**json.loads((checkpoint / STATE_FILE).read_text()))
