"""Guess My City's vocabulary: the words the oracle reads questions by, the population
comparisons, and the kinds of open questions. The lexicon of words that name facts of a city:
:mod:`.lexicon`."""

from __future__ import annotations

import re

from envs.questions.text import Atom

STOP_CONTENT = frozenset(
    "the of and a with city old new national great big famous museum park river street square "
    "market house modern ancient royal grand temple tower bridge garden gardens center centre "
    "district central nearby building sea lake mountains mountain island hill sauce rice soup "
    "cakes cake bread fish winter summer night nights white black red blue green yellow gold "
    "golden little world cars car west east north south port harbour harbor island old time times "
    "dish dishes meal meals cuisine food foods popular traditional local style special".split()
)
COMMON_WORDS = frozenset({"red", "pearl", "min", "hai", "wei", "han", "red river"})
"""River names too common to be taken alone as the river (``red``)."""
TRIGGERS = {
    "coast": frozenset({"on", "by", "along", "border", "borders", "beside", "shore", "coast"}),
    "area": frozenset({"in", "state", "province", "part"}),
    "lang": frozenset({"speak", "spoken", "language", "languages", "speaking", "talk", "say"}),
    "food": frozenset({"eat", "food", "dish", "dishes", "cuisine", "known", "famous", "drink"}),
    "sight": frozenset({"see", "visit", "landmark", "landmarks", "famous", "known", "there"}),
}
PRIORITY = (
    "city",
    "area",
    "drive",
    "coast_side",
    "side",
    "ever_capital",
    "former_capital",
    "port",
    "island",
    "currency",
    "continents2",
    "old",
    "sunny",
    "near",
    "country",
    "continent",
    "region",
    "lang",
    "climate",
    "weather",
    "coast",
    "coastal",
    "river",
    "has_river",
    "capital",
    "hemi",
    "tropics",
    "pop",
    "food",
    "sight",
    "known",
    "olympics",
)
WH = frozenset(
    {
        "what",
        "which",
        "where",
        "who",
        "why",
        "how",
        "when",
        "whose",
        "tell",
        "describe",
        "name",
        "give",
        "list",
    }
)
RELATIONAL = frozenset({"near", "close", "than", "like", "between", "far", "next", "to", "and"})
AWAY = frozenset({"far", "away", "distance", "miles", "kilometers", "km", "hours", "drive"})
NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}
MORE = frozenset({"more", "over", "greater", "bigger", "larger", "above", "least", "exceed"})
LESS = frozenset({"less", "fewer", "under", "below", "smaller", "most"})
NOT_SURE = "I'm not sure how to answer that."


_NUM = re.compile(r"^\d+(\.\d+)?$")


def population(toks: list[str]) -> tuple[Atom | None, list[str]]:
    """``more than 10 million (people)``, ``under 5 million``, ``over 20m``."""
    for i, w in enumerate(toks):
        if w not in ("million", "millions", "m") or i == 0:
            continue
        num = toks[i - 1]
        value = float(num) if _NUM.match(num) else NUMBER_WORDS.get(num)
        if value is None:
            continue
        before = set(toks[max(0, i - 5) : i - 1])
        op = ">" if before & MORE else "<" if before & LESS else None
        if op is None:
            continue
        if "least" in before:
            op = ">="
        elif "most" in before:
            op = "<="
        start = max(0, i - 5)
        while start < i - 1 and toks[start] not in MORE | LESS | {"at"}:
            start += 1
        return Atom("pop", (op, value)), toks[:start] + toks[i + 1 :]
    return None, toks


INTENTS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (name, frozenset(words.split()))
    for name, words in (
        ("currency", "currency currencies money"),
        ("area", "state province county"),
        ("river", "river rivers"),
        ("coast", "coast ocean sea beach port water coastal seaside"),
        ("lang", "language languages speak spoken"),
        ("continent", "continent continents"),
        ("country", "country nation countries"),
        ("hemi", "hemisphere hemispheres equator"),
        ("food", "food foods eat dish dishes cuisine drink"),
        (
            "weather",
            "weather climate temperature temperatures season seasons rain hot cold snow "
            "summer summers winter winters warm",
        ),
        ("pop", "population people inhabitants populated big large size residents"),
        (
            "sight",
            "famous known landmark landmarks attraction attractions sight sights monument "
            "monuments see visit tourist tourists building buildings special",
        ),
        ("region", "where region located part area"),
        ("capital", "capital"),
        ("name", "name called"),
        ("hint", "hint clue tell describe anything about"),
    )
)


def intent(words: set[str]) -> str | None:
    for name, keys in INTENTS:
        if words & keys:
            return name
    return None
