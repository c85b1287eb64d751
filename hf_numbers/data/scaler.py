"""``NumberScaler``: a saveable recipe for fitting a model's number scaling on training data.

The map itself is :class:`~hf_numbers.modeling.number_scaling.NumberScaling`, which the model holds in its
config; ``NumberScaler`` adds the recipe a task recommends, fitting on dataset columns, strict checks of
values and ``number_scaler.json``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..modeling.number_scaling import LEGACY_SCALER_FILE, NumberScaling, finite_values, positive_number

SCALER_FILE = LEGACY_SCALER_FILE
KINDS = ("identity", "standard", "maxabs", "affine")
_FORMAT_VERSION = 1

ArrayLike = Any


class NumberScaler:
    """A fitting recipe for :class:`NumberScaling` and, once fitted, the map it fitted (``scaling``).

    Args:
        kind: ``"identity"``, ``"standard"``, ``"maxabs"`` or ``"affine"``.
        log: apply the signed log ``sign(x) * log10(1 + |x|)`` before the affine map.
        max_abs: for ``"maxabs"``, the bound the fitted values are scaled into (> 0).
        shift, scale: for ``"affine"`` (required there, ``scale`` > 0); set by ``fit`` otherwise.

    Example:
        >>> scaler = NumberScaler("standard").fit([10.0, 20.0, 30.0])
        >>> scaler.transform([10.0, 30.0]).round(4).tolist(), scaler.inverse_transform(scaler.transform(25.0))
        ([-1.2247, 1.2247], 25.0)
    """

    def __init__(
        self,
        kind: str = "standard",
        *,
        log: bool = False,
        max_abs: float = 1.0,
        shift: float | None = None,
        scale: float | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind={kind!r} is unknown; allowed: {', '.join(KINDS)}")
        if not isinstance(log, bool):
            raise ValueError(f"log must be True or False, got {log!r}")
        if kind == "affine" and (shift is None or scale is None):
            raise ValueError('kind="affine" needs both shift and scale')
        if (shift is None) != (scale is None):
            raise ValueError(f"give both shift and scale or neither, got shift={shift!r}, scale={scale!r}")
        self.kind, self.log, self.max_abs = kind, log, positive_number("max_abs", max_abs)
        self.num_fit_values = 0
        self.scaling: NumberScaling | None = None
        if shift is not None or kind == "identity":
            shift, scale = (0.0, 1.0) if shift is None else (shift, positive_number("scale", scale))
            self.scaling = NumberScaling(shift, scale, log)

    @property
    def shift(self) -> float | None:
        """The fitted shift (None before ``fit``)."""
        return None if self.scaling is None else self.scaling.shift

    @property
    def scale(self) -> float | None:
        """The fitted scale (None before ``fit``)."""
        return None if self.scaling is None else self.scaling.scale

    @property
    def is_fitted(self) -> bool:
        """Whether ``shift`` and ``scale`` are set (always true for identity and affine).

        Example:
            >>> NumberScaler("standard").is_fitted, NumberScaler("identity").is_fitted
            (False, True)
        """
        return self.scaling is not None

    def _fitted(self) -> NumberScaling:
        if self.scaling is None:
            raise ValueError(f'this NumberScaler("{self.kind}") is not fitted; call fit(...) or fit_dataset(...) first')
        return self.scaling

    def fit(self, values: ArrayLike) -> NumberScaler:
        """Fit ``shift`` and ``scale`` on ``values`` (numbers, arrays, tensors or ragged nested lists); returns self.

        Only counts the values for ``"identity"`` and ``"affine"``; see :meth:`NumberScaling.fit` for the others.

        Example:
            >>> NumberScaler("maxabs", max_abs=5.0).fit([[1.0, -4.0], [2.0]]).scale
            0.8
        """
        array = finite_values(values, "fit values")
        kind = "identity" if self.kind == "affine" else self.kind
        fitted = NumberScaling.fit(array, kind, log=self.log, max_abs=self.max_abs)
        self.num_fit_values = int(array.size)
        if self.kind != "affine":
            self.scaling = fitted
        return self

    def fit_dataset(
        self,
        dataset: Any,
        column: str = "numbers",
        extract_numbers: Callable[[str], Iterable[Any]] | None = None,
    ) -> NumberScaler:
        """Fit on a ``datasets.Dataset`` column (or any mapping of column name to rows) of numbers or lists
        of numbers; with ``extract_numbers``, a text column and ``extract_numbers(text)`` giving floats or
        ``(start, end, value)`` spans (as ``find_numbers`` does).

        Example:
            >>> rows = {"text": ["x=1.5, y=-2", "z=4"]}
            >>> def values(text):
            ...     return [float(part.split("=")[1]) for part in text.split(", ")]
            >>> NumberScaler("maxabs").fit_dataset(rows, "text", values).scale
            4.0
        """
        columns = list(dataset.column_names if hasattr(dataset, "column_names") else dataset)
        if column not in columns:
            raise ValueError(f"column {column!r} is not in the dataset; columns: {', '.join(columns)}")
        cells = dataset[column]
        if extract_numbers is None:
            return self.fit(cells)
        values = []
        for text in cells:
            if not isinstance(text, str):
                raise ValueError(f"extract_numbers needs a text column; column {column!r} holds {type(text).__name__}")
            values.extend(item[2] if isinstance(item, tuple) else item for item in extract_numbers(text))
        return self.fit(values)

    def _apply(self, values: Any, inverse: bool, invalid: str = "raise") -> Any:
        """The fitted map (or its inverse) of ``values``, checked: input and output finite, or NaN with ``"nan"``."""
        if invalid not in ("raise", "nan"):
            raise ValueError(f'invalid must be "raise" or "nan", got {invalid!r}')
        scaling = self._fitted()
        what = "inverse_transform input" if inverse else "transform input"
        if isinstance(values, torch.Tensor):
            values = values.detach()
        elif isinstance(values, (bool, str, bytes)) or values is None:
            raise ValueError(f"{what} must be numbers, got {values!r}")
        else:
            try:
                array = np.asarray(values)
            except ValueError as error:
                raise ValueError(f"{what} must be numbers or a regular array of numbers: {error}") from None
            if array.dtype.kind not in "iuf":
                raise ValueError(f"{what} must be numbers or a regular array of numbers, got {values!r}")
        if invalid == "raise":
            finite_values(values, what)
        if not inverse:
            return scaling.transform(values)
        result = scaling.inverse(values)
        if invalid == "raise":
            finite_values(result, "inverse_transform output (the input is too large for this scaler)")
            return result
        if isinstance(result, torch.Tensor):
            return result.nan_to_num(math.nan, math.nan, math.nan)
        marked = np.where(np.isfinite(result), result, math.nan)
        return float(marked) if isinstance(values, (int, float, np.number)) else marked

    def transform(self, values: ArrayLike) -> Any:
        """Map text values to model values: ``(g(x) - shift) / scale``; typed as :meth:`NumberScaling.transform`.

        Example:
            >>> NumberScaler("affine", shift=1.0, scale=2.0).transform([3.0, 5.0]).tolist()
            [1.0, 2.0]
        """
        return self._apply(values, inverse=False)

    def inverse_transform(self, values: ArrayLike, *, invalid: str = "raise") -> Any:
        """Map model values back to text values: ``g⁻¹(y * scale + shift)``.

        ``invalid="raise"`` (default) raises ``ValueError`` on a NaN or infinite input or an
        output too large for float64; ``invalid="nan"`` returns NaN there instead, for model
        predictions that the metrics then count as invalid.

        Example:
            >>> NumberScaler("identity", log=True).inverse_transform([0.0, 400.0, float("nan")], invalid="nan").tolist()
            [0.0, nan, nan]
        """
        return self._apply(values, inverse=True, invalid=invalid)

    def apply_at_numbers(
        self, input_ids: Any, numbers: Any, num_token_ids: Iterable[int], *, inverse: bool = False
    ) -> Any:
        """Transform (or, with ``inverse``, map back) ``numbers`` at number tokens only.

        Other positions keep their value (the tokenizer's neutral 1.0). ``input_ids`` and
        ``numbers`` are tensors or arrays of one shape; the result has the type of ``numbers``
        (float64). The inverse returns NaN where a prediction cannot be mapped back.

        Example:
            >>> scaler = NumberScaler("affine", shift=1.0, scale=2.0)
            >>> scaler.apply_at_numbers([5, 9, 5], [3.0, 1.0, 7.0], num_token_ids=[5]).tolist()
            [1.0, 1.0, 3.0]
        """
        ids = list(num_token_ids)
        if isinstance(numbers, torch.Tensor):
            device = numbers.device
            numbers, where = numbers.double(), torch.where
            is_num = torch.isin(torch.as_tensor(input_ids, device=device), torch.tensor(ids, device=device))
        else:
            numbers, where = np.asarray(numbers, dtype=np.float64), np.where
            is_num = np.isin(np.asarray(input_ids), ids)
        mapped = self.inverse_transform(numbers, invalid="nan") if inverse else self.transform(numbers)
        return where(is_num, mapped, numbers)

    def config_fields(self) -> dict[str, Any]:
        """The model config fields of this (fitted) map: the model then applies it to inputs, labels and predictions.

        Example:
            >>> from hf_numbers import NumberGPT2Config
            >>> fields = NumberScaler("standard").fit([10.0, 20.0, 30.0]).config_fields()
            >>> fields["number_scaling_shift"], NumberGPT2Config(**fields).number_scaling_shift
            (20.0, 20.0)
        """
        return self._fitted().to_config()

    def to_dict(self) -> dict[str, Any]:
        """The scaler's state as a JSON-serialisable dict (read back by :meth:`from_dict`).

        Example:
            >>> NumberScaler("identity").to_dict()["kind"]
            'identity'
        """
        return {
            "format_version": _FORMAT_VERSION,
            "kind": self.kind,
            "log": self.log,
            "max_abs": self.max_abs,
            "shift": self.shift,
            "scale": self.scale,
            "num_fit_values": self.num_fit_values,
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> NumberScaler:
        """Rebuild a scaler from :meth:`to_dict` output.

        Example:
            >>> s = NumberScaler("standard").fit([1.0, 3.0])
            >>> NumberScaler.from_dict(s.to_dict()) == s
            True
        """
        if not isinstance(state, dict) or state.get("format_version") != _FORMAT_VERSION:
            raise ValueError(
                f"not a NumberScaler state of format_version {_FORMAT_VERSION}: "
                f"{state.get('format_version') if isinstance(state, dict) else state!r}"
            )
        missing = {"kind", "log", "max_abs", "shift", "scale", "num_fit_values"} - set(state)
        if missing:
            raise ValueError(f"NumberScaler state lacks {', '.join(sorted(missing))}")
        scaler = cls(state["kind"], **{key: state[key] for key in ("log", "max_abs", "shift", "scale")})
        scaler.num_fit_values = int(state["num_fit_values"])
        return scaler

    def save_pretrained(self, save_directory: str | os.PathLike) -> Path:
        """Write ``number_scaler.json`` into ``save_directory`` (created if needed); return its path.

        Example:
            >>> import tempfile
            >>> NumberScaler("identity").save_pretrained(tempfile.mkdtemp()).name
            'number_scaler.json'
        """
        directory = Path(save_directory)
        if directory.exists() and not directory.is_dir():
            raise ValueError(f"save_directory {str(directory)!r} exists and is not a directory")
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / SCALER_FILE
        path.write_text(json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike) -> NumberScaler:
        """Load from a directory holding ``number_scaler.json``, or from the JSON file itself.

        Example:
            >>> import tempfile
            >>> d = tempfile.mkdtemp()
            >>> _ = NumberScaler("maxabs").fit([2.0, -8.0]).save_pretrained(d)
            >>> NumberScaler.from_pretrained(d).scale
            8.0
        """
        file = Path(path)
        if file.is_dir():
            file = file / SCALER_FILE
        if not file.is_file():
            raise ValueError(f"no {SCALER_FILE} found at {str(path)!r}")
        try:
            state = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{str(file)!r} is not valid JSON: {error}") from None
        return cls.from_dict(state)

    def __eq__(self, other: object) -> bool:
        """Scalers are equal when they define the same map (``num_fit_values`` is not compared)."""
        fields = ("kind", "log", "max_abs", "shift", "scale")
        return isinstance(other, NumberScaler) and all(getattr(self, f) == getattr(other, f) for f in fields)

    def __repr__(self) -> str:
        return (
            f"NumberScaler(kind={self.kind!r}, log={self.log}, max_abs={self.max_abs}, "
            f"shift={self.shift}, scale={self.scale})"
        )
