"""The command's help reads like the docs: plain text, the options of train in groups, one default each."""

from __future__ import annotations

import re
from dataclasses import MISSING, fields

import pytest

import hf_numbers.cli
from hf_numbers.cli import COMMANDS
from hf_numbers.cli_help import plain_text
from hf_numbers.training import NumberTrainingArguments
from hf_numbers_launcher import OTHER_OPTIONS, TRAIN_OPTION_GROUPS
from hf_numbers_launcher.launch import main as launch

MARKUP = re.compile(r"`|\*\*|:(?:class|func|meth|mod|data|attr|obj):")
"""rST roles and literals, Markdown code and bold."""


def help_text(argv: list[str], capsys: pytest.CaptureFixture[str], main=launch) -> str:
    """What ``hf-numbers <argv>`` prints (the console script's entry point, or ``main``) and exits 0 with."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def option_entries(text: str) -> dict[str, str]:
    """Each option's entry (its flag line and the indented lines of its help), by its first flag."""
    entries: dict[str, str] = {}
    flag = None
    for line in text.splitlines():
        if match := re.match(r"  (-[-\w]+)", line):
            flag = match[1]
            entries[flag] = line
        elif flag and line.startswith("   "):
            entries[flag] += " " + line.strip()
        else:
            flag = None
    return entries


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_is_plain_text_with_at_most_one_default_per_option(command: str | None, capsys) -> None:
    text = help_text([command, "--help"] if command else ["--help"], capsys)
    assert not MARKUP.search(text), MARKUP.search(text)
    assert "(default: None)" not in text
    entries = option_entries(text)
    assert command is None or entries
    repeated = {flag: entry for flag, entry in entries.items() if len(re.findall(r"\bdefault\b", entry, re.I)) > 1}
    assert not repeated


def test_the_help_is_the_same_through_the_launcher_and_python_m_hf_numbers_cli(capsys) -> None:
    assert help_text(["--help"], capsys) == help_text(["--help"], capsys, main=hf_numbers.cli.main)
    assert help_text(["card", "--help"], capsys) == help_text(["card", "--help"], capsys, main=hf_numbers.cli.main)


def test_train_help_groups_every_option_and_states_every_set_default_once(capsys) -> None:
    text = help_text(["train", "--help"], capsys)
    titles = [line[:-1] for line in text.splitlines() if re.fullmatch(r"\S.*:", line)]
    assert titles == ["options", *TRAIN_OPTION_GROUPS], f"a field outside TRAIN_OPTION_GROUPS? {titles}"
    assert OTHER_OPTIONS not in titles
    entries = option_entries(text)
    for field in fields(NumberTrainingArguments):
        entry = entries[f"--{field.name}"]
        if field.default is not None or field.default_factory is not MISSING:
            assert len(re.findall(r"\bdefault\b", entry, re.I)) == 1, entry


def test_plain_text_drops_roles_literals_and_markdown() -> None:
    assert plain_text(":class:`~hf_numbers.training.NumberTrainingArguments`, :func:`hf_numbers.cli.main`") == (
        "NumberTrainingArguments, hf_numbers.cli.main"
    )
    assert plain_text("``train`` and `hf-numbers card` and **bold**, 12.5% kept") == (
        "train and hf-numbers card and bold, 12.5% kept"
    )
