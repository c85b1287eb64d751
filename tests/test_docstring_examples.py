"""Every docstring example of the package runs and prints what it shows (``doctest``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import hf_numbers

MODULES = [*sorted(info.name for info in pkgutil.walk_packages(hf_numbers.__path__, "hf_numbers.")),
           "hf_numbers_launcher", "hf_numbers_launcher.launch"]  # the console script's entry point  # fmt: skip


@pytest.mark.parametrize("module_name", MODULES)
def test_the_docstring_examples_of_every_module_run_as_written(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {module_name} failed (printed above)"
