"""The random states a training process draws from (Python, NumPy, torch CPU and every CUDA device) as
tensors for a safetensors file plus a JSON-able dict for its metadata: saved without pickle.

Example:
    >>> import random
    >>> tensors, extra = capture_rng_state()
    >>> first = random.random()
    >>> restore_rng_state(tensors, extra, cuda=False)
    >>> random.random() == first
    True
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

_PYTHON = "python_random"
_NUMPY = "numpy_random"
_TORCH = "torch_cpu"
_CUDA = "torch_cuda_"


def capture_rng_state() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The current random states: tensors (state words and generator bytes) and their scalar companions."""
    version, words, gauss_next = random.getstate()
    kind, keys, position, has_gauss, cached_gaussian = np.random.get_state()
    tensors = {
        _PYTHON: torch.tensor(words, dtype=torch.int64),
        _NUMPY: torch.from_numpy(keys.astype(np.int64)),
        _TORCH: torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        tensors |= {f"{_CUDA}{i}": state for i, state in enumerate(torch.cuda.get_rng_state_all())}
    extra = {
        "python": [version, gauss_next],
        "numpy": [kind, int(position), int(has_gauss), float(cached_gaussian)],
    }
    return tensors, extra


def restore_rng_state(tensors: dict[str, torch.Tensor], extra: dict[str, Any], cuda: bool) -> None:
    """Set the random states captured by :func:`capture_rng_state`; with ``cuda``, the CUDA devices' too.

    Raises ``ValueError`` naming what is missing or malformed (nothing is set then), e.g. CUDA
    states for another number of devices.
    """
    missing = [key for key in (_PYTHON, _NUMPY, _TORCH) if key not in tensors] + [
        key for key in ("python", "numpy") if key not in extra
    ]
    if missing:
        raise ValueError(f"no {', '.join(missing)} state")
    count = sum(key.startswith(_CUDA) for key in tensors)
    if cuda and count != torch.cuda.device_count():
        raise ValueError(f"{count} CUDA generator states for {torch.cuda.device_count()} CUDA devices")
    try:
        version, gauss_next = extra["python"]
        python_state = (version, tuple(int(w) for w in tensors[_PYTHON].tolist()), gauss_next)
        kind, position, has_gauss, cached_gaussian = extra["numpy"]
        numpy_state = (kind, tensors[_NUMPY].numpy().astype(np.uint32), position, has_gauss, cached_gaussian)
        # Set each on a scratch generator first, so that a malformed state changes nothing.
        random.Random().setstate(python_state)
        np.random.RandomState().set_state(numpy_state)
        torch.Generator().set_state(tensors[_TORCH])
        cuda_states = [tensors[f"{_CUDA}{i}"] for i in range(count)] if cuda else []
        for i, state in enumerate(cuda_states):
            torch.Generator(f"cuda:{i}").set_state(state)
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise ValueError(f"malformed random state ({error})") from error
    random.setstate(python_state)
    np.random.set_state(numpy_state)
    torch.set_rng_state(tensors[_TORCH])
    if cuda:
        torch.cuda.set_rng_state_all(cuda_states)
