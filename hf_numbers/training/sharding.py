"""``--fsdp``: the loop shards the model itself with PyTorch's FSDP2 (``fully_shard``), on CPU (gloo) or GPU (NCCL).

Every transformer block becomes one FSDP unit, then the root holds the rest (embeddings, number module,
heads); the model is never wrapped in DDP. Checkpoints go through ``torch.distributed.checkpoint`` (DCP)
into ``checkpoint-<step>/dcp/``, tensors only (:class:`MetadataReader` reads DCP's metadata), and
:func:`gather_model` builds the unsharded model that ``final/`` is saved from. Accelerate's own FSDP plugin
refuses the CPU and is not used. How to run it: docs/training.md, "Logging, trackers and processes".

Example:
    >>> shard_model(model, accelerator)  # doctest: +SKIP
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from accelerate import Accelerator
from accelerate.utils import convert_outputs_to_fp32

FSDP_WORDS = {
    "full_shard": "each process holds a slice of every weight; blocks gather theirs for forward and backward",
    "shard_grad_op": "as full_shard, but a block keeps its gathered weights from forward to backward (ZeRO-2)",
    "auto_wrap": "each transformer block its own unit (what --fsdp always does)",
    "offload": "the shards, gradients and optimizer step on the CPU (as --fsdp_cpu_offload true)",
}
"""The words of ``TrainingArguments``' ``--fsdp`` that :func:`parse_fsdp` maps onto FSDP2."""
SWITCH_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False, "": False}


def parse_fsdp(value: bool | str) -> tuple[str, bool]:
    """``--fsdp``'s value as (mode, offload): mode ``""`` (no sharding), ``"full_shard"`` or ``"shard_grad_op"``.

    Takes a switch (``true``/``false``) or ``TrainingArguments``' spellings: space-separated words of
    :data:`FSDP_WORDS`. ``ValueError`` names a word FSDP2 here cannot do (``no_shard``, ``hybrid_shard``: a mesh
    of replicas) or does not know.

    Example:
        >>> parse_fsdp("full_shard auto_wrap"), parse_fsdp(True), parse_fsdp("shard_grad_op offload")
        (('full_shard', False), ('full_shard', False), ('shard_grad_op', True))
    """
    if isinstance(value, bool) or str(value).strip().lower() in SWITCH_WORDS:
        on = value if isinstance(value, bool) else SWITCH_WORDS[str(value).strip().lower()]
        return ("full_shard" if on else ""), False
    words = str(value).lower().split()
    unknown = [word for word in words if word not in FSDP_WORDS]
    if unknown:
        raise ValueError(
            f"--fsdp {value!r}: {', '.join(unknown)} cannot be done here (FSDP2 over all processes: no hybrid "
            f"sharding across nodes, no no_shard; use DDP for that); allowed: true, false or words of "
            f"{', '.join(FSDP_WORDS)}"
        )
    modes = [word for word in words if word in ("full_shard", "shard_grad_op")]
    if len(modes) > 1:
        raise ValueError(f"--fsdp {value!r} names two sharding modes; choose full_shard or shard_grad_op")
    return (modes[0] if modes else "full_shard"), "offload" in words


DCP_DIR = "dcp"
"""The subfolder of a checkpoint that holds the DCP shards of model and optimizer."""


def transformer_blocks(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model's transformer blocks: modules of the classes its backbone names in ``_no_split_modules``,
    except those holding a weight tied to one outside them (such as an embedding tied to the token head).

    ``ValueError`` when the model names none or none is found (nothing to shard block by block).

    Example:
        >>> [type(b).__name__ for b in transformer_blocks(model)][:1]  # doctest: +SKIP
        ['GPT2Block']
    """
    names = set()
    for module in model.modules():
        names.update(getattr(module, "_no_split_modules", None) or ())
    owners: dict[int, list[str]] = {}  # every name of each parameter (tied weights have several)
    for name, parameter in model.named_parameters(remove_duplicate=False):
        owners.setdefault(id(parameter), []).append(name)
    blocks = []
    for prefix, module in model.named_modules():
        if type(module).__name__ not in names or module is model:
            continue
        # a module holding a weight tied to one outside it (BERT's embeddings and decoder) stays with the root
        if all(name.startswith(f"{prefix}.") for p in module.parameters() for name in owners[id(p)]):
            blocks.append(module)
    if not blocks:
        raise ValueError(
            f"--fsdp: {type(model).__name__} names no transformer block class (_no_split_modules: "
            f"{sorted(names) or 'none'}) that the model holds; it cannot be sharded block by block"
        )
    return blocks


def _process_group_ready(accelerator: Accelerator) -> None:
    """A default process group: Accelerate's (several processes), else one of this process alone."""
    if dist.is_initialized():
        return
    if accelerator.num_processes > 1:
        raise ValueError("--fsdp: Accelerate runs several processes but set up no torch.distributed process group")
    backend = "nccl" if accelerator.device.type == "cuda" else "gloo"
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)


def shard_model(
    model: torch.nn.Module, accelerator: Accelerator, cpu_offload: bool = False, mode: str = "full_shard"
) -> torch.nn.Module:
    """Shard ``model`` in place with FSDP2 across Accelerate's processes: each block, then the root.

    The weights are first made those of process 0, as DDP does. Under bf16 the forward runs under autocast
    and the blocks gather bf16 weights and reduce gradients in fp32, while the root keeps fp32 weights so
    that numbers are read and written at full precision; fp16 is refused (no sharded gradient scaler).
    ``cpu_offload`` (GPU only) keeps the shards, their gradients and the optimizer step on the CPU;
    ``mode`` ``shard_grad_op`` keeps each block's gathered weights from its forward to its backward.

    Example:
        >>> model = shard_model(model, accelerator)  # doctest: +SKIP
    """
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

    if accelerator.mixed_precision == "fp16":
        raise ValueError("--fsdp does not support --mixed_precision fp16 (no sharded gradient scaler); use bf16 or no")
    if cpu_offload and accelerator.device.type == "cpu":
        raise ValueError("--fsdp_cpu_offload moves GPU shards to the CPU; this run is on the CPU already")
    _process_group_ready(accelerator)
    blocks = transformer_blocks(model)
    model.to(accelerator.device)
    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            dist.broadcast(tensor.data, src=0)
    mesh = init_device_mesh(accelerator.device.type, (dist.get_world_size(),))
    offload = CPUOffloadPolicy() if cpu_offload else OffloadPolicy()
    bf16 = accelerator.mixed_precision == "bf16"
    block_precision = MixedPrecisionPolicy(torch.bfloat16, torch.float32) if bf16 else MixedPrecisionPolicy()
    for block in blocks:
        fully_shard(block, mesh=mesh, offload_policy=offload, mp_policy=block_precision,
                    reshard_after_forward=mode == "full_shard")
    fully_shard(model, mesh=mesh, offload_policy=offload)
    if bf16:
        model.forward = convert_outputs_to_fp32(accelerator.autocast()(model.forward))
    return model


def gather_model(model: torch.nn.Module, model_class: type[torch.nn.Module]) -> torch.nn.Module:
    """A plain (unsharded) ``model_class`` on the CPU holding the sharded ``model``'s full weights; every
    process must call it (the weights are gathered). The global random states are left as they were.

    Example:
        >>> plain = gather_model(sharded, NumberGPT2ForCausalLM)  # doctest: +SKIP
        >>> plain.save_pretrained("final")  # doctest: +SKIP
    """
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    with torch.random.fork_rng(devices=[]):
        plain = model_class(model.config)
    plain.load_state_dict({name: tensor.cpu() for name, tensor in full.items()})
    plain.train(model.training)
    for parameter, sharded in zip(plain.parameters(), model.parameters()):
        parameter.requires_grad_(sharded.requires_grad)
    return plain


class MetadataReader:
    """Builds a DCP ``FileSystemReader`` whose metadata file is read by an unpickler that admits only DCP's
    metadata classes, torch sizes and dtypes (so a planted pickle runs nothing)."""

    _ALLOWED_MODULES = ("torch.distributed.checkpoint.metadata",)
    _ALLOWED = {("torch", "Size"), ("torch.serialization", "_get_layout"), ("collections", "OrderedDict"),
                ("torch.distributed.checkpoint.filesystem", "_StorageInfo"), ("pathlib", "PosixPath"),
                ("pathlib", "WindowsPath"), ("pathlib", "PurePosixPath"), ("pathlib", "PureWindowsPath")}

    class _Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            dtype = module == "torch" and isinstance(getattr(torch, name, None), torch.dtype)
            if module in MetadataReader._ALLOWED_MODULES or (module, name) in MetadataReader._ALLOWED or dtype:
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"the DCP metadata names {module}.{name}, which is not DCP metadata")

    @classmethod
    def create(cls, path: Path) -> Any:
        from torch.distributed.checkpoint import FileSystemReader
        from torch.distributed.checkpoint.metadata import StorageMeta

        class _Reader(FileSystemReader):
            def read_metadata(self, *args: Any, **kwargs: Any) -> Any:
                metadata_path = self._get_metadata_path(kwargs.get("rank"))
                with self.fs.create_stream(metadata_path, "rb") as file:
                    metadata = MetadataReader._Unpickler(io.BytesIO(file.read())).load()
                if getattr(metadata, "storage_meta", None) is None:
                    metadata.storage_meta = StorageMeta()
                metadata.storage_meta.load_id = self.load_id
                return metadata

        return _Reader(str(path))


def _inner(optimizer: torch.optim.Optimizer) -> torch.optim.Optimizer:
    """The torch optimizer inside Accelerate's wrapper."""
    return getattr(optimizer, "optimizer", optimizer)


def save_sharded(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> list[dict[str, Any]]:
    """Write this process's shards of the model and of the optimizer's tensors into ``folder/dcp`` (every
    process calls it); return the optimizer's parameter groups (JSON-able) for the trainer state.

    Example:
        >>> groups = save_sharded(Path("run/checkpoint-4.tmp"), model, optimizer)  # doctest: +SKIP
    """
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model_state, optimizer_state = get_state_dict(model, _inner(optimizer))
    dcp.save({"model": model_state, "optimizer": optimizer_state["state"]}, checkpoint_id=str(folder / DCP_DIR))
    return [{key: list(value) if isinstance(value, tuple) else value for key, value in group.items()}
            for group in optimizer_state["param_groups"]]


def load_sharded(
    folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, param_groups: list[dict[str, Any]]
) -> None:
    """Read this process's shards from ``folder/dcp`` into ``model`` and ``optimizer`` (every process calls it).

    Example:
        >>> load_sharded(Path("run/checkpoint-4"), model, optimizer, record["optimizer_param_groups"])  # doctest: +SKIP
    """
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    model_state, optimizer_state = get_state_dict(model, _inner(optimizer))
    state = {"model": model_state, "optimizer": optimizer_state["state"]}
    dcp.load(state, storage_reader=MetadataReader.create(folder / DCP_DIR))
    groups = [{key: tuple(value) if key == "betas" else value for key, value in group.items()}
              for group in param_groups]
    set_state_dict(
        model, _inner(optimizer), model_state_dict=state["model"],
        optim_state_dict={"state": state["optimizer"], "param_groups": groups},
    )
