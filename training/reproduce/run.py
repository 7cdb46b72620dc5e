"""``lmrl reproduce TASK``: LMRL-Gym's Table 2 for one task (or ``--all``), end to end.

1. The dataset: the task's behaviour policy from the data seeds (``lmrl generate``), into the
   reproduction's own store in ``OUT`` (:func:`data.store.store_in`).
2. Every algorithm of :data:`training.reproduce.recipes.ALGORITHMS` for each training seed
   (``lmrl train``; PPO and online %BC start from the BC run of the same seed, and so do the
   offline algorithms a task's recipe lists in ``from_bc``).
3. Each checkpoint evaluated on the evaluation seeds (``lmrl eval``: the store's ``evaluations``).
4. ``OUT/results.json`` and ``OUT/results.md``: per algorithm the mean and 95 % CI across training
   seeds of the return, LMRL-normalised score and success rate, beside LMRL's Table 2.

Each command runs in this process through the same parsers as the ``lmrl`` command (the
``train``/``eval`` subcommands come from :mod:`training.algorithms`), and is recorded as the exact
``lmrl`` command line, with paths relative to OUT. Resumable: a finished (algorithm, seed) has
``OUT/runs/ALGO-sSEED/reproduce.json`` and is skipped; a finished dataset has ``OUT/dataset.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from training.errors import TrainingError
from training.reproduce.datasets import check_fresh, make_dataset, pooled, store_for
from training.reproduce.recipes import (
    ALGORITHMS,
    BUDGETS,
    MODEL_FLAGS,
    MODEL_TASK_FLAGS,
    ONLINE,
    canonical,
    recipe,
    starts_from_bc,
    train_flags,
)
from training.reproduce.runners import Runner, last_json, log_name, shown_command, side_by_side


class Reproduction:
    """One task's reproduction in ``out`` (see the module docstring)."""

    def __init__(
        self,
        task: str,
        out: str | os.PathLike,
        *,
        budget: str = "cpu",
        seeds: int = 3,
        algorithms: Iterable[str] = ALGORITHMS,
        runner: Runner,
        log: Callable[[str], None] | None = None,
        options: dict[str, Any] | None = None,
        train_flags: Iterable[str] = (),
        jobs: int = 1,
        model: str | None = None,
        fresh_data: bool = False,
        episodes: int | None = None,
    ) -> None:
        if budget not in BUDGETS:
            raise TrainingError(f"--budget must be one of {', '.join(BUDGETS)}")
        if seeds < 1:
            raise TrainingError("--seeds must be at least 1")
        if jobs < 1:
            raise TrainingError("--jobs must be at least 1")
        self.jobs = jobs
        self.options = {str(k): str(v) for k, v in (options or {}).items()}
        self.recipe = recipe(task, self.options)
        self.task, self.budget, self.seeds = task, budget, seeds
        self.algorithms = [canonical(a) for a in algorithms]
        self.model, self.fresh_data = model, fresh_data
        """``--model``: every run's model (utterance: whole lines, from scratch); ``--fresh-data``:
        a dataset per training seed (:mod:`training.reproduce.datasets`)."""
        if episodes is not None and episodes < 1:
            raise TrainingError("--episodes must be at least 1")
        self.episodes = episodes or self.recipe.episodes[budget]
        self.episodes_given = episodes is not None
        if fresh_data:
            check_fresh(seeds, self.episodes)
        if model == "utterance" and set(self.algorithms) & set(ONLINE):
            raise TrainingError(
                "--model utterance trains the offline algorithms: "
                + ", ".join(a for a in ALGORITHMS if a not in ONLINE)
            )
        self.from_bc = {a for a in self.algorithms if starts_from_bc(task, a) and model is None}
        if self.from_bc and "bc" not in self.algorithms:
            self.algorithms.insert(
                0, "bc"
            )  # the online runs (and some recipes' offline ones) start from BC
        self.algorithms.sort(key=lambda a: a != "bc")  # BC first: the others may wait for it
        self.out = Path(out).resolve()
        self.store_path = store_for(self.out, None)
        self.extra_flags = [str(f) for f in train_flags]
        """``lmrl train`` flags after the recipe's (so they win), e.g. --bisim-weight=1 for every run,
        ppo,online-filtered-bc:--rounds=24 for those algorithms' runs only."""
        self._flags = [_scoped_flag(f) for f in self.extra_flags]
        self.runner = runner
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))

    # -- steps ----------------------------------------------------------------------------------
    def dataset(self, seed: int | None = None) -> dict[str, Any]:
        """Generate the dataset once (``OUT/dataset.json``), or training seed ``seed``'s own."""
        return make_dataset(self.out, self.task, self.recipe, self.episodes, seed, self.log)

    def _store_of(self, seed: int) -> str:
        return str(store_for(self.out, seed if self.fresh_data else None))

    def run_one(self, algo: str, seed: int) -> dict[str, Any]:
        """Train and evaluate (algo, seed) unless ``reproduce.json`` says it is done."""
        folder = self.out / "runs" / f"{_slug(algo)}-s{seed}"
        marker = folder / "reproduce.json"
        if marker.exists():
            return json.loads(marker.read_text())
        model = (
            [
                "--model",
                self.model,
                *MODEL_FLAGS.get(self.model, {}).get(self.budget, ()),
                *MODEL_TASK_FLAGS.get((self.model, self.task), ()),
            ]
            if self.model
            else []
        )
        argv = [
            "--db",
            self._store_of(seed),
            "train",
            algo,
            "--task",
            self.task,
            "--out",
            str(folder),
            "--seed",
            str(seed),
            "--no-progress",
            *train_flags(self.task, algo, self.budget, self.options),
            *model,
            *(flag for algos, flag in self._flags if algos is None or algo in algos),
        ]
        if algo in ONLINE:
            argv += ["--init", str(self.out / "runs" / f"bc-s{seed}")]
        elif algo in self.from_bc:
            argv += ["--model", str(self.out / "runs" / f"bc-s{seed}" / "checkpoint")]
        if (folder / "checkpoint").exists() and self.model != "utterance":
            argv.append("--resume")  # killed part-way: continue from its last checkpoint
        self.log(f"[{self.task}] train {algo} seed {seed}")
        t0 = time.time()
        rc, stdout = self.runner(argv)
        train_wall = time.time() - t0
        if rc != 0:
            raise TrainingError(
                f"{shown_command(argv, self.out)} failed (exit {rc}){self._see('train', folder)}"
            )
        trained = last_json(stdout)
        episodes = self.recipe.eval_episodes[self.budget]
        # an online run given --keep-best=true is judged by the checkpoint it kept
        best = folder / "checkpoint-best"
        target = best if algo in ONLINE and best.exists() else folder
        ev = [
            "--db",
            self._store_of(seed),
            "eval",
            str(target),
            "--episodes",
            str(episodes),
            "--seed",
            "0",
        ]
        for k, v in sorted(self.recipe.options.items()):
            ev += ["--option", f"{k}={v}"]
        t0 = time.time()
        rc, stdout = self.runner(ev)
        eval_wall = time.time() - t0
        if rc != 0:
            raise TrainingError(
                f"{shown_command(ev, self.out)} failed (exit {rc}){self._see('eval', folder)}"
            )
        result = last_json(stdout)
        record = {
            "algorithm": algo,
            "seed": seed,
            "budget": self.budget,
            "train_command": shown_command([a for a in argv if a != "--resume"], self.out),
            "eval_command": shown_command(ev, self.out),
            "train_wall_s": round(train_wall, 1),
            "eval_wall_s": round(eval_wall, 1),
            "run_id": trained.get("run_id"),
            "checkpoint_id": trained.get("checkpoint_id"),
            "steps": trained.get("step", trained.get("steps")),
            "bisim_loss": trained.get("bisim_loss"),
            "kept_best": trained.get("best"),
            "evaluation": {k: v for k, v in result.items() if k != "checkpoint"},
        }
        folder.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(record, indent=1, default=str) + "\n")
        self.log(
            f"[{self.task}] {algo} seed {seed}: return {result.get('mean_return')}, "
            f"normalised {result.get('normalised_lmrl')} ({train_wall + eval_wall:.0f} s)"
        )
        return record

    def _see(self, command: str, folder: Path) -> str:
        """Where a failed command's messages are (with --jobs: a log file; else they were printed)."""
        return (
            f"; its messages: {self.out / 'logs' / log_name(command, folder)}"
            if self.jobs > 1
            else ""
        )

    def run(self) -> dict[str, Any]:
        # Not at import: `lmrl` builds this command's parser at every start, and the report's
        # importlib.metadata (package versions) is a good part of the start's cost.
        from training.reproduce.report import git_commit, write_report

        self.out.mkdir(parents=True, exist_ok=True)
        t0, commit = time.time(), git_commit()
        data = (
            pooled([self.dataset(s) for s in range(self.seeds)])
            if self.fresh_data
            else self.dataset()
        )
        if self.episodes_given:
            data = {**data, "episodes_given": True}
        # algorithm by algorithm (all seeds of one before the next): a run cut short leaves whole rows
        order = [(algo, seed) for algo in self.algorithms for seed in range(self.seeds)]
        records = (
            [self.run_one(*key) for key in order]
            if self.jobs == 1
            else side_by_side(order, self.jobs, self.run_one, self.from_bc)
        )
        return write_report(
            self.out,
            self.recipe,
            self.budget,
            data,
            records,
            time.time() - t0,
            commit,
            train_flags=self.extra_flags,
            model=self.model,
        )


def _scoped_flag(text: str) -> tuple[frozenset[str] | None, str]:
    """A ``--train-flag``: ``"--max-steps=400"`` (every run: ``(None, flag)``) or
    ``"ppo,online-filtered-bc:--rounds=24"`` (those algorithms' runs only)."""
    if text.startswith("-"):
        return None, text
    algos, sep, flag = text.partition(":")
    if not sep or not flag.startswith("-"):
        raise TrainingError(
            f"--train-flag {text!r}: write an lmrl train flag (--max-steps=400), or "
            "ALGORITHMS:FLAG for some algorithms only (ppo,online-filtered-bc:--rounds=24)"
        )
    try:
        return frozenset(canonical(a.strip()) for a in algos.split(",")), flag
    except ValueError as e:
        raise TrainingError(f"--train-flag {text!r}: {e}") from None


def _slug(algo: str) -> str:
    return algo.replace("%", "p")
