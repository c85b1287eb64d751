"""The CUDA path (``pytest -m gpu``): mixed precision, attention kernels, cached generation and FSDP2 on a GPU.

What the CPU suite cannot check: under bf16/fp16 autocast on CUDA the number path stays float32
(the CUDA twin of tests/test_mixed_precision.py), float32 on CUDA gives the CPU's outputs, SDPA (and
flash-attention 2 where ``flash_attn`` is installed) gives eager attention's, ``generate`` with the KV
cache on CUDA gives what it gives without it and on the CPU, and ``fully_shard`` (FSDP2) over NCCL
trains a number model. Every test is marked ``gpu`` and skipped where torch sees no CUDA device, so
the default run on a CPU machine skips them all. The cases come from the backbone table and the
encoding registry (``model_helpers``), never from hand lists; tolerances, not bit-equality, compare devices.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from model_helpers import (
    CAUSAL,
    ENCODINGS,
    MATRIX,
    NUM_IDS,
    TEXT_MATRIX,
    inputs_only,
    random_batch,
    tiny_model,
)
from test_generation import generate, left_padded_prompt
from test_mixed_precision import LOW_PRECISION, check_number_path_in_float32, number_targets

from hf_numbers import BACKBONES, NUMBER_ENCODINGS_REGISTRY, get_encoding

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch sees none)"),
]

CUDA = torch.device("cuda")
CPU = torch.device("cpu")
EVERY_PAIR = pytest.mark.parametrize("backbone,encoding", MATRIX)
EVERY_PAIR_AND_TEXT = pytest.mark.parametrize("backbone,encoding", MATRIX + TEXT_MATRIX)
CAUSAL_PAIRS = pytest.mark.parametrize(
    "backbone,encoding", [(backbone, encoding) for backbone in CAUSAL for encoding in ENCODINGS]
)
# Config number scaling for the encodings that read scaled values, so that CUDA applies it too.
SCALING = {"number_scaling_shift": 0.5, "number_scaling_scale": 0.8, "number_scaling_log": True}
LOGITS_ATOL = 1e-4
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _full_float32_matmuls() -> Iterator[None]:
    """float32 means float32 here: no TF32 matrix products, whatever the process set before."""
    precision = torch.get_float32_matmul_precision()
    cudnn_tf32 = torch.backends.cudnn.allow_tf32
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(precision)
        torch.backends.cudnn.allow_tf32 = cudnn_tf32


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {key: value.to(device) for key, value in batch.items()}


def scaled_model(backbone: str, encoding: str, **overrides):
    """The tiny model, with a number scaling where its encoding reads scaled values (xVal)."""
    entry = NUMBER_ENCODINGS_REGISTRY[encoding]
    scaling = SCALING if entry.has_number_module and entry.needs_scaling else {}
    return tiny_model(backbone, encoding, **scaling, **overrides)


def record(module: torch.nn.Module, name: str, calls: list[dict]) -> None:
    """Record what ``module.name`` reads and returns (dtype, tensor) and whether CUDA autocast was on."""
    method = getattr(module, name)

    def wrapper(*args, **kwargs):
        result = method(*args, **kwargs)
        calls.append(
            {
                "name": name,
                "in": args[0].dtype,
                "out": result.dtype,
                "input": args[0].detach(),
                "output": result.detach(),
                "autocast": torch.is_autocast_enabled("cuda"),
            }
        )
        return result

    setattr(module, name, wrapper)


def head_outputs(model, run: Callable[[], object]) -> tuple[object, torch.Tensor | None]:
    """``run()``'s output and what the number head returned during it (None for a text encoding)."""
    calls: list[dict] = []
    if model.number_encoding is not None:
        record(model.number_encoding, "head", calls)
    out = run()
    return out, (calls[0]["output"] if calls else None)


def padded(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The batch with its first row's last three tokens padding (attention mask 0), to exercise the masks."""
    batch = {key: value.clone() for key, value in batch.items()}
    batch["attention_mask"][0, -3:] = 0
    return batch


# ---------------------------------------------------------------------- mixed precision
@EVERY_PAIR
@pytest.mark.parametrize("dtype", LOW_PRECISION, ids=str)
def test_autocast_on_cuda_keeps_the_number_path_in_float32_and_trains(
    backbone: str, encoding: str, dtype: torch.dtype
) -> None:
    """As tests/test_mixed_precision.py on the CPU: only the backbone and token head run in bf16/fp16."""
    model = tiny_model(backbone, encoding).to(CUDA)
    enc = model.number_encoding
    cpu_batch = random_batch(backbone)
    batch = to_device(cpu_batch, CUDA)
    calls: list[dict] = []
    for name in ("head", "masked_loss", "decode"):
        record(enc, name, calls)
    with torch.autocast("cuda", dtype=dtype):
        out = model(**batch)
    assert out.logits.dtype == dtype  # autocast was on: the token head ran in low precision
    assert [call["name"] for call in calls] == ["head", "decode", "masked_loss"]
    assert all(call["in"] == torch.float32 and not call["autocast"] for call in calls), calls
    assert calls[0]["out"] == torch.float32  # head outputs
    assert out.number_predictions.dtype == torch.float64 and torch.isfinite(out.number_predictions).all()
    targets, mask = (tensor.to(CUDA) for tensor in number_targets(backbone, cpu_batch))
    check_number_path_in_float32(out, enc, calls[0]["input"], targets, mask)
    assert any(parameter.grad.abs().sum() > 0 for parameter in enc.parameters())  # the gradient reached it


@pytest.mark.parametrize("backbone,encoding", TEXT_MATRIX)
@pytest.mark.parametrize("dtype", LOW_PRECISION, ids=str)
def test_text_baselines_train_under_autocast_on_cuda(backbone: str, encoding: str, dtype: torch.dtype) -> None:
    model = tiny_model(backbone, encoding).to(CUDA)
    with torch.autocast("cuda", dtype=dtype):
        out = model(**to_device(random_batch(backbone), CUDA))
    assert out.logits.dtype == dtype and out.number_predictions is None and torch.isfinite(out.loss)
    out.loss.backward()
    embeddings = model.get_input_embeddings().weight.grad
    assert torch.isfinite(embeddings).all() and embeddings.abs().sum() > 0


@EVERY_PAIR_AND_TEXT
def test_float32_on_cuda_gives_the_cpu_outputs(backbone: str, encoding: str) -> None:
    """Same weights, same batch: logits, head outputs and losses agree across devices within float32 rounding."""
    batch = random_batch(backbone)

    def run(device: torch.device):
        model = scaled_model(backbone, encoding).to(device)
        device_batch = to_device(batch, device)
        with torch.no_grad():
            return (*head_outputs(model, lambda: model(**device_batch)), model)

    (cpu, cpu_head, cpu_model), (cuda, cuda_head, _) = run(CPU), run(CUDA)
    torch.testing.assert_close(cuda.logits.cpu(), cpu.logits, atol=LOGITS_ATOL, rtol=1e-4)
    torch.testing.assert_close(cuda.loss.cpu(), cpu.loss, atol=1e-5, rtol=1e-4)
    if cpu_head is None:  # a text encoding: no number module
        assert cuda.number_predictions is None and cpu.number_predictions is None
        return
    assert cuda.number_predictions.dtype == torch.float64
    torch.testing.assert_close(cuda_head.cpu(), cpu_head, atol=LOGITS_ATOL, rtol=1e-4)
    torch.testing.assert_close(cuda.number_loss.cpu(), cpu.number_loss, atol=1e-5, rtol=1e-4)
    # CUDA decodes its head output as the CPU decodes the same output (digits, bits, bins and scaling).
    expected = cpu_model.number_scaling.inverse(cpu_model.number_encoding.decode(cuda_head.cpu()))
    torch.testing.assert_close(cuda.number_predictions.cpu(), expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- attention kernels
def attention_outputs(backbone: str, encoding: str, implementation: str, dtype: torch.dtype | None = None):
    """Logits and number head output of the tiny model with ``implementation``, on a padded batch, on CUDA."""
    model = tiny_model(backbone, encoding, attn_implementation=implementation).to(CUDA).eval()
    assert model.config._attn_implementation == implementation
    batch = to_device(padded(inputs_only(random_batch(backbone))), CUDA)
    with torch.no_grad(), torch.autocast("cuda", dtype=dtype or torch.bfloat16, enabled=dtype is not None):
        out, head = head_outputs(model, lambda: model(**batch))
    keep = batch["attention_mask"].bool()  # padded positions' outputs are not compared
    return out.logits[keep].float(), head[keep]


@EVERY_PAIR
def test_sdpa_attention_gives_eager_attentions_outputs(backbone: str, encoding: str) -> None:
    eager_logits, eager_head = attention_outputs(backbone, encoding, "eager")
    sdpa_logits, sdpa_head = attention_outputs(backbone, encoding, "sdpa")
    torch.testing.assert_close(sdpa_logits, eager_logits, atol=LOGITS_ATOL, rtol=1e-4)
    torch.testing.assert_close(sdpa_head, eager_head, atol=LOGITS_ATOL, rtol=1e-4)


@pytest.mark.skipif(importlib.util.find_spec("flash_attn") is None, reason="flash_attn is not installed")
@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_flash_attention_2_gives_sdpas_outputs_under_bf16(backbone: str) -> None:
    """flash-attention runs in bf16 only: both kernels under bf16 autocast, same weights, bf16 tolerances."""
    if not getattr(BACKBONES[backbone].model_class, "_supports_flash_attn", False):
        pytest.skip(f"{backbone}: transformers has no flash-attention 2 path for it")
    sdpa_logits, sdpa_head = attention_outputs(backbone, "xval", "sdpa", torch.bfloat16)
    flash_logits, flash_head = attention_outputs(backbone, "xval", "flash_attention_2", torch.bfloat16)
    torch.testing.assert_close(flash_logits, sdpa_logits, atol=5e-2, rtol=5e-2)
    torch.testing.assert_close(flash_head, sdpa_head, atol=5e-2, rtol=5e-2)


# ---------------------------------------------------------------------- generation
def generate_on(device: torch.device, backbone: str, encoding: str, use_cache: bool):
    """Greedy generation (a number forced every third token) from the left-padded prompt of test_generation.py."""
    model = scaled_model(backbone, encoding).to(device).eval()
    out = generate(model, to_device(left_padded_prompt(), device), use_cache=use_cache)
    return out.sequences.cpu(), out.numbers.cpu()


@CAUSAL_PAIRS
def test_cuda_generation_is_the_same_with_and_without_the_kv_cache_and_on_the_cpu(backbone: str, encoding: str) -> None:
    cached_ids, cached_numbers = generate_on(CUDA, backbone, encoding, use_cache=True)
    uncached_ids, uncached_numbers = generate_on(CUDA, backbone, encoding, use_cache=False)
    cpu_ids, cpu_numbers = generate_on(CPU, backbone, encoding, use_cache=True)
    assert cached_numbers.dtype == torch.float64
    prompt_length = left_padded_prompt()["input_ids"].shape[1]
    assert torch.isin(cached_ids[:, prompt_length:], torch.tensor(NUM_IDS[backbone])).sum() >= 4  # numbers generated
    assert torch.equal(cached_ids, uncached_ids) and torch.equal(cached_ids, cpu_ids)
    # Continuous values (xVal) agree up to rounding. A discrete value (digits, bits, bins) repeats exactly on one
    # device and up to the last bit of its float64 arithmetic across devices; a flipped digit, bit or bin is far more.
    continuous = get_encoding(encoding).continuous_output
    same_device = {"rtol": 1e-4, "atol": 1e-6} if continuous else {"rtol": 0, "atol": 0}
    across_devices = {"rtol": 1e-4, "atol": 1e-6} if continuous else {"rtol": 1e-12, "atol": 1e-12}
    torch.testing.assert_close(uncached_numbers, cached_numbers, **same_device)
    torch.testing.assert_close(cached_numbers, cpu_numbers, **across_devices)


# ---------------------------------------------------------------------- FSDP2
FSDP_SCRIPT = '''
"""Three AdamW steps of a tiny number model sharded by fully_shard (FSDP2) over NCCL; rank 0 prints the result."""
import json
import math
import os
import sys

import torch
import torch.distributed as dist
from model_helpers import random_batch, tiny_model
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

backbone, encoding = sys.argv[1], sys.argv[2]
device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
torch.cuda.set_device(device)
dist.init_process_group("nccl", device_id=device)
model = tiny_model(backbone, encoding).to(device)
blocks = [module for module in model.modules() if type(module).__name__ in (model._no_split_modules or [])]
for block in blocks:
    fully_shard(block)
fully_shard(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
batch = {key: value.to(device) for key, value in random_batch(backbone).items()}
losses = []
for _ in range(3):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    losses.append(loss.item())
not_dtensors = [name for name, parameter in model.named_parameters() if not isinstance(parameter, DTensor)]
if dist.get_rank() == 0:
    result = {"losses": losses, "blocks": len(blocks), "not_dtensors": not_dtensors, "world": dist.get_world_size()}
    print("RESULT " + json.dumps(result), flush=True)
dist.destroy_process_group()
'''


@pytest.mark.skipif(
    not (torch.distributed.is_available() and torch.distributed.is_nccl_available()),
    reason="torch.distributed with NCCL is not available",
)
def test_fsdp2_over_nccl_trains_a_sharded_number_model(tmp_path: Path) -> None:
    """torchrun on every GPU present (one still runs NCCL and fully_shard): GPT-2 + xVal, blocks then root."""
    backbone, encoding = CAUSAL[0], "xval"
    script = tmp_path / "fsdp2_steps.py"
    script.write_text(FSDP_SCRIPT)
    gpus = torch.cuda.device_count()
    path = [str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(part for part in path if part), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={gpus}",
               str(script), backbone, encoding]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    log = f"exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, log
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, log
    result = json.loads(lines[0].removeprefix("RESULT "))
    losses = result["losses"]
    spec = BACKBONES[backbone]
    assert result["world"] == gpus and result["blocks"] == spec.tiny_sizes[spec.size_fields.layers], result
    assert result["not_dtensors"] == [], result
    assert all(math.isfinite(loss) for loss in losses), losses
    assert losses[0] > losses[1] > losses[2], losses
