"""One round of the online loop, as methods of :class:`training.online.loop.OnlineTrainer`: roll out
this rank's share of the round's seeds and store the gathered round (:meth:`OnlineRound.collect`),
then update: PPO (:meth:`OnlineRound.ppo_update`) or filtered BC (:meth:`OnlineRound.bc_update`),
both in minibatches that every rank takes alike. The trainer's ``__init__`` sets the state they use.
"""

from __future__ import annotations

import math

import torch

from data import runs
from training.errors import TrainingError
from training.online import ppo
from training.online import update as U
from training.online.config import OnlineConfig
from training.online.rollout import BatchSampler, TaskPool, rollout, to_records


def _all_sum(acc, t: torch.Tensor) -> torch.Tensor:
    if acc.num_processes == 1:
        return t
    return acc.reduce(t.to(acc.device), reduction="sum").cpu()


def gather_objects(acc, items: list) -> list:
    if acc.num_processes == 1:
        return list(items)
    from accelerate.utils import gather_object

    return list(gather_object(list(items)))


def round_seeds(cfg: OnlineConfig, rnd: int, rank: int = 0, world: int = 1) -> list[int]:
    """This rank's episode seeds of round ``rnd`` (disjoint from evaluation seeds 0..)."""
    base = 1_000_000 + cfg.seed * 10_000_000 + rnd * cfg.n_rollouts
    return list(range(base, base + cfg.n_rollouts))[rank::world]


class OnlineRound:
    """The round's steps of :class:`training.online.loop.OnlineTrainer` (its base class)."""

    def collect(self, pool: TaskPool, rnd: int):
        """Roll out this rank's share; the main process writes the gathered round to the store."""
        acc, cfg = self.acc, self.cfg
        sampler = BatchSampler(
            self.inner.policy.lm,
            self.tok,
            max_new_tokens=cfg.max_new_tokens,
            temperature=cfg.temperature,
            max_prompt_tokens=cfg.max_length,
        )
        torch.manual_seed(cfg.seed * 1_000_003 + rnd * 7919 + acc.process_index)
        with self._full_params():
            eps = rollout(
                pool,
                sampler,
                round_seeds(cfg, rnd, acc.process_index, acc.num_processes),
                max_steps=cfg.episode_max_steps,
            )
        everything = gather_objects(acc, eps)
        if self.main and self.store is not None and not self._written(rnd + 1):
            name = f"{cfg.algo}:{self.out.resolve().name}@round{rnd + 1}"
            # one BEGIN IMMEDIATE transaction: it waits for another writer (busy timeout)
            self.store.write_episodes(
                to_records(
                    everything,
                    name,
                    self.state["run_id"],
                    options=cfg.task_options,
                    meta={"round": rnd + 1},
                )
            )
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
        ds = U.episodes_dataset(
            eps, self.tok, cfg.windows, cfg.max_length, cfg.reward_scale, sampled_only=True
        )
        # the unwrapped module: ranks score different numbers of batches, and a DDP forward is a
        # collective (buffer broadcast) that would pair up with another rank's all-reduce
        with self._full_params():
            old_lp, ref_lp, old_v = U.score_tokens(self.inner, self.ref_lm, ds, dev, cfg.batch_size)
        beta = float(self.kl.value)
        adv, ret, vmask, kl = U.advantages(
            ds, old_lp, ref_lp, old_v, beta=beta, gamma=cfg.gamma, lam=cfg.lam, credit=cfg.credit
        )
        act = ds.act
        if cfg.whiten:
            adv = ppo.whiten(adv, act, _all_sum(acc, ppo.masked_moments(adv, act)))
        k3 = _all_sum(acc, ppo.k3_kl(old_lp, ref_lp, act))
        k1 = _all_sum(acc, torch.stack([kl.sum(), act.float().sum()]))
        flats = {"old_lp": old_lp, "old_v": old_v, "adv": adv, "ret": ret, "vmask": vmask.float()}
        warm = rnd < cfg.value_warmup
        stats = self._minibatches(
            ds,
            rnd,
            lambda b, ix, d, vd, bcb: U.ppo_minibatch_loss(
                self.model,
                b,
                flats,
                ds,
                ix,
                cfg,
                d,
                vd,
                None if warm else bcb,
                dev,
                value_only=warm,
            ),
            vflat=flats["vmask"],
        )
        stats["value_warmup"] = float(warm)
        kl_mean = float(k3[0] / k3[1].clamp(min=1))
        self.kl.update(kl_mean, cfg.n_rollouts)
        stats.update(
            {
                "kl_k1": float(k1[0] / k1[1].clamp(min=1)),
                "kl_k3": kl_mean,
                "kl_coef": beta,
                "tokens": int(_all_sum(acc, torch.tensor(float(ds.n_tokens)))),
            }
        )
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
        stats = self._minibatches(
            ds,
            rnd,
            lambda b, ix, d, vd, bcb: (U.bc_minibatch_loss(self.model, b, acc.device), {}),
            vflat=None,
        )
        stats.update(
            {
                "kept": len(kept),
                "kept_min_return": min(rets[i] for i in kept),
                "pool": len(pool),
                "tokens": int(_all_sum(acc, torch.tensor(float(ds.n_tokens)))),
            }
        )
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
            g = torch.Generator().manual_seed(
                cfg.seed * 100003 + rnd * 101 + ep * 7 + acc.process_index
            )
            perm = (
                torch.randperm(len(ds), generator=g).tolist()
                if cfg.shuffle
                else list(range(len(ds)))
            )
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
                    raise TrainingError(
                        f"the loss became {float(loss)} in round {rnd + 1}; lower --lr"
                    )
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
