"""xVal's planetary-orbit task (Golkar et al., §3.3 and appendix B.2), simulated with REBOUND.

Each example is a system's description and its planets' positions as JSON text; the answer is a
number of the description, so this is a masked (number-inference) task. Two out-of-distribution
splits hold out ranges of the first planet's semi-major axis and of the step size. The parameter
distribution, the text format and the held-out splits: docs/training.md, "Tasks".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import rebound

from .formatting import format_fixed, round_fixed
from .splits import make_dataset_dict, split_rngs
from .text_builder import TextBuilder
from .validation import check_int, check_int_range, check_interval, check_seed, check_sizes, in_open_interval

if TYPE_CHECKING:
    from datasets import DatasetDict

MASS_SCALE = 1e5
ECCENTRICITY_SCALE = 20.0
MAX_POSITION = 10.0
TARGETS = ("a1", "e1", "m1", "stepsize")
# Ranges of xVal's generator (planets-sim/rebound_sim.py in PolymathicAI/xVal).
_STEPSIZE_RANGE = (15 / 58, 24 / 29)
_A_RANGE = (1.0, 3.0)


def orbits(
    target: str = "a1",
    heldout_a1: tuple[float, float] = (1.4, 1.5),
    heldout_stepsize: tuple[float, float] = (0.45, 0.5),
    decimals: int = 3,
    num_planets: tuple[int, int] = (2, 5),
    max_times: int | None = None,
    train_size: int = 1_000,
    validation_size: int = 100,
    test_size: int = 100,
    test_ood_a1_size: int = 100,
    test_ood_stepsize_size: int = 100,
    seed: int = 0,
) -> DatasetDict:
    """Simulated planetary systems as JSON text, with held-out ``a1`` and step-size ranges.

    ``target``: ``"a1"``, ``"e1"``, ``"m1"`` or ``"stepsize"``. ``heldout_a1`` lies in ``[1, 3]``,
    ``heldout_stepsize`` in ``[0.259, 0.828]``; ``decimals`` (2 to 6) are written for every value;
    ``num_planets`` is an inclusive range within 2 to 5; ``max_times`` (>= 2, or None for all) cuts
    each series. Extra columns (text units): ``masses``, ``semi_major_axes``, ``eccentricities``,
    ``stepsize``, ``a1``, ``positions``; (simulation units) ``theta``, ``num_steps``, ``energy_error``
    (relative energy drift).

    Example:
        >>> dd = orbits(train_size=2, validation_size=1, test_size=1, test_ood_a1_size=1, test_ood_stepsize_size=1)
        >>> 1.4 < dd["test_ood_a1"][0]["a1"] < 1.5
        True
    """
    if target not in TARGETS:
        raise ValueError(f"target={target!r} is unknown; allowed: {', '.join(TARGETS)}")
    heldout_a1 = check_interval("heldout_a1", heldout_a1, *_A_RANGE)
    heldout_stepsize = check_interval(
        "heldout_stepsize", heldout_stepsize, round(_STEPSIZE_RANGE[0], 3), round(_STEPSIZE_RANGE[1], 3)
    )
    decimals = check_int("decimals", decimals, 2, 6)
    planets = check_int_range("num_planets", num_planets, 2, 5)
    if max_times is not None:
        max_times = check_int("max_times", max_times, 2)
    seed = check_seed(seed)
    sizes = check_sizes(
        {
            "test_ood_a1": test_ood_a1_size,
            "test_ood_stepsize": test_ood_stepsize_size,
            "test": test_size,
            "validation": validation_size,
            "train": train_size,
        }
    )
    rngs = split_rngs(seed, "orbits", list(sizes))
    rows: dict[str, list[dict[str, Any]]] = {}
    for split, size in sizes.items():
        rows[split] = []
        draws = 0
        while len(rows[split]) < size:
            draws += 1
            if draws > 1000 * size + 10_000:
                raise ValueError(
                    f"found too few systems for split {split!r} after {draws - 1} draws: the held-out "
                    f"intervals heldout_a1={heldout_a1} and heldout_stepsize={heldout_stepsize} are too "
                    "narrow (or too wide) for the generator's parameter distribution"
                )
            params = _draw_parameters(rngs[split], decimals, planets, max_times)
            a1_out = in_open_interval(params["a"][0], heldout_a1)
            step_out = in_open_interval(params["stepsize"], heldout_stepsize)
            wanted = {"test_ood_a1": (True, False), "test_ood_stepsize": (False, True)}.get(split, (False, False))
            if (a1_out, step_out) != wanted:
                continue
            positions, energy_error = _simulate(params)
            if np.abs(positions).max() >= MAX_POSITION:
                continue
            rows[split].append(_row(params, positions, energy_error, decimals, target))
    return make_dataset_dict(
        rows,
        {
            "masses": ["float64"],
            "semi_major_axes": ["float64"],
            "eccentricities": ["float64"],
            "stepsize": "float64",
            "a1": "float64",
            "positions": [[["float64"]]],
            "theta": ["float64"],
            "num_steps": "int32",
            "energy_error": "float64",
        },
    )


def _draw_parameters(
    rng: np.random.Generator, decimals: int, planets: tuple[int, int] = (2, 5), max_times: int | None = None
) -> dict[str, Any]:
    """xVal's parameter distribution; values rounded to what the text will show."""
    n = int(rng.integers(planets[0], planets[1] + 1))
    masses = rng.uniform(1e-5, 5e-5, n)
    a = np.linspace(1.0, rng.uniform(1.5, 3.0), n)
    e = rng.uniform(0.0, 0.1, n)
    theta = rng.uniform(0.0, 2 * np.pi, n)
    if rng.uniform() < 0.3:
        theta = np.zeros(n)
    perm = rng.permutation(n)
    duration = int(rng.integers(15, 25))
    steps = int(rng.integers(30, 60))
    return {
        "m": [round_fixed(v * MASS_SCALE, decimals) for v in masses[perm]],
        "a": [round_fixed(v, decimals) for v in a[perm]],
        "e": [round_fixed(v * ECCENTRICITY_SCALE, decimals) for v in e[perm]],
        "theta": [float(v) for v in theta[perm]],
        "stepsize": round_fixed(duration / (steps - 1), decimals),
        "num_steps": steps if max_times is None else min(steps, max_times),
    }


def _simulate(params: dict[str, Any]) -> tuple[np.ndarray, float]:
    """Positions ``(num_steps, planets, 2)`` at times ``k * stepsize`` and the relative energy drift."""
    sim = rebound.Simulation()
    sim.add(m=1.0)
    for m, a, e, theta in zip(params["m"], params["a"], params["e"], params["theta"]):
        sim.add(m=m / MASS_SCALE, a=a, e=e / ECCENTRICITY_SCALE, theta=theta)
    sim.move_to_com()
    energy = sim.energy()
    positions = np.empty((params["num_steps"], len(params["m"]), 2))
    xyz = np.empty((sim.N, 3))
    for k in range(params["num_steps"]):
        sim.integrate(k * params["stepsize"])
        sim.serialize_particle_data(xyz=xyz)
        positions[k] = xyz[1:, :2]
    return positions, abs(sim.energy() - energy) / abs(energy)


def _row(
    params: dict[str, Any], positions: np.ndarray, energy_error: float, decimals: int, target: str
) -> dict[str, Any]:
    targets = {("a", 0): "a1", ("e", 0): "e1", ("m", 0): "m1"}
    builder = TextBuilder()
    builder.text('{"description":{"planets":[')
    for i in range(len(params["m"])):
        builder.text(("," if i else "") + "{")
        for j, key in enumerate(("m", "a", "e")):
            builder.text(f'{"," if j else ""}"{key}":')
            builder.number(format_fixed(params[key][i], decimals), answer=targets.get((key, i)) == target)
        builder.text("}")
    builder.text('],"stepsize":')
    builder.number(format_fixed(params["stepsize"], decimals), answer=target == "stepsize")
    builder.text('},"data":[')
    rounded = []
    for k, step in enumerate(positions):
        builder.text(("," if k else "") + "[")
        rounded_step = []
        for i, (x, y) in enumerate(step):
            builder.text(("," if i else "") + "[")
            literals = (format_fixed(x, decimals), format_fixed(y, decimals))
            builder.number(literals[0])
            builder.text(",")
            builder.number(literals[1])
            builder.text("]")
            rounded_step.append([float(v) for v in literals])
        builder.text("]")
        rounded.append(rounded_step)
    builder.text("]}")
    return builder.build(
        masses=params["m"],
        semi_major_axes=params["a"],
        eccentricities=params["e"],
        stepsize=params["stepsize"],
        a1=params["a"][0],
        positions=rounded,
        theta=params["theta"],
        num_steps=params["num_steps"],
        energy_error=float(energy_error),
    )
