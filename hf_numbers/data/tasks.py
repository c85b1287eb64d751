"""Registry of the papers' tasks (:data:`TASKS`): build any of them by name, and fit its number scaler.

What each task is, its splits and its columns: docs/training.md, "Tasks".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..modeling.number_scaling import NumberScaling
from .arithmetic import division, fone_arithmetic, multi_operand, multiplication
from .column_numbers import column_numbers
from .comparison import interval, minmax
from .lookup import lookup
from .numeracy import numeracy_words
from .orbits import orbits
from .temperature import temperature

if TYPE_CHECKING:
    from datasets import DatasetDict

TASK_FILE = "hf_numbers_task.json"
"""The file ``hf-numbers make-data`` writes next to a saved task, recording the task's name."""


@dataclass(frozen=True)
class TaskSpec:
    """A task: its builder, the number scaling that suits xVal-style encodings, and its training recipe.

    ``scaling`` holds the keyword arguments of ``NumberScaling.fit`` (encodings that read digits
    or bits see raw values instead). ``training_defaults`` are the task's recommended
    ``NumberTrainingArguments`` values; explicit arguments win.

    Example:
        >>> TASKS["lookup"].scaling
        {'kind': 'identity'}
        >>> TASKS["fone_arithmetic"].training_defaults["completion_only"]
        True
    """

    builder: Callable[..., DatasetDict]
    scaling: Mapping[str, Any] = field(default_factory=lambda: {"kind": "identity"})
    training_defaults: Mapping[str, Any] = field(default_factory=dict)


# Prompt/answer tasks train on the answer only (the prompt's operands are random: learning to predict
# them is noise that kept FoNE at 0% exact match on addition).
_ANSWER_ONLY = {"completion_only": True}
# FoNE's 6-digit addition (Zhou et al., Fig. 2: 6,400 examples suffice for >= 99%), on the Llama backbone
# as in the paper; GPT-2 at this budget failed on some data seeds (docs/results/fone.md).
_FONE_RECIPE = {
    **_ANSWER_ONLY,
    "backbone": "llama",
    "train_size": 6400,
    "eval_size": 1000,
    "hidden_size": 256,
    "num_layers": 4,
    "num_heads": 8,
    "max_steps": 2200,  # 99.8/99.9% on tuning draws 0 and 3 in 9.1-9.3 CPU-min (6,000, then 3,500: 14.5 min)
    "per_device_train_batch_size": 64,
    "learning_rate": 1e-3,
    "warmup_steps": 150,
}


TASKS: dict[str, TaskSpec] = {
    # Products and expression values span many orders of magnitude: signed log, then into [-1, 1].
    "multiplication": TaskSpec(multiplication, {"kind": "maxabs", "log": True}, _ANSWER_ONLY),
    "multi_operand": TaskSpec(multi_operand, {"kind": "maxabs", "log": True}, _ANSWER_ONLY),
    "fone_arithmetic": TaskSpec(fone_arithmetic, {"kind": "maxabs", "log": True}, _FONE_RECIPE),
    # Values already in [-3, 3], as in xVal.
    "lookup": TaskSpec(lookup, {"kind": "identity"}, _ANSWER_ONLY),
    # The text is already normalised as xVal did (masses x 1e5, eccentricities x 20).
    "orbits": TaskSpec(orbits, {"kind": "identity"}, {"backbone": "bert"}),
    # Degrees Fahrenheit: standardise with the training split's mean and deviation.
    "temperature": TaskSpec(temperature, {"kind": "standard"}),
    # The floating-point embedding paper's protocol: a masked LM, text tokens masked (15%, numbers stay
    # visible), masked-word metrics. The size and budget suit a frozen all-MiniLM-L6-v2 on a 2-core CPU
    # (docs/results/frozen-bert.md); values span 0.4 to 5140 and carry signs, hence the signed-log scaling for xVal.
    "numeracy_words": TaskSpec(
        numeracy_words,
        {"kind": "maxabs", "log": True},
        {
            "backbone": "bert",
            "text_only": True,
            "mlm_probability": 0.15,
            "max_length": 64,
            "train_size": 4000,
            "eval_size": 300,
            "max_steps": 500,
            "per_device_train_batch_size": 32,
            "learning_rate": 5e-3,  # a frozen trunk: only the head and the number module learn
            "warmup_steps": 50,
        },
    ),
    # BitTokens' simplest tasks (Kreitner, Hager et al.): numbers of several magnitudes, hence the signed log.
    "minmax": TaskSpec(minmax, {"kind": "maxabs", "log": True}, _ANSWER_ONLY),
    "interval": TaskSpec(interval, {"kind": "maxabs", "log": True}, _ANSWER_ONLY),
    "division": TaskSpec(division, {"kind": "maxabs", "log": True}, _ANSWER_ONLY),
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
    check_task_options(name, options)
    return _spec(name).builder(**options)


def check_task_options(name: str, options: Iterable[str]) -> None:
    """``ValueError`` listing the options of task ``name`` when ``options`` names one its builder lacks.

    Example:
        >>> check_task_options("multiplication", ["colour"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: task 'multiplication' has no option colour; allowed: digits, train_size, ...
    """
    allowed = list(inspect.signature(_spec(name).builder).parameters)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"task {name!r} has no option {', '.join(unknown)}; allowed: {', '.join(allowed)}")


def task_scaling(name: str, dataset: DatasetDict, split: str = "train") -> NumberScaling:
    """The task's recommended number scaling, fitted on every number of ``dataset[split]``.

    Example:
        >>> dd = make_task("temperature", cities=["sf"], stride=24)
        >>> scaling = task_scaling("temperature", dd)
        >>> abs(scaling.transform(scaling.shift)) < 1e-12
        True
    """
    if split not in dataset:
        raise ValueError(f"split {split!r} is not in the dataset; allowed: {', '.join(dataset)}")
    return NumberScaling.fit(column_numbers(dataset[split]), **_spec(name).scaling)
