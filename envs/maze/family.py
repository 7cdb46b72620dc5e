"""The mazes: the task ids, the module that registers them and the options they take, declared to
the task core (read by :mod:`envs.discovery` from this file alone, without importing the package)."""

from __future__ import annotations

from envs.core.options import OptionSpec, int_option

_MAZE = (
    OptionSpec(
        "layout",
        "choice",
        "double_t",
        ("double_t", "umaze", "medium", "random"),
        "the maze: LMRL's double-T, two smaller ones, or a random one",
    ),
    int_option("max_steps", 100, "moves before the episode is cut"),
    int_option("size", 6, "the random maze's size (layout=random)", minimum=3),
    int_option("layout_seed", 0, "the random maze's seed (layout=random)", minimum=0),
)

DECLARED = ((10, "envs.maze", ("maze-fo", "maze-po"), _MAZE),)
"""(place in the task list, registering module, task ids, options)."""
