"""Memory per process and step time of DDP against FSDP2 (``--fsdp``) on 2 CPU processes (gloo).

Launches itself twice with ``torch.distributed.run --nproc_per_node 2`` (``--processes``): once with the
model prepared by Accelerate (DDP, every process holds the whole model and AdamW state), once sharded by
:func:`hf_numbers.training.sharding.shard_model` as the loop does under ``--fsdp``. Each process trains a GPT-2
+ xVal number model (default hidden 512, 8 layers) for ``--steps`` AdamW steps on random batches and reports:

- the local training state: this process's parameters, gradients and AdamW moments (MiB);
- its resident memory after the steps (VmRSS, after ``malloc_trim``; about 400 MiB of it is the libraries) and
  its peak (VmHWM; it includes the whole model each process builds before sharding it);
- the median step time (forward, backward, clipping, optimizer step; wall clock).

Prints a markdown table (the mean over processes) and writes it to ``--output`` if given. Timings on a shared
machine are indicative; the benchmark asserts nothing.

Example (about a minute on a 2-core CPU)::

    .venv/bin/python benchmarks/bench_sharding.py
    .venv/bin/python benchmarks/bench_sharding.py --hidden 256 --layers 4 --steps 5
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIB = 2**20


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--batch", type=int, default=4, help="sequences per process and step")
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--steps", type=int, default=8, help="timed steps (after 2 warm-up steps)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--output", type=Path, default=None, help="also write the table here")
    parser.add_argument("--worker", choices=["ddp", "fsdp"], default=None, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, default=None, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _memory() -> dict[str, float]:
    """Resident and peak resident memory of this process, MiB (Linux /proc)."""
    values = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) * 1024 / MIB
    return values


def _local_bytes(tensor) -> int:
    local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
    return local.numel() * local.element_size()


def worker(args: argparse.Namespace) -> None:
    """One process of one mode: build, shard or prepare, train, measure, write its JSON result."""
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed

    from hf_numbers import get_backbone
    from hf_numbers.training.sharding import shard_model

    accelerator = Accelerator(cpu=True)
    set_seed(0)
    spec = get_backbone("gpt2")
    config = spec.config_class(vocab_size=args.vocab, n_embd=args.hidden, n_layer=args.layers, n_head=args.heads,
                               n_positions=args.seq_len, number_encoding="xval", num_token_id=args.vocab - 1,
                               num_token_ids=[args.vocab - 1], pad_token_id=0, bos_token_id=0,
                               eos_token_id=0)
    model = spec.model_class(config)
    if args.worker == "fsdp":
        shard_model(model, accelerator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    if args.worker == "fsdp":
        optimizer = accelerator.prepare(optimizer)
    else:
        model, optimizer = accelerator.prepare(model, optimizer)
    generator = torch.Generator().manual_seed(accelerator.process_index)
    ids = torch.randint(1, args.vocab - 1, (args.batch, args.seq_len), generator=generator)
    ids[:, ::5] = args.vocab - 1
    numbers = torch.where(ids == args.vocab - 1, torch.rand(ids.shape, generator=generator, dtype=torch.float64), 1.0)
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "input_numbers": numbers, "labels": ids}
    times = []
    for step in range(args.steps + 2):
        start = time.perf_counter()
        loss = model(**batch).loss
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step == args.steps + 1:
            state = sum(_local_bytes(p) * 2 for p in model.parameters())  # parameter and gradient
        optimizer.zero_grad()
        if step >= 2:
            times.append(time.perf_counter() - start)
    state += sum(_local_bytes(v) for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v))
    gc.collect()
    try:  # give the allocator's free pages back, so that RSS shows the memory in use
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    result = {"state_mib": state / MIB, "step_s": statistics.median(times), **_memory()}
    args.result.with_name(f"{args.result.name}.{accelerator.process_index}").write_text(json.dumps(result))
    accelerator.wait_for_everyone()


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def launch(args: argparse.Namespace, mode: str, folder: Path) -> dict[str, float]:
    """Run ``mode`` on ``args.processes`` processes; the mean of their results."""
    result = folder / mode
    passed = [f"--hidden={args.hidden}", f"--layers={args.layers}", f"--heads={args.heads}", f"--vocab={args.vocab}",
              f"--batch={args.batch}", f"--seq-len={args.seq_len}", f"--steps={args.steps}"]
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(args.processes),
               "--master_port", _free_port(), __file__, *passed, "--worker", mode, "--result", str(result)]
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get(
        "PYTHONPATH")])))
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    files = [result.with_name(f"{result.name}.{rank}") for rank in range(args.processes)]
    if not all(path.exists() for path in files):
        raise SystemExit(f"{mode} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    ranks = [json.loads(path.read_text()) for path in files]
    return {key: statistics.mean(rank[key] for rank in ranks) for key in ranks[0]}


def main() -> None:
    args = parse_args()
    if args.worker:
        worker(args)
        return
    with tempfile.TemporaryDirectory() as folder:
        results = {mode: launch(args, mode, Path(folder)) for mode in ("ddp", "fsdp")}
    import torch

    title = (f"DDP vs FSDP2 on {args.processes} CPU processes (gloo): GPT-2 + xVal, hidden {args.hidden}, "
             f"{args.layers} layers, vocabulary {args.vocab}, {args.batch} x {args.seq_len} tokens per process, "
             f"torch {torch.__version__}, 1 thread per process; mean over processes")
    lines = [title, "", "| mode | training state per process (MiB) | RSS after steps (MiB) | peak RSS (MiB) | "
             "step time (ms) |", "| --- | ---: | ---: | ---: | ---: |"]
    for mode, r in results.items():
        lines.append(f"| {mode} | {r['state_mib']:.1f} | {r['VmRSS']:.0f} | {r['VmHWM']:.0f} | "
                     f"{1000 * r['step_s']:.0f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(table)


if __name__ == "__main__":
    main()
