"""Checkpoints: a Hugging Face folder (``save_pretrained``, safetensors) plus ``heads.safetensors``
(value heads, targets, frozen π_β), the tokenizer, ``lmrl.json`` (algorithm, task, resolved config,
step) and ``dataset.json`` (the dataset query and episode ids). ``trainer_state.pt`` (optimizer and
RNG state for ``--resume``) is read with ``torch.load(weights_only=True)``: nothing is unpickled."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from training.config import TrainConfig
from training.errors import TrainingError

FORMAT = 1
META = "lmrl.json"


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """A run folder (with ``checkpoint/``) or a checkpoint folder -> the checkpoint folder."""
    p = Path(path).expanduser()
    if (p / "checkpoint" / META).is_file():
        return p / "checkpoint"
    if not p.exists():
        raise TrainingError(f"no checkpoint at {p}")
    if not (p / META).is_file():
        raise TrainingError(f"{p} is not an lmrl-tui checkpoint (no {META})")
    return p


def is_checkpoint(path: str | os.PathLike[str]) -> bool:
    try:
        resolve_path(path)
    except TrainingError:
        return False
    return True


def save_checkpoint(
    out: Path,
    model,
    tokenizer,
    cfg: TrainConfig,
    *,
    step: int,
    epoch: int,
    dataset: dict[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
    metrics: dict[str, Any] | None = None,
) -> Path:
    """Write the checkpoint to ``out`` atomically (a sibling temp folder, then a rename)."""
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    model.lm.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    extra = {k: v.clone() for k, v in model.extra_state().items()}
    save_file(extra, str(tmp / "heads.safetensors"))
    meta = {
        "format": FORMAT,
        "algo": cfg.algo,
        "task": cfg.task,
        "step": step,
        "epoch": epoch,
        "config": cfg.to_dict(),
        "metrics": metrics or {},
    }
    (tmp / META).write_text(json.dumps(meta, indent=1, sort_keys=True))
    (tmp / "dataset.json").write_text(json.dumps(dataset))
    if optimizer is not None:
        state = {
            "optimizer": optimizer.state_dict(),
            "step": step,
            "epoch": epoch,
            "torch_rng": torch.get_rng_state(),
            "py_rng": _py_rng(),
        }
        torch.save(state, tmp / "trainer_state.pt")
    if out.exists():
        old = out.with_name(out.name + ".old")
        if old.exists():
            shutil.rmtree(old)
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old)
    else:
        tmp.rename(out)
    return out


def _py_rng() -> list[int]:
    return list(random.getstate()[1])


def read_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    p = resolve_path(path)
    try:
        meta = json.loads((p / META).read_text())
        if not isinstance(meta, dict) or "config" not in meta or "algo" not in meta:
            raise ValueError("missing keys")
    except (OSError, ValueError) as e:
        raise TrainingError(f"{p / META} is corrupt ({e})") from None
    return meta


def load_checkpoint(path: str | os.PathLike[str], *, for_training: bool = False):
    """(model, tokenizer, config, meta) from a checkpoint folder; raises TrainingError."""
    from training.model.policy_value import PolicyValueModel, load_lm
    from training.model.tokenization import load_tokenizer

    p = resolve_path(path)
    meta = read_meta(p)
    try:
        cfg = TrainConfig.from_dict(meta["config"])
    except (TypeError, ValueError) as e:
        raise TrainingError(f"{p / META} is corrupt ({e})") from None
    lm = load_lm(str(p))
    tok = load_tokenizer(p)
    model = PolicyValueModel(
        lm,
        cfg.algo,
        target=cfg.target,
        pi_beta=cfg.pi_beta,
        head_bias=cfg.head_bias,
        head_act=cfg.head_act,
    )
    heads = p / "heads.safetensors"
    try:
        extra = load_file(str(heads)) if heads.exists() else {}
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error types
        raise TrainingError(f"{heads} is corrupt ({type(e).__name__})") from None
    want = set(model.extra_state())
    if set(extra) != want:
        raise TrainingError(f"{heads} does not match a {cfg.algo} model (keys differ)")
    model.load_state_dict(extra, strict=False)
    if not for_training:
        model.eval()
    meta["path"] = str(p)
    return model, tok, cfg, meta


def load_trainer_state(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    f = resolve_path(path) / "trainer_state.pt"
    if not f.exists():
        return None
    try:
        return torch.load(f, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001
        raise TrainingError(f"{f} is corrupt ({type(e).__name__})") from None


def restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch_rng"])
    py = state.get("py_rng")
    if py:
        random.setstate((3, tuple(int(x) for x in py), None))


def copy_checkpoint(
    src: str | Path,
    dst: str | Path,
    store=None,
    run_id: int | None = None,
    step: int = 0,
    meta: dict[str, Any] | None = None,
) -> None:
    """Copy a checkpoint folder to ``dst``, replacing what is there whole (a crash leaves either the
    old copy or the new one, never half of one); with a ``store``, list the copy among the run's
    checkpoints (so the app and ``lmrl eval`` find it)."""
    dst = Path(dst)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp)
    shutil.rmtree(dst, ignore_errors=True)
    tmp.rename(dst)
    if store is not None:
        from data import runs

        runs.add_checkpoint(store, run_id, str(dst.resolve()), step, meta or {})
