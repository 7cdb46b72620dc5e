"""Guess My City (``guess-city``): guess the oracle's home city with yes/no or open questions.

LMRL-Gym's task (``llm_rl_scripts/guess_city``), with its bugs fixed (spec §12.9) and our own
knowledge base of 126 large cities on every continent (``assets/cities/cities.txt``: country,
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

The oracle is the embedded facts oracle (:mod:`envs.guess_city_oracle`) unless the option
``partner`` gives an agent or ``partner_replies`` recorded replies (see :mod:`envs.dialogue`). A
partner's reply is kept as one clean line (newlines become spaces, at most 500 characters); an
empty reply becomes ``"No."`` (LMRL's reading of an unusable answer) and is marked
``info["normalised"]``.

Options: ``partner``, ``partner_replies``, ``max_questions`` (20), ``deterministic``, ``secret``.
Scripted guessers: ``strong`` (best split over yes/no and open questions), ``behaviour``
(LMRL's data recipe: questions first, a guess only near the end; success ≈ 0.53), ``random``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from envs.base import InvalidInput, TaskSpec, register
from envs.dialogue import OracleReply, QuestionTask
from envs.dialogue_askers import BankAsker, QuestionBank
from envs.dialogue_text import QUESTION_LIMIT, clean_text, fold, short_yes_no
from envs.guess_city_data import CLIMATES, City, cities
from envs.guess_city_oracle import answer, parse

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
            "name": c.name, "variants": list(c.aliases), "word": c.word, "country": c.country,
            "continent": " and ".join(c.continents), "region": c.region,
            "population_millions": c.pop, "coast": list(c.coasts), "river": c.river,
            "capital": c.capital, "languages": list(c.langs), "climate": c.climate,
            "foods": list(c.foods), "sights": list(c.sights),
        }  # fmt: skip

    def embedded_answer(self, question: str) -> OracleReply:
        return answer(question, self.secret)

    def guess_target(self, question: str) -> int | None:
        return parse(question).target

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
* You have **20** questions. The city is shown at the end.
* When you play the **oracle**, answer about the city shown to you, without naming it.
"""


# -------------------------------------------------------------------------------------------
# The question bank and the scripted guessers

OPEN_QUESTIONS = (
    "What continent is your city in?", "What country is your city in?",
    "What language do people speak there?", "What is the weather like?",
    "What food is your city known for?", "What is your city famous for?",
    "How many people live there?", "What river runs through it?",
    "Which part of the world is it in?", "Which sea or ocean is it on?",
)  # fmt: skip
BEHAVIOUR_OPEN = (
    "What continent is your city in?", "What is the weather like?",
    "Which part of the world is it in?",
)  # fmt: skip


def _the(place: str) -> str:
    """``"the Middle East"``, ``"the United States"``, ``"Brazil"``."""
    if place.startswith(("Middle", "Caribbean", "United", "Netherlands", "Philippines", "Czech")):
        return "the " + place
    return place


def bank_questions(
    cs: tuple[City, ...], *, behaviour: bool = False
) -> list[tuple[str, int | None]]:
    """Yes/no questions over the facts several cities share, open questions, and guesses."""

    def shared(values: list[str]) -> list[str]:
        counts: dict[str, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        return sorted(v for v, c in counts.items() if 2 <= c < len(cs))

    qs = [f"Is it in {v}?" for v in shared([x for c in cs for x in c.continents])]
    qs += [f"Is it in {_the(v)}?" for v in shared([c.region for c in cs])]
    if not behaviour:  # LMRL's data askers were told not to ask for the country
        qs += [f"Is it in {_the(v)}?" for v in shared([c.country for c in cs])]
    qs += [f"Do people there speak {v}?" for v in shared([x for c in cs for x in c.langs])]
    qs += [f"Is the climate {v}?" for v in CLIMATES]
    qs += [
        f"Is the weather {v} there?"
        for v in ("hot", "warm", "mild", "cool", "cold", "humid", "dry", "rainy", "snowy")
    ]
    qs += [
        "Is it on the coast?", "Is it a capital city?", "Is it in the northern hemisphere?",
        "Is it in the eastern hemisphere?", "Is it in the tropics?", "Does a river run through it?",
        *(f"Do more than {n} million people live there?" for n in (2, 3, 5, 8, 10, 15, 20)),
    ]  # fmt: skip
    qs += list(BEHAVIOUR_OPEN if behaviour else OPEN_QUESTIONS)
    out = [(q + "\n", None) for q in qs if parse(q).target is None]
    out += [(f"Is your city {c.name}?\n", i) for i, c in enumerate(cs)]
    return out


@cache
def question_bank(behaviour: bool = False) -> QuestionBank:
    cs = cities()
    return QuestionBank(
        len(cs), bank_questions(cs, behaviour=behaviour), lambda q, s: answer(q.strip(), s).text
    )


def strong_policy() -> BankAsker:
    """Best-split questions (open ones included), then guesses: the normalised score's max."""
    return BankAsker(question_bank, name="strong")


def behaviour_policy(
    p_informative: float = 0.0, guess_after: int = 17, p_slip: float = 0.52
) -> BankAsker:
    """LMRL's data recipe: random questions, guesses only from question ``guess_after`` on."""
    return BankAsker(
        lambda: question_bank(True),
        p_informative=p_informative,
        guess_after=guess_after,
        p_slip=p_slip,
        name="behaviour",
    )


def random_policy() -> BankAsker:
    """A uniformly random bank question each turn (guesses included)."""
    return BankAsker(question_bank, uniform=True, name="random")


register(
    TASK_ID,
    lambda **kw: GuessCityTask(**kw),
    policies={"strong": strong_policy, "behaviour": behaviour_policy, "random": random_policy},
)
