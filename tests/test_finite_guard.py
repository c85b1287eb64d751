"""The GPU step's safeguards, on the CPU: the stop at the first non-finite loss without a host sync per step
(``FiniteGuard``, used with a fused AdamW), the fused token loss's choice (``--fused_token_loss``) and the warning
for xVal under bf16. The CUDA side: tests/test_gpu_step.py."""

from __future__ import annotations

import math

import pytest
import torch
from accelerate import Accelerator
from accelerate.state import AcceleratorState
from model_helpers import CAUSAL, ENCODINGS, MASKED, tiny_model
from torch.utils._python_dispatch import TorchDispatchMode

from hf_numbers.training.finite_guard import FiniteGuard
from hf_numbers.training.fused_loss import fused_token_loss, why_not_fused

FINITE = torch.tensor([2.0, 1.5, 0.5], dtype=torch.float64)
NAN_NUMBER_LOSS = torch.tensor([math.nan, 1.5, math.nan], dtype=torch.float64)


def weights_after(steps: list[torch.Tensor], fused: bool) -> tuple[list[torch.Tensor], FiniteGuard, torch.Tensor]:
    """Every step's weight of a 3-weight model trained with AdamW behind a guard, given each step's losses."""
    weight = torch.nn.Parameter(torch.ones(3))
    optimizer = torch.optim.AdamW([weight], lr=0.1, fused=fused)
    guard = FiniteGuard(optimizer, Accelerator(cpu=True))
    seen = []
    for step, losses in enumerate(steps, start=1):
        weight.grad = torch.full((3,), float(losses[0]))
        guard.step(losses, step)
        optimizer.step()
        seen.append(weight.detach().clone())
    return seen, guard, weight


def test_a_fused_optimizer_skips_the_non_finite_step_and_every_later_one_on_the_device() -> None:
    seen, guard, _ = weights_after([FINITE, FINITE, NAN_NUMBER_LOSS, FINITE], fused=True)
    assert guard.on_device
    assert not torch.equal(seen[0], seen[1])  # finite steps move the weights
    assert torch.equal(seen[1], seen[2]) and torch.equal(seen[1], seen[3])  # nothing after the NaN step
    with pytest.raises(FloatingPointError, match=r"step 3: loss and number_loss not finite on process 0 "
                                                 r"\(loss nan, token_loss 1.5, number_loss nan\)"):
        guard.check()


def test_finite_steps_pass_the_check_and_train_as_without_a_guard() -> None:
    seen, guard, _ = weights_after([FINITE] * 3, fused=True)
    guard.check()
    weight = torch.nn.Parameter(torch.ones(3))
    optimizer = torch.optim.AdamW([weight], lr=0.1, fused=True)
    for _ in range(3):
        weight.grad = torch.full((3,), 2.0)
        optimizer.step()
    assert torch.equal(seen[-1], weight.detach())


class HostTraffic(TorchDispatchMode):
    """Records the operations that move data between host and device on a GPU: a tensor made from host data
    (``lift_fresh``: ``torch.tensor``, ``new_tensor``; a blocking copy on CUDA) and a value read on the host
    (``_local_scalar_dense``: ``.item()``, ``float(t)``, ``.tolist()``)."""

    HOST_OPS = ("aten.lift_fresh", "aten._local_scalar_dense")

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if str(func).startswith(self.HOST_OPS):
            self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def test_a_fused_guards_step_moves_nothing_between_host_and_device() -> None:
    """The CPU twin of tests/test_gpu_step.py's sync count (on an H200 it found one sync a step: the step number
    was a ``new_tensor``)."""
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.ones(3))], lr=0.1, fused=True)
    guard = FiniteGuard(optimizer, Accelerator(cpu=True))
    with HostTraffic() as traffic:
        for step in (1, 2, 3):
            guard.step(NAN_NUMBER_LOSS if step == 2 else FINITE, step)
    assert traffic.seen == []
    with pytest.raises(FloatingPointError, match="step 2: "):
        guard.check()


def test_another_optimizer_is_checked_at_once() -> None:
    with pytest.raises(FloatingPointError, match="step 2: loss and number_loss not finite on process 0"):
        weights_after([FINITE, NAN_NUMBER_LOSS], fused=False)


def test_the_fused_token_loss_is_chosen_only_where_it_can_run() -> None:
    causal, masked = tiny_model(CAUSAL[0], ENCODINGS[0]), tiny_model(MASKED[0], ENCODINGS[0])
    cpu = torch.device("cpu")
    assert fused_token_loss(causal, "auto", cpu) is None and fused_token_loss(causal, False, cpu) is None
    with pytest.raises(ValueError, match=r"--fused_token_loss true: it runs on CUDA only \(this run: cpu\)"):
        fused_token_loss(causal, True, cpu)
    cuda = torch.device("cuda")
    if why_not_fused(masked, cuda).startswith("liger-kernel"):  # not installed: the hint to install it
        assert "pip install 'hf_numbers[gpu]'" in why_not_fused(masked, cuda)
    else:
        assert "is not a causal LM whose token head is a linear map" in why_not_fused(masked, cuda)


def test_low_precision_xval_training_warns_that_values_lose_digits(caplog: pytest.LogCaptureFixture) -> None:
    """bf16 keeps about 3 significant digits of a value that rides an embedding's size (measured: 31.4% -> 10.0%)."""
    from hf_numbers.training import NumberTrainingArguments
    from hf_numbers.training.loop import make_accelerator

    for encoding, warned in (("xval", True), ("fone", False)):
        caplog.clear()
        AcceleratorState._reset_state(reset_partial_state=True)  # a new precision: Accelerate's state is shared
        try:
            with caplog.at_level("WARNING"):
                args = NumberTrainingArguments(number_encoding=encoding, mixed_precision="bf16", use_cpu=True)
                make_accelerator(args)
        finally:
            AcceleratorState._reset_state(reset_partial_state=True)
        assert ("keeps to about 3 significant digits" in caplog.text) is warned
