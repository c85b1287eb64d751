"""The adapters of LoRA runs: every number model's adapter reloads (composed backbones too), its base is recorded
so that it loads from any working directory, and every ``checkpoint-<step>`` of a LoRA run loads and evaluates
(docs/pretrained.md, docs/training.md "Checkpoints, resume and safety")."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import torch
from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer, LlamaConfig

from hf_numbers.cli import main
from hf_numbers.data.tokenizer_training import train_plain_tokenizer
from hf_numbers.modeling import BACKBONES, ZOO, ComposedBackboneSpec, get_backbone
from hf_numbers.training import NumberTrainingArguments, run_training
from hf_numbers.training.lora import (
    ADAPTER_DIR,
    BASE_FILE,
    _number_model_class,
    base_source,
    load_adapter,
    number_lora_config,
    save_adapter,
)
from hf_numbers.training.pipeline import load_trained

peft = pytest.importorskip("peft")

TEXTS = ["What is 12 plus 30? 12 + 30 = 42.", "The temperature fell from 21.5 to -3 degrees, 0123456789."] * 20
SUMS = ["12 + 30 = 42", "7 + 5 = 12"]
RUNS = ("llama", "qwen2")
"""A backbone of the table and one held by composition."""


def _plain_folder(folder: Path, model_type: str) -> Path:
    """A plain causal LM of ``model_type`` (random, tiny) with a byte-level BPE tokenizer, saved in ``folder``."""
    spec = get_backbone(model_type)
    tokenizer = train_plain_tokenizer(TEXTS, "gpt2", vocab_size=300)
    tokenizer.save_pretrained(folder)
    ids = dict.fromkeys(spec.config_class.tokenizer_token_ids, 0)
    torch.manual_seed(0)
    config = spec.plain_config_class(**{**spec.tiny_sizes, "max_position_embeddings": 128}, **ids,
                                     vocab_size=len(tokenizer), tie_word_embeddings=True)  # fmt: skip
    spec.plain_model_class(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", params=RUNS)
def lora_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``hf-numbers train --pretrained <plain folder> --lora_r 4 --save_steps 2 --max_steps 2``: its run folder."""
    root = tmp_path_factory.mktemp(f"lora_{request.param}")
    plain = _plain_folder(root / "plain", request.param)
    args = NumberTrainingArguments(
        task="fone_arithmetic", pretrained=str(plain), number_encoding="fone", lora_r=4, max_steps=2, save_steps=2,
        train_size=32, eval_size=8, per_device_train_batch_size=4, disable_tqdm=True, use_cpu=True,
        output_dir=str(root / "run"),
    )  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_training(args)
    finally:
        torch.set_num_threads(threads)  # the worker's share again (tests/conftest.py)
    return root / "run"


def _outputs(model, tokenizer) -> tuple[torch.Tensor, torch.Tensor]:
    with torch.no_grad():
        out = model.eval()(**tokenizer(SUMS, padding=True, return_tensors="pt"))
    return out.logits, out.number_predictions


def test_every_number_config_of_the_library_names_its_model_class() -> None:
    for name in (*BACKBONES, *ZOO):
        spec = get_backbone(name)
        text = {"text_config": AutoConfig.for_model(name).to_dict()} if isinstance(spec, ComposedBackboneSpec) else {}
        config = spec.config_class(**text)
        assert _number_model_class(config, Path("adapter")) is spec.model_class, name
    with pytest.raises(ValueError, match=r"adapter/config.json is a LlamaConfig, not a number model's config"):
        _number_model_class(LlamaConfig(), Path("adapter"))


def test_a_lora_runs_adapter_and_its_checkpoints_load_with_the_trained_outputs(lora_run: Path) -> None:
    final, checkpoint = lora_run / "final", lora_run / "checkpoint-2"  # the last step: the final weights
    tokenizer = AutoTokenizer.from_pretrained(final)
    logits, numbers = _outputs(AutoModelForCausalLM.from_pretrained(final), tokenizer)
    adapted = load_adapter(final / ADAPTER_DIR)  # a composed backbone's (NumberCausalLMConfig) too
    assert isinstance(adapted, peft.PeftModel)
    adapter_logits, adapter_numbers = _outputs(adapted, tokenizer)
    assert torch.allclose(adapter_logits, logits, atol=1e-5) and torch.allclose(adapter_numbers, numbers, atol=1e-5)
    assert torch.equal(_outputs(adapted.merge_and_unload(), tokenizer)[0], logits)

    for name in ("config.json", BASE_FILE, "adapter_model.safetensors", "tokenizer_config.json", "trainer_state.json"):
        assert (checkpoint / name).is_file(), name  # what loading needs, beside what resume reads
    assert torch.equal(_outputs(load_adapter(checkpoint).merge_and_unload(), tokenizer)[0], logits)
    with pytest.raises(ValueError, match=r"holds a LoRA adapter \(adapter_config.json\), not a whole model"):
        AutoModel.from_pretrained(checkpoint)  # (before: transformers' "no file named model.safetensors")
    model, checkpoint_tokenizer = load_trained(checkpoint)  # what hf-numbers evaluate --checkpoint loads
    assert type(model) is type(AutoModelForCausalLM.from_pretrained(final))
    assert torch.equal(_outputs(model, checkpoint_tokenizer)[0], logits)


def test_evaluate_takes_a_lora_checkpoint_as_it_takes_final(lora_run: Path, tmp_path: Path, capsys) -> None:
    """checkpoint-2 (the last step), final/ and final/adapter: the same predictions, each read with the run's record
    (final/adapter's is two folders up)."""
    names = ("checkpoint-2", "final", "final/adapter")
    for name in names:
        main(["evaluate", "--checkpoint", str(lora_run / name), "--task", "fone_arithmetic", "--eval_size", "8",
              "--output_dir", str(tmp_path / name)])  # fmt: skip
    assert "is missing or names no task" not in capsys.readouterr().err
    read = {name: json.loads((tmp_path / name / "predictions.json").read_text()) for name in names}
    assert read["checkpoint-2"] == read["final"] == read["final/adapter"]


def test_a_lora_checkpoint_without_its_base_record_is_refused_saying_what_it_is(lora_run: Path, tmp_path: Path) -> None:
    old = shutil.copytree(lora_run / "checkpoint-2", tmp_path / "checkpoint-2")  # as earlier versions wrote it
    (old / BASE_FILE).unlink()
    (old / "config.json").unlink()
    for load in (load_trained, load_adapter):
        with pytest.raises(ValueError, match=f"holds a LoRA adapter without {BASE_FILE}.*final/"):
            load(old)


def test_the_base_folder_is_recorded_absolutely_and_named_where_it_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    elsewhere.mkdir()
    _plain_folder(work / "models" / "llama", "llama")
    monkeypatch.chdir(work)
    spec = get_backbone("llama")
    tokenizer = spec.tokenizer_class.from_pretrained("models/llama")
    tokenizer.pad_token = tokenizer.eos_token
    base = spec.model_class.from_pretrained_backbone("models/llama", tokenizer, number_encoding="xval")
    model = peft.get_peft_model(base, number_lora_config(base, r=4))
    expected = _outputs(model, tokenizer)[0]
    save_adapter(model, tokenizer, "adapter", "models/llama")  # --pretrained as given, relative
    recorded = str(work / "models" / "llama")
    assert json.loads(Path("adapter", BASE_FILE).read_text())["pretrained"] == recorded
    assert json.loads(Path("adapter", "adapter_config.json").read_text())["base_model_name_or_path"] == recorded

    monkeypatch.chdir(elsewhere)  # another working directory
    assert torch.allclose(_outputs(load_adapter(work / "adapter"), tokenizer)[0], expected, atol=1e-6)
    moved = (work / "models" / "llama").rename(tmp_path / "moved")
    message = f"pretrained folder {re.escape(recorded)} .* does not exist: pass where it is now, .*pretrained="
    with pytest.raises(ValueError, match=message):
        load_adapter(work / "adapter")
    with pytest.raises(ValueError, match=message):
        load_trained(work / "adapter")
    assert torch.allclose(_outputs(load_adapter(work / "adapter", pretrained=moved), tokenizer)[0], expected, atol=1e-6)


def test_a_hub_id_is_recorded_as_given_and_a_folder_absolutely(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "llama").mkdir(parents=True)
    assert base_source("HuggingFaceTB/SmolLM2-135M") == "HuggingFaceTB/SmolLM2-135M"
    assert base_source("models/llama") == base_source(Path("models/llama")) == os.path.join(tmp_path, "models", "llama")
    assert base_source(None) is None
