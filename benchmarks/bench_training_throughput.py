"""Training-step throughput of the number models relative to their plain backbones.

For each backbone (GPT-2, BERT, RoBERTa) and each number encoding, times forward + backward
of ``Number*`` and of the plain transformers model of the same size (same vocabulary size:
the last ids are the ``[NUM]`` tokens) on the same batch (the plain model sees ordinary word
ids where the number model sees ``[NUM]``), and reports
tokens/s and the ratio number/plain (target >= 0.9). The two models are timed in alternating
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
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import transformers
from transformers import PreTrainedModel

from hf_numbers import BACKBONES, NUMBER_ENCODINGS_REGISTRY

RESULTS = Path(__file__).parent / "results" / "training_throughput.md"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=128, help="hidden size")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8000, help="vocabulary size, [NUM] tokens included")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--number-fraction", type=float, default=0.1, help="share of tokens that are numbers")
    parser.add_argument("--rounds", type=int, default=6, help="alternating timing rounds per model pair")
    parser.add_argument("--steps", type=int, default=1, help="training steps per round")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps per model")
    parser.add_argument("--backbones", nargs="+", default=list(BACKBONES), choices=list(BACKBONES))
    with_module = [name for name, cls in NUMBER_ENCODINGS_REGISTRY.items() if cls.has_number_module]
    parser.add_argument("--encodings", nargs="+", default=with_module, choices=with_module)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    parser.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="cpu",
        help="cpu: this process's CPU time (steady on a shared machine; meant for --threads 1); wall: elapsed time",
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    return parser.parse_args()


def sizes(backbone: str, args: argparse.Namespace) -> dict:
    """Config fields of both models: the backbone's sizes and a padding id (RoBERTa's positions start after it)."""
    return {**BACKBONES[backbone].size_config(args.hidden, args.layers, args.heads, args.seq_len), "pad_token_id": 1}


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


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def train_steps(model: PreTrainedModel, batch: dict, steps: int, clock: str = "wall") -> float:
    """Seconds (of ``clock``) for ``steps`` forward + backward passes."""
    start = CLOCKS[clock]()
    for _ in range(steps):
        model(**batch).loss.backward()
        model.zero_grad(set_to_none=True)
    return CLOCKS[clock]() - start


def measure(backbone: str, encoding: str, args: argparse.Namespace) -> tuple[float, float]:
    """Median tokens/s of the plain and the number model, timed in alternating rounds."""
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
    train_steps(plain_model, plain_batch, args.warmup)
    train_steps(number_model, number_batch, args.warmup)
    tokens = args.batch * args.seq_len * args.steps
    plain_rates, number_rates = [], []
    pairs = [(plain_model, plain_batch, plain_rates), (number_model, number_batch, number_rates)]
    for round_index in range(args.rounds):  # alternate which model goes first, so that order does not bias
        for model, batch, rates in pairs[:: 1 if round_index % 2 == 0 else -1]:
            rates.append(tokens / train_steps(model, batch, args.steps, args.clock))
    return statistics.median(plain_rates), statistics.median(number_rates)


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = []
    for backbone in args.backbones:
        for encoding in args.encodings:
            plain, number = measure(backbone, encoding, args)
            rows.append(f"| {backbone} | {encoding} | {plain:,.0f} | {number:,.0f} | {number / plain:.2f} |")
            print(rows[-1], flush=True)
    header = [
        "# Training-step throughput: number models vs plain backbones",
        "",
        f"Forward + backward, tokens per {args.clock}-clock second (median of {args.rounds} alternating rounds "
        f"of {args.steps} steps). "
        f"hidden {args.hidden}, {args.layers} layers, {args.heads} heads, vocab {args.vocab}, "
        f"batch {args.batch} x {args.seq_len} tokens, {args.number_fraction:.0%} number tokens. "
        f"torch {torch.__version__}, transformers {transformers.__version__}, threads: {torch.get_num_threads()}, "
        f"{platform.processor() or platform.machine()}. Target ratio: >= 0.9.",
        "",
        f"Command: `{' '.join(['python', 'benchmarks/bench_training_throughput.py', *sys.argv[1:]])}`",
        "",
        "| backbone | encoding | plain tok/s | number tok/s | ratio |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    table = "\n".join([*header, *rows]) + "\n"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(table)
    print(table)


if __name__ == "__main__":
    main()
