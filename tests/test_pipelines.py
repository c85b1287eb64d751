"""Pipelines: `number-generation` and `number-fill-mask` return values in the data's units, registered on
`import hf_numbers` and saved in every checkpoint, so that `pipeline(model=path, trust_remote_code=True)`
works where hf_numbers is not installed (a demo-like temperature run, checked in a fresh interpreter)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from model_helpers import CAUSAL, MASKED, last_line_without_hf_numbers, one_thread
from transformers import pipeline
from transformers.pipelines import PIPELINE_REGISTRY

from hf_numbers import BACKBONES, NumberFillMaskPipeline, NumberGenerationPipeline, format_number, get_encoding
from hf_numbers.cli import main as cli_main
from hf_numbers.modeling.generation_number_tokens import NumberTokensForNumbers
from hf_numbers.modeling.number_scaling import NumberScaling
from hf_numbers.training import NumberTrainingArguments, build_dataset

pytestmark = pytest.mark.smoke  # in the drift check's subset (scripts/check_latest.sh)

SCALING = NumberScaling(shift=50.0, scale=8.0)  # °F-like: a value near 0 inside the model is ~50 outside
PROMPT = "x = 1.5, y = -2 and z ="


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


def saved_model(backbone: str, plain_tokenizer_dirs: dict[str, Path], folder: Path, encoding: str = "xval") -> Path:
    """A tiny untrained model with its tokenizer in ``folder``: ``SCALING`` where the encoding needs scaled values
    (xVal); a masked LM's token head prefers number tokens (so that it fills numbers)."""
    spec = BACKBONES[backbone]
    options = get_encoding(encoding).tokenizer_options({})  # a text baseline: its number_scheme
    tokenizer = spec.tokenizer_class.from_pretrained(plain_tokenizer_dirs[backbone], **options)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    scaling = SCALING.to_config() if get_encoding(encoding).needs_scaling else {}
    torch.manual_seed(0)
    config = spec.new_config(tokenizer, hidden_size=32, num_layers=2, num_heads=2, max_length=64,
                             number_encoding=encoding, **scaling)
    model = spec.model_class(config)
    if model.number_encoding is not None and not spec.causal:
        with torch.no_grad():
            model.get_output_embeddings().bias[tokenizer.num_token_ids] += 50.0
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_the_pipelines_are_registered_on_import() -> None:
    tasks = PIPELINE_REGISTRY.supported_tasks
    assert tasks["number-generation"]["impl"] is NumberGenerationPipeline
    assert tasks["number-fill-mask"]["impl"] is NumberFillMaskPipeline


@pytest.mark.parametrize("backbone", CAUSAL)
def test_number_generation_returns_the_generated_numbers_in_the_data_units(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    path = saved_model(backbone, plain_tokenizer_dirs, tmp_path)
    config = json.loads((path / "config.json").read_text())
    assert config["custom_pipelines"] == {
        "number-generation": {"impl": "pipeline_number.NumberGenerationPipeline", "pt": ["AutoModelForCausalLM"]}
    }
    assert (path / "pipeline_number.py").is_file()
    pipe = pipeline("number-generation", model=str(path))  # no trust_remote_code: the installed classes
    assert type(pipe) is NumberGenerationPipeline
    # generate's arguments pass through: here, the model may write number tokens only
    only_numbers = {"max_new_tokens": 4, "suppress_tokens": [i for i in range(len(pipe.tokenizer))
                                                             if i not in pipe.tokenizer.num_token_ids]}
    out = pipe(PROMPT, **only_numbers)
    assert isinstance(out, list) and len(out) == 1 and set(out[0]) == {"generated_text", "numbers"}
    # the same as generate with the pipeline's default processor, whose numbers are in the data's units too
    enc = pipe.tokenizer(PROMPT, return_tensors="pt")
    gen = pipe.model.generate(**enc, **only_numbers, do_sample=False, return_dict_in_generate=True,
                              pad_token_id=pipe.tokenizer.pad_token_id,
                              logits_processor=[NumberTokensForNumbers(pipe.tokenizer)])
    new = gen.sequences[0, enc["input_ids"].shape[1]:]
    expected = gen.numbers[0, enc["input_ids"].shape[1]:][torch.isin(new, torch.tensor(pipe.tokenizer.num_token_ids))]
    assert out[0]["numbers"] == expected.tolist() and len(expected) >= 1
    assert all(abs(value - SCALING.shift) < 5 * SCALING.scale for value in expected.tolist())  # not ~0: raw units
    assert out[0]["generated_text"].startswith(PROMPT)
    continuation = pipe(PROMPT, **only_numbers, return_full_text=False)[0]["generated_text"]
    assert out[0]["generated_text"] == PROMPT + continuation
    assert format_number(expected[0].item()) in continuation
    # a prompt ending in spaces is read without them where the number token carries its space (byte-level BPE)
    spaced = pipe(PROMPT + "  ", **only_numbers)
    if pipe.tokenizer.spaced_num_token:
        assert spaced == out
    else:
        assert spaced[0]["generated_text"].startswith(PROMPT + "  ")
    both = pipe([PROMPT, "a = 3 and b ="], max_new_tokens=2)
    assert len(both) == 2 and all(len(item) == 1 and "numbers" in item[0] for item in both)
    with pytest.raises(ValueError, match="takes text"):
        pipe([[1, 2]])
    with pytest.raises(ValueError, match="one text at a time"):
        pipe([PROMPT, PROMPT], batch_size=2)


@pytest.mark.parametrize("backbone", MASKED)
def test_number_fill_mask_returns_the_value_of_a_filled_number(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    path = saved_model(backbone, plain_tokenizer_dirs, tmp_path)
    pipe = pipeline("number-fill-mask", model=str(path))
    assert type(pipe) is NumberFillMaskPipeline
    mask = pipe.tokenizer.mask_token
    text = f"x = 1.5, y = {mask} and z = 3"
    results = pipe(text, top_k=3)
    assert len(results) == 3 and all({"sequence", "token_str", "score", "value", "token"} <= set(r) for r in results)
    best = results[0]
    assert best["token"] in pipe.tokenizer.num_token_ids and isinstance(best["value"], float)
    enc = pipe.tokenizer(text, return_tensors="pt")
    ids, numbers = pipe.model.fill_mask(**enc, mask_token_id=pipe.tokenizer.mask_token_id)
    position = int((enc["input_ids"][0] == pipe.tokenizer.mask_token_id).nonzero())
    assert best["value"] == numbers[0, position].item() and abs(best["value"] - SCALING.shift) < 5 * SCALING.scale
    assert best["sequence"] == pipe.tokenizer.decode(ids[0], input_numbers=numbers[0], skip_special_tokens=True)
    assert best["token_str"].strip() == repr(best["value"]).removesuffix(".0")
    assert all(r["value"] is None for r in results if r["token"] not in pipe.tokenizer.num_token_ids)
    assert sum(r["score"] for r in results) <= 1.0 + 1e-6
    two = pipe(f"{mask} is 1.5 and {mask}", top_k=2)
    assert len(two) == 2 and all(len(row) == 2 for row in two)  # one list per mask
    with pytest.raises(ValueError, match="holds no mask token"):
        pipe("x = 1.5")
    with pytest.raises(ValueError, match="top_k must be an integer >= 1"):
        pipe(text, top_k=0)


@pytest.mark.parametrize("backbone", [CAUSAL[0], MASKED[0]])
def test_text_baselines_serve_the_same_pipelines(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """A text baseline (numbers as tokens, no number module): the same output keys; numbers read from text."""
    path = saved_model(backbone, plain_tokenizer_dirs, tmp_path, encoding="text")
    if BACKBONES[backbone].causal:
        out = pipeline("number-generation", model=str(path))(PROMPT, max_new_tokens=3)[0]
        assert out["generated_text"].startswith(PROMPT) and isinstance(out["numbers"], list)
    else:
        fill = pipeline("number-fill-mask", model=str(path))
        for result in fill(f"x = 1.5, y = {fill.tokenizer.mask_token}", top_k=4):
            assert result["value"] is None or isinstance(result["value"], float)



@pytest.mark.parametrize("backbone", [CAUSAL[0], MASKED[0]])
def test_the_pipelines_refuse_a_tokenizer_that_is_not_the_models(
    backbone: str, plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """Another model's tokenizer: before, a misleading forward error or an IndexError."""
    spec = BACKBONES[backbone]
    task = "number-generation" if spec.causal else "number-fill-mask"
    path = saved_model(backbone, plain_tokenizer_dirs, tmp_path / "xval")
    text = saved_model(backbone, plain_tokenizer_dirs, tmp_path / "text", encoding="text")
    with pytest.raises(ValueError, match=r"the tokenizer's number token ids \[\] differ from the model's config"):
        pipeline(task, model=str(path), tokenizer=str(text))
    with pytest.raises(ValueError, match=r"number token ids \[\d+(, \d+)?\] differ from the model's config\."
                                         r"num_token_ids \[\]"):
        pipeline(task, model=str(text), tokenizer=str(path))
    bigger = spec.tokenizer_class.from_pretrained(path)
    bigger.add_tokens(["extra_one", "extra_two"])
    with pytest.raises(ValueError, match=r"has \d+ tokens but the model's embeddings hold config\.vocab_size="):
        pipeline(task, model=str(path), tokenizer=bigger)
    plain = spec.plain_model_class(spec.plain_model_class.config_class(**spec.tiny_sizes, vocab_size=len(bigger)))
    with pytest.raises(ValueError, match=f"{task} needs a number model"):
        pipeline(task, model=plain, tokenizer=bigger)


# ---------------------------------------------------------------------- a demo-like run, then no hf_numbers
DEMO_OVERRIDES = [  # San Francisco only, a window every 24 hours (the demo takes every 6th hour of two cities)
    "--task_options", "cities=['sf']", "stride=24", "--max_steps", "100",
    "--hidden_size", "32", "--num_layers", "2", "--num_heads", "2", "--vocab_size", "200",
    "--per_device_train_batch_size", "16", "--learning_rate", "3e-3", "--warmup_steps", "5", "--logging_steps", "50",
    "--eval_steps", "0", "--save_steps", "0", "--use_cpu", "true", "--disable_tqdm", "true",
]

_REMOTE_SCRIPT = """
import json, sys
sys.modules["hf_numbers"] = None  # the package is not importable: only the checkpoint's own code may be used
import torch
from transformers import pipeline

torch.set_num_threads(1)
requests = json.loads(sys.argv[1])
results, pipes = [], {}
for path, text, kwargs in requests:
    if path not in pipes:
        pipes[path] = pipeline(model=path, trust_remote_code=True)
    pipe = pipes[path]
    results.append({"module": type(pipe).__module__, "task": pipe.task, "output": pipe(text, **kwargs)})
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[dict]]:
    """`hf-numbers demo` with a tiny model and few steps: its final folder, printed output and 3 test examples."""
    output_dir = tmp_path_factory.mktemp("demo") / "run"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        cli_main(["demo", "--output_dir", str(output_dir), *DEMO_OVERRIDES])
    args = NumberTrainingArguments(task="temperature", task_options=DEMO_OVERRIDES[1:3])
    test = build_dataset(args)["test"]
    return output_dir / "final", printed.getvalue(), [test[i] for i in range(3)]


def test_demo_prints_the_pipeline_forecast(demo_run: tuple[Path, str, list[dict]]) -> None:
    final, printed, _ = demo_run
    assert 'pipeline("number-generation"' in printed and "°F" in printed
    config = json.loads((final / "config.json").read_text())
    assert "number-generation" in config["custom_pipelines"] and not (final / "number_scaler.json").exists()
    assert config["number_scaling_shift"] > 30 and config["number_scaling_scale"] > 1  # standardised °F
    card = (final / "README.md").read_text()  # its usage snippet: the pipeline on a test prompt
    assert f'pipe = pipeline(model="{final}", trust_remote_code=True)' in card and "max_new_tokens=3)" in card


def test_a_demo_model_forecasts_in_fahrenheit_through_the_pipeline_without_hf_numbers(
    demo_run: tuple[Path, str, list[dict]], plain_tokenizer_dirs: dict[str, Path], tmp_path: Path
) -> None:
    final, _, examples = demo_run
    masked = saved_model(MASKED[0], plain_tokenizer_dirs, tmp_path / "masked")
    mask = BACKBONES[MASKED[0]].tokenizer_class.from_pretrained(masked).mask_token
    requests = [[str(final), example["prompt"], {"max_new_tokens": 3}] for example in examples]
    requests.append([str(masked), f"x = 1.5, y = {mask} and z = 3", {"top_k": 2}])
    remote = json.loads(last_line_without_hf_numbers(_REMOTE_SCRIPT, json.dumps(requests), cwd=tmp_path, timeout=600))
    assert all(item["module"].startswith("transformers_modules.") for item in remote)
    assert [item["task"] for item in remote] == ["number-generation"] * 3 + ["number-fill-mask"]
    local = pipeline("number-generation", model=str(final))
    for example, item in zip(examples, remote):
        output = item["output"]
        assert output == local(example["prompt"], max_new_tokens=3)  # the same code, with or without hf_numbers
        forecast = output[0]["numbers"][0]  # the next hour's temperature, in °F (scaled, it would be near 0)
        previous = example["numbers"][example["answer_index"] - 1]
        assert 20.0 < forecast < 110.0 and abs(forecast - previous) < 25.0, (forecast, example["answer"])
        assert output[0]["generated_text"].startswith(example["prompt"])
    fill = pipeline("number-fill-mask", model=str(masked))
    assert remote[3]["output"] == fill(f"x = 1.5, y = {mask} and z = 3", top_k=2)
    assert isinstance(remote[3]["output"][0]["value"], float)
