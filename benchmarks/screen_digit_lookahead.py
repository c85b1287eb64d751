"""Screen: does predicting a number's next digits ahead teach a model written-order carries faster?

Written left to right, a sum's digit needs the carry from the places below it, which the model writes after it.
This screen adds a multi-token-prediction loss (Gloeckle et al. 2024) on digits: at each position whose next
``--lookahead`` labels are digits of one number, linear heads (one per offset ``j``, starting at zero) read the
final hidden state, and the tied LM head's ten digit rows score the digit ``j`` places after the next token, so
the trunk is asked for the lower places' digits where it writes a higher one. The heads are dropped after training:
what the model writes is scored as any row's. A screen, not a set-up: the library has no flag for it; this script
runs ``hf-numbers train`` with the loss patched into its loop (``--number_token_loss ntl`` is required: the heads
read the hidden state the token head reads, and the digit ids come from NTL's tokenizer).

    python benchmarks/screen_digit_lookahead.py --lookahead 2 --weight 1.0 -- <hf-numbers train flags>
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import torch
import torch.nn.functional as F

from hf_numbers import cli
from hf_numbers.training import loop
from hf_numbers.training.number_token_loss import DIGITS, NumberTokenLoss

_STATE: dict[str, Any] = {}


def lookahead_loss(hidden: torch.Tensor, labels: torch.Tensor, heads: torch.nn.ModuleList, digit_ids: torch.Tensor,
                   digit_rows: torch.Tensor) -> torch.Tensor:
    """Mean over offsets ``j`` of the cross-entropy of ``labels[t + 1 + j]`` among the ten digits, from
    ``heads[j - 1](hidden[t]) @ digit_rows.T``, at every ``t`` whose labels ``t + 1 .. t + 1 + j`` are all digits.

    Example:
        >>> lookahead_loss(hidden, batch["labels"], heads, ids, lm_head.weight[ids])  # doctest: +SKIP
    """
    is_digit = torch.isin(labels, digit_ids)
    digit_index = (labels.unsqueeze(-1) == digit_ids).float().argmax(-1)
    length, total = labels.shape[1], hidden.new_zeros((), dtype=torch.float32)
    for j, head in enumerate(heads, start=1):
        span = is_digit[:, 1 + j :]
        for i in range(1, j + 1):
            span = span & is_digit[:, 1 + j - i : length - i]
        if span.any():
            logits = head(hidden[:, : length - 1 - j][span]).float() @ digit_rows.float().T
            total = total + F.cross_entropy(logits, digit_index[:, 1 + j :][span])
    return total / len(heads)


def patch(lookahead: int, weight: float) -> None:
    """Patch ``hf-numbers train``'s loop: heads attached to the model before its optimizer is built, the loss
    added to every batch's (training and evaluation)."""
    original_init, original_groups, original_losses = NumberTokenLoss.__init__, loop.parameter_groups, loop._losses

    def init(self: NumberTokenLoss, tokenizer: Any, vocab_size: int, causal: bool) -> None:
        original_init(self, tokenizer, vocab_size, causal)
        vocab = tokenizer.get_vocab()
        _STATE["digit_ids"] = torch.tensor([vocab[digit] for digit in DIGITS])

    def groups(model: torch.nn.Module, args: Any) -> list[dict[str, Any]]:
        lm_head = model.get_output_embeddings()
        width = lm_head.weight.shape[1]
        heads = torch.nn.ModuleList(torch.nn.Linear(width, width, bias=False) for _ in range(lookahead))
        for head in heads:
            torch.nn.init.zeros_(head.weight)
        model.digit_lookahead_heads = heads.to(lm_head.weight.device)
        _STATE.update(heads=model.digit_lookahead_heads, lm_head=lm_head)
        return original_groups(model, args)

    def losses(model: Any, batch: dict[str, torch.Tensor], args: Any, number_token_loss: Any) -> list[torch.Tensor]:
        if number_token_loss is None:
            raise SystemExit("screen_digit_lookahead.py needs --number_token_loss ntl")
        captured: dict[str, torch.Tensor] = {}
        hook = _STATE["lm_head"].register_forward_pre_hook(lambda module, inputs: captured.update(hidden=inputs[0]))
        try:
            parts = original_losses(model, batch, args, number_token_loss)
        finally:
            hook.remove()
        ids = _STATE["digit_ids"].to(batch["labels"].device)
        extra = lookahead_loss(captured["hidden"], batch["labels"], _STATE["heads"], ids, _STATE["lm_head"].weight[ids])
        return [parts[0] + weight * extra, *parts[1:]]

    NumberTokenLoss.__init__, loop.parameter_groups, loop._losses = init, groups, losses


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lookahead", type=int, default=2, help="Digits ahead of the next one, one head each.")
    parser.add_argument("--weight", type=float, default=1.0, help="Weight of the lookahead loss (a mean over heads).")
    options = parser.parse_args(argv[:split])
    patch(options.lookahead, options.weight)
    cli.main(["train", *argv[split + 1 :]])


if __name__ == "__main__":
    main()
