"""How hard a trained run's digit lookahead asks for each digit ahead: the confidence weight of every place it asks for.

With ``--digit_lookahead_confidence`` the lookahead weighs each digit it asks for ahead by the token head's
probability of that digit where the digit is the next token (``hf_numbers.modeling.digit_lookahead``), to the power
``--digit_lookahead_confidence_power``. This prints, per head, the places asked for per example and the quantiles of
that probability, with its mean at powers 1 and 4, measured with the run's final model on a split's examples, so that
a guess about the weights (a temperature's units written unsurely, a sum's digits surely) is measured, not assumed.
It also prints the mean weight of the path (:func:`path_of`): how sure the model is of the whole way to the digit asked
for, a weight that would see a fork (a temperature's decade, ``49.5`` or ``51.0``) which the digit's own cannot.

    python benchmarks/lookahead_weights.py runs/reproduce/pretrained/temp-digits-bos-lora-ntl-look2-conf4
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import torch
from datasets import DatasetDict
from run_answers import drawn_again
from torch.nn import functional as F

from hf_numbers.data import DataCollatorForNumberCausalLM
from hf_numbers.data.loading import tokenize_dataset
from hf_numbers.modeling.digit_lookahead import probability_of
from hf_numbers.training.pipeline import load_trained

POWERS = (1, 4)
"""The powers whose mean weight is printed."""
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def path_of(own: torch.Tensor, k: int) -> torch.Tensor:
    """At each position ``t`` of ``own`` (``(B, L)``: each position's probability of the digit it writes next), the
    product ``own[:, t] * ... * own[:, t + k]``: the next digit's, the digits between's and that of the digit head
    ``k`` asks for at ``t``.

    Example:
        >>> path_of(torch.tensor([[0.5, 1.0, 0.8]]), 2)
        tensor([[0.4000]])
    """
    length = own.shape[1]
    path = own[:, : length - k]
    for j in range(1, k + 1):
        path = path * own[:, j : length - k + j]
    return path


def place_weights(model: Any, batch: dict[str, torch.Tensor]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per head ``k`` (from 1), the token head's probability, among the ten digits, of each digit head ``k`` asks for
    in ``batch`` (at the places ``DigitLookahead.asked`` gives), where that digit is the next token (the lookahead's
    weight at power 1), and the product of that probability with those of the next digit and the digits between (the
    path's weight).

    Example:
        >>> [(place.mean().item(), path.mean().item()) for place, path in place_weights(model, batch)]  # doctest: +SKIP
        [(0.93, 0.88), (0.93, 0.83)]
    """
    lookahead = model.digit_lookahead
    inputs = {name: value for name, value in batch.items() if name != "labels"}
    targets = F.pad(batch["labels"][:, 1:], (0, 1), value=-100)  # what each position writes next
    with torch.no_grad():
        logits = model(**inputs).logits
    own = probability_of(logits[..., lookahead.digit_ids], lookahead.digits_of(targets))
    return [(own[:, k:][mask], path_of(own, k)[mask]) for k, mask in enumerate(lookahead.asked(targets), start=1)]


def summary(weights: torch.Tensor, paths: torch.Tensor, examples: int) -> str:
    """One head's line: places per example, the probability's quantiles, its mean at each of :data:`POWERS`, the
    path's mean weight."""
    if weights.numel() == 0:
        return "nothing asked"
    quantiles = torch.quantile(weights, torch.tensor(QUANTILES))
    return (f"{weights.numel() / examples:.2f} places an example; probability "
            + ", ".join(f"{q:.0%}: {value:.3f}" for q, value in zip(QUANTILES, quantiles.tolist(), strict=True))
            + "; mean weight " + ", ".join(f"at power {p}: {(weights**p).mean():.3f}" for p in POWERS)
            + f", of the path: {paths.mean():.3f}")


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
    data = drawn_again(setup)
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
        places, paths = zip(*weights, strict=True)
        print(f"head {k}: {summary(torch.cat(places), torch.cat(paths), len(rows))}")


if __name__ == "__main__":
    main()
