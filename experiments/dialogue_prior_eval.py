"""One evaluation of ``experiments/dialogue_prior.py`` (its ``_eval`` command, run as a process of its
own): a checkpoint plays seeds 0.. side by side, on the GPU when there is one."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def evaluate_checkpoint(
    run_dir: str,
    task: str,
    episodes: int,
    json_out: str,
    db: str,
    beta: str = "",
    top_k: int = 0,
    mode: str = "",
) -> None:
    """Play ``episodes`` episodes (seeds 0..) of the checkpoint in ``run_dir`` side by side; write
    per-episode figures and the first episode's agent lines to ``json_out``; record the evaluation.
    ``mode`` ``rerank``: choose among the data's actions by the checkpoint's score, never one this
    episode already had (``lmrl eval --decoding rerank --no-repeat``)."""
    import torch

    import envs
    from data.store import Store
    from training.agents.checkpoint_agent import load_agent
    from training.evaluation.evaluate import (
        mean_ci,
        normalise,
        play_episodes,
        record_evaluation,
        spec_success,
    )

    torch.backends.cuda.matmul.allow_tf32 = True
    t0 = time.monotonic()
    rerank = {"decoding": "rerank", "no_repeat": True} if mode == "rerank" else {}
    agent = load_agent(run_dir, beta=float(beta) if beta else None, top_k=top_k or None, **rerank)
    load_s = time.monotonic() - t0
    eps = play_episodes(
        task,
        agent,
        episodes,
        0,
        agent.meta.get("task_options") or {},
        batch_size=int(os.environ.get("DIALOGUE_PRIOR_EVAL_BATCH", "50")),
    )
    spec = envs.spec(task, **(agent.meta.get("task_options") or {}))
    rets = [ep.total_return for ep in eps]
    wins = [bool(spec_success(spec, ep)) for ep in eps]
    mean, lo, hi = mean_ci(rets)
    res = {
        "episodes": episodes,
        "mean_return": mean,
        "ci_low": lo,
        "ci_high": hi,
        "success_rate": sum(wins) / max(episodes, 1),
        "method": "reranked" if rerank else "sampled",
    }
    with Store(db) as store:
        res = normalise(res, task, store, task_options=agent.meta.get("task_options"))
        record_evaluation(store, task, agent.name, res)
    first = eps[0]
    lines = [
        {"action": t.action, "observation": t.observation[-160:]} for t in first.transitions[:8]
    ]
    Path(json_out).write_text(
        json.dumps(
            {
                **res,
                "returns": rets,
                "wins": wins,
                "turns": [len(ep.transitions) for ep in eps],
                "device": str(next(agent.decoder.model.parameters()).device),
                "beta": agent.decoder.beta,
                "top_k": agent.decoder.top_k,
                "decoding": agent.decoder.decoding,
                "load_s": round(load_s, 1),
                "play_s": round(time.monotonic() - t0 - load_s, 1),
                "seed0": lines,
            },
            indent=1,
            default=str,
        )
    )
