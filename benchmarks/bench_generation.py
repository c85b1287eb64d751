"""Generation speed of the number models relative to their plain backbones.

For each causal backbone (GPT-2, Llama) and each number encoding, times greedy ``generate``
with the KV cache of ``Number*`` and of the plain transformers model of the same size (same
vocabulary size: the last ids are the number tokens) on the same prompts, at batch 1 and 16,
and reports generated tokens per second and the ratio number/plain (target >= 0.8). Every
``--number-every``-th generated token is forced to be a number token (for the plain model, the
same id is an ordinary word), so generated values flow through the number path as in text
with numbers; the prompts hold number tokens too. The two models are timed in alternating
rounds (first one, then the other first) and the median round is kept, so that drifts of a
busy machine hit both alike.

Writes a markdown table to ``benchmarks/results/generation.md`` and prints it.

By default generation runs on one thread and is timed by the process's CPU time, which other
jobs on a shared machine hardly disturb; ``--clock wall --threads 0`` gives elapsed-time
throughput with torch's default threads instead.

Example (the default takes a few minutes on a 2-core CPU)::

    .venv/bin/python benchmarks/bench_generation.py
    .venv/bin/python benchmarks/bench_generation.py --backbones llama --batch-sizes 1 --new-tokens 256
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from bench_common import CLOCKS, add_common_arguments, alternating_medians, write_table
from transformers import LogitsProcessor, LogitsProcessorList, PreTrainedModel

from hf_numbers import BACKBONES

RESULTS = Path(__file__).parent / "results" / "generation.md"
CAUSAL = [name for name, spec in BACKBONES.items() if spec.causal]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_common_arguments(parser, RESULTS)
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 16])
    parser.add_argument("--prompt-len", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64, help="tokens generated per sequence")
    parser.add_argument("--number-every", type=int, default=10, help="every n-th generated token is a number")
    parser.add_argument("--backbones", nargs="+", default=CAUSAL, choices=CAUSAL)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (cuda: wall clock, the GPU synchronised)")
    parser.add_argument("--cache", default="dynamic", choices=["dynamic", "static"],
                        help="the KV cache: static is transformers' fixed-size cache (its decoding compiles)")
    args = parser.parse_args()
    if args.device != "cpu":
        args.clock = "wall"  # a CPU clock does not see the GPU's work
    return args


class EveryNth(LogitsProcessor):
    """Forces ``token_id`` at every ``n``-th generated position (a number token for the number model)."""

    def __init__(self, token_id: int, n: int, prompt_len: int):
        self.token_id, self.n, self.prompt_len = token_id, n, prompt_len

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if (input_ids.shape[1] - self.prompt_len + 1) % self.n:
            return scores
        forced = torch.full_like(scores, -float("inf"))
        forced[:, self.token_id] = 0
        return forced


def prompts(num_ids: list[int], batch: int, args: argparse.Namespace) -> tuple[dict, dict]:
    """The same prompts twice: with ordinary word ids (plain model) and with number tokens + values."""
    generator = torch.Generator().manual_seed(batch)
    shape = (batch, args.prompt_len)
    ids = torch.randint(5, min(num_ids), shape, generator=generator)
    is_num = torch.rand(shape, generator=generator) < 0.1
    values = (torch.rand(shape, generator=generator, dtype=torch.float64) * 2000 - 1000).round(decimals=2)
    number_ids = torch.where(is_num, num_ids[0], ids)
    mask = torch.ones_like(ids)
    plain = {"input_ids": ids, "attention_mask": mask}
    return plain, {"input_ids": number_ids, "input_numbers": torch.where(is_num, values, 1.0), "attention_mask": mask}


def generate_seconds(model: PreTrainedModel, prompt: dict, args: argparse.Namespace, clock: str = "wall") -> float:
    """Seconds (of ``clock``) of one greedy ``generate`` of ``args.new_tokens`` tokens with the KV cache."""
    forcing = LogitsProcessorList([EveryNth(args.vocab - 1, args.number_every, args.prompt_len)])
    cache = {"cache_implementation": "static"} if args.cache == "static" else {}
    synchronize = torch.cuda.synchronize if model.device.type == "cuda" else lambda: None
    synchronize()
    start = CLOCKS[clock]()
    out = model.generate(**prompt, max_new_tokens=args.new_tokens, do_sample=False, use_cache=True, pad_token_id=0,
                         logits_processor=forcing, return_dict_in_generate=True, **cache)
    synchronize()
    seconds = CLOCKS[clock]() - start
    assert out.sequences.shape[1] == args.prompt_len + args.new_tokens  # no early stop: no eos token
    return seconds


def measure(backbone: str, encoding: str, batch: int, args: argparse.Namespace) -> tuple[float, float]:
    """Median generated tokens/s of the plain and the number model, timed in alternating rounds."""
    spec = BACKBONES[backbone]
    num_ids = list(range(args.vocab - spec.num_token_count, args.vocab))  # the last ids: both vocabularies are equal
    sizes = spec.size_config(args.hidden, args.layers, args.heads, args.prompt_len + args.new_tokens)
    common = {"vocab_size": args.vocab, "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": None, **sizes}
    torch.manual_seed(0)
    plain_model = spec.plain_model_class(spec.plain_config_class(**common)).eval().to(args.device)
    number_config = spec.config_class(number_encoding=encoding, num_token_id=num_ids[0], num_token_ids=num_ids,
                                      **common)
    number_model = spec.model_class(number_config).eval().to(args.device)
    plain_prompt, number_prompt = ({k: v.to(args.device) for k, v in p.items()} for p in prompts(num_ids, batch, args))
    for model, prompt in ((plain_model, plain_prompt), (number_model, number_prompt)):
        model.generation_config.eos_token_id = None
        generate_seconds(model, prompt, args)  # warm-up
    tokens = batch * args.new_tokens
    plain, number = alternating_medians(
        [lambda: tokens / generate_seconds(plain_model, plain_prompt, args, args.clock),
         lambda: tokens / generate_seconds(number_model, number_prompt, args, args.clock)],
        args.rounds,
    )
    return plain, number


def device_name(device: str) -> str:
    """The device as a table names it: the GPU's name with torch's and CUDA's versions, or the CPU."""
    if device == "cpu":
        return "the CPU"
    return f"{torch.cuda.get_device_name(device)} (torch {torch.__version__}, CUDA {torch.version.cuda})"


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = []
    for backbone in args.backbones:
        for encoding in args.encodings:
            for batch in args.batch_sizes:
                plain, number = measure(backbone, encoding, batch, args)
                ratio = number / plain
                rows.append(f"| {backbone} | {encoding} | {batch} | {plain:,.0f} | {number:,.0f} | {ratio:.2f} |")
                print(rows[-1], flush=True)
    description = (
        f"Greedy `generate` with the KV cache, generated tokens per {args.clock}-clock second (median of "
        f"{args.rounds} alternating rounds). hidden {args.hidden}, {args.layers} layers, {args.heads} heads, "
        f"vocab {args.vocab}, prompts of {args.prompt_len} tokens (10% numbers), {args.new_tokens} new tokens, every "
        f"{args.number_every}th a number; {args.cache} KV cache, on {device_name(args.device)}. Target ratio: >= 0.8."
    )
    columns = ["backbone", "encoding", "batch", "plain tok/s", "number tok/s", "ratio"]
    print(write_table(args, "Generation speed: number models vs plain backbones", description, columns, rows))


if __name__ == "__main__":
    main()
