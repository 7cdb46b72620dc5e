"""Guess My City: more everyday words for facts the lexicon already knows (the hemispheres,
the coast, the capital, a country's biggest city, altitude, a city that is a country) and the
Olympic Games each city has hosted (``assets/words.json``, ``olympics``)."""

from __future__ import annotations

from envs.questions.guess_city.data import OLYMPICS
from envs.questions.text import Atom, Lexicon

HEMISPHERE_WORDS = {
    "north": ("above equator", "northern half", "north half", "upper half", "top half of world"),
    "south": ("below equator", "under equator", "southern half", "south half", "lower half",
              "bottom half of world", "down under"),
}  # fmt: skip
"""Everyday ways of naming the north and south hemispheres (``Is it below the equator?``)."""


def add_more_words(lex: Lexicon) -> None:
    """Add the words of this module to the Guess My City lexicon."""
    for side, words in HEMISPHERE_WORDS.items():
        for w in words:
            lex.add(w, Atom("hemi", side))
    for w in ("coastline", "on coastline", "shoreline", "seafront", "sea front", "oceanfront",
              "ocean front", "beachfront", "by ocean", "by sea", "coastal city"):
        lex.add(w, Atom("coastal", True))
    for w in ("government", "seat of government", "government seat", "parliament",
              "national government", "country s government", "nation s capital",
              "country s capital", "national capital", "capital of country", "capital of nation"):
        lex.add(w, Atom("capital", True))
    for w in ("s biggest city", "s largest city", "s most populous city", "s biggest",
              "s largest", "biggest city of", "largest city of"):
        lex.add(w, Atom("largest", True), inflect=False)  # "Canada's biggest city"
    for w in ("also country", "country too", "its own country", "own country",
              "country of its own", "country and city", "city and country"):
        lex.add(w, Atom("citystate", True))
    for w in ("high up", "high elevation", "high altitude", "elevated", "altitude",
              "up in mountains", "high above sea level"):
        lex.add(w, Atom("climate", "highland"))
    for w in ("olympics", "olympic games", "olympic", "olympiad", "games"):
        lex.add(w, Atom("olympics", "any"))
    for season in OLYMPICS:
        for w in (f"{season} olympics", f"{season} olympic games", f"{season} games",
                  f"{season} olympic"):
            lex.add(w, Atom("olympics", season))
