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


PEAK_BF16_FLOPS = {
    "H200": 989e12,
    "H100": 989e12,
    "A100": 312e12,
    "L40S": 362e12,
    "A10": 125e12,
    "4090": 165e12,
}
"""Dense bf16 peak FLOP/s by a substring of the device name (MFU's denominator)."""


def peak_flops(name: str, override_tflops: float | None = None) -> float | None:
    """The peak bf16 FLOP/s of the device called ``name`` (None: not known)."""
    if override_tflops:
        return override_tflops * 1e12
    return next((v for k, v in PEAK_BF16_FLOPS.items() if k in name), None)


def train_flops_per_token(params: int, n_layer: int, d_model: int, context: float) -> float:
    """Model FLOPs of one trained token, forward and backward: 6·N + 12·L·T·d (Kaplan; PaLM's MFU),
    ``context`` the tokens attended (the mean window length when windows are packed)."""
    return 6.0 * params + 12.0 * n_layer * context * d_model
