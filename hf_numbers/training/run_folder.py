"""One run per ``output_dir``: a new run never writes over an earlier one, and two runs never share a folder.

A folder that already holds files is refused unless the run resumes from its newest checkpoint or
``--overwrite_output_dir`` deletes the earlier run (only a folder that ``training_args.json`` marks as a run
folder). A run holds the folder's ``.lock`` file while it works (POSIX; :func:`hold_run_folder`).

Example:
    >>> check_output_dir("/nonexistent/run", checkpoint=None, overwrite=False)
    False
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from accelerate import Accelerator
from accelerate.utils import broadcast_object_list

from ..strict_json import write_json
from .arguments import NumberTrainingArguments
from .checkpoints import STATE_FILE, checkpoint_step, list_checkpoints

try:
    import fcntl
except ImportError:  # not POSIX (Windows): run folders are not locked
    fcntl = None

RUN_MARKER = "training_args.json"
FINAL_DIR = "final"
"""The folder of a run that holds the trained model, its tokenizer and model card."""
LOCK_FILE = ".lock"
"""The file of a run folder that the run working in it holds locked."""


class RunFolderInUseError(ValueError):
    """Another run holds the lock of the output folder."""


_HELD: dict[Path, IO[str] | None] = {}
"""The run folders this process holds, with their open lock files (None on the processes that are not the main one)."""


@contextmanager
def hold_run_folder(accelerator: Accelerator, output_dir: str | Path) -> Iterator[None]:
    """Hold the lock of ``output_dir`` (its ``.lock`` file, created with the folder if needed) through the block.

    The main process takes it; when another run holds it, every process raises :class:`RunFolderInUseError`
    before anything is written. A nested block on the same folder shares the lock.

    Example:
        >>> with hold_run_folder(accelerator, "runs/a"):  # doctest: +SKIP
        ...     train(...)
    """
    folder = Path(output_dir).resolve()
    if folder in _HELD:
        yield
        return
    handle, refusal, created = None, None, not folder.exists()
    if accelerator.is_main_process and fcntl is not None:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / LOCK_FILE, "a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            refusal = (
                f"output_dir {output_dir} is in use: another run holds it (its lock file {LOCK_FILE} is locked); "
                "wait for that run to end or choose another --output_dir"
            )
    if accelerator.num_processes > 1:
        refusal = broadcast_object_list([refusal])[0]
    if refusal is not None:
        raise RunFolderInUseError(refusal)
    _HELD[folder] = handle
    try:
        yield
    finally:
        del _HELD[folder]
        if handle is not None:
            if created and [entry.name for entry in folder.iterdir()] == [LOCK_FILE]:  # a run that wrote nothing
                (folder / LOCK_FILE).unlink()  # leaves nothing
                folder.rmdir()
            handle.close()  # releases the lock


def staging_dir(folder: Path) -> Path:
    """Where ``folder`` is written before it is renamed into place: ``<name>.tmp/<name>`` beside it.

    Example:
        >>> staging_dir(Path("runs/a/final"))
        PosixPath('runs/a/final.tmp/final')
    """
    return folder.with_name(f"{folder.name}.tmp") / folder.name


def check_output_dir(
    output_dir: str | Path, checkpoint: Path | None, overwrite: bool, resume_latest: bool = False
) -> bool:
    """Whether ``output_dir`` may take this run; True when an earlier run must be deleted first.

    Raises ``ValueError`` when the folder holds an earlier run (or other files) and neither a
    resume from its newest checkpoint nor ``overwrite`` allows using it. ``resume_latest`` says that
    ``--resume_from_checkpoint latest`` was asked for (and ``checkpoint`` is None: it found none).
    """
    folder = Path(output_dir)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"output_dir {folder} is a file, not a folder")
    # the nearest folder that exists must take the new one (prepare_output_dir writes a test file as well)
    existing = next(path for path in (folder.absolute(), *folder.absolute().parents) if path.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        problem = "is a file" if not existing.is_dir() else "is not writable"
        raise ValueError(f"output_dir {folder} is not a writable folder ({existing} {problem})")
    if checkpoint is not None and checkpoint.resolve().parent == folder.resolve():
        step = checkpoint_step(checkpoint)
        newer = [p.name for p in list_checkpoints(folder) if step is None or checkpoint_step(p) > step]
        if newer:
            raise ValueError(
                f"cannot resume from {checkpoint.name}: {folder} holds newer checkpoints ({', '.join(newer)}) "
                "that the resumed run would mix with its own; resume from the newest, move them away, or "
                "resume into a new --output_dir"
            )
        return False
    entries = sorted(p.name for p in folder.iterdir() if p.name != LOCK_FILE) if folder.is_dir() else []
    if not entries:
        return False
    listed = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
    if not overwrite and resume_latest:
        incomplete = [name for name in entries if checkpoint_step(name) is not None]
        why = (f"{', '.join(incomplete)} lack(s) {STATE_FILE}, so it is incomplete" if incomplete
               else "it saved none (--save_steps 0?)")
        raise ValueError(
            f"output_dir {folder} already holds an earlier run ({listed}) but no complete checkpoint for "
            f"--resume_from_checkpoint latest: {why}. Pass --overwrite_output_dir true to delete it and start again, "
            "or choose another --output_dir"
        )
    if not overwrite:
        raise ValueError(
            f"output_dir {folder} already holds an earlier run or other files ({listed}); pass "
            "--resume_from_checkpoint latest to continue it, --overwrite_output_dir true to delete it and start "
            "again, or choose another --output_dir"
        )
    if not (folder / RUN_MARKER).is_file():
        raise ValueError(
            f"output_dir {folder} holds files ({listed}) but no {RUN_MARKER}, so it is not an hf-numbers run "
            "folder and --overwrite_output_dir will not delete it; choose an empty or new --output_dir"
        )
    if checkpoint is not None and checkpoint.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"--overwrite_output_dir would delete {checkpoint}, the checkpoint to resume from")
    return True


def prepare_output_dir(accelerator: Accelerator, args: NumberTrainingArguments, checkpoint: Path | None) -> Path:
    """Check ``args.output_dir`` (see :func:`check_output_dir`), delete an earlier run where allowed,
    create the folder, make sure it is writable, and record ``args`` in it as ``training_args.json``.

    Every process checks before any of them writes, so all of them agree. Deleting an earlier run keeps
    the lock file, which this run holds (:func:`hold_run_folder`).

    Example:
        >>> folder = prepare_output_dir(accelerator, args, checkpoint=None)  # doctest: +SKIP
    """
    folder = Path(args.output_dir)
    clear = check_output_dir(folder, checkpoint, args.overwrite_output_dir, args.resume_from_checkpoint == "latest")
    accelerator.wait_for_everyone()
    if clear and accelerator.is_main_process:
        for entry in folder.iterdir():
            if entry.name == LOCK_FILE:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    accelerator.wait_for_everyone()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"):
            pass
    except OSError as error:
        raise ValueError(f"output_dir {folder} is not a writable folder ({error})") from error
    if accelerator.is_main_process:
        write_json(folder / RUN_MARKER, args.to_dict())
    accelerator.wait_for_everyone()
    return folder
