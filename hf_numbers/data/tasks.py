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
``numeracy_words``   floating-point embedding paper, Table 1:     train, validation, test
                     masked words that follow from the numbers
``minmax``           BitTokens, MinMax: the min or max of a list  train, validation, test
``interval``         BitTokens, Interval: which interval of       train, validation, test
                     sorted bounds holds a number
``division``         BitTokens, division rounded to 6 digits      train, validation, test
===================  ===========================================  ==========================================

Every split is a ``datasets.Dataset`` with the columns ``text``, ``prompt``, ``answer``,
``answer_text``, ``numbers`` and ``answer_index`` (see ``hf_numbers.data.splits``) plus
task-specific columns documented on each builder. ``numeracy_words``, whose answer is a word,
has ``text``, ``numbers``, ``word`` and ``word_start`` instead (``WORD_FEATURES``), and is
scored with masked-word perplexity and top-k accuracy.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .arithmetic import division, fone_arithmetic, multi_operand, multiplication
from .comparison import interval, minmax
from .lookup import lookup
from .numeracy import numeracy_words
from .orbits import orbits
from .scaler import NumberScaler
from .temperature import temperature

if TYPE_CHECKING:
    from datasets import DatasetDict

TASK_FILE = "hf_numbers_task.json"
"""The file ``hf-numbers make-data`` writes next to a saved task, recording the task's name."""


@dataclass(frozen=True)
class TaskSpec:
    """A task: its builder, the number scaling that suits xVal-style encodings, and its training recipe.

    ``scaling`` holds the keyword arguments of :class:`NumberScaler`. Encodings that read
    digits (FoNE, float bits) want the raw values: use ``NumberScaler("identity")`` for them.
    ``training_defaults`` are the task's recommended values of ``NumberTrainingArguments`` fields
    (model size, steps, batch, learning rate, completion-only loss); explicit arguments win.

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
# as in the paper. Measured on a 2-core CPU (README, "Results"): GPT-2 of the same size (3.26M parameters,
# Llama 3.29M) and budget left one digit place (the tens) at chance on data seeds 1 and 3 and then memorised
# it (8-9% exact match); Llama learned every place on seeds 0 and 3 (>= 99.9%). A likely reason, not
# isolated from Llama's other differences (RoPE, RMSNorm): angle addition, the core of FoNE arithmetic,
# multiplies the operands' features, which a gated (SwiGLU) MLP forms directly.
_FONE_RECIPE = {
    **_ANSWER_ONLY,
    "backbone": "llama",
    "train_size": 6400,
    "eval_size": 1000,
    "hidden_size": 256,
    "num_layers": 4,
    "num_heads": 8,
    "max_steps": 6000,
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
    # (README, "Results"); values span 0.4 to 5140 and carry signs, hence the signed-log scaling for xVal.
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
