"""``numeracy_words``: masked-word numeracy (Jin et al. Table 1) on real numbers from ``vega_datasets``.

Every sentence has one target word that follows from its numbers (:data:`RULES`) and nothing else
in its template varies, so the rest of the sentence tells no more about the word than the template's
word frequencies. Templates, sources and held-out splits: docs/training.md, "Tasks".
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
    """Sentences of real numbers whose target word follows from the numbers.

    ``templates`` picks some of :data:`TEMPLATES`; ``split_fractions`` are the ``(train,
    validation, test)`` shares of each source's values (a sentence goes where all its values do).
    Columns ``text``, ``numbers``, ``word``, ``word_start``, ``template``. ``ValueError`` when a split
    asks for more sentences than the templates hold.

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
