"""Text-Nav: the task ids, the module that registers them and the options they take, declared to
the task core (read by :mod:`envs.discovery` from this file alone, without importing the package)."""

from __future__ import annotations

from envs.core.options import OptionSpec, int_option

_TEXTNAV = (int_option("max_steps", 20, "actions before the episode is cut"),)
_WORDLE = (
    OptionSpec(
        "words",
        "choice",
        "standard",
        ("standard", "small"),
        "the word list: the real game's, or a closed 400-word game",
    ),
    int_option("max_guesses", 6, "guesses allowed"),
    OptionSpec("bad_word_reward", "float", -1.0, help="reward of a guess that is not a word"),
    OptionSpec("vocab_file", "text", None, help="a file of answer words (one a line)"),
    OptionSpec("guess_file", "text", None, help="a file of extra allowed guesses"),
)

DECLARED = ((20, "envs.textnav", ("textnav-fo", "textnav-po"), _TEXTNAV),)
"""(place in the task list, registering module, task ids, options)."""
