"""Scripted Twenty Questions askers over one bank of questions: ``strong`` (best splits),
``behaviour`` (LMRL-like data), ``random``."""

from __future__ import annotations

from functools import cache

from envs.questions.policies import BankAsker, QuestionBank
from envs.questions.twenty_questions.partner import DISPLAY, Thing, answer, objects, parse
from envs.questions.twenty_questions.task import article
from envs.questions.twenty_questions.text import BANK_LEAVES_OUT


def bank_questions(things: tuple[Thing, ...]) -> list[tuple[str, int | None]]:
    """Fixed questions about every kind, material, colour ... that some objects share."""
    n = len(things)
    qs: list[str] = [
        "Is it alive?",
        "Is it man-made?",
        "Is it electronic?",
        "Can you eat it?",
        "Is it found indoors?",
        "Is it found outdoors?",
        "Is it bigger than a breadbox?",
        "Is it bigger than a person?",
        "Is it bigger than a house?",
        "Can you hold it in your hand?",
        "Is it smaller than a hand?",
        "Can you wear it?",
    ]

    def shared(values: list[str]) -> list[str]:
        counts: dict[str, int] = {}
        for v in values:
            counts[v] = counts.get(v, 0) + 1
        return sorted(v for v, c in counts.items() if 2 <= c < n)

    qs += [f"Is it a kind of {c.lower()}?" for c in sorted({t.category for t in things})]
    kinds = [k for t in things for k in t.kinds if k not in BANK_LEAVES_OUT]
    qs += [f"Is it {article(k)}?" for k in shared(kinds)]
    templates = {
        "made": "Is it made of {}?",
        "color": "Is it {} in color?",
        "in": "Is it found in the {}?",
        "for": "Is it used for {}?",
        "has": "Does it have {}?",
        "is": "Is it {}?",
        "can": "Can it {}?",
    }
    for rel, tpl in templates.items():
        facts = [v for t in things for v in t.facts[rel] if rel != "is" or v not in BANK_LEAVES_OUT]
        for v in shared(facts):
            qs.append(tpl.format(DISPLAY.get(v, v)))
    out: list[tuple[str, int | None]] = []
    seen: set[str] = set()
    for q in qs:
        if q not in seen and parse(q).atoms and parse(q).target is None:
            seen.add(q)
            out.append((q + "\n", None))
    out += [(f"Is it {article(t.name)}?\n", i) for i, t in enumerate(things)]
    return out


@cache
def question_bank() -> QuestionBank:
    things = objects()
    return QuestionBank(len(things), bank_questions(things), lambda q, s: answer(q.strip(), s).text)


def strong_policy() -> BankAsker:
    """Best-split questions, then guesses: the normalised score's max."""
    return BankAsker(question_bank, name="strong")


def behaviour_policy(p_informative: float = 0.06, p_guess: float = 0.12) -> BankAsker:
    """LMRL-like data: informative, random and premature-guess questions (success ≈ 0.31)."""
    return BankAsker(question_bank, p_informative=p_informative, p_guess=p_guess, name="behaviour")


def random_policy() -> BankAsker:
    """A uniformly random bank question each turn (guesses included)."""
    return BankAsker(question_bank, uniform=True, name="random")


POLICIES = {"strong": strong_policy, "behaviour": behaviour_policy, "random": random_policy}
