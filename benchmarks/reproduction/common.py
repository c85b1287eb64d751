"""What every suite of ``benchmarks/reproduce.py`` shares.

The row type (:class:`Row`), running a row through the real command line and recording the result
(:func:`run_row`, with :func:`machine` and :func:`commit`), and the helpers that turn a row's record into
a table cell (``_result_cell``, ``_pct``, ``_num``, ...).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

from .tries import ledger_path, open_try, process_cpu

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CARDS = ROOT / "model_cards"
CARD_LICENSE = "apache-2.0"
"""The reference models' license: the project's (generated data; the frozen MiniLM's is apache-2.0 too)."""
QUICK = [
    "--max_steps",
    "4",
    "--train_size",
    "64",
    "--eval_size",
    "16",
    "--hidden_size",
    "128",  # the narrowest that every row's encoding takes (BitTokens' zero_pad writes 128 bits into it)
    "--num_layers",
    "1",
    "--num_heads",
    "2",
    "--eval_steps",
    "0",
    "--save_steps",
    "0",
]


@dataclass(frozen=True)
class Row:
    """One run of a suite: its name, its ``hf-numbers train`` arguments and its table cell.

    A row with ``model_of`` trains nothing: ``argv`` are ``hf-numbers evaluate`` arguments, asked of the
    model that row ``model_of`` trained. It is for rows whose training would be the same (the planets
    targets only choose which number of the description is asked at evaluation).
    """

    name: str
    argv: tuple[str, ...]
    cell: dict[str, Any] = field(default_factory=dict)
    details: Callable[[Path], dict[str, Any]] | None = None
    """Extra entries of the row's record, read from its finished run folder (e.g. per-group metrics of
    ``predictions.json``), so that the report never needs the run folder (``runs/`` is not committed)."""
    model_of: str | None = None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _ppl(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _sci(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


def _split_cell(result: dict[str, Any] | None, split: str, metric: str, fmt: Callable[[float | None], str]) -> str:
    """Like :func:`_result_cell`, for another split than ``test``."""
    if result is not None and result.get("error"):
        return "n/a"
    return fmt(None if result is None else result["metrics"].get(split, {}).get(metric))


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _test_metric(result: dict[str, Any] | None, metric: str) -> float | None:
    """A test-split metric of a row's result; None when the row has not run or failed."""
    if result is None or result.get("error"):
        return None
    return result["metrics"]["test"].get(metric)


def _result_cell(result: dict[str, Any] | None, metric: str, fmt: Callable[[float | None], str]) -> str:
    """A table cell: ``-`` when the row has not run, ``n/a`` when it failed, else the formatted metric."""
    if result is not None and result.get("error"):
        return "n/a"
    return fmt(_test_metric(result, metric))


def report_note(suite: str, name: str, **fields: Any) -> str:
    """The prose note ``name`` of ``suite``'s report, from ``notes/<suite>.md``, with its ``$fields`` filled in.

    Report prose lives in those markdown files, not in the code that computes the tables.

    Example:
        >>> report_note("scientific", "persistence", mse="1.2", r2="0.98")[:41]
        'Persistence (repeat the last hour): test '
    """
    path = Path(__file__).parent / "notes" / f"{suite}.md"
    notes = dict(re.findall(r"<!-- note: (\w+) -->\n(.*?)\n(?=\n<!-- note: |\Z)", path.read_text(), re.S))
    if name not in notes:
        raise KeyError(f"{path}: no note {name!r} (notes: {', '.join(sorted(notes))})")
    return Template(notes[name]).substitute(fields)


def run_data(run_dir: Path, task: str) -> Any:
    """The splits a finished row trained and was tested on, rebuilt from its ``training_args.json``."""
    from hf_numbers.data import load_task, parse_task_options

    arguments = json.loads((run_dir / "training_args.json").read_text())
    return load_task(
        task,
        train_size=arguments["train_size"],
        eval_size=arguments["eval_size"],
        seed=arguments["data_seed"],
        options=parse_task_options(arguments.get("task_options")),
    )


def machine() -> str:
    """A one-line description of where the suite ran."""
    import torch

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({os.cpu_count()} cores)"
    return f"{device}, {platform.machine()}, Python {platform.python_version()}, torch {torch.__version__}"


def commit() -> str:
    """The checkout's commit (short hash, ``+changes`` when code differs from it), or ``unknown``.

    Only the code counts (``hf_numbers/``, ``benchmarks/`` without its results, ``pyproject.toml``):
    results, cards and prose, which change while suites run, do not. Refuses to name this checkout's
    commit for a process that imported ``hf_numbers`` from elsewhere (an editable install of another
    checkout: a script run from a git worktree), whose figures would be another code's.
    """
    imported = sys.modules.get("hf_numbers")
    own = ROOT / "hf_numbers"
    if imported is not None and own.is_dir() and Path(imported.__file__).resolve().parent != own.resolve():
        raise RuntimeError(
            f"this benchmark is {ROOT}'s but it imported hf_numbers from {Path(imported.__file__).parent}: its "
            f"record would name the wrong code; run it with PYTHONPATH={ROOT}"
        )
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "hf_numbers", "benchmarks",
             "pyproject.toml", ":(exclude)benchmarks/results"],
            cwd=ROOT, capture_output=True, text=True,
        )  # fmt: skip
    except OSError:
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+changes" if changed.stdout.strip() else "")


POLL_S = 15.0
"""Seconds between two readings of a running row's cost (``--resume``: a killed try keeps its last)."""


def _run_measured(
    command: list[str], env: dict[str, str], progress: Callable[[float, float], None] | None = None
) -> tuple[int, str, float]:
    """Run ``command`` in the repository root; its exit code, its stderr and the CPU seconds it used.

    The CPU time (user + system, of this one process and what it waited for) is the cost of a row on a
    machine shared with other jobs, where the wall time also counts the waiting for a core. ``progress``
    is told the CPU and wall seconds so far every :data:`POLL_S` seconds while it runs.
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, text=True, env=env)
        start = told = time.perf_counter()
        while True:
            pid, status, usage = os.wait4(process.pid, 0 if progress is None else os.WNOHANG)
            if pid:
                break
            cpu = process_cpu(process.pid) if time.perf_counter() - told >= POLL_S else None
            if cpu is not None and progress is not None:
                told = time.perf_counter()
                progress(cpu, told - start)
            time.sleep(0.1)  # a finished row is seen within 0.1 s
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen does not wait again
        err.seek(0)
        return process.returncode, err.read(), usage.ru_utime + usage.ru_stime


def row_folder(suite: str, name: str, quick: bool = False) -> Path:
    """Where row ``name`` of ``suite`` writes its run (model, metrics, predictions)."""
    return ROOT / "runs" / ("reproduce-quick" if quick else "reproduce") / suite / name


def run_row(row: Row, suite: str, quick: bool, threads: int, resume: bool = False) -> dict[str, Any]:
    """Train one row through the CLI on ``threads`` threads (or, for a ``model_of`` row, evaluate that
    row's model); return its record (metrics, command, wall time...). ``resume``: a training row checkpoints,
    and a row stopped partway goes on from its last checkpoint (:mod:`.tries`)."""
    out = row_folder(suite, row.name, quick)
    start_commit = commit()  # the code the row runs (main may move meanwhile)
    ledger, checkpointing = open_try(out, start_commit) if resume and row.model_of is None else (None, [])
    if ledger is None:
        ledger_path(out).unlink(missing_ok=True)
        if out.exists():
            shutil.rmtree(out)
    shown = f"runs/reproduce/{suite}/{row.name}"
    if row.model_of is None:
        verb, argv = "train", [*row.argv, *(QUICK if quick else []), "--output_dir", str(out), "--disable_tqdm", "true"]
        argv += checkpointing
        recorded = [*row.argv, "--output_dir", shown]
    else:
        checkpoint = row_folder(suite, row.model_of, quick) / "final"
        verb, argv = "evaluate", ["--checkpoint", str(checkpoint), *row.argv, "--output_dir", str(out)]
        recorded = ["--checkpoint", f"runs/reproduce/{suite}/{row.model_of}/final", *row.argv, "--output_dir", shown]
    command = [sys.executable, "-m", "hf_numbers.cli", verb, *argv]
    print(f"[{suite}] {row.name}: hf-numbers {verb} {shlex.join(argv)}", flush=True)
    start = time.perf_counter()
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    if row.model_of is None or checkpoint.is_dir():
        returncode, stderr, cpu = _run_measured(command, env, None if ledger is None else ledger.progress)
    else:
        returncode, stderr, cpu = 1, f"no model to evaluate: run row {row.model_of} first ({checkpoint} is missing)", 0
    cost = {"wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(cpu, 1)}
    if ledger is not None:
        ledger.progress(cpu, cost["wall_s"])
        cost = ledger.totals()
    record: dict[str, Any] = {
        "name": row.name,
        "command": f"hf-numbers {verb} " + shlex.join(recorded),
        **cost,
        "machine": machine(),
        "commit": start_commit,
        "threads": threads,
        "date": time.strftime("%Y-%m-%d"),
        **row.cell,
    }
    if returncode != 0:
        record["error"] = stderr.strip().splitlines()[-1] if stderr.strip() else "failed"
        print(f"  failed: {record['error']}", flush=True)
        return record
    trained = out if row.model_of is None else checkpoint.parent
    summary = json.loads((trained / "summary.json").read_text())
    arguments = json.loads((trained / "training_args.json").read_text())
    metrics = summary["metrics"] if row.model_of is None else json.loads((out / "metrics.json").read_text())
    record |= {"metrics": metrics, "steps": summary["steps"], "train_size": arguments["train_size"]}
    if row.model_of is not None:
        record["model_of"] = row.model_of
    if row.details is not None:
        record |= row.details(out)
    card = CARDS / f"{suite}-{row.name}.md"
    if not quick and row.model_of is None:  # the reference model's card, named by where this command writes the model
        command = ["card", str(out), "--output", str(card), "--license", CARD_LICENSE, "--model_id", f"{shown}/final"]
        subprocess.run([sys.executable, "-m", "hf_numbers.cli", *command], env=env, check=True, capture_output=True)
    elif not quick:
        card.unlink(missing_ok=True)  # the model is row model_of's, and so is its card
    if ledger is not None:
        ledger.path.unlink()  # finished: a later --resume trains the row anew
    print(f"  {_minutes(record['wall_s'])}: test {record['metrics']['test']}", flush=True)
    return record
