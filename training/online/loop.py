"""The online loop (PPO docs/algorithms.md §5, online filtered BC §6) on accelerate: rounds of batched rollouts ->
update, periodic evaluation, metrics as JSON lines in ``OUT/metrics.jsonl``, a checkpoint after
every ``save_every`` rounds, ``resume`` from the last one. Under ``accelerate launch`` every rank
rolls out its share of the round's seeds; advantages are whitened and KL statistics averaged with
all-reduced sums, and filtered BC selects its top episodes from the gathered round.
"""

from __future__ import annotations

import copy
import json
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
from training.online.rollout import TaskPool, from_store
from training.online.round import OnlineRound, gather_objects

STATE = "online_state.json"
VALUE_HEAD = "value_head.safetensors"


def _log(path: Path, row: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row, default=float) + "\n")


class OnlineTrainer(OnlineRound):
    """State of one online run; :meth:`run` does the rounds."""

    def __init__(
        self, cfg: OnlineConfig, store, out: str | Path, *, resume: bool = False, log=print
    ) -> None:
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
            raise TrainingError(
                "the --init checkpoint reads a partner model's line (--partner-model); online "
                "training does not add it to its prompts yet: start from one trained without"
            )
        if not cfg.task_options and init_cfg.task == cfg.task and init_cfg.task_options:
            cfg.task_options = dict(init_cfg.task_options)  # play the game the policy learnt
        self.ref_lm = copy.deepcopy(init_model.lm).requires_grad_(False).eval().to(self.acc.device)
        self.tcfg = TrainConfig.from_dict(
            {
                **init_cfg.to_dict(),
                "algo": cfg.algo,
                "task": cfg.task,
                "decoding": "sample",
                "pi_beta": "shared",
                "target": "heads_only",
                "max_length": cfg.max_length,
                "task_options": dict(cfg.task_options),
                "extra": {"online": asdict(cfg)},
            }
        )
        self.state: dict[str, Any] = {"round": 0, "kl_coef": cfg.kl_coef, "run_id": None}
        src = self.ckpt if resume else None
        from training.model.policy_value import PolicyValueModel

        lm = ck.load_checkpoint(src, for_training=True)[0].lm if src else init_model.lm
        policy = PolicyValueModel(
            lm, cfg.algo, target="heads_only", pi_beta="shared", head_bias=0.0
        )
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
            tstate is not None and len(tstate["optimizer"]["param_groups"]) == 1
        )
        groups = [{"params": [p for p in params if not split or id(p) not in head], "lr": cfg.lr}]
        if split:
            groups.append(
                {"params": [p for p in params if id(p) in head], "lr": cfg.lr * cfg.value_lr_mult}
            )
        self.opt = torch.optim.AdamW(
            groups, lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0
        )
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

        q = DatasetQuery(
            task=self.cfg.task, sources=[self.cfg.bc_source], options=dict(self.cfg.task_options)
        )
        ids = select_ids(self.store, q)
        self.bc_composition = composition(self.store, ids, q)
        wins = load_windows(self.store, ids, self.cfg.windows)
        return PackedDataset(
            wins,
            lambda t: encode(self.tok, t),
            self.tok.pad_token_id,
            max_length=self.cfg.max_length,
        )

    @property
    def main(self) -> bool:
        return self.acc.is_main_process

    # -- evaluation / checkpoints -----------------------------------------------------------------
    def evaluate(self) -> dict[str, Any]:
        from training.agents.checkpoint_agent import evaluate_model

        return evaluate_model(
            self.inner.policy,
            self.tok,
            self.tcfg,
            self.store,
            self.cfg.eval_episodes,
            seed=self.cfg.eval_seed,
        )

    def improved(self, rnd: int, ev: dict[str, Any] | None) -> bool:
        """With --keep-best: whether ``ev`` beats the best evaluation so far (then noted in the state)."""
        best = self.state.get("best")
        if (
            not self.cfg.keep_best
            or ev is None
            or (best and ev["mean_return"] <= best["mean_return"])
        ):
            return False
        self.state["best"] = {"round": rnd, "mean_return": ev["mean_return"]}
        return True

    def keep_best(self, rnd: int) -> None:
        """Copy the checkpoint just saved to OUT/checkpoint-best (listed in the store)."""
        ck.copy_checkpoint(
            self.ckpt,
            self.out / "checkpoint-best",
            self.store,
            self.state["run_id"],
            rnd,
            {"kept_best": self.state["best"]},
        )

    def save(self, rnd: int, metrics: dict[str, Any]) -> None:
        from safetensors.torch import save_file

        self.state["round"] = rnd
        self.state["kl_coef"] = float(self.kl.value)
        dataset = {
            "init": self.cfg.init,
            "run_id": self.state["run_id"],
            "online": True,
            **online_dataset(self.cfg, self.bc_composition),
        }
        ck.save_checkpoint(
            self.ckpt,
            self.inner.policy,
            self.tok,
            self.tcfg,
            step=rnd,
            epoch=rnd,
            dataset=dataset,
            optimizer=self.opt,
            metrics=metrics,
        )
        head = {k: v.detach().contiguous().cpu() for k, v in self.inner.v_head.state_dict().items()}
        save_file(head, str(self.ckpt / VALUE_HEAD))
        (self.ckpt / STATE).write_text(json.dumps(self.state))  # written last: marks it complete
        if self.store is not None:
            runs.add_checkpoint(
                self.store, self.state["run_id"], str(self.ckpt.resolve()), rnd, metrics
            )

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
                    self.store,
                    kind="train",
                    algo=cfg.algo,
                    task=cfg.task,
                    config={**asdict(cfg), "dataset": dataset},
                    dataset_query=None,
                    episode_ids=None,
                    out_dir=str(self.out.resolve()),
                )
            elif self.store is not None:
                runs.resume_run(self.store, self.state["run_id"])
            print(format_online_dataset(cfg, dataset, self.state["run_id"]), file=sys.stderr)
        if acc.num_processes > 1:
            self.state["run_id"] = gather_objects(acc, [self.state["run_id"]])[0]
        metrics_path = self.out / "metrics.jsonl"
        if cfg.accumulate and start > 0 and self.store is not None:
            self.pool_eps = from_store(self.store, self.state["run_id"], start)
        bar = None
        if cfg.progress and self.main:
            from tqdm.auto import tqdm

            bar = tqdm(
                total=cfg.rounds,
                initial=start,
                desc=f"{cfg.algo} {cfg.task}",
                unit="round",
                leave=False,
            )
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
                row = {
                    "kind": "train",
                    "round": n,
                    "episodes": len(everything),
                    "mean_return": sum(rets) / max(len(rets), 1),
                    "success_rate": sum(e.success for e in everything) / max(len(rets), 1),
                    "rollout_s": t1 - t0,
                    "update_s": t2 - t1,
                    "rollout_steps_per_s": steps / max(t1 - t0, 1e-9),
                    "update_tokens_per_s": stats.get("tokens", 0) * cfg.epochs / max(t2 - t1, 1e-9),
                    "elapsed_s": time.perf_counter() - t_start,
                    **stats,
                }
                if self.main:
                    _log(metrics_path, row)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(ret=f"{row['mean_return']:.3f}")
                fresh = None
                if (
                    self.main
                    and cfg.eval_every
                    and n % cfg.eval_every == 0
                    and cfg.eval_episodes > 0
                ):
                    last_eval = fresh = self.evaluate()
                    _log(metrics_path, {"kind": "eval", "round": n, **last_eval})
                final = {"rounds": n, "last_round": row, "eval": last_eval}
                better = self.main and self.improved(n, fresh)
                if self.main and (
                    better or n == cfg.rounds or (cfg.save_every and n % cfg.save_every == 0)
                ):
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


def train_online(
    cfg: OnlineConfig, store, out: str | Path, *, resume: bool = False
) -> dict[str, Any]:
    """Run ``cfg.algo`` online; raises TrainingError for bad input."""
    return OnlineTrainer(cfg, store, out, resume=resume).run()
