"""Maze: LMRL-Gym's double-T maze, fully (``maze-fo``) or partially (``maze-po``) observed.

Layout (row 0 at the top; ``#`` wall, ``G`` goal at (8, 6)); the agent starts in any of the 25
other free cells, drawn from ``reset(seed)`` unless ``options={"init_position": (r, c)}``::

    #############
    #.....#.....#
    ###.#####.###
    ###.#####.###
    ###.#####.###
    ###.......###
    ######.######
    ######.######
    ######G######
    #############

Actions (exact strings, nothing stripped): ``"move up\\n"``, ``"move down\\n"``, ``"move left\\n"``,
``"move right\\n"``. Moving into a wall is valid and leaves the agent in place; any other text is an
invalid action (position unchanged).

Observations. Coordinates are written digit by digit (10 -> ``"1 0"``); walls are listed in the
order right, left, above, below.

* maze-fo: ``"The goal is at position 8, 6. Your current position is at position 1, 1. There are
  walls to your left, above you, below you.\\n"``; the model sees only the current observation.
* maze-po: ``"There are walls to your left, above you, below you.\\n"``; the model sees the last 40
  texts. Unlike LMRL-Gym (which wipes the history after an invalid action, a bug), the history is
  kept.

Rewards: 0 when the move reaches the goal (observation ``"Success\\n"``, terminated); otherwise -4
for an invalid action and -1 for a valid one. After 100 steps the next call returns
``"Failure\\n"`` with reward -1 whatever the action (truncated), so an episode has at most 101
transitions; the worst return with valid actions is -101. The optimal return from a start at BFS
distance d is -(d - 1); its mean over the 25 starts is -6.84.

Options: ``layout`` (``double_t`` default, ``umaze``, ``medium``, ``random``), ``size`` and
``layout_seed`` for ``random``, ``max_steps`` (100). Normalisation (LMRL, double-T only):
FO -101 / -83 / -6.84, PO -101 / -83 / -25.75.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Mapping
from typing import Any

from envs.core import (
    EMPTY_INFO,
    InvalidInput,
    NormConstants,
    Step,
    TaskBase,
    TaskSpec,
    Text,
    TextHistory,
)
from envs.maze.engine import (
    ACTIONS,
    LAYOUTS,
    build_tables,
    optimal_return,
    random_layout,
)
from envs.maze.exact import exact_return

ACTION_INDEX = {a: i for i, a in enumerate(ACTIONS)}
PO_WINDOW = 40

_KEYS = {
    "w": 0,
    "up": 0,
    "k": 0,
    "north": 0,
    "u": 0,
    "s": 1,
    "down": 1,
    "j": 1,
    "south": 1,
    "d": 3,
    "a": 2,
    "left": 2,
    "h": 2,
    "west": 2,
    "l": 3,
    "right": 3,
    "east": 3,
    "r": 3,
}
# "d" is right (w/a/s/d); "down" is spelled out.


class MazeTask(TaskBase):
    """The double-T maze (or another layout); see the module docstring for the rules."""

    def __init__(
        self,
        observed: str = "fo",
        layout: str = "double_t",
        size: int = 6,
        layout_seed: int = 0,
        max_steps: int = 100,
    ) -> None:
        if observed not in ("fo", "po"):
            raise ValueError("observed must be 'fo' or 'po'")
        if layout == "random":
            grid = random_layout(size, layout_seed)
        elif layout in LAYOUTS:
            grid = LAYOUTS[layout]
        else:
            raise ValueError(
                f"unknown maze layout {layout!r}; choose one of: {', '.join([*LAYOUTS, 'random'])}"
            )
        self.tables = t = build_tables(grid)
        self.observed = observed
        self.max_steps = int(max_steps)
        self._obs = t.obs_fo if observed == "fo" else t.obs_po
        self._nxt = t.nxt
        self._goal = t.goal_index
        options: dict[str, Any] = {"layout": layout, "max_steps": self.max_steps}
        if layout == "random":
            options.update(size=size, layout_seed=layout_seed)
        norm = None
        lmrl_maze = layout == "double_t" and self.max_steps == 100
        if lmrl_maze:
            norm = NormConstants(-101.0, -83.0, -6.84 if observed == "fo" else -25.75)
        self.spec = TaskSpec(
            id=f"maze-{observed}",
            version=1,
            title="Maze (fully observed)" if observed == "fo" else "Maze (partially observed)",
            summary=(
                "Walk to the goal of the double-T maze; you see your position and the walls."
                if observed == "fo"
                else "Walk to the goal of the double-T maze seeing only the walls around you."
            ),
            max_turns=self.max_steps,
            reward_range=(-4.0, 0.0),
            norm=norm,
            success_return=None,
            help=MAZE_HELP,
            options=options,
            # FO: the observation is the whole state, so one step is a whole training example.
            window="step" if observed == "fo" else "episode",
            decoding="rerank",
            max_action_bytes=max(len(a.encode()) for a in ACTIONS),
            exact_evaluation=observed == "fo" and lmrl_maze,
        )
        self._cell = t.starts[0]
        self._t = 0
        self._done = True
        self._hist: deque[Text] = deque(maxlen=PO_WINDOW)
        self._start = self._cell
        self._visited: set[int] = set()
        self._return = 0.0
        self._last: dict[str, Any] = {}

    # -- Task API --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str:
        t = self.tables
        init = (options or {}).get("init_position")
        if init is not None:
            rc = (int(init[0]), int(init[1]))
            if rc not in t.index or t.index[rc] not in t.starts:
                raise ValueError(f"init_position {rc} is not a free, non-goal cell")
            self._cell = t.index[rc]
        else:
            self._cell = random.Random(seed).choice(t.starts)
        self._start = self._cell
        self._t = 0
        self._done = False
        self._return = 0.0
        self._visited = {self._cell}
        self._last = {}
        obs = self._obs[self._cell]
        self._hist.clear()
        self._hist.append(Text(obs, False))
        return obs

    def step(self, action: str) -> Step:
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        if self._t >= self.max_steps:
            self._done = True
            self._return -= 1.0
            self._last = {"action": action, "outcome": "timeout"}
            return Step("Failure\n", -1.0, False, True, _TIMEOUT)
        self._t += 1
        a = ACTION_INDEX.get(action)
        if a is None:
            self._return -= 4.0
            self._last = {"action": action, "outcome": "invalid"}
            obs = self._obs[self._cell]
            if self.observed == "po":
                self._hist.append(Text(action, True))
                self._hist.append(Text(obs, False))
            return Step(obs, -4.0, False, False, _INVALID)
        prev = self._cell
        cell = self._cell = self._nxt[prev * 4 + a]
        self._visited.add(cell)
        if cell == self._goal:
            self._done = True
            self._last = {"action": action, "outcome": "goal"}
            return Step("Success\n", 0.0, True, False, _SUCCESS)
        self._return -= 1.0
        self._last = {"action": action, "outcome": "bump" if cell == prev else "moved"}
        obs = self._obs[cell]
        if self.observed == "po":
            self._hist.append(Text(action, True))
            self._hist.append(Text(obs, False))
        return Step(obs, -1.0, False, False, EMPTY_INFO)

    def history(self) -> TextHistory:
        if self.observed == "fo":
            return (Text(self._obs[self._cell], False),)
        return tuple(self._hist)

    def legal_actions(self) -> list[str]:
        return list(ACTIONS)

    def parse_input(self, typed: str) -> str:
        key = typed.strip().lower()
        if key.startswith("move "):
            key = key[5:].strip()
        if key in _KEYS:
            return ACTIONS[_KEYS[key]]
        raise InvalidInput("Move with the arrow keys or w/a/s/d (or type up, down, left, right).")

    def state(self) -> dict[str, Any]:
        t = self.tables
        r, c = t.cells[self._cell]
        return {
            "layout": list(t.layout),
            "goal": list(t.goal),
            "position": [r, c],
            "start": list(t.cells[self._start]),
            "observed": self.observed,
            "visited": sorted([list(t.cells[i]) for i in self._visited]),
            "walls": dict(zip(("up", "down", "left", "right"), t.walls[self._cell], strict=True)),
            "steps": self._t,
            "max_steps": self.max_steps,
            "return": self._return,
            "done": self._done,
            "optimal_return": optimal_return(t, self._start),
            "distance": t.dist[self._cell],
            "last": dict(self._last),
        }

    def exact_evaluation(self, action_distribution: Any) -> dict[str, Any]:
        """Exact expected return of an observation-wise policy over the 25 starts (FO only)."""
        if self.observed != "fo":
            raise NotImplementedError("only the fully observed maze has an exact evaluation")
        return exact_return(self.tables, ACTIONS, self.max_steps, action_distribution)

    def optimal_mean_return(self) -> float | None:
        """The mean optimal return over the start cells (-6.84 on LMRL's maze)."""
        t = self.tables
        return math.fsum(optimal_return(t, c) for c in t.starts) / len(t.starts)

    # -- helpers for policies ----------------------------------------------------------------
    @property
    def cell(self) -> int:
        return self._cell


_INVALID: Mapping[str, Any] = {"invalid": True}
_SUCCESS: Mapping[str, Any] = {"success": True}
_TIMEOUT: Mapping[str, Any] = {"success": False, "timeout": True}

MAZE_HELP = """\
## Maze

Walk to the goal **G**. Every move costs **-1**; the move that reaches the goal costs nothing.
Bumping into a wall is a legal move (you stay put, -1). After 100 moves the episode fails (-1).

* **Arrow keys** or **w a s d** move.
* In *maze-po* you only see the walls around you; the map shows only cells you have visited.
* The panel on the right shows the exact text a language model would see.

The best possible return from the start is shown at the end.
"""
