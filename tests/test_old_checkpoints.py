"""Checkpoints saved by an earlier hf_numbers still load and give the outputs they gave when saved.

``tests/data/old_checkpoints/`` holds tiny models saved by hf_numbers at commit 3db673b, before the modules of
``hf_numbers/modeling`` were renamed (``encodings.py``, ``text_baselines.py``, ``text_encodings.py``...): each
folder has the model, its tokenizer and ``expected.safetensors``: the ``input_ids`` and ``input_numbers`` of
:data:`TEXT` and the ``logits`` and ``number_predictions`` the model gave; ``code/`` holds the code
``save_pretrained`` copied into each folder then (the same files in each). They load with the installed classes,
and with ``trust_remote_code=True`` from their own code in a fresh interpreter where hf_numbers cannot be imported.
The stored outputs were computed on the machine that saved them, whose float kernels may round differently: the
token ids and parsed numbers must match exactly, the float outputs within :data:`STORED_TOLERANCE`. The two loads
on this machine (installed classes, remote code) are compared with each other bit for bit.
``PYTHONPATH=. python tests/test_old_checkpoints.py`` wrote them; run it again only to replace them on purpose
(with the code of the version they stand for).
"""

from __future__ import annotations

import inspect
import json
import shutil
import textwrap
from pathlib import Path

import pytest
import torch
from model_helpers import last_line_without_hf_numbers
from safetensors.torch import load_file, save_file

import hf_numbers
from hf_numbers import BACKBONES, get_backbone, get_encoding
from hf_numbers.data import train_number_tokenizer

ROOT = Path(__file__).resolve().parent / "data" / "old_checkpoints"
"""One folder per checkpoint, without its code: ``code/`` holds the files ``save_pretrained`` copied into each."""
CHECKPOINTS = {"gpt2-xval": ("gpt2", "xval"), "bert-fone": ("bert", "fone"), "gpt2-p10": ("gpt2", "p10")}
"""Folder: (backbone, number_encoding)."""
TEXT = "The temperature was 21.5 degrees at 10:30, and -3 degrees at night."
EXACT = ("input_ids", "input_numbers")
"""Stored tensors that no float kernel computes (token ids; values parsed from the text by Python's correctly rounded
``float``): equal on every machine."""
STORED_TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}
"""How far a float output may be from ``expected.safetensors`` (``torch.testing.assert_close``).

Measured on a 2-core AMD EPYC (Zen 4, AVX-512), torch 2.13.0: logits differ by at most 6.0e-08 (gpt2-xval equal;
bert-fone 1028 of 1260 values, 5.96e-08; gpt2-p10 159 of 10048, 2.98e-08): one or two float32 ulps of logits below
0.37; xVal's number predictions by at most 1.7e-08 (relative 1.2e-09); FoNE's decoded digits are equal. torch's
scalar and AVX2 kernels (``ATEN_CPU_CAPABILITY=default`` / ``avx2``) give no larger spread. 1e-6 is 17 times the
largest, and far below a change of behaviour: adding 1e-3 to one weight fails the check in 274 of 335 tries (5
random entries of every parameter); every try that moves an output by more than 8.2e-07 fails (the others touch
attention scores that barely move, or rows this text never reads). A flipped FoNE digit moves a value by at least
0.01, far beyond 1e-6 + 1e-6 * 920; no kernel flips one (the closest two digit logits are 3.7e-03 apart, 15,000
float32 ulps of the largest head output, 2.6).
"""
OPTIONS = {  # fixed rather than fitted, so that the tiny configs say what they hold
    "fone": {"fone_int_digits": 3, "fone_frac_digits": 2},
    "p10": {"scheme_digits": 3, "scheme_min_exponent": -3, "scheme_max_exponent": 2},
}


def checkpoint_outputs(path: str, auto_class_name: str, text: str, trust_remote_code: bool) -> dict:
    """The tokenized ``text`` and the model's outputs, with the modules of the model and tokenizer classes.

    Self-contained (its source also runs in the fresh interpreter): only torch and transformers.
    """
    import torch
    import transformers

    torch.set_num_threads(1)  # bit-identical outputs on both sides
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code)
    model = getattr(transformers, auto_class_name).from_pretrained(path, trust_remote_code=trust_remote_code)
    batch = tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        out = model.eval()(**batch)
    tensors = {"input_ids": batch["input_ids"], "input_numbers": batch["input_numbers"], "logits": out.logits}
    if out.number_predictions is not None:  # a text baseline has none
        tensors["number_predictions"] = out.number_predictions
    return {"tensors": tensors, "modules": [type(model).__module__, type(tokenizer).__module__]}


def save_old_checkpoints(root: Path = ROOT) -> None:
    """Write the tiny checkpoints and their expected outputs, and move their code (the same in each) to ``code/``."""
    assert Path(hf_numbers.__file__).parents[1] == ROOT.parents[2], f"not this checkout's: {hf_numbers.__file__}"
    for name, (backbone, encoding) in CHECKPOINTS.items():
        spec, entry, options = get_backbone(backbone), get_encoding(encoding), OPTIONS.get(encoding, {})
        tokenizer = train_number_tokenizer([TEXT] * 5, backbone, vocab_size=300, **entry.tokenizer_options(options))
        torch.manual_seed(0)
        config = spec.new_config(tokenizer, hidden_size=16, num_layers=1, num_heads=2, max_length=64,
                                 number_encoding=encoding, **options, **dict.fromkeys(spec.dropout_fields, 0.0))
        model = spec.model_class(config)
        if entry.has_number_module and entry.needs_scaling:  # xVal: a scaling the model applies
            model.fit_number_scaling([21.5, 10.0, 30.0, -3.0])
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
        result = checkpoint_outputs(str(root / name), spec.auto_class_name, TEXT, trust_remote_code=False)
        save_file(result["tensors"], root / name / "expected.safetensors")
    (root / "code").mkdir()
    for path in sorted(root.glob("*/*.py")):
        copy = root / "code" / path.name
        assert not copy.exists() or copy.read_bytes() == path.read_bytes(), path
        path.replace(copy)


def assert_close_to_saved(tensors: dict[str, torch.Tensor], name: str) -> None:
    """The tensors the checkpoint ``name`` gave when it was saved: :data:`EXACT` ones exactly, float outputs (computed
    by another machine's kernels) within :data:`STORED_TOLERANCE`."""
    expected = load_file(ROOT / name / "expected.safetensors")
    assert tensors.keys() == expected.keys()
    for key, value in expected.items():
        where = f"{name} {key}"
        if key in EXACT:
            assert torch.equal(tensors[key], value), where
        else:
            torch.testing.assert_close(tensors[key], value, **STORED_TOLERANCE, msg=lambda m, at=where: f"{at}: {m}")


_REMOTE = """
import json, sys
sys.modules["hf_numbers"] = None  # hf_numbers cannot be imported: only the checkpoint's own code
from safetensors.torch import save_file
{source}
result = checkpoint_outputs(sys.argv[1], sys.argv[2], sys.argv[3], trust_remote_code=True)
save_file(result["tensors"], sys.argv[4])
print(json.dumps(result["modules"]))
"""


def installed_outputs(name: str) -> dict:
    """:func:`checkpoint_outputs` of the checkpoint ``name`` with the installed classes, in this process."""
    return checkpoint_outputs(str(ROOT / name), BACKBONES[CHECKPOINTS[name][0]].auto_class_name, TEXT, False)


def own_code_outputs(name: str, tmp_path: Path) -> dict:
    """:func:`checkpoint_outputs` of a copy of the checkpoint ``name`` with its own code (``code/``), in a fresh
    interpreter where hf_numbers cannot be imported."""
    script = _REMOTE.format(source=textwrap.dedent(inspect.getsource(checkpoint_outputs)))
    folder, outputs = shutil.copytree(ROOT / name, tmp_path / name), tmp_path / "outputs.safetensors"
    for path in (ROOT / "code").glob("*.py"):
        shutil.copy(path, folder)
    auto_class_name = BACKBONES[CHECKPOINTS[name][0]].auto_class_name
    modules = last_line_without_hf_numbers(script, str(folder), auto_class_name, TEXT, str(outputs), cwd=tmp_path)
    return {"tensors": load_file(outputs), "modules": json.loads(modules)}


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_an_old_checkpoint_loads_with_the_installed_classes(name: str) -> None:
    spec = BACKBONES[CHECKPOINTS[name][0]]
    result = installed_outputs(name)
    assert result["modules"] == [spec.model_class.__module__, spec.tokenizer_class.__module__]
    assert_close_to_saved(result["tensors"], name)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_an_old_checkpoint_loads_with_its_own_code_without_hf_numbers(name: str, tmp_path: Path) -> None:
    remote = own_code_outputs(name, tmp_path)
    assert all(module.startswith("transformers_modules.") for module in remote["modules"]), remote["modules"]
    installed = installed_outputs(name)["tensors"]  # the same machine, one thread on both sides: bit for bit
    assert remote["tensors"].keys() == installed.keys()
    assert [key for key in installed if not torch.equal(remote["tensors"][key], installed[key])] == [], name
    assert_close_to_saved(remote["tensors"], name)


if __name__ == "__main__":
    save_old_checkpoints()


@pytest.mark.parametrize("backbone", ["gpt2", "bert", "llama", "roberta", "modernbert"])
def test_a_checkpoint_saved_before_composition_loads_with_its_outputs(backbone: str, tmp_path: Path) -> None:
    """Before these families were held by composition their config.json held the family's fields flat and their
    weights sat under the plain model's own names (``transformer.`` / ``lm_head.``, ``model.``, ``roberta.``,
    ...): such a folder (made here from a composed one, so that both run on this machine) loads into the family's
    class with the same outputs, bit for bit."""
    from model_helpers import MODEL_CLASSES, random_batch, tiny_model

    model = tiny_model(backbone, "fone").eval()
    model.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config |= config.pop("text_config") | {"model_type": model.config.model_type}  # the fields flat, as they were
    (tmp_path / "config.json").write_text(json.dumps(config))
    weights = load_file(tmp_path / "model.safetensors")
    save_file({name.removeprefix("language_model."): tensor for name, tensor in weights.items()},
              tmp_path / "model.safetensors", metadata={"format": "pt"})  # fmt: skip
    assert not any(name.startswith("language_model.") for name in load_file(tmp_path / "model.safetensors"))
    loaded, info = MODEL_CLASSES[backbone].from_pretrained(tmp_path, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"], info
    batch = {key: value for key, value in random_batch(backbone).items() if key in ("input_ids", "input_numbers")}
    with torch.no_grad():
        assert torch.equal(loaded.eval()(**batch).logits, model(**batch).logits)
    assert loaded.config.hidden_size == model.config.hidden_size
    assert type(loaded.config.text_config) is type(model.config.text_config)
