"""Training-step throughput of the number models relative to their plain backbones.

For each backbone of the table (GPT-2, BERT, RoBERTa, Llama, ModernBERT) and each encoding
with a number module, times forward + backward of ``Number*`` and of the plain transformers
model of the same size (same vocabulary size: the last ids are the ``[NUM]`` tokens) on the
same batch (the plain model sees ordinary word ids where the number model sees ``[NUM]``), and
reports tokens/s and the ratio number/plain (target >= 0.97, issue 30). The two models are timed in alternating
rounds (first one, then the other first) and the median round is kept, so that drifts of a
busy machine hit both alike.

Writes a markdown table to ``benchmarks/results/training_throughput.md`` and prints it.

By default the steps run on one thread and are timed by the process's CPU time, which other
jobs on a shared machine hardly disturb; ``--clock wall --threads 0`` gives elapsed-time
throughput with torch's default threads instead.

Example (the small default takes a minute or two on a 2-core CPU)::

    .venv/bin/python benchmarks/bench_training_throughput.py
    .venv/bin/python benchmarks/bench_training_throughput.py --hidden 256 --layers 6 --seq-len 256
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import torch
from bench_common import CLOCKS, add_common_arguments, alternating_rounds, ratio_spread, write_table
from transformers import PreTrainedModel

from hf_numbers import BACKBONES

RESULTS = Path(__file__).parent / "results" / "training_throughput.md"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_common_arguments(parser, RESULTS)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--number-fraction", type=float, default=0.1, help="share of tokens that are numbers")
    parser.add_argument("--steps", type=int, default=1, help="training steps per round")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps per model")
    parser.add_argument("--backbones", nargs="+", default=list(BACKBONES), choices=list(BACKBONES))
    parser.add_argument(
        "--loss-only", action="store_true",
        help="the number model computes its heads only where the loss reads them (forward's loss_only, as "
        "hf-numbers train does); the plain model computes every position",
    )
    return parser.parse_args()


def sizes(backbone: str, args: argparse.Namespace) -> dict:
    """Config fields of both models: the backbone's sizes, a padding id (RoBERTa's positions start after it) and
    special ids inside the vocabulary (the number configs refuse GPT-2's 50256 in a smaller one)."""
    special = dict.fromkeys(("bos_token_id", "eos_token_id", "cls_token_id", "sep_token_id"), 2)
    return {**BACKBONES[backbone].size_config(args.hidden, args.layers, args.heads, args.seq_len), "pad_token_id": 1,
            **special}


def batches(backbone: str, num_ids: list[int], args: argparse.Namespace) -> tuple[dict, dict]:
    """The same batch twice: with ordinary word ids (plain model) and with number tokens + values."""
    generator = torch.Generator().manual_seed(0)
    shape = (args.batch, args.seq_len)
    ids = torch.randint(5, min(num_ids), shape, generator=generator)
    is_num = torch.rand(shape, generator=generator) < args.number_fraction
    values = (torch.rand(shape, generator=generator, dtype=torch.float64) * 2000 - 1000).round(decimals=2)
    which = torch.randint(len(num_ids), shape, generator=generator)
    number_ids = torch.where(is_num, torch.tensor(num_ids)[which], ids)
    numbers = torch.where(is_num, values, 1.0)
    if BACKBONES[backbone].causal:
        plain = {"input_ids": ids, "labels": ids}
        return plain, {"input_ids": number_ids, "input_numbers": numbers, "labels": number_ids}
    chosen = torch.rand(shape, generator=generator) < 0.15  # masked-LM positions, [MASK] = 4
    plain = {"input_ids": ids.masked_fill(chosen, 4), "labels": torch.where(chosen, ids, -100)}
    number = {
        "input_ids": number_ids.masked_fill(chosen, 4),
        "input_numbers": numbers.masked_fill(chosen, 1.0),
        "labels": torch.where(chosen, number_ids, -100),
        "number_labels": torch.where(chosen & is_num, values, 1.0),
    }
    return plain, number


def train_steps(model: PreTrainedModel, batch: dict, steps: int, clock: str = "wall") -> float:
    """Seconds (of ``clock``) for ``steps`` forward + backward passes."""
    start = CLOCKS[clock]()
    for _ in range(steps):
        model(**batch).loss.backward()
        model.zero_grad(set_to_none=True)
    return CLOCKS[clock]() - start


def measure(
    backbone: str, encoding: str, args: argparse.Namespace
) -> tuple[float, float, tuple[float, float, float], float]:
    """Median tokens/s of the plain and the number model, timed in alternating rounds, the median ratio
    number/plain of the rounds with its quartiles, and the ratio of their fastest rounds (other jobs only ever
    slow a round down, so the fastest is the closest to the machine's own speed)."""
    spec = BACKBONES[backbone]
    num_ids = list(range(args.vocab - spec.num_token_count, args.vocab))  # the last ids: both vocabularies are equal
    torch.manual_seed(0)
    plain_model = spec.plain_model_class(spec.plain_config_class(vocab_size=args.vocab, **sizes(backbone, args)))
    plain_model.train()
    number_config = spec.config_class(
        vocab_size=args.vocab,
        number_encoding=encoding,
        num_token_id=num_ids[0],
        num_token_ids=num_ids,
        **sizes(backbone, args),
    )
    number_model = spec.model_class(number_config).train()
    plain_batch, number_batch = batches(backbone, num_ids, args)
    if args.loss_only:
        number_batch["loss_only"] = True
    train_steps(plain_model, plain_batch, args.warmup)
    train_steps(number_model, number_batch, args.warmup)
    tokens = args.batch * args.seq_len * args.steps
    plain, number = alternating_rounds(
        [lambda: tokens / train_steps(plain_model, plain_batch, args.steps, args.clock),
         lambda: tokens / train_steps(number_model, number_batch, args.steps, args.clock)],
        args.rounds,
    )
    return statistics.median(plain), statistics.median(number), ratio_spread(number, plain), max(number) / max(plain)


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = []
    for backbone in args.backbones:
        for encoding in args.encodings:
            plain, number, (ratio, low, high), best = measure(backbone, encoding, args)
            spread = f"{low:.3f}–{high:.3f}"
            rows.append(
                f"| {backbone} | {encoding} | {plain:,.0f} | {number:,.0f} | {ratio:.3f} | {spread} | {best:.3f} |"
            )
            print(rows[-1], flush=True)
    description = (
        f"Forward + backward, tokens per {args.clock}-clock second (median of {args.rounds} alternating rounds "
        f"of {args.steps} steps); ratio: the median of the rounds' ratios number/plain, with its quartiles, and the "
        f"ratio of each model's fastest round. "
        f"hidden {args.hidden}, {args.layers} layers, {args.heads} heads, vocab {args.vocab}, "
        f"batch {args.batch} x {args.seq_len} tokens, {args.number_fraction:.0%} number tokens"
        f"{', number model with loss_only' if args.loss_only else ''}. Target ratio: >= 0.97."
    )
    columns = ["backbone", "encoding", "plain tok/s", "number tok/s", "ratio", "quartiles", "fastest rounds' ratio"]
    print(write_table(args, "Training-step throughput: number models vs plain backbones", description, columns, rows))


if __name__ == "__main__":
    main()
