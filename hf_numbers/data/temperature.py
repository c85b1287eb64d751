"""Real hourly temperatures from the ``vega_datasets`` package (offline), as xVal-style JSON samples.

Each example is a window of hours of one city, its last value the answer; splits are blocks of days,
so no window is shared across splits. The format and the splits: docs/training.md, "Tasks".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .formatting import format_fixed
from .splits import IN_DISTRIBUTION_SPLITS, make_dataset_dict, shuffled_split, split_rngs
from .text_builder import TextBuilder
from .validation import check_fractions, check_int, check_seed

if TYPE_CHECKING:
    import pandas as pd
    from datasets import DatasetDict

# Latitude and longitude (degrees) of the two cities whose series vega_datasets ships.
CITIES = {
    "seattle": ("seattle_temps", (47.61, -122.33)),
    "sf": ("sf_temps", (37.77, -122.42)),
}


def load_city_temperatures(city: str) -> pd.DataFrame:
    """The hourly series of ``city`` (``"seattle"`` or ``"sf"``; ``vega_datasets``) with columns ``date``, ``temp``.

    Example:
        >>> df = load_city_temperatures("seattle")
        >>> list(df.columns), len(df)
        (['date', 'temp'], 8759)
    """
    if city not in CITIES:
        raise ValueError(f"city={city!r} is unknown; allowed: {', '.join(CITIES)}")
    from vega_datasets import local_data

    frame = getattr(local_data, CITIES[city][0])()
    return frame[["date", "temp"]].sort_values("date").reset_index(drop=True)


def temperature(
    cities: Sequence[str] = ("seattle", "sf"),
    window: int = 24,
    stride: int = 6,
    block_days: int = 7,
    split_fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    seed: int = 0,
) -> DatasetDict:
    """Windows of real hourly temperatures; predict the window's last value.

    ``window`` (2 to 168) values per example, one window every ``stride`` hours; ``block_days`` (at
    least ``window`` hours) is the length of the blocks assigned to splits in the ``(train, validation,
    test)`` shares ``split_fractions``. Sizes follow from the data. Extra columns: ``city``, ``start``
    (ISO time of the first hour), ``start_index`` (its row in :func:`load_city_temperatures`), ``values``.

    Example:
        >>> dd = temperature(cities=["sf"], window=12, stride=24)
        >>> row = dd["train"][0]
        >>> row["answer"] == row["values"][-1] and len(row["values"]) == 12
        True
    """
    if isinstance(cities, str) or not cities or any(c not in CITIES for c in cities):
        raise ValueError(f"cities must be a non-empty list of {', '.join(CITIES)}, got {cities!r}")
    if len(set(cities)) != len(cities):
        raise ValueError(f"cities must not repeat a city, got {cities!r}")
    window = check_int("window", window, 2, 168)
    stride = check_int("stride", stride, 1)
    block_days = check_int("block_days", block_days, max(1, -(-window // 24)), 366)
    fractions = check_fractions(split_fractions)
    seed = check_seed(seed)

    import pandas as pd

    block_split = _assign_blocks(366 // block_days + 1, fractions, seed)
    rows: dict[str, list[dict[str, Any]]] = {split: [] for split in IN_DISTRIBUTION_SPLITS}
    for city in cities:
        frame = load_city_temperatures(city)
        hours = ((frame["date"] - frame["date"].iloc[0]) / pd.Timedelta(hours=1)).to_numpy()
        block = (hours // (24 * block_days)).astype(int)
        # A new run starts at each gap in the series and at each block boundary.
        breaks = np.flatnonzero((np.diff(hours) != 1) | (np.diff(block) != 0)) + 1
        for run in np.split(np.arange(len(frame)), breaks):
            split = block_split[block[run[0]]]
            for offset in range(0, len(run) - window + 1, stride):
                start = int(run[offset])
                rows[split].append(_row(frame, city, start, window))
    return make_dataset_dict(
        rows,
        {
            "city": "string",
            "start": "string",
            "start_index": "int32",
            "values": ["float64"],
        },
    )


def _assign_blocks(num_blocks: int, fractions: tuple[float, float, float], seed: int) -> list[str]:
    """Split name of each block: a seeded shuffle, cut in proportion to ``fractions``."""
    rng = split_rngs(seed, "temperature", ["blocks"])["blocks"]
    names = np.empty(num_blocks, dtype=object)
    for split, cut in shuffled_split(num_blocks, fractions, rng).items():
        names[cut] = split
    return list(names)


def _row(frame: pd.DataFrame, city: str, start: int, window: int) -> dict[str, Any]:
    values = frame["temp"].iloc[start : start + window].tolist()
    first = frame["date"].iloc[start]
    builder = TextBuilder()
    builder.text('{"description":{"coords":[')
    lat, lon = CITIES[city][1]
    builder.number(format_fixed(lat, 2))
    builder.text(",")
    builder.number(format_fixed(lon, 2))
    builder.text('],"start":[')
    for i, part in enumerate((first.month, first.day, first.hour)):
        builder.text("," if i else "")
        builder.number(str(part))
    builder.text(']},"data":[')
    for i, value in enumerate(values):
        builder.text("," if i else "")
        builder.number(format_fixed(value, 1), answer=i == window - 1)
    builder.text("]}")
    return builder.build(
        city=city, start=first.isoformat(), start_index=start, values=[float(format_fixed(v, 1)) for v in values]
    )
