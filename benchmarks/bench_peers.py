"""A fair peer benchmark: hf_numbers' xVal against lucidrains' x-transformers xVal, on the same data.

For each task (the arithmetic suite's: ``mult3`` is 3-digit multiplication, ``ops2`` two-operand
expressions), causal backbone (GPT-2; Llama: no biases, RMSNorm, closer to x-transformers' decoder),
seed and loss, trains two models side by side:

- hf_numbers: the ``Number*ForCausalLM`` that ``hf-numbers train`` builds (its builders: task data,
  tokenizer, model with the task's number scaling, collator), dropout 0;
- x-transformers: ``XValTransformerWrapper`` around a ``Decoder`` of the same width, depth and heads
  (``peer_xtransformers.py``), fed the same token ids (its one number id for both of ours) and the
  numbers our model's scaling gives, float32.

Both see the same batches (one seeded order, collated once by hf_numbers' collator), the same AdamW
(hf_numbers' defaults: lr, weight decay, warm-up and cosine floor, gradient clipping) and one of two
losses for both: ``answer`` (hf_numbers' completion-only default: the answer's tokens) or ``every``
(every token, x-transformers' own ``XValAutoregressiveWrapper`` loss). They train in alternating chunks
of ``--chunk`` steps (first one model, then the other first) on one thread, and each model's process
CPU time over its chunks gives its steps per CPU-second; evaluation is untimed. hf_numbers' step is the
training loop's (``--hf-step loss_only``), optionally compiled as ``--torch_compile true`` compiles it
(``compiled``: the compilation falls in the untimed warm-up, whose CPU time the record keeps). Both are scored by
``predict_answers`` (the number head's value where the token head's argmax is a number token) and
``compute_number_metrics`` on the test split: R², R² of signed logs, share within 1%, invalid rate.

Each pair writes ``<results>/<task>-<backbone>-<loss>-seed<seed>[-x<decoder>][-<hf step>].json``; the
table ``<results>.md`` is rebuilt from every record there (default ``benchmarks/results/peers``; ``--quick``:
a tiny run into ``benchmarks/results/peers-quick``). x-transformers is an optional dependency (the ``bench`` extra).

Example (one pair takes about 6 CPU-minutes at the full size)::

    .venv/bin/python benchmarks/bench_peers.py --tasks mult3 ops2 --backbones gpt2 llama --seeds 1
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import torch
from peer_xtransformers import INSTALL_HINT, PEER_DECODERS, XValPeer, x_transformers_missing
from reproduction.arithmetic import ARITHMETIC_TASKS
from reproduction.common import commit, machine
from transformers import get_cosine_with_min_lr_schedule_with_warmup

from hf_numbers import BACKBONES
from hf_numbers.evaluation import compute_number_metrics
from hf_numbers.evaluation.predict import predict_answers
from hf_numbers.training import (
    NumberTrainingArguments,
    build_dataset,
    build_model,
    build_tokenizer,
    make_collator,
    tokenize_dataset,
)
from hf_numbers.training.loop import compiled_step

RESULTS = Path(__file__).parent / "results" / "peers"
CAUSAL = [name for name, spec in BACKBONES.items() if spec.causal]
LOSSES = ("answer", "every")
FULL = {"steps": 2000, "batch": 64, "chunk": 100, "train_size": 10_000, "eval_size": 1000,
        "hidden": 128, "layers": 4, "heads": 4}  # fmt: skip
"""The arithmetic suite's size and budget (``reproduction.arithmetic.ARITHMETIC_SIZE``)."""
QUICK = {"steps": 24, "batch": 16, "chunk": 8, "train_size": 256, "eval_size": 64, "hidden": 32, "layers": 2,
         "heads": 2}  # fmt: skip
METRICS = ("r2", "r2_log", "within_1pct", "invalid_rate")
HF_STEPS = ("loss_only", "compiled", "full")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", choices=list(ARITHMETIC_TASKS), default=["mult3", "ops2"])
    parser.add_argument("--backbones", nargs="+", choices=CAUSAL, default=CAUSAL)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1], help="data, initialisation and batch order")
    parser.add_argument(
        "--loss",
        nargs="+",
        choices=LOSSES,
        default=["answer"],
        help="answer: the answer's tokens only; every: every token (x-transformers' own loss)",
    )
    for name, value in FULL.items():
        flag, default = f"--{name.replace('_', '-')}", f"default {value} ({QUICK[name]} with --quick)"
        parser.add_argument(flag, type=int, help=default)
    parser.add_argument("--peer-decoder", choices=list(PEER_DECODERS), default="default",
                        help="x-transformers' Decoder: its defaults (absolute positions, LayerNorm, GELU with biases) "
                        "or llama-like (rotary positions, RMSNorm, SwiGLU, no biases)")  # fmt: skip
    parser.add_argument("--hf-step", choices=HF_STEPS, default="loss_only",
                        help="hf_numbers' training step: loss_only (the training loop's), compiled (the same under "
                        "hf-numbers train --torch_compile true) or full (every position's logits)")  # fmt: skip
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--quick", action="store_true", help="a tiny run of every code path (seconds)")
    parser.add_argument("--results", type=Path, help=f"records folder; default {RESULTS} (--quick: peers-quick)")
    parser.add_argument("--table-only", action="store_true", help="rebuild the table from the records; train nothing")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.results is None:
        args.results = RESULTS.with_name("peers-quick") if args.quick else RESULTS
    if min(args.steps, args.batch, args.chunk, args.train_size, args.eval_size, args.threads) < 1:
        parser.error("sizes, steps, --chunk and --threads must be >= 1")
    return args


class Trainee:
    """One model with its optimizer and schedule (hf_numbers' defaults from ``targs``), its loss of a batch
    index, and the CPU seconds its training chunks took."""

    def __init__(self, model: torch.nn.Module, loss: Callable[[int], torch.Tensor], targs: NumberTrainingArguments):
        self.model, self.loss, self.max_grad_norm = model, loss, targs.max_grad_norm
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=targs.learning_rate, weight_decay=targs.weight_decay)
        self.scheduler = get_cosine_with_min_lr_schedule_with_warmup(
            self.optimizer, targs.warmup_steps, targs.max_steps, min_lr_rate=targs.min_lr_ratio
        )
        self.cpu_s, self.warm_up_cpu_s, self.losses = 0.0, 0.0, []

    def warm_up(self) -> None:
        """One untimed forward and backward of batch 0, gradients dropped: first-call costs stay out of the
        timing, and the weights and optimizer state are unchanged."""
        self.model.train()
        start = time.process_time()
        self.loss(0).backward()
        self.optimizer.zero_grad()
        self.warm_up_cpu_s = time.process_time() - start  # with --hf-step compiled: the compilation

    def train(self, steps: range) -> None:
        """Train on the batches ``steps``, adding their process CPU time."""
        self.model.train()
        start = time.process_time()
        for step in steps:
            loss = self.loss(step)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
            self.losses.append(loss.detach())
        self.cpu_s += time.process_time() - start


def run_pair(task: str, backbone: str, seed: int, loss: str, args: argparse.Namespace) -> dict[str, Any]:
    """Train hf_numbers' and x-transformers' xVal on the same batches; their test metrics and speeds."""
    name, options = ARITHMETIC_TASKS[task]
    targs = NumberTrainingArguments(
        task=name, task_options=options, backbone=backbone, number_encoding="xval", seed=seed, data_seed=seed,
        train_size=args.train_size, eval_size=args.eval_size, hidden_size=args.hidden, num_layers=args.layers,
        num_heads=args.heads, max_steps=args.steps, per_device_train_batch_size=args.batch,
        completion_only=loss == "answer",
    )  # fmt: skip
    dataset = build_dataset(targs)
    tokenizer = build_tokenizer(targs, dataset)
    torch.manual_seed(seed)
    model = build_model(targs, tokenizer, dataset)
    torch.manual_seed(seed)
    peer = XValPeer(model.config, tokenizer, args.hidden, args.layers, args.heads, targs.max_length, args.peer_decoder)
    features = list(tokenize_dataset(dataset, tokenizer, targs.max_length, end_with_eos=True)["train"])
    batches, order, collator = [], torch.Generator().manual_seed(seed), make_collator(targs, tokenizer)
    while len(batches) < args.steps:  # seeded epochs, whole batches (a shuffling DataLoader's order)
        indices = torch.randperm(len(features), generator=order).tolist()
        for start in range(0, len(indices) - args.batch + 1, args.batch):
            batches.append(collator([features[i] for i in indices[start : start + args.batch]]))
    batches = batches[: args.steps]
    hf_step = compiled_step(model) if args.hf_step == "compiled" else model
    hf_kwargs = {} if args.hf_step == "full" else {"loss_only": True}
    prepared = [peer.prepare(batch) for batch in batches]  # x-transformers takes scaled numbers: scaled here, once
    trainees = {
        "hf_numbers": Trainee(model, lambda step: hf_step(**batches[step], **hf_kwargs).loss, targs),
        "x-transformers": Trainee(peer, lambda step: peer.loss(prepared[step], every_token=loss == "every"), targs),
    }
    for trainee in trainees.values():
        trainee.warm_up()
    for index, first in enumerate(range(0, args.steps, args.chunk)):
        steps = range(first, min(first + args.chunk, args.steps))
        for trainee in list(trainees.values())[:: 1 if index % 2 == 0 else -1]:
            trainee.train(steps)
    test = dataset["test"]
    record: dict[str, Any] = {"task": task, "backbone": backbone, "loss": loss, "seed": seed,
                              "peer_decoder": args.peer_decoder, "hf_step": args.hf_step}  # fmt: skip
    for label, trainee in trainees.items():
        predictions = predict_answers(trainee.model, tokenizer, test["text"], test["answer_index"],
                                      max_length=targs.max_length)  # fmt: skip
        metrics = compute_number_metrics(predictions, test["answer"])
        last = torch.stack(trainee.losses[-args.chunk :]).mean().item()
        record[label] = {
            **{metric: metrics[metric] for metric in METRICS},
            "parameters": sum(p.numel() for p in trainee.model.parameters()),
            "cpu_s": round(trainee.cpu_s, 2),
            "warm_up_cpu_s": round(trainee.warm_up_cpu_s, 2),
            "steps_per_cpu_s": args.steps / trainee.cpu_s,
            "last_chunk_loss": last,
        }
    record["ratio"] = record["hf_numbers"]["steps_per_cpu_s"] / record["x-transformers"]["steps_per_cpu_s"]
    return record


def describe(args: argparse.Namespace) -> dict[str, Any]:
    """What every record of this run shares: the command, date, machine and versions, the sizes."""
    import transformers

    return {
        "command": "python benchmarks/bench_peers.py " + shlex.join(sys.argv[1:]),
        "date": datetime.date.today().isoformat(),
        "machine": f"{machine()}, threads {torch.get_num_threads()}",
        "versions": f"transformers {transformers.__version__}, "
        f"x-transformers {importlib.metadata.version('x-transformers')}",
        "commit": commit(),
        "size": {name: getattr(args, name) for name in FULL},
    }


def _cell(record: dict[str, Any], metric: str, digits: int = 5, percent: bool = False) -> str:
    values = [record[label][metric] for label in ("hf_numbers", "x-transformers")]
    if percent:
        return " / ".join(f"{value:.1%}" for value in values)
    return " / ".join("-" if value is None else f"{value:.{digits}f}" for value in values)


def write_table(results: Path) -> str:
    """The markdown table of every record in ``results`` (``<results>.md``): one row per pair, ``hf / x`` cells."""
    records = [json.loads(path.read_text()) for path in sorted(results.glob("*.json"))]
    tasks, losses = list(ARITHMETIC_TASKS), list(LOSSES)
    decoders = list(PEER_DECODERS)
    for r in records:
        r.setdefault("peer_decoder", "default")  # records written before --peer-decoder existed
        r.setdefault("hf_step", "full")  # and before --hf-step: the full forward
    records.sort(key=lambda r: (losses.index(r["loss"]), tasks.index(r["task"]), r["backbone"],
                                decoders.index(r["peer_decoder"]), HF_STEPS.index(r["hf_step"]),
                                r["seed"]))  # fmt: skip
    lines = [
        "# hf_numbers' xVal against x-transformers' xVal",
        "",
        "Written by `benchmarks/bench_peers.py` (see its docstring): the same token ids, scaled numbers, batches and",
        "optimizer for both; test split; each cell is hf_numbers / x-transformers. Steps per CPU-second over",
        "alternating chunks on one thread; ratio = hf_numbers / x-transformers.",
        "",
        "| task | backbone | x decoder | hf step | loss | seed | steps | parameters | R² | R² log | within 1% "
        "| invalid | steps / CPU-s | ratio | hf warm-up CPU-s |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records:
        params = " / ".join(f"{r[label]['parameters'] / 1e6:.2f}M" for label in ("hf_numbers", "x-transformers"))
        steps = r["run"]["size"]["steps"]
        lines.append(
            f"| {r['task']} | {r['backbone']} | {r['peer_decoder']} | {r['hf_step']} | {r['loss']} | {r['seed']} | "
            f"{steps:,} | "
            f"{params} | {_cell(r, 'r2')} | {_cell(r, 'r2_log')} | {_cell(r, 'within_1pct', percent=True)} | "
            f"{_cell(r, 'invalid_rate', percent=True)} | {_cell(r, 'steps_per_cpu_s', 1)} | {r['ratio']:.3f} | "
            f"{r['hf_numbers'].get('warm_up_cpu_s', '-')} |"
        )
    runs = {(r["run"]["command"], r["run"]["date"], r["run"]["machine"], r["run"]["versions"], r["run"]["commit"])
            for r in records}  # fmt: skip
    lines += ["", "Runs (command; date; machine; versions; commit):", ""]
    lines += [f"- `{command}`; {date}; {where}; {versions}; {code}" for command, date, where, versions, code
              in sorted(runs)]  # fmt: skip
    table = "\n".join(lines) + "\n"
    results.with_suffix(".md").write_text(table)
    return table


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.results.mkdir(parents=True, exist_ok=True)
    if args.table_only:
        print(write_table(args.results))
        return
    if x_transformers_missing():
        sys.exit(INSTALL_HINT)
    torch.set_num_threads(args.threads)
    datasets.disable_progress_bars()
    run = describe(args)
    for loss in args.loss:
        for task in args.tasks:
            for seed in args.seeds:
                for backbone in args.backbones:
                    record = run_pair(task, backbone, seed, loss, args) | {"run": run}
                    peer = "" if args.peer_decoder == "default" else f"-x{args.peer_decoder}"
                    step = "" if args.hf_step == "full" else f"-{args.hf_step.replace('_', '-')}"
                    path = args.results / f"{task}-{backbone}-{loss}-seed{seed}{peer}{step}.json"
                    path.write_text(json.dumps(record, indent=1) + "\n")
                    print(json.dumps({key: record[key] for key in ("task", "backbone", "loss", "seed", "ratio")}
                                     | {label: record[label] for label in ("hf_numbers", "x-transformers")}),
                          flush=True)  # fmt: skip
    print(write_table(args.results))


if __name__ == "__main__":
    main()
