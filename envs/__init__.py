"""lmrl-tui tasks: pure-Python, seeded simulators with LMRL-Gym's model-facing texts.

``envs.make(id)``, ``envs.ids()``, ``envs.make_policy(id, name)``; see :mod:`envs.core`. One
subpackage per task family: ``maze``, ``textnav``, ``wordle``, ``chess``, ``questions`` (Twenty
Questions, Guess My City) and ``car_dealer``, each with the same file names for the same roles
(``task.py``, ``policies.py``, ``partner.py``, ``text.py``, ``data.py``, ``engine.py``).
This package never imports textual or torch.
"""

import envs.families  # noqa: E402, F401 - declares the built-in families to the core
from envs.core import *  # noqa: F403 - the package's face is the core's API
from envs.core import __all__  # noqa: F401
