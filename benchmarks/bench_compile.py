"""What ``--torch_compile true`` costs and gains in a default ``hf-numbers train`` run on this CPU.

For each backbone and encoding, the run's own data, model and collator (``hf-numbers train``'s defaults:
the look-up task, hidden 128, 3 layers, batch 32, 600 steps; ``--task`` and friends change them) train
with AdamW in four ways: eager with the full forward (every position's logits, as before issue 30),
eager with ``loss_only`` (what the loop does now), and both compiled by ``torch.compile``
(``compiled loss_only`` is what ``--torch_compile true`` does). Reported, in CPU seconds of this
process (one thread; the compiler's own threads are set to 1 so that its work is counted here too):

- ``compile s``: a compiled model's first ``--warmup`` steps less as many steady steps: tracing,
  TorchInductor's C++ compilation and any recompilation for another batch shape (batches are padded to
  their longest text; a second length makes the compiler mark that dimension dynamic); the inductor cache
  starts empty (``TORCHINDUCTOR_CACHE_DIR`` in a new temporary folder) unless ``--warm-cache``;
- ``steps/s``: steady steps per CPU second of each way, from alternating chunks of ``--chunk`` steps
  (the same batches for each way), the median chunk;
- ``break-even``: the steps after which the compiled run has caught up with the eager ``loss_only`` run,
  and whether a run of ``--max_steps`` (600 by default) gains.

Writes ``benchmarks/results/compile.md`` and prints it.

Example (about 10 CPU-minutes for the default four rows)::

    .venv/bin/python benchmarks/bench_compile.py
    .venv/bin/python benchmarks/bench_compile.py --backbones gpt2 --encodings xval --rounds 4
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch
from bench_common import write_table

from hf_numbers import BACKBONES
from hf_numbers.training import NumberTrainingArguments, build_dataset, build_model, build_tokenizer, tokenize_dataset
from hf_numbers.training.builders import make_collator
from hf_numbers.training.loop import compiled_step

RESULTS = Path(__file__).parent / "results" / "compile.md"
CAUSAL = [name for name, spec in BACKBONES.items() if spec.causal]
WAYS = ("eager full", "eager loss_only", "compiled full", "compiled loss_only")
COMPILED = WAYS[2:]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backbones", nargs="+", default=CAUSAL, choices=list(BACKBONES))
    parser.add_argument("--encodings", nargs="+", default=["xval", "fone"])
    parser.add_argument("--task", default="lookup")
    parser.add_argument("--max_steps", type=int, default=None, help="the run length judged; default: the task's")
    parser.add_argument("--warmup", type=int, default=6, help="first steps of the compiled model, counted as compile")
    parser.add_argument("--chunk", type=int, default=3, help="steps per timed chunk")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds of the four ways")
    parser.add_argument("--warm-cache", action="store_true", help="keep the inductor's on-disk cache")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--output", type=Path, default=RESULTS)
    return parser.parse_args()


class Way:
    """One way of training: a model, its optimizer and the call of its step."""

    def __init__(self, model: torch.nn.Module, name: str):
        self.loss_only = name.endswith("loss_only")
        self.call = model
        if name.startswith("compiled"):  # as the training loop compiles (loss_only's gathers traced), or plainly
            self.call = compiled_step(model) if self.loss_only else torch.compile(model)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def steps(self, batches: list[dict]) -> float:
        """CPU seconds of one training step per batch."""
        start = time.process_time()
        for batch in batches:
            out = self.call(**batch, loss_only=True) if self.loss_only else self.call(**batch)
            out.loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
        return time.process_time() - start


def measure(backbone: str, encoding: str, args: argparse.Namespace) -> tuple[str, float]:
    """The table row of one backbone and encoding, and the run length judged."""
    run = NumberTrainingArguments(task=args.task, backbone=backbone, number_encoding=encoding, use_cpu=True,
                                  output_dir=tempfile.mkdtemp())
    max_steps = args.max_steps or run.max_steps
    dataset = build_dataset(run)
    tokenizer = build_tokenizer(run, dataset)
    torch.manual_seed(0)
    model = build_model(run, tokenizer, dataset).train()
    data = tokenize_dataset(dataset, tokenizer, run.max_length, end_with_eos=run.causal)["train"]
    loader = torch.utils.data.DataLoader(data, batch_size=run.per_device_train_batch_size, shuffle=True,
                                         collate_fn=make_collator(run, tokenizer),
                                         generator=torch.Generator().manual_seed(0))
    batches = itertools.cycle(list(loader))
    torch._dynamo.reset()
    ways = {name: Way(copy.deepcopy(model), name) for name in WAYS}
    warmup = [next(batches) for _ in range(args.warmup)]
    first = {name: ways[name].steps(warmup) for name in COMPILED}
    for name in WAYS[:2]:
        ways[name].steps(warmup[:1])
    chunks: dict[str, list[float]] = {name: [] for name in WAYS}
    for round_index in range(args.rounds):
        batch_list = [next(batches) for _ in range(args.chunk)]
        order = WAYS if round_index % 2 == 0 else WAYS[::-1]
        for name in order:
            chunks[name].append(ways[name].steps(batch_list) / args.chunk)
    step = {name: statistics.median(times) for name, times in chunks.items()}
    compile_seconds = {name: first[name] - args.warmup * step[name] for name in COMPILED}
    saved = step["eager loss_only"] - step["compiled loss_only"]
    break_even = compile_seconds["compiled loss_only"] / saved if saved > 0 else float("inf")
    verdict = "gains" if break_even < max_steps else "loses"
    compiles = " | ".join(f"{compile_seconds[name]:.1f}" for name in COMPILED)
    rates = " | ".join(f"{1 / step[name]:.2f}" for name in WAYS)
    even = f"{break_even:,.0f}" if break_even != float("inf") else "never"
    return f"| {backbone} | {encoding} | {compiles} | {rates} | {even} | {verdict} |", max_steps


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch._inductor.config.compile_threads = 1  # the compiler's work in this process, where its CPU time is counted
    if not args.warm_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-")
    rows = []
    for backbone in args.backbones:
        for encoding in args.encodings:
            row, max_steps = measure(backbone, encoding, args)
            rows.append(row)
            print(row, flush=True)
    cache = "warm inductor cache" if args.warm_cache else "empty inductor cache"
    description = (
        f"CPU seconds and training steps (forward, backward, AdamW) per CPU second of `hf-numbers train`'s default "
        f"run of task {args.task} (its data, model and collator), eager and compiled, computing every position's "
        f"logits (full) or the loss alone (loss_only, as the training loop does); compile: the first {args.warmup} "
        f"compiled steps less as many steady ones ({cache}); steady rates: median of {args.rounds} alternating "
        f"chunks of {args.chunk} steps; break-even: steps for compiled loss_only (`--torch_compile true`) to catch "
        f"up with eager loss_only (`false`), judged against a run of {max_steps} steps."
    )
    columns = ["backbone", "encoding", *(f"{name} compile s" for name in COMPILED),
               *(f"{name} steps/s" for name in WAYS), "break-even steps", f"{max_steps}-step run"]
    print(write_table(args, "torch.compile of the training step", description, columns, rows))


if __name__ == "__main__":
    main()
