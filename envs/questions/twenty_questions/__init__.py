"""Twenty Questions: guess the object with yes/no questions, against a knowledge-base oracle.

Rules, texts and rewards: :mod:`.task`; the oracle and its objects: :mod:`.partner`; the scripted
askers: :mod:`.policies`.
"""

from envs.core import register
from envs.questions.twenty_questions.policies import POLICIES
from envs.questions.twenty_questions.task import TASK_ID, TwentyQuestionsTask

register(TASK_ID, lambda **kw: TwentyQuestionsTask(**kw), policies=POLICIES)
