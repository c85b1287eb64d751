"""Every backbone end to end: a tiny model trained by ``run_training``, saved, then reloaded with
``trust_remote_code`` in a fresh interpreter where hf_numbers cannot be imported: the same token ids and numbers,
the same outputs, the same generated numbers (causal) or filled masks (masked), bit for bit."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from model_helpers import ENCODINGS, last_line_without_hf_numbers, one_thread

from hf_numbers import BACKBONES, format_number
from hf_numbers.training import NumberTrainingArguments, run_training

RUNS = [(backbone, ENCODINGS[index % len(ENCODINGS)]) for index, backbone in enumerate(BACKBONES)]
"""One run per backbone; the encodings take turns, so each appears."""
PROMPTS = ["{a:1.81, m:0.21, b:0.69, j:0.29} j=", "{c:-1.5, x:2.25} x="]


def checkpoint_outputs(path: str, causal: bool, prompts: list[str], trust_remote_code: bool) -> dict[str, Any]:
    """Tokenize ``prompts``, run the model, then generate (causal) or fill a mask after each prompt (masked).

    Self-contained (its source also runs in the fresh interpreter): only torch and transformers.
    """
    import torch
    import transformers

    torch.set_num_threads(1)  # both sides compute bit-identical outputs
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    auto_class = transformers.AutoModelForCausalLM if causal else transformers.AutoModelForMaskedLM
    model = auto_class.from_pretrained(path, trust_remote_code=trust_remote_code).eval()
    if causal:
        batch = tokenizer(prompts, padding=True, padding_side="left", return_tensors="pt")
    else:
        batch = tokenizer([prompt + tokenizer.mask_token for prompt in prompts], padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch)
    result = {
        "modules": [type(model).__module__, type(tokenizer).__module__],
        "input_ids": batch["input_ids"],
        "input_numbers": batch["input_numbers"],
        "logits": out.logits,
        "number_predictions": out.number_predictions,
    }
    if causal:
        generated = model.generate(**batch, max_new_tokens=3, return_dict_in_generate=True,
                                   pad_token_id=tokenizer.pad_token_id)
        result["ids"], result["numbers"] = generated.sequences, generated.numbers
    else:
        result["ids"], result["numbers"] = model.fill_mask(**batch, mask_token_id=tokenizer.mask_token_id)
    result["texts"] = tokenizer.batch_decode(result["ids"], input_numbers=result["numbers"], skip_special_tokens=True)
    return result


_REMOTE_SCRIPT = """
import sys
sys.modules["hf_numbers"] = None  # the package is not importable: only the checkpoints' own code may be used
from typing import Any

import torch

{function}

for path, causal in zip(sys.argv[1::2], sys.argv[2::2]):
    torch.save(checkpoint_outputs(path, causal == "causal", {prompts!r}, trust_remote_code=True), path + ".pt")
"""


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The final folder of one tiny training run per backbone, and the fresh interpreter's outputs next to each."""
    root = tmp_path_factory.mktemp("trained")
    finals = {}
    with one_thread():
        for backbone, encoding in RUNS:
            args = NumberTrainingArguments(
                task="lookup", backbone=backbone, number_encoding=encoding, output_dir=str(root / backbone),
                train_size=128, eval_size=8, hidden_size=32, num_layers=2, num_heads=2, vocab_size=150,
                per_device_train_batch_size=16, max_steps=30, learning_rate=3e-3, warmup_steps=2, eval_steps=0,
                save_steps=0, logging_steps=10, disable_tqdm=True, use_cpu=True,
            )
            finals[backbone] = Path(run_training(args)["final_dir"])
    script = _REMOTE_SCRIPT.format(function=textwrap.dedent(inspect.getsource(checkpoint_outputs)), prompts=PROMPTS)
    kinds = [item for backbone, path in finals.items()
             for item in (str(path), "causal" if BACKBONES[backbone].causal else "masked")]
    last_line_without_hf_numbers(script, *kinds, cwd=root)
    return finals


@pytest.mark.parametrize("backbone,encoding", RUNS)
def test_trained_checkpoint_reloads_with_remote_code_and_gives_identical_outputs(
    backbone: str, encoding: str, trained: dict[str, Path]
) -> None:
    path, causal = trained[backbone], BACKBONES[backbone].causal
    remote = torch.load(f"{path}.pt")
    local = checkpoint_outputs(str(path), causal, PROMPTS, trust_remote_code=False)
    assert all(module.startswith("transformers_modules.") for module in remote["modules"])
    assert all(module.startswith("hf_numbers.") for module in local["modules"])
    for key in ("input_ids", "input_numbers", "logits", "number_predictions", "ids", "numbers"):
        assert torch.equal(local[key], remote[key]), key
    assert local["texts"] == remote["texts"]
    prompt_length = local["input_ids"].shape[1]
    number_ids = torch.tensor(BACKBONES[backbone].tokenizer_class.from_pretrained(path).num_token_ids)
    if causal:  # trained on "... key=value" texts, the model answers each prompt with a number
        first = local["ids"][:, prompt_length]
        assert torch.isin(first, number_ids).all(), local["texts"]
        for row, text in enumerate(local["texts"]):
            assert text.startswith(PROMPTS[row])
            value = local["numbers"][row, prompt_length].item()
            assert text[len(PROMPTS[row]) :].startswith(format_number(value)), text
