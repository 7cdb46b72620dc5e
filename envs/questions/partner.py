"""A simulated person as the oracle of a question task, for tests and benches of the askers.

:class:`NoisyOracle` is an :class:`envs.core.Agent` passed as the task's ``partner``. It answers
from the embedded oracle's truth for the secret (:meth:`QuestionTask.embedded_answer`), but like a
person it is sometimes wrong and sometimes vague:

* with probability ``flip`` it gives the wrong answer: the other one of yes/no, or for an open
  question (Guess My City) the embedded answer for another secret, drawn at random;
* with probability ``free`` it answers in free text instead: ``"Yes, usually."`` for a yes (still
  a yes), or something non-committal (``"sometimes"``, ``"no idea"``, ``"I don't know"``,
  ``"maybe"``); Twenty Questions reads all of these as LMRL does (a reply starting with "yes" is
  yes, anything else no), Guess My City keeps the text;
* a guess (a question naming a secret) gets the plain truth: a person knows their own secret,
  unless ``flip_guesses``, when guesses are flipped and vague like any other question;
* ``contrary`` names words on which the person disagrees with the knowledge base: a yes/no
  question containing one of them always gets the other answer (a person who thinks a chair is
  soft and found in the living room).

Its draws come from ``random.Random`` seeded with the episode's seed, so a run is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from envs.core import Text
from envs.questions.text import fold, yes_no

VAGUE = ("sometimes", "no idea", "I don't know", "maybe")


class NoisyOracle:
    """A person-like oracle: the truth, with flipped and free-text answers (module docstring)."""

    kind = "simulated"

    def __init__(
        self,
        flip: float = 0.15,
        free: float = 0.1,
        contrary: Iterable[str] = (),
        flip_guesses: bool = False,
    ) -> None:
        self.flip = flip
        self.free = free
        self.flip_guesses = flip_guesses
        self.contrary = tuple(fold(w) for w in contrary)
        self.name = f"noisy-oracle-{round(flip * 100)}"
        self._task: Any = None
        self._rng = random.Random()

    def reset(self, task: Any, seed: int | None = None) -> None:
        self._task = task
        self._rng = random.Random(None if seed is None else f"noisy-oracle:{seed}:{self.flip}")

    def act(self, history: Sequence[Text]) -> str:
        task, rng = self._task, self._rng
        question = str(task.state()["pending_question"])
        truth = task.embedded_answer(question).text
        yn = yes_no(truth) if len(truth) <= 4 else None
        flip = rng.random() < self.flip
        vague = rng.random() < self.free
        if task.guess_target(question) is not None and not self.flip_guesses:
            return truth
        if yn is not None and any(w in fold(question) for w in self.contrary):
            flip = True
        if yn is None:  # an open question: another secret's answer when wrong
            if flip:
                other = rng.randrange(task.n_secrets - 1)
                other += other >= task.secret
                return task.embedded_answer(question, other).text
            return rng.choice(VAGUE) if vague else truth
        said = yn != flip
        if vague:
            return "Yes, usually." if said and rng.random() < 0.5 else rng.choice(VAGUE)
        return "Yes." if said else "No."
