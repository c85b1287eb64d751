"""``--fused_token_loss``: the token head's cross-entropy fused with its matrix product (Liger Kernel).

A causal LM's token loss otherwise materialises the logits of a step (batch x length x vocabulary, 1.6
GiB in bf16 for GPT-2 at 16 x 1024) and a float32 copy; Liger's fused linear cross-entropy computes it in
chunks on the GPU. Optional: ``pip install 'hf_numbers[gpu]'`` (liger-kernel, which needs Triton and CUDA).
Used where the model's token head is its output embeddings (a plain linear map, as GPT-2's and Llama's).
Off by default: it gives the unfused loss and gradients on an H200 (tests/test_gpu_step.py), but it has not
been timed yet (it did not trace under torch.compile, so it runs outside the compiled graph, and it reads
its count of labelled tokens on the host, one sync per step).

Example:
    >>> model.fused_token_loss = fused_token_loss(model, args.fused_token_loss, device)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import torch


@torch.compiler.disable  # Liger fails to trace under torch.compile 2.11 (addmm with out_dtype): run it eager
def liger_token_loss(hidden: torch.Tensor, head: torch.nn.Module, targets: torch.Tensor) -> torch.Tensor:
    """Summed cross-entropy of ``head(hidden)`` against ``targets`` (-100 ignored), without the logits."""
    from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy

    return liger_fused_linear_cross_entropy(hidden, head.weight, targets, bias=head.bias, reduction="sum")


def why_not_fused(model: torch.nn.Module, device: torch.device) -> str | None:
    """What keeps ``model`` on ``device`` from the fused token loss (None: nothing)."""
    head = model.get_output_embeddings()
    if device.type != "cuda":
        return f"it runs on CUDA only (this run: {device.type})"
    if importlib.util.find_spec("liger_kernel") is None:
        return "liger-kernel is not installed (pip install 'hf_numbers[gpu]')"
    if not getattr(model, "causal", False) or not isinstance(head, torch.nn.Linear):
        return f"{type(model).__name__} is not a causal LM whose token head is a linear map"
    probe = torch.randn(2, head.in_features, device=head.weight.device, dtype=head.weight.dtype)
    with torch.no_grad():
        if not torch.equal(model._token_logits(probe), head(probe)):
            return f"{type(model).__name__}'s token head does more than its output embeddings"
    return None


def fused_token_loss(model: torch.nn.Module, wanted: bool | str, device: torch.device) -> Callable | None:
    """The fused loss for ``model`` (``wanted``: True, False or ``"auto"``: where it works), or None.

    ``ValueError`` naming the reason where ``wanted`` is True and it cannot be used.
    """
    if wanted is False:
        return None
    reason = why_not_fused(model, device)
    if reason is not None and wanted is True:
        raise ValueError(f"--fused_token_loss true: {reason}")
    return None if reason is not None else liger_token_loss
