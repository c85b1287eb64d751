"""The README's tour (about a dozen lines): tokenize -> model -> loss -> generate with numbers -> decode.

Runs offline in seconds: the tokenizer is trained here on a few sentences and the model is a
new, untrained 2-layer GPT-2 with xVal (the generated numbers are therefore arbitrary; see
`hf-numbers demo` for a trained model). Run: python examples/quickstart.py
"""

import torch

from hf_numbers import NumberGPT2Config, NumberGPT2ForCausalLM
from hf_numbers.data import train_number_tokenizer

corpus = ["The temperature fell from 21.5 to -3 degrees.", '{"m": 1.53, "a": 2.07, "e": 0.0044}'] * 20
tokenizer = train_number_tokenizer(corpus, "gpt2", vocab_size=300)  # or NumberGPT2Tokenizer.from_pretrained(path)
batch = tokenizer(corpus[:2], padding=True, padding_side="left", return_tensors="pt")
config = NumberGPT2Config.from_tokenizer(tokenizer, n_embd=64, n_layer=2, n_head=2, number_encoding="xval")
model = NumberGPT2ForCausalLM(config)
labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
out = model(**batch, labels=labels)  # number_labels default to the (shifted) input numbers
print(f"loss {out.loss:.3f} = token {out.token_loss:.3f} + number {out.number_loss:.3f}")
torch.manual_seed(0)
gen = model.generate(**batch, max_new_tokens=6, do_sample=True, return_dict_in_generate=True,
                     pad_token_id=tokenizer.pad_token_id)
print(tokenizer.batch_decode(gen.sequences, input_numbers=gen.numbers, skip_special_tokens=True))
