"""Guess My City's embedded oracle (the knowledge is in :mod:`envs.questions.guess_city.data`).

The oracle answers yes/no questions with ``"Yes."``/``"No."`` and open questions (``What
continent ...?``, ``What is the weather like?``, ``What food is it known for?``, ``How many people
live there?`` ...) with one sentence. It never names the city (any such words in a sentence are
replaced by "my city") until the city is guessed; naming it is a guess, ended by ``"Yes."``.

Yes/no questions are mapped, like the Twenty Questions oracle, to facts found by words in any
inflection (continent, region, country or its demonym, language, climate and weather, coast and
sea, river, capital, hemisphere, tropics, population such as ``more than 10 million people``,
foods, landmarks); several facts are joined by *and*, or by *or*; ``not`` negates. Questions it
cannot map get ``"I'm not sure how to answer that."`` and ``understood = False``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from envs.questions.guess_city.data import (
    CLIMATE_WORDS,
    CLIMATES,
    CONTINENT_WORDS,
    DEMONYMS,
    REGION_WORDS,
    WEATHER_WORDS,
    City,
    cities,
    open_answer,
    redact,
    split_list,
)
from envs.questions.task import OracleReply
from envs.questions.text import Atom, Lexicon, clean_text, fold, resolve, tokens

STOP_CONTENT = frozenset(
    "the of and a with city old new national great big famous museum park river street square "
    "market house modern ancient royal grand temple tower bridge garden gardens center centre "
    "district central nearby building sea lake mountains mountain island hill sauce rice soup "
    "cakes cake bread fish winter summer night nights white black red blue green yellow gold "
    "golden little".split()
)
TRIGGERS = {
    "lang": frozenset({"speak", "spoken", "language", "languages", "speaking", "talk", "say"}),
    "food": frozenset({"eat", "food", "dish", "dishes", "cuisine", "known", "famous", "drink"}),
    "sight": frozenset({"see", "visit", "landmark", "landmarks", "famous", "known", "there"}),
}
PRIORITY = (
    "city",
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


def _add_words(lex: Lexicon, words: str, atom: Atom) -> None:
    for w in split_list(words):
        lex.add(w, atom)


@cache
def lexicon() -> Lexicon:
    lex = Lexicon()
    cs = cities()
    for i, c in enumerate(cs):
        for a in c.aliases:
            lex.add(a, Atom("city", i), ing=False)
        for n in c.country_names:
            lex.add(n, Atom("country", c.country))
        _add_words(lex, DEMONYMS.get(c.country, ""), Atom("country", c.country))
        for cont in c.continents:
            lex.add(cont, Atom("continent", cont))
            _add_words(lex, CONTINENT_WORDS.get(cont, ""), Atom("continent", cont))
        lex.add(c.region, Atom("region", c.region))
        _add_words(lex, REGION_WORDS.get(c.region, ""), Atom("region", c.region))
        for lang in c.langs:
            lex.add(lang, Atom("lang", fold(lang)))
        for body in c.coasts:
            lex.add(body, Atom("coast", body))
            if body.endswith(" Ocean"):
                lex.add(body[: -len(" Ocean")], Atom("coast", body))
        if c.river:
            lex.add(c.river + " river", Atom("river", c.river))
            lex.add("river " + c.river, Atom("river", c.river))
        for phrase in (*c.foods, *c.sights):
            rel = "food" if phrase in c.foods else "sight"
            toks = tokens(phrase)
            lex.add(toks, Atom(rel, " ".join(toks)))
            for w in toks:
                if w not in STOP_CONTENT and len(w) > 3:
                    lex.add(w, Atom(rel, w))
    for band in CLIMATES:
        lex.add(band, Atom("climate", band))
        lex.add(band + " climate", Atom("climate", band))
        _add_words(lex, CLIMATE_WORDS.get(band, ""), Atom("climate", band))
    for tag, words in WEATHER_WORDS.items():
        lex.add(tag, Atom("weather", tag))
        _add_words(lex, words, Atom("weather", tag))
    for w in (
        "coast",
        "coastal",
        "sea",
        "ocean",
        "seaside",
        "port",
        "beach",
        "on water",
        "shore",
        "harbour",
        "harbor",
        "waterfront",
    ):
        lex.add(w, Atom("coastal", True))
    for w in ("inland", "landlocked"):
        lex.add(w, Atom("coastal", True, True))
    lex.add("river", Atom("has_river", True))
    for w in ("capital", "capital city", "seat of government"):
        lex.add(w, Atom("capital", True))
    for side in ("north", "south", "east", "west"):
        lex.add(f"{side}ern hemisphere", Atom("hemi", side))
        lex.add(
            f"{side} of equator" if side in ("north", "south") else f"{side}ern half",
            Atom("hemi", side),
        )
    for w in ("tropics", "between tropics", "near equator", "close to equator"):
        lex.add(w, Atom("tropics", True))
    for w in ("megacity", "megalopolis", "big city", "large city", "huge city", "big", "large"):
        lex.add(w, Atom("pop", (">=", 10.0)))
    for w in ("small city", "small", "town"):
        lex.add(w, Atom("pop", ("<", 3.0)))
    return lex


_NUM = re.compile(r"^\d+(\.\d+)?$")


def _population(toks: list[str]) -> tuple[Atom | None, list[str]]:
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


@dataclass(frozen=True)
class Parsed:
    open_intent: str | None
    atoms: tuple[Atom, ...]
    any_of: bool
    negated: bool
    target: int | None
    reason: str = ""


INTENTS: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (name, frozenset(words.split()))
    for name, words in (
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


def _intent(words: set[str]) -> str | None:
    for name, keys in INTENTS:
        if words & keys:
            return name
    return None


@lru_cache(maxsize=16384)
def parse(question: str) -> Parsed:
    toks = tokens(clean_text(question))
    if not toks:
        return Parsed(None, (), False, False, None, "empty question")
    pop, rest = _population(toks)
    atoms: list[Atom] = [pop] if pop is not None else []
    target = None
    for m in lexicon().scan(rest):
        atom = resolve(m.atoms, rest, m.start, m.end, TRIGGERS, PRIORITY)
        if atom.rel == "city":
            prev = rest[m.start - 1] if m.start > 0 else ""
            prev2 = rest[m.start - 2] if m.start > 1 else ""
            if prev in RELATIONAL or (prev == "from" and prev2 in AWAY):
                continue  # "near Paris", "far from Paris": not a guess
            target = atom.value if target is None else target
        atoms.append(atom)
    negated = any(w in ("not", "non", "never") for w in toks[2:]) or toks[0] == "not"
    if (toks[0] in WH and target is None) or not atoms:
        intent = _intent(set(toks))
        if intent is not None:
            return Parsed(intent, (), False, False, None)
        return Parsed(None, (), False, negated, None, "nothing I know about")
    return Parsed(None, tuple(atoms), "or" in toks, negated, target)


def _contains(phrases: tuple[str, ...], value: str) -> bool:
    needle = f" {value} "
    return any(needle in f" {' '.join(tokens(p))} " for p in phrases)


def holds(atom: Atom, c: City, index: int) -> bool:
    rel, v = atom.rel, atom.value
    ok: bool
    if rel == "city":
        ok = v == index
    elif rel == "country":
        ok = c.country == v
    elif rel == "continent":
        ok = v in c.continents
    elif rel == "region":
        ok = c.region == v or (v == "Latin America" and c.continents == ("South America",))
    elif rel == "lang":
        ok = v in (fold(x) for x in c.langs)
    elif rel == "climate":
        ok = c.climate == v
    elif rel == "weather":
        ok = v in c.weather
    elif rel == "coast":
        ok = v in c.coasts
    elif rel == "coastal":
        ok = bool(c.coasts)
    elif rel == "river":
        ok = c.river == v
    elif rel == "has_river":
        ok = bool(c.river)
    elif rel == "capital":
        ok = c.capital
    elif rel == "hemi":
        ok = {"north": c.lat > 0, "south": c.lat < 0, "east": c.lon > 0, "west": c.lon < 0}[v]
    elif rel == "tropics":
        ok = abs(c.lat) < 23.44
    elif rel == "pop":
        op, n = v
        ok = {">": c.pop > n, "<": c.pop < n, ">=": c.pop >= n, "<=": c.pop <= n}[op]
    elif rel == "food":
        ok = _contains(c.foods, v)
    else:
        ok = _contains(c.sights, v)
    return ok != atom.neg


def answer(question: str, secret: int) -> OracleReply:
    """The embedded oracle's reply to ``question`` about city ``secret``."""
    p = parse(question)
    c = cities()[secret]
    if p.open_intent is not None:
        return OracleReply(redact(open_answer(p.open_intent, c), c), True)
    if not p.atoms:
        return OracleReply(NOT_SURE, False, p.reason)
    results = [holds(a, c, secret) for a in p.atoms]
    yes = any(results) if p.any_of else all(results)
    return OracleReply("Yes." if yes != p.negated else "No.", True)
