"""Scripted maze policies: BFS-optimal (``strong``), LMRL-like poor data (``behaviour``), ``random``."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from envs.core import Text
from envs.maze.engine import ACTIONS, MazeTables
from envs.maze.task import MazeTask


class _MazePolicy:
    kind = "scripted"
    name = "maze"

    def __init__(self) -> None:
        self._task: MazeTask | None = None
        self._rng = random.Random()

    def reset(self, task: Any, seed: int | None = None) -> None:
        if not isinstance(task, MazeTask):
            raise TypeError("maze policies play maze tasks only")
        self._task = task
        # A different stream than the start draw, so the two are independent.
        self._rng = random.Random(None if seed is None else seed * 7919 + 17)

    def _cell(self) -> int:
        assert self._task is not None, "reset() the policy with its task first"
        return self._task.cell


class OptimalPolicy(_MazePolicy):
    """BFS-optimal moves (the normalised score's max)."""

    name = "optimal"

    def act(self, history: Sequence[Text]) -> str:
        a = self._task.tables.optimal[self._cell()]  # type: ignore[union-attr]
        return ACTIONS[a if a >= 0 else 0]


def bad_moves(tables: MazeTables) -> tuple[int, ...]:
    """A fixed per-cell bad move: one that leads away from the goal, else one into a wall."""
    out = []
    for i in range(len(tables.cells)):
        d = tables.dist[i]
        away = [a for a in range(4) if tables.dist[tables.nxt[i * 4 + a]] > d]
        bump = [a for a in range(4) if tables.nxt[i * 4 + a] == i]
        out.append((away or bump or [0])[0])
    return tuple(out)


class BehaviourPolicy(_MazePolicy):
    """LMRL-like poor data: optimal with ``p_optimal``, a fixed bad move with ``p_bad``, else random.

    The defaults (0.2 / 0.35) give a success rate near LMRL's maze data (~0.1; docs/algorithms.md §13.1).
    """

    name = "behaviour"

    def __init__(self, p_optimal: float = 0.2, p_bad: float = 0.35) -> None:
        super().__init__()
        self.p_optimal = p_optimal
        self.p_bad = p_bad
        self._bad: tuple[int, ...] = ()

    def reset(self, task: Any, seed: int | None = None) -> None:
        super().reset(task, seed)
        self._bad = bad_moves(task.tables)

    def act(self, history: Sequence[Text]) -> str:
        cell = self._cell()
        u = self._rng.random()
        if u < self.p_optimal:
            a = self._task.tables.optimal[cell]  # type: ignore[union-attr]
            return ACTIONS[a if a >= 0 else 0]
        if u < self.p_optimal + self.p_bad:
            return ACTIONS[self._bad[cell]]
        return ACTIONS[self._rng.randrange(4)]


class MazeRandomPolicy(_MazePolicy):
    """Uniform over the four moves."""

    name = "random"
    kind = "random"

    def act(self, history: Sequence[Text]) -> str:
        return ACTIONS[self._rng.randrange(4)]


POLICIES = {"strong": OptimalPolicy, "behaviour": BehaviourPolicy, "random": MazeRandomPolicy}
