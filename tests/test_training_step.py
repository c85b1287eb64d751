"""The fast training step: the loss alone (``loss_only``), a number path that compiles whole, guards that still
refuse bad values, and ``--torch_compile`` in the training loop (issue 30)."""

from __future__ import annotations

import functools
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from model_helpers import (
    CAUSAL,
    ENCODINGS,
    MATRIX,
    NUM_IDS,
    TEXT_ENCODINGS,
    covering_pairs,
    one_thread,
    random_batch,
    tiny_args,
    tiny_model,
)

from hf_numbers import BACKBONES
from hf_numbers.data.collators import DataCollatorForNumberCausalLM
from hf_numbers.modeling.encoding_base import REFUSED
from hf_numbers.training import build_model, train_model
from hf_numbers.training.loop import parameter_groups

LOSSES = ("loss", "token_loss", "number_loss")


def answer_only(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``batch`` with the labels of the first half of each row removed (the prompt of an answer-only loss)."""
    labels = batch["labels"].clone()
    labels[:, : labels.shape[1] // 2] = -100
    return {**batch, "labels": labels}


def losses_and_gradients(model: torch.nn.Module, batch: dict, **kwargs) -> tuple[dict, dict]:
    model.zero_grad(set_to_none=True)
    out = model(**batch, **kwargs)
    out.loss.backward()
    gradients = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return {name: getattr(out, name).item() for name in LOSSES}, gradients


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


CASES = [(*pair, "answer") for pair in MATRIX + covering_pairs(list(BACKBONES), TEXT_ENCODINGS)]
CASES += [(*pair, "every") for pair in covering_pairs(list(BACKBONES), ENCODINGS)]


@pytest.mark.parametrize("backbone,encoding,labels", CASES)
def test_loss_only_gives_the_losses_and_gradients_of_a_full_forward(backbone: str, encoding: str, labels: str) -> None:
    """Every pair with an answer-only loss (some positions unlabelled), and every backbone with every label."""
    model = tiny_model(backbone, encoding).train()
    batch = random_batch(backbone) if labels == "every" else answer_only(random_batch(backbone))
    full, full_gradients = losses_and_gradients(model, batch)
    for gather_scored in (True, False):  # the CPU's gathered rows, and the GPU's masked every position
        model.gather_scored = gather_scored
        only, only_gradients = losses_and_gradients(model, batch, loss_only=True)
        assert only == pytest.approx(full, rel=1e-5, abs=1e-7)
        assert full_gradients.keys() == only_gradients.keys()
        for name, gradient in full_gradients.items():
            torch.testing.assert_close(only_gradients[name], gradient, rtol=1e-4, atol=1e-6, msg=name)
    out = model(**batch, loss_only=True)
    assert out.logits is None and out.number_predictions is None


def test_loss_only_needs_labels() -> None:
    backbone, encoding = MATRIX[0]
    batch = random_batch(backbone)
    del batch["labels"]
    with pytest.raises(ValueError, match="loss_only computes the loss alone: it needs labels"):
        tiny_model(backbone, encoding)(**batch, loss_only=True)


@pytest.mark.parametrize("loss_only", [False, True])
def test_loss_only_still_refuses_a_nan_label(loss_only: bool) -> None:
    backbone = CAUSAL[0]
    model = tiny_model(backbone, ENCODINGS[0])
    batch = random_batch(backbone)
    number_labels = batch["input_numbers"].clone()
    position = tuple(int(i) for i in torch.isin(batch["input_ids"], torch.tensor(NUM_IDS[backbone])).nonzero()[1])
    number_labels[position] = float("nan")
    with pytest.raises(ValueError, match=r"number_labels .*holds nan at a number position \(1 such values\)"):
        model(**batch, number_labels=number_labels, loss_only=loss_only)


TRACED = covering_pairs(CAUSAL, ENCODINGS[:2])


@pytest.mark.parametrize("backbone,encoding", TRACED)
def test_the_training_forward_traces_as_one_graph(backbone: str, encoding: str) -> None:
    """No data-dependent branch in the number path: torch.compile sees one graph, no break: the full forward, and
    ``loss_only`` as a GPU runs it (every position, masked: no gather, no host sync); the CPU's gathers (first pair)
    the compiler traces as the training loop asks it to (``compiled_step``)."""
    model, batch = tiny_model(backbone, encoding).train(), random_batch(backbone)
    ways = [(False, None), (True, False), (True, True)][: 3 if (backbone, encoding) == TRACED[0] else 2]
    for loss_only, gather_scored in ways:
        model.gather_scored = gather_scored
        torch._dynamo.reset()
        with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=bool(gather_scored)):
            explained = torch._dynamo.explain(model)(**batch, loss_only=loss_only)
        assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons


def train_few_steps(lookup: tuple, folder: Path, compiled: bool, poison_at: int | None = None) -> list[float]:
    """Losses of 4 steps of a tiny GPT-2-like run, eager or with ``--torch_compile``; ``poison_at``: the batch whose
    numbers become NaN."""
    tokenizer, data = lookup
    args = tiny_args(backbone=CAUSAL[0], output_dir=str(folder / str(compiled)), max_steps=4, logging_steps=1,
                     save_steps=0, eval_steps=0, torch_compile=compiled)
    torch.manual_seed(0)
    model = build_model(args, tokenizer)
    plain = DataCollatorForNumberCausalLM(tokenizer, pad_to_multiple_of=64)  # one shape (19-44 tokens): one compile
    calls = []

    def collate(features):
        batch = plain(features)
        calls.append(1)
        if len(calls) == poison_at:
            batch["input_numbers"][tokenizer.number_mask(batch["input_ids"])] = float("nan")
        return batch

    _, result = train_model(model, data["train"], collate, args)
    return [record["loss"] for record in result.log_history if "loss" in record]


@pytest.mark.skipif(shutil.which("g++") is None, reason="TorchInductor compiles C++ on the CPU: needs g++")
def test_torch_compile_trains_with_the_losses_of_eager_steps(lookup: tuple, tmp_path: Path) -> None:
    """``--torch_compile true`` (TorchInductor, with loss_only's gathers traced) gives the losses of eager steps.
    About a minute on a busy 2-core CPU, most of it compiling C++ (less where the inductor's cache holds it)."""
    eager = train_few_steps(lookup, tmp_path, compiled=False)
    torch._dynamo.reset()
    compiled = train_few_steps(lookup, tmp_path, compiled=True)
    assert len(compiled) == len(eager) == 4
    assert compiled == pytest.approx(eager, rel=1e-4)


def test_torch_compile_names_the_value_it_refuses(
    lookup: tuple, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled step's guard (an assert inside the graph: a RuntimeError naming REFUSED) becomes the eager
    model's message, with the step (batch 3 is step 3). The compiler's eager backend keeps the test fast; the
    assert is the same graph node."""
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="eager"))
    torch._dynamo.reset()
    refused = r"step 3: the model refused a training batch: input_numbers .*holds nan"
    with pytest.raises(ValueError, match=refused) as info:
        train_few_steps(lookup, tmp_path, compiled=True, poison_at=3)
    assert isinstance(info.value.__cause__, RuntimeError) and REFUSED in str(info.value.__cause__)


def test_the_number_module_trains_at_its_own_learning_rate(lookup: tuple, tmp_path: Path) -> None:
    """``--number_learning_rate``: AdamW's second group. At 1e-12 the number module stays where it started while the
    rest of the model moves at --learning_rate; a model without a number module refuses it by name."""
    tokenizer, data = lookup
    args = tiny_args(backbone=CAUSAL[0], output_dir=str(tmp_path / "run"), max_steps=3, save_steps=0, eval_steps=0,
                     number_learning_rate=1e-12)
    torch.manual_seed(0)
    model = build_model(args, tokenizer)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    trained, _ = train_model(model, data["train"], DataCollatorForNumberCausalLM(tokenizer), args)
    moved = {name: not torch.allclose(p, before[name], atol=1e-9) for name, p in trained.named_parameters()}
    assert not any(moved[name] for name in moved if name.startswith("number_encoding."))
    assert sum(moved.values()) > len(moved) // 2  # the trunk and heads did move
    text = tiny_args(backbone=CAUSAL[0], number_encoding="text", number_learning_rate=1e-4)
    with pytest.raises(ValueError, match="--number_learning_rate: .* trains no number module"):
        parameter_groups(tiny_model(CAUSAL[0], TEXT_ENCODINGS[0]), text)
