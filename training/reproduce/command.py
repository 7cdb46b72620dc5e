"""The ``lmrl reproduce`` subcommand: its arguments, and running a :class:`Reproduction` per task."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from training.args import task_option
from training.errors import TrainingError
from training.reproduce.recipes import ALGORITHMS, BUDGETS, RECIPES
from training.reproduce.run import Reproduction
from training.reproduce.runners import in_process, in_subprocesses


def add_reproduce_command(
    subparsers: Any,
    parents: Iterable[argparse.ArgumentParser] = (),
    *,
    main: Callable[[list[str]], int],
) -> argparse.ArgumentParser:
    """``reproduce TASK [--budget] [--seeds] [--algorithms ...] [--out] [--all]``; ``main(argv)``
    runs its ``train``/``eval`` commands."""
    summary = (
        "reproduce LMRL-Gym's Table 2 for a task: its dataset recipe, every algorithm over "
        "several training seeds, held-out evaluation, results.md/results.json (needs the train extra)"
    )
    p = subparsers.add_parser(
        "reproduce", parents=list(parents), help=summary.replace("%", "%%"), description=summary
    )
    p.add_argument("task", nargs="?", help=f"task id ({', '.join(RECIPES)})")
    p.add_argument("--all", action="store_true", help="every task, one after another")
    p.add_argument(
        "--budget",
        choices=BUDGETS,
        default="cpu",
        help="smoke (seconds, a pipeline check), cpu (the tiny model, minutes a run) or gpu "
        "(LMRL's dataset sizes); default cpu",
    )
    p.add_argument("--seeds", type=int, default=3, help="training seeds 0..N-1 (default: 3)")
    p.add_argument(
        "--algorithms",
        nargs="+",
        default=list(ALGORITHMS),
        metavar="ALGO",
        help=f"algorithms (default: all of {' '.join(ALGORITHMS)})".replace("%", "%%"),
    )
    p.add_argument(
        "--out",
        default=None,
        help="results folder (default: results/TASK; with --all, OUT/TASK); it holds the "
        "reproduction's own store and runs/",
    )
    p.add_argument(
        "--option",
        type=task_option,
        action="append",
        default=[],
        dest="task_options",
        metavar="KEY=VALUE",
        help="replace a task option of the recipe, e.g. vocab_file=PATH "
        "(wordle-lmrl on LMRL-Gym's own word list: LMRL's normalisation then applies)",
    )
    p.add_argument(
        "--train-flag",
        action="append",
        default=[],
        dest="train_flags",
        metavar="FLAG",
        help="one more `lmrl train` flag for every run, after the recipe's (so it wins); write "
        "it with '=': --train-flag=--bisim-weight=1 --train-flag=--max-steps=400; "
        "ALGORITHMS:FLAG for some algorithms' runs only: "
        "--train-flag=ppo,online-filtered-bc:--rounds=24",
    )
    p.add_argument(
        "--model",
        default=None,
        choices=["utterance"],
        help="every run's model: utterance (whole lines scored by a model that reads the "
        "dialogue turn by turn; offline algorithms, from scratch; default: the recipe's)",
    )
    p.add_argument(
        "--fresh-data",
        action="store_true",
        help="a dataset per training seed (its own store, its own data seeds): the CI then "
        "covers the draw of the data too",
    )
    p.add_argument(
        "--episodes", type=int, default=None, help="dataset size (default: the budget's)"
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="runs side by side, each its own process on one thread (default: 1, one after "
        "another in this process); an online run starts once its seed's BC is done",
    )
    p.set_defaults(run=run_reproduce, command_main=main)
    return p


def run_reproduce(args: argparse.Namespace, store: Any = None) -> int:
    """Run the subcommand; ``store`` (the ``--db`` store) is not used: each reproduction keeps its
    data, runs and evaluations in its own store in ``OUT``."""
    try:
        if args.all == bool(args.task):
            raise TrainingError("give a TASK or --all (not both)")
        tasks = list(RECIPES) if args.all else [args.task]
        for task in tasks:
            out = (
                (Path(args.out) / task if args.all else Path(args.out))
                if args.out
                else Path("results") / task
            )
            jobs = getattr(args, "jobs", 1)
            runner = (
                in_process(args.command_main)
                if jobs == 1
                else in_subprocesses(Path(out).resolve() / "logs")
            )
            res = Reproduction(
                task,
                out,
                budget=args.budget,
                seeds=args.seeds,
                algorithms=args.algorithms,
                runner=runner,
                options=dict(args.task_options),
                train_flags=args.train_flags,
                jobs=jobs,
                model=getattr(args, "model", None),
                fresh_data=getattr(args, "fresh_data", False),
                episodes=getattr(args, "episodes", None),
            ).run()
            print(
                json.dumps(
                    {
                        "task": task,
                        "out": str(out),
                        "results": str(Path(out) / "results.md"),
                        "normalised_lmrl": {
                            a: r["normalised_lmrl"]["mean"] for a, r in res["algorithms"].items()
                        },
                        "cis_apart_from_bc": {
                            a: v["cis_apart"] for a, v in res["versus_bc"].items()
                        },
                    }
                )
            )
    except (TrainingError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
