"""The splits of a task: one seeded random stream per split, draws kept unique across splits, and
the ``DatasetDict`` they are assembled into, with the columns every example carries (:data:`CORE_FEATURES`,
or :data:`WORD_FEATURES` for a word answer; their meaning: docs/training.md, "Tasks"). Columns are written as
``datasets`` type names, so that the task generators import ``datasets`` only when they build a ``DatasetDict``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from datasets import DatasetDict

T = TypeVar("T")

IN_DISTRIBUTION_SPLITS = ("train", "validation", "test")

CORE_FEATURES = {
    "text": "string",
    "prompt": "string",
    "answer": "float64",
    "answer_text": "string",
    "numbers": ["float64"],
    "answer_index": "int32",
}
"""The core columns of a task whose answer is a number."""

WORD_FEATURES = {
    "text": "string",
    "numbers": ["float64"],
    "word": "string",
    "word_start": "int32",
}
"""The core columns of a task whose answer is a word (``numeracy_words``)."""


def shuffled_split(
    count: int, fractions: tuple[float, float, float], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Indices ``0 .. count-1`` in a random order, cut in proportion to ``fractions`` (train, validation, test).

    Example:
        >>> cuts = shuffled_split(10, (0.8, 0.1, 0.1), np.random.default_rng(0))
        >>> [len(cuts[split]) for split in IN_DISTRIBUTION_SPLITS]
        [8, 1, 1]
    """
    order = rng.permutation(count)
    bounds = np.round(np.cumsum(fractions) * count).astype(int)
    return dict(zip(IN_DISTRIBUTION_SPLITS, np.split(order, bounds[:-1])))


def split_rngs(seed: int, task: str, names: Sequence[str]) -> dict[str, np.random.Generator]:
    """One reproducible random stream per split, from the seed, the task and the split's name only.

    Example:
        >>> rngs = split_rngs(0, "lookup", ["train", "test"])
        >>> bool(rngs["test"].integers(100) == split_rngs(0, "lookup", ["test"])["test"].integers(100))
        True
    """
    task_key = [ord(c) for c in task]
    return {
        name: np.random.default_rng(np.random.SeedSequence([seed, *task_key, 0, *(ord(c) for c in name)]))
        for name in names
    }


def draw_unique(
    sizes: Mapping[str, int],
    rngs: Mapping[str, np.random.Generator],
    sample: Callable[[np.random.Generator, str], T],
    key: Callable[[T], Hashable],
    max_attempts_per_example: int = 100,
) -> dict[str, list[T]]:
    """Draw ``sizes[split]`` examples per split with no key repeated within or across splits.

    Splits are filled in the order of ``sizes``: list held-out and test splits first, so that they do not
    depend on the training split's size. ``ValueError`` when the task has too few distinct examples.

    Example:
        >>> import numpy as np
        >>> rngs = {"test": np.random.default_rng(0), "train": np.random.default_rng(1)}
        >>> out = draw_unique({"test": 3, "train": 5}, rngs, lambda r, s: int(r.integers(20)), lambda x: x)
        >>> len(set(out["test"]) | set(out["train"]))
        8
    """
    seen: set[Hashable] = set()
    drawn: dict[str, list[T]] = {}
    for split, size in sizes.items():
        rng = rngs[split]
        items: list[T] = []
        attempts = 0
        limit = max_attempts_per_example * size + 1000
        while len(items) < size:
            attempts += 1
            if attempts > limit:
                raise ValueError(
                    f"could not draw {size} distinct examples for split {split!r} after {limit} attempts; "
                    "the task's space of distinct examples is too small for the requested sizes: "
                    "reduce the split sizes or widen the task's ranges"
                )
            item = sample(rng, split)
            item_key = key(item)
            if item_key in seen:
                continue
            seen.add(item_key)
            items.append(item)
        drawn[split] = items
    return drawn


def dataset_feature(spec: Any) -> Any:
    """The ``datasets`` feature a column spec names: a type name is a ``Value``, ``[spec]`` a ``List`` of it.

    Example:
        >>> dataset_feature([["float64"]])
        List(List(Value('float64')))
    """
    from datasets import List, Value

    if isinstance(spec, str):
        return Value(spec)
    if isinstance(spec, list) and len(spec) == 1:
        return List(dataset_feature(spec[0]))
    raise ValueError(f"a column is a datasets type name such as 'float64', or [spec] for a list; got {spec!r}")


def make_dataset_dict(
    rows: Mapping[str, list[dict[str, Any]]],
    extra_features: Mapping[str, Any],
    core: Mapping[str, Any] = CORE_FEATURES,
) -> DatasetDict:
    """Assemble a ``DatasetDict`` with ``train``/``validation``/``test`` first, then other splits.

    ``core`` is :data:`CORE_FEATURES` (a number answer) or :data:`WORD_FEATURES` (a word answer);
    ``extra_features`` are written like them (:func:`dataset_feature`).

    Example:
        >>> from hf_numbers.data.text_builder import TextBuilder
        >>> b = TextBuilder(); b.text("x="); b.number("1", answer=True)
        >>> dd = make_dataset_dict({"train": [b.build(k=1)]}, {"k": "int32"})
        >>> dd["train"][0]["answer"]
        1.0
    """
    from datasets import Dataset, DatasetDict, Features

    features = Features({name: dataset_feature(spec) for name, spec in {**core, **extra_features}.items()})
    ordered = [s for s in IN_DISTRIBUTION_SPLITS if s in rows] + sorted(
        s for s in rows if s not in IN_DISTRIBUTION_SPLITS
    )
    return DatasetDict(
        {
            split: Dataset.from_dict({name: [row[name] for row in rows[split]] for name in features}, features=features)
            for split in ordered
        }
    )
