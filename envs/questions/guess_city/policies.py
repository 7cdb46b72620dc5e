"""Scripted Guess My City askers over one bank of questions: ``strong`` (best splits, open
questions included), ``behaviour`` (LMRL's data recipe), ``random``."""

from __future__ import annotations

from functools import cache

from envs.questions.guess_city.data import CLIMATES, City, cities
from envs.questions.guess_city.partner import answer, parse
from envs.questions.policies import BankAsker, QuestionBank

OPEN_QUESTIONS = (
    "What continent is your city in?",
    "What country is your city in?",
    "What language do people speak there?",
    "What is the weather like?",
    "What food is your city known for?",
    "What is your city famous for?",
    "How many people live there?",
    "What river runs through it?",
    "Which part of the world is it in?",
    "Which sea or ocean is it on?",
)
BEHAVIOUR_OPEN = (
    "What continent is your city in?",
    "What is the weather like?",
    "Which part of the world is it in?",
)


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
        "Is it on the coast?",
        "Is it a capital city?",
        "Is it in the northern hemisphere?",
        "Is it in the eastern hemisphere?",
        "Is it in the tropics?",
        "Does a river run through it?",
        *(f"Do more than {n} million people live there?" for n in (2, 3, 5, 8, 10, 15, 20)),
    ]
    qs += list(BEHAVIOUR_OPEN if behaviour else OPEN_QUESTIONS)
    qs = list(dict.fromkeys(qs))  # "Is it in North America?" is a continent and a region
    out: list[tuple[str, int | None]] = [(q + "\n", None) for q in qs if parse(q).target is None]
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


POLICIES = {"strong": strong_policy, "behaviour": behaviour_policy, "random": random_policy}
