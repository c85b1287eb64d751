"""Start-up time: ``import hf_numbers`` and the ``hf-numbers`` command's help and usage errors, against
``import torch, transformers``, against importing the transformers classes that hf_numbers registers (the floor of
``import hf_numbers`` while it registers on import) and against the interpreter's own start (``python -c pass``).

The ``hf-numbers`` rows run what the console script of that checkout runs: the ``module:function`` that its
``setup.cfg`` names (``hf_numbers.cli:main`` where it has none, as before the launcher), called as the script
calls it (``sys.exit(main())``, ``sys.argv[0] = "hf-numbers"``).

Each command runs in a fresh interpreter, in alternating rounds; a round runs every command once as it is
(wall time and the child's CPU time, user + system) and once under ``python -X importtime`` (the sum of
the top-level imports' cumulative times). The minimum over the rounds is kept: on a shared machine
other jobs only ever add time. ``--checkout label=folder`` imports hf_numbers from that folder (its
``PYTHONPATH``), so that two versions are timed in the same rounds.

Writes a markdown table to ``benchmarks/results/startup.md`` and prints it.

Example (about ten minutes on a busy 2-core CPU)::

    .venv/bin/python benchmarks/bench_startup.py --rounds 5
    .venv/bin/python benchmarks/bench_startup.py --checkout before=/tmp/old after=. --rounds 5
"""

from __future__ import annotations

import argparse
import configparser
import os
import re
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "startup.md"
REFERENCE = ("import torch, transformers", ["-c", "import torch, transformers"], 0)
REGISTERED = (
    "from transformers import <the classes hf_numbers registers and subclasses>",
    ["-c", "from transformers import AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM, Pipeline, "
           "GPT2Config, BertConfig, RobertaConfig, LlamaConfig, ModernBertConfig, "
           "GPT2Tokenizer, BertTokenizer, RobertaTokenizer, LlamaTokenizer, GPTNeoXTokenizer, "
           "GPT2LMHeadModel, BertForMaskedLM, RobertaForMaskedLM, LlamaForCausalLM, ModernBertForMaskedLM; "
           "from transformers.pipelines import PIPELINE_REGISTRY"],
    0,
)
"""What registering with the Auto classes and pipelines takes at least: the classes themselves."""
INTERPRETER = ("python -c pass", ["-c", "pass"], 0)
"""The interpreter's own start: what any command costs at least."""
COMMANDS = [  # (name, arguments of the console script, or of python with -c / -m; exit code)
    ("import hf_numbers", ["-c", "import hf_numbers"], 0),
    ("hf-numbers --help", ["--help"], 0),
    ("hf-numbers train --max_step 3", ["train", "--max_step", "3"], 2),
    ("hf-numbers train --help", ["train", "--help"], 0),
]
_CONSOLE_SCRIPT = "import sys; from {module} import {function}; sys.argv[0] = 'hf-numbers'; sys.exit({function}())"
_TOP_LEVEL = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| \S")


def console_script(folder: Path) -> str:
    """The ``module:function`` that the ``hf-numbers`` console script of the checkout in ``folder`` runs."""
    config = configparser.ConfigParser()
    config.read(folder / "setup.cfg")
    scripts = config.get("options.entry_points", "console_scripts", fallback="hf-numbers = hf_numbers.cli:main")
    return dict(line.split(" = ") for line in scripts.strip().splitlines())["hf-numbers"]


def python_arguments(arguments: list[str], folder: Path) -> list[str]:
    """The interpreter's arguments of a command: as given (``-c``, ``-m``), or the checkout's console script."""
    if arguments[0] in ("-c", "-m"):
        return arguments
    module, _, function = console_script(folder).partition(":")
    return ["-c", _CONSOLE_SCRIPT.format(module=module, function=function), *arguments]


def run_once(arguments: list[str], folder: Path, importtime: bool, exit_code: int = 0) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run, or (importtime seconds, 0) with ``importtime``."""
    env = dict(os.environ, PYTHONPATH=str(folder.resolve()))
    command = [sys.executable, *(["-X", "importtime"] if importtime else []), *python_arguments(arguments, folder)]
    before, start = os.times(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    wall, after = time.perf_counter() - start, os.times()
    if done.returncode != exit_code:
        raise RuntimeError(f"{command} exited with {done.returncode}, not {exit_code}:\n{done.stderr}")
    if importtime:
        return sum(int(match[1]) for match in map(_TOP_LEVEL.match, done.stderr.splitlines()) if match) / 1e6, 0.0
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", nargs="+", default=["this=."], metavar="LABEL=FOLDER")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    checkouts = [(label, Path(folder)) for label, _, folder in (item.partition("=") for item in args.checkout)]
    fixed = [("", command, checkouts[0][1]) for command in (REFERENCE, REGISTERED, INTERPRETER)]
    runs = fixed + [(label, command, folder) for label, folder in checkouts for command in COMMANDS]
    times: dict[int, list[tuple[float, float, float]]] = {index: [] for index in range(len(runs))}
    load = os.getloadavg()
    for round_index in range(args.rounds):
        order = range(len(runs)) if round_index % 2 == 0 else reversed(range(len(runs)))
        for index in order:
            _, (_, arguments, exit_code), folder = runs[index]
            wall, cpu = run_once(arguments, folder, importtime=False, exit_code=exit_code)
            times[index].append((wall, cpu, run_once(arguments, folder, importtime=True, exit_code=exit_code)[0]))
    reference_cpu = min(cpu for _, cpu, _ in times[0])
    rows = []
    for index, (label, (name, _, _), folder) in enumerate(runs):
        cell = f"`{name}` (`{console_script(folder)}`)" if name.startswith("hf-numbers") else f"`{name}`"
        wall, cpu, imports = (min(column) for column in zip(*times[index]))
        ratio = cpu / reference_cpu
        rows.append(f"| {label or '-'} | {cell} | {wall:.2f} | {cpu:.2f} | {imports:.2f} | {ratio:.2f} |")
    end_load = os.getloadavg()
    table = "\n".join([
        "# Start-up",
        "",
        f"Minimum of {args.rounds} alternating rounds, each command in a fresh interpreter; load average "
        f"{load[0]:.1f} at the start, {end_load[0]:.1f} at the end, on {os.cpu_count()} CPUs.",
        "",
        f"Command: `python benchmarks/bench_startup.py {' '.join(sys.argv[1:])}`",
        "",
        "| checkout | command | wall s | CPU s | -X importtime s | CPU / reference |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
        *rows,
    ]) + "\n"  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(table)
    print(table)


if __name__ == "__main__":
    main()
