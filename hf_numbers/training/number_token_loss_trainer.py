"""``transformers.Trainer`` with the number-token loss added, for ``Trainer`` users (``hf-numbers train`` adds NTL in
its own loop). A module of its own: importing ``Trainer`` loads libraries that ``import hf_numbers`` and the
command's help do not (tests/test_startup.py), so ``hf_numbers.training`` loads it on first use."""

from __future__ import annotations

from typing import Any

from transformers import Trainer

from .number_token_loss import NumberTokenLoss

__all__ = ["NumberTokenLossTrainer"]


class NumberTokenLossTrainer(Trainer):
    """``transformers.Trainer`` whose loss is the model's plus ``number_token_loss_weight`` times NTL (training and
    evaluation), as ``hf-numbers train --number_token_loss ntl`` adds it. The labels stay in the model's inputs
    (value-aware digits read the prompt from them).

    Example:
        >>> ntl = NumberTokenLoss(tokenizer, vocab_size=model.config.vocab_size, causal=True)  # doctest: +SKIP
        >>> trainer = NumberTokenLossTrainer(model=model, args=args, number_token_loss=ntl, ...)  # doctest: +SKIP
    """

    def __init__(self, *args: Any, number_token_loss: NumberTokenLoss, number_token_loss_weight: float = 0.3,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.number_token_loss, self.number_token_loss_weight = number_token_loss, number_token_loss_weight

    def compute_loss(
        self, model: Any, inputs: dict[str, Any], return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        """The model's loss (its token loss) plus the weighted NTL over the digit labels."""
        outputs = model(**inputs)
        loss = outputs.loss + self.number_token_loss_weight * self.number_token_loss(outputs.logits, inputs["labels"])
        return (loss, outputs) if return_outputs else loss
