"""The number scaling: one map between the data's values and a model's, applied inside the model.

xVal multiplies the ``[NUM]`` embedding by the value, so values must reach the trunk in a small range.
:class:`NumberScaling` is that map (shift, scale, optional signed log; the config's ``number_scaling_*``
fields): it applies it and its inverse and fits it to data, so that callers pass and get the data's
own units. The formula is in docs/models.md; an older checkpoint's ``number_scaler.json``:
``legacy_checkpoints.py``.

Example:
    >>> NumberScaling(shift=10.0, scale=2.0).transform(14.0)
    2.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = [
    "SCALING_FIELDS",
    "SCALING_KINDS",
    "NumberScaling",
    "NumberScalingMixin",
    "finite_values",
    "positive_number",
]

SCALING_FIELDS = ("number_scaling_shift", "number_scaling_scale", "number_scaling_log")
"""The config fields holding the scaling."""
SCALING_KINDS = ("identity", "standard", "maxabs")
"""How :meth:`NumberScaling.fit` chooses shift and scale."""
_LN10 = math.log(10.0)
_REAL = (int, float, np.integer, np.floating)


def positive_number(name: str, value: Any) -> float:
    """``value`` as a float if it is a finite number > 0, else a ``ValueError`` naming ``name``.

    Example:
        >>> positive_number("max_abs", 5)
        5.0
    """
    if not isinstance(value, _REAL) or isinstance(value, bool) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def finite_values(values: Any, what: str) -> np.ndarray:
    """Numbers, arrays, tensors or ragged nested lists as one flat float64 array; ``ValueError`` naming ``what``
    for anything else, and for NaN or infinite values.

    Example:
        >>> finite_values([[1, 2.5], [], [torch.tensor(3.0)]], "fit values").tolist()
        [1.0, 2.5, 3.0]
    """
    if isinstance(values, torch.Tensor):
        array = values.detach().to("cpu", torch.float64).numpy().ravel()
    elif isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        array = values.astype(np.float64).ravel()
    elif isinstance(values, (bool, str, bytes)):
        raise ValueError(f"{what} must be numbers, got {values!r}")
    elif isinstance(values, (int, float, np.number)):
        array = np.array([values], dtype=np.float64)
    else:
        try:
            items = list(values)
        except TypeError:
            raise ValueError(f"{what} must be numbers, got {values!r}") from None
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            array = np.array(items, dtype=np.float64)
        else:
            parts = [finite_values(v, what) for v in items]
            array = np.concatenate(parts) if parts else np.empty(0)
    bad = ~np.isfinite(array)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{what} must be finite numbers; found {int(bad.sum())} NaN or infinite value(s), "
            f"the first ({array[index]}) at flat index {index}"
        )
    return array


@dataclass(frozen=True)
class NumberScaling:
    """The map between the data's values and the model's (see the module docstring); float64 throughout.

    Args:
        shift: subtracted after the optional log (finite).
        scale: divided by after the shift (finite, > 0).
        log: apply the signed log ``sign(x) * log10(1 + |x|)`` first.

    Example:
        >>> scaling = NumberScaling(shift=50.0, scale=10.0)
        >>> scaling.transform(torch.tensor([40.0, 65.0])).tolist(), scaling.inverse(1.5)
        ([-1.0, 1.5], 65.0)
    """

    shift: float = 0.0
    scale: float = 1.0
    log: bool = False

    def __post_init__(self) -> None:
        for name, value in (("shift", self.shift), ("scale", self.scale)):
            if not isinstance(value, _REAL) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"number_scaling_{name} must be a finite number, got {value!r}")
        if self.scale <= 0:
            raise ValueError(f"number_scaling_scale must be > 0, got {self.scale!r}")
        if not isinstance(self.log, bool):
            raise ValueError(f"number_scaling_log must be True or False, got {self.log!r}")
        object.__setattr__(self, "shift", float(self.shift))
        object.__setattr__(self, "scale", float(self.scale))

    @classmethod
    def from_config(cls, config: Any) -> NumberScaling:
        """The scaling a config holds (identity for a config without the fields).

        Example:
            >>> from hf_numbers import NumberGPT2Config
            >>> NumberScaling.from_config(NumberGPT2Config(number_scaling_scale=2.0)).scale
            2.0
        """
        return cls(
            getattr(config, "number_scaling_shift", 0.0),
            getattr(config, "number_scaling_scale", 1.0),
            getattr(config, "number_scaling_log", False),
        )

    @classmethod
    def fit(cls, values: Any, kind: str = "standard", *, log: bool = False, max_abs: float = 1.0) -> NumberScaling:
        """Fit shift and scale on ``values`` (see :func:`finite_values`; at least one, every one finite).

        ``kind``: ``"standard"`` (mean and standard deviation of ``g(values)``; scale 1 if they do
        not vary), ``"maxabs"`` (shift 0, ``g(values)`` into ``[-max_abs, max_abs]``; scale 1 if all
        are 0) or ``"identity"`` (shift 0, scale 1; ``log`` still applies).

        Example:
            >>> NumberScaling.fit([10.0, 20.0, 30.0]).shift, NumberScaling.fit([-4.0, 2.0], "maxabs", max_abs=2.0).scale
            (20.0, 2.0)
        """
        if kind not in SCALING_KINDS:
            raise ValueError(f"kind={kind!r} is unknown; allowed: {', '.join(SCALING_KINDS)}")
        max_abs = positive_number("max_abs", max_abs)
        array = finite_values(values, "fit values")
        if array.size == 0:
            raise ValueError("fit needs at least one value, got none")
        if kind == "identity":
            return cls(0.0, 1.0, log)
        g = cls(log=log).transform(array)
        if kind == "standard":
            std = float(g.std())
            return cls(float(g.mean()), std if std > 0 else 1.0, log)
        peak = float(np.abs(g).max())
        return cls(0.0, peak / max_abs if peak > 0 else 1.0, log)

    @property
    def is_identity(self) -> bool:
        """Whether values pass unchanged (shift 0, scale 1, no log).

        Example:
            >>> NumberScaling().is_identity, NumberScaling(log=True).is_identity
            (True, False)
        """
        return self.shift == 0.0 and self.scale == 1.0 and not self.log

    def transform(self, values: Any) -> Any:
        """Data values to model values. A tensor gives a float64 tensor on its device, a number a float,
        anything array-like a float64 ``numpy.ndarray``; NaN stays NaN, an overflow becomes infinite.

        Example:
            >>> NumberScaling(log=True).transform(torch.tensor([99.0])).tolist(), NumberScaling(log=True).transform(99)
            ([2.0], 2.0)
        """
        values, xp, back = _float64(values)
        if self.is_identity:
            return back(values)
        with np.errstate(over="ignore", invalid="ignore"):
            if self.log:
                values = xp.sign(values) * xp.log1p(xp.abs(values)) / _LN10
            return back((values - self.shift) / self.scale)

    def inverse(self, values: Any) -> Any:
        """Model values to data values, typed as by :meth:`transform` (beyond float64 after the inverse log: ±inf).

        Example:
            >>> NumberScaling(shift=1.0, scale=2.0).inverse(np.array([0.5])).tolist()
            [2.0]
        """
        values, xp, back = _float64(values)
        if self.is_identity:
            return back(values)
        with np.errstate(over="ignore", invalid="ignore"):
            values = values * self.scale + self.shift
            if self.log:
                values = xp.sign(values) * xp.expm1(xp.abs(values) * _LN10)
            return back(values)

    def to_config(self) -> dict[str, Any]:
        """The config fields of this scaling (``config.update(...)``, or keyword arguments of a config).

        Example:
            >>> NumberScaling(2.0, 3.0).to_config()
            {'number_scaling_shift': 2.0, 'number_scaling_scale': 3.0, 'number_scaling_log': False}
        """
        return dict(zip(SCALING_FIELDS, (self.shift, self.scale, self.log)))


def _float64(values: Any) -> tuple[Any, Any, Any]:
    """``values`` in float64 (a tensor stays one, on its device), the module computing on it, and how to give
    the result back (a Python or NumPy number as a float, a 0-d array as a NumPy scalar, as NumPy's arithmetic does)."""
    if isinstance(values, torch.Tensor):
        return values.double(), torch, lambda out: out
    back = float if isinstance(values, (int, float, np.number)) else (lambda out: out[()])
    return np.array(values, dtype=np.float64), np, back


class NumberScalingMixin:
    """The scaling methods of the ``Number*`` models (``NumberModelMixin`` inherits them).

    The scaling lives in the config; these read, set and fit it.
    """

    @property
    def number_scaling(self) -> NumberScaling:
        """The scaling the model applies (from its config).

        Example:
            >>> model.number_scaling  # doctest: +SKIP
            NumberScaling(shift=52.3, scale=8.1, log=False)
        """
        return NumberScaling.from_config(self.config)

    def set_number_scaling(self, scaling: NumberScaling) -> NumberScaling:
        """Store ``scaling`` in the config; returns it (the scaling now applied).

        Example:
            >>> model.set_number_scaling(NumberScaling.fit(train_values, "standard"))  # doctest: +SKIP
        """
        if not isinstance(scaling, NumberScaling):
            raise ValueError(f"set_number_scaling needs a NumberScaling (NumberScaling.fit(values)), got {scaling!r}")
        self.config.update(scaling.to_config())
        return scaling

    def fit_number_scaling(
        self, values: Any, kind: str = "standard", *, log: bool = False, max_abs: float = 1.0
    ) -> NumberScaling:
        """Fit the scaling on ``values`` (the training data's numbers, in their own units) and store it.

        For an encoding that ``needs_scaling`` (xVal); the others read raw digits, bits or bins and
        keep the identity, so fitting one is a ``ValueError``. See :meth:`NumberScaling.fit` for
        ``kind``, ``log`` and ``max_abs``.

        Example:
            >>> model.fit_number_scaling([41.2, 40.8, 44.6, 52.0])  # doctest: +SKIP
            NumberScaling(shift=44.65, scale=4.51..., log=False)
            >>> model(**tokenizer("... 47.3,", return_tensors="pt")).number_predictions  # in °F  # doctest: +SKIP
        """
        if self.number_encoding is None or not self.number_encoding.needs_scaling:
            raise ValueError(
                f"the {self.config.number_encoding!r} encoding reads raw values (needs_scaling is False), so its "
                "scaling stays the identity; fit_number_scaling is for encodings that need scaling, such as 'xval'"
            )
        return self.set_number_scaling(NumberScaling.fit(values, kind, log=log, max_abs=max_abs))
