"""The persona buyer with fixed traits, and how the buyer tests talk to it."""

from __future__ import annotations

from envs.car_dealer.data import Persona, phrases
from envs.car_dealer.partner import PersonaBuyer

TOYOTA = Persona("polite", "a Toyota", "SUV", ("sunroof", "heated seats"), 30000)


def make(persona: Persona = TOYOTA, seed: int = 0, **traits: object) -> PersonaBuyer:
    """A buyer with fixed traits (patience 25, no haggling, counters at 85%, pickiness 1.0)."""
    b = PersonaBuyer(persona)
    b.reset(None, seed)
    defaults = {
        "patience": 25,
        "haggles": 0,
        "first_frac": 0.85,
        "pickiness": 1.0,
        "stubborn_limit": 2,
    }
    for k, v in {**defaults, **traits}.items():
        setattr(b, k, v)
    return b


def talk(b: PersonaBuyer, *lines: str) -> list[str]:
    return [b.respond(line) for line in lines]


def templates(intent: str, personality: str = "polite") -> list[str]:
    own = phrases()["personalities"][personality]
    return own.get(intent) or phrases()["default"][intent]
