"""The ``hf-numbers`` console script: its help and usage errors from :mod:`hf_numbers_launcher`'s names, the
command from :mod:`hf_numbers.cli`.

Apart from the package's declarations, so that ``hf_numbers.cli`` reads those declarations and only this
module imports ``hf_numbers.cli`` (when a command runs): no import circle.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hf_numbers_launcher import COMMANDS, HELP_FLAGS, RENAMED_IN, flags_of, renamed_hint, unknown_flags, usage


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``hf-numbers`` console script: its help and name errors here, the rest in
    :func:`hf_numbers.cli.main`.

    Example:
        >>> main(["train", "--max_step", "3"])  # doctest: +SKIP
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(usage())
        sys.exit(0 if argv and argv[0] in HELP_FLAGS else 2)
    command, rest = argv[0], argv[1:]
    unknown = unknown_flags(command, rest)
    if unknown and not set(HELP_FLAGS) & set(flags_of(rest)):  # argparse shows the help before it refuses a flag
        hint = renamed_hint(unknown) if command in RENAMED_IN else ""
        print(f"usage: hf-numbers {command} ... ('hf-numbers {command} --help' lists its arguments)\n"
              f"hf-numbers {command}: error: unrecognized arguments: {' '.join(unknown)}{hint}", file=sys.stderr)
        sys.exit(2)
    from hf_numbers.cli import main as run_command  # imports hf_numbers: torch, transformers, the registration

    run_command(argv)
