"""The fast GPU step (``pytest -m gpu``): compiled, fused, no host sync per step, exact resume, the NaN stop.

``hf-numbers train`` on CUDA compiles its step, runs ``loss_only`` over every position (no gather), a fused
AdamW that skips a non-finite step on the device (``FiniteGuard``), and with ``--fused_token_loss true`` Liger
Kernel's fused token loss. These tests train the tiny look-up run on the GPU (bf16) and check each against the eager
way within bf16's tolerance; every test is skipped where torch sees no CUDA device.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest
import torch
from model_helpers import CAUSAL, ENCODINGS, random_batch, tiny_args, tiny_model
from safetensors.torch import load_file
from transformers import AutoConfig

from hf_numbers.data.collators import DataCollatorForNumberCausalLM
from hf_numbers.training import build_model, run_training, train_model
from hf_numbers.training.checkpoints import list_checkpoints
from hf_numbers.training.fused_loss import liger_token_loss

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch sees none)"),
]
LOSSES = ("loss", "token_loss", "number_loss")


def train_on_gpu(lookup: tuple, folder: Path, poison_after: int = 0, **overrides) -> tuple[torch.nn.Module, list[dict]]:
    """The tiny look-up run on CUDA under bf16, padded to one shape (one compilation); ``poison_after``: the number
    head's output weights become NaN when batch ``poison_after + 1`` is fetched (Accelerate looks one ahead)."""
    tokenizer, data = lookup
    fields = dict(backbone=CAUSAL[0], output_dir=str(folder), max_steps=6, logging_steps=1, save_steps=0,
                  eval_steps=0, use_cpu=False, mixed_precision="bf16")
    args = tiny_args(**{**fields, **overrides})
    torch.manual_seed(0)
    model = build_model(args, tokenizer)
    plain = DataCollatorForNumberCausalLM(tokenizer, pad_to_multiple_of=64)
    calls = []

    def collate(features):
        calls.append(1)
        if len(calls) == poison_after + 1 and poison_after:
            model.number_encoding.mlp[-1].weight.data.fill_(float("nan"))
        return plain(features)

    torch._dynamo.reset()
    trained, result = train_model(model, data["train"], collate, args)
    return trained, [record for record in result.log_history if "loss" in record]


def test_the_compiled_step_trains_with_the_losses_of_the_eager_step(lookup: tuple, tmp_path: Path) -> None:
    _, eager = train_on_gpu(lookup, tmp_path / "eager", torch_compile=False, fused_token_loss=False)
    _, compiled = train_on_gpu(lookup, tmp_path / "compiled", torch_compile=True)
    for name in LOSSES:
        assert [r[name] for r in compiled] == pytest.approx([r[name] for r in eager], rel=2e-2, abs=1e-3), name


def sync_warnings(run) -> int:
    """How many synchronising CUDA calls ``run()`` made (torch's sync debug mode)."""
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


def test_a_training_step_makes_no_host_sync(lookup: tuple, tmp_path: Path) -> None:
    """Twice the steps, the same syncs (the ones at the single log record, the check and the end): none per step.
    Without the fused token loss: Liger's kernel reads its count of labelled tokens on the host (``.item()``)."""
    counts = [
        sync_warnings(lambda steps=steps: train_on_gpu(lookup, tmp_path / str(steps), max_steps=steps,
                                                       logging_steps=steps, torch_compile=True,
                                                       fused_token_loss=False))
        for steps in (6, 12)
    ]
    assert counts[0] == counts[1], counts


def test_a_compiled_run_resumes_where_it_stopped(lookup: tuple, tmp_path: Path) -> None:
    whole, _ = train_on_gpu(lookup, tmp_path / "whole", max_steps=4, save_steps=2, torch_compile=True)
    train_on_gpu(lookup, tmp_path / "cut", max_steps=2, save_steps=2, torch_compile=True)
    resumed, _ = train_on_gpu(lookup, tmp_path / "cut", max_steps=4, save_steps=2, torch_compile=True,
                              resume_from_checkpoint="latest")
    for (name, expected), got in zip(whole.state_dict().items(), resumed.state_dict().values()):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, msg=name)  # CUDA's atomics: not bit for bit


def test_a_non_finite_step_stops_the_gpu_run_before_it_is_applied_or_saved(lookup: tuple, tmp_path: Path) -> None:
    """The fused AdamW skips step 3 on the device; the check before checkpoint-3 names it (no per-step sync)."""
    with pytest.raises(FloatingPointError, match=r"step 3: loss and number_loss not finite on process 0"):
        train_on_gpu(lookup, tmp_path / "run", poison_after=3, save_steps=1, torch_compile=True)
    saved = list_checkpoints(tmp_path / "run")
    assert [c.name for c in saved] == ["checkpoint-1", "checkpoint-2"]
    assert all(t.isfinite().all() for t in load_file(saved[-1] / "model.safetensors").values())


@pytest.mark.skipif(importlib.util.find_spec("liger_kernel") is None, reason="liger-kernel is not installed")
@pytest.mark.parametrize("backbone", CAUSAL)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_the_fused_token_loss_gives_the_unfused_loss_and_gradients(backbone: str, dtype: torch.dtype) -> None:
    model = tiny_model(backbone, ENCODINGS[0]).cuda().train()
    batch = {key: value.cuda() for key, value in random_batch(backbone).items()}
    results = []
    for fused in (None, liger_token_loss):
        model.fused_token_loss = fused
        model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=dtype != torch.float32):
            out = model(**batch, loss_only=True)
        out.loss.backward()
        results.append((out.token_loss.item(), {n: p.grad.clone() for n, p in model.named_parameters()
                                                if p.grad is not None}))
    (plain, plain_grads), (fused, fused_grads) = results
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    assert fused == pytest.approx(plain, rel=tolerance)
    for name, gradient in plain_grads.items():
        torch.testing.assert_close(fused_grads[name], gradient, rtol=tolerance, atol=tolerance, msg=name)


def test_hf_numbers_train_pads_a_new_models_vocabulary_to_64_on_cuda(tmp_path: Path) -> None:
    summary = run_training(tiny_args(backbone=CAUSAL[0], output_dir=str(tmp_path), max_steps=2, save_steps=0,
                                     eval_steps=0, use_cpu=False))
    config = AutoConfig.from_pretrained(tmp_path / "final")
    assert config.vocab_size % 64 == 0 and summary["steps"] == 2
