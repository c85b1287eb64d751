"""The digit lookahead's weight annealed to 0 under transformers' ``Trainer``: what ``--digit_lookahead_schedule
linear`` does in ``hf-numbers train``.

Example:
    >>> trainer = Trainer(model=model, args=args, callbacks=[LinearLookaheadDecay()], ...)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from ..modeling.digit_lookahead import linear_lookahead_scale, scale_digit_lookahead


class LinearLookaheadDecay(TrainerCallback):
    """Before each optimizer step, the lookahead's loss scaled by ``linear_lookahead_scale`` (1 at the first step)."""

    def on_step_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        scale_digit_lookahead(model, linear_lookahead_scale(state.global_step, state.max_steps))
