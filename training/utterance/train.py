"""``lmrl train ALGO --task T --model utterance``: fit the utterance-level model on stored episodes
(BC, %BC, MC Returns, ILQL or Q-SFT; one transition per agent turn), save its checkpoint, evaluate.

The run is recorded like any other (the store's runs table, ``metrics.jsonl``, ``config.json``,
``checkpoint/``); a batch is ``--batch-size`` whole episodes, every turn of each a transition.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

from data import runs
from data.composition import composition, format_composition
from training.config import TrainConfig
from training.datasets.source import select_ids
from training.errors import TrainingError
from training.utterance.checkpoint import load_utterance_agent, save_utterance
from training.utterance.data import load_corpus, returns_to_go
from training.utterance.features import candidate_features
from training.utterance.losses import losses, make_batch
from training.utterance.model import UtteranceModel

DIM = 128
"""Width of the towers and heads."""
EVIDENCE = True
"""New runs' history vectors carry the turn vectors' raw sum (the naive-Bayes reader,
:meth:`UtteranceModel.histories`). Measured once (Guess My City, MC with --hindsight 1, 20,000
episodes, seed 0): the true city ranked 5.8th of 126 after 17 answers with it, 7.6th without."""
TABLE_LR = 30.0
"""The hashed tables learn at this multiple of ``--lr``: a row moves only on the steps its feature
appears in, and at ``--lr`` itself the guesser's reading of the answers never formed (Guess My
City: the behaviour's guess ranked 60th of 126 after 1,500 steps at 1e-3, 2nd at 3e-2)."""


def _log(path: Path, row: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")


def finishing_facts(corpus, gamma: float) -> dict[str, Any]:
    """What the agent needs to value a finishing line by the hindsight reader
    (:class:`training.utterance.agent.Finishing`): the lines, the winning line's mean reward and a
    turn's mean cost in the won episodes, γ."""
    won = [d for d in corpus.dialogues if d.won]
    costs = [r for d in won for r in d.rewards[:-1]]
    return {
        "lines": [corpus.candidates[i] for i in corpus.finishers],
        "reward": sum(d.rewards[-1] for d in won) / max(len(won), 1),
        "cost": sum(costs) / len(costs) if costs else 0.0,
        "gamma": gamma,
    }


def train_utterance(cfg: TrainConfig, store, query, out: str | Path) -> dict[str, Any]:
    """Train, save ``out/checkpoint`` and evaluate (``cfg.eval_episodes``); the final metrics."""
    if cfg.algo not in ("bc", "pbc", "mc", "ilql", "qsft"):
        raise TrainingError(f"--model utterance trains bc, pbc, mc, ilql or qsft, not {cfg.algo}")
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ids = select_ids(store, query, cfg.top_mode)
    comp = composition(store, ids, query)
    corpus = load_corpus(store, ids)
    dialogues = corpus.dialogues
    all_returns = [g for d in dialogues for g in returns_to_go(d.rewards, cfg.gamma)]
    scale = max(
        1.0, max(abs(g) for g in all_returns)
    )  # Q heads learn returns / scale: within [-1, 1]
    totals = [sum(d.rewards) for d in dialogues]
    return_range = (min(totals), max(totals))
    print(
        format_composition(comp, f"{cfg.algo} on {cfg.task} (utterance level): dataset"),
        file=sys.stderr,
    )
    model = UtteranceModel(DIM, evidence=EVIDENCE)
    target = model.target_copy() if cfg.algo in ("ilql", "qsft") else None
    cand_feats = [candidate_features(c) for c in corpus.candidates]
    finishers = torch.tensor(corpus.finishers, dtype=torch.long)
    opts = [
        torch.optim.AdamW(model.dense_parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay),
        torch.optim.SparseAdam(model.sparse_parameters(), lr=cfg.lr * TABLE_LR),
    ]
    per_epoch = max(1, math.ceil(len(dialogues) / cfg.batch_size))
    total = cfg.max_steps or max(1, int(cfg.epochs * per_epoch))
    run_config = {**cfg.to_dict(), "dataset": {k: v for k, v in comp.items() if k != "query"}}
    run_id = runs.start_run(
        store,
        kind="train",
        algo=cfg.algo,
        task=cfg.task,
        config=run_config,
        dataset_query=query.to_json(),
        episode_ids=ids,
        out_dir=str(out.resolve()),
    )
    (out / "config.json").write_text(cfg.to_json())
    metrics_path = out / "metrics.jsonl"
    gen = random.Random(cfg.seed)
    order: list[int] = []
    t0, seen, status, final = time.perf_counter(), 0, "failed", {}
    done = 0
    try:
        model.train()
        for step in range(total):
            if len(order) < cfg.batch_size:
                fresh = list(range(len(dialogues)))
                gen.shuffle(fresh)
                order.extend(fresh)
            pick, order = order[: cfg.batch_size], order[cfg.batch_size :]
            batch = make_batch([dialogues[i] for i in pick], cfg.gamma)
            cands = model.candidates(cand_feats)
            cand_t = target.candidates(cand_feats).detach() if target is not None else None
            loss, stats = losses(
                cfg.algo,
                model,
                target,
                batch,
                cands,
                cand_t,
                gamma=cfg.gamma,
                scale=scale,
                tau=cfg.tau,
                cql_weight=cfg.cql_weight,
                bc_weight=cfg.bc_weight,
                return_range=return_range,
                hindsight=cfg.hindsight,
                finishers=finishers,
            )
            value = float(loss.detach())
            if not math.isfinite(value):
                raise TrainingError(f"the loss became {value} at step {step}; lower --lr")
            for opt in opts:
                opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip:
                torch.nn.utils.clip_grad_norm_(model.dense_parameters(), cfg.grad_clip)
            for opt in opts:
                opt.step()
            if target is not None:
                target.polyak_from(model, cfg.polyak_alpha)
            seen += len(batch.action)
            done = step + 1
            if done % max(cfg.log_every, 1) == 0 or done == total:
                el = time.perf_counter() - t0
                _log(
                    metrics_path,
                    {
                        "kind": "train",
                        "step": done,
                        "loss": value,
                        "transitions_per_s": seen / el,
                        "elapsed_s": el,
                        **stats,
                    },
                )
            if cfg.max_minutes is not None and time.perf_counter() - t0 > 60 * cfg.max_minutes:
                break
        el = time.perf_counter() - t0
        final = {
            "steps": done,
            "train_seconds": el,
            "transitions_per_s": seen / max(el, 1e-9),
            "examples": sum(len(d.actions) for d in dialogues),
            "episodes": len(ids),
            "candidates": len(corpus.candidates),
            "finishers": len(corpus.finishers),
        }
        ckpt = save_utterance(
            out / "checkpoint",
            model,
            cfg,
            corpus,
            step=done,
            metrics=final,
            extra={
                "dim": DIM,
                "evidence": model.evidence,
                "buckets": model.buckets,
                "scale": scale,
                "return_range": list(return_range),
                **({"finishing": finishing_facts(corpus, cfg.gamma)} if cfg.hindsight > 0 else {}),
            },
            dataset={
                "query": json.loads(query.to_json()),
                "episode_ids": ids,
                "composition": comp,
                "actions": corpus.candidates,
            },
        )
        if cfg.eval_episodes > 0 and cfg.task:
            from training.evaluation.evaluate import evaluate

            agent = load_utterance_agent(ckpt)
            final["eval"] = evaluate(
                agent, cfg.task, cfg.eval_episodes, store=store, task_options=dict(cfg.task_options)
            )
            _log(metrics_path, {"kind": "eval", "step": done, **final["eval"]})
        final["checkpoint_id"] = runs.add_checkpoint(
            store, run_id, str(ckpt.resolve()), done, final
        )
        final["checkpoint"] = str(ckpt)
        status = "finished"
        return final
    finally:
        runs.finish_run(store, run_id, status, final)
