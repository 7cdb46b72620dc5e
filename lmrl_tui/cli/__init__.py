"""The ``lmrl`` command (the console script and ``python -m lmrl_tui``).

- :mod:`~lmrl_tui.cli.entry`: :func:`main`, the one dispatch (open the store if the command needs
  it, call its runner) and the error handling (one line, an exit status).
- :mod:`~lmrl_tui.cli.parser`: the command tree (each subcommand sets ``run`` and ``needs_store``)
  and the quick reading of a plain ``lmrl``.
- :mod:`~lmrl_tui.cli.play`: the app, and ``lmrl play`` (the app opened into one episode).
- :mod:`~lmrl_tui.cli.stats`, :mod:`~lmrl_tui.cli.annotators`: ``lmrl tasks`` and ``lmrl stats``.
- :mod:`~lmrl_tui.cli.data_commands`: ``generate``, ``export``, ``import``, ``merge``.
- :mod:`~lmrl_tui.cli.serve`: ``lmrl serve``'s rules and runner (the server: :mod:`lmrl_tui.serve`).
- :mod:`~lmrl_tui.cli.argtypes`, :mod:`~lmrl_tui.cli.errors`: argument types; errors and exit statuses.

``train``, ``eval`` and ``reproduce`` are the training layer's (:mod:`training.algorithms`).
"""

from lmrl_tui.cli.entry import main
from lmrl_tui.cli.parser import build_parser

__all__ = ["build_parser", "main"]
