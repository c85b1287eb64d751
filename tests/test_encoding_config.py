"""One config per encoding: a number config keeps its encoding's options only (``encoding_config``), typed and
checked by name; configs saved with every encoding's options as flat fields load with their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_helpers import ENCODINGS, TEXT_ENCODINGS, tiny_config
from transformers import AutoConfig

from hf_numbers import BACKBONES, NUMBER_ENCODINGS_REGISTRY, NumberGPT2Config, NumberGPT2ForCausalLM
from hf_numbers.modeling.encoding_config import own_options
from hf_numbers.modeling.encoding_registry import encoding_options

ALL_OPTIONS = {option.name for option in encoding_options()}


@pytest.mark.parametrize("encoding", [*ENCODINGS, *TEXT_ENCODINGS])
def test_a_saved_config_holds_its_encodings_options_and_no_other(encoding: str, tmp_path: Path) -> None:
    backbone = next(iter(BACKBONES))
    tiny_config(backbone, encoding).save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    own = set(own_options(encoding))
    assert set(saved["encoding_config"]) == own
    assert not ALL_OPTIONS & set(saved)  # no option flat, none of another encoding
    reloaded = AutoConfig.from_pretrained(tmp_path)
    assert {name: getattr(reloaded, name) for name in own} == saved["encoding_config"]


def test_an_option_of_another_encoding_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="fone_int_digits is an option of fone, not of number_encoding='xval'"):
        NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="xval", fone_int_digits=3)
    config = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="fone")
    with pytest.raises(ValueError, match="exponent_min is an option of exponent"):
        config.exponent_min = 0.5
    config.fone_int_digits = 5
    assert config.encoding_config == {"fone_int_digits": 5, "fone_frac_digits": 3}
    config.fone_int_digits = "3"
    with pytest.raises(ValueError, match="fone_int_digits must be a int"):  # checked again where a model is built
        NumberGPT2ForCausalLM(config)


def test_a_config_saved_with_flat_options_loads_with_its_encodings(tmp_path: Path) -> None:
    """Checkpoints saved before encoding_config: every encoding's options flat; the selected one's are kept."""
    config = NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="fone", fone_int_digits=4)
    saved = config.to_dict()
    flat = {**{k: v for k, v in saved.items() if k != "encoding_config"}, **saved["encoding_config"],
            "fone_frac_digits": 1, "exponent_num_bins": 9, "scheme_digits": 5}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(flat))
    loaded = NumberGPT2Config.from_pretrained(tmp_path)
    assert loaded.encoding_config == {"fone_int_digits": 4, "fone_frac_digits": 1}
    assert NumberGPT2Config.from_pretrained(tmp_path, fone_frac_digits=2).fone_frac_digits == 2  # a keyword wins
    moved = NumberGPT2Config.from_pretrained(tmp_path, number_encoding="exponent")  # a new module, on purpose
    assert set(moved.encoding_config) == set(own_options("exponent"))
    with pytest.raises(ValueError, match="not an option of number_encoding='fone'"):
        NumberGPT2Config.from_pretrained(tmp_path, exponent_min=0.5)


def test_every_registered_encoding_declares_options_a_config_takes() -> None:
    for name in NUMBER_ENCODINGS_REGISTRY:
        defaults = {option.name: option.default for option in own_options(name).values()}
        assert tiny_config(next(iter(BACKBONES)), name, **defaults).encoding_config.keys() == defaults.keys()
