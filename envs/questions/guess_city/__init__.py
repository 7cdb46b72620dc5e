"""Guess My City: guess the city with yes/no and open questions, against a facts oracle.

Rules, texts and rewards: :mod:`.task`; the oracle: :mod:`.partner`; the cities: :mod:`.data`;
the scripted askers: :mod:`.policies`.
"""

from envs.core import register
from envs.questions.guess_city.policies import POLICIES
from envs.questions.guess_city.task import TASK_ID, GuessCityTask

register(TASK_ID, lambda **kw: GuessCityTask(**kw), policies=POLICIES)
