"""Models of the text baselines (the registry's entries without a number module: the backbone's own text and
the number schemes): the token loss only, plain generate / fill-mask, answers predicted from text, training
builders and the CLI end to end."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from datasets import Dataset, DatasetDict
from model_helpers import (
    CAUSAL,
    FIRST_WORD_ID,
    MASK_ID,
    MASKED,
    MODEL_CLASSES,
    ONE_PER_KIND,
    TEXT_ENCODINGS,
    TEXT_MATRIX,
    VOCAB,
    backbone_config,
    backbone_state,
    one_thread,
    tiny_config,
    tiny_model,
)
from transformers import AutoModel, AutoTokenizer

from hf_numbers import BACKBONES, NUMBER_ENCODINGS_REGISTRY, NumberGPT2Config, find_numbers
from hf_numbers.cli import main as cli_main
from hf_numbers.data.checks import check_answers_tokenized
from hf_numbers.data.loading import tokenize_dataset
from hf_numbers.data.tokenizer_training import train_number_tokenizer
from hf_numbers.evaluation.predict import TEXT_ANSWER_TOKENS, predict_answers, written_answers
from hf_numbers.modeling.encoding_text import SchemeEncoding, TextEncoding
from hf_numbers.modeling.text_schemes import NUMBER_SCHEMES, fit_exponent_range, make_scheme
from hf_numbers.training import (
    NumberTrainingArguments,
    build_dataset,
    build_model,
    build_tokenizer,
    encoding_options_for,
    make_scaling,
)

pytestmark = pytest.mark.smoke  # in the drift check's subset (scripts/check_latest.sh)

EVERY_TEXT_PAIR = pytest.mark.parametrize("backbone,encoding", TEXT_MATRIX)


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


def sized_model(backbone: str, encoding: str, tokenizer):
    """A tiny model whose vocabulary is the tokenizer's."""
    spec = BACKBONES[backbone]
    config = spec.new_config(tokenizer, hidden_size=32, num_layers=2, num_heads=2, max_length=64,
                             number_encoding=encoding)  # fmt: skip
    return spec.model_class(config)


def token_batch(backbone: str, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random word ids; masked LMs get 20% of them masked, labelled with the originals."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(FIRST_WORD_ID, VOCAB, (3, 10), generator=generator)
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids.clone()}
    if not BACKBONES[backbone].causal:
        masked = torch.rand(ids.shape, generator=generator) < 0.2
        masked[:, 1] = True
        batch |= {"input_ids": ids.masked_fill(masked, MASK_ID), "labels": ids.masked_fill(~masked, -100)}
    return batch


def test_the_text_baseline_and_every_number_scheme_are_registered() -> None:
    assert sorted(TEXT_ENCODINGS) == sorted([TextEncoding.name, *NUMBER_SCHEMES])
    for scheme in NUMBER_SCHEMES:  # each scheme's entry makes tokenizers write numbers in that scheme
        entry = NUMBER_ENCODINGS_REGISTRY[scheme]
        assert issubclass(entry, SchemeEncoding) and entry.tokenizer_options({})["number_scheme"] == scheme


@EVERY_TEXT_PAIR
def test_no_number_module_and_the_token_loss_only(backbone: str, encoding: str) -> None:
    model = tiny_model(backbone, encoding)
    assert model.number_encoding is None
    plain = BACKBONES[backbone].plain_model_class(backbone_config(model))
    plain.load_state_dict(backbone_state(model))  # strict: exactly the backbone's parameters,
    assert len(backbone_state(model)) == len(model.state_dict())  # nothing more
    batch = token_batch(backbone)
    out = model(**batch, input_numbers=torch.full(batch["input_ids"].shape, 7.5, dtype=torch.float64))
    assert out.number_predictions is None and out.number_loss == 0
    assert torch.equal(out.loss, out.token_loss) and torch.isfinite(out.loss)
    model.eval(), plain.eval()
    with torch.no_grad():
        expected = plain(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"])
        mine = model(**batch)  # input_numbers are ignored: the numbers are tokens
    assert torch.allclose(mine.logits, expected.logits, atol=1e-6) and torch.allclose(mine.loss, expected.loss)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(4):
        loss = model(**batch).loss
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert losses[-1] < losses[0]


@EVERY_TEXT_PAIR
def test_save_load_and_auto_model(backbone: str, encoding: str, tmp_path: Path) -> None:
    model = tiny_model(backbone, encoding).eval()
    model.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["number_encoding"] == encoding and saved["num_token_ids"] == []
    assert (tmp_path / "encoding_text.py").exists() and (tmp_path / "modeling_outputs.py").exists()
    batch = token_batch(backbone)
    with torch.no_grad():
        loaded = AutoModel.from_pretrained(tmp_path).eval()
        assert type(loaded) is type(model) and loaded.number_encoding is None
        assert torch.equal(loaded(**batch).logits, model(**batch).logits)


@pytest.mark.parametrize("backbone", CAUSAL)
def test_generate_is_transformers_own(backbone: str) -> None:
    model = tiny_model(backbone, "p10").eval()
    plain = BACKBONES[backbone].plain_model_class(backbone_config(model)).eval()
    plain.load_state_dict(backbone_state(model))
    ids = torch.tensor([[1, 5, 6, 7], [5, 8, 9, 10]])
    mask = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])
    options = {"max_new_tokens": 5, "do_sample": False, "pad_token_id": 1}
    expected = plain.generate(input_ids=ids, attention_mask=mask, **options)
    numbers = torch.ones(ids.shape, dtype=torch.float64)  # the tokenizer's neutral values are accepted and ignored
    assert torch.equal(model.generate(input_ids=ids, attention_mask=mask, input_numbers=numbers, **options), expected)
    beams = model.generate(input_ids=ids, attention_mask=mask, num_beams=2, return_dict_in_generate=True, **options)
    assert beams.sequences.shape[0] == 2  # beam search works: no values to track


@pytest.mark.parametrize("backbone", MASKED)
def test_fill_mask_fills_tokens(backbone: str) -> None:
    model = tiny_model(backbone, "b1999").eval()
    batch = token_batch(backbone)
    ids, numbers = model.fill_mask(batch["input_ids"], attention_mask=batch["attention_mask"], mask_token_id=MASK_ID)
    masked = batch["input_ids"] == MASK_ID
    with torch.no_grad():
        argmax = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.argmax(-1)
    assert torch.equal(ids[masked], argmax[masked]) and torch.equal(ids[~masked], batch["input_ids"][~masked])
    assert (numbers == 1.0).all()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"number_encoding": "p10", "num_token_id": 5}, "number_encoding='p10' writes numbers as ordinary tokens"),
        ({"number_encoding": "text", "num_token_ids": [5, 6], "num_token_id": 5}, "must be unset"),
        ({"number_encoding": "p1000", "scheme_digits": 4}, "scheme_digits must be a multiple of 3"),
        ({"number_encoding": "p10", "scheme_digits": 0}, r"scheme_digits must be in \[1, 17\], got 0"),
        ({"number_encoding": "xval", "scheme_digits": 3},
         "scheme_digits is an option of p10, .*, not of number_encoding='xval'"),
        ({"number_encoding": "fp15", "scheme_min_exponent": -30}, "at most 50000 are allowed"),
        ({"number_encoding": "p10", "scheme_min_exponent": 2, "scheme_max_exponent": 1}, "scheme_min_exponent must"),
        ({"number_encoding": "p100"}, re.escape(f"unknown; allowed: {', '.join(NUMBER_ENCODINGS_REGISTRY)}")),
    ],
)
def test_config_validation_is_strict(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, **fields)
    NumberGPT2Config(n_embd=32, n_layer=2, n_head=2, number_encoding="p10", scheme_digits=4)  # p1000's rule only


def test_number_encodings_still_need_a_number_token() -> None:
    with pytest.raises(ValueError, match="num_token_id must be set"):
        MODEL_CLASSES[CAUSAL[0]](tiny_config(CAUSAL[0], "xval", num_token_id=None, num_token_ids=[]))


# ---------------------------------------------------------------------- training builders
def tiny_args(**overrides) -> NumberTrainingArguments:
    fields = dict(task="lookup", train_size=64, eval_size=8, hidden_size=32, num_layers=2, num_heads=2,
                  vocab_size=150, per_device_train_batch_size=8, warmup_steps=1, logging_steps=2, disable_tqdm=True,
                  use_cpu=True)  # fmt: skip
    return NumberTrainingArguments(**{**fields, **overrides})


def test_builders_fit_the_scheme_and_build_its_tokenizer_and_model() -> None:
    dataset = build_dataset(tiny_args())
    values = [v for split in dataset.values() for row in split["numbers"] for v in row]
    low, high = fit_exponent_range(values, 3)
    fitted = encoding_options_for(tiny_args(number_encoding="p10"), dataset)
    assert fitted == {"scheme_min_exponent": low, "scheme_max_exponent": high}
    seven = encoding_options_for(tiny_args(number_encoding="p10", scheme_digits=7, scheme_max_exponent=3), dataset)
    assert seven == {"scheme_digits": 7, "scheme_min_exponent": low - 4, "scheme_max_exponent": 3}  # given ones win
    args = tiny_args(number_encoding="b1999", backbone=MASKED[-1])
    tokenizer = build_tokenizer(args, dataset)
    assert tokenizer.number_scheme == "b1999" and tokenizer.num_token_ids == []
    assert (tokenizer.scheme.min_exponent, tokenizer.scheme.max_exponent) == (low, high)
    for value in values:
        tokenizer(f"x {value}")  # every number of every split is in range
    model = build_model(args, tokenizer, dataset)
    assert model.number_encoding is None and model.config.vocab_size == len(tokenizer)
    assert model.config.scheme_min_exponent == low and model.config.num_token_ids == []
    assert make_scaling(args, dataset).is_identity
    check_answers_tokenized(dataset, tokenize_dataset(dataset, tokenizer, 128), tokenizer, 128)
    with pytest.raises(ValueError, match=r"its answer is number \d+ of the text, but the tokenized text holds"):
        check_answers_tokenized(dataset, tokenize_dataset(dataset, tokenizer, 12), tokenizer, 12)
    text = build_tokenizer(tiny_args(number_encoding="text"), dataset)
    assert text.number_scheme == "text" and text.scheme is None


# ---------------------------------------------------------------------- answers predicted from text
# a space before the negative answer: a byte-level BPE joins "=-" (see test_an_answer_joined_to_the_prompt_is_refused)
TEXTS = ["{a:1.81, m:-0.21, b:0.69} m= -0.21", "{x:7, y:0} y=0", "q 5 - 3 = 2", "{h:2.5, k:1.234} k=1.234"]
INDICES = [len(find_numbers(text)) - 1 for text in TEXTS]
ANSWERS = [find_numbers(text)[-1].value for text in TEXTS]


@pytest.fixture(scope="module")
def answer_tokenizers() -> dict[tuple[str, str], object]:
    options = {"scheme_min_exponent": -3, "scheme_max_exponent": 0}
    return {
        (backbone, encoding): train_number_tokenizer(TEXTS * 5, backbone, 300, number_scheme=encoding, **options)
        for backbone in BACKBONES
        for encoding in TEXT_ENCODINGS
    }


def _oracle_generate(tokenizer, corrupt: Callable[[list[int]], list[int]] = lambda new: new):
    """A causal model's ``generate`` that continues each prompt with the true text (``corrupt`` may alter it)."""
    truths = [tokenizer(text)["input_ids"] for text in TEXTS]
    calls = []

    def generate(input_ids, attention_mask, max_new_tokens, **kwargs):
        calls.append(max_new_tokens)
        rows = []
        for ids, mask in zip(input_ids.tolist(), attention_mask.tolist()):
            prompt = [i for i, m in zip(ids, mask) if m]
            truth = next(t for t in truths if t[: len(prompt)] == prompt and len(t) > len(prompt))
            new = corrupt(truth[len(prompt) : len(prompt) + max_new_tokens])
            rows.append(ids + new + [tokenizer.pad_token_id] * (max_new_tokens - len(new)))
        return torch.tensor(rows)

    return generate, calls


def _oracle_fill(tokenizer, corrupt: bool = False):
    """A masked model's ``fill_mask`` that restores the true tokens (or leaves the masks with ``corrupt``)."""
    truth = tokenizer(TEXTS, padding=True, return_tensors="pt")["input_ids"]

    def fill_mask(input_ids, attention_mask, mask_token_id):
        return (input_ids if corrupt else truth), torch.ones(input_ids.shape, dtype=torch.float64)

    return fill_mask


@EVERY_TEXT_PAIR
def test_predictions_are_the_written_numbers(backbone: str, encoding: str, answer_tokenizers, monkeypatch) -> None:
    tokenizer = answer_tokenizers[backbone, encoding]
    model = sized_model(backbone, encoding, tokenizer)
    expected = ANSWERS if encoding == "text" else [make_scheme(encoding, 3, -3, 0).round(a) for a in ANSWERS]
    if BACKBONES[backbone].causal:
        generate, calls = _oracle_generate(tokenizer)
        monkeypatch.setattr(model, "generate", generate)
        assert predict_answers(model, tokenizer, TEXTS, INDICES, batch_size=3) == expected
        assert calls == [TEXT_ANSWER_TOKENS if encoding == "text" else tokenizer.scheme.tokens_per_number] * 2
        broken, _ = _oracle_generate(tokenizer, corrupt=lambda new: new[1:] if encoding != "text" else [])
        monkeypatch.setattr(model, "generate", broken)  # a run missing its first token, or nothing: invalid
    else:
        monkeypatch.setattr(model, "fill_mask", _oracle_fill(tokenizer))
        assert predict_answers(model, tokenizer, TEXTS, INDICES) == expected
        monkeypatch.setattr(model, "fill_mask", _oracle_fill(tokenizer, corrupt=True))
    assert predict_answers(model, tokenizer, TEXTS, INDICES) == [None] * len(TEXTS)


def test_given_digits_stay_in_the_prompt_and_the_rest_is_written(answer_tokenizers, monkeypatch) -> None:
    tokenizer = answer_tokenizers["gpt2", "text"]  # writes k=1.234 as k = 1 . 234
    model = sized_model("gpt2", "text", tokenizer)
    monkeypatch.setattr(model, "generate", _oracle_generate(tokenizer)[0])  # continues with the true text
    for given, rest in [(0, "1.234"), (1, ".234"), (2, "234")]:
        assert written_answers(model, tokenizer, TEXTS[3:], INDICES[3:], given_digits=given) == ([rest], [True])
    with pytest.raises(ValueError, match="given_digits must be >= 0, got -1"):
        written_answers(model, tokenizer, TEXTS[3:], INDICES[3:], given_digits=-1)


@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_prediction_errors(backbone: str, answer_tokenizers) -> None:
    tokenizer = answer_tokenizers[backbone, "p10"]
    model = sized_model(backbone, "p10", tokenizer)
    predictions = predict_answers(model, tokenizer, TEXTS, INDICES)  # an untrained model: values or None
    assert len(predictions) == len(TEXTS) and all(p is None or isinstance(p, float) for p in predictions)
    with pytest.raises(ValueError, match="truncated"):
        predict_answers(model, tokenizer, TEXTS, INDICES, max_length=4)
    with pytest.raises(ValueError, match="answer_index is 9 but the text has 4 numbers"):
        predict_answers(model, tokenizer, TEXTS[:1], [9])


@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_an_answer_joined_to_the_prompt_is_refused(backbone: str) -> None:
    """A token holding "=" and the answer's "-" would make the prompt depend on the answer's sign: refused
    before training (check_answers_tokenized) and at prediction, never scored."""
    texts = ["{m:-0.21, n:0.5} m=-0.21", "{m:0.3, n:-0.5} m=0.3"] * 10
    tokenizer = train_number_tokenizer(texts, backbone, 300, number_scheme="text")
    dataset = DatasetDict(
        {s: Dataset.from_dict({"text": texts[:2], "answer_index": [2, 2]}) for s in ("train", "test")}
    )
    first = tokenizer.convert_ids_to_tokens(tokenizer(texts[0])["input_ids"])
    joined = any("=" in token and "-" in token for token in first)
    assert joined == (BACKBONES[backbone].tokenizer_model != "wordpiece")  # BERT splits punctuation apart
    if not joined:
        check_answers_tokenized(dataset, tokenize_dataset(dataset, tokenizer, 64), tokenizer, 64)
        return
    message = r"test example 0: the answer's first token also holds '( m)?=' of the text before the answer"
    with pytest.raises(ValueError, match=message):
        check_answers_tokenized(dataset, tokenize_dataset(dataset, tokenizer, 64), tokenizer, 64)
    model = sized_model(backbone, "text", tokenizer)
    with pytest.raises(ValueError, match="example 0: the answer's first token also holds '( m)?='"):
        predict_answers(model, tokenizer, texts[:2], [2, 2])
    positive = tokenizer.convert_ids_to_tokens(tokenizer(texts[1])["input_ids"])
    if not any("=" in token and "0" in token for token in positive):  # Llama's BPE also learns "▁m=0"
        [alone] = predict_answers(model, tokenizer, texts[1:2], [2])  # the positive answer alone: scored
        assert alone is None or isinstance(alone, float)


# ---------------------------------------------------------------------- the CLI end to end
@pytest.mark.parametrize(("backbone", "encoding"), list(zip(ONE_PER_KIND, ("p10", "text"))))
def test_cli_train_and_evaluate(backbone: str, encoding: str, tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    common = ["--task", "lookup", "--train_size", "64", "--eval_size", "8", "--hidden_size", "32"]
    cli_main(["train", *common, "--num_layers", "2", "--num_heads", "2", "--vocab_size", "150",
              "--per_device_train_batch_size", "8", "--warmup_steps", "1", "--disable_tqdm", "true",
              "--use_cpu", "true", "--backbone", backbone, "--number_encoding", encoding, "--max_steps", "3",
              "--save_steps", "0", "--eval_steps", "0", "--output_dir", str(run)])  # fmt: skip
    assert "invalid_rate" in capsys.readouterr().out
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics) == {"validation", "test", "test_ood"} and all(m["count"] == 8 for m in metrics.values())
    tokenizer = AutoTokenizer.from_pretrained(run / "final")
    assert tokenizer.number_scheme == encoding and AutoModel.from_pretrained(run / "final").number_encoding is None
    cli_main(["evaluate", "--checkpoint", str(run / "final"), "--task", "lookup", "--eval_size", "8",
              "--output_dir", str(tmp_path / "eval")])  # fmt: skip
    assert json.loads((tmp_path / "eval" / "metrics.json").read_text()) == metrics
