"""The verifiers plugin of lmrl-tui's tasks, under the id ``lmrl-verifiers``.

Verifiers 0.4 imports a taskset by its id as a top-level module and takes the ``Taskset`` and
``Env`` subclasses it exports in ``__all__``; this package is that module, and nothing more: the
environment lives in ``envs.adapters.verifiers_env``.
"""

from envs.adapters.verifiers_env import *  # noqa: F403
from envs.adapters.verifiers_env import __all__  # noqa: F401
