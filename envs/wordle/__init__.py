"""Wordle with the real game's feedback (``wordle``) or LMRL-Gym's per-letter rule (``wordle-lmrl``).

Rules, texts and rewards: :mod:`.task`; words and feedback: :mod:`.engine`; scripted policies:
:mod:`.policies`.
"""

from envs.core import register
from envs.wordle.policies import POLICIES
from envs.wordle.task import WordleTask

register("wordle", lambda **kw: WordleTask("real", **kw), policies=POLICIES)
register("wordle-lmrl", lambda **kw: WordleTask("lmrl", **kw), policies=POLICIES)
