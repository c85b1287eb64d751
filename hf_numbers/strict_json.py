"""Strict JSON files: no ``NaN`` or ``Infinity`` literals (which ``json.dumps`` writes by default
and strict parsers reject), and no half-written file when a process is killed while writing.

Example:
    >>> to_strict({"loss": float("nan"), "steps": [1, 2.5, float("inf")]})
    {'loss': None, 'steps': [1, 2.5, None]}
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any


def to_strict(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, ±inf) replaced by ``None`` (JSON ``null``), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: to_strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_strict(item) for item in value]
    return value


def write_json(path: str | Path, value: Any, indent: int | None = 1) -> None:
    """Write ``value`` as strict JSON (non-finite floats become ``null``), atomically.

    The text goes to ``<path>.tmp`` first and replaces ``path`` in one rename.

    Example:
        >>> write_json("/tmp/hf_numbers_example.json", {"loss": float("nan")})
        >>> open("/tmp/hf_numbers_example.json").read()
        '{\\n "loss": null\\n}'
    """
    path = Path(path)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(to_strict(value), indent=indent, allow_nan=False))
    os.replace(partial, path)
