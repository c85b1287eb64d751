"""The peer of ``bench_peers.py``: lucidrains' x-transformers xVal, fed hf_numbers' token ids and scaled numbers.

x-transformers (an optional benchmark dependency: ``pip install -e ".[bench]"``) has its own xVal:
``XValTransformerWrapper`` (a ``[NUM]`` embedding scaled by the value, a linear number head) around a
``Decoder``, and ``XValAutoregressiveWrapper``, whose loss is every token's cross-entropy plus the
squared error at number targets, averaged over the real tokens. It takes numbers already scaled and
recognises one number token id. :class:`XValPeer` gives it what an hf_numbers model of the same task
sees: the same ids with every number token id mapped to the config's ``num_token_id`` (the GPT-2 and
Llama tokenizers have a second one, for a number after a space), and the values at number tokens
mapped by the same ``NumberScaling`` the hf_numbers model applies inside (float32, as the embedding).

Example:
    >>> peer = XValPeer(hf_model.config, tokenizer, hidden=128, layers=4, heads=4)  # doctest: +SKIP
    >>> loss = peer.loss(peer.prepare(batch), every_token=False)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from hf_numbers.modeling import NumberScaling

INSTALL_HINT = (
    "bench_peers.py compares hf_numbers with x-transformers' xVal, which is not installed; install the "
    "benchmark extra without touching torch: pip install --no-deps x-transformers==2.31.10 einops einx "
    "frozendict loguru torch-einops-utils (or pip install -e '.[bench]'), then check with pip check"
)


PEER_DECODERS = {
    "default": {},
    # Llama's choices: rotary positions over the whole head (no absolute position embedding), RMSNorm, a SwiGLU
    # feed-forward 8/3 as wide as the model, no biases (x-transformers' attention has none by default)
    "llama-like": {"rotary_pos_emb": True, "rotary_emb_dim": None, "use_rmsnorm": True, "ff_glu": True,
                   "ff_swish": True, "ff_no_bias": True, "ff_mult": 8 / 3},
}  # fmt: skip
"""``Decoder`` settings beyond the sizes: x-transformers' defaults (absolute positions added to the embeddings,
pre-norm LayerNorm without bias, GELU feed-forward with biases), or set up as Llama."""


def x_transformers_missing() -> bool:
    """Whether x-transformers cannot be imported (the benchmark then says how to install it)."""
    return importlib.util.find_spec("x_transformers") is None


class XValPeer(nn.Module):
    """x-transformers' ``XValTransformerWrapper`` + ``Decoder`` (its defaults but the sizes), seen as hf_numbers
    sees a model: ``forward(input_ids, input_numbers, attention_mask)`` in the data's units, so that
    ``hf_numbers.evaluation.predict.predict_answers`` predicts its answers exactly as an hf_numbers model's.

    ``config`` is the compared hf_numbers model's config (its ``num_token_id``, number scaling, vocabulary
    and positions); heads of ``hidden // heads`` dimensions, as the hf_numbers backbones have; ``decoder`` names
    the ``Decoder``'s other settings (:data:`PEER_DECODERS`).
    """

    causal = True

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        hidden: int,
        layers: int,
        heads: int,
        max_length: int,
        decoder: str = "default",
    ) -> None:
        super().__init__()
        from x_transformers import Decoder, XValAutoregressiveWrapper, XValTransformerWrapper

        self.config = config  # predict_answers reads config.number_encoding: xVal, as the hf_numbers model
        self.tokenizer = tokenizer
        self.scaling = NumberScaling.from_config(config)
        settings = {key: hidden // heads if key == "rotary_emb_dim" else value
                    for key, value in PEER_DECODERS[decoder].items()}  # fmt: skip
        self.net = XValTransformerWrapper(
            num_tokens=config.vocab_size,
            max_seq_len=max_length,
            numerical_token_id=config.num_token_id,
            attn_layers=Decoder(dim=hidden, depth=layers, heads=heads, attn_dim_head=hidden // heads, **settings),
        )
        self.wrapper = XValAutoregressiveWrapper(self.net)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def prepare(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """x-transformers' inputs of an hf_numbers collator's ``batch``: one number id, float32 scaled values,
        the padding mask and which targets (positions 1..L-1) the batch labels.

        Example:
            >>> prepared = peer.prepare(collator(features))  # doctest: +SKIP
            >>> sorted(prepared)  # doctest: +SKIP
            ['ids', 'labelled', 'mask', 'numbers']
        """
        is_num = self.tokenizer.number_mask(batch["input_ids"])
        ids = batch["input_ids"].masked_fill(is_num, self.config.num_token_id)
        values = torch.where(is_num, batch["input_numbers"], 1.0)
        numbers = torch.where(is_num, self.scaling.transform(values), 1.0).float()
        prepared = {"ids": ids, "numbers": numbers, "mask": batch["attention_mask"].bool()}
        if "labels" in batch:
            prepared["labelled"] = batch["labels"][:, 1:] != -100
        return prepared

    def loss(self, prepared: dict[str, torch.Tensor], every_token: bool) -> torch.Tensor:
        """``every_token``: ``XValAutoregressiveWrapper``'s own loss (every real token). Else the same sum,
        cross-entropy plus squared error at number targets, averaged over the labelled targets only (the answer)."""
        if every_token:
            return self.wrapper(prepared["ids"], prepared["numbers"], mask=prepared["mask"])
        ids, numbers, mask = prepared["ids"], prepared["numbers"], prepared["mask"]
        logits, predicted = self.net(ids[:, :-1], numbers[:, :-1], mask=mask[:, :-1])
        target, target_numbers = ids[:, 1:], numbers[:, 1:]
        cross_entropy = F.cross_entropy(logits.transpose(1, 2), target, reduction="none")
        is_num = target == self.config.num_token_id
        squared = (predicted - target_numbers.masked_fill(~is_num, 0.0)).pow(2).masked_fill(~is_num, 0.0)
        labelled = prepared["labelled"] & mask[:, 1:]
        return (cross_entropy + squared)[labelled].mean()

    def forward(
        self, input_ids: torch.Tensor, input_numbers: torch.Tensor, attention_mask: torch.Tensor, **_: Any
    ) -> SimpleNamespace:
        """Token logits and number predictions (in the data's units) at every position, as a number model gives."""
        prepared = self.prepare({"input_ids": input_ids, "input_numbers": input_numbers,
                                 "attention_mask": attention_mask})  # fmt: skip
        logits, predicted = self.net(prepared["ids"], prepared["numbers"], mask=prepared["mask"])
        return SimpleNamespace(logits=logits, number_predictions=self.scaling.inverse(predicted.double()))
