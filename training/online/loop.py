"""The online loop (PPO docs/algorithms.md §5, online filtered BC §6) on accelerate: rounds of batched rollouts ->
update, periodic evaluation, metrics as JSON lines in ``OUT/metrics.jsonl``, a checkpoint after
every ``save_every`` rounds, ``resume`` from the last one. Under ``accelerate launch`` every rank
rolls out its share of the round's seeds; advantages are whitened and KL statistics averaged with
all-reduced sums, and filtered BC selects its top episodes from the gathered round.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from data import runs
from training.config import TrainConfig
from training.datasets.source import format_online_dataset, online_dataset
from training.errors import TrainingError
from training.model import checkpoint as ck
from training.online import ppo
from training.online import update as U
from training.online.config import ONLINE_ALGOS, TASK_DEFAULTS, OnlineConfig, resolve_online  # noqa: F401
from training.online.rollout import BatchSampler, TaskPool, from_store, rollout, to_records

STATE = "online_state.json"
VALUE_HEAD = "value_head.safetensors"


def _log(path: Path, row: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row, default=float) + "\n")


def _all_sum(acc, t: torch.Tensor) -> torch.Tensor:
    if acc.num_processes == 1:
        return t
    return acc.reduce(t.to(acc.device), reduction="sum").cpu()


def _gather_objects(acc, items: list) -> list:
    if acc.num_processes == 1:
        return list(items)
    from accelerate.utils import gather_object

    return list(gather_object(list(items)))


def round_seeds(cfg: OnlineConfig, rnd: int, rank: int = 0, world: int = 1) -> list[int]:
    """This rank's episode seeds of round ``rnd`` (disjoint from evaluation seeds 0..)."""
    base = 1_000_000 + cfg.seed * 10_000_000 + rnd * cfg.n_rollouts
    return list(range(base, base + cfg.n_rollouts))[rank::world]


class OnlineTrainer:
    """State of one online run; :meth:`run` does the rounds."""

    def __init__(self, cfg: OnlineConfig, store, out: str | Path, *, resume: bool = False, log=print) -> None:
        from accelerate import Accelerator

        self.cfg, self.store, self.out, self.log = cfg, store, Path(out), log
        self.ckpt = self.out / "checkpoint"
        if resume and not (self.ckpt / STATE).exists():
            raise TrainingError(f"nothing to resume in {self.out} (no checkpoint/{STATE})")
        if not cfg.init:
            raise TrainingError("online training starts from a policy: give --init CHECKPOINT")
        self.acc = Accelerator(cpu=not torch.cuda.is_available())
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        init_model, self.tok, init_cfg, _ = ck.load_checkpoint(cfg.init, for_training=True)
        if getattr(init_cfg, "partner_model", False):
            raise TrainingError("the --init checkpoint reads a partner model's line (--partner-model); online "
                                "training does not add it to its prompts yet: start from one trained without")  # fmt: skip
        if not cfg.task_options and init_cfg.task == cfg.task and init_cfg.task_options:
            cfg.task_options = dict(init_cfg.task_options)  # play the game the policy learnt
        self.ref_lm = copy.deepcopy(init_model.lm).requires_grad_(False).eval().to(self.acc.device)
        self.tcfg = TrainConfig.from_dict({**init_cfg.to_dict(), "algo": cfg.algo, "task": cfg.task,
                                           "decoding": "sample", "pi_beta": "shared",
                                           "target": "heads_only", "max_length": cfg.max_length,
                                           "task_options": dict(cfg.task_options),
                                           "extra": {"online": asdict(cfg)}})  # fmt: skip
        self.state: dict[str, Any] = {"round": 0, "kl_coef": cfg.kl_coef, "run_id": None}
        src = self.ckpt if resume else None
        from training.model.policy_value import PolicyValueModel

        lm = ck.load_checkpoint(src, for_training=True)[0].lm if src else init_model.lm
        policy = PolicyValueModel(lm, cfg.algo, target="heads_only", pi_beta="shared", head_bias=0.0)
        self.model = U.PolicyWithValue(policy, cfg.value_bias)
        if cfg.algo != "ppo":
            self.model.v_head.requires_grad_(False)
        if src:
            from safetensors.torch import load_file

            self.state = json.loads((src / STATE).read_text())
            self.model.v_head.load_state_dict(load_file(str(src / VALUE_HEAD)))
        self.kl = ppo.kl_controller(self.state["kl_coef"], cfg.kl_target, cfg.kl_horizon)
        params = [p for p in self.model.parameters() if p.requires_grad]
        tstate = ck.load_trainer_state(src) if src else None
        head = {id(p) for p in self.model.v_head.parameters()}
        # the value head has its own group (its lr × value_lr_mult); a run saved before that
        # option existed resumes with its single group
        split = any(id(p) in head for p in params) and not (
            tstate is not None and len(tstate["optimizer"]["param_groups"]) == 1)
        groups = [{"params": [p for p in params if not split or id(p) not in head], "lr": cfg.lr}]
        if split:
            groups.append({"params": [p for p in params if id(p) in head], "lr": cfg.lr * cfg.value_lr_mult})
        self.opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0)
        self.params = params
        if tstate is not None:
            self.opt.load_state_dict(tstate["optimizer"])
        self.model, self.opt = self.acc.prepare(self.model, self.opt)
        self.inner = self.acc.unwrap_model(self.model)
        if tstate is not None:
            ck.restore_rng(tstate)
        self.pool_eps: list = []
        self.bc_composition: dict[str, Any] | None = None
        self.bc_data = self._bc_data() if cfg.algo == "ppo" and cfg.bc_weight else None

    def _bc_data(self):
        from data.composition import composition
        from data.datasets import DatasetQuery
        from training.datasets.source import load_windows, select_ids
        from training.datasets.windows import PackedDataset
        from training.model.tokenization import encode

        q = DatasetQuery(task=self.cfg.task, sources=[self.cfg.bc_source], options=dict(self.cfg.task_options))
        ids = select_ids(self.store, q)
        self.bc_composition = composition(self.store, ids, q)
        wins = load_windows(self.store, ids, self.cfg.windows)
        return PackedDataset(wins, lambda t: encode(self.tok, t), self.tok.pad_token_id,
                             max_length=self.cfg.max_length)  # fmt: skip

    @property
    def main(self) -> bool:
        return self.acc.is_main_process

    # -- one round ------------------------------------------------------------------------------
    def collect(self, pool: TaskPool, rnd: int):
        """Roll out this rank's share; the main process writes the gathered round to the store."""
        acc, cfg = self.acc, self.cfg
        sampler = BatchSampler(self.inner.policy.lm, self.tok, max_new_tokens=cfg.max_new_tokens,
                               temperature=cfg.temperature, max_prompt_tokens=cfg.max_length)
        torch.manual_seed(cfg.seed * 1_000_003 + rnd * 7919 + acc.process_index)
        with self._full_params():
            eps = rollout(pool, sampler, round_seeds(cfg, rnd, acc.process_index, acc.num_processes),
                          max_steps=cfg.episode_max_steps)
        everything = _gather_objects(acc, eps)
        if self.main and self.store is not None and not self._written(rnd + 1):
            name = f"{cfg.algo}:{self.out.resolve().name}@round{rnd + 1}"
            # one BEGIN IMMEDIATE transaction: it waits for another writer (busy timeout)
            self.store.write_episodes(to_records(everything, name, self.state["run_id"],
                                                 options=cfg.task_options, meta={"round": rnd + 1}))  # fmt: skip
        return eps, everything

    def _full_params(self):
        """Generation outside the wrapper's forward needs whole parameters under FSDP."""
        import contextlib

        from accelerate.utils import DistributedType

        if self.acc.distributed_type != DistributedType.FSDP:
            return contextlib.nullcontext()
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        return FSDP.summon_full_params(self.model, writeback=False)

    def _written(self, rnd: int) -> bool:
        """The round's rollouts are already stored (a run killed after writing them, resumed)."""
        return runs.round_recorded(self.store, self.state["run_id"], rnd)

    def ppo_update(self, eps, rnd: int) -> dict[str, float]:
        acc, cfg, dev = self.acc, self.cfg, self.acc.device
        ds = U.episodes_dataset(eps, self.tok, cfg.windows, cfg.max_length, cfg.reward_scale, sampled_only=True)
        # the unwrapped module: ranks score different numbers of batches, and a DDP forward is a
        # collective (buffer broadcast) that would pair up with another rank's all-reduce
        with self._full_params():
            old_lp, ref_lp, old_v = U.score_tokens(self.inner, self.ref_lm, ds, dev, cfg.batch_size)
        beta = float(self.kl.value)
        adv, ret, vmask, kl = U.advantages(ds, old_lp, ref_lp, old_v, beta=beta, gamma=cfg.gamma,
                                           lam=cfg.lam, credit=cfg.credit)  # fmt: skip
        act = ds.act
        if cfg.whiten:
            adv = ppo.whiten(adv, act, _all_sum(acc, ppo.masked_moments(adv, act)))
        k3 = _all_sum(acc, ppo.k3_kl(old_lp, ref_lp, act))
        k1 = _all_sum(acc, torch.stack([kl.sum(), act.float().sum()]))
        flats = {"old_lp": old_lp, "old_v": old_v, "adv": adv, "ret": ret, "vmask": vmask.float()}
        warm = rnd < cfg.value_warmup
        stats = self._minibatches(ds, rnd, lambda b, ix, d, vd, bcb: U.ppo_minibatch_loss(
            self.model, b, flats, ds, ix, cfg, d, vd, None if warm else bcb, dev, value_only=warm),
            vflat=flats["vmask"])  # fmt: skip
        stats["value_warmup"] = float(warm)
        kl_mean = float(k3[0] / k3[1].clamp(min=1))
        self.kl.update(kl_mean, cfg.n_rollouts)
        stats.update({"kl_k1": float(k1[0] / k1[1].clamp(min=1)), "kl_k3": kl_mean, "kl_coef": beta,
                      "tokens": int(_all_sum(acc, torch.tensor(float(ds.n_tokens))))})  # fmt: skip
        return stats

    def bc_update(self, everything, rnd: int) -> dict[str, float]:
        from training.datasets.windows import select_top

        cfg, acc = self.cfg, self.acc
        pool = self.pool_eps + list(everything) if cfg.accumulate else list(everything)
        if cfg.accumulate:
            self.pool_eps = pool
        rets = [e.total_return for e in pool]
        if cfg.filter == "count":
            kept = select_top(rets, "count", max(1, int(len(pool) * cfg.keep)))
        else:
            kept = select_top(rets, "percent", 100.0 * cfg.keep)
        chosen = [pool[i] for i in kept]
        mine = chosen[acc.process_index :: acc.num_processes] or chosen[:1]  # never an empty rank
        ds = U.episodes_dataset(mine, self.tok, cfg.windows, cfg.max_length, 1.0)
        stats = self._minibatches(ds, rnd, lambda b, ix, d, vd, bcb: (
            U.bc_minibatch_loss(self.model, b, acc.device), {}), vflat=None)
        stats.update({"kept": len(kept), "kept_min_return": min(rets[i] for i in kept),
                      "pool": len(pool), "tokens": int(_all_sum(acc, torch.tensor(float(ds.n_tokens))))})
        return stats

    def _minibatches(self, ds, rnd: int, loss_fn, vflat: torch.Tensor | None) -> dict[str, float]:
        """``epochs`` passes over this rank's windows in minibatches of ``batch_size / world``
        (every rank takes the same number of steps); loss denominators are global counts."""
        acc, cfg = self.acc, self.cfg
        world = acc.num_processes
        mb = max(1, cfg.batch_size // world)
        n_local = torch.tensor(float(len(ds)))
        # every rank takes the same number of steps: the smallest rank's count (a rank with more
        # windows trains on a random subset this epoch; cycling the small rank's windows instead
        # made late steps unstable in a 2-process maze run)
        n_min = -int(acc.reduce(-n_local.to(acc.device), reduction="max")) if world > 1 else len(ds)
        steps = max(1, math.ceil(n_min / mb))
        totals: dict[str, float] = {}
        count = 0
        bg = torch.Generator().manual_seed(cfg.seed * 31 + rnd)
        self.model.train()
        for ep in range(cfg.epochs):
            g = torch.Generator().manual_seed(cfg.seed * 100003 + rnd * 101 + ep * 7 + acc.process_index)
            perm = torch.randperm(len(ds), generator=g).tolist() if cfg.shuffle else list(range(len(ds)))
            perm = (perm * math.ceil(steps * mb / max(len(perm), 1) + 1))[: steps * mb]
            for k in range(steps):
                ix = perm[k * mb : (k + 1) * mb]
                batch = ds.collate(ix)
                m = batch["action_mask"].float().sum()
                d = _all_sum(acc, m.reshape(1))[0] / world
                vd = None
                if vflat is not None:
                    vd = _all_sum(acc, U.gather_flat(ds, ix, vflat).sum().reshape(1))[0] / world
                bcb = None
                if self.bc_data is not None:
                    bix = torch.randint(len(self.bc_data), (mb,), generator=bg).tolist()
                    bcb = self.bc_data.collate(bix)
                loss, st = loss_fn(batch, ix, d, vd, bcb)
                if not torch.isfinite(loss):
                    raise TrainingError(f"the loss became {float(loss)} in round {rnd + 1}; lower --lr")
                acc.backward(loss)
                if cfg.grad_clip:
                    acc.clip_grad_norm_(self.params, cfg.grad_clip)
                self.opt.step()
                self.opt.zero_grad(set_to_none=True)
                st["loss"] = float(loss.detach())
                for key, v in st.items():
                    totals[key] = totals.get(key, 0.0) + float(v)
                count += 1
        return {k: v / max(count, 1) for k, v in totals.items()} | {"updates": count}

    # -- evaluation / checkpoints -----------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        from training.agents.checkpoint_agent import evaluate_model

        return evaluate_model(self.inner.policy, self.tok, self.tcfg, self.store, self.cfg.eval_episodes,
                        seed=self.cfg.eval_seed)  # fmt: skip

    def improved(self, rnd: int, ev: dict[str, Any] | None) -> bool:
        """With --keep-best: whether ``ev`` beats the best evaluation so far (then noted in the state)."""
        best = self.state.get("best")
        if not self.cfg.keep_best or ev is None or (best and ev["mean_return"] <= best["mean_return"]):
            return False
        self.state["best"] = {"round": rnd, "mean_return": ev["mean_return"]}
        return True

    def keep_best(self, rnd: int) -> None:
        """Copy the checkpoint just saved to OUT/checkpoint-best (listed in the store)."""
        ck.copy_checkpoint(self.ckpt, self.out / "checkpoint-best", self.store, self.state["run_id"], rnd,
                        {"kept_best": self.state["best"]})  # fmt: skip

    def save(self, rnd: int, metrics: dict[str, Any]) -> None:
        from safetensors.torch import save_file

        self.state["round"] = rnd
        self.state["kl_coef"] = float(self.kl.value)
        dataset = {"init": self.cfg.init, "run_id": self.state["run_id"], "online": True,
                   **online_dataset(self.cfg, self.bc_composition)}  # fmt: skip
        ck.save_checkpoint(self.ckpt, self.inner.policy, self.tok, self.tcfg, step=rnd, epoch=rnd,
                        dataset=dataset, optimizer=self.opt, metrics=metrics)  # fmt: skip
        head = {k: v.detach().contiguous().cpu() for k, v in self.inner.v_head.state_dict().items()}
        save_file(head, str(self.ckpt / VALUE_HEAD))
        (self.ckpt / STATE).write_text(json.dumps(self.state))  # written last: marks it complete
        if self.store is not None:
            runs.add_checkpoint(self.store, self.state["run_id"], str(self.ckpt.resolve()), rnd, metrics)

    def run(self) -> dict[str, Any]:
        """Do the remaining rounds; returns the final metrics."""
        cfg, acc = self.cfg, self.acc
        start = int(self.state["round"])
        if self.main:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / "config.json").write_text(json.dumps(asdict(cfg), indent=1, sort_keys=True))
            dataset = online_dataset(cfg, self.bc_composition)
            if self.state["run_id"] is None and self.store is not None:
                self.state["run_id"] = runs.start_run(
                    self.store, kind="train", algo=cfg.algo, task=cfg.task,
                    config={**asdict(cfg), "dataset": dataset}, dataset_query=None, episode_ids=None,
                    out_dir=str(self.out.resolve()))  # fmt: skip
            elif self.store is not None:
                runs.resume_run(self.store, self.state["run_id"])
            print(format_online_dataset(cfg, dataset, self.state["run_id"]), file=sys.stderr)
        if acc.num_processes > 1:
            self.state["run_id"] = _gather_objects(acc, [self.state["run_id"]])[0]
        metrics_path = self.out / "metrics.jsonl"
        if cfg.accumulate and start > 0 and self.store is not None:
            self.pool_eps = from_store(self.store, self.state["run_id"], start)
        bar = None
        if cfg.progress and self.main:
            from tqdm.auto import tqdm

            bar = tqdm(total=cfg.rounds, initial=start, desc=f"{cfg.algo} {cfg.task}", unit="round",
                       leave=False)  # fmt: skip
        final: dict[str, Any] = {}
        last_eval = None
        status = "failed"
        t_start = time.perf_counter()
        pool = TaskPool(cfg.task, min(cfg.rollout_batch, cfg.n_rollouts), cfg.task_options)
        try:
            if self.main and cfg.eval_every and start == 0 and cfg.eval_episodes > 0:
                last_eval = self.evaluate()
                _log(metrics_path, {"kind": "eval", "round": 0, **last_eval})
                if self.improved(0, last_eval):
                    self.save(0, {"eval": last_eval})
                    self.keep_best(0)
            for rnd in range(start, cfg.rounds):
                t0 = time.perf_counter()
                eps, everything = self.collect(pool, rnd)
                t1 = time.perf_counter()
                if cfg.algo == "ppo":
                    stats = self.ppo_update(eps, rnd)
                else:
                    stats = self.bc_update(everything, rnd)
                t2 = time.perf_counter()
                n = rnd + 1
                rets = [e.total_return for e in everything]
                steps = sum(len(e.transitions) for e in everything)
                row = {"kind": "train", "round": n, "episodes": len(everything),
                       "mean_return": sum(rets) / max(len(rets), 1),
                       "success_rate": sum(e.success for e in everything) / max(len(rets), 1),
                       "rollout_s": t1 - t0, "update_s": t2 - t1,
                       "rollout_steps_per_s": steps / max(t1 - t0, 1e-9),
                       "update_tokens_per_s": stats.get("tokens", 0) * cfg.epochs / max(t2 - t1, 1e-9),
                       "elapsed_s": time.perf_counter() - t_start, **stats}  # fmt: skip
                if self.main:
                    _log(metrics_path, row)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(ret=f"{row['mean_return']:.3f}")
                fresh = None
                if self.main and cfg.eval_every and n % cfg.eval_every == 0 and cfg.eval_episodes > 0:
                    last_eval = fresh = self.evaluate()
                    _log(metrics_path, {"kind": "eval", "round": n, **last_eval})
                final = {"rounds": n, "last_round": row, "eval": last_eval}
                better = self.main and self.improved(n, fresh)
                if self.main and (better or n == cfg.rounds or (cfg.save_every and n % cfg.save_every == 0)):
                    self.save(n, {"eval": last_eval, "mean_return": row["mean_return"]})
                    if better:
                        self.keep_best(n)
                acc.wait_for_everyone()
            if self.main:
                final["train_seconds"] = time.perf_counter() - t_start
                final["checkpoint"] = str(self.ckpt)
                if self.state.get("best"):
                    final["best"] = self.state["best"]
                    final["best_checkpoint"] = str(self.out / "checkpoint-best")
                final["run_id"] = self.state["run_id"]
            status = "finished"
            return final
        finally:
            pool.close()
            if bar is not None:
                bar.close()
            if self.main and self.store is not None and self.state["run_id"] is not None:
                runs.finish_run(self.store, self.state["run_id"], status, final)


def train_online(cfg: OnlineConfig, store, out: str | Path, *, resume: bool = False) -> dict[str, Any]:
    """Run ``cfg.algo`` online; raises TrainingError for bad input."""
    return OnlineTrainer(cfg, store, out, resume=resume).run()
