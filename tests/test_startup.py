"""Start-up: `import hf_numbers`, and the command's help and usage errors, load none of the libraries that only
some commands use (they are imported by the functions that need them); checked in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


def test_importing_the_package_and_the_commands_help_and_usage_errors_load_no_late_library() -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1]))  # this checkout's hf_numbers
    result = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(LATE), json.dumps(HELP_AND_USAGE)],
                            capture_output=True, text=True, env=env, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert len(loaded) == 1 + len(HELP_AND_USAGE)
    assert loaded == dict.fromkeys(loaded, []), loaded
