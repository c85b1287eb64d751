"""How hard a trained run's digit lookahead asks for each digit ahead: the confidence weight of every place it asks for.

With ``--digit_lookahead_confidence`` the lookahead weighs each digit it asks for ahead by the token head's
probability of that digit where the digit is the next token (``hf_numbers.modeling.digit_lookahead``), to the power
``--digit_lookahead_confidence_power``. This prints, per head, the places asked for per example and the quantiles of
that probability, with its mean at powers 1 and 4, measured with the run's final model on a split's examples, so that
a guess about the weights (a temperature's units written unsurely, a sum's digits surely) is measured, not assumed.

    python benchmarks/lookahead_weights.py runs/reproduce/pretrained/temp-digits-bos-lora-ntl-look2-conf4
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import torch
from datasets import DatasetDict
from torch.nn import functional as F

from hf_numbers.data import DataCollatorForNumberCausalLM, load_task, parse_task_options
from hf_numbers.data.loading import tokenize_dataset
from hf_numbers.modeling.digit_lookahead import probability_of
from hf_numbers.training.pipeline import load_trained

POWERS = (1, 4)
"""The powers whose mean weight is printed."""
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def place_weights(model: Any, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """Per head ``k`` (from 1), the token head's probability, among the ten digits, of each digit head ``k`` asks for
    in ``batch`` (at the places ``DigitLookahead.asked`` gives), where that digit is the next token: the lookahead's
    weight at power 1.

    Example:
        >>> [weights.mean().item() for weights in place_weights(model, batch)]  # doctest: +SKIP
        [0.93, 0.93]
    """
    lookahead = model.digit_lookahead
    inputs = {name: value for name, value in batch.items() if name != "labels"}
    targets = F.pad(batch["labels"][:, 1:], (0, 1), value=-100)  # what each position writes next
    with torch.no_grad():
        logits = model(**inputs).logits
    own = probability_of(logits[..., lookahead.digit_ids], lookahead.digits_of(targets))
    return [own[:, k:][mask] for k, mask in enumerate(lookahead.asked(targets), start=1)]


def summary(weights: torch.Tensor, examples: int) -> str:
    """One head's line: places per example, the probability's quantiles, its mean at each of :data:`POWERS`."""
    if weights.numel() == 0:
        return "nothing asked"
    quantiles = torch.quantile(weights, torch.tensor(QUANTILES))
    return (f"{weights.numel() / examples:.2f} places an example; probability "
            + ", ".join(f"{q:.0%}: {value:.3f}" for q, value in zip(QUANTILES, quantiles.tolist(), strict=True))
            + "; mean weight " + ", ".join(f"at power {p}: {(weights**p).mean():.3f}" for p in POWERS))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run folder of hf-numbers train (its final/ and training_args.json)")
    parser.add_argument("--split", default="validation")
    parser.add_argument("--examples", type=int, default=64, help="the split's first examples to read")
    parser.add_argument("--batch_size", type=int, default=16)
    args = parser.parse_args(argv)
    setup = json.loads((args.run / "training_args.json").read_text())
    model, tokenizer = load_trained(args.run / "final")
    if getattr(model, "digit_lookahead", None) is None:
        raise SystemExit(f"{args.run}: its model has no digit lookahead (trained with --digit_lookahead 0)")
    data = load_task(setup["task"], seed=setup["data_seed"], train_size=setup["train_size"],
                     eval_size=setup["eval_size"], options=parse_task_options(setup.get("task_options")))  # fmt: skip
    rows = data[args.split].select(range(min(args.examples, len(data[args.split]))))
    tokenized = tokenize_dataset(DatasetDict({args.split: rows}), tokenizer, setup["max_length"], end_with_eos=True)
    collator = DataCollatorForNumberCausalLM(tokenizer, completion_only=setup["completion_only"])
    heads: list[list[torch.Tensor]] = []
    model.eval()
    for start in range(0, len(rows), args.batch_size):
        batch = collator([tokenized[args.split][i] for i in range(start, min(start + args.batch_size, len(rows)))])
        heads.append(place_weights(model, batch))
    print(f"{args.run.name}, {args.split}, {len(rows)} examples (power trained with: "
          f"{model.config.digit_lookahead_confidence_power if model.config.digit_lookahead_confidence else 'none'})")
    for k, weights in enumerate(zip(*heads, strict=True), start=1):
        print(f"head {k}: {summary(torch.cat(weights), len(rows))}")


if __name__ == "__main__":
    main()
