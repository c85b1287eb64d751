"""A throw-away number encoding, added the way docs/design.md's "Adding an encoding" says: a pytest plugin.

``python -m pytest -p throwaway_encoding ...`` (with ``tests/`` on ``PYTHONPATH``) runs the tests with one more
encoding in the registry, ``throwaway``: xVal on the value times ``throwaway_gain``, its one option. Nothing
else changes, so the matrix (``tests/model_helpers.py``) and every test that asks the registry take it up.

The configs get every registered encoding's options as fields when their classes are created
(``add_option_fields`` on ``NumberConfigFields``), so an encoding registered after ``configuration_number``
has run would have no config field (and every config validates every registered encoding's options). So the
registry line must be there first: the plugin loads before ``hf_numbers`` is imported and adds the encoding the
moment ``encoding_registry`` has run, where its line in the registry's tuple would put it (after the number
encodings). That takes a fresh interpreter, so ``tests/test_tables.py`` runs the matrix in a subprocess.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import math
import sys
from types import ModuleType
from typing import Any

NAME = "throwaway"
"""The throw-away encoding's ``number_encoding`` value (and the test ids that run it)."""
OPTION = "throwaway_gain"
"""Its one option: a config field like every option."""
REGISTRY_MODULE = "hf_numbers.modeling.encoding_registry"


def register(registry: ModuleType) -> None:
    """Add the throw-away encoding to ``registry`` (the freshly run ``encoding_registry`` module)."""
    from hf_numbers.modeling.encoding_base import EncodingOption
    from hf_numbers.modeling.encoding_xval import XValEncoding

    class ThrowawayEncoding(XValEncoding):
        """xVal of ``throwaway_gain`` x the value: a subclass, another name and another option."""

        name = NAME
        options = (EncodingOption(OPTION, float, 0.5, "factor of the value before xVal, a finite number > 0"),)

        @classmethod
        def validate_options(cls, config: Any) -> None:
            gain = getattr(config, OPTION)
            if not (isinstance(gain, (int, float)) and math.isfinite(gain) and gain > 0):
                raise ValueError(f"{OPTION} must be a finite number > 0, got {gain!r}")

        def __init__(self, config: Any):
            super().__init__(config)
            self.gain = float(getattr(config, OPTION))

        def _embed_values(self, token_embeds, values):
            return super()._embed_values(token_embeds, values * self.gain)

    entries = list(registry.NUMBER_ENCODINGS_REGISTRY.items())  # its line: after the number encodings' lines
    after = max(index for index, (_, entry) in enumerate(entries) if entry.has_number_module) + 1
    entries.insert(after, (NAME, ThrowawayEncoding))
    registry.NUMBER_ENCODINGS_REGISTRY.clear()
    registry.NUMBER_ENCODINGS_REGISTRY.update(entries)
    registry.NUMBER_ENCODINGS = tuple(registry.NUMBER_ENCODINGS_REGISTRY)


class _RegisterWhenTheRegistryRuns(importlib.abc.MetaPathFinder):
    """Finds ``encoding_registry`` as usual and calls :func:`register` right after the module has run."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != REGISTRY_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        run_module = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            register(module)

        spec.loader.exec_module = exec_module
        return spec


def pytest_load_initial_conftests(early_config: Any, parser: Any, args: list[str]) -> None:
    """pytest's hook before the conftest files (which import ``hf_numbers``) load: plugins given with ``-p`` only."""
    if REGISTRY_MODULE in sys.modules:
        raise RuntimeError(f"{__name__} must be loaded before hf_numbers is imported (pytest -p {__name__})")
    sys.meta_path.insert(0, _RegisterWhenTheRegistryRuns())
