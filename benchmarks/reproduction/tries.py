"""A row stopped partway (a session ended, a machine went back) goes on from its last checkpoint.

With ``reproduce.py --resume`` a row trains with a checkpoint every :data:`EVERY` steps and keeps a ledger of its
tries beside its run folder (``runs/reproduce/<suite>/<row>.tries.json``): the commit they ran and what each cost,
polled while it runs, so a killed try's CPU time is kept. Run again with ``--resume``, an unfinished row goes on
from its newest checkpoint (``--resume_from_checkpoint latest``: the same weights, bit for bit, as a run never
stopped; tests/test_training.py) and its record sums the tries. A ledger written at another commit is refused: the
row would mix two codes' training.

Example:
    >>> Ledger(Path("/nonexistent/row.tries.json")).tries
    []
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EVERY = 25
"""Steps between a resumable row's checkpoints (a LoRA row's checkpoint is its adapter, written in a second)."""
CHECKPOINTING = ("--save_steps", str(EVERY), "--save_total_limit", "1")
"""What a resumable row adds to its training flags (the newest checkpoint is all a try needs)."""
GO_ON = ("--resume_from_checkpoint", "latest")


def ledger_path(out: Path) -> Path:
    """Where the tries of the row that trains in ``out`` are kept: beside the folder, which a new try may empty."""
    return out.with_name(out.name + ".tries.json")


@dataclass
class Ledger:
    """The tries of one row: ``{"commit": ..., "tries": [{"cpu_s", "wall_s", "from_step"}, ...]}``."""

    path: Path
    commit: str | None = None
    tries: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.path.is_file():
            saved = json.loads(self.path.read_text())
            self.commit, self.tries = saved["commit"], saved["tries"]

    def check_commit(self, commit: str) -> None:
        """Refuse to go on at another commit, or with uncommitted code, than the tries so far ran."""
        if self.tries and (self.commit != commit or commit.endswith("+changes") or commit == "unknown"):
            raise RuntimeError(
                f"{self.path.parent / self.path.name.removesuffix('.tries.json')} holds a stopped try of commit "
                f"{self.commit}; this checkout is {commit}: check out {self.commit} to go on from it, or run "
                "without --resume to start over"
            )

    def start(self, commit: str, from_step: int) -> None:
        """Open a new try (trained from ``from_step``) and save the ledger."""
        self.commit = commit
        self.tries.append({"cpu_s": 0.0, "wall_s": 0.0, "from_step": from_step, "date": time.strftime("%Y-%m-%d")})
        self.save()

    def progress(self, cpu: float, wall: float) -> None:
        """The open try's cost so far: saved, so that a try killed now keeps it."""
        self.tries[-1] |= {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1)}
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps({"commit": self.commit, "tries": self.tries}, indent=1) + "\n")
        os.replace(partial, self.path)

    def totals(self) -> dict[str, Any]:
        """The record's cost of all tries together, and where the later ones went on from (when there were some)."""
        totals: dict[str, Any] = {"cpu_s": round(sum(t["cpu_s"] for t in self.tries), 1),
                                  "wall_s": round(sum(t["wall_s"] for t in self.tries), 1)}  # fmt: skip
        if len(self.tries) > 1:
            totals["resumed_at_steps"] = [t["from_step"] for t in self.tries[1:]]
        return totals


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, with the children it waited for) that process ``pid`` has used so far, from
    ``/proc`` (None where there is no ``/proc``: that try's cost is then known only when it ends)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after the name, which may hold spaces: state is field 3
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime, stime, cutime, cstime


def open_try(out: Path, commit: str) -> tuple[Ledger, list[str]]:
    """Open a try of the row that trains in ``out``: its ledger, and the flags that make it checkpoint and go on from
    the newest checkpoint of the tries before (a row without one starts over, in an emptied folder)."""
    from hf_numbers.training.checkpoints import checkpoint_step, list_checkpoints

    ledger = Ledger(ledger_path(out))
    ledger.check_commit(commit)
    checkpoints = list_checkpoints(out) if ledger.tries else []
    if not checkpoints and out.exists():
        shutil.rmtree(out)
    ledger.start(commit, (checkpoint_step(checkpoints[-1]) or 0) if checkpoints else 0)
    return ledger, [*CHECKPOINTING, *(GO_ON if checkpoints else ())]
