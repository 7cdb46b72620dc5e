"""Bulk generation: play episodes of a task with an agent and record them in the store
(``lmrl generate``). Episodes are played with :func:`envs.run_episode` from seeds ``seed ..`` (an
agent that can play many at once, a checkpoint's ``play_many``, plays :data:`SIDE_BY_SIDE` of
them side by side) and written ``batch`` at a time, each batch in one transaction. A run that
fails part-way (a model endpoint that dies, Ctrl-C) still writes the episodes that finished (a
checkpoint's: those of the chunks of :data:`SIDE_BY_SIDE` that finished), and says how many in a
note on the error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import envs
from data.recorder import BatchRecorder
from data.records import agent_identity, episode_record, partner_identity
from envs.core import Agent, episode_success
from envs.players.agents import episode_source, learnt_task_options

if TYPE_CHECKING:
    from data.store import Store


@dataclass
class GenerateResult:
    """What :func:`generate` wrote."""

    written: int
    successes: int
    total_return: float
    seconds: float
    options: dict[str, Any]
    """The task options the episodes were played and logged with."""

    @property
    def mean_return(self) -> float:
        return self.total_return / max(self.written, 1)

    @property
    def success_rate(self) -> float:
        return self.successes / max(self.written, 1)


SIDE_BY_SIDE = 32
"""Episodes a checkpoint policy plays at once (as ``lmrl eval``)."""


def generate(
    store: Store,
    task_id: str,
    agent: Agent,
    episodes: int,
    *,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    partner: Agent | None = None,
    batch: int = 200,
    on_episode: Callable[[int], None] | None = None,
) -> GenerateResult:
    """Play ``episodes`` episodes of ``agent`` (episode ``i`` from seed ``seed + i``) and record
    them, ``batch`` per transaction.

    ``options`` are the task's; without any, a checkpoint agent plays with the options it was
    trained with. ``partner`` replaces the task's built-in partner (a model). ``on_episode(n)`` is
    called after each episode with the number played so far (a progress bar).
    """
    opts = dict(options or {})
    spec = envs.spec(task_id)
    partner_who = partner_identity(partner, spec)
    if not opts:
        opts = learnt_task_options(agent, task_id) or {}
    make_options = dict(opts)
    if partner is not None:
        make_options["partner"] = partner
    task = envs.make(task_id, **make_options)
    who = agent_identity(agent)
    source = episode_source(agent.kind, partner.kind if partner is not None else None)
    started = time.perf_counter()
    successes, total_return = 0, 0.0
    recorder = BatchRecorder(store, batch)
    # A checkpoint plays SIDE_BY_SIDE episodes at once (one batched forward per turn); a model
    # partner is one agent, so with one the episodes go one at a time.
    many = getattr(agent, "play_many", None) if partner is None else None
    n = 0
    try:
        while n < episodes:
            if many:
                eps = many(
                    task_id, list(range(seed + n, seed + min(n + SIDE_BY_SIDE, episodes))), opts
                )
            else:
                eps = [envs.run_episode(task, agent, seed + n)]
            for ep in eps:
                last = ep.transitions[-1].info if ep.transitions else None
                success = episode_success(task.spec, last, ep.total_return)
                successes += bool(success)
                total_return += ep.total_return
                recorder.add(
                    episode_record(
                        task.spec.id,
                        task.spec.version,
                        seed + n,
                        ep.first_observation,
                        ep.transitions,
                        who,
                        partner=partner_who,
                        source=source,
                        options=opts,
                        success=success,
                    )
                )
                n += 1
                if on_episode is not None:
                    on_episode(n)
        recorder.flush()
    except BaseException as e:
        _keep_finished(recorder, e)
        raise
    finally:
        task.close()
    return GenerateResult(
        recorder.written, successes, total_return, time.perf_counter() - started, opts
    )


def _keep_finished(recorder: BatchRecorder, error: BaseException) -> None:
    """Write the episodes that finished before ``error``; add a note on it saying how many."""
    try:
        recorder.flush()
    except Exception:  # the store itself is failing: the first error says more
        return
    n = recorder.written
    what = (
        "no episode had finished"
        if n == 0
        else (f"kept the {n} episode{'s' if n != 1 else ''} that finished in {recorder.store.path}")
    )
    error.add_note(what)
