"""Playing many episodes side by side, shared by the online rollouts and evaluation.

:func:`play` runs one episode per seed on a pool of task instances. At every turn it asks the
policy for the actions of all unfinished episodes at once (``act(episode indices, tasks)``, one
batched forward), steps each task, and, with ``refill``, starts the next seed on a task as soon as
its episode ends (evaluation: the batch stays full); without it, seeds are played in chunks of
the pool's size, each chunk to its end (the online rollouts' order, which their global-RNG
sampling depends on). :class:`TaskPool` holds the task instances for a whole run, so tasks that
hold partner processes (Stockfish) start once. Tasks whose partner is a separate process (Stockfish) are stepped in
threads, so their searches overlap.
No torch here: the policy's batched forward pads its rows with :mod:`training.decoding.padding`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import envs
from envs.core import Transition, clean_text, episode_success

Act = Callable[[list[int], list], "tuple[list[str], list[bool]]"]
"""``act(episode indices, their tasks) -> (actions, cut flags)``, one action per episode."""

THREADED_PARTNERS = frozenset({"stockfish"})
"""Partners that run in their own process: their tasks are stepped in threads."""


@dataclass
class RolloutEpisode:
    """One episode played by :func:`play` (finished, or cut at its turn limit)."""

    task_id: str
    seed: int
    first_observation: str
    transitions: list[Transition] = field(default_factory=list)
    success: bool = False
    cut: list[bool] = field(default_factory=list)
    """Per transition: the generation hit its token limit (its final newline was appended)."""

    @property
    def total_return(self) -> float:
        return float(sum(t.reward for t in self.transitions))

    def pairs(self) -> list[tuple[str, str, float]]:
        return [(t.action, t.observation, float(t.reward)) for t in self.transitions]

    @property
    def ended(self) -> bool:
        return bool(self.transitions) and (
            self.transitions[-1].terminated or self.transitions[-1].truncated
        )


class TaskPool:
    """``size`` reusable instances of a task; ``close()`` releases their processes."""

    def __init__(self, task_id: str, size: int, options: dict[str, Any] | None = None) -> None:
        self.task_id = task_id
        self.options = dict(options or {})
        self.tasks = [envs.make(task_id, **self.options) for _ in range(max(1, size))]

    def __len__(self) -> int:
        return len(self.tasks)

    def close(self) -> None:
        for t in self.tasks:
            t.close()

    def __enter__(self) -> TaskPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def episode_success_of(task, ep) -> bool:
    """The task's success flag of a finished episode (an uncut termination where it has none)."""
    last = ep.transitions[-1] if ep.transitions else None
    s = episode_success(task.spec, last.info if last else None, ep.total_return)
    if s is not None:
        return s
    return bool(last and last.terminated and not last.truncated)


def play(
    tasks: Sequence,
    task_id: str,
    seeds: Sequence[int],
    act: Act,
    *,
    refill: bool = True,
    max_steps: int | None = None,
    on_done: Callable[[int, RolloutEpisode], None] | None = None,
) -> list[RolloutEpisode]:
    """One episode per seed on ``tasks`` (at most ``len(tasks)`` at a time), in seed order.

    ``max_steps`` caps an episode's turns (default ``10 * max_turns + 10``, as
    :func:`envs.run_episode`); ``on_done(index, episode)`` is called as each ends. An episode's
    ``success`` is the task's flag when it ended, False when it was cut.
    """
    seeds = [int(s) for s in seeds]
    out: list = [None] * len(seeds)
    threaded = bool(tasks) and tasks[0].spec.partner in THREADED_PARTNERS and len(tasks) > 1
    pool = ThreadPoolExecutor(len(tasks)) if threaded else None
    try:
        nxt = 0
        slots: dict[int, int] = {}  # task slot -> episode index
        turns: dict[int, int] = {}

        def start(slot: int) -> None:
            nonlocal nxt
            i, nxt = nxt, nxt + 1
            first = tasks[slot].reset(seeds[i])
            out[i] = RolloutEpisode(task_id, seeds[i], first)
            slots[slot], turns[i] = i, 0

        def fill() -> None:
            for slot in range(len(tasks)):
                if nxt < len(seeds) and slot not in slots:
                    start(slot)

        fill()
        while slots:
            live = sorted(slots, key=slots.__getitem__)
            idx = [slots[s] for s in live]
            actions, cuts = act(idx, [tasks[s] for s in live])
            actions = [clean_text(a) for a in actions]
            if pool is not None:
                steps = list(pool.map(lambda s, a: tasks[s].step(a), live, actions))
            else:
                steps = [tasks[s].step(a) for s, a in zip(live, actions, strict=True)]
            for s, i, a, cut, st in zip(live, idx, actions, cuts, steps, strict=True):
                ep = out[i]
                ep.transitions.append(Transition(a, *st))
                ep.cut.append(bool(cut))
                turns[i] += 1
                limit = max_steps if max_steps is not None else 10 * tasks[s].spec.max_turns + 10
                if st.terminated or st.truncated or turns[i] >= limit:
                    ep.success = bool(ep.ended) and episode_success_of(tasks[s], ep)
                    del slots[s]
                    if on_done is not None:
                        on_done(i, ep)
            if refill or not slots:
                fill()
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return out
