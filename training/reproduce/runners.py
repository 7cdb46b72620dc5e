"""How ``lmrl reproduce`` runs its ``lmrl train``/``lmrl eval`` commands: in this process
(:func:`in_process`), each as its own process (:func:`in_subprocesses`, ``--jobs``), and several
side by side with the runs that start from BC after it (:func:`side_by_side`)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from envs.players.process_agent import child_env
from training.reproduce.recipes import ONLINE

Runner = Callable[[list[str]], tuple[int, str]]
"""Runs ``lmrl`` argv (``--db`` first) and returns (exit status, stdout)."""


def in_process(main: Callable[[list[str]], int]) -> Runner:
    """A runner calling ``main(argv)`` (``training.algorithms.run_command``: the ``lmrl train`` and
    ``lmrl eval`` subcommands) in this process, its stdout captured."""

    def run(argv: list[str]) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(argv)
        return rc, out.getvalue()

    return run


def log_name(command: str, folder: str | os.PathLike) -> str:
    """The log file of ``command`` (train, eval) on the run ``folder`` under ``--jobs``."""
    return f"{command}-{Path(folder).name}.log"


def side_by_side(
    order: Sequence[tuple[str, int]],
    jobs: int,
    one: Callable[[str, int], Any],
    after_bc: Collection[str] = ONLINE,
) -> list[Any]:
    """``one(algo, seed)`` of every key of ``order``, ``jobs`` at a time; the call of an algorithm
    in ``after_bc`` (the online ones, and those a recipe starts from BC) starts once its seed's BC
    call has returned (an exception there is raised in it too; a key without a BC call in ``order``
    starts at once). A call that waits holds no worker: it is queued when its BC returns, so the
    other calls keep every worker busy meanwhile (three seeds on two workers used to leave one
    idle while the third seed's BC trained). The results, in ``order``."""
    from concurrent.futures import Future, ThreadPoolExecutor

    results: dict[tuple[str, int], Future] = {key: Future() for key in order}
    waiting: dict[tuple[str, int], list[tuple[str, int]]] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:

        def start(key: tuple[str, int]) -> None:
            pool.submit(one, *key).add_done_callback(lambda done: finish(key, done))

        def finish(key: tuple[str, int], done: Future) -> None:
            error = done.exception()
            if error is None:
                results[key].set_result(done.result())
            else:
                results[key].set_exception(error)
            for later in waiting.pop(key, []):
                if error is None:
                    start(later)
                else:
                    results[later].set_exception(error)

        # every key is registered before anything starts, so a BC cannot finish unseen
        ready = []
        for key in order:
            algo, seed = key
            if algo in after_bc and ("bc", seed) in results:
                waiting.setdefault(("bc", seed), []).append(key)
            else:
                ready.append(key)
        for key in ready:
            start(key)
        return [results[key].result() for key in order]


def shown_command(argv: Sequence[str], out: Path) -> str:
    """The argv as an ``lmrl`` command run from OUT (paths under OUT written relative to it)."""
    words = [os.path.relpath(a, out) if os.path.isabs(a) and _under(a, out) else a for a in argv]
    return "lmrl " + shlex.join(words)


def _under(path: str, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def in_subprocesses(log_dir: Path, threads: int = 1) -> Runner:
    """A runner starting each command as its own ``python -m lmrl_tui`` process (so that several
    can run side by side: ``lmrl reproduce --jobs``), each on ``threads`` threads unless
    ``OMP_NUM_THREADS`` is set; its stderr goes to ``log_dir/COMMAND-RUN.log``."""

    def run(argv: list[str]) -> tuple[int, str]:
        import subprocess

        cmd = argv[argv.index("--db") + 2] if "--db" in argv else argv[0]
        folder = argv[argv.index("--out") + 1] if "--out" in argv else argv[argv.index(cmd) + 1]
        log_dir.mkdir(parents=True, exist_ok=True)
        env = {"OMP_NUM_THREADS": str(threads), **child_env()}  # never the folder's own packages
        with (log_dir / log_name(cmd, folder)).open("w") as err:
            done = subprocess.run(
                [sys.executable, "-m", "lmrl_tui", *argv],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=env,
                check=False,
            )
        return done.returncode, done.stdout

    return run


def last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                return value
    return {}
