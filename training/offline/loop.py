"""The offline training loop (BC, %BC, MC, ILQL, Q-SFT) on accelerate: the same code runs on this
CPU and under ``accelerate launch`` on GPUs. Progress bar on stderr, metrics as JSON lines in
``OUT/metrics.jsonl``, periodic evaluation against the task, checkpoints in ``OUT/checkpoint``,
``resume`` from it, deterministic under the seed (data order = f(seed, epoch))."""

from __future__ import annotations

import json
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from data import runs
from data.composition import format_composition
from data.datasets import DatasetQuery
from training.agents.checkpoint_agent import evaluate_model
from training.config import TrainConfig
from training.datasets.packing import pack_batch
from training.errors import TrainingError
from training.model import speed
from training.model.checkpoint import load_trainer_state, restore_rng, save_checkpoint
from training.model.policy_value import LossModule
from training.offline import loss_fn
from training.offline.prepare import prepare


def lr_lambda(cfg: TrainConfig, total: int):
    """Linear warmup over ``warmup_steps``, then constant or linear decay to 0 at ``total``."""
    warm = max(cfg.warmup_steps, 0)

    def f(step: int) -> float:
        if warm and step < warm:
            return (step + 1) / warm
        if cfg.lr_schedule == "linear":
            return max(0.0, (total - step) / max(total - warm, 1))
        return 1.0

    return f


def _log(path: Path, row: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row, default=float) + "\n")


def _time_up(acc, deadline: float) -> bool:
    """Whether ``deadline`` (perf_counter) has passed, agreed by every process (the slowest's clock
    decides, so all stop at the same step)."""
    up = time.perf_counter() >= deadline
    if acc.num_processes == 1:
        return up
    flag = torch.tensor([1.0 if up else 0.0], device=acc.device)
    return bool(acc.reduce(flag, reduction="sum").item() > 0)


def train(
    cfg: TrainConfig,
    store,
    query: DatasetQuery,
    out: str | Path,
    *,
    resume: bool = False,
    log=print,
) -> dict[str, Any]:
    """Train ``cfg.algo``; returns the final metrics. Raises TrainingError for bad input."""
    from accelerate import Accelerator

    out = Path(out)
    ckpt = out / "checkpoint"
    stored_ckpt = str(ckpt.resolve())  # the store keeps it absolute: found from any directory
    resume_from = ckpt if resume and (ckpt / "trainer_state.pt").exists() else None
    if resume and resume_from is None:
        raise TrainingError(f"nothing to resume in {out} (no checkpoint/trainer_state.pt)")
    out.mkdir(parents=True, exist_ok=True)
    prep = prepare(cfg, store, query, resume_from)
    model, tok, ds = prep.model, prep.tokenizer, prep.dataset
    acc = Accelerator(cpu=not torch.cuda.is_available())
    params = [p for p in model.parameters() if p.requires_grad]
    opt = speed.adamw(
        params, acc.device, lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=cfg.weight_decay
    )
    amp = speed.step_dtype(cfg.precision, acc.device)
    if cfg.compile:
        speed.compile_lm(model.lm)
    world, rank = acc.num_processes, acc.process_index
    per_epoch = max(1, math.ceil(len(ds) / (cfg.batch_size * world)))
    total = (
        cfg.max_steps if cfg.max_steps is not None else max(1, math.ceil(cfg.epochs * per_epoch))
    )
    start = 0
    state = load_trainer_state(resume_from) if resume_from is not None else None
    if state is not None:
        opt.load_state_dict(state["optimizer"])
        start = int(state["step"])
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda(cfg, total))
    with warnings.catch_warnings():  # replaying the schedule on resume, before any optimizer step
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(start):
            sched.step()
    # the loss runs through a module's forward: under DDP that is what synchronises gradients
    step_loss, opt = acc.prepare(LossModule(model, loss_fn(cfg.algo)), opt)
    inner = acc.unwrap_model(step_loss).model
    dataset_info = {
        "query": json.loads(prep.query.to_json()),
        "episode_ids": prep.episode_ids,
        "composition": prep.composition,
        "actions": prep.actions,
        **({"partner_model": prep.partner_model.to_json()} if prep.partner_model else {}),
    }
    if acc.is_main_process:
        print(
            format_composition(prep.composition, f"{cfg.algo} on {cfg.task}: dataset"),
            file=sys.stderr,
        )
        note = ds.cut_note(cfg.max_length, cfg.windows)
        if note:
            print(note, file=sys.stderr)
    run_config = {
        **cfg.to_dict(),
        "dataset": {k: v for k, v in prep.composition.items() if k != "query"},
    }
    run_id = (
        runs.start_run(
            store,
            kind="train",
            algo=cfg.algo,
            task=cfg.task,
            config=run_config,
            dataset_query=prep.query.to_json(),
            episode_ids=prep.episode_ids,
            out_dir=str(out.resolve()),
        )
        if acc.is_main_process
        else None
    )
    metrics_path = out / "metrics.jsonl"
    if acc.is_main_process:
        (out / "config.json").write_text(cfg.to_json())
    if state is not None:
        restore_rng(state)
    bar = None
    if cfg.progress and acc.is_main_process:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=total, initial=start, desc=f"{cfg.algo} {cfg.task}", unit="step", leave=False
        )
    final: dict[str, Any] = {}
    t0, tokens, slots, last_eval = time.perf_counter(), 0, 0, None
    q_tail: list[float] = []  # MC's Q loss over the last tenth of the steps
    perm, perm_epoch = None, -1
    status = "failed"
    done, stopped = start, None  # the steps run, and why the run stopped before ``total``
    try:
        step_loss.train()
        for step in range(start, total):
            epoch, k = divmod(step, per_epoch)
            if epoch != perm_epoch:
                g = torch.Generator().manual_seed(cfg.seed * 100003 + epoch)
                perm = torch.randperm(len(ds), generator=g)[rank::world]
                perm_epoch = epoch
            idx = perm[k * cfg.batch_size : (k + 1) * cfg.batch_size]
            if len(idx) == 0:
                idx = perm[: cfg.batch_size]
            raw = ds.collate(idx.tolist())
            if cfg.pack:
                raw = pack_batch(raw, cfg.max_length, ds.pad_id)
            batch = {n: v.to(acc.device, non_blocking=True) for n, v in raw.items()}
            with speed.autocast(acc.device, amp):
                loss, stats = step_loss(batch, cfg)
            loss_value = float(loss.detach())
            if not math.isfinite(loss_value):
                raise TrainingError(f"the loss became {loss_value} at step {step}; lower --lr")
            acc.backward(loss)
            if cfg.grad_clip:
                acc.clip_grad_norm_(params, cfg.grad_clip)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            if acc.sync_gradients:
                inner.update_targets(cfg.polyak_alpha)
            tokens += int(raw["attention_mask"].sum())
            slots += raw["attention_mask"].numel()
            n = step + 1
            if cfg.algo == "mc" and "q_loss" in stats and n > total - max(1, (total - start) // 10):
                q_tail.append(float(stats["q_loss"]))
            if bar is not None:
                bar.update(1)
                if n % max(cfg.log_every, 1) == 0:
                    bar.set_postfix(loss=f"{loss_value:.4f}")
            stop = (
                cfg.max_minutes is not None
                and n < total
                and _time_up(acc, t0 + 60 * cfg.max_minutes)
            )
            if acc.is_main_process and (n % max(cfg.log_every, 1) == 0 or n == total or stop):
                el = time.perf_counter() - t0
                _log(
                    metrics_path,
                    {
                        "kind": "train",
                        "step": n,
                        "epoch": epoch,
                        "loss": loss_value,
                        "lr": sched.get_last_lr()[0],
                        "tokens_per_s": tokens / max(el, 1e-9),
                        "elapsed_s": el,
                        **stats,
                    },
                )
            if acc.is_main_process and cfg.eval_every and n % cfg.eval_every == 0 and n < total:
                last_eval = evaluate_model(inner, tok, cfg, store)
                _log(metrics_path, {"kind": "eval", "step": n, **last_eval})
            if acc.is_main_process and cfg.save_every and n % cfg.save_every == 0 and n < total:
                save_checkpoint(
                    ckpt,
                    inner,
                    tok,
                    cfg,
                    step=n,
                    epoch=epoch,
                    dataset=dataset_info,
                    optimizer=opt,
                    metrics={"eval": last_eval},
                )
                runs.add_checkpoint(store, run_id, stored_ckpt, n, {"eval": last_eval})
            done = n
            if stop:
                stopped = "time"
                break
        acc.wait_for_everyone()
        if acc.is_main_process:
            el = time.perf_counter() - t0
            final = {
                "steps": done,
                "train_seconds": el,
                "tokens_per_s": tokens / max(el, 1e-9),
                "padding": 1.0 - tokens / max(slots, 1),
                "examples": len(ds),
                "dataset_tokens": ds.n_tokens,
                "episodes": len(prep.episode_ids),
            }
            if stopped:
                final.update(stopped_by=stopped, planned_steps=total)
                print(
                    f"stopped after {cfg.max_minutes:g} min (--max-minutes) at step {done} of {total}",
                    file=sys.stderr,
                )
            if cfg.algo in (
                "mc",
                "ilql",
            ):  # how far the representation is from a bisimulation metric
                from training.offline import common

                n_end = final["end_measure_windows"] = common.end_windows(inner, acc.device)
                final.update(common.end_measures(inner, ds, cfg.batch_size, acc.device, n_end))
                if final["q_head_live_units"] < 0.05:
                    print(
                        f"note: {final['q_head_live_units']:.0%} of the Q head's units are ever positive on the "
                        "data: a dead ReLU head gives one value to everything and cannot learn again; "
                        "train with --head-act gelu",
                        file=sys.stderr,
                    )
            if q_tail:
                from training.offline.common import constant_q_loss, flat_values_note

                final["q_loss_end"] = sum(q_tail) / len(q_tail)
                final["q_loss_constant"] = constant_q_loss(ds)
                flat = flat_values_note(q_tail, final["q_loss_constant"])
                if flat:
                    print(flat, file=sys.stderr)
            save_checkpoint(
                ckpt,
                inner,
                tok,
                cfg,
                step=done,
                epoch=max(done - 1, 0) // per_epoch,
                dataset=dataset_info,
                optimizer=opt,
                metrics=final,
            )
            if cfg.eval_episodes > 0 and cfg.task:
                final["eval"] = evaluate_model(inner, tok, cfg, store)
                _log(metrics_path, {"kind": "eval", "step": done, **final["eval"]})
            cid = runs.add_checkpoint(store, run_id, stored_ckpt, done, final)
            final["checkpoint_id"] = cid
            final["checkpoint"] = str(ckpt)
        status = "finished"
        return final
    finally:
        if bar is not None:
            bar.close()
        if run_id is not None:
            runs.finish_run(store, run_id, status, final)
