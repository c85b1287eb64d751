"""Number models: one matrix of every encoding x every backbone, input checks, and the real pretrained BERT."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import transformers
from model_helpers import (
    CAUSAL,
    DIGIT_MATRIX,
    ENCODINGS,
    FIRST_WORD_ID,
    MATRIX,
    MODEL_CLASSES,
    NUM_IDS,
    TEXT_MATRIX,
    VOCAB,
    backbone_config,
    backbone_state,
    inputs_only,
    last_line_without_hf_numbers,
    one_thread,
    random_batch,
    tiny_config,
    tiny_model,
)
from test_old_checkpoints import STORED_TOLERANCE
from transformers import AutoModel
from transformers import initialization as init

from hf_numbers import BACKBONES, NUMBER_ENCODINGS_REGISTRY, NumberBertForMaskedLM, NumberBertTokenizer
from hf_numbers.data.collators import DataCollatorForNumberCausalLM, DataCollatorForNumberMLM
from hf_numbers.modeling.modeling_number_base import VALUE_ROWS_INIT_SCALE

pytestmark = pytest.mark.smoke  # in the drift check's subset (scripts/check_latest.sh)

EVERY_PAIR = pytest.mark.parametrize("backbone,encoding", MATRIX)
CODE_FILES = (
    "modeling_number_base.py",
    "modeling_number_losses.py",
    "generation_number.py",
    "encoding_xval.py",
    "encoding_float.py",
    "encoding_exponent.py",
    "encoding_fone.py",
    "encoding_base.py",
    "encoding_registry.py",
    "configuration_number.py",
    "number_scaling.py",
    "pipeline_number.py",
)
# The remote-code models of encodings that need scaling carry one: the checkpoint's own code must apply it.
REMOTE_SCALING = {"number_scaling_shift": 0.5, "number_scaling_scale": 0.8, "number_scaling_log": True}


def remote_model(backbone: str, encoding: str):
    """The model saved for the remote-code test (scaled where the encoding needs it)."""
    entry = NUMBER_ENCODINGS_REGISTRY[encoding]
    return tiny_model(backbone, encoding, **(REMOTE_SCALING if entry.needs_scaling and entry.has_number_module else {}))


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


def outputs_equal(a, b) -> bool:
    return torch.equal(a.logits, b.logits) and torch.equal(a.number_predictions, b.number_predictions)


# ---------------------------------------------------------------------- the matrix
def test_the_matrix_is_every_backbone_with_every_encoding() -> None:
    """Every encoding with a number module; the text baselines have their own matrix (test_text_models.py)."""
    with_module = [name for name, cls in NUMBER_ENCODINGS_REGISTRY.items() if cls.has_number_module]
    assert {pair for pair in MATRIX} == {(b, e) for b in BACKBONES for e in with_module}
    assert len(MATRIX) == len(BACKBONES) * len(with_module) and set(ENCODINGS) == set(with_module)


@EVERY_PAIR
def test_forward_shapes_loss_and_backward(backbone: str, encoding: str) -> None:
    model = tiny_model(backbone, encoding)
    batch = random_batch(backbone)
    out = model(**batch)
    batch_size, length = batch["input_ids"].shape
    assert out.logits.shape == (batch_size, length, VOCAB)
    assert out.number_predictions.shape == (batch_size, length)
    assert out.number_predictions.dtype == torch.float64 and torch.isfinite(out.number_predictions).all()
    assert torch.isfinite(out.loss) and out.number_loss > 0
    assert torch.allclose(out.loss, out.token_loss + model.config.number_loss_weight * out.number_loss)
    assert model(**inputs_only(batch)).loss is None
    assert model(**batch, return_dict=False)[0] is not None  # tuples start with the loss
    out.loss.backward()
    for name, parameter in model.number_encoding.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


@EVERY_PAIR
def test_a_few_steps_lower_the_loss(backbone: str, encoding: str) -> None:
    model = tiny_model(backbone, encoding)
    batch = random_batch(backbone, seed=1)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    first = model(**batch)
    for _ in range(10):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    last = model(**batch)
    assert last.loss < first.loss and last.number_loss < first.number_loss and last.token_loss < first.token_loss


@EVERY_PAIR
def test_save_and_load_give_identical_outputs(backbone: str, encoding: str, tmp_path: Path) -> None:
    model = tiny_model(backbone, encoding).eval()
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").exists()
    batch = inputs_only(random_batch(backbone))
    with torch.no_grad():
        expected = model(**batch)
        for loaded in (MODEL_CLASSES[backbone].from_pretrained(tmp_path), AutoModel.from_pretrained(tmp_path)):
            assert type(loaded) is type(model)
            assert outputs_equal(loaded.eval()(**batch), expected)


_REMOTE_SCRIPT = """
import sys
sys.modules["hf_numbers"] = None  # the package is not importable: only the checkpoint's own code may be used
import torch
import transformers

torch.set_num_threads(1)  # as in the tests, so that both sides compute bit-identical outputs
root = sys.argv[1]
for name, auto_class_name in zip(sys.argv[3::2], sys.argv[4::2]):
    path = f"{root}/{name}"
    model = getattr(transformers, auto_class_name).from_pretrained(path, trust_remote_code=True).eval()
    with torch.no_grad():
        out = model(**torch.load(f"{path}/inputs.pt"))
    result = {"logits": out.logits, "number_predictions": out.number_predictions, "module": type(model).__module__}
    torch.save(result, f"{path}/{sys.argv[2]}")
"""


def load_remotely(python: str, root: Path, outputs: str) -> None:
    """Load every checkpoint under ``root`` with trust_remote_code in ONE fresh ``python``; save its outputs."""
    names = [part for backbone, encoding in MATRIX + TEXT_MATRIX + DIGIT_MATRIX
             for part in (f"{backbone}-{encoding}", BACKBONES[backbone].auto_class_name)]
    last_line_without_hf_numbers(_REMOTE_SCRIPT, str(root), outputs, *names, cwd=root, python=python,
                                 modules=f"modules-{outputs}")  # fmt: skip


@pytest.fixture(scope="module")
def remote_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every matrix model saved and reloaded with trust_remote_code in ONE fresh interpreter."""
    root = tmp_path_factory.mktemp("remote")
    for backbone, encoding in MATRIX + TEXT_MATRIX + DIGIT_MATRIX:
        name = f"{backbone}-{encoding}"
        remote_model(backbone, encoding).save_pretrained(root / name)
        torch.save(inputs_only(random_batch(backbone)), root / name / "inputs.pt")
    load_remotely(sys.executable, root, "remote_outputs.pt")
    return root


@pytest.mark.parametrize("backbone,encoding", MATRIX + TEXT_MATRIX + DIGIT_MATRIX)
def test_remote_code_load_in_a_fresh_interpreter(backbone: str, encoding: str, remote_checkpoints: Path) -> None:
    path = remote_checkpoints / f"{backbone}-{encoding}"
    auto_map = json.loads((path / "config.json").read_text())["auto_map"]
    assert set(auto_map) == {"AutoConfig", "AutoModel", BACKBONES[backbone].auto_class_name}
    model_module = MODEL_CLASSES[backbone].__module__.rsplit(".", 1)[-1]  # modeling_number or the backbone's own
    assert all((path / file).exists() for file in (*CODE_FILES, f"{model_module}.py"))
    remote = torch.load(path / "remote_outputs.pt")
    assert remote["module"].startswith("transformers_modules.")
    model = remote_model(backbone, encoding).eval()
    if not model.number_scaling.is_identity:  # raw values in and out, also where hf_numbers is not installed
        config = json.loads((path / "config.json").read_text())
        assert {key: config[key] for key in REMOTE_SCALING} == REMOTE_SCALING
    with torch.no_grad():
        local = model(**torch.load(path / "inputs.pt"))
    assert torch.equal(local.logits, remote["logits"])
    if local.number_predictions is None:  # a text encoding: no number module on either side
        assert remote["number_predictions"] is None
    else:
        assert torch.equal(local.number_predictions, remote["number_predictions"])


_OTHER = os.environ.get("HF_NUMBERS_OTHER_PYTHON")
OTHER_PYTHON = str(Path(_OTHER).absolute()) if _OTHER else None  # absolute, not resolved: a venv's python is a link


@pytest.mark.skipif(not OTHER_PYTHON, reason="HF_NUMBERS_OTHER_PYTHON names no other environment "
                    "(scripts/check_latest.sh sets it)")
def test_remote_code_under_another_environment_gives_identical_outputs(remote_checkpoints: Path) -> None:
    """Checkpoints saved here load with their own code in another environment (say, another transformers): the same
    outputs bit for bit under the same torch (one machine, the same kernels), within :data:`OTHER_TORCH_TOLERANCE`
    under another torch, whose kernels may round differently, as another machine's do."""
    other = subprocess.run([OTHER_PYTHON, "-c", "import transformers, torch; print(transformers.__version__, "
                            "torch.__version__)"], capture_output=True, text=True, check=True).stdout.strip()
    exact = other.split()[1] == torch.__version__
    print(f"saved under transformers {transformers.__version__}, torch {torch.__version__}; loaded under {other}; "
          + ("bit for bit" if exact else f"within {OTHER_TORCH_TOLERANCE}"))
    load_remotely(OTHER_PYTHON, remote_checkpoints, "other_outputs.pt")
    different = []
    for backbone, encoding in MATRIX + TEXT_MATRIX + DIGIT_MATRIX:
        here = torch.load(remote_checkpoints / f"{backbone}-{encoding}" / "remote_outputs.pt")
        there = torch.load(remote_checkpoints / f"{backbone}-{encoding}" / "other_outputs.pt")
        assert there["module"].startswith("transformers_modules.")
        if not all(_same(here[key], there[key], exact) for key in ("logits", "number_predictions")):
            different.append(f"{backbone}-{encoding}")
    assert not different, f"outputs differ under {other}: {different}"


OTHER_TORCH_TOLERANCE = STORED_TOLERANCE
"""Another torch on this machine may round as another machine does: the tolerance chosen in
tests/test_old_checkpoints.py from the spread between two CPUs."""


def _same(a: torch.Tensor | None, b: torch.Tensor | None, exact: bool = True) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return torch.equal(a, b) if exact else torch.allclose(a, b, **OTHER_TORCH_TOLERANCE, equal_nan=True)


# ---------------------------------------------------------------------- losses and positions
@pytest.mark.parametrize("backbone", CAUSAL)
def test_causal_number_loss_uses_shifted_number_labels(backbone: str) -> None:
    model = tiny_model(backbone, "fone")
    batch = random_batch(backbone)
    ids, numbers = batch["input_ids"], batch["input_numbers"]
    default = model(**batch)
    explicit = model(**batch, number_labels=numbers)
    assert torch.equal(default.number_loss, explicit.number_loss)
    is_num = torch.isin(ids, torch.tensor(NUM_IDS[backbone]))
    ignored = model(**batch | {"number_labels": numbers.masked_fill(~is_num, float("nan"))})
    assert torch.equal(ignored.number_loss, default.number_loss)  # only number-token labels are read
    changed = model(**batch | {"number_labels": numbers.masked_fill(is_num, 7.0)})
    assert not torch.equal(changed.number_loss, default.number_loss)
    no_number_labels = model(**batch | {"labels": ids.masked_fill(is_num, -100)})
    assert no_number_labels.number_loss == 0 and torch.isfinite(no_number_labels.loss)


@pytest.mark.parametrize("backbone", BACKBONES)
def test_number_positions_come_from_ids_not_values(backbone: str) -> None:
    """A value at a token that is not a number token is refused, never read as a number."""
    model = tiny_model(backbone, "xval").eval()
    batch = inputs_only(random_batch(backbone))
    is_num = torch.isin(batch["input_ids"], torch.tensor(NUM_IDS[backbone]))
    with torch.no_grad(), pytest.raises(ValueError, match=r"holds nan at position \(0, 0\), whose token id \d+ is not"):
        model(**batch | {"input_numbers": batch["input_numbers"].masked_fill(~is_num, float("nan"))})


@pytest.mark.parametrize("backbone", BACKBONES)
def test_logits_to_keep_keeps_the_positions_asked_for(backbone: str) -> None:
    """``logits_to_keep`` (an int: the last positions; a ``(B, k)`` tensor: those of each row, as the masked-word
    scoring asks a masked LM) gives the full forward's logits there, whether the model's own head or the held
    language model's computed them."""
    model = tiny_model(backbone, "xval").eval()
    batch = inputs_only(random_batch(backbone))
    positions = torch.tensor([[3], [7], [0]])
    with torch.no_grad():
        full = model(**batch).logits
        kept = model(**batch, logits_to_keep=positions).logits
        last = model(**batch, logits_to_keep=2).logits
    assert torch.allclose(kept, torch.take_along_dim(full, positions[..., None], dim=1), atol=1e-6)
    assert torch.allclose(last, full[:, -2:], atol=1e-6)


@pytest.mark.parametrize("backbone", BACKBONES)
def test_without_a_number_module_a_new_model_starts_as_the_plain_model(backbone: str) -> None:
    """A text encoding's model starts with the weights the plain model draws from the same seed, tensor for tensor:
    holding the language model adds no draw of its own (so rows of text encodings keep their figures when a family
    comes to be held by composition)."""
    model = tiny_model(backbone, "text", seed=3)
    torch.manual_seed(3)
    plain = BACKBONES[backbone].plain_model_class(backbone_config(model))
    state = backbone_state(model)
    assert state.keys() == plain.state_dict().keys()
    assert [name for name, weight in plain.state_dict().items() if not torch.equal(weight, state[name])] == []


@pytest.mark.parametrize("backbone", BACKBONES)
def test_matches_the_plain_backbone_without_numbers(backbone: str) -> None:
    model = tiny_model(backbone, "float").eval()
    plain = BACKBONES[backbone].plain_model_class(backbone_config(model)).eval()
    plain.load_state_dict(backbone_state(model), strict=True)
    ids = torch.randint(5, 98, (2, 9))
    with torch.no_grad():
        assert torch.allclose(model(input_ids=ids).logits, plain(input_ids=ids).logits, atol=1e-6)


@pytest.mark.parametrize("backbone", BACKBONES)
def test_xval_trunk_input_is_linear_in_the_value(backbone: str) -> None:
    """xVal's promise (continuity in the numbers) needs the trunk's input to be affine in the value on every
    backbone: GPT-2 adds positions to x * e_[NUM]; BERT and RoBERTa scale their normalised embedding, which a
    LayerNorm after the scaling would have divided out (100 and 10000 looked alike)."""
    model = tiny_model(backbone, "xval").eval()
    ids = torch.tensor([[5, NUM_IDS[backbone][-1], 7, NUM_IDS[backbone][0]]])

    def trunk_input(value: float) -> torch.Tensor:
        numbers = torch.tensor([[1.0, value, 1.0, 2.0]], dtype=torch.float64)
        with torch.no_grad():
            return model(input_ids=ids, input_numbers=numbers, output_hidden_states=True).hidden_states[0][0]

    zero, one = trunk_input(0.0), trunk_input(1.0)
    step = one[1] - zero[1]
    assert step.norm() > 0
    for value in (-3.0, 0.5, 5.0, 50.0, 500.0, 1e4):
        current = trunk_input(value)
        assert torch.allclose(current[1] - zero[1], value * step, rtol=1e-4, atol=1e-4 * abs(value))
        assert torch.equal(current[[0, 2, 3]], zero[[0, 2, 3]])  # the other positions' inputs do not move


@pytest.mark.parametrize("backbone", BACKBONES)
@pytest.mark.parametrize("encoding", ["xval", "fone"])
def test_only_xval_on_llama_starts_its_number_rows_larger_so_the_value_outlives_the_first_norm(
    backbone: str, encoding: str
) -> None:
    """Llama adds no positions to x * e_[NUM], so its first RMSNorm divides the value's size out and only the
    residual stream carries it on: a fresh xVal Llama starts its number rows VALUE_ROWS_INIT_SCALE times larger
    than its other rows (peers benchmark: test R² -0.12 on 3-digit products without). Nothing else changes."""
    model = tiny_model(backbone, encoding)
    rows = model.get_input_embeddings().weight.detach()
    num_ids = NUM_IDS[backbone]
    other = rows[FIRST_WORD_ID : min(num_ids)].norm(dim=-1).mean()
    ratio = float(rows[num_ids].norm(dim=-1).mean() / other)
    expected = VALUE_ROWS_INIT_SCALE if (backbone, encoding) == ("llama", "xval") else 1.0
    assert expected * 0.7 < ratio < expected * 1.3


def _mark_own_init(monkeypatch: pytest.MonkeyPatch, encoding: str) -> None:
    """Make ``encoding``'s own init set every weight it initialises to 0.5 (a value no backbone init draws)."""

    def own_init(module: torch.nn.Module) -> None:
        for weight in module.parameters():
            init.constant_(weight, 0.5)  # skips weights loaded from a checkpoint

    monkeypatch.setattr(NUMBER_ENCODINGS_REGISTRY[encoding], "init_parameters", own_init)


@EVERY_PAIR
def test_a_fresh_models_number_layers_keep_their_encodings_own_init(
    backbone: str, encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """transformers initialises the backbone; the number module's layers get the encoding's ``init_parameters``
    and nothing after it (BitTokens' and FoNE's projections start at the identity)."""
    _mark_own_init(monkeypatch, encoding)
    for name, weight in tiny_model(backbone, encoding).number_encoding.named_parameters():
        assert torch.all(weight == 0.5), f"{name} was initialised again after the encoding's own init"


@pytest.mark.parametrize("backbone", BACKBONES)
def test_bittokens_projection_starts_at_the_identity_on_every_backbone(backbone: str) -> None:
    weight = tiny_model(backbone, "bittokens").number_encoding.bit_proj.weight
    assert torch.equal(weight, torch.eye(*weight.shape))


def test_xval_on_pretrained_bert_reuses_every_weight(real_bert_dir: Path) -> None:
    """Fine-tuning the real all-MiniLM-L6-v2 with xVal keeps every trunk weight, and the value still reaches it."""
    tokenizer = NumberBertTokenizer.from_pretrained(real_bert_dir)
    model = NumberBertForMaskedLM.from_pretrained_backbone(real_bert_dir, tokenizer, number_encoding="xval").eval()
    plain = AutoModel.from_pretrained(real_bert_dir)
    state = model.language_model.bert.state_dict()
    trunk = {name: weight for name, weight in plain.state_dict().items() if not name.startswith("pooler.")}
    assert set(trunk) == set(state)  # a masked LM has no pooler; every other weight is there
    for name, weight in trunk.items():
        loaded = state[name][: weight.shape[0]] if state[name].shape != weight.shape else state[name]
        assert torch.equal(loaded, weight), name
    batch = tokenizer(["it weighs 100 kg", "it weighs 10000 kg"], return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch, output_hidden_states=True).hidden_states[0]
    position = batch["input_ids"][0].tolist().index(tokenizer.num_token_id)
    assert torch.allclose(hidden[1, position], 100 * hidden[0, position], rtol=1e-4)


# ---------------------------------------------------------------------- invalid inputs
@pytest.mark.parametrize("backbone", BACKBONES)
def test_invalid_inputs_are_value_errors(backbone: str) -> None:
    model = tiny_model(backbone, "fone")
    batch = random_batch(backbone)
    ids, numbers = batch["input_ids"], batch["input_numbers"]
    is_num = torch.isin(ids, torch.tensor(NUM_IDS[backbone]))
    cases = {
        "input_numbers has shape": {"input_ids": ids, "input_numbers": numbers[:, :-1]},
        "input_numbers holds nan": {"input_ids": ids, "input_numbers": numbers.masked_fill(is_num, float("nan"))},
        "input_numbers holds inf": {"input_ids": ids, "input_numbers": numbers.masked_fill(is_num, float("inf"))},
        r"holds 123456.0 .* \|x\| < 10\^4": {"input_ids": ids, "input_numbers": numbers.masked_fill(is_num, 123456.0)},
        "input_numbers is None": {"input_ids": ids},
        "not inputs_embeds": {"input_ids": ids, "input_numbers": numbers, "inputs_embeds": torch.zeros(3, 12, 32)},
        "number_labels has shape": batch | {"number_labels": numbers[:, :-1]},
        "number_labels holds nan": batch | {"number_labels": torch.full_like(numbers, float("nan"))},
    }
    if not BACKBONES[backbone].causal:
        cases["number_labels is None"] = {k: v for k, v in batch.items() if k != "number_labels"}
    for message, kwargs in cases.items():
        with pytest.raises(ValueError, match=message):
            model(**kwargs)


def test_config_needs_a_number_token() -> None:
    with pytest.raises(ValueError, match="num_token_id must be set"):
        MODEL_CLASSES["bert"](tiny_config("bert", "xval", num_token_id=None, num_token_ids=None))


@pytest.mark.parametrize("backbone", BACKBONES)
def test_a_config_from_a_tokenizer_takes_every_special_id_from_it(backbone: str, plain_tokenizer_dirs) -> None:
    spec = BACKBONES[backbone]
    tokenizer = spec.tokenizer_class.from_pretrained(plain_tokenizer_dirs[backbone])  # 400 pieces, not 50k
    config = spec.config_class.from_tokenizer(tokenizer, **spec.size_config(32, 2, 2, 64), number_encoding="xval")
    special = {field: getattr(config, field) for field in spec.config_class.tokenizer_token_ids}
    assert special == {field: getattr(tokenizer, name) for field, name in spec.config_class.tokenizer_token_ids.items()}
    assert all(i is None or i < len(tokenizer) for i in special.values()), special
    assert config.vocab_size == len(tokenizer) and config.num_token_ids == tokenizer.num_token_ids
    model = spec.model_class(config).eval()  # ModernBERT's default pad id 50283 crashed here
    batch = tokenizer(["the mass is 1.5 kg"], return_tensors="pt")
    with torch.no_grad():
        assert torch.isfinite(model(**batch).logits).all()


@pytest.mark.parametrize("field", ["pad_token_id", "bos_token_id", "eos_token_id"])
def test_a_special_token_id_outside_the_vocabulary_is_refused(field: str) -> None:
    with pytest.raises(ValueError, match=rf"{field}={VOCAB} lies outside the vocabulary: .*\[0, {VOCAB}\)"):
        tiny_config("llama", "xval", **{field: VOCAB})


@pytest.mark.parametrize("size", [0, VOCAB + 1])
def test_a_tokenizer_vocab_size_outside_the_vocabulary_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match=rf"tokenizer_vocab_size must be in \[1, vocab_size={VOCAB}\] .*got {size}"):
        tiny_config("llama", "xval", tokenizer_vocab_size=size)


# ---------------------------------------------------------------------- freezing and real checkpoints
@pytest.mark.parametrize("backbone", BACKBONES)
def test_freeze_backbone_survives_save_load_and_resize(backbone: str, tmp_path: Path) -> None:
    model = tiny_model(backbone, "exponent")
    model.freeze_backbone()
    model.save_pretrained(tmp_path)
    loaded = MODEL_CLASSES[backbone].from_pretrained(tmp_path)
    loaded.resize_token_embeddings(VOCAB + 4)
    for candidate in (model, loaded):
        assert not any(p.requires_grad for p in candidate.trunk.parameters())
        assert all(p.requires_grad for p in candidate.number_encoding.parameters())


@pytest.fixture(scope="module")
def plain_checkpoints(plain_tokenizer_dirs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random checkpoint of each backbone's plain transformers class, saved with its plain tokenizer."""
    root = tmp_path_factory.mktemp("plain_checkpoints")
    for name, spec in BACKBONES.items():
        tokenizer = spec.load_plain_tokenizer(plain_tokenizer_dirs[name])
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        torch.manual_seed(0)
        config = spec.plain_config_class(**{**spec.tiny_sizes, "vocab_size": len(tokenizer), "pad_token_id": pad})
        spec.plain_model_class(config).save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
    return root


@EVERY_PAIR
def test_plain_checkpoint_adapts_with_a_frozen_trunk(backbone: str, encoding: str, plain_checkpoints: Path) -> None:
    """``from_pretrained_backbone`` reuses every weight of a plain checkpoint and adds the number tokens; with the
    trunk frozen, a training step changes only the number module and the token head's own parameters."""
    spec, path = BACKBONES[backbone], plain_checkpoints / backbone
    tokenizer = spec.tokenizer_class.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    plain = spec.plain_model_class.from_pretrained(path)
    model = spec.model_class.from_pretrained_backbone(path, tokenizer, number_encoding=encoding, freeze_backbone=True)
    assert model.config.vocab_size == len(tokenizer) == plain.config.vocab_size + len(tokenizer.num_token_ids)
    state = backbone_state(model)
    for name, weight in plain.state_dict().items():
        assert torch.equal(state[name][: weight.shape[0]] if state[name].shape != weight.shape else state[name], weight)
    trunk = {id(p) for p in model.trunk.parameters()}  # a head tied to the word embeddings is the trunk's
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable == {name for name, p in model.named_parameters() if id(p) not in trunk}
    assert {f"number_encoding.{name}" for name, _ in model.number_encoding.named_parameters()} <= trainable
    texts = ["the temperature was 21.5 degrees", "it cost -3.25 dollars and 12 cents"]
    collator = (DataCollatorForNumberCausalLM(tokenizer) if spec.causal
                else DataCollatorForNumberMLM(tokenizer, numbers_only=True, whole_numbers=True))
    batch = collator([tokenizer(text) for text in texts])
    before = {name: p.clone() for name, p in model.named_parameters()}
    out = model(**batch)
    assert torch.isfinite(out.loss) and out.number_loss > 0
    out.loss.backward()
    torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1).step()
    changed = {name for name, p in model.named_parameters() if not torch.equal(p, before[name])}
    assert {name for name in changed if name.startswith("number_encoding.")} and changed <= trainable


@EVERY_PAIR
def test_a_plain_checkpoints_new_number_layers_get_their_encodings_own_init(
    backbone: str, encoding: str, plain_checkpoints: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, path = BACKBONES[backbone], plain_checkpoints / backbone
    tokenizer = spec.tokenizer_class.from_pretrained(path)
    _mark_own_init(monkeypatch, encoding)
    model = spec.model_class.from_pretrained_backbone(path, tokenizer, number_encoding=encoding)
    for name, weight in model.number_encoding.named_parameters():
        assert torch.all(weight == 0.5), f"{name} was initialised again after the encoding's own init"


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_real_bert_frozen_trunk_training_step(encoding: str, real_bert_dir: Path) -> None:
    """all-MiniLM-L6-v2 (a BertModel, no MLM head) with the trunk frozen: one step trains only the number module
    and the token head's own (untied) parameters, which are new here."""
    tokenizer = NumberBertTokenizer.from_pretrained(real_bert_dir)
    model = NumberBertForMaskedLM.from_pretrained_backbone(
        real_bert_dir, tokenizer, number_encoding=encoding, freeze_backbone=True
    )
    assert model.config.vocab_size == len(tokenizer) == 30523
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(
        name.startswith(("number_encoding.", "language_model.cls.predictions.transform."))
        or name == "language_model.cls.predictions.bias"
        for name in trainable
    )
    assert {name for name in trainable if name.startswith("number_encoding.")} == {
        f"number_encoding.{name}" for name, _ in model.number_encoding.named_parameters()
    }
    batch = tokenizer(
        ["the temperature was 21.5 degrees", "it cost -3.25 dollars and 12 cents"], padding=True, return_tensors="pt"
    )
    is_num = torch.isin(batch["input_ids"], torch.tensor(tokenizer.num_token_ids))
    batch["labels"] = batch["input_ids"].masked_fill(~is_num, -100)
    batch["number_labels"] = batch["input_numbers"]
    batch["input_ids"] = batch["input_ids"].masked_fill(is_num, tokenizer.mask_token_id)
    batch["input_numbers"] = batch["input_numbers"].masked_fill(is_num, 1.0)  # a masked number's value goes too
    trunk_before = model.trunk.encoder.layer[0].attention.self.query.weight.clone()
    number_before = [p.clone() for p in model.number_encoding.parameters()]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    out = model(**batch)
    assert torch.isfinite(out.loss) and out.number_loss > 0
    out.loss.backward()
    optimizer.step()
    assert torch.equal(model.trunk.encoder.layer[0].attention.self.query.weight, trunk_before)
    assert all(not torch.equal(a, b) for a, b in zip(number_before, model.number_encoding.parameters(), strict=True))
