"""The numbers of a dataset column, flat: what a number scaling is fitted on.

Example:
    >>> from hf_numbers.modeling import NumberScaling
    >>> NumberScaling.fit(column_numbers({"numbers": [[1.5, -2.0], [4.0]]}), "maxabs").scale
    4.0
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..modeling.number_scaling import finite_values


def column_numbers(
    dataset: Any, column: str = "numbers", extract_numbers: Callable[[str], Iterable[Any]] | None = None
) -> np.ndarray:
    """Every number of a ``datasets.Dataset`` column (or of any mapping of column name to rows) of numbers or
    lists of numbers, as one float64 array; with ``extract_numbers``, of a text column, through
    ``extract_numbers(text)`` giving floats or ``(start, end, value)`` spans (as ``find_numbers`` does).

    ``ValueError`` for a missing column, a non-text column with ``extract_numbers``, and a value that is not a
    finite number.

    Example:
        >>> column_numbers({"text": ["x=1.5, y=-2"]}, "text", lambda t: [float(p.split("=")[1]) for p in t.split(", ")])
        array([ 1.5, -2. ])
    """
    columns = list(dataset.column_names if hasattr(dataset, "column_names") else dataset)
    if column not in columns:
        raise ValueError(f"column {column!r} is not in the dataset; columns: {', '.join(columns)}")
    cells = dataset[column]
    if extract_numbers is None:
        return finite_values(cells, f"column {column!r}")
    values = []
    for text in cells:
        if not isinstance(text, str):
            raise ValueError(f"extract_numbers needs a text column; column {column!r} holds {type(text).__name__}")
        values.extend(item[2] if isinstance(item, tuple) else item for item in extract_numbers(text))
    return finite_values(values, f"the numbers of column {column!r}")
