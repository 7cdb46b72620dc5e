"""Text-Nav: LMRL-Gym's house; put the stale food in the fridge and close it.

Rules, texts and rewards: :mod:`.task`; the house: :mod:`.engine`; scripted policies: :mod:`.policies`.
"""

from envs.core import register
from envs.textnav.policies import POLICIES
from envs.textnav.task import TextNavTask

register("textnav-fo", lambda **kw: TextNavTask("fo", **kw), policies=POLICIES)
register("textnav-po", lambda **kw: TextNavTask("po", **kw), policies=POLICIES)
