"""Reproduce the papers' tables at the scale of a CPU: every row is one ``hf-numbers train`` run.

    python benchmarks/reproduce.py fone          # FoNE: 6-digit addition, subtraction, decimals, data efficiency
    python benchmarks/reproduce.py arithmetic    # xVal Tables 2 and 3: multiplication, multi-operand
    python benchmarks/reproduce.py frozen_bert   # floating-point embedding paper, Table 1: frozen MiniLM, masked words
    python benchmarks/reproduce.py pretrained    # SmolLM2-135M adapted: base, digit tokens (LoRA/full, NTL), xVal, FoNE
    python benchmarks/reproduce.py bittokens     # BitTokens: MinMax, Interval, division (exact match, log-sMAPE)
    python benchmarks/reproduce.py fone --only fone-add6 --force   # re-run one row

Each row runs the real command line (``python -m hf_numbers.cli train ...``, so a result is what a
user gets with the same flags) in ``runs/reproduce/<suite>/<row>``; a row whose training would repeat
another's (the planets' step-size rows: the target only chooses the number asked) runs
``hf-numbers evaluate`` on that row's model instead, after it and again whenever it trains again.
A row's metrics, command, wall time and machine are kept in
``benchmarks/results/reproduce/<suite>/<row>.json``. A row whose JSON
exists is not run again (``--force`` re-runs it), so an interrupted suite resumes where it stopped; with
``--resume`` a row's training resumes too, from its last checkpoint (``reproduction/tries.py``).
The tables (with the papers' numbers beside ours) go to ``benchmarks/results/reproduction_<suite>.md``
and the plots next to them; the model card of each row's model to ``model_cards/<suite>-<row>.md``
(``hf-numbers card``, the code of the run's ``final/README.md``; see ``model_cards/README.md``).
``--quick`` runs every row tiny (a smoke test of the script; its results go to a separate folder
and never into the tables or ``model_cards/``).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from reproduction.arithmetic import arithmetic_report, arithmetic_rows
from reproduction.bittokens import bittokens_report, bittokens_rows
from reproduction.common import RESULTS, Row, _minutes, run_row
from reproduction.fone import fone_report, fone_rows
from reproduction.frozen_bert import frozen_bert_report, frozen_bert_rows
from reproduction.pretrained import pretrained_report, pretrained_rows
from reproduction.scientific import scientific_report, scientific_rows

Report = Callable[[dict[str, dict[str, Any]], Path], list[str]]
"""A suite's tables: Markdown lines from its rows' records, plots written to the folder given."""
SUITES: dict[str, tuple[Callable[[], list[Row]], Report]] = {
    "fone": (fone_rows, fone_report),
    "arithmetic": (arithmetic_rows, arithmetic_report),
    "scientific": (scientific_rows, scientific_report),
    "frozen_bert": (frozen_bert_rows, frozen_bert_report),
    "pretrained": (pretrained_rows, pretrained_report),
    "bittokens": (bittokens_rows, bittokens_report),
}


def _machines(results: dict[str, dict[str, Any]]) -> str:
    """Where the rows ran: the one machine, or the most common one and the rows that ran elsewhere.

    >>> _machines({"a": {"machine": "CPU"}, "b": {"machine": "CPU"}, "c": {"machine": "GPU"}})
    'CPU; GPU (rows c)'
    """
    by_machine: dict[str, list[str]] = {}
    for name, result in results.items():
        by_machine.setdefault(result["machine"], []).append(name)
    ordered = sorted(by_machine, key=lambda machine: -len(by_machine[machine]))
    return "; ".join([*ordered[:1], *(f"{m} (rows {', '.join(sorted(by_machine[m]))})" for m in ordered[1:])])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--only", nargs="*", default=None, help="Run only these rows (names as in the results).")
    parser.add_argument("--force", action="store_true", help="Re-run rows that already have a result.")
    parser.add_argument(
        "--resume", action="store_true",
        help="Rows checkpoint as they train, and a row stopped partway goes on from its last checkpoint (its record "
        "sums the tries' CPU time).",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="Tiny runs, to check the script end to end.")
    parser.add_argument("--report_only", action="store_true", help="Rebuild the tables from the saved results.")
    parser.add_argument("--jobs", type=int, default=1, help="Rows trained at the same time.")
    parser.add_argument(
        "--threads", type=int, default=None, help="Threads of each row (default: the CPU count divided by --jobs)."
    )
    args = parser.parse_args(argv)
    make_rows, report = SUITES[args.suite]
    rows = make_rows()
    unknown = sorted(set(args.only or []) - {row.name for row in rows})
    if unknown:
        parser.error(f"unknown rows {unknown}; rows: {', '.join(row.name for row in rows)}")
    store = RESULTS / ("reproduce-quick" if args.quick else "reproduce") / args.suite
    store.mkdir(parents=True, exist_ok=True)
    threads = args.threads or max(1, (os.cpu_count() or 1) // args.jobs)
    todo = [
        row
        for row in rows
        if not args.report_only
        and (args.only is None or row.name in args.only)
        and (args.force or not (store / f"{row.name}.json").exists())
    ]
    trained = {row.name for row in todo}
    todo += [row for row in rows if row.model_of in trained and row.name not in trained]  # its model changes

    def run_and_save(row: Row) -> None:
        record = run_row(row, args.suite, args.quick, threads, args.resume)
        (store / f"{row.name}.json").write_text(json.dumps(record, indent=1) + "\n")

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each row is its own process
        list(pool.map(run_and_save, [row for row in todo if row.model_of is None]))
        list(pool.map(run_and_save, [row for row in todo if row.model_of is not None]))  # once their models exist
    out = store.parent if args.quick else RESULTS
    lines = _report(args.suite, rows, report, store, out)
    path = out / f"reproduction_{args.suite}.md"
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwritten: {path}")


def _report(suite: str, rows: list[Row], report: Report, store: Path, out: Path) -> list[str]:
    """The suite's page: its tables (``report`` of the records in ``store``, plots written to ``out``), then the
    machines, wall and CPU time, commits, notes and failures of its rows."""
    results = {path.stem: json.loads(path.read_text()) for path in sorted(store.glob("*.json"))}
    evaluated = " (or `hf-numbers evaluate` of another row's model, whose training it would repeat)"
    lines = [
        f"# Reproduction: {suite}",
        "",
        f"Command: `python benchmarks/reproduce.py {suite}`. "
        f"Every row is one `hf-numbers train` run{evaluated if any(row.model_of for row in rows) else ''}; "
        "its exact command, wall time and metrics are in "
        f"`benchmarks/results/reproduce/{suite}/<row>.json`.",
        "",
    ]
    lines += report(results, out)
    total = sum(r["wall_s"] for r in results.values())
    lines += ["", f"Machine: {_machines(results)}. Total wall time of the rows: {_minutes(total)}"]
    if all("cpu_s" in r for r in results.values()):
        cpu = sum(r["cpu_s"] for r in results.values())
        lines[-1] += f" (CPU time {_minutes(cpu)}; on a machine shared with other jobs the wall time is longer)"
    lines[-1] += "."
    commits = sorted({r.get("commit", "not recorded") for r in results.values()})
    lines += [f"Commits the rows ran at: {', '.join(commits)}."]
    notes = {name: r["note"] for name, r in results.items() if r.get("note")}
    if notes:
        lines += ["", "Notes:", *(f"- `{name}`: {note}" for name, note in notes.items())]
    failures = {name: r["error"] for name, r in results.items() if r.get("error")}
    if failures:
        lines += ["", "Rows that failed (shown as n/a):", *(f"- `{name}`: {error}" for name, error in failures.items())]
    return lines


if __name__ == "__main__":
    main()
