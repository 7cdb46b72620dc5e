"""The training step's speed settings (issue #49): bf16 autocast, fused AdamW and torch.compile
where a GPU has them, nothing on the CPU unless asked. The attention is PyTorch's SDPA already
(transformers' default for GPT-2 and Llama-type models; :func:`attention` reports it)."""

from __future__ import annotations

import contextlib

import torch


def step_dtype(precision: str, device: torch.device | str) -> torch.dtype | None:
    """The autocast dtype of ``precision`` on ``device`` (None: fp32, no autocast). ``auto`` is
    bf16 on a CUDA device that supports it and fp32 elsewhere (the CPU path is unchanged)."""
    dev = torch.device(device)
    if precision == "bf16":
        return torch.bfloat16
    if precision == "auto" and dev.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return None


def autocast(device: torch.device | str, dtype: torch.dtype | None):
    """``torch.autocast`` to ``dtype`` on ``device``'s type, or a no-op context for None."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype=dtype)


def adamw(params, device: torch.device | str, **kw) -> torch.optim.AdamW:
    """AdamW, fused into one kernel on CUDA (the default implementation elsewhere)."""
    if torch.device(device).type == "cuda":
        kw["fused"] = True
    return torch.optim.AdamW(params, **kw)


def compile_lm(lm: torch.nn.Module) -> None:
    """``torch.compile`` the LM in place (its state dict keeps its keys; checkpoints unchanged);
    dynamic shapes, since unpacked batches change width from step to step."""
    lm.compile(dynamic=True)


def attention(lm) -> str:
    """The attention implementation of an HF model (``sdpa``, ``eager``, ...)."""
    return str(getattr(lm.config, "_attn_implementation", None) or "eager")
