"""``NumberScaler``: fits the invertible map between the numbers in the text and the values a
number encoding sees, on training data. The model applies the map itself: it lives in the
model's config (``scaler.config_fields()``, or ``model.set_number_scaling(scaler)``), so a
checkpoint needs nothing else and callers pass and get values in the data's units.

xVal multiplies an embedding by the value, so values must stay in a small range (the
paper kept them within about [-5, 5]); the map brings them there and the model inverts it
on its predictions. The map is

    transform(x) = (g(x) - shift) / scale,    inverse_transform(y) = g⁻¹(y * scale + shift)

where ``g`` is the identity, or with ``log=True`` the signed logarithm
``g(x) = sign(x) * log10(1 + |x|)`` for values spanning many orders of magnitude.
``kind`` chooses ``shift`` and ``scale``:

``"identity"``  shift 0, scale 1 (nothing to fit);
``"standard"``  mean and standard deviation of ``g`` over the fitting values;
``"maxabs"``    shift 0, scale ``max |g(x)| / max_abs`` so the fitted values land in ``[-max_abs, max_abs]``;
``"affine"``    the ``shift`` and ``scale`` you give (nothing to fit).

All arithmetic is float64. Input and output: a Python number gives a float, anything
array-like a float64 ``numpy.ndarray``, a ``torch.Tensor`` a float64 tensor on its device.
NaN or infinite values raise ``ValueError``; so does using an unfitted scaler. A scaler can
still be saved on its own (``save_pretrained`` writes ``number_scaler.json``), but checkpoints
no longer hold one: ``from_pretrained`` moves an older checkpoint's file into the config.
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

from ..modeling.number_scaling import NumberScaling

SCALER_FILE = "number_scaler.json"
KINDS = ("identity", "standard", "maxabs", "affine")
_FORMAT_VERSION = 1

ArrayLike = Any


def _flatten(values: Any, what: str) -> np.ndarray:
    """Flatten numbers, arrays, tensors or ragged nested lists into a float64 vector."""
    if isinstance(values, torch.Tensor):
        return values.detach().to("cpu", torch.float64).numpy().ravel()
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        return values.astype(np.float64).ravel()
    if isinstance(values, (bool, str, bytes)):
        raise ValueError(f"{what} must be numbers, got {values!r}")
    if isinstance(values, (int, float, np.number)):
        return np.array([values], dtype=np.float64)
    try:
        items = list(values)
    except TypeError:
        raise ValueError(f"{what} must be numbers, got {values!r}") from None
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        return np.array(items, dtype=np.float64)
    parts = [_flatten(v, what) for v in items]
    return np.concatenate(parts) if parts else np.empty(0)


def _check_finite(array: np.ndarray, what: str) -> None:
    bad = ~np.isfinite(array)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{what} must be finite numbers; found {int(bad.sum())} NaN or infinite value(s), "
            f"the first ({array[index]}) at flat index {index}"
        )


class NumberScaler:
    """An invertible, fitted, saveable number normalisation (see the module docstring).

    Args:
        kind: ``"identity"``, ``"standard"``, ``"maxabs"`` or ``"affine"``.
        log: apply the signed log ``sign(x) * log10(1 + |x|)`` before the affine map.
        max_abs: for ``"maxabs"``, the bound the fitted values are scaled into (> 0).
        shift, scale: for ``"affine"`` (required there, ``scale`` > 0); set by ``fit`` otherwise.

    Example:
        >>> scaler = NumberScaler("standard").fit([10.0, 20.0, 30.0])
        >>> scaler.transform([10.0, 30.0]).round(4).tolist()
        [-1.2247, 1.2247]
        >>> scaler.inverse_transform(scaler.transform(25.0))
        25.0
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
        if not (isinstance(max_abs, (int, float)) and math.isfinite(max_abs) and max_abs > 0):
            raise ValueError(f"max_abs must be a finite number > 0, got {max_abs!r}")
        self.kind = kind
        self.log = log
        self.max_abs = float(max_abs)
        self.num_fit_values = 0
        if kind == "affine":
            if shift is None or scale is None:
                raise ValueError('kind="affine" needs both shift and scale')
            self._set(shift, scale)
        elif shift is not None or scale is not None:
            if shift is None or scale is None:
                raise ValueError(f"give both shift and scale or neither, got shift={shift!r}, scale={scale!r}")
            self._set(shift, scale)
        elif kind == "identity":
            self._set(0.0, 1.0)
        else:
            self.shift: float | None = None
            self.scale: float | None = None

    def _set(self, shift: Any, scale: Any) -> None:
        shift, scale = float(shift), float(scale)
        if not math.isfinite(shift):
            raise ValueError(f"shift must be a finite number, got {shift}")
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be a finite number > 0, got {scale}")
        self.shift, self.scale = shift, scale

    @property
    def is_fitted(self) -> bool:
        """Whether ``shift`` and ``scale`` are set (always true for identity and affine).

        Example:
            >>> NumberScaler("standard").is_fitted, NumberScaler("identity").is_fitted
            (False, True)
        """
        return self.shift is not None

    def _forward(self, x: np.ndarray) -> np.ndarray:
        return np.sign(x) * np.log1p(np.abs(x)) / math.log(10.0) if self.log else x

    def _backward(self, y: np.ndarray) -> np.ndarray:
        if not self.log:
            return y
        with np.errstate(over="ignore"):
            return np.sign(y) * np.expm1(np.abs(y) * math.log(10.0))

    def fit(self, values: ArrayLike) -> NumberScaler:
        """Fit ``shift`` and ``scale`` on ``values`` (numbers, arrays, tensors, or ragged nested lists).

        A no-op for ``"identity"`` and ``"affine"``. If the values do not vary (standard) or
        are all zero (maxabs), the scale is 1. Returns ``self``.

        Example:
            >>> NumberScaler("maxabs", max_abs=5.0).fit([[1.0, -4.0], [2.0]]).scale
            0.8
        """
        array = _flatten(values, "fit values")
        if array.size == 0:
            raise ValueError("fit needs at least one value, got none")
        _check_finite(array, "fit values")
        self.num_fit_values = int(array.size)
        if self.kind in ("identity", "affine"):
            return self
        fitted = NumberScaling.fit(array, self.kind, log=self.log, max_abs=self.max_abs)  # the model's own fit
        self._set(fitted.shift, fitted.scale)
        return self

    def fit_dataset(
        self,
        dataset: Any,
        column: str = "numbers",
        extract_numbers: Callable[[str], Iterable[Any]] | None = None,
    ) -> NumberScaler:
        """Fit on a ``datasets.Dataset`` column (or any mapping of column name to rows).

        Without ``extract_numbers`` the column holds numbers or lists of numbers (the task
        generators' ``numbers`` column). With it, the column holds text and
        ``extract_numbers(text)`` returns the text's numbers, either as floats or as
        ``(start, end, value)`` spans such as those of ``find_numbers``.

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
        if invalid not in ("raise", "nan"):
            raise ValueError(f'invalid must be "raise" or "nan", got {invalid!r}')
        if not self.is_fitted:
            raise ValueError(f'this NumberScaler("{self.kind}") is not fitted; call fit(...) or fit_dataset(...) first')
        what = "inverse_transform input" if inverse else "transform input"
        if isinstance(values, torch.Tensor):
            array = values.detach().to("cpu", torch.float64).numpy()
        elif isinstance(values, (bool, str, bytes)) or values is None:
            raise ValueError(f"{what} must be numbers, got {values!r}")
        else:
            try:
                array = np.asarray(values)
            except ValueError as error:
                raise ValueError(f"{what} must be numbers or a regular array of numbers: {error}") from None
            if array.dtype.kind not in "iuf":
                raise ValueError(f"{what} must be numbers or a regular array of numbers, got {values!r}")
            array = array.astype(np.float64)
        if invalid == "raise":
            _check_finite(array.ravel(), what)
        if inverse:
            with np.errstate(invalid="ignore", over="ignore"):
                result = self._backward(array * self.scale + self.shift)
            if invalid == "raise":
                _check_finite(result.ravel(), "inverse_transform output (the input is too large for this scaler)")
            else:
                result = np.where(np.isfinite(result), result, np.nan)
        else:
            result = (self._forward(array) - self.shift) / self.scale
        if isinstance(values, torch.Tensor):
            return torch.from_numpy(np.ascontiguousarray(result)).to(values.device)
        if isinstance(values, (int, float, np.number)):
            return float(result)
        return result

    def transform(self, values: ArrayLike) -> Any:
        """Map text values to model values: ``(g(x) - shift) / scale``.

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
            >>> round(NumberScaler("identity", log=True).inverse_transform(2.0), 9)
            99.0
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
            is_num = torch.isin(
                torch.as_tensor(input_ids, device=numbers.device), torch.tensor(ids, device=numbers.device)
            )
            numbers = numbers.double()
            mapped = self.inverse_transform(numbers, invalid="nan") if inverse else self.transform(numbers)
            return torch.where(is_num, mapped, numbers)
        numbers = np.asarray(numbers, dtype=np.float64)
        is_num = np.isin(np.asarray(input_ids), ids)
        mapped = self.inverse_transform(numbers, invalid="nan") if inverse else self.transform(numbers)
        return np.where(is_num, mapped, numbers)

    def config_fields(self) -> dict[str, Any]:
        """The model config fields of this (fitted) map: the model then applies it to inputs, labels and predictions.

        Example:
            >>> from hf_numbers import NumberGPT2Config
            >>> fields = NumberScaler("standard").fit([10.0, 20.0, 30.0]).config_fields()
            >>> fields["number_scaling_shift"], NumberGPT2Config(**fields).number_scaling_shift
            (20.0, 20.0)
        """
        if not self.is_fitted:
            raise ValueError(f'this NumberScaler("{self.kind}") is not fitted; call fit(...) or fit_dataset(...) first')
        return NumberScaling(self.shift, self.scale, self.log).to_config()

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
        has_params = state["shift"] is not None or state["scale"] is not None
        scaler = cls(
            state["kind"],
            log=state["log"],
            max_abs=state["max_abs"],
            shift=state["shift"] if has_params else None,
            scale=state["scale"] if has_params else None,
        )
        scaler.num_fit_values = int(state["num_fit_values"])
        return scaler

    def save_pretrained(self, save_directory: str | os.PathLike) -> Path:
        """Write ``number_scaler.json`` into ``save_directory`` (created if needed); return its path.

        Example:
            >>> import tempfile
            >>> path = NumberScaler("identity").save_pretrained(tempfile.mkdtemp())
            >>> path.name
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
