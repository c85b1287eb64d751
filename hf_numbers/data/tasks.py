"""Registry of the papers' tasks: build any of them by name, and fit its number scaler.

===================  ===========================================  ==========================================
name                 source                                       splits
===================  ===========================================  ==========================================
``multiplication``   xVal §3.1, 3/4/5-digit multiplication        train, validation, test
``multi_operand``    xVal §3.1, binary trees of + - * (2-4 ops)   train, validation, test
``fone_arithmetic``  FoNE, int / decimal add, subtract, multiply  train, validation, test
``lookup``           xVal appendix B.6, number look-up            train, validation, test, test_ood
``orbits``           xVal §3.3 / B.2, REBOUND planetary orbits    train, validation, test, test_ood_a1,
                                                                  test_ood_stepsize
``temperature``      xVal §3.2 style, vega_datasets hourly temps  train, validation, test
===================  ===========================================  ==========================================

Every split is a ``datasets.Dataset`` with the columns ``text``, ``prompt``, ``answer``,
``answer_text``, ``numbers`` and ``answer_index`` (see ``hf_numbers.data._common``) plus
task-specific columns documented on each builder.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from datasets import DatasetDict

from .arithmetic import fone_arithmetic, multi_operand, multiplication
from .lookup import lookup
from .orbits import orbits
from .scaler import NumberScaler
from .temperature import temperature


@dataclass(frozen=True)
class TaskSpec:
    """A task: its builder and the number scaling that suits xVal-style encodings.

    ``scaling`` holds the keyword arguments of :class:`NumberScaler`. Encodings that read
    digits (FoNE, float bits) want the raw values: use ``NumberScaler("identity")`` for them.

    Example:
        >>> TASKS["lookup"].scaling
        {'kind': 'identity'}
    """

    builder: Callable[..., DatasetDict]
    scaling: Mapping[str, Any] = field(default_factory=lambda: {"kind": "identity"})


TASKS: dict[str, TaskSpec] = {
    # Products and expression values span many orders of magnitude: signed log, then into [-1, 1].
    "multiplication": TaskSpec(multiplication, {"kind": "maxabs", "log": True}),
    "multi_operand": TaskSpec(multi_operand, {"kind": "maxabs", "log": True}),
    "fone_arithmetic": TaskSpec(fone_arithmetic, {"kind": "maxabs", "log": True}),
    # Values already in [-3, 3], as in xVal.
    "lookup": TaskSpec(lookup, {"kind": "identity"}),
    # The text is already normalised as xVal did (masses x 1e5, eccentricities x 20).
    "orbits": TaskSpec(orbits, {"kind": "identity"}),
    # Degrees Fahrenheit: standardise with the training split's mean and deviation.
    "temperature": TaskSpec(temperature, {"kind": "standard"}),
}


def _spec(name: str) -> TaskSpec:
    if name not in TASKS:
        raise ValueError(f"task {name!r} is unknown; allowed: {', '.join(TASKS)}")
    return TASKS[name]


def make_task(name: str, **options: Any) -> DatasetDict:
    """Build the task ``name`` with the builder's keyword ``options`` (sizes, seed, ranges).

    Example:
        >>> dd = make_task("multiplication", digits=4, train_size=8, validation_size=2, test_size=2, seed=1)
        >>> sorted(dd)
        ['test', 'train', 'validation']
    """
    builder = _spec(name).builder
    allowed = list(inspect.signature(builder).parameters)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"task {name!r} has no option {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    return builder(**options)


def task_scaler(name: str, dataset: DatasetDict, split: str = "train") -> NumberScaler:
    """The task's recommended :class:`NumberScaler`, fitted on every number of ``dataset[split]``.

    Example:
        >>> dd = make_task("temperature", cities=["sf"], stride=24)
        >>> scaler = task_scaler("temperature", dd)
        >>> abs(scaler.transform(scaler.shift)) < 1e-12
        True
    """
    if split not in dataset:
        raise ValueError(f"split {split!r} is not in the dataset; allowed: {', '.join(dataset)}")
    return NumberScaler(**_spec(name).scaling).fit_dataset(dataset[split])
