"""``--fsdp``: the loop shards the model with FSDP2 on 2 CPU processes (gloo), checkpoints with DCP, resumes exactly."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pytest
import torch
from model_helpers import tiny_model
from safetensors.torch import load_file
from test_training import _run_two_processes
from transformers import AutoModel

from hf_numbers import BACKBONES
from hf_numbers.training import NumberTrainingArguments, list_checkpoints
from hf_numbers.training.sharding import MetadataReader, transformer_blocks

SHARDED_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import torch
    from accelerate.utils import set_seed
    from torch.distributed.tensor import DTensor
    import hf_numbers.training.loop as loop
    from hf_numbers.data.collators import DataCollatorForNumberCausalLM
    from hf_numbers.training import (NumberTrainingArguments, build_dataset, build_model, build_tokenizer,
                                     make_accelerator, tokenize_dataset, train_model)
    output_dir, resume = sys.argv[1], (sys.argv[3:] or [None])[0]
    fsdp = {"fsdp": True, "ddp": False}.get(sys.argv[2], sys.argv[2])  # or TrainingArguments' words
    args = NumberTrainingArguments(task="lookup", train_size=128, eval_size=8, hidden_size=32, num_layers=2,
                                   num_heads=2, vocab_size=150, per_device_train_batch_size=4, max_steps=6,
                                   save_steps=3, eval_steps=3, logging_steps=1, disable_tqdm=True, use_cpu=True,
                                   learning_rate=3e-3, max_grad_norm=0.5, gradient_accumulation_steps=2, fsdp=fsdp,
                                   output_dir=output_dir, resume_from_checkpoint=resume)
    accelerator = make_accelerator(args)
    set_seed(args.seed)  # the model's initialisation too, as run_training does
    dataset = build_dataset(args)
    tokenizer = build_tokenizer(args, dataset)
    model = build_model(args, tokenizer)
    data = tokenize_dataset(dataset, tokenizer, args.max_length)
    shards = {}
    original = loop.shard_model
    def recording(model, accelerator, **options):
        original(model, accelerator, **options)
        shards.update({name: [isinstance(p, DTensor), p.to_local().numel() if isinstance(p, DTensor) else p.numel(),
                              p.numel(), p.shape[0]] for name, p in model.named_parameters()})
        shards["__wrapped__"] = type(model).__name__
        return model
    loop.shard_model = recording
    model, result = train_model(model, data["train"], DataCollatorForNumberCausalLM(tokenizer), args,
                                data["validation"], accelerator=accelerator)
    digest = hashlib.md5(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()
    if accelerator.is_main_process:
        model.save_pretrained(f"{output_dir}/final")  # as run_training does with what train_model returns
        model.eval()
        batch = tokenizer(["x is 12.5 and y is 3"], return_tensors="pt")
        with torch.no_grad():
            out = model(**batch)
        torch.save({"logits": out.logits, "numbers": out.number_predictions, **batch}, f"{output_dir}/outputs.pt")
    out = {"rank": accelerator.process_index, "digest": digest, "shards": shards, "type": type(model).__name__,
           "losses": [r["loss"] for r in result.log_history if "loss" in r],
           "evals": [r["eval_loss"] for r in result.log_history if "eval_loss" in r]}
    with open(f"{output_dir}/rank{accelerator.process_index}.json", "w") as f:
        json.dump(out, f)
    accelerator.end_training()
    """
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    """One FSDP run (checkpoints at steps 3 and 6; 2 micro-batches a step, clipping), the same run under DDP, and
    the FSDP run resumed at step 3."""
    folder = tmp_path_factory.mktemp("sharding")
    script = folder / "train.py"
    script.write_text(SHARDED_SCRIPT)
    fsdp = _run_two_processes(script, folder / "fsdp", "fsdp")
    ddp = _run_two_processes(script, folder / "ddp", "ddp")
    resumed = _run_two_processes(script, folder / "resumed", "fsdp", str(folder / "fsdp" / "checkpoint-3"))
    grad_op = _run_two_processes(script, folder / "grad_op", "shard_grad_op auto_wrap")
    return {"folder": folder, "fsdp": fsdp, "ddp": ddp, "resumed": resumed, "shard_grad_op": grad_op}


def test_every_process_holds_only_its_shard_of_every_weight(runs: dict) -> None:
    per_rank = [dict(rank["shards"]) for rank in runs["fsdp"]]
    for shards in per_rank:
        assert shards.pop("__wrapped__").startswith("FSDP")  # fully_shard, not DistributedDataParallel
        assert shards and all(dtensor for dtensor, *_ in shards.values()), "a parameter is not a DTensor"
        for name, (_, local, full, rows) in shards.items():  # dim 0 split in two: ceil(rows / 2) rows at most
            assert local <= -(-rows // 2) * (full // rows), name
    assert per_rank[0].keys() == per_rank[1].keys()
    for name in per_rank[0]:  # the two slices make the whole weight
        assert per_rank[0][name][1] + per_rank[1][name][1] == per_rank[0][name][2], name
    total = sum(full for _, _, full, _ in per_rank[0].values())
    assert sum(local for _, local, _, _ in per_rank[0].values()) == pytest.approx(total / 2, rel=0.05)
    assert [rank["type"] for rank in runs["fsdp"]] == ["NumberGPT2ForCausalLM"] * 2  # gathered, plain models
    assert runs["fsdp"][0]["digest"] == runs["fsdp"][1]["digest"]


def test_fsdp_losses_match_ddp(runs: dict) -> None:
    fsdp, ddp = runs["fsdp"][0], runs["ddp"][0]
    assert len(fsdp["losses"]) == 6
    assert fsdp["losses"] == pytest.approx(ddp["losses"], rel=1e-4, abs=1e-5)
    assert fsdp["evals"] == pytest.approx(ddp["evals"], rel=1e-4, abs=1e-5)
    assert "__wrapped__" not in runs["ddp"][0]["shards"]


def test_shard_grad_op_shards_and_trains_as_full_shard(runs: dict) -> None:
    """``--fsdp "shard_grad_op auto_wrap"`` (TrainingArguments' words): blocks keep their gathered weights from
    forward to backward; the weights are still sharded and the losses are full_shard's."""
    grad_op, full = runs["shard_grad_op"], runs["fsdp"]
    shards = dict(grad_op[0]["shards"])
    assert shards.pop("__wrapped__").startswith("FSDP") and all(dtensor for dtensor, *_ in shards.values())
    assert grad_op[0]["losses"] == pytest.approx(full[0]["losses"], rel=1e-5, abs=1e-6)


def test_sharded_checkpoint_resumes_exactly(runs: dict) -> None:
    folder = runs["folder"]
    checkpoints = list_checkpoints(folder / "fsdp")
    assert [p.name for p in checkpoints] == ["checkpoint-3", "checkpoint-6"]
    files = {p.name for p in checkpoints[0].iterdir()}
    assert {"dcp", "trainer_state.json", "process_0.safetensors", "process_1.safetensors"} <= files
    assert not {"model.safetensors", "optimizer.pt"} & files
    assert sorted(p.name for p in (checkpoints[0] / "dcp").iterdir()) == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    state = json.loads((checkpoints[0] / "trainer_state.json").read_text())
    assert state["sharded"] and state["num_processes"] == 2 and state["optimizer_param_groups"][0]["params"]
    resumed, full = runs["resumed"], runs["fsdp"]
    assert [r["digest"] for r in resumed] == [full[0]["digest"]] * 2  # bit for bit
    assert resumed[0]["losses"] == full[0]["losses"]  # the first 3 from the checkpoint's history, then the same
    assert resumed[0]["evals"] == full[0]["evals"]


def test_final_folder_is_an_ordinary_model(runs: dict, tmp_path: Path) -> None:
    final = runs["folder"] / "fsdp" / "final"
    model = AutoModel.from_pretrained(final).eval()
    assert type(model).__name__ == "NumberGPT2ForCausalLM"
    saved = torch.load(final.parent / "outputs.pt", weights_only=True)
    with torch.no_grad():
        out = model(input_ids=saved["input_ids"], attention_mask=saved["attention_mask"],
                    input_numbers=saved["input_numbers"])
    parameters = b"".join(p.detach().numpy().tobytes() for p in model.parameters())
    assert hashlib.md5(parameters).hexdigest() == runs["fsdp"][0]["digest"]  # the gathered weights, bit for bit
    assert torch.equal(out.logits, saved["logits"])
    # float64 number predictions differ in the last float32 place between the torchrun process and this one,
    # for the same weights
    torch.testing.assert_close(out.number_predictions, saved["numbers"], rtol=1e-6, atol=1e-8)
    model.save_pretrained(tmp_path / "again")  # a one-process save of the same weights
    expected = load_file(str(tmp_path / "again" / "model.safetensors"))
    actual = load_file(str(final / "model.safetensors"))
    assert expected.keys() == actual.keys() and all(torch.equal(expected[k], actual[k]) for k in expected)


def test_sharded_resume_refuses_another_setup(runs: dict) -> None:
    """Resuming the sharded checkpoint without --fsdp, or with another process count, says why."""
    from unittest.mock import MagicMock

    from hf_numbers.training.checkpoints import load_checkpoint

    checkpoint = runs["folder"] / "fsdp" / "checkpoint-3"
    accelerator = MagicMock(num_processes=1, process_index=0)
    with pytest.raises(ValueError, match="saved with --fsdp .*resume with the same --fsdp"):
        load_checkpoint(accelerator, checkpoint, None, None, None)
    with pytest.raises(ValueError, match="written by 2 processes, this run has 1"):
        load_checkpoint(accelerator, checkpoint, None, None, None, allow_inexact=True, sharded=True)
    ddp_checkpoint = runs["folder"] / "ddp" / "checkpoint-3"
    with pytest.raises(ValueError, match="saved without --fsdp"):
        load_checkpoint(accelerator, ddp_checkpoint, None, None, None, sharded=True)


def test_dcp_metadata_is_read_without_arbitrary_pickles(runs: dict, tmp_path: Path) -> None:
    reader = MetadataReader.create(runs["folder"] / "fsdp" / "checkpoint-3" / "dcp")
    assert reader.read_metadata().state_dict_metadata  # DCP's own metadata passes
    planted = tmp_path / "dcp"
    planted.mkdir()
    (planted / ".metadata").write_bytes(b"cos\nsystem\n(S'echo planted'\ntR.")  # os.system('echo planted')
    with pytest.raises(Exception, match="not DCP metadata"):
        MetadataReader.create(planted).read_metadata()


@pytest.mark.parametrize("backbone", BACKBONES)
def test_blocks_are_found_from_the_backbone(backbone: str) -> None:
    """Every backbone's layers are found; an embedding tied to the token head (BERT's) stays with the root."""
    model = tiny_model(backbone, "xval")
    blocks = transformer_blocks(model)
    assert len(blocks) == model.config.num_hidden_layers
    tied = {id(model.get_input_embeddings().weight)}
    assert not any(id(p) in tied for block in blocks for p in block.parameters())


def test_fsdp_is_a_training_argument() -> None:
    assert NumberTrainingArguments().fsdp == ""  # reads as False
    assert NumberTrainingArguments(fsdp=True, fsdp_cpu_offload=True).fsdp_cpu_offload is True
    with pytest.raises(ValueError, match="fsdp_cpu_offload .* needs --fsdp true"):
        NumberTrainingArguments(fsdp_cpu_offload=True)


BF16_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import torch
    from accelerate.utils import set_seed
    from hf_numbers.data.collators import DataCollatorForNumberCausalLM
    from hf_numbers.training import (NumberTrainingArguments, build_dataset, build_model, build_tokenizer,
                                     make_accelerator, tokenize_dataset)
    from hf_numbers.training.sharding import shard_model, transformer_blocks
    output_dir = sys.argv[1]
    args = NumberTrainingArguments(task="lookup", train_size=16, eval_size=4, hidden_size=32, num_layers=2,
                                   num_heads=2, vocab_size=150, use_cpu=True, fsdp=True, mixed_precision="bf16",
                                   output_dir=output_dir)
    accelerator = make_accelerator(args)
    set_seed(args.seed)
    dataset = build_dataset(args)
    tokenizer = build_tokenizer(args, dataset)
    model = build_model(args, tokenizer)
    blocks, root_weight = transformer_blocks(model), model.get_input_embeddings().weight
    seen = {}
    def record(name):
        def hook(module, inputs):
            seen[name] = str(next(module.parameters()).dtype)
        return hook
    blocks[0].register_forward_pre_hook(record("block"))
    model.get_input_embeddings().register_forward_pre_hook(record("embedding"))
    shard_model(model, accelerator)
    data = tokenize_dataset(dataset, tokenizer, args.max_length)["train"]
    batch = DataCollatorForNumberCausalLM(tokenizer)([data[i] for i in range(4)])
    loss = model(**batch).loss
    loss.backward()
    grads = sorted({str(p.grad.dtype) for p in model.parameters() if p.grad is not None})
    stored = sorted({str(p.dtype) for p in model.parameters()})
    with open(f"{output_dir}/rank{accelerator.process_index}.json", "w") as f:
        json.dump({"seen": seen, "grads": grads, "stored": stored, "loss": loss.item(),
                   "loss_dtype": str(loss.dtype)}, f)
    accelerator.end_training()
    """
)


def test_bf16_blocks_gather_in_bf16_and_reduce_in_fp32(tmp_path: Path) -> None:
    """Under --mixed_precision bf16 each block runs on bf16 copies of its weights while the shards, their
    gradients and the root (embeddings, number module, heads) stay fp32."""
    script = tmp_path / "bf16.py"
    script.write_text(BF16_SCRIPT)
    (tmp_path / "run").mkdir()
    for rank in _run_two_processes(script, tmp_path / "run"):
        assert rank["seen"] == {"block": "torch.bfloat16", "embedding": "torch.float32"}
        assert rank["grads"] == rank["stored"] == ["torch.float32"]
        assert rank["loss_dtype"] == "torch.float32" and rank["loss"] == rank["loss"]  # finite


@pytest.mark.parametrize(
    ("value", "mode", "offload"),
    [(True, "full_shard", False), ("true", "full_shard", False), ("false", "", False), (False, "", False),
     ("full_shard", "full_shard", False), ("full_shard auto_wrap", "full_shard", False),
     ("shard_grad_op", "shard_grad_op", False), ("full_shard offload auto_wrap", "full_shard", True)],
)
def test_fsdp_takes_training_arguments_spellings(value: object, mode: str, offload: bool) -> None:
    """``--fsdp`` takes TrainingArguments' words (``--fsdp full_shard`` was "Truthy value expected")."""
    args = NumberTrainingArguments(fsdp=value)
    assert (args.fsdp, args.fsdp_cpu_offload) == (mode, offload)


@pytest.mark.parametrize("value", ["hybrid_shard", "no_shard", "full_shard shard_grad_op", "fully"])
def test_fsdp_refuses_what_fsdp2_here_cannot_do(value: str) -> None:
    with pytest.raises(ValueError, match="--fsdp"):
        NumberTrainingArguments(fsdp=value)
