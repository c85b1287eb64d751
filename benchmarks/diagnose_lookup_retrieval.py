"""Diagnostic: can a plain transformers causal LM learn one-query dictionary retrieval at the look-up rows' scale?

The scientific suite's look-up rows (``python benchmarks/reproduce.py scientific --only lookup-*``)
learn no retrieval: every encoding predicts about the mean of the dictionary's values. This script
asks whether that is the number encodings' doing or the scale's, with no number model at all:
the same task reduced to tokens (a dictionary ``{ k : v , k : v ... } q = v`` of ``--keys`` distinct
keys out of 26 key tokens, each with one of 10 value tokens, one queried key) and a plain
``GPT2LMHeadModel`` or ``LlamaForCausalLM`` of the rows' size (hidden 128, 4 layers, 4 heads, dropout
0), trained like the rows (batches of 64, lr 1e-3 with 100 warm-up steps and a cosine decay to
10%, gradient clipping 1.0, loss on the answer token only). Test accuracy on 500 held-out
dictionaries every ``--eval_every`` steps; chance is 10%, and picking one of the dictionary's values
at random is right about 20% of the time. ``--train_size 0`` draws fresh dictionaries at every
step (no example is seen twice, so nothing can be memorised).

Writes ``benchmarks/results/lookup_retrieval/<name>.json`` (the command, the accuracy curve and the
wall time) and rebuilds ``benchmarks/results/lookup_retrieval.md`` from every JSON there.

Example (the second takes about 13 minutes on one thread of a 2-core CPU shared with another job)::

    .venv/bin/python benchmarks/diagnose_lookup_retrieval.py --keys 3 8 --steps 2000
    .venv/bin/python benchmarks/diagnose_lookup_retrieval.py --keys 3 8 --steps 2000 --train_size 0
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import shlex
import sys
import time
from pathlib import Path

import torch
import transformers
from transformers import PreTrainedModel

from hf_numbers import BACKBONES

RESULTS = Path(__file__).parent / "results" / "lookup_retrieval"
TABLE = Path(__file__).parent / "results" / "lookup_retrieval.md"
NUM_KEYS, NUM_VALUES = 26, 10
KEY0, VALUE0 = 0, NUM_KEYS  # token ids: keys 0-25, values 26-35, then the punctuation
OPEN, COLON, COMMA, CLOSE, EQUALS, PAD = range(NUM_KEYS + NUM_VALUES, NUM_KEYS + NUM_VALUES + 6)
VOCAB = PAD + 1
TEST_SIZE = 500


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--keys",
        type=int,
        nargs=2,
        default=[3, 8],
        metavar=("MIN", "MAX"),
        help="inclusive range of keys per dictionary (at most 26)",
    )
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument(
        "--train_size", type=int, default=10_000, help="training dictionaries (0: fresh ones at every step)"
    )
    causal = [name for name, spec in BACKBONES.items() if spec.causal]
    parser.add_argument("--backbone", choices=causal, default=causal[0])
    parser.add_argument("--eval_every", type=int, default=250)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    low, high = args.keys
    if not 1 <= low <= high <= NUM_KEYS:
        parser.error(f"--keys must satisfy 1 <= MIN <= MAX <= {NUM_KEYS}, got {low} {high}")
    if args.steps < 1 or args.eval_every < 1 or args.train_size < 0:
        parser.error("--steps and --eval_every must be >= 1 and --train_size >= 0")
    return args


def sample(generator: torch.Generator, low: int, high: int) -> list[int]:
    """One dictionary and its query as token ids, the answer (a value token) last."""
    size = int(torch.randint(low, high + 1, (1,), generator=generator))
    keys = torch.randperm(NUM_KEYS, generator=generator)[:size].tolist()
    values = torch.randint(NUM_VALUES, (size,), generator=generator).tolist()
    query = int(torch.randint(size, (1,), generator=generator))
    ids = [OPEN]
    for index, (key, value) in enumerate(zip(keys, values)):
        ids += [KEY0 + key, COLON, VALUE0 + value] + ([COMMA] if index < size - 1 else [])
    return ids + [CLOSE, KEY0 + keys[query], EQUALS, VALUE0 + values[query]]


def collate(rows: list[list[int]], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and labels that keep only the answer token (the models shift labels themselves)."""
    ids = torch.full((len(rows), length), PAD)
    labels = torch.full((len(rows), length), -100)
    for index, row in enumerate(rows):
        ids[index, : len(row)] = torch.tensor(row)
        labels[index, len(row) - 1] = row[-1]
    return ids, labels


def build_model(backbone: str, positions: int) -> PreTrainedModel:
    """A plain transformers model of the look-up rows' size, dropout 0 (the backbone table's plain classes).

    Sized as the table sizes a new model (``size_config``), with the feed-forward width, where the config
    has one, rounded up to a multiple of 8 (Llama: 344 for 8/3 x 128).
    """
    spec = BACKBONES[backbone]
    sizes = spec.size_config(hidden_size=128, num_layers=4, num_heads=4, max_length=positions)
    if spec.size_fields.ffn:
        sizes[spec.size_fields.ffn] = 8 * math.ceil(spec.size_fields.ffn_ratio * 128 / 8)
    tokens = {"vocab_size": VOCAB, "pad_token_id": PAD, "bos_token_id": OPEN, "eos_token_id": PAD}
    no_dropout = dict.fromkeys(spec.dropout_fields, 0.0)
    return spec.plain_model_class(spec.plain_config_class(**sizes, **no_dropout, **tokens))


@torch.no_grad()
def accuracy(model: PreTrainedModel, ids: torch.Tensor, labels: torch.Tensor) -> float:
    """Share of test dictionaries whose answer token is the model's top prediction."""
    model.eval()
    logits = model(ids).logits[:, :-1]
    answer = labels[:, 1:] != -100
    correct = (logits[answer].argmax(-1) == labels[:, 1:][answer]).float().mean().item()
    model.train()
    return correct


def run(args: argparse.Namespace) -> dict:
    """Train one configuration; return its record (accuracy every ``eval_every`` steps, wall time)."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    low, high = args.keys
    data_rng, test_rng = torch.Generator().manual_seed(args.seed), torch.Generator().manual_seed(args.seed + 10_000)
    test = [sample(test_rng, low, high) for _ in range(TEST_SIZE)]
    train = [sample(data_rng, low, high) for _ in range(args.train_size)]
    length = 4 * high + 4  # '{', k : v per key with the commas, '}', q, '=', answer
    model = build_model(args.backbone, length)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)

    def factor(step: int) -> float:
        return min(1.0, (step + 1) / 100) * (0.1 + 0.45 * (1 + math.cos(math.pi * step / args.steps)))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    test_ids, test_labels = collate(test, length)
    curve, start = [], time.perf_counter()
    for step in range(1, args.steps + 1):
        if train:
            batch = [train[int(i)] for i in torch.randint(len(train), (64,), generator=data_rng)]
        else:
            batch = [sample(data_rng, low, high) for _ in range(64)]
        ids, labels = collate(batch, length)
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        if step % args.eval_every == 0 or step == args.steps:
            curve.append(
                {
                    "step": step,
                    "train_loss": round(loss.item(), 4),
                    "test_accuracy": round(accuracy(model, test_ids, test_labels), 4),
                }
            )
            print(curve[-1], flush=True)
    return {
        "command": "python benchmarks/diagnose_lookup_retrieval.py " + shlex.join(sys.argv[1:]),
        "keys": [low, high],
        "steps": args.steps,
        "train_size": args.train_size,
        "backbone": args.backbone,
        "curve": curve,
        "wall_s": round(time.perf_counter() - start, 1),
        "machine": f"{platform.machine()}, torch {torch.__version__}, transformers {transformers.__version__}, "
        f"threads {args.threads}",
    }


def write_table() -> str:
    """The markdown table of every saved configuration: its command, best and last test accuracy."""
    lines = [
        "# Diagnostic: one-query dictionary retrieval with a plain transformers model",
        "",
        "Written by `benchmarks/diagnose_lookup_retrieval.py` (see its docstring). Chance 10%; a random",
        "pick among the dictionary's values about 20%.",
        "",
        "| command | backbone | keys | training dictionaries | steps | best test accuracy | last | wall |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for path in sorted(RESULTS.glob("*.json")):
        record = json.loads(path.read_text())
        accuracies = [point["test_accuracy"] for point in record["curve"]]
        size = f"{record['train_size']:,}" if record["train_size"] else "fresh every step"
        lines.append(
            f"| `{record['command']}` | {record['backbone']} | {record['keys'][0]}-{record['keys'][1]} | {size} | "
            f"{record['steps']:,} | {max(accuracies):.1%} | {accuracies[-1]:.1%} | {record['wall_s'] / 60:.1f} min |"
        )
    TABLE.write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


def main() -> None:
    args = parse_args()
    record = run(args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = f"{args.backbone}-keys{args.keys[0]}-{args.keys[1]}-steps{args.steps}-train{args.train_size}-seed{args.seed}"
    (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    print(write_table())


if __name__ == "__main__":
    main()
