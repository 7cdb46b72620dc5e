"""Twenty Questions and Guess My City: the task ids, the module that registers them and the options they take, declared to
the task core (read by :mod:`envs.discovery` from this file alone, without importing the package)."""

from __future__ import annotations

from envs.core.options import OptionSpec, int_option

_QUESTIONS = (
    int_option("max_questions", 20, "questions allowed"),
    OptionSpec("secret", "text", None, help="the hidden answer (else drawn from the seed)"),
    OptionSpec(
        "deterministic", "bool", False, help="the answer is seed modulo the number of answers"
    ),
)

DECLARED = (
    (60, "envs.questions.twenty_questions", ("twenty-questions",), _QUESTIONS),
    (70, "envs.questions.guess_city", ("guess-city",), _QUESTIONS),
)
"""(place in the task list, registering module, task ids, options)."""
