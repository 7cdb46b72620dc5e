"""lmrl-tui tasks: pure-Python, seeded simulators with LMRL-Gym's model-facing texts.

``envs.make(id)``, ``envs.ids()``, ``envs.make_policy(id, name)``; see :mod:`envs.core`. One
subpackage per task family: ``maze``, ``textnav``, ``wordle``, ``chess``, ``questions`` (Twenty
Questions, Guess My City) and ``car_dealer``, each with the same file names for the same roles
(``task.py``, ``policies.py``, ``partner.py``, ``text.py``, ``data.py``, ``engine.py``), and a
``family.py`` declaring its task ids and options (:mod:`envs.discovery`).
This package never imports textual or torch.
"""

from envs.core import *  # noqa: F403 - the package's face is the core's API
from envs.core import __all__  # noqa: F401
from envs.discovery import declare_families

declare_families()  # every envs/<family>/family.py, read without importing the family
