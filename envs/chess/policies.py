"""Scripted players for the chess tasks: Stockfish as the agent (White), sharing the game's engine.

* ``behaviour``: LMRL-Gym's data recipe, "Stockfish of various strengths" against the opponent:
  one skill level per episode from :data:`BEHAVIOUR_LEVELS` (searches of depth 1 to 6, so
  generation stays cheap). Against the default opponent (Elo 1350) it won 59% of 80 full games
  with a mean return of 0.19 (LMRL's chess data: 0.60 and 0.21); in endgames it wins 60% from
  fresh random positions (LMRL's endgames data: 0.59) and about 36% from the harder test set.
* ``strong``: full-strength Stockfish at depth :data:`STRONG_DEPTH` (the normalised score's max).
* ``random``: a uniformly random legal move (``envs.core.RandomAgent`` over ``legal_actions()``).

The agents ask the task for the engine's move (:meth:`envs.chess.task.ChessTask.engine_move`), so a
game never has more than one engine process, and they draw from their own seeded generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from envs.chess.stockfish import Strength
from envs.chess.text import action_text
from envs.core import RandomAgent, Text

if TYPE_CHECKING:
    from envs.chess.task import ChessTask


class StockfishAgent:
    """Stockfish plays White at one of ``levels`` (skill levels, drawn once per episode)."""

    kind = "scripted"
    name = "stockfish"

    def __init__(self, levels: Sequence[float] = (20.0,), depth: int | None = None) -> None:
        self.levels = tuple(levels)
        self.depth = depth
        self._task: ChessTask | None = None
        self._rng = random.Random()
        self.strength = Strength()

    def reset(self, task: Any, seed: int | None = None) -> None:
        from envs.chess.task import ChessTask  # envs.chess.task imports this module to register

        if not isinstance(task, ChessTask):
            raise TypeError("Stockfish policies play the chess tasks only")
        self._task = task
        self._rng = random.Random(None if seed is None else seed * 7919 + 17)
        level = self._rng.choice(self.levels)
        self.strength = Strength(level=float(level), depth=self.depth)

    def act(self, history: Sequence[Text]) -> str:
        assert self._task is not None, "reset() the policy with its task first"
        board = self._task.board
        move = self._task.engine_move(self.strength, self._rng)
        return action_text(board.san(move))


BEHAVIOUR_LEVELS = (0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 5.0)
"""LMRL's data: Stockfish "of various strengths" against the Elo-1200 opponent."""
STRONG_DEPTH = 10


class BehaviourPolicy(StockfishAgent):
    """A mixture of weakened Stockfish players (skill levels ``BEHAVIOUR_LEVELS``, cheap searches)."""

    name = "behaviour"

    def __init__(
        self, levels: Sequence[float] = BEHAVIOUR_LEVELS, depth: int | None = None
    ) -> None:
        super().__init__(levels, depth)


class StrongPolicy(StockfishAgent):
    """Full-strength Stockfish at a fixed depth (the normalised score's max)."""

    name = "strong"

    def __init__(self, depth: int = STRONG_DEPTH) -> None:
        super().__init__((20.0,), depth)


POLICIES = {"behaviour": BehaviourPolicy, "strong": StrongPolicy, "random": RandomAgent}
