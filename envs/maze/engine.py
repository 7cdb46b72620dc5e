"""The maze world: layouts, precomputed per-cell tables (neighbours, BFS distances, observation
texts) and the optimal return. Pure data; the rules of an episode are in :mod:`envs.maze.task`."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

ACTIONS = ("move up\n", "move down\n", "move left\n", "move right\n")
DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))

LAYOUTS: dict[str, tuple[str, ...]] = {
    "double_t": (
        "#############",
        "#.....#.....#",
        "###.#####.###",
        "###.#####.###",
        "###.#####.###",
        "###.......###",
        "######.######",
        "######.######",
        "######G######",
        "#############",
    ),
    "umaze": (
        "#####",
        "#G..#",
        "###.#",
        "#...#",
        "#####",
    ),
    "medium": (
        "########",
        "#..##..#",
        "#..#...#",
        "##...###",
        "#..#...#",
        "#.#..#.#",
        "#...#.G#",
        "########",
    ),
}


def _digits(n: int) -> str:
    return " ".join(str(n))


def random_layout(size: int, seed: int) -> tuple[str, ...]:
    """A perfect maze (depth-first carving) of ``size`` x ``size`` cells, goal bottom-right."""
    size = max(2, min(int(size), 40))
    rng = random.Random(seed)
    h = w = 2 * size + 1
    grid = [["#"] * w for _ in range(h)]
    stack = [(0, 0)]
    seen = {(0, 0)}
    grid[1][1] = "."
    while stack:
        r, c = stack[-1]
        nbrs = [
            (r + dr, c + dc)
            for dr, dc in DELTAS
            if 0 <= r + dr < size and 0 <= c + dc < size and (r + dr, c + dc) not in seen
        ]
        if not nbrs:
            stack.pop()
            continue
        nr, nc = rng.choice(nbrs)
        grid[2 * r + 1 + (nr - r)][2 * c + 1 + (nc - c)] = "."
        grid[2 * nr + 1][2 * nc + 1] = "."
        seen.add((nr, nc))
        stack.append((nr, nc))
    grid[h - 2][w - 2] = "G"
    return tuple("".join(row) for row in grid)


@dataclass(frozen=True)
class MazeTables:
    """Everything that depends only on the cell, precomputed once per layout."""

    layout: tuple[str, ...]
    goal: tuple[int, int]
    cells: tuple[tuple[int, int], ...]  # index -> (row, col)
    index: Mapping[tuple[int, int], int]
    nxt: tuple[int, ...]  # cell * 4 + action -> cell
    obs_fo: tuple[str, ...]
    obs_po: tuple[str, ...]
    walls: tuple[tuple[bool, bool, bool, bool], ...]  # up, down, left, right
    dist: tuple[int, ...]  # BFS distance to the goal (-1 if unreachable)
    optimal: tuple[int, ...]  # an optimal action per cell (-1 at the goal)
    starts: tuple[int, ...]
    goal_index: int


def _wall_sentence(walls: tuple[bool, bool, bool, bool]) -> str:
    up, down, left, right = walls
    parts = []
    if right:
        parts.append("to your right")
    if left:
        parts.append("to your left")
    if up:
        parts.append("above you")
    if down:
        parts.append("below you")
    if not parts:
        return "There are no walls near you."
    if len(parts) == 1:
        return f"There is a wall {parts[0]}."
    return "There are walls " + ", ".join(parts) + "."


@lru_cache(maxsize=32)
def build_tables(layout: tuple[str, ...]) -> MazeTables:
    goal = next((r, c) for r, row in enumerate(layout) for c, ch in enumerate(row) if ch == "G")
    cells = tuple((r, c) for r, row in enumerate(layout) for c, ch in enumerate(row) if ch != "#")
    index = {rc: i for i, rc in enumerate(cells)}

    def free(r: int, c: int) -> bool:
        return 0 <= r < len(layout) and 0 <= c < len(layout[r]) and layout[r][c] != "#"

    nxt: list[int] = []
    walls = []
    for r, c in cells:
        up, down, left, right = (not free(r + dr, c + dc) for dr, dc in DELTAS)
        w = (up, down, left, right)
        walls.append(w)
        for (dr, dc), blocked in zip(DELTAS, w, strict=True):
            nxt.append(index[(r, c)] if blocked else index[(r + dr, c + dc)])
    goal_text = f"The goal is at position {_digits(goal[0])}, {_digits(goal[1])}. "
    obs_po = tuple(_wall_sentence(w) + "\n" for w in walls)
    obs_fo = tuple(
        goal_text + f"Your current position is at position {_digits(r)}, {_digits(c)}. " + po
        for (r, c), po in zip(cells, obs_po, strict=True)
    )
    # BFS from the goal over reversed moves (moves are symmetric here).
    dist = [-1] * len(cells)
    g = index[goal]
    dist[g] = 0
    queue = deque([g])
    while queue:
        i = queue.popleft()
        for a in range(4):
            j = nxt[i * 4 + a]
            if dist[j] < 0:
                dist[j] = dist[i] + 1
                queue.append(j)
    optimal = []
    for i in range(len(cells)):
        best = -1
        if i != g and dist[i] > 0:
            best = min(range(4), key=lambda a: _far(dist[nxt[i * 4 + a]]))
        optimal.append(best)
    starts = tuple(i for i in range(len(cells)) if i != g and dist[i] > 0)
    return MazeTables(
        layout,
        goal,
        cells,
        index,
        tuple(nxt),
        obs_fo,
        obs_po,
        tuple(walls),
        tuple(dist),
        tuple(optimal),
        starts,
        g,
    )


def _far(d: int) -> int:
    return d if d >= 0 else 1 << 30


def optimal_return(tables: MazeTables, cell: int) -> float:
    """The best return from ``cell``: -(d - 1) for BFS distance d (the last move is free)."""
    d = tables.dist[cell]
    return float(-(d - 1)) if d > 0 else 0.0
