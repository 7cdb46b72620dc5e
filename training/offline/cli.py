"""``lmrl train`` / ``lmrl eval`` arguments and runners (no torch at import time).

The lead's ``lmrl_tui/cli.py`` wires ``add_train_arguments`` / ``run_train`` and
``add_eval_arguments`` / ``run_eval``; a :class:`TrainingError` prints one line and returns 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from typing import Any

from training.config import TrainConfig, resolve
from training.errors import TrainingError

_DEFAULTS = TrainConfig()
# CLI flag -> TrainConfig field (those with plain scalar types)
_TUNABLE = (
    "seed", "tokenizer", "vocab_size", "n_layer", "n_embd", "n_head", "dropout", "windows",
    "max_length", "lr", "weight_decay", "batch_size", "epochs", "max_steps", "grad_clip",
    "warmup_steps", "gamma", "discount_mode", "tau", "cql_weight", "polyak_alpha", "target",
    "pi_beta", "bc_weight", "head_bias", "reward_scale", "qsft_reward", "beta", "decoding",
    "logit_weight", "eval_every", "eval_episodes", "save_every", "log_every", "top_mode", "truncation", "lr_schedule",
)  # fmt: skip


def _type_of(name: str):
    f = next(f for f in fields(TrainConfig) if f.name == name)
    if name == "max_steps":
        return int
    if name == "head_bias":
        return float
    return {"int": int, "float": float, "str": str}.get(f.type if isinstance(f.type, str) else "", str)


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lmrl train ALGO --task T ...``."""
    parser.add_argument("algo", help="bc, %%bc (pbc), mc, ilql or qsft")
    parser.add_argument("--task", required=True, help="task id, e.g. maze-fo")
    parser.add_argument("--option", type=task_option, action="append", default=[], dest="task_options",
                        help="task option key=value (repeatable): train on episodes logged with it "
                        "and evaluate with it, e.g. words=small")
    parser.add_argument("--model", default="tiny",
                        help="tiny (GPT-2 from scratch), a local HF causal LM, or an lmrl checkpoint")
    parser.add_argument("--out", required=True, help="run folder (checkpoint/, metrics.jsonl)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--dedupe", action="store_true", default=None,
                        help="train on one copy of each distinct window (deterministic tasks)")
    g = parser.add_argument_group("dataset")
    g.add_argument("--source", action="append", default=[], dest="sources",
                   help="episode source to keep (repeatable): human, scripted, agent, import")
    g.add_argument("--player", action="append", default=[], dest="players")
    g.add_argument("--agent", action="append", default=[], dest="agents")
    g.add_argument("--split", choices=["train", "eval"], default=None)
    g.add_argument("--min-return", type=float, default=None)
    g.add_argument("--top-percent", type=float, default=None,
                   help="%%BC: keep the top p%% by return, ties included (default 10 for %%bc)")
    g.add_argument("--wins-only", action="store_true", help="%%BC: keep successful episodes only")
    g.add_argument("--limit", type=int, default=None)
    h = parser.add_argument_group("hyperparameters (defaults depend on algorithm and task)")
    for name in _TUNABLE:
        default = getattr(_DEFAULTS, name)
        h.add_argument("--" + name.replace("_", "-"), type=_type_of(name), default=None, dest=name,
                       help=f"default {default}")


def config_from_args(args: argparse.Namespace) -> tuple[TrainConfig, Any]:
    """(resolved TrainConfig, DatasetQuery) from parsed ``train`` arguments."""
    from data.datasets import DatasetQuery

    cfg = TrainConfig(algo=args.algo, task=args.task, model=args.model,
                      task_options=dict(getattr(args, "task_options", None) or []),
                      progress=not getattr(args, "no_progress", False))  # fmt: skip
    explicit = set()
    if getattr(args, "dedupe", None):
        cfg.dedupe = True
        explicit.add("dedupe")
    for name in _TUNABLE:
        value = getattr(args, name, None)
        if value is not None:
            setattr(cfg, name, value)
            explicit.add(name)
    try:
        resolve(cfg, explicit)
    except ValueError as e:
        raise TrainingError(str(e)) from None
    top = args.top_percent
    if cfg.algo == "pbc" and top is None and not args.wins_only and args.min_return is None:
        top = 10.0
    query = DatasetQuery(task=args.task, sources=list(args.sources), players=list(args.players),
                         agents=list(args.agents), split=args.split, min_return=args.min_return,
                         top_percent=top, wins_only=args.wins_only, limit=args.limit,
                         options=dict(cfg.task_options))  # fmt: skip
    return cfg, query


def run_train(args: argparse.Namespace, store) -> int:
    """Run ``lmrl train``; prints the final metrics as JSON. 0 on success, 1 on bad input."""
    try:
        _check_task(args.task, dict(getattr(args, "task_options", None) or []))
        cfg, query = config_from_args(args)
        from training.offline.loop import train

        result = train(cfg, store, query, args.out, resume=args.resume)
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result, default=str))
    return 0


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lmrl eval CHECKPOINT --task T --episodes N``."""
    parser.add_argument("checkpoint", help="checkpoint folder (or the run folder holding it)")
    parser.add_argument("--task", default=None, help="task id (default: the checkpoint's task)")
    parser.add_argument("--option", type=task_option, action="append", default=[], dest="task_options",
                        help="task option key=value (default: the checkpoint's own, on its task)")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--decoding", choices=["sample", "greedy", "rerank", "rerank_sample"], default=None)
    parser.add_argument("--beta", type=float, default=None)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--sampled", action="store_true",
                        help="play episodes even where exact evaluation exists (maze-fo)")


def run_eval(args: argparse.Namespace, store) -> int:
    """Run ``lmrl eval``; writes the store's evaluations table and prints the result as JSON."""
    try:
        from training.agent import load_agent
        from training.evaluate import evaluate, record_evaluation
        from training.records import checkpoint_id_for

        agent = load_agent(args.checkpoint, decoding=args.decoding, beta=args.beta,
                           temperature=args.temperature)  # fmt: skip
        task = args.task or agent.meta.get("task")
        options = dict(getattr(args, "task_options", None) or [])
        if not options and task == agent.meta.get("task"):
            options = dict(agent.meta.get("task_options") or {})
        _check_task(task, options)
        if args.episodes < 1:
            raise TrainingError("--episodes must be at least 1")
        res = evaluate(agent, task, args.episodes, seed=args.seed, exact=not args.sampled, store=store,
                       task_options=options)  # fmt: skip
        if options:
            res["task_options"] = options
        res["decoding"] = agent.decoder.decoding
        res["checkpoint"] = agent.meta["path"]
        cid = checkpoint_id_for(store, agent.meta["path"])
        res["evaluation_id"] = record_evaluation(store, task, agent.name, res, cid)
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(eval_summary(task, res, options), file=sys.stderr)
    print(json.dumps(res, default=str))
    return 0


def eval_summary(task: str, res: dict[str, Any], options: dict[str, Any] | None = None) -> str:
    """One line for a person; the full result goes to stdout as JSON."""
    if options:
        task += " (" + ", ".join(f"{k}={v}" for k, v in sorted(options.items())) + ")"
    parts = [f"{task}: mean return {res['mean_return']:.3f}"]
    if res.get("ci_low") is not None and res["ci_low"] != res["ci_high"]:
        parts[0] += f" (95% CI {res['ci_low']:.3f} to {res['ci_high']:.3f})"
    parts[0] += f" over {res['episodes']} {'start cells, exact' if res.get('method') == 'exact' else 'episodes'}"
    if res.get("success_rate") is not None:
        parts.append(f"success {res['success_rate']:.1%}")
    if res.get("normalised_lmrl") is not None:
        parts.append(f"normalised {res['normalised_lmrl']:.1f} (LMRL constants)")
    if res.get("normalised_store") is not None:
        parts.append(f"{res['normalised_store']:.1f} (store data vs our strong policy)")
    return ", ".join(parts)


def task_option(text: str) -> tuple[str, Any]:
    """argparse type of ``--option key=value``."""
    from envs.core import parse_option

    try:
        return parse_option(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _check_task(task: str | None, options: dict[str, Any] | None = None) -> None:
    """The task exists and takes these options (a one-line TrainingError otherwise)."""
    import envs

    if not task:
        raise TrainingError("no task given (use --task)")
    try:
        envs.spec(task, **(options or {}))
    except envs.UnknownTask as e:
        raise TrainingError(str(e)) from None
    except ValueError as e:
        raise TrainingError(f"bad task option for {task}: {e}") from None
