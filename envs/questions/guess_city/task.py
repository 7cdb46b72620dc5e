"""Guess My City (``guess-city``): guess the oracle's home city with yes/no or open questions.

LMRL-Gym's task (``llm_rl_scripts/guess_city``), with its bugs fixed (docs/tasks.md §7.6) and our own
knowledge base of 126 large cities on every continent (``assets/cities.txt``: country,
continent, region, coordinates, population, coast, river, capital, languages, climate, weather,
foods, landmarks). ``reset(seed)`` draws the city with ``random.Random(seed)``, or index
``seed % n`` with ``deterministic=True``, or the named one with ``secret="Delhi"``.

Texts: first observation ``"Questions:\\n"``; an action is a question line (kept verbatim); the
observation is the oracle's answer and ``"\\n"``: ``"Yes.\\n"``/``"No.\\n"`` for a yes/no question,
one sentence for an open question (``"What is the weather like?\\n"`` ->
``"It has hot, dry summers and mild, wet winters.\\n"``). The oracle never names the city
before it is guessed.

Rewards: −1 per question; a question that names the city (any of its names, not after *near*,
*from* ...) answered yes gets 0 and ends the episode (``terminated``, ``info["success"]``), unlike
LMRL's coded check, which never fires on a real guess. After 20 answers the episode ends
(``truncated``); returns lie in [−20, 0]. Any text is a question (−1).

The oracle is the embedded facts oracle (:mod:`envs.questions.guess_city.partner`) unless the option
``partner`` gives an agent or ``partner_replies`` recorded replies (see :mod:`envs.questions.task`). A
partner's reply is kept as one clean line (newlines become spaces, at most 500 characters); an
empty reply becomes ``"No."`` (LMRL's reading of an unusable answer) and is marked
``info["normalised"]``.

Options: ``partner``, ``partner_replies``, ``max_questions`` (20), ``deterministic``, ``secret``.
Scripted guessers: ``strong`` (best split over yes/no and open questions), ``behaviour``
(LMRL's data recipe: questions first, a guess only near the end; success ≈ 0.53), ``random``.
"""

from __future__ import annotations

from typing import Any

from envs.core import InvalidInput, TaskSpec
from envs.questions.guess_city.data import City, cities
from envs.questions.guess_city.partner import answer, parse
from envs.questions.task import OracleReply, QuestionTask
from envs.questions.text import QUESTION_LIMIT, clean_text, fold, short_yes_no

TASK_ID = "guess-city"


class GuessCityTask(QuestionTask):
    """Guess My City with an embedded facts oracle (module docstring)."""

    def __init__(self, **options: Any) -> None:
        self.cities: tuple[City, ...] = cities()
        self.n_secrets = len(self.cities)
        super().__init__(**options)
        self.spec = TaskSpec(
            id=TASK_ID,
            version=1,
            title="Guess My City",
            summary="Find the oracle's home city with yes/no or open questions.",
            max_turns=self.max_questions,
            reward_range=(-1.0, 0.0),
            roles=("guesser", "oracle"),
            partner="oracle",
            norm=None,
            success_return=None,
            help=HELP,
            options=dict(self.options),
            instructions=INSTRUCTIONS,
        )

    def find_secret(self, name: str) -> int:
        key = fold(name).strip()
        for i, c in enumerate(self.cities):
            if key in (fold(a) for a in c.aliases) or key == c.word:
                return i
        raise ValueError(f"unknown city {name!r} for {TASK_ID}")

    def secret_name(self) -> str:
        return self.cities[self.secret].name

    def guess_name(self, index: int) -> str:
        return self.cities[index].name

    def secret_state(self) -> dict[str, Any]:
        c = self.cities[self.secret]
        return {
            "name": c.name,
            "variants": list(c.aliases),
            "word": c.word,
            "country": c.country,
            "continent": " and ".join(c.continents),
            "region": c.region,
            "population_millions": c.pop,
            "coast": list(c.coasts),
            "river": c.river,
            "capital": c.capital,
            "languages": list(c.langs),
            "climate": c.climate,
            "foods": list(c.foods),
            "sights": list(c.sights),
        }

    def embedded_answer(self, question: str, secret: int | None = None) -> OracleReply:
        return answer(question, self.secret if secret is None else secret)

    def guess_target(self, question: str) -> int | None:
        return parse(question).target

    def unlisted_guess(self, question: str) -> str | None:
        return parse(question).unlisted

    def oracle_prompt(self, question: str) -> str:
        return (
            "Answer the question about the city truthfully.\n"
            f"    object: {self.cities[self.secret].word}\n"
            f"    question: {question}\n"
            "    answer: "
        )

    def normalise_reply(self, raw: str) -> str:
        text = clean_text(raw, QUESTION_LIMIT)
        return text if text else "No."

    def parse_reply(self, typed: str) -> str:
        text = clean_text(typed, QUESTION_LIMIT)
        if not text:
            raise InvalidInput("Type an answer: yes, no, or a sentence about your city.")
        return short_yes_no(text) or text


HELP = """\
## Guess My City

The oracle comes from a large city somewhere in the world. Find it by asking questions, one per
turn: yes/no questions (*Is it in Asia?*, *Is it on the coast?*) or open ones (*What is the
weather like?*, *What food is it known for?*). Name the city to win: *Is it Lagos?*

* Every question costs **-1**; the question that names the city is free and wins.
* The city is one of the list shown beside the dialogue (type in its search line to filter it).
  Naming a place that is not on the list is a wrong guess.
* Either-or questions get the alternative that holds: *Is it in the northern or southern
  hemisphere?*
* You have **20** questions. The city is shown at the end.
* When you play the **oracle**, answer about the city shown to you, without naming it.
"""


# -------------------------------------------------------------------------------------------
# The question bank and the scripted guessers


INSTRUCTIONS = {
    "guesser": (
        "We are playing Guess My City. I come from a large city somewhere in the world. Find it by "
        "asking questions, one question per reply, in one line: yes/no questions ('Is it in "
        "Asia?') or open ones ('What food is it known for?'). You have 20 questions. When you "
        "think you know it, name it: 'Is it Lagos?'"
    ),
    "oracle": (
        "We are playing Guess My City. Each message gives your home city and a question about "
        "it. Answer truthfully in one line, without naming the city."
    ),
}
"""What a chat model that was not trained on the task is told, by role (``TaskSpec.instructions``)."""
