"""The digit lookahead's weight annealed to 0 under transformers' ``Trainer``: what ``--digit_lookahead_schedule
linear`` does in ``hf-numbers train``.

Example:
    >>> trainer = Trainer(model=model, args=args, callbacks=[LinearLookaheadDecay()], ...)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from ..modeling.digit_lookahead import scale_digit_lookahead


class LinearLookaheadDecay(TrainerCallback):
    """Before each optimizer step, the lookahead's loss scaled by ``1 - step / max_steps`` (1 at the first step)."""

    def on_step_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        scale_digit_lookahead(model, 1 - state.global_step / state.max_steps)
