"""Mixed precision (``torch.autocast``, Accelerate's ``mixed_precision``) never reaches the number path.

Only the backbone and the token head may run in bf16/fp16: the number embedding, head, loss and
decoding must give what float32 gives from the same hidden states, or a bf16 head would round
targets (1.53 -> 1.53125) and predictions, and an fp16 MSE would overflow to inf.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from model_helpers import ENCODINGS, NUM_IDS, ONE_PER_KIND, one_thread, random_batch, tiny_model
from torch.nn import functional as F

from hf_numbers import BACKBONES

LOW_PRECISION = (torch.bfloat16, torch.float16)
MATRIX = pytest.mark.parametrize(
    "backbone,encoding", [(backbone, encoding) for backbone in ONE_PER_KIND for encoding in ENCODINGS]
)


@pytest.fixture(autouse=True, scope="module")
def _single_thread() -> Iterator[None]:
    with one_thread():
        yield


def number_targets(backbone: str, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact float64 number targets and the positions that have one (causal LM: the next token's)."""
    num_ids = torch.tensor(NUM_IDS[backbone])
    if BACKBONES[backbone].causal:
        targets = F.pad(batch["input_numbers"][:, 1:], (0, 1), value=1.0)
        return targets, F.pad(torch.isin(batch["input_ids"][:, 1:], num_ids), (0, 1), value=False)
    return batch["number_labels"], torch.isin(batch["labels"], num_ids)


def spy(module: torch.nn.Module, name: str, calls: list[dict]) -> None:
    """Record the dtypes ``module.name`` sees and returns, and whether CPU autocast was on."""
    method = getattr(module, name)

    def wrapper(*args, **kwargs):
        result = method(*args, **kwargs)
        calls.append(
            {"name": name, "in": args[0].dtype, "out": result.dtype, "autocast": torch.is_autocast_enabled("cpu")}
        )
        return result

    setattr(module, name, wrapper)


@MATRIX
@pytest.mark.parametrize("dtype", LOW_PRECISION, ids=str)
def test_number_head_loss_and_decoding_run_in_float32_under_autocast(
    backbone: str, encoding: str, dtype: torch.dtype
) -> None:
    model = tiny_model(backbone, encoding)
    enc = model.number_encoding
    batch = random_batch(backbone)
    calls: list[dict] = []
    for name in ("head", "masked_loss", "decode"):
        spy(enc, name, calls)
    with torch.autocast("cpu", dtype=dtype):
        out = model(**batch, output_hidden_states=True)
    assert out.logits.dtype == dtype  # autocast was on: the token head ran in low precision
    assert [call["name"] for call in calls] == ["head", "decode", "masked_loss"]
    assert all(call["in"] == torch.float32 and not call["autocast"] for call in calls), calls
    assert calls[0]["out"] == torch.float32  # head outputs
    check_number_path_in_float32(out, enc, out.hidden_states[-1].float(), *number_targets(backbone, batch))


def check_number_path_in_float32(out, enc, head_input: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> None:
    """The output of a forward under autocast against references from the head's float32 input: float64 predictions
    decoded from it, a float32 number loss equal to the loss against the exact float64 targets, and float32 finite
    gradients after backward (also tests/test_gpu.py on CUDA)."""
    with torch.no_grad():
        head_output = enc.head(head_input)
        expected_loss = enc.masked_loss(head_output.double(), targets, mask)
    assert out.number_predictions.dtype == torch.float64
    assert torch.equal(out.number_predictions, enc.decode(head_output))
    assert mask.any() and torch.isfinite(out.number_loss) and torch.isfinite(out.loss)
    assert out.number_loss.dtype == torch.float32
    assert out.number_loss.item() == pytest.approx(expected_loss.item(), rel=1e-5)
    out.loss.backward()
    for name, parameter in enc.named_parameters():
        assert parameter.grad.dtype == torch.float32 and torch.isfinite(parameter.grad).all(), name


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("dtype", LOW_PRECISION, ids=str)
def test_number_embeddings_are_computed_in_float32(encoding: str, dtype: torch.dtype) -> None:
    enc = tiny_model("gpt2", encoding).number_encoding
    inputs_embeds = torch.randn(2, 3, 32)
    numbers = torch.tensor([[1.53, 12.5, -3.25], [0.75, 1234.56, 7.0]], dtype=torch.float64)
    is_num = torch.tensor([[True, False, True], [True, True, False]])
    with torch.no_grad():
        expected = enc.embed(inputs_embeds, numbers, is_num)
        with torch.autocast("cpu", dtype=dtype):
            assert torch.equal(enc.embed(inputs_embeds, numbers, is_num), expected)
        # Low-precision embeddings (a bf16/fp16 model): features in float32, one rounding at the end.
        low = inputs_embeds.to(dtype)
        assert torch.equal(enc.embed(low, numbers, is_num), enc.embed(low.float(), numbers, is_num).to(dtype))


def test_xval_embedding_saturates_instead_of_overflowing_in_fp16() -> None:
    enc = tiny_model("gpt2", "xval").number_encoding
    inputs_embeds = torch.ones(1, 2, 32, dtype=torch.float16)
    numbers = torch.tensor([[1.0, 1e6]], dtype=torch.float64)
    with torch.no_grad():
        out = enc.embed(inputs_embeds, numbers, torch.tensor([[False, True]]))
    assert torch.isfinite(out).all() and torch.equal(out[0, 1], torch.full((32,), 65504.0, dtype=torch.float16))
