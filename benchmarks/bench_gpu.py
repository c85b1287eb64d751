"""Training throughput and model FLOPs utilisation (MFU) of a GPT-2-small-sized number model on one CUDA GPU.

Times full training steps (forward, backward and a fused AdamW step) of the number model with each
encoding (default xval and fone) and of the plain transformers model of the same size (same
vocabulary: its last ids are the number tokens), under bf16 autocast by default (``--dtypes bf16
tf32 fp32`` adds full-float32 rows). Each model gets ``--warmup`` untimed steps, then ``--steps``
steps timed by CUDA events; peak memory is ``torch.cuda.max_memory_allocated`` over the model's run.

MFU = tokens/s x FLOPs per token / peak, with PaLM's estimate FLOPs per token = 6 N + 12 L d S
(N: the parameters that multiply activations, i.e. all but look-up embeddings such as GPT-2's
position table, the tied output matrix counted once; L layers, d hidden, S sequence length;
attention counted as if unmasked). The peak is the card's dense bf16 tensor-core peak from a small
table by device name (H100 SXM and H200 989 TFLOP/s, A100 312, ...), the same for every dtype row;
another card needs ``--peak_tflops``. The peak used is printed.

Prints a markdown table and writes it to ``--output`` if given. Without a CUDA device it prints
"no CUDA device: nothing measured" and exits with code 0 (it imports without one).

Example (a minute or two on one H100)::

    python benchmarks/bench_gpu.py --output benchmarks/results/gpu_training.md
    python benchmarks/bench_gpu.py --dtypes bf16 tf32 --batch 8 --seq-len 512
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers
from bench_common import WITH_MODULE
from bench_training_throughput import batches, sizes
from torch import nn

from hf_numbers import BACKBONES

PEAK_BF16_TFLOPS = (
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.0),  # SXM (device name "NVIDIA H100 80GB HBM3")
    ("H200", 989.0),
    ("A100", 312.0),
)
"""Dense bf16 tensor-core peak (TFLOP/s) by a part of the device name; the first match wins."""
DTYPES = ("bf16", "tf32", "fp32")
"""bf16: torch.autocast bf16 over float32 weights; tf32: float32 with TF32 matrix products; fp32: full float32."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backbone", default="gpt2", choices=list(BACKBONES))
    parser.add_argument("--hidden", type=int, default=768, help="hidden size (GPT-2 small: 768)")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--vocab", type=int, default=50304, help="vocabulary size, number tokens included")
    parser.add_argument("--batch", type=int, default=16, help="sequences per step")
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--number-fraction", type=float, default=0.1, help="share of tokens that are numbers")
    parser.add_argument("--encodings", nargs="+", default=["xval", "fone"], choices=WITH_MODULE)
    parser.add_argument("--no-plain", action="store_true", help="skip the plain transformers model")
    parser.add_argument("--dtypes", nargs="+", default=["bf16"], choices=DTYPES)
    parser.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"], help="attention implementation")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps per model")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per model")
    parser.add_argument(
        "--peak_tflops",
        "--peak-tflops",
        type=float,
        default=None,
        help="the card's dense bf16 peak in TFLOP/s (required for a card not in the table; overrides it)",
    )
    parser.add_argument("--output", type=Path, default=None, help="also write the markdown table here")
    return parser.parse_args(argv)


def peak_tflops(device_name: str, given: float | None) -> tuple[float, str] | None:
    """The peak used and where it came from; None for an unknown card without ``--peak_tflops``."""
    if given is not None:
        return given, "--peak_tflops"
    for part, peak in PEAK_BF16_TFLOPS:
        if part.lower() in device_name.lower():
            return peak, f"table entry {part!r}, dense bf16"
    return None


def matmul_parameters(model: nn.Module) -> int:
    """N of the FLOPs estimate: every (unique) parameter but look-up embeddings; a tied output matrix counts."""
    output = model.get_output_embeddings()
    tied = {id(output.weight)} if output is not None else set()
    lookups = {id(module.weight) for module in model.modules() if isinstance(module, nn.Embedding)} - tied
    return sum(parameter.numel() for parameter in model.parameters() if id(parameter) not in lookups)


def flops_per_token(model: nn.Module, args: argparse.Namespace) -> float:
    """PaLM's 6 N + 12 L d S (forward and backward, attention unmasked)."""
    return 6 * matmul_parameters(model) + 12 * args.layers * args.hidden * args.seq_len


@contextlib.contextmanager
def precision(dtype: str) -> Iterator[contextlib.AbstractContextManager]:
    """The matmul settings of ``dtype`` while measuring, and the context its forward runs in."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = dtype == "tf32"
    try:
        if dtype == "bf16":
            yield torch.autocast("cuda", dtype=torch.bfloat16)
        else:
            yield contextlib.nullcontext()
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


@dataclass
class Row:
    model: str
    encoding: str
    dtype: str
    tokens_per_s: float
    ms_per_step: float
    mfu: float
    peak_gib: float
    params_m: float

    def markdown(self) -> str:
        return (
            f"| {self.model} | {self.encoding} | {self.dtype} | {self.tokens_per_s:,.0f} | {self.ms_per_step:.1f} "
            f"| {self.mfu:.1%} | {self.peak_gib:.2f} | {self.params_m:.1f} |"
        )


COLUMNS = ["model", "encoding", "dtype", "tokens/s", "ms/step", "MFU", "peak memory GiB", "N (M)"]


def build(encoding: str | None, args: argparse.Namespace) -> tuple[nn.Module, dict]:
    """The plain (``encoding`` None) or number model on the GPU and its batch there."""
    spec = BACKBONES[args.backbone]
    num_ids = list(range(args.vocab - spec.num_token_count, args.vocab))  # the last ids: both vocabularies are equal
    fields = {"vocab_size": args.vocab, "attn_implementation": args.attn, **sizes(args.backbone, args)}
    torch.manual_seed(0)
    if encoding is None:
        model = spec.plain_model_class(spec.plain_config_class(**fields))
    else:
        config = spec.config_class(number_encoding=encoding, num_token_id=num_ids[0], num_token_ids=num_ids, **fields)
        model = spec.model_class(config)
    plain_batch, number_batch = batches(args.backbone, num_ids, args)
    batch = plain_batch if encoding is None else number_batch
    return model.to("cuda").train(), {key: value.to("cuda") for key, value in batch.items()}


def measure(encoding: str | None, dtype: str, peak: float, args: argparse.Namespace) -> Row:
    """One model's training steps: warm-up, then ``args.steps`` steps between two CUDA events."""
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    model, batch = build(encoding, args)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    with precision(dtype) as forward_context:

        def step() -> None:
            with forward_context:
                loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        for _ in range(args.warmup):
            step()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.steps):
            step()
        end.record()
        end.synchronize()
    ms_per_step = start.elapsed_time(end) / args.steps
    tokens_per_s = args.batch * args.seq_len / (ms_per_step / 1000)
    row = Row(
        model=type(model).__name__,
        encoding=encoding or "-",
        dtype=dtype,
        tokens_per_s=tokens_per_s,
        ms_per_step=ms_per_step,
        mfu=tokens_per_s * flops_per_token(model, args) / (peak * 1e12),
        peak_gib=torch.cuda.max_memory_allocated() / 2**30,
        params_m=matmul_parameters(model) / 1e6,
    )
    return row  # the model, optimizer and batch go with this frame; the next measure() frees their memory


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device: nothing measured (bench_gpu.py needs a CUDA GPU; exit code 0)")
        return 0
    device = torch.cuda.get_device_name()
    found = peak_tflops(device, args.peak_tflops)
    if found is None:
        known = ", ".join(part for part, _ in PEAK_BF16_TFLOPS)
        print(f"error: no peak known for {device!r} (known: {known}); pass --peak_tflops", file=sys.stderr)
        return 2
    peak, source = found
    print(f"device: {device}; peak used: {peak:g} TFLOP/s ({source})", flush=True)
    rows = []
    for dtype in args.dtypes:
        for encoding in ([] if args.no_plain else [None]) + args.encodings:
            rows.append(measure(encoding, dtype, peak, args))
            print(rows[-1].markdown(), flush=True)
    description = (
        f"{BACKBONES[args.backbone].display_name}: hidden {args.hidden}, {args.layers} layers, {args.heads} heads, "
        f"vocab {args.vocab}, batch {args.batch} x {args.seq_len} tokens, {args.number_fraction:.0%} number tokens, "
        f"{args.attn} attention. One training step = forward + backward + fused AdamW; {args.warmup} warm-up steps, "
        f"then the mean of {args.steps} steps timed by CUDA events. bf16 = autocast over float32 weights. "
        f"MFU = tokens/s x (6 N + 12 L d S) / peak, N as in the last column (all parameters but look-up "
        f"embeddings; the tied output matrix counted), attention counted unmasked; peak {peak:g} TFLOP/s "
        f"({source}) for every row. {device}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
        f"transformers {transformers.__version__}."
    )
    table = "\n".join(
        [
            "# Training throughput and MFU on one GPU",
            "",
            description,
            "",
            f"Command: `{' '.join(['python', 'benchmarks/bench_gpu.py', *(sys.argv[1:] if argv is None else argv)])}`",
            "",
            "| " + " | ".join(COLUMNS) + " |",
            "| " + " | ".join("---" if index < 3 else "---:" for index in range(len(COLUMNS))) + " |",
            *(row.markdown() for row in rows),
        ]
    )
    print()
    print(table)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(table + "\n")
        print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
