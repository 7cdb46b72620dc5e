"""Maze: LMRL-Gym's double-T maze, fully (``maze-fo``) or partially (``maze-po``) observed.

Rules, texts and rewards: :mod:`envs.maze.task`; scripted policies: :mod:`envs.maze.policies`.
"""

from envs.core import register
from envs.maze.policies import POLICIES
from envs.maze.task import MazeTask

register("maze-fo", lambda **kw: MazeTask("fo", **kw), policies=POLICIES)
register("maze-po", lambda **kw: MazeTask("po", **kw), policies=POLICIES)
