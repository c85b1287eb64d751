"""How the ``hf-numbers`` command's help reads: plain text, options in groups, one default each.

The help texts of :class:`~hf_numbers.training.NumberTrainingArguments` and of the commands are the
docs' texts; :func:`plain_text` takes their rST and Markdown markup off, and :class:`PlainHelpFormatter`
states each option's default once: the one its help gives (``Default: the task's recommendation, else
4000``), else its value (``Default: 200``). ``hf-numbers train --help`` lists the options in the groups
of :data:`TRAIN_OPTION_GROUPS` (those of ``transformers.TrainingArguments``' docs, and the encodings'
options); an option in none of them is listed under "other options".
"""

from __future__ import annotations

import argparse
import copy
import re
from dataclasses import Field
from typing import Any

from transformers import HfArgumentParser
from transformers.hf_argparser import string_to_bool

from hf_numbers_launcher import OTHER_OPTIONS, TRAIN_OPTION_GROUPS

from .modeling import encoding_options

_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_MARKUP = re.compile(r"\*\*(.+?)\*\*|``(.+?)``|`([^`]+)`")
_METAVARS = {int: "INT", float: "FLOAT", string_to_bool: "{true,false}"}


def plain_text(text: str) -> str:
    """``text`` without rST roles, literals and Markdown code or bold.

    Example:
        >>> plain_text("``train`` takes :class:`~hf_numbers.training.NumberTrainingArguments` (`--help`)")
        'train takes NumberTrainingArguments (--help)'
    """
    text = _ROLE.sub(lambda match: match[2].rsplit(".", 1)[-1] if match[1] else match[2], text)
    return _MARKUP.sub(lambda match: next(group for group in match.groups() if group is not None), text)


def _default_words(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


class PlainHelpFormatter(argparse.HelpFormatter):
    """Plain help: no markup, each option's default once, an option named once (``--max_steps INT``)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = plain_text(action.help or "")
        stated = "default" in text.lower() or action.default in (None, argparse.SUPPRESS) or action.nargs == 0
        if stated or not action.option_strings:  # said already, nothing to say, or a flag without a value
            return text
        return f"{text.rstrip()} Default: {_default_words(action.default)}.".replace("%", "%%").strip()

    def _get_default_metavar_for_optional(self, action: argparse.Action) -> str:
        return _METAVARS.get(action.type, action.dest.upper())

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if len(action.option_strings) > 1 and action.option_strings[0].startswith("--"):  # not the --long-form alias
            action = copy.copy(action)
            action.option_strings = action.option_strings[:1]
        return super()._format_action_invocation(action)


class PlainHelpParser(argparse.ArgumentParser):
    """An ``argparse`` parser with plain help (:class:`PlainHelpFormatter`) and no abbreviated flags."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{"formatter_class": PlainHelpFormatter, "allow_abbrev": False, **kwargs})

    def format_help(self) -> str:
        return plain_text(super().format_help())


class GroupedArgumentParser(PlainHelpParser, HfArgumentParser):
    """``HfArgumentParser`` of one dataclass with plain help, its fields in :data:`TRAIN_OPTION_GROUPS`."""

    def __init__(self, dataclass_type: type, **kwargs: Any) -> None:
        options = tuple(option.name for option in encoding_options())
        self._group_of = {name: title for title, names in TRAIN_OPTION_GROUPS.items() for name in names or options}
        super().__init__(dataclass_type, **kwargs)
        order = [*TRAIN_OPTION_GROUPS, OTHER_OPTIONS]
        self._action_groups.sort(key=lambda group: order.index(group.title) if group.title in order else -1)

    def _parse_dataclass_field(self, parser: argparse.ArgumentParser, field: Field) -> None:
        title = self._group_of.get(field.name, OTHER_OPTIONS)
        group = next((g for g in self._action_groups if g.title == title), None) or self.add_argument_group(title)
        HfArgumentParser._parse_dataclass_field(group, field)
