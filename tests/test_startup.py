"""Start-up: `import hf_numbers`, and the command's help and usage errors, load none of the libraries that only
some commands use (they are imported by the functions that need them); the console script `hf-numbers` answers
its help and its unknown commands and flags without importing hf_numbers or transformers at all (its launcher,
`hf_numbers_launcher`, holds the names it needs, which are the commands' own). Checked in a fresh interpreter."""

from __future__ import annotations

import ast
import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hf_numbers_launcher
from hf_numbers.cli import COMMANDS, PARSERS, main
from hf_numbers.modeling import encoding_options
from hf_numbers_launcher.launch import main as launch

REPO = Path(__file__).parents[1]
CHECKOUT_ENV = dict(os.environ, PYTHONPATH=str(REPO))  # this checkout's hf_numbers and hf_numbers_launcher

LATE = ("datasets", "matplotlib", "peft", "evaluate", "pandas")
"""A task's DatasetDict (and pandas under it), a plot, LoRA adapters, the ``evaluate`` modules."""

HELP_AND_USAGE = [["--help"], [], ["nosuch"], ["train", "--help"], ["train", "--max_step", "3"],
                  ["make-data", "--help"], ["evaluate", "--help"], ["card", "--help"], ["demo", "--help"]]  # fmt: skip

SCRIPT = """
import contextlib, io, json, sys
late = sys.argv[1].split(",")
import hf_numbers
loaded = {"import hf_numbers": [name for name in late if name in sys.modules]}
from hf_numbers.cli import main
for argv in json.loads(sys.argv[2]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
    loaded[" ".join(["hf-numbers", *argv])] = [name for name in late if name in sys.modules]
print(json.dumps(loaded))
"""

HEAVY = ("hf_numbers", "torch", "transformers", "transformers.modeling_utils")
"""What `import hf_numbers` loads: the package, torch, transformers and the model classes it registers."""

AT_ONCE = {  # arguments of hf-numbers: (exit code, a line it prints)
    "--help": (0, "commands: make-data, train, evaluate, card, demo"),
    "": (2, "commands: make-data, train, evaluate, card, demo"),
    "nosuch": (2, "commands: make-data, train, evaluate, card, demo"),
    "train --max_step 3": (2, "hf-numbers train: error: unrecognized arguments: --max_step"),
    "train --task lookup --cpu true": (2, "unrecognized arguments: --cpu (--cpu is now --use_cpu)"),
    "demo --max-step=3": (2, "hf-numbers demo: error: unrecognized arguments: --max-step=3"),
    "make-data --task lookup --bogus": (2, "hf-numbers make-data: error: unrecognized arguments: --bogus"),
    "evaluate --checkpoint runs/x/final --bogus 1": (2, "hf-numbers evaluate: error: unrecognized arguments: --bogus"),
    "card runs/x --bogus": (2, "hf-numbers card: error: unrecognized arguments: --bogus"),
}
"""The console script's help and the usage errors it tells from names alone."""

CONSOLE_SCRIPT = """
import contextlib, importlib, io, json, sys
(module, _, function), calls, heavy = sys.argv[1].partition(":"), json.loads(sys.argv[2]), json.loads(sys.argv[3])
entry_point = getattr(importlib.import_module(module), function)
answers = {}
for arguments in calls:
    sys.argv = ["hf-numbers", *arguments.split()]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            entry_point()
            code = 0
        except SystemExit as exit:
            code = exit.code
    answers[arguments] = [code, out.getvalue() + err.getvalue()]
print(json.dumps({"answers": answers, "loaded": [name for name in heavy if name in sys.modules]}))
"""


def console_script_entry_point() -> str:
    """What setup.cfg makes the ``hf-numbers`` console script run (``module:function``)."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    scripts = dict(line.split(" = ") for line in config["options.entry_points"]["console_scripts"].split("\n") if line)
    return scripts["hf-numbers"]


def test_importing_the_package_and_the_commands_help_and_usage_errors_load_no_late_library() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(LATE), json.dumps(HELP_AND_USAGE)],
                            capture_output=True, text=True, env=CHECKOUT_ENV, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert len(loaded) == 1 + len(HELP_AND_USAGE)
    assert loaded == dict.fromkeys(loaded, []), loaded


def test_the_console_script_answers_its_help_and_usage_errors_without_importing_hf_numbers_or_transformers() -> None:
    command = [sys.executable, "-c", CONSOLE_SCRIPT, console_script_entry_point(), json.dumps(list(AT_ONCE)),
               json.dumps(HEAVY)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, env=CHECKOUT_ENV, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["loaded"] == [], f"the console script's help and usage errors imported {report['loaded']}"
    for arguments, (code, line) in AT_ONCE.items():
        answer_code, text = report["answers"][arguments]
        assert (answer_code, line in text) == (code, True), (arguments, answer_code, text)
        assert "Traceback" not in text


def option_names(parser) -> tuple[str, ...]:
    """A parser's option names as the launcher holds them: no ``-h``/``--help``, ``-`` read as ``_``, each once."""
    flags = (flag for action in parser._actions for flag in action.option_strings if flag not in ("-h", "--help"))
    return tuple(dict.fromkeys(flag.lstrip("-").replace("-", "_") for flag in flags))


def test_the_launchers_names_are_the_commands_and_registries_own() -> None:
    assert hf_numbers_launcher.COMMANDS == tuple(COMMANDS), "hf_numbers_launcher.COMMANDS must be hf_numbers.cli's"
    registered = tuple(option.name for option in encoding_options())
    assert sorted(hf_numbers_launcher.encoding_option_names()) == sorted(registered)
    options = {command: option_names(PARSERS[command]()) for command in COMMANDS}
    options = {command: tuple(name for name in names if name not in registered) for command, names in options.items()}
    launcher = {command: sorted(names) for command, names in hf_numbers_launcher.OPTIONS.items()}
    assert launcher == {command: sorted(names) for command, names in options.items()}, (
        f"hf_numbers_launcher.OPTIONS must be the options of the commands' parsers, less the encodings': {options}")


def test_the_launchers_declarations_import_nothing_of_hf_numbers() -> None:
    """hf_numbers reads the launcher's declarations; only ``launch`` (the console script) imports ``hf_numbers.cli``,
    inside its function: no import circle between the two packages."""
    for path in sorted((REPO / "hf_numbers_launcher").glob("*.py")):
        nodes = ast.walk(ast.parse(path.read_text()))
        imported = [node for node in nodes if isinstance(node, ast.ImportFrom | ast.Import)]
        names = [alias.name for node in imported for alias in node.names if isinstance(node, ast.Import)]
        names += [node.module or "" for node in imported if isinstance(node, ast.ImportFrom)]
        allowed = {"hf_numbers.cli"} if path.name == "launch.py" else set()
        assert {name for name in names if name.split(".")[0] == "hf_numbers"} <= allowed, path.name


@pytest.mark.parametrize("command", COMMANDS)
def test_the_launcher_lets_every_option_of_a_command_through_in_every_spelling(command: str) -> None:
    parser = PARSERS[command]()
    flags = [flag for action in parser._actions for flag in action.option_strings]
    spellings = [[flag, "1"] for flag in flags] + [[f"{flag}=1"] for flag in flags if flag.startswith("--")]
    assert [argv for argv in spellings if hf_numbers_launcher.unknown_flags(command, argv)] == []
    flag = next(flag for action in parser._actions if action.nargs != 0 for flag in action.option_strings)
    values = [flag, "-1", flag, "-.5", flag, "-1e-3", flag, "a=-b c", "-", "--", "--not-a-flag"]  # values, not flags
    assert hf_numbers_launcher.unknown_flags(command, values) == []


@pytest.mark.parametrize("arguments", [arguments for arguments in AT_ONCE if arguments.split()[:1] != ["--help"]])
def test_what_the_launcher_refuses_the_command_refuses_too(arguments: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(arguments.split())
    assert exit_info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_command_with_a_help_flag_shows_the_help_even_beside_an_unknown_flag(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        launch(["card", "--bogus", "--help"])
    assert exit_info.value.code == 0 and "usage: hf-numbers card" in capsys.readouterr().out


def test_the_launcher_runs_a_command_through_hf_numbers_cli(tmp_path: Path, capsys) -> None:
    launch(["make-data", "--task", "lookup", "--output", str(tmp_path / "lookup"),
                              "--train_size", "8", "--eval_size", "4"])  # fmt: skip
    assert f"-> {tmp_path / 'lookup'}" in capsys.readouterr().out
    assert (tmp_path / "lookup").is_dir()
