"""Masked-word numeracy: real numbers from ``vega_datasets`` in sentences whose masked word
follows from those numbers (the floating-point embedding paper's protocol, Jin et al. Table 1).

The paper masks *words* (numbers stay visible) and asks whether a number encoding helps a
frozen BERT predict them. Its corpora (Numeracy-600K, Wiki-Convert) cannot be downloaded
here, and most of their words do not depend on the numbers. Here every sentence has one
**target word** that is a fixed function of the sentence's numbers, and nothing else in the
sentence varies within a template, so the text around the numbers carries no information
about the word beyond the template's word frequencies (the number-blind baseline):

=====================  ====================================================================  =========================
template               sentence (target word in braces)                                      rule
=====================  ====================================================================  =========================
``temperature``        The thermometer read 48.2 degrees, so it was {cool} outside.          °F: < 45 cold, < 55 cool,
                                                                                             < 65 mild, else warm
``weight_unit``        The car weighs 3504 {pounds}. / The car weighs 1.752 {tons}.          integer >= 1000: pounds;
                                                                                             below 10: (short) tons
``weight_comparison``  The first car weighs 3504 pounds and the second 3693 pounds, so the  heavier if first > second
                       first car is {lighter}.
``price_change``       A share cost 39.81 dollars one month and 36.35 dollars the next, so  rose if second > first
                       its price {fell}.
``job_change``         Employment in the sector changed by -12.3 thousand jobs that month,   gain if > 0, else loss
                       a {loss}.
=====================  ====================================================================  =========================

Sources (offline, in the ``vega_datasets`` package): hourly temperatures of Seattle and San
Francisco (``seattle-temps``, ``sf-temps``, °F), car weights (``cars``, pounds), monthly share
prices of five companies (``stocks``, consecutive months of one company) and monthly US
employment by sector (``us-employment``, thousands; the change from one month to the next).
Ties (equal weights or prices) and zero changes are left out. Every target word is one
WordPiece token of the uncased BERT vocabulary (all-MiniLM-L6-v2's).

**Held-out splits.** Each source value is assigned to ``train``, ``validation`` or ``test`` by
a seeded shuffle (``split_fractions``): a temperature, a car weight (shared by the two car
templates), a company-month, an employment change. A sentence belongs to a split when all its
values do, so test sentences hold temperatures, weights and changes never seen in training:
the model must read magnitudes, not memorise sentences. Each split draws its examples from the
templates in turn (seeded), without repeating a sentence; a template whose candidates run out
is skipped, and asking for more sentences than all templates hold is a ``ValueError``.

Columns: ``text``, ``numbers`` (the value of every number in ``text``, in order), ``word`` (the
target word), ``word_start`` (its character offset in ``text``) and ``template``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .formatting import format_scaled_integer
from .splits import WORD_FEATURES, make_dataset_dict, shuffled_split, split_rngs
from .validation import check_fractions, check_seed, check_sizes

if TYPE_CHECKING:
    from datasets import DatasetDict

TEMPERATURE_WORDS = ((45.0, "cold"), (55.0, "cool"), (65.0, "mild"), (float("inf"), "warm"))
"""Upper bounds (°F, exclusive) of each temperature word."""


@dataclass(frozen=True)
class Candidate:
    """One possible sentence: text pieces and number literals (1-tuples) before the word, the word, the rest."""

    pieces: tuple[str | tuple[str], ...]
    word: str
    after: str


def temperature_word(fahrenheit: float) -> str:
    """The temperature template's word for a reading in °F.

    Example:
        >>> temperature_word(44.9), temperature_word(45.0), temperature_word(70.2)
        ('cold', 'cool', 'warm')
    """
    return next(word for bound, word in TEMPERATURE_WORDS if fahrenheit < bound)


def weight_unit_word(value: float) -> str:
    """``pounds`` for a weight written in pounds (>= 1000), ``tons`` for one written in tons (< 10).

    Example:
        >>> weight_unit_word(3504.0), weight_unit_word(1.75)
        ('pounds', 'tons')
    """
    return "pounds" if value >= 1000 else "tons"


def job_change_word(change: float) -> str:
    """``gain`` for a positive change in employment, ``loss`` otherwise (a change is never 0 in the data).

    Example:
        >>> job_change_word(-12.3)
        'loss'
    """
    return "gain" if change > 0 else "loss"


def comparison_word(first: float, second: float, larger: str, smaller: str) -> str:
    """``larger`` if ``first > second`` else ``smaller`` (ties never occur in the data).

    Example:
        >>> comparison_word(3504, 3693, "heavier", "lighter")
        'lighter'
    """
    return larger if first > second else smaller


RULES: dict[str, Callable[[Sequence[float]], str]] = {
    "temperature": lambda numbers: temperature_word(numbers[0]),
    "weight_unit": lambda numbers: weight_unit_word(numbers[0]),
    "weight_comparison": lambda numbers: comparison_word(numbers[0], numbers[1], "heavier", "lighter"),
    "price_change": lambda numbers: comparison_word(numbers[1], numbers[0], "rose", "fell"),
    "job_change": lambda numbers: job_change_word(numbers[0]),
}
"""Each template's target word as a function of the sentence's numbers (what the tests check)."""

TEMPLATES = tuple(RULES)
TARGET_WORDS: dict[str, tuple[str, ...]] = {
    "temperature": tuple(word for _, word in TEMPERATURE_WORDS),
    "weight_unit": ("pounds", "tons"),
    "weight_comparison": ("heavier", "lighter"),
    "price_change": ("rose", "fell"),
    "job_change": ("gain", "loss"),
}
"""The words each template's rule can give."""


# ------------------------------------------------------------------ source values (each split by value)
def _temperatures() -> list[int]:
    """Distinct hourly temperatures of Seattle and San Francisco, in tenths of a °F."""
    from vega_datasets import local_data

    temps = np.concatenate([local_data.seattle_temps()["temp"].to_numpy(), local_data.sf_temps()["temp"].to_numpy()])
    return sorted({int(round(t * 10)) for t in temps})


def _car_weights() -> list[int]:
    """Distinct car weights in pounds."""
    from vega_datasets import local_data

    return sorted({int(w) for w in local_data.cars()["Weight_in_lbs"].dropna()})


def _price_pairs() -> list[tuple[str, str, int, int]]:
    """(company, month, price in cents, next month's price in cents), prices that changed."""
    from vega_datasets import local_data

    stocks = local_data.stocks().sort_values(["symbol", "date"])
    pairs = []
    for symbol, frame in stocks.groupby("symbol"):
        cents = [int(round(p * 100)) for p in frame["price"]]
        dates = [str(d.date()) for d in frame["date"]]
        pairs += [(str(symbol), date, a, b) for (a, b), date in zip(zip(cents, cents[1:]), dates) if a != b]
    return pairs


def _job_changes() -> list[int]:
    """Distinct non-zero monthly employment changes of a sector, in tenths of a thousand jobs."""
    from vega_datasets import local_data

    employment = local_data.us_employment()
    changes: set[int] = set()
    for column in employment.columns.drop(["month", "nonfarm_change"]):
        tenths = (employment[column] * 10).round().astype(int).diff().dropna().astype(int)
        changes |= {int(t) for t in tenths if t != 0}
    return sorted(changes)


SOURCES: dict[str, Callable[[], list[Any]]] = {
    "temperature": _temperatures,
    "car_weight": _car_weights,
    "stock": _price_pairs,
    "jobs": _job_changes,
}


# ------------------------------------------------------------------ templates: a split's values -> its sentences
def _temperature(tenths: Sequence[int]) -> list[Candidate]:
    out = []
    for value in tenths:
        literal = format_scaled_integer(value, 1)
        pieces = ("The thermometer read ", (literal,), " degrees, so it was ")
        out.append(Candidate(pieces, temperature_word(float(literal)), " outside."))
    return out


def _weight_unit(weights: Sequence[int]) -> list[Candidate]:
    return [
        Candidate(("The car weighs ", (literal,), " "), weight_unit_word(float(literal)), ".")
        for pounds in weights
        for literal in (str(pounds), _tons(pounds))
    ]


def _tons(pounds: int) -> str:
    """``pounds`` in short tons, exactly (at most four decimals, no trailing zeros): distinct weights stay distinct."""
    return format_scaled_integer(pounds * 5, 4).rstrip("0").rstrip(".")


class _WeightPairs(Sequence[Candidate]):
    """Every ordered pair of distinct weights as a comparison sentence, built only when read."""

    def __init__(self, weights: Sequence[int]):
        self.weights = list(weights)

    def __len__(self) -> int:
        return len(self.weights) * max(len(self.weights) - 1, 0)

    def __getitem__(self, index: Any) -> Any:
        first, second = divmod(int(index), len(self.weights) - 1)
        second += second >= first  # skip the pair of a weight with itself
        a, b = self.weights[first], self.weights[second]
        pieces = ("The first car weighs ", (str(a),), " pounds and the second ", (str(b),))
        return Candidate((*pieces, " pounds, so the first car is "), comparison_word(a, b, "heavier", "lighter"), ".")


def _price_change(pairs: Sequence[tuple[str, str, int, int]]) -> list[Candidate]:
    out = []
    for _, _, a, b in pairs:
        pieces = ("A share cost ", (format_scaled_integer(a, 2),), " dollars one month and ")
        pieces += ((format_scaled_integer(b, 2),), " dollars the next, so its price ")
        out.append(Candidate(pieces, comparison_word(b, a, "rose", "fell"), "."))
    return out


def _job_change(changes: Sequence[int]) -> list[Candidate]:
    out = []
    for tenths in changes:  # whole thousands without decimals
        literal = format_scaled_integer(tenths, 1) if tenths % 10 else str(tenths // 10)
        pieces = ("Employment in the sector changed by ", (literal,), " thousand jobs that month, a ")
        out.append(Candidate(pieces, job_change_word(tenths), "."))
    return out


_RENDER: dict[str, tuple[str, Callable[[Sequence[Any]], Sequence[Candidate]]]] = {
    "temperature": ("temperature", _temperature),
    "weight_unit": ("car_weight", _weight_unit),
    "weight_comparison": ("car_weight", _WeightPairs),
    "price_change": ("stock", _price_change),
    "job_change": ("jobs", _job_change),
}
"""Each template's source of values and how a split's values become its candidate sentences."""


def _split_values(
    values: list[Any], fractions: tuple[float, float, float], rng: np.random.Generator
) -> dict[str, list[Any]]:
    """A seeded shuffle of a source's values, cut in proportion to ``fractions`` (train, validation, test)."""
    cuts = shuffled_split(len(values), fractions, rng)
    return {split: [values[i] for i in sorted(cut)] for split, cut in cuts.items()}


def _row(template: str, candidate: Candidate) -> dict[str, Any]:
    text = "".join(piece[0] if isinstance(piece, tuple) else piece for piece in candidate.pieces)
    return {
        "text": text + candidate.word + candidate.after,
        "numbers": [float(piece[0]) for piece in candidate.pieces if isinstance(piece, tuple)],
        "word": candidate.word,
        "word_start": len(text),
        "template": template,
    }


def numeracy_words(
    train_size: int = 4000,
    validation_size: int = 300,
    test_size: int = 300,
    templates: Sequence[str] = TEMPLATES,
    split_fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    seed: int = 0,
) -> DatasetDict:
    """Sentences of real numbers whose target word follows from the numbers (see the module docstring).

    ``templates`` picks some of :data:`TEMPLATES`; ``split_fractions`` are the ``(train,
    validation, test)`` shares of each source's values. Extra column: ``template``.

    Example:
        >>> dd = numeracy_words(train_size=10, validation_size=5, test_size=5)
        >>> row = dd["test"][0]
        >>> row["text"][row["word_start"]:].startswith(row["word"])
        True
        >>> RULES[row["template"]](row["numbers"]) == row["word"]
        True
    """
    if isinstance(templates, str) or not templates or any(t not in TEMPLATES for t in templates):
        raise ValueError(f"templates must be a non-empty list of {', '.join(TEMPLATES)}, got {templates!r}")
    if len(set(templates)) != len(templates):
        raise ValueError(f"templates must not repeat a template, got {templates!r}")
    fractions = check_fractions(split_fractions)
    seed = check_seed(seed)
    sizes = check_sizes({"train": train_size, "validation": validation_size, "test": test_size})
    sources = sorted({_RENDER[name][0] for name in templates})
    source_rngs = split_rngs(seed, "numeracy_words", [f"values/{source}" for source in sources])
    values = {s: _split_values(SOURCES[s](), fractions, source_rngs[f"values/{s}"]) for s in sources}
    rngs = split_rngs(seed, "numeracy_words", list(sizes))
    rows = {}
    for split, size in sizes.items():
        pools = {}
        for name in templates:
            source, render = _RENDER[name]
            pool = render(values[source][split])
            pools[name] = (pool, rngs[split].permutation(len(pool)))
        rows[split] = _draw_in_turn(pools, size, rngs[split], split)
    return make_dataset_dict(rows, {"template": "string"}, core=WORD_FEATURES)


def _draw_in_turn(
    pools: dict[str, tuple[Sequence[Candidate], np.ndarray]], size: int, rng: np.random.Generator, split: str
) -> list[dict[str, Any]]:
    """``size`` rows taken from the templates in turn (a seeded order each round), skipping exhausted pools;
    each pool is read in its own seeded order, so no sentence repeats."""
    available = sum(len(pool) for pool, _ in pools.values())
    if size > available:
        raise ValueError(
            f"numeracy_words has {available} distinct {split} sentences for these templates and fractions, "
            f"fewer than the {size} asked for; lower {split}_size"
        )
    taken = dict.fromkeys(pools, 0)
    names = list(pools)
    out: list[dict[str, Any]] = []
    while len(out) < size:
        for index in rng.permutation(len(names)):
            pool, order = pools[names[index]]
            if taken[names[index]] < len(pool) and len(out) < size:
                out.append(_row(names[index], pool[order[taken[names[index]]]]))
                taken[names[index]] += 1
    return out
