"""A stop at the first non-finite loss that costs the GPU no host sync per step.

Checking a loss on the host (``.tolist()``) makes the CPU wait for the GPU every step. With a fused AdamW
the check moves onto the device: the step's ``found_inf`` (read by the fused kernel, as under a gradient
scaler) is set from the losses of every process, so a non-finite step, and every step after it, changes
no weight and no optimizer state; the guard raises the next time the loop reads the device anyway (a log,
an evaluation, a checkpoint, the end). Another optimizer is checked at once, one sync per step.

Example:
    >>> guard = FiniteGuard(optimizer, accelerator)  # doctest: +SKIP
    >>> guard.step(step_losses, step)  # doctest: +SKIP
"""

from __future__ import annotations

import math

import torch
from accelerate import Accelerator

LOSS_NAMES = ("loss", "token_loss", "number_loss")


def require_finite(losses: dict[str, float], step: int, where: str) -> None:
    """Stop training with a ``FloatingPointError`` naming the losses that are NaN or infinite."""
    bad = [name for name, value in losses.items() if not math.isfinite(value)]
    if bad:
        shown = ", ".join(f"{name} {value:.6g}" for name, value in losses.items())
        raise FloatingPointError(
            f"step {step}: {' and '.join(bad)} not finite {where} ({shown}); training stopped before this step "
            "was applied or saved. Lower --learning_rate, clip with --max_grad_norm, or look for extreme values "
            "in the data"
        )


class FiniteGuard:
    """Stops training at the first step whose losses (on any process) are NaN or infinite; see the module."""

    def __init__(self, optimizer: torch.optim.Optimizer, accelerator: Accelerator):
        self.accelerator = accelerator
        self.optimizer = getattr(optimizer, "optimizer", optimizer)  # Accelerate's wrapper holds the real one
        self.on_device = bool(self.optimizer.defaults.get("fused"))
        device = accelerator.device
        self.stopped = torch.zeros((), dtype=torch.float32, device=device)  # the fused kernel's found_inf
        self.first = torch.full((4,), math.nan, dtype=torch.float64, device=device)  # step, then its losses

    def step(self, step_losses: torch.Tensor, step: int) -> None:
        """Look at this optimizer step's summed losses before it is applied (``step`` counts from 1)."""
        if not self.on_device:
            for process, row in enumerate(self.accelerator.gather(step_losses[None]).tolist()):
                require_finite(dict(zip(LOSS_NAMES, row)), step, f"on process {process}")
            return
        bad = (~torch.isfinite(step_losses).all()).to(torch.float32)
        if self.accelerator.num_processes > 1:  # any process's: the replicas must skip the same steps
            bad = self.accelerator.reduce(bad, reduction="sum").clamp(max=1)
        newly = (bad > 0) & (self.stopped == 0)
        # a fill on the device: new_tensor([step]) would be a blocking copy from the host, one sync a step
        step_number = torch.full((1,), step, dtype=step_losses.dtype, device=step_losses.device)
        self.first = torch.where(newly, torch.cat([step_number, step_losses]), self.first)
        self.stopped = torch.maximum(self.stopped, bad)
        self.optimizer.found_inf = self.stopped

    def check(self) -> None:
        """Raise for the first non-finite step seen (a host sync: call it where the loop reads the device)."""
        if not self.on_device:
            return
        rows = self.accelerator.gather(self.first[None]).tolist()  # a step is recorded on every process at once
        for process, (step, *losses) in enumerate(rows):
            if not math.isnan(step):
                require_finite(dict(zip(LOSS_NAMES, losses)), int(step), f"on process {process}")
        if any(not math.isnan(step) for step, *_ in rows):  # a safety net: the process at fault raised above
            raise FloatingPointError("training stopped: a step's losses were not finite on another process")
