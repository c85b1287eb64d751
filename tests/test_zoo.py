"""Backbones by composition: every model type of ``hf_numbers.ZOO`` (tiny random configs) with every encoding
trains, saves and reloads; loads with its own code where hf_numbers is absent, generates or fills masks, and takes
LoRA; a model type no list names trains through the CLI; SmolLM2 goes through the
generic path with the base model's logits before training."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import torch
from model_helpers import (
    DIGIT_ENCODINGS,
    ENCODINGS,
    TEXT_ENCODINGS,
    ZOO_MATRIX,
    last_line_without_hf_numbers,
    needs_smollm2,
)

from hf_numbers import ZOO, NumberCausalLMConfig, NumberTokenizer, composed_backbone, get_backbone
from hf_numbers.data import train_number_tokenizer
from hf_numbers.training.lora import number_lora_config

TEXTS = ["x = 12.5, y = -3 and the cat sat 7 times", "the sum of 41 and 0.25 is 41.25 today"] * 10
BATCH = ["x = 3.5 and 7", "y = -2"]
pytestmark = pytest.mark.smoke  # in the drift check (scripts/check_latest.sh): composition uses transformers' internals
CAUSAL_ZOO = [name for name in ZOO if composed_backbone(name).causal]
MASKED_ZOO = [name for name in ZOO if not composed_backbone(name).causal]


def zoo_model(model_type: str, encoding: str, seed: int = 0) -> tuple:
    """A tiny random number model of ``model_type`` with ``encoding`` and its tokenizer (no dropout)."""
    spec = composed_backbone(model_type)
    tokenizer = train_number_tokenizer(TEXTS, model_type, vocab_size=300, **_scheme(encoding))
    config = spec.new_config(tokenizer, hidden_size=32, num_layers=2, num_heads=2, max_length=62,
                             number_encoding=encoding, **dict.fromkeys(spec.dropout_fields, 0.0), **_fields(encoding))
    torch.manual_seed(seed)
    return spec.model_class(config).eval(), tokenizer


def _scheme(encoding: str) -> dict:
    from hf_numbers import get_encoding

    return get_encoding(encoding).tokenizer_options({})


def _fields(encoding: str) -> dict:
    return {"scheme_min_exponent": -3, "scheme_max_exponent": 2} if encoding in TEXT_ENCODINGS else {}


def _labels(model, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Token labels and number labels: every token (causal), or the number tokens, else the second token (masked)."""
    if model.causal:
        return batch["input_ids"], batch.get("input_numbers")
    scored = model.number_mask(batch["input_ids"]) if model.number_encoding is not None else None
    if scored is None or not scored.any():
        scored = torch.zeros_like(batch["input_ids"], dtype=torch.bool)
        scored[:, 1] = True
    return batch["input_ids"].masked_fill(~scored, -100), batch.get("input_numbers")


EVERY_ENCODING = [*ENCODINGS, *TEXT_ENCODINGS, *DIGIT_ENCODINGS]


@pytest.fixture(scope="module")
def saved_zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], tuple[Path, list]]:
    """Every zoo type with every encoding, saved with its tokenizer, and its logits on :data:`BATCH`."""
    root, saved = tmp_path_factory.mktemp("zoo"), {}
    for name, encoding in ZOO_MATRIX:
        model, tokenizer = zoo_model(name, encoding)
        folder = root / f"{name}-{encoding}"
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        with torch.no_grad():
            logits = model(**tokenizer(BATCH, return_tensors="pt", padding=True)).logits
        saved[name, encoding] = (folder, logits.tolist())
    return saved


@pytest.mark.parametrize("name", ZOO)
def test_a_zoo_model_trains_and_reloads(name: str, saved_zoo) -> None:
    model, tokenizer = zoo_model(name, "xval")
    batch = tokenizer(BATCH, return_tensors="pt", padding=True)
    labels, number_labels = _labels(model, batch)
    out = model.train()(**batch, labels=labels, number_labels=number_labels)
    out.loss.backward()
    assert torch.isfinite(out.loss) and out.number_loss > 0
    assert model.get_input_embeddings().weight.grad[tokenizer.num_token_ids].abs().sum() > 0  # the [NUM] rows learn
    from transformers import AutoModel, AutoTokenizer

    folder, logits = saved_zoo[name, "xval"]
    reloaded, tok = AutoModel.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    assert type(reloaded).__name__ == type(model).__name__ and isinstance(tok, NumberTokenizer)
    assert reloaded.config.text_config.model_type == name
    with torch.no_grad():
        again = reloaded(**tok(BATCH, return_tensors="pt", padding=True)).logits
    assert torch.equal(again, torch.tensor(logits)), name  # the same machine, the same computation


@pytest.mark.parametrize("name", CAUSAL_ZOO)
def test_a_causal_zoo_model_generates_numbers(name: str) -> None:
    model, tokenizer = zoo_model(name, "xval")
    out = model.generate(**tokenizer(["x = 3"], return_tensors="pt"), max_new_tokens=4, do_sample=False,
                         return_dict_in_generate=True)  # fmt: skip
    assert out.sequences.shape[1] == out.numbers.shape[1] and out.numbers.dtype == torch.float64


@pytest.mark.parametrize("name", MASKED_ZOO)
def test_a_masked_zoo_model_fills_masks(name: str) -> None:
    model, tokenizer = zoo_model(name, "xval")
    batch = tokenizer([f"x = 3.5 and {tokenizer.mask_token}"], return_tensors="pt")
    ids, numbers = model.fill_mask(**batch, mask_token_id=tokenizer.mask_token_id)
    assert ids.shape == batch["input_ids"].shape and numbers.dtype == torch.float64


@pytest.mark.parametrize("name", ZOO)
def test_lora_adapts_a_zoo_model(name: str) -> None:
    import peft

    model, tokenizer = zoo_model(name, "fone")
    adapted = peft.get_peft_model(model.train(), number_lora_config(model, r=2))
    batch = tokenizer(BATCH, return_tensors="pt", padding=True)
    labels, number_labels = _labels(model, batch)
    adapted(**batch, labels=labels, number_labels=number_labels).loss.backward()
    lora = [p for n, p in adapted.named_parameters() if "lora_B" in n]
    assert lora and all(p.grad is not None for p in lora)
    assert not any("lm_head" in n for n, _ in adapted.named_parameters() if "lora_" in n)  # the trunk only


@pytest.mark.parametrize("encoding", EVERY_ENCODING)
@pytest.mark.parametrize("name", ZOO)
def test_every_encoding_runs_on_every_zoo_type(name: str, encoding: str, saved_zoo) -> None:
    """The matrix of issue 40: a loss to train on, and the saved model reloads with equal logits."""
    model, tokenizer = zoo_model(name, encoding)
    batch = tokenizer(BATCH, return_tensors="pt", padding=True)
    labels, number_labels = _labels(model, batch)
    out = model(**batch, labels=labels, number_labels=number_labels if model.number_encoding is not None else None)
    assert torch.isfinite(out.loss)
    folder, logits = saved_zoo[name, encoding]
    reloaded = type(model).from_pretrained(folder).eval()
    with torch.no_grad():
        assert torch.equal(reloaded(**batch).logits, torch.tensor(logits))  # the same machine, the same computation


REMOTE_CODE_PAIRS = {(name, ENCODINGS[0]) for name in ZOO} | {
    (name, encoding) for name in (CAUSAL_ZOO[0], MASKED_ZOO[0]) for encoding in EVERY_ENCODING
}
"""The pairs loaded with their own code: every type with one encoding, every encoding on a causal and a masked type
(all 121 pairs take 80 s here, these 33 take 20; every pair reloads with hf_numbers above)."""


def test_zoo_checkpoints_load_with_their_own_code_without_hf_numbers(saved_zoo, tmp_path: Path) -> None:
    """The Hub rule for composed backbones: config, model and tokenizer from the checkpoint's code."""
    checked = {key: saved for key, saved in saved_zoo.items() if key in REMOTE_CODE_PAIRS}
    folders = {f"{name} {encoding}": str(folder) for (name, encoding), (folder, _) in checked.items()}
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.modules["hf_numbers"] = None  # importing hf_numbers now fails
        import torch
        from transformers import AutoModel, AutoTokenizer
        out = {{}}
        for name, folder in {folders!r}.items():
            model = AutoModel.from_pretrained(folder, trust_remote_code=True).eval()
            tok = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)
            assert type(model).__module__.startswith("transformers_modules."), type(model).__module__
            with torch.no_grad():
                out[name] = model(**tok({BATCH!r}, return_tensors="pt", padding=True)).logits.tolist()
        print(json.dumps(out))
        """
    )
    remote = json.loads(last_line_without_hf_numbers(script, cwd=tmp_path, timeout=600))
    for (name, encoding), (_, logits) in checked.items():
        assert torch.allclose(torch.tensor(remote[f"{name} {encoding}"]), torch.tensor(logits), atol=1e-6), name


def test_a_model_type_no_list_names_trains_through_the_cli(tmp_path: Path) -> None:
    """The adding-a-backbone trial: StarCoder2 is in no table of hf_numbers, and trains, saves and reloads."""
    from model_helpers import tiny_args

    from hf_numbers.training.pipeline import run_training

    name = "starcoder2"
    assert name not in ZOO and name not in __import__("hf_numbers").BACKBONES
    summary = run_training(tiny_args(backbone=name, number_encoding="fone", max_steps=2, output_dir=str(tmp_path)))
    from transformers import AutoModel

    model = AutoModel.from_pretrained(summary["final_dir"])
    assert model.config.text_config.model_type == name and summary["steps"] == 2


def test_what_cannot_be_a_backbone_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown; allowed: .*model type of any causal or masked LM"):
        get_backbone("clip_vision_model")
    from transformers import LlavaConfig

    with pytest.raises(ValueError, match="is itself composite"):
        NumberCausalLMConfig(text_config=LlavaConfig(), number_encoding="fone", num_token_id=1)
    from transformers import ElectraConfig

    from hf_numbers import NumberForMaskedLM, NumberMaskedLMConfig

    narrow = ElectraConfig(vocab_size=50, embedding_size=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=64)  # fmt: skip
    with pytest.raises(ValueError, match="token embeddings are 16 wide and its hidden states 32"):
        NumberForMaskedLM(NumberMaskedLMConfig(text_config=narrow, number_encoding="fone", num_token_id=49))


@needs_smollm2
def test_smollm2_through_the_generic_path_starts_as_the_base_model(smollm2_dir, smollm2_plain) -> None:
    """Value-aware digits on SmolLM2 held by composition: before training, the base model's logits exactly."""
    spec = composed_backbone("llama")
    tokenizer = NumberTokenizer.from_pretrained(smollm2_dir, number_scheme="text")
    model = spec.model_class.from_pretrained_backbone(smollm2_dir, tokenizer, number_encoding="digits").eval()
    batch = tokenizer(["What is 123 + 4567? 4690"], return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(model(**batch).logits, smollm2_plain(input_ids=batch["input_ids"]).logits)


def test_the_models_page_lists_the_zoo_the_tests_run() -> None:
    """(README.md's backbone table is the tested matrix itself: tests/test_docs.py.)"""
    page = Path(__file__).resolve().parents[1] / "docs" / "models.md"
    assert ", ".join(ZOO) in " ".join(page.read_text(encoding="utf-8").split())


def test_a_pretrained_folder_of_a_composed_backbone_adapts_with_lora_through_the_cli(tmp_path: Path) -> None:
    """--pretrained a plain Qwen2 folder, no --backbone (read from its config): LoRA, save, reload."""
    from model_helpers import tiny_args
    from transformers import AutoModel

    from hf_numbers.data.tokenizer_training import train_plain_tokenizer
    from hf_numbers.training import NumberTrainingArguments
    from hf_numbers.training.pipeline import run_training

    spec, plain = composed_backbone("qwen2"), tmp_path / "plain"
    tokenizer = train_plain_tokenizer(TEXTS, "qwen2", vocab_size=300)
    tokenizer.save_pretrained(plain)
    ids = {name: getattr(tokenizer, attribute) for name, attribute in spec.config_class.tokenizer_token_ids.items()}
    spec.plain_model_class(spec.plain_config_class(**{**spec.tiny_sizes, **ids, "vocab_size": len(tokenizer)}))\
        .save_pretrained(plain)  # fmt: skip
    assert NumberTrainingArguments(pretrained=str(plain)).backbone == "qwen2"
    summary = run_training(tiny_args(pretrained=str(plain), number_encoding="fone", lora_r=2, max_steps=2,
                                     output_dir=str(tmp_path / "run")))  # fmt: skip
    model = AutoModel.from_pretrained(summary["final_dir"])
    assert model.config.text_config.model_type == "qwen2" and summary["steps"] == 2
