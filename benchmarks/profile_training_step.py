"""Where the time of one training step goes: a torch-profiler table for a number model and its plain backbone.

One step is forward, backward and the AdamW update of the benchmark batch of
``bench_training_throughput.py`` (the same sizes, 10% number tokens). The profiler's events are
attributed to the step's parts: every operator belongs to the innermost part that ran it (the
backward of an operator to the part whose forward ran it, through the autograd sequence numbers),
so the parts add up to the step:

- ``embeddings``: the word-embedding look-up (and GPT-2's position embeddings: they are the trunk's);
- ``number checks``: the checks of ``input_numbers`` in ``forward``;
- ``number embedding``: the encoding's input embedding (``embed``);
- ``trunk``: the transformer blocks (``model.base_model``), forward and backward;
- ``token head``: the output layer over the vocabulary, forward and backward;
- ``token loss``: the cross-entropy; ``number head``, ``number loss``: the number module's;
- ``optimizer``: AdamW's step and ``zero_grad``; ``other``: what runs outside these parts (the
  Python of ``forward``, the scaling, the label shift).

``--answer-only`` labels only the last ``--answer-tokens`` positions of each row (the completion-only
loss of the arithmetic tasks); the rest of the batch is as in the throughput benchmark. ``--loss-only``
runs the number models as the training loop does (``forward(..., loss_only=True)``); the plain models
always compute every position.

Writes ``benchmarks/results/training_step_profile.md`` and prints it. CPU time of one thread,
the median of ``--steps`` profiled steps after ``--warmup`` steps.

Example::

    .venv/bin/python benchmarks/profile_training_step.py
    .venv/bin/python benchmarks/profile_training_step.py --backbones gpt2 --encodings xval --answer-only
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
from bench_common import WITH_MODULE, write_table
from bench_training_throughput import batches, sizes
from torch.profiler import ProfilerActivity, profile, record_function

from hf_numbers import BACKBONES
from hf_numbers.modeling import modeling_number_base as base_module

RESULTS = Path(__file__).parent / "results" / "training_step_profile.md"
CAUSAL = [name for name, spec in BACKBONES.items() if spec.causal]
PARTS = ("embeddings", "number checks", "number embedding", "trunk", "token head", "token loss", "number head",
         "number loss", "optimizer", "other")
PREFIX = "part:"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--number-fraction", type=float, default=0.1)
    parser.add_argument("--answer-only", action="store_true", help="label only each row's last --answer-tokens")
    parser.add_argument("--answer-tokens", type=int, default=8)
    parser.add_argument("--loss-only", action="store_true",
                        help="the number models compute the loss alone (forward's loss_only, as hf-numbers train does)")
    parser.add_argument("--steps", type=int, default=5, help="profiled steps (the median is reported)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--backbones", nargs="+", default=CAUSAL, choices=list(BACKBONES))
    parser.add_argument("--encodings", nargs="+", default=["xval", "fone"], choices=WITH_MODULE)
    parser.add_argument("--output", type=Path, default=RESULTS)
    return parser.parse_args()


def _scoped(function: Callable, label: str) -> Callable:
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with record_function(PREFIX + label):
            return function(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def scoped_parts(model: torch.nn.Module) -> Iterator[None]:
    """Wrap the model's parts (where they exist: the plain model has no number module) in profiler scopes."""
    targets = [
        (model.get_input_embeddings(), "forward", "embeddings"),
        (model.base_model, "forward", "trunk"),
        (model.get_output_embeddings(), "forward", "token head"),
    ]
    encoding = getattr(model, "number_encoding", None)
    if encoding is not None:
        targets += [(encoding, "embed", "number embedding"), (encoding, "head", "number head"),
                    (encoding, "loss", "number loss"), (model, "_token_loss", "token loss")]
        if hasattr(model, "_losses_only"):  # loss_only: its own cross-entropy (the heads inside have their parts)
            targets.append((model, "_losses_only", "token loss"))
        for name in ("check_inputs", "_checked_numbers"):
            if hasattr(model, name):
                targets.append((model, name, "number checks"))
    patched_globals = []
    if hasattr(base_module, "checked_input_numbers") and encoding is not None:
        patched_globals.append(("checked_input_numbers", base_module.checked_input_numbers))
        base_module.checked_input_numbers = _scoped(base_module.checked_input_numbers, "number checks")
    for target, name, label in targets:
        setattr(target, name, _scoped(getattr(target, name), label))
    try:
        yield
    finally:
        for target, name, _ in targets:
            delattr(target, name)
        for name, original in patched_globals:
            setattr(base_module, name, original)


def attribute(events) -> dict[str, float]:
    """Self CPU time (ms) of the events per part: the innermost part scope above each operator; a backward
    operator goes to the part of the forward operator with its sequence number."""
    def part_of(event) -> str | None:
        while event is not None:
            if event.name.startswith(PREFIX):
                return event.name[len(PREFIX):]
            event = event.cpu_parent
        return None

    forward_part = {}
    for event in events:
        if event.sequence_nr >= 0 and not event.name.startswith("autograd::engine"):
            part = part_of(event)
            if part is not None:
                forward_part.setdefault(event.sequence_nr, part)
    totals: dict[str, float] = defaultdict(float)
    for event in events:
        if event.name.startswith(PREFIX):
            continue
        part = part_of(event)
        if part is None:
            backward = event
            while backward is not None and not backward.name.startswith("autograd::engine::evaluate_function"):
                backward = backward.cpu_parent
            if backward is not None:
                part = forward_part.get(backward.sequence_nr, "other")
        totals[part or "other"] += event.self_cpu_time_total / 1000
    return totals


def profile_step(model: torch.nn.Module, batch: dict, optimizer: torch.optim.Optimizer) -> dict[str, float]:
    """Milliseconds of CPU time per part of one training step."""
    with scoped_parts(model), profile(activities=[ProfilerActivity.CPU]) as prof:
        model(**batch).loss.backward()
        with record_function(PREFIX + "optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return attribute(prof.events())


def answer_only(batch: dict, tokens: int) -> dict:
    """The batch with only the last ``tokens`` positions of each row labelled."""
    labels = batch["labels"].clone()
    labels[:, :-tokens] = -100
    return {**batch, "labels": labels}


def run(model: torch.nn.Module, batch: dict, args: argparse.Namespace) -> dict[str, float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(args.warmup):
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    steps = [profile_step(model, batch, optimizer) for _ in range(args.steps)]
    return {part: statistics.median(step.get(part, 0.0) for step in steps) for part in PARTS}


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    for backbone in args.backbones:
        spec = BACKBONES[backbone]
        num_ids = list(range(args.vocab - spec.num_token_count, args.vocab))
        bench = argparse.Namespace(hidden=args.hidden, layers=args.layers, heads=args.heads, seq_len=args.seq_len,
                                   batch=args.batch, number_fraction=args.number_fraction)
        plain_batch, number_batch = batches(backbone, num_ids, bench)
        if args.answer_only:
            plain_batch, number_batch = answer_only(plain_batch, args.answer_tokens), answer_only(
                number_batch, args.answer_tokens)
        torch.manual_seed(0)
        plain = spec.plain_model_class(spec.plain_config_class(vocab_size=args.vocab, **sizes(backbone, bench)))
        results = {"plain": run(plain.train(), plain_batch, args)}
        for encoding in args.encodings:
            config = spec.config_class(vocab_size=args.vocab, number_encoding=encoding, num_token_id=num_ids[0],
                                       num_token_ids=num_ids, **sizes(backbone, bench))
            torch.manual_seed(0)
            batch = {**number_batch, "loss_only": True} if args.loss_only else number_batch
            results[encoding] = run(spec.model_class(config).train(), batch, args)
        for name, parts in results.items():
            total = sum(parts.values())
            shares = [f"{parts[part]:.1f} ({parts[part] / total:.0%})" if parts[part] else "-" for part in PARTS]
            rows.append(f"| {backbone} | {name} | {total:.1f} | " + " | ".join(shares) + " |")
            print(rows[-1], flush=True)
    labels = "every token labelled"
    if args.answer_only:
        labels = f"the last {args.answer_tokens} tokens of each row labelled"
    description = (
        f"CPU milliseconds of one training step (forward, backward, AdamW) by part (torch.profiler, self time "
        f"of every operator, backward included; median of {args.steps} steps). hidden {args.hidden}, {args.layers} "
        f"layers, {args.heads} heads, vocab {args.vocab}, batch {args.batch} x {args.seq_len} tokens, "
        f"{args.number_fraction:.0%} number tokens, {labels}"
        f"{'; the number models with loss_only' if args.loss_only else ''}."
    )
    columns = ["backbone", "model", "step ms", *PARTS]
    print(write_table(args, "Training step profile", description, columns, rows))


if __name__ == "__main__":
    main()
