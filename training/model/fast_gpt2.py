"""A lean forward of a GPT-2 language model for batched decoding (issue #12).

transformers' ``GPT2LMHeadModel.forward`` spends more time in Python (building the 4-D mask,
output capturing, config look-ups) than in arithmetic when the model is the 2-layer ``tiny`` one
and a forward feeds one token per row: about 1.3 ms of a 2.5 ms step on this CPU. :func:`step`
runs the same modules (embeddings, each block's layer norms, ``Conv1D`` projections, activation,
SDPA) on the same cache, with a boolean mask built once for all layers, and returns what
:func:`training.decoding.free_text._cached_step` needs: the logits and final hidden state (of the last
position, or of all: the reranker's action rows), and the updated cache.

It applies only where the model is a plain GPT-2 (:func:`supports`): self-attention only, SDPA or
eager attention without the reordered upcast, every dropout off (evaluation), and a cache whose
layers take ``update(keys, values)``. Other models keep transformers' forward.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class StepOutput:
    """The fields of a transformers output that batched decoding reads."""

    logits: torch.Tensor
    hidden_states: tuple[torch.Tensor]
    cache: object

    def get(self, key: str, default=None):
        return getattr(self, key, default)


def supports(lm, cache) -> bool:
    """Whether :func:`step` computes ``lm``'s forward on ``cache`` (else use transformers')."""
    from transformers import GPT2LMHeadModel

    if type(lm) is not GPT2LMHeadModel or lm.training:
        return False
    cfg = lm.config
    if (
        cfg.add_cross_attention
        or cfg.scale_attn_by_inverse_layer_idx
        or cfg.reorder_and_upcast_attn
    ):
        return False
    if getattr(cfg, "_attn_implementation", "sdpa") not in ("sdpa", "eager", None):
        return False
    layers = getattr(cache, "layers", None)
    return layers is not None and len(layers) == cfg.n_layer


def _mask(attn: torch.Tensor, new: int) -> torch.Tensor:
    """[B, 1, new, width] booleans: a new token sees the attended past and new tokens up to
    itself, and always itself (a padding position then attends to something and stays finite)."""
    if new == 1:  # one token a row: it sees every real token, and itself
        allowed = attn != 0
        allowed[:, -1] = True
        return allowed[:, None, None, :]
    width = attn.shape[1]
    past = width - new
    q = torch.arange(new, device=attn.device).unsqueeze(1) + past
    kv = torch.arange(width, device=attn.device).unsqueeze(0)
    allowed = (kv <= q).unsqueeze(0) & attn.bool().unsqueeze(1)
    allowed = allowed | (kv == q).unsqueeze(0)
    return allowed.unsqueeze(1)


def _conv1d(module, x: torch.Tensor) -> torch.Tensor:
    """transformers' ``Conv1D`` (a linear layer with its weight transposed), as it computes it."""
    return torch.addmm(module.bias, x.view(-1, x.shape[-1]), module.weight).view(
        *x.shape[:-1], module.nf
    )


def _norm(module, x: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, module.normalized_shape, module.weight, module.bias, module.eps)


def _act(module, x: torch.Tensor) -> torch.Tensor:
    """The MLP's activation; GPT-2's ``gelu_new`` as torch's one-kernel tanh GELU (the same formula,
    equal up to rounding)."""
    if type(module).__name__ == "NewGELUActivation":
        return F.gelu(x, approximate="tanh")
    return module(x)


@torch.no_grad()
def step(
    lm,
    ids: torch.Tensor,
    cache,
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor,
    last_only: bool = True,
) -> StepOutput:
    """One forward of ``ids`` [B, S] after the tokens in ``cache``; ``attention_mask`` [B, past + S]
    marks real tokens, ``position_ids`` [B, S]. The cache grows by S. ``last_only``: the logits and
    final hidden state of the last position only (else of every position)."""
    t = lm.transformer
    x = F.embedding(ids, t.wte.weight) + F.embedding(position_ids, t.wpe.weight)
    mask = _mask(attention_mask, ids.shape[1])
    b, s, d = x.shape
    for i, block in enumerate(t.h):
        a, mlp = block.attn, block.mlp
        q, k, v = _conv1d(a.c_attn, _norm(block.ln_1, x)).split(a.split_size, dim=2)
        q = q.view(b, s, -1, a.head_dim).transpose(1, 2)
        k = k.view(b, s, -1, a.head_dim).transpose(1, 2)
        v = v.view(b, s, -1, a.head_dim).transpose(1, 2)
        k, v = cache.layers[i].update(k, v)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=a.scaling)
        x = _conv1d(a.c_proj, o.transpose(1, 2).reshape(b, s, d)) + x
        x = _conv1d(mlp.c_proj, _act(mlp.act, _conv1d(mlp.c_fc, _norm(block.ln_2, x)))) + x
    last = _norm(t.ln_f, x[:, -1:] if last_only else x)
    return StepOutput(F.linear(last, lm.lm_head.weight, lm.lm_head.bias), (last,), cache)
