"""``lmrl train bc|%bc|mc|ilql|qsft`` and ``lmrl eval``: arguments and runners (no torch at import).

:mod:`training.algorithms` registers each offline algorithm with :func:`add_offline_arguments`
and :func:`run_train`; a :class:`TrainingError` prints one line and returns 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from envs.players.checkpoint_choice import DECODINGS
from training.args import (
    add_config_arguments,
    add_dataset_arguments,
    add_task_arguments,
    check_task,
    dataset_query,
    explicit_settings,
)
from training.config import ALGO_DEFAULTS, TrainConfig, canonical_algo, resolve
from training.errors import TrainingError
from training.evaluation.evaluate import DEFAULT_BATCH


def _help(name: str) -> str:
    return next(f.metadata["help"] for f in fields(TrainConfig) if f.name == name)


def algo_defaults(algo: str) -> TrainConfig:
    """The config an algorithm starts from before task defaults and recipes (for ``--help``)."""
    cfg = TrainConfig(algo=algo)
    for k, v in ALGO_DEFAULTS[canonical_algo(algo)].items():
        setattr(cfg, k, v)
    return cfg


def add_offline_arguments(parser: argparse.ArgumentParser, algo: str = "bc") -> None:
    """Arguments of ``lmrl train ALGO --task T --out DIR ...`` for an offline algorithm."""
    add_task_arguments(
        parser,
        required=True,
        task_help="task id, e.g. maze-fo",
        option_help="task option key=value (repeatable): train on the episodes "
        "logged with it and evaluate with it, e.g. words=small",
    )
    parser.add_argument("--model", default="tiny", help=_help("model") + " (default: tiny)")
    parser.add_argument("--out", required=True, help="run folder (checkpoint/, metrics.jsonl)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_dataset_arguments(parser)
    add_config_arguments(
        parser,
        TrainConfig,
        algo_defaults(algo),
        f"hyperparameters (the defaults shown are {algo}'s; a task may have its "
        "own where no flag is given: TASK_DEFAULTS, RECIPES in training/config.py)",
    )


def config_from_args(args: argparse.Namespace) -> tuple[TrainConfig, Any]:
    """(resolved TrainConfig, DatasetQuery) from parsed ``train`` arguments."""
    cfg = TrainConfig(
        algo=args.algo,
        task=args.task,
        model=args.model,
        task_options=dict(getattr(args, "task_options", None) or []),
        progress=not getattr(args, "no_progress", False),
    )
    given = explicit_settings(args, TrainConfig)
    for name, value in given.items():
        setattr(cfg, name, value)
    try:
        resolve(cfg, set(given))
    except ValueError as e:
        raise TrainingError(str(e)) from None
    top = args.top_percent
    if cfg.algo == "pbc" and top is None and not args.wins_only and args.min_return is None:
        top = 10.0
    return cfg, dataset_query(args, top_percent=top, options=dict(cfg.task_options))


def run_train(args: argparse.Namespace, store) -> int:
    """Run ``lmrl train``; prints the final metrics as JSON. 0 on success, 1 on bad input."""
    try:
        check_task(args.task, dict(getattr(args, "task_options", None) or []))
        cfg, query = config_from_args(args)
        if cfg.model == "utterance":
            if args.resume:
                raise TrainingError(
                    "--model utterance runs are short: start it again instead of --resume"
                )
            from training.utterance.train import train_utterance

            result = train_utterance(cfg, store, query, args.out)
        else:
            from training.offline.loop import train

            result = train(cfg, store, query, args.out, resume=args.resume)
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if result:  # under a launcher only the main process has the metrics
        print(json.dumps(result, default=str))
    return 0


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lmrl eval CHECKPOINT --task T --episodes N``."""
    parser.add_argument(
        "checkpoint",
        metavar="AGENT",
        help="checkpoint folder (or the run folder holding it); with --task also a scripted "
        "policy (e.g. behaviour), hf:MODEL, http:MODEL@BASE_URL or guided:LLM+CHECKPOINT",
    )
    add_task_arguments(
        parser,
        task_help="task id (default: the checkpoint's task; needed for any other agent)",
        option_help="task option key=value (default: the checkpoint's own, on its task)",
    )
    parser.add_argument("--episodes", type=int, default=100, help="episodes to play (default: 100)")
    parser.add_argument(
        "--seed", type=int, default=0, help="first seed; episode i uses seed+i (default: 0)"
    )
    parser.add_argument(
        "--decoding", choices=DECODINGS, default=None, help="decoding (default: the checkpoint's)"
    )
    parser.add_argument(
        "--beta",
        type=float,
        default=None,
        help="value-guided decoding's β (default: the checkpoint's)",
    )
    parser.add_argument(
        "--logit-weight",
        type=float,
        default=None,
        help="reranking (MC, ILQL): weight of π_β's log-probability in an action's score "
        "(default: the checkpoint's)",
    )
    parser.add_argument(
        "--no-repeat",
        action="store_const",
        const=True,
        default=None,
        dest="no_repeat",
        help="reranking among the data's actions (the dialogue tasks): never choose one "
        "the agent already said in the episode (default: the checkpoint's)",
    )
    parser.add_argument(
        "--repeat",
        action="store_const",
        const=False,
        dest="no_repeat",
        help="reranking among the data's actions: let the agent say one again",
    )
    parser.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (default: 1.0)"
    )
    parser.add_argument(
        "--top-k",
        type=int,
        default=None,
        help="sample only among π_β's K most likely next tokens, 0 among all (default: "
        "the checkpoint's)",
    )
    parser.add_argument(
        "--sampled",
        action="store_true",
        help="play episodes even where exact evaluation exists (maze-fo)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH,
        help="episodes played side by side, one batched forward per turn; 1 plays "
        f"them one at a time (same results for the same seeds) (default: {DEFAULT_BATCH})",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (it is drawn on stderr only when that is a terminal)",
    )


_CHECKPOINT_ONLY = ("decoding", "beta", "logit_weight", "top_k", "no_repeat")


def run_eval(args: argparse.Namespace, store) -> int:
    """Run ``lmrl eval``; writes the store's evaluations table and prints the result as JSON."""
    try:
        _settings_from_the_choice(args)
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not Path(args.checkpoint).expanduser().exists():
        return _eval_other_agent(args, store)
    try:
        from data.runs import checkpoint_id_for
        from training.agents.checkpoint_agent import load_agent
        from training.evaluation.evaluate import evaluate

        agent = load_agent(
            args.checkpoint,
            decoding=args.decoding,
            beta=args.beta,
            temperature=args.temperature,
            logit_weight=args.logit_weight,
            top_k=args.top_k,
            no_repeat=args.no_repeat,
            max_new_tokens=getattr(args, "max_new_tokens", None),
        )
        task = args.task or agent.meta.get("task")
        if agent.meta.get("side") == "partner":
            raise TrainingError(
                "this checkpoint learnt the partner's side (--side partner); lmrl eval plays the "
                "agent's side: play it with lmrl generate TASK --partner CHECKPOINT"
            )
        options = dict(getattr(args, "task_options", None) or [])
        if not options and task == agent.meta.get("task"):
            options = dict(agent.meta.get("task_options") or {})
        check_task(task, options)
        if args.episodes < 1:
            raise TrainingError("--episodes must be at least 1")
        if args.batch_size < 1:
            raise TrainingError("--batch-size must be at least 1")
        res = evaluate(
            agent,
            task,
            args.episodes,
            seed=args.seed,
            exact=not args.sampled,
            store=store,
            task_options=options,
            batch_size=args.batch_size,
            progress=False if args.no_progress else None,
        )
        if res.get("method") == "exact":  # --episodes is not used: say so, not silently
            print(
                f"lmrl eval: {task} is evaluated exactly over its {res.get('cells', 'all')} start cells "
                "(every start, no sampling; --episodes and --seed do not apply; --sampled plays "
                "episodes instead)",
                file=sys.stderr,
            )
        if options:
            res["task_options"] = options
        if args.logit_weight is not None:
            res["logit_weight"] = args.logit_weight
        dec = getattr(agent, "decoder", None)
        if dec is None:  # an utterance-level checkpoint chooses among whole lines
            res["model"] = "utterance"
            if agent.no_repeat:
                res["no_repeat"] = True
        else:
            res["decoding"] = dec.decoding
            if dec.top_k:
                res["top_k"] = dec.top_k
            if agent.choices(None) and dec.cfg.no_repeat:
                res["no_repeat"] = True
        res["checkpoint"] = agent.meta["path"]
        cid = checkpoint_id_for(store, agent.meta["path"])
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return _record_and_print(store, task, agent.name, res, options, cid)


def _settings_from_the_choice(args: argparse.Namespace) -> None:
    """``lmrl eval "runs/mc --decoding rerank"`` (a checkpoint as the app and the ladder write it):
    the settings after the folder become the flags; a flag also given on the command line must agree."""
    from envs.players.checkpoint_choice import CheckpointSettingsError, split_checkpoint_choice

    try:
        folder, settings = split_checkpoint_choice(args.checkpoint)
    except CheckpointSettingsError as e:
        raise TrainingError(str(e)) from None
    if not settings or not Path(folder).expanduser().exists():
        return
    for key, value in settings.items():
        given = getattr(args, key, None)
        if key == "temperature" and given == 1.0:
            given = None
        if given is not None and given != value:
            raise TrainingError(
                f"--{key.replace('_', '-')} is given twice, after the checkpoint and as a flag, "
                "with different values"
            )
        setattr(args, key, value)
    args.checkpoint = folder


def _record_and_print(
    store,
    task: str,
    policy: str,
    res: dict[str, Any],
    options: dict[str, Any],
    checkpoint_id: int | None,
) -> int:
    """Store the evaluation, then print its line for a person (stderr) and its JSON (stdout)."""
    from training.evaluation.evaluate import record_evaluation

    res["evaluation_id"] = record_evaluation(store, task, policy, res, checkpoint_id)
    print(eval_summary(task, res, options), file=sys.stderr)
    print(json.dumps(res, default=str))
    return 0


def _eval_other_agent(args: argparse.Namespace, store) -> int:
    """``lmrl eval AGENT --task T`` for an agent that is not a checkpoint folder: a scripted policy,
    ``hf:``, ``http:`` or ``guided:`` (one episode at a time, on the task's built-in partner)."""
    from envs.players.agents import make_agent
    from training.evaluation.evaluate import evaluate

    try:
        if not args.task:
            raise TrainingError(
                f"no checkpoint at {args.checkpoint}; to evaluate a scripted policy or a language "
                "model (hf:, http:, guided:) give its task with --task"
            )
        given = [
            (
                "--repeat"
                if k == "no_repeat" and not getattr(args, k)
                else f"--{k.replace('_', '-')}"
            )
            for k in _CHECKPOINT_ONLY
            if getattr(args, k, None) is not None
        ]
        if given or args.temperature != 1.0:
            raise TrainingError(
                f"{', '.join(given) or '--temperature'}: only for a checkpoint, not {args.checkpoint}"
            )
        options = dict(getattr(args, "task_options", None) or [])
        check_task(args.task, options)
        if args.episodes < 1:
            raise TrainingError("--episodes must be at least 1")
    except TrainingError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    agent = make_agent(args.task, args.checkpoint)  # a bad choice: one line from lmrl's main
    if agent is None:
        print("error: lmrl eval plays an agent, not a human", file=sys.stderr)
        return 1
    try:
        res = evaluate(
            agent,
            args.task,
            args.episodes,
            seed=args.seed,
            exact=not args.sampled,
            store=store,
            task_options=options,
            batch_size=1,
            progress=False if args.no_progress else None,
        )
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()
    if options:
        res["task_options"] = options
    res["agent"] = args.checkpoint
    return _record_and_print(store, args.task, args.checkpoint, res, options, None)


def eval_summary(task: str, res: dict[str, Any], options: dict[str, Any] | None = None) -> str:
    """One line for a person; the full result goes to stdout as JSON."""
    if options:
        task += " (" + ", ".join(f"{k}={v}" for k, v in sorted(options.items())) + ")"
    parts = [f"{task}: mean return {res['mean_return']:.3f}"]
    if res.get("ci_low") is not None and res["ci_low"] != res["ci_high"]:
        parts[0] += f" (95% CI {res['ci_low']:.3f} to {res['ci_high']:.3f})"
    parts[0] += (
        f" over {res['episodes']} {'start cells, exact' if res.get('method') == 'exact' else 'episodes'}"
    )
    if res.get("success_rate") is not None:
        parts.append(f"success {res['success_rate']:.1%}")
    if res.get("normalised_lmrl") is not None:
        parts.append(f"normalised {res['normalised_lmrl']:.1f} (LMRL constants)")
    if res.get("normalised_store") is not None:
        parts.append(f"{res['normalised_store']:.1f} (store data vs our strong policy)")
    return ", ".join(parts)
