"""Trained agents on the dialogue tasks from the SmolLM2 prior: BC and MC Returns fine-tuned from
``--model smollm2-135m`` on LMRL's behaviour data, every run side by side on one GPU, each
checkpoint evaluated against the task's embedded partner (docs/notes/smollm2-prior.md).

    python experiments/dialogue_prior.py run OUT [--tasks twenty-questions guess-city car-dealer]
        [--algos bc mc] [--seeds 0 1 2] [--data-episodes 2000] [--train-minutes 4]
        [--eval-episodes 100] [--budget 540]
    python experiments/dialogue_prior.py report OUT

``run`` goes through four phases over the folder ``OUT``:

1. converts the prior once (``training.model.pretrained.resolve``) while it generates each task's data
   with LMRL's behaviour recipe (seeds 100000.., disjoint from the evaluation seeds) in
   ``OUT/TASK.db``;
2. trains every (task, algorithm, seed) side by side, each in its own copy of its task's store
   (``OUT/runs/NAME.db``), for ``--train-minutes`` of training (``lmrl train --max-minutes``; bf16
   autocast on a GPU);
3. evaluates every checkpoint on seeds 0..E-1, all E episodes side by side (one batched forward per
   turn, on the GPU when there is one; its ``_eval`` command, ``experiments/dialogue_prior_eval.py``),
   into ``OUT/eval/NAME.json`` and its store;
4. writes ``OUT/results.md`` and ``OUT/results.json`` (``report``, ``experiments/dialogue_prior_report.py``):
   per task and algorithm the success rate and return, mean and 95 % t interval over the training
   seeds, the steps each run made, its tokens/s and wall times, and the agent's first lines on
   evaluation seed 0.

No phase starts after ``--budget`` seconds from the start, and a running one is stopped there; the
report says what finished. Prints ``name value unit`` lines for the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "experiments"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from dialogue_prior_eval import evaluate_checkpoint  # noqa: E402  (experiments/dialogue_prior_eval.py)
from dialogue_prior_report import report  # noqa: E402  (experiments/dialogue_prior_report.py)
from guided_llm import DATA_SEED, TASKS, lmrl  # noqa: E402  (the same tasks, data seeds and command)
from guided_llm import _run as run_stopped  # noqa: E402


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    return {**env, **(extra or {})}


def _run(
    cmd: list[str], log: Path, until: float, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``cmd`` (output in ``log``); stop it at monotonic time ``until`` (rc ``deadline``)."""
    left = until - time.monotonic()
    if left <= 0:
        return {"cmd": cmd, "rc": "not started (budget)", "seconds": 0.0}
    return run_stopped(cmd, log, left, _env(env))


def _parallel(
    jobs: list[tuple[list[str], Path]],
    until: float,
    env: dict[str, str] | None = None,
    workers: int = 0,
) -> list[dict[str, Any]]:
    """Run ``jobs`` at most ``workers`` at a time (0: all at once)."""
    if not jobs:
        return []
    with ThreadPoolExecutor(max_workers=workers or len(jobs)) as pool:
        return list(pool.map(lambda j: _run(j[0], j[1], until, env), jobs))


def _gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def run(args: argparse.Namespace) -> None:
    out: Path = args.out
    t0 = time.monotonic()
    until = t0 + args.budget
    for sub in ("runs", "eval", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    phases: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "args": {
            k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "func"
        },
    }
    # 1. the prior (once, before any run reads it) beside the data
    convert = [
        sys.executable,
        "-c",
        f"from training.model.pretrained import resolve; print(resolve({args.model!r}))",
    ]
    gen = [
        (
            lmrl(
                "--db",
                str(out / f"{t}.db"),
                "generate",
                t,
                "--episodes",
                str(args.data_episodes),
                "--seed",
                str(DATA_SEED),
                "--quiet",
            ),
            out / "logs" / f"data-{t}.log",
        )
        for t in args.tasks
        if not (out / f"{t}.db").exists()
    ]
    p1 = _parallel([(convert, out / "logs" / "prior.log"), *gen], until)
    phases["prepare"] = {"seconds": round(time.monotonic() - t0, 1), "jobs": p1}
    print(f"prepare_s {phases['prepare']['seconds']} s", flush=True)
    # 2. every run side by side
    names = [(t, a, s) for t in args.tasks for a in args.algos for s in args.seeds]
    train_jobs = []
    for t, a, s in names:
        name = f"{t}-{a}-s{s}"
        db = out / "runs" / f"{name}.db"
        if not (out / "runs" / name / "checkpoint" / "model.safetensors").exists():
            shutil.copy(out / f"{t}.db", db)
            train_jobs.append(
                (
                    lmrl(
                        "--db",
                        str(db),
                        "train",
                        a,
                        "--task",
                        t,
                        "--model",
                        args.model,
                        "--seed",
                        str(s),
                        "--lr",
                        str(args.lr),
                        "--batch-size",
                        str(args.batch_size),
                        "--epochs",
                        "1000",
                        "--max-minutes",
                        str(args.train_minutes),
                        "--eval-episodes",
                        "0",
                        "--no-progress",
                        "--out",
                        str(out / "runs" / name),
                        *args.train_flag,
                    ),
                    out / "logs" / f"train-{name}.log",
                )
            )
    mp = {"ACCELERATE_MIXED_PRECISION": "bf16"} if _gpu() else {}
    t2 = time.monotonic()
    # the evaluation keeps its reserve: a run gets what is left of the budget, less its start-up
    stop_train = until - args.eval_reserve
    waves = -(-len(train_jobs) // args.train_jobs) if args.train_jobs and train_jobs else 1
    minutes = min(args.train_minutes, ((stop_train - t2) / waves - args.startup) / 60)
    if minutes <= 0:
        train_jobs = []
    for cmd, _ in train_jobs:
        cmd[cmd.index("--max-minutes") + 1] = f"{minutes:.3f}"
    phases["train"] = {
        "minutes": minutes,
        "waves": waves,
        "jobs": _parallel(train_jobs, stop_train, mp, args.train_jobs),
    }
    phases["train"]["seconds"] = round(time.monotonic() - t2, 1)
    print(f"train_phase_s {phases['train']['seconds']} s", flush=True)
    # 3. every checkpoint evaluated side by side
    eval_jobs = []
    for t, a, s in names:
        name = f"{t}-{a}-s{s}"
        if not (out / "runs" / name / "checkpoint" / "model.safetensors").exists():
            continue
        value = a in ("mc", "ilql", "qsft")
        variants = [(None, 0, "")] + (
            [(b, 0, "") for b in args.eval_beta] + [(None, k, "") for k in args.eval_top_k]
            if value
            else []
        )
        if t in args.eval_rerank:
            variants.append((None, 0, "rerank"))
        for beta, top_k, mode in variants:
            tag = (
                f"{t}-{a}"
                + (f"@beta{beta:g}" if beta is not None else "")
                + (f"@top{top_k}" if top_k else "")
                + (f"@{mode}" if mode else "")
                + f"-s{s}"
            )
            eval_jobs.append(
                (
                    [
                        sys.executable,
                        str(Path(__file__).resolve()),
                        "_eval",
                        str(out / "runs" / name),
                        t,
                        str(args.eval_episodes),
                        str(out / "eval" / f"{tag}.json"),
                        str(out / "runs" / f"{name}.db"),
                        "" if beta is None else str(beta),
                        str(top_k),
                        mode,
                    ],
                    out / "logs" / f"eval-{tag}.log",
                )
            )
    t3 = time.monotonic()
    phases["eval"] = {
        "jobs": _parallel(
            eval_jobs, until, {"DIALOGUE_PRIOR_EVAL_BATCH": str(args.eval_batch)}, args.eval_jobs
        )
    }
    phases["eval"]["seconds"] = round(time.monotonic() - t3, 1)
    print(f"eval_phase_s {phases['eval']['seconds']} s", flush=True)
    phases["total_seconds"] = round(time.monotonic() - t0, 1)
    (out / "phases.json").write_text(json.dumps(phases, indent=1, default=str))
    report(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="data, training, evaluation and the table")
    r.add_argument("out", type=Path)
    r.add_argument("--tasks", nargs="+", default=list(TASKS))
    r.add_argument("--algos", nargs="+", default=["bc", "mc"])
    r.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    r.add_argument("--model", default="smollm2-135m")
    r.add_argument("--data-episodes", type=int, default=2000)
    r.add_argument("--train-minutes", type=float, default=4.0)
    r.add_argument("--batch-size", type=int, default=8)
    r.add_argument("--lr", type=float, default=1e-4)
    r.add_argument("--eval-episodes", type=int, default=100)
    r.add_argument(
        "--budget", type=float, default=540.0, help="seconds for everything (default: 540)"
    )
    r.add_argument(
        "--eval-reserve",
        type=float,
        default=150.0,
        help="seconds of the budget kept for the evaluation (default: 150)",
    )
    r.add_argument(
        "--startup",
        type=float,
        default=75.0,
        help="seconds a training run needs before its first step, guessed (default: 75)",
    )
    r.add_argument(
        "--train-jobs",
        type=int,
        default=0,
        help="training runs at a time (default 0: all; CUDA contexts time-slice one GPU)",
    )
    r.add_argument(
        "--eval-jobs",
        type=int,
        default=6,
        help="evaluations at a time (default: 6; 27 at once on one H200 finished none in 243 s)",
    )
    r.add_argument(
        "--eval-batch", type=int, default=50, help="episodes side by side in an evaluation"
    )
    r.add_argument(
        "--eval-beta",
        nargs="*",
        type=float,
        default=[],
        help="value-based checkpoints are also evaluated at these β (default: none; the one GPU run "
        "so far had no time left for β = 1)",
    )
    r.add_argument(
        "--eval-top-k",
        nargs="*",
        type=int,
        default=[20],
        help="... and at their own β, sampling only among π_β's K likeliest tokens (default: 20)",
    )
    r.add_argument(
        "--eval-rerank",
        nargs="*",
        default=["twenty-questions", "guess-city"],
        help="every checkpoint of these tasks is also evaluated reranking the data's actions, never "
        "one already said (the tiny model's best decoding; default: the question tasks)",
    )
    r.add_argument(
        "--train-flag", action="append", default=[], help="an extra lmrl train flag (FLAG=VALUE)"
    )
    rp = sub.add_parser("report", help="the table of a finished (or stopped) run")
    rp.add_argument("out", type=Path)
    ev = sub.add_parser("_eval", help=argparse.SUPPRESS)
    for n in ("run_dir", "task", "episodes", "json_out", "db"):
        ev.add_argument(n)
    ev.add_argument("beta", nargs="?", default="")
    ev.add_argument("top_k", nargs="?", type=int, default=0)
    ev.add_argument("mode", nargs="?", default="", choices=["", "rerank"])
    a = ap.parse_args()
    if a.cmd == "run":
        run(a)
    elif a.cmd == "report":
        report(a.out)
    else:
        evaluate_checkpoint(
            a.run_dir, a.task, int(a.episodes), a.json_out, a.db, a.beta, a.top_k, a.mode
        )


if __name__ == "__main__":
    main()
