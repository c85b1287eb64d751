"""Checkpoints saved by an earlier hf_numbers still load and give the outputs they gave when saved.

``tests/data/old_checkpoints/`` holds tiny models saved by hf_numbers at commit 3db673b, before the modules of
``hf_numbers/modeling`` were renamed (``encodings.py``, ``text_baselines.py``, ``text_encodings.py``...): each
folder has the model, its tokenizer and ``expected.safetensors``: the ``input_ids`` and ``input_numbers`` of
:data:`TEXT` and the ``logits`` and ``number_predictions`` the model gave; ``code/`` holds the code
``save_pretrained`` copied into each folder then (the same files in each). They load with the installed classes,
and with ``trust_remote_code=True`` from their own code in a fresh interpreter where hf_numbers cannot be imported.
``PYTHONPATH=. python tests/test_old_checkpoints.py`` wrote them; run it again only to replace them on purpose
(with the code of the version they stand for).
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

import hf_numbers
from hf_numbers import BACKBONES, get_backbone, get_encoding
from hf_numbers.data import train_number_tokenizer

ROOT = Path(__file__).resolve().parent / "data" / "old_checkpoints"
"""One folder per checkpoint, without its code: ``code/`` holds the files ``save_pretrained`` copied into each."""
CHECKPOINTS = {"gpt2-xval": ("gpt2", "xval"), "bert-fone": ("bert", "fone"), "gpt2-p10": ("gpt2", "p10")}
"""Folder: (backbone, number_encoding)."""
TEXT = "The temperature was 21.5 degrees at 10:30, and -3 degrees at night."
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


def assert_as_saved(tensors: dict[str, torch.Tensor], name: str) -> None:
    """The same tensors, bit for bit, as the checkpoint ``name`` gave when it was saved."""
    expected = load_file(ROOT / name / "expected.safetensors")
    assert tensors.keys() == expected.keys()
    assert [key for key in expected if not torch.equal(tensors[key], expected[key])] == [], name


_REMOTE = """
import json, sys
sys.modules["hf_numbers"] = None  # hf_numbers cannot be imported: only the checkpoint's own code
from safetensors.torch import save_file
{source}
result = checkpoint_outputs(sys.argv[1], sys.argv[2], sys.argv[3], trust_remote_code=True)
save_file(result["tensors"], sys.argv[4])
print(json.dumps(result["modules"]))
"""


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_an_old_checkpoint_loads_with_the_installed_classes(name: str) -> None:
    spec = BACKBONES[CHECKPOINTS[name][0]]
    result = checkpoint_outputs(str(ROOT / name), spec.auto_class_name, TEXT, trust_remote_code=False)
    assert result["modules"] == [spec.model_class.__module__, spec.tokenizer_class.__module__]
    assert_as_saved(result["tensors"], name)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_an_old_checkpoint_loads_with_its_own_code_without_hf_numbers(name: str, tmp_path: Path) -> None:
    spec = BACKBONES[CHECKPOINTS[name][0]]
    script = _REMOTE.format(source=textwrap.dedent(inspect.getsource(checkpoint_outputs)))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"))
    folder, outputs = shutil.copytree(ROOT / name, tmp_path / name), tmp_path / "outputs.safetensors"
    for path in (ROOT / "code").glob("*.py"):
        shutil.copy(path, folder)
    result = subprocess.run([sys.executable, "-c", script, str(folder), spec.auto_class_name, TEXT, str(outputs)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    modules = json.loads(result.stdout.strip().splitlines()[-1])
    assert all(module.startswith("transformers_modules.") for module in modules), modules
    assert_as_saved(load_file(outputs), name)


if __name__ == "__main__":
    save_old_checkpoints()
