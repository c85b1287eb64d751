"""Training throughput and model FLOPs utilisation (MFU) of number models on one CUDA GPU, three ways.

Times full training steps (forward, backward and a fused AdamW step) of the number model with each
encoding (default xval and fone), of the plain transformers model of the same size (same vocabulary:
its last ids are the number tokens) and, with ``--peer``, of x-transformers' decoder of that size (a
non-transformers implementation), under bf16 autocast by default (``--dtypes bf16 tf32 fp32`` adds
full-float32 rows). Each way (``--ways``) is a row:

- ``eager``: the model as it is; a number model's step is ``loss_only`` (what ``hf-numbers train`` runs);
- ``compiled``: the same under ``torch.compile`` (``--torch_compile``, on by default on CUDA);
- ``compiled+fused``: and the token head's cross-entropy fused with its matrix product (Liger Kernel,
  ``--fused_token_loss``; the plain model's loss computed the same way from its hidden states).

``--preset`` picks the sizes (``gpt2-small``: GPT-2 124M; ``smollm2-135m``: Llama at SmolLM2-135M's sizes,
grouped-query attention, tied embeddings). ``--seq-lens 1024 4096`` keeps ``--tokens`` per step (batch =
tokens / length). Each model gets ``--warmup`` untimed steps (``compile s``: their time less as many timed
steps: tracing and compiling), then ``--steps`` steps timed by the wall clock, the GPU synchronised before and
after; peak memory is ``torch.cuda.max_memory_allocated`` over the model's run. A row that fails (a kernel
missing) prints why.

MFU = tokens/s x FLOPs per token / peak, with PaLM's estimate FLOPs per token = 6 N + 12 L d S
(N: the parameters that multiply activations, i.e. all but look-up embeddings such as GPT-2's
position table, the tied output matrix counted once; L layers, d hidden, S sequence length;
attention counted as if unmasked). The peak is the card's dense bf16 tensor-core peak from a small
table by device name (H100 SXM and H200 989 TFLOP/s, A100 312, ...), the same for every dtype row;
another card needs ``--peak_tflops``. The peak used is printed.

Prints a markdown table and writes it to ``--output`` if given. Without a CUDA device it prints
"no CUDA device: nothing measured" and exits with code 0 (it imports without one).

Example (a few minutes on one H100, most of it compiling)::

    python benchmarks/bench_gpu.py --peer --output benchmarks/results/gpu_training.md
    python benchmarks/bench_gpu.py --preset smollm2-135m --ways compiled --seq-lens 1024 4096
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers
from bench_common import WITH_MODULE
from bench_training_throughput import batches, sizes
from torch import nn

from hf_numbers import BACKBONES
from hf_numbers.training.fused_loss import liger_token_loss

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


PRESETS = {
    "gpt2-small": {"backbone": "gpt2", "hidden": 768, "layers": 12, "heads": 12, "vocab": 50304, "config": {},
                   "peer_decoder": "default"},
    "smollm2-135m": {"backbone": "llama", "hidden": 576, "layers": 30, "heads": 9, "vocab": 49152,
                     "config": {"num_key_value_heads": 3, "intermediate_size": 1536, "tie_word_embeddings": True},
                     "peer_decoder": "llama-like"},
}  # fmt: skip
"""Model sizes: GPT-2 small (vocabulary padded to 50304, a multiple of 64) and SmolLM2-135M's Llama; the peer's
decoder settings of each (``peer_xtransformers.PEER_DECODERS``)."""
WAYS = ("eager", "compiled", "compiled+fused")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--preset", default="gpt2-small", choices=list(PRESETS))
    parser.add_argument("--tokens", type=int, default=16384, help="tokens per step (GPT-2 small: 16 x 1024)")
    parser.add_argument("--seq-lens", nargs="+", type=int, default=[1024])
    parser.add_argument("--number-fraction", type=float, default=0.1, help="share of tokens that are numbers")
    parser.add_argument("--encodings", nargs="*", default=["xval", "fone"], choices=WITH_MODULE)
    parser.add_argument("--no-plain", action="store_true", help="skip the plain transformers model")
    parser.add_argument("--peer", action="store_true", help="add x-transformers' decoder of the same size")
    parser.add_argument("--ways", nargs="+", default=list(WAYS), choices=WAYS)
    parser.add_argument("--dtypes", nargs="+", default=["bf16"], choices=DTYPES)
    parser.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"], help="attention implementation")
    parser.add_argument("--dropout", type=float, default=None,
                        help="every dropout probability of the config (default: transformers' own, GPT-2's 0.1; "
                             "llm.c and nanoGPT's GPT-2 speed runs use 0)")
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
    parser.add_argument("--device", default="cuda", help="cuda; cpu only to try the script (with --peak_tflops)")
    args = parser.parse_args(argv)
    for name, value in PRESETS[args.preset].items():
        setattr(args, name, value)
    return args


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
    output = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None  # a peer: none
    tied = {id(output.weight)} if output is not None else set()
    lookups = {id(module.weight) for module in model.modules() if isinstance(module, nn.Embedding)} - tied
    return sum(parameter.numel() for parameter in model.parameters() if id(parameter) not in lookups)


def flops_per_token(model: nn.Module, args: argparse.Namespace) -> float:
    """PaLM's 6 N + 12 L d S (forward and backward, attention unmasked)."""
    return 6 * matmul_parameters(model) + 12 * args.layers * args.hidden * args.seq_len


@contextlib.contextmanager
def precision(dtype: str, device: str = "cuda") -> Iterator[contextlib.AbstractContextManager]:
    """The matmul settings of ``dtype`` while measuring, and the context its forward runs in."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = dtype == "tf32"
    try:
        if dtype == "bf16":
            yield torch.autocast(torch.device(device).type, dtype=torch.bfloat16)
        else:
            yield contextlib.nullcontext()
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


@dataclass
class Row:
    model: str
    encoding: str
    way: str
    dtype: str
    seq_len: int
    tokens_per_s: float
    ms_per_step: float
    mfu: float
    peak_gib: float
    compile_s: float
    params_m: float

    def markdown(self) -> str:
        return (
            f"| {self.model} | {self.encoding} | {self.way} | {self.dtype} | {self.seq_len} | {self.tokens_per_s:,.0f} "
            f"| {self.ms_per_step:.1f} | {self.mfu:.1%} | {self.peak_gib:.2f} | {self.compile_s:.0f} "
            f"| {self.params_m:.1f} |"
        )


COLUMNS = ["model", "encoding", "way", "dtype", "seq", "tokens/s", "ms/step", "MFU", "peak memory GiB", "compile s",
           "N (M)"]  # fmt: skip


def peer_model(args: argparse.Namespace) -> nn.Module:
    """x-transformers' decoder of the preset's sizes (set up as Llama for a Llama preset), flash attention."""
    from peer_xtransformers import PEER_DECODERS
    from x_transformers import Decoder, TransformerWrapper

    settings = PEER_DECODERS[args.peer_decoder]
    decoder = Decoder(dim=args.hidden, depth=args.layers, heads=args.heads, attn_flash=True, **settings)
    return TransformerWrapper(num_tokens=args.vocab, max_seq_len=args.seq_len, attn_layers=decoder)


def build(kind: str, args: argparse.Namespace) -> tuple[nn.Module, dict]:
    """The plain, peer or number model (``kind``: an encoding) on the GPU and its batch there."""
    spec = BACKBONES[args.backbone]
    num_ids = list(range(args.vocab - spec.num_token_count, args.vocab))  # the last ids: both vocabularies are equal
    fields = {"vocab_size": args.vocab, "attn_implementation": args.attn, **sizes(args.backbone, args), **args.config}
    if args.dropout is not None:
        fields.update(dict.fromkeys(spec.dropout_fields, args.dropout))  # as hf-numbers train's --dropout
    torch.manual_seed(0)
    if kind == "peer":
        model = peer_model(args)
    elif kind == "plain":
        model = spec.plain_model_class(spec.plain_config_class(**fields))
    else:
        config = spec.config_class(number_encoding=kind, num_token_id=num_ids[0], num_token_ids=num_ids, **fields)
        model = spec.model_class(config)
    plain_batch, number_batch = batches(args.backbone, num_ids, args)
    batch = number_batch if kind not in ("plain", "peer") else plain_batch
    return model.to(args.device).train(), {key: value.to(args.device) for key, value in batch.items()}


def shifted_loss(hidden: torch.Tensor, head: nn.Linear, labels: torch.Tensor, fused: bool) -> torch.Tensor:
    """Mean next-token cross-entropy of ``head(hidden)``: logits then the loss, or fused (Liger)."""
    targets = nn.functional.pad(labels[:, 1:], (0, 1), value=-100).flatten()
    hidden = hidden.flatten(0, 1)
    if fused:
        return liger_token_loss(hidden, head, targets) / (targets != -100).sum()
    return nn.functional.cross_entropy(head(hidden).float(), targets)


def loss_function(model: nn.Module, kind: str, way: str, batch: dict) -> Callable[[], torch.Tensor]:
    """The step's loss, as ``hf-numbers train`` computes it for a number model (``loss_only``)."""
    fused = way.endswith("fused")
    if kind == "peer":
        head = model.to_logits
        return lambda: shifted_loss(model(batch["input_ids"], return_embeddings=True), head, batch["labels"], fused)
    if kind == "plain":
        if not fused:
            return lambda: model(**batch).loss
        return lambda: shifted_loss(model.base_model(batch["input_ids"]).last_hidden_state,
                                    model.get_output_embeddings(), batch["labels"], fused)
    model.fused_token_loss = liger_token_loss if fused else None
    return lambda: model(**batch, loss_only=True).loss


def measure(kind: str, way: str, dtype: str, peak: float, args: argparse.Namespace) -> Row:
    """One model's training steps: warm-up (compilation), then ``args.steps`` timed steps."""
    gc.collect()
    cuda = args.device.startswith("cuda")
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    torch._dynamo.reset()
    model, batch = build(kind, args)
    loss = loss_function(model, kind, way, batch)
    if way.startswith("compiled"):
        loss = torch.compile(loss)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    synchronize = torch.cuda.synchronize if cuda else lambda: None
    with precision(dtype, args.device) as forward_context:

        def step() -> None:
            with forward_context:
                value = loss()
            value.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        synchronize()
        started = time.perf_counter()
        for _ in range(args.warmup):
            step()
        synchronize()
        warmup_s = time.perf_counter() - started
        for _ in range(args.steps):
            step()
        synchronize()
    ms_per_step = (time.perf_counter() - started - warmup_s) * 1000 / args.steps
    tokens_per_s = args.batch * args.seq_len / (ms_per_step / 1000)
    return Row(
        model=type(model).__name__,
        encoding=kind if kind not in ("plain", "peer") else "-",
        way=way,
        dtype=dtype,
        seq_len=args.seq_len,
        tokens_per_s=tokens_per_s,
        ms_per_step=ms_per_step,
        mfu=tokens_per_s * flops_per_token(model, args) / (peak * 1e12),
        peak_gib=torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan"),
        compile_s=warmup_s - args.warmup * ms_per_step / 1000,
        params_m=matmul_parameters(model) / 1e6,
    )  # the model, optimizer and batch go with this frame; the next measure() frees their memory


def table(rows: list[Row], peak: float, source: str, device: str, args: argparse.Namespace, argv: list[str]) -> str:
    """The markdown page of the rows measured so far."""
    description = (
        f"{args.preset} ({BACKBONES[args.backbone].display_name}): hidden {args.hidden}, {args.layers} layers, "
        f"{args.heads} heads, vocab {args.vocab}, {args.tokens} tokens per step (batch = tokens / seq), "
        f"{args.number_fraction:.0%} number tokens, {args.attn} attention, dropout "
        f"{'as transformers sets it' if args.dropout is None else f'{args.dropout:g}'}. One training step = forward + "
        f"backward + fused AdamW; {args.warmup} warm-up steps (compile s: their time less as many timed steps), then "
        f"the mean of {args.steps} steps (wall clock, the GPU synchronised around them). bf16 = autocast over float32 "
        f"weights. Ways: eager; compiled "
        f"(torch.compile of the step's loss); compiled+fused (and Liger's fused linear cross-entropy for the token "
        f"head). A number model's loss is loss_only (hf-numbers train's step). MFU = tokens/s x (6 N + 12 L d S) / "
        f"peak, N as in the last column (all parameters but look-up embeddings; the tied output matrix counted), "
        f"attention counted unmasked; peak {peak:g} TFLOP/s ({source}) for every row. {device}, torch "
        f"{torch.__version__} (CUDA {torch.version.cuda}), transformers {transformers.__version__}."
    )
    return "\n".join(
        [
            "# Training throughput and MFU on one GPU",
            "",
            description,
            "",
            f"Command: `{' '.join(['python', 'benchmarks/bench_gpu.py', *argv])}`",
            "",
            "| " + " | ".join(COLUMNS) + " |",
            "| " + " | ".join("---" if index < 4 else "---:" for index in range(len(COLUMNS))) + " |",
            *(row.markdown() for row in rows),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: nothing measured (bench_gpu.py needs a CUDA GPU; exit code 0)")
        return 0
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else "the CPU"
    found = peak_tflops(device, args.peak_tflops)
    if found is None:
        known = ", ".join(part for part, _ in PEAK_BF16_TFLOPS)
        print(f"error: no peak known for {device!r} (known: {known}); pass --peak_tflops", file=sys.stderr)
        return 2
    peak, source = found
    print(f"device: {device}; peak used: {peak:g} TFLOP/s ({source})", flush=True)
    kinds = ([] if args.no_plain else ["plain"]) + args.encodings + (["peer"] if args.peer else [])
    rows = []
    for seq_len in args.seq_lens:
        args.seq_len, args.batch = seq_len, args.tokens // seq_len
        for dtype in args.dtypes:
            for kind in kinds:
                for way in args.ways:
                    try:
                        rows.append(measure(kind, way, dtype, peak, args))
                    except Exception:  # a missing kernel or package fails its row, not the run
                        print(f"row {kind} {way} {dtype} {args.seq_len} failed:\n{traceback.format_exc()}", flush=True)
                        continue
                    print(rows[-1].markdown(), flush=True)
                    if args.output is not None:  # written after every row: a run cut short keeps what it measured
                        args.output.parent.mkdir(parents=True, exist_ok=True)
                        args.output.write_text(table(rows, peak, source, device, args, argv) + "\n")
    print()
    print(table(rows, peak, source, device, args, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
