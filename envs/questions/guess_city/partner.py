"""Guess My City's embedded oracle (the knowledge is in :mod:`envs.questions.guess_city.data`).

The oracle answers yes/no questions with ``"Yes."``/``"No."`` and open questions (``What
continent ...?``, ``What is the weather like?``, ``What food is it known for?``, ``How many people
live there?`` ...) with one sentence. It never names the city (any such words in a sentence are
replaced by "my city") until the city is guessed; naming it is a guess, ended by ``"Yes."``.

Yes/no questions are mapped, like the Twenty Questions oracle, to facts found by words in any
inflection (continent, region, country or its demonym, language, climate and weather, coast and
sea, river, capital, hemisphere, tropics, population such as ``more than 10 million people``,
foods, landmarks, the river by its name, the side of the road, states and provinces, nearby
features, ``near`` another city within 250 km); several facts are joined by *and*, or by *or*;
``not`` negates. An either-or question (``Is it in the northern or southern hemisphere?``, ``Is it
inland or on the coast?``, ``Is it a capital or not?``) gets one sentence naming the alternative
that holds, in the asker's words. A guess of a place that is none of the cities (``Is it
Kyoto?``, ``Are you from Abu Dhabi?``) is a wrong guess: ``"No."``, understood, ``Parsed.unlisted``
naming it. Questions it cannot map get ``"I'm not sure how to answer that."`` and ``understood =
False``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from envs.questions.guess_city.data import (
    AREAS,
    COAST_SIDE,
    CURRENCIES,
    DRIVE_LEFT,
    DRIVE_LEFT_CITIES,
    FORMER_CAPITALS,
    ISLANDS,
    KNOWN_FOR,
    NEAR,
    OLD_CITIES,
    OLYMPICS,
    RIVER_PORTS,
    SIDES,
    SUNNY,
    City,
    cities,
    open_answer,
    redact,
    split_list,
)
from envs.questions.guess_city.text import (
    AWAY,
    NOT_SURE,
    PRIORITY,
    RELATIONAL,
    TRIGGERS,
    WH,
    population,
)
from envs.questions.guess_city.text import (
    intent as intent_of,
)
from envs.questions.guess_city.text.lexicon import lexicon
from envs.questions.task import OracleReply
from envs.questions.text import Atom, clean_text, fold, resolve, tokens


@dataclass(frozen=True)
class Parsed:
    open_intent: str | None
    atoms: tuple[Atom, ...]
    any_of: bool
    negated: bool
    target: int | None
    reason: str = ""
    unlisted: str | None = None
    """The place a guess names when it is none of the cities (``"Kyoto"``)."""
    either: tuple[tuple[str, Parsed], ...] = ()
    """An either-or question's alternatives: (how to say it, its parse)."""


GUESS = re.compile(
    r"^(?:is it|is your city|is the city|is this city|is this|are you from|do you live in|"
    r"do you come from|could it be|might it be|is your home|is your hometown) (?P<x>[^?.!]+)$",
    re.IGNORECASE,
)
"""A question naming a place as the answer: ``Is it Kyoto?``, ``Are you from Abu Dhabi?``."""
EXPLICIT = ("are you from", "do you live in", "do you come from", "is your hometown")
"""Openings that only name a place, so a name after them is a guess in lower case too."""
ALL_YEAR = ("all year", "year round", "all time", "always", "whole year", "every day")
"""Words that ask whether a kind of weather lasts all year (``Is it hot all year?``)."""
LEADS = frozenset("in on near a an the at by from to of not close far".split())
POSSESSIVE = re.compile(
    r"(?<!\bit)(?<!\bthat)(?<!\bwhat)(?<!\bthere)(?<!\bwho)(?<!\bhere)'s\b", re.IGNORECASE
)
YES_NO_OPENERS = frozenset(
    "is are was were does do did can could has have had will would should "
    "may might am isnt arent doesnt dont".split()
)
WH_INSIDE = frozenset({"which", "what", "where"})
OPENERS = re.compile(
    r"^(?:is it|is your city|is the city|is this city|does it|do people|do they"
    r"|does your city|is there|are there)\s+",
    re.IGNORECASE,
)


def _unlisted(question: str, atoms: list[Atom]) -> str | None:
    """The name a guess-shaped question gives when it is none of the cities (module docstring)."""
    text = " ".join(clean_text(question).rstrip("?.! ").split())
    m = GUESS.match(text)
    if m is None:
        return None
    x = m.group("x").strip()
    words = x.split()
    if not words or words[0].lower() in LEADS or len(words) > 4:
        return None
    explicit = text.lower().startswith(EXPLICIT)
    if not explicit and not all(
        w[0].isupper() for w in words if w.lower() not in ("de", "la", "es")
    ):
        return None
    toks = tokens(x)
    scan = lexicon().scan(toks)
    whole = len(scan) == 1 and scan[0].start == 0 and scan[0].end == len(toks)
    covered = sum(m.end - m.start for m in scan) == len(toks)
    if covered and any(a.rel == "city" for m in scan for a in m.atoms):
        return None  # "Is it Paris, France?": a city with where it is
    if whole and any(a.rel == "city" for a in scan[0].atoms):
        return None  # one of the cities: a real guess
    if whole and not {a.rel for a in scan[0].atoms} <= {"food", "sight", "near"}:
        return None  # "Is it Asian?", "Is your city big?": a fact, not a name
    return x


def _either(question: str) -> tuple[tuple[str, Parsed], ...]:
    """The alternatives of ``Is it in the northern or southern hemisphere?``, ``Is it inland or
    on the coast?``, ``Is it a capital or not?``; () when the question is not an either-or one."""
    text = " ".join(clean_text(question).rstrip("?.! ").split())
    parts = re.split(r"\s+or\s+", text, flags=re.IGNORECASE)
    if len(parts) != 2 or not OPENERS.match(parts[0]):
        return ()
    opener = OPENERS.match(parts[0]).group(0)  # type: ignore[union-attr]
    left, right = parts[0][len(opener) :].split(), parts[1].split()
    if not left or not right:
        return ()
    if [w.lower() for w in right] in (["not"], ["no"], ["is", "it", "not"]):
        return ((" ".join(left), parse(opener + " ".join(left))),)
    plain = (" ".join(left), " ".join(right))  # "inland" / "on the coast"
    shared = (" ".join(left), " ".join(left[:-1] + right))  # "in Asia" / "in Europe"
    elided = (" ".join(left + right[1:]), " ".join(left[:-1] + right))  # "northern ... hemisphere"
    joined = tokens(" ".join([left[-1], *right[1:]]))
    whole = lexicon().scan(joined)
    sides = {"east", "west", "north", "south", "eastern", "western", "northern", "southern"}
    if len(right) > 1 and left[-1].lower() in sides and right[0].lower() in sides:
        options = [elided, plain]  # "on the east or west coast of Australia"
    elif (
        len(right) > 1
        and right[0].lower() not in LEADS
        and len(whole) == 1
        and (whole[0].start == 0 and whole[0].end == len(joined))
    ):  # "northern ... hemisphere": the left word shares the right's noun
        options = [elided, plain]
    elif len(right) == 1 and len(left) > 1:
        options = [shared, plain]
    else:
        options = [plain]
    for a, b in options:
        pa, pb = parse(opener + a), parse(opener + b)
        if pa.atoms and pb.atoms and not pa.either and not pb.either and pa.atoms != pb.atoms:
            return ((a, pa), (b, pb))
    return ()


BIGGER = frozenset({"bigger", "larger", "greater", "populous"})
"""The word before ``than`` that compares populations (``more populous than``)."""


@lru_cache(maxsize=16384)
def parse(question: str) -> Parsed:
    toks = tokens(POSSESSIVE.sub(" s", clean_text(question)))  # "Canada's biggest city"
    if not toks:
        return Parsed(None, (), False, False, None, "empty question")
    if toks[0] not in YES_NO_OPENERS and WH_INSIDE & set(toks):  # "It's the capital of which ...?"
        toks = ["what", *toks]
    if toks[0] not in WH and "or" in toks and (either := _either(question)):
        return Parsed(None, (), False, False, None, either=either)
    pop, rest = population(toks)
    atoms: list[Atom] = [pop] if pop is not None else []
    target = None
    for m in lexicon().scan(rest):
        atom = resolve(m.atoms, rest, m.start, m.end, TRIGGERS, PRIORITY)
        prev = rest[m.start - 1] if m.start > 0 else ""
        prev2 = rest[m.start - 2] if m.start > 1 else ""
        near = prev in ("near", "close", "next") or (prev == "to" and prev2 in ("close", "next"))
        if atom.rel == "country" and near:
            atom = Atom("near_country", atom.value)  # "Is it near Canada?": in it or by it
        if atom.rel == "city" and prev == "than" and prev2 in BIGGER | {"smaller"}:
            less = prev2 == "smaller" or (m.start > 2 and rest[m.start - 3] in ("less", "fewer"))
            atoms.append(Atom("pop_vs", ("<" if less else ">", atom.value)))  # "bigger than Paris?"
            continue
        if atom.rel == "city":
            if near:
                atoms.append(Atom("near_city", atom.value))  # "Is it near Paris?"
                continue
            if prev in RELATIONAL or (prev == "from" and prev2 in AWAY):
                continue  # "far from Paris": not a guess
            target = atom.value if target is None else target
        atoms.append(atom)
    if " ".join(toks).endswith(ALL_YEAR) or any(p in " ".join(toks) for p in ALL_YEAR):
        atoms = [Atom("weather_all", a.value, a.neg) if a.rel == "weather" else a for a in atoms]
    negated = any(w in ("not", "non", "never") for w in toks[2:]) or toks[0] == "not"
    if (toks[0] in WH and target is None) or not atoms:
        intent = intent_of(set(toks))
        if intent is not None:
            return Parsed(intent, (), False, False, None)
    if toks[0] not in WH and (named := _unlisted(question, atoms)) is not None:
        return Parsed(None, (), False, negated, None, unlisted=named)
    if (toks[0] in WH and target is None) or not atoms:
        return Parsed(None, (), False, negated, None, "nothing I know about")
    return Parsed(None, tuple(atoms), "or" in toks, negated, target)


def _km(a: City, b: City) -> float:
    la1, lo1, la2, lo2 = map(math.radians, (a.lat, a.lon, b.lat, b.lon))
    h = (
        math.sin((la2 - la1) / 2) ** 2
        + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    )
    return 12742 * math.asin(math.sqrt(h))


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
        ok = (
            c.region == v
            or (v == "Latin America" and c.continents == ("South America",))
            or (
                v == "Middle East"
                and c.country == "Egypt"  # Egypt is counted in the Middle East too
            )
        )
    elif rel == "lang":
        ok = v in (fold(x) for x in c.langs)
    elif rel == "climate":
        ok = c.climate == v
    elif rel == "weather":  # a hot city is warm too
        ok = v in c.weather or (v == "warm" and "hot" in c.weather)
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
    elif rel == "drive":
        left = c.country in DRIVE_LEFT or c.name in DRIVE_LEFT_CITIES
        ok = (v == "left") == left
    elif rel == "area":
        ok = v in {fold(a) for a in split_list(AREAS.get(c.name, ""))}
    elif rel == "near":
        near = split_list(NEAR.get(c.name, ""))
        ok = v in near or (v == "mountains" and c.climate == "highland")
    elif rel == "near_country":
        ok = any(o.country == v and _km(c, o) < 300 for o in cities())
    elif rel == "near_city":
        ok = v != index and _km(c, cities()[v]) < 250
    elif rel == "largest":
        ok = c.pop >= max(o.pop for o in cities() if o.country == c.country)
    elif rel == "citystate":
        ok = any(fold(n) == fold(a) for n in c.country_names for a in c.aliases)
    elif rel == "weather_all":  # "hot all year": hot, and never cold
        opposite = {
            "hot": {"cold", "snowy", "cool"},
            "warm": {"cold", "snowy"},
            "cold": {"hot", "warm", "mild"},
            "humid": {"dry"},
            "dry": {"rainy", "humid"},
            "rainy": {"dry"},
        }.get(v, set())
        ok = (v in c.weather or (v == "warm" and "hot" in c.weather)) and not (opposite & c.weather)
    elif rel == "side":
        ok = v in split_list(SIDES.get(c.name, ""))
    elif rel == "former_capital":
        ok = c.name in FORMER_CAPITALS
    elif rel == "pop_vs":
        op, other = v
        ok = other != index and (
            c.pop > cities()[other].pop if op == ">" else c.pop < cities()[other].pop
        )
    elif rel == "ever_capital":
        ok = c.capital or c.name in FORMER_CAPITALS
    elif rel == "port":
        ok = bool(c.coasts) or c.name in RIVER_PORTS
    elif rel == "island":
        ok = c.name in ISLANDS
    elif rel == "coast_side":
        ok = v in split_list(COAST_SIDE.get(c.name, ""))
    elif rel == "currency":
        ok = v in split_list(CURRENCIES.get(c.name) or CURRENCIES.get(c.country, ""))
    elif rel == "continents2":
        ok = len(c.continents) > 1
    elif rel == "old":
        ok = c.name in OLD_CITIES
    elif rel == "sunny":
        ok = c.climate in SUNNY or "dry" in c.weather or "sunny" in KNOWN_FOR.get(c.name, "")
    elif rel == "known":
        ok = _known(c, v) or _contains(c.sights, v) or _contains(c.foods, v)
    elif rel == "olympics":
        ok = any(c.name in hosts for season, hosts in OLYMPICS.items() if v in ("any", season))
    elif rel == "food":
        ok = _contains(c.foods, v)
    else:
        ok = _contains(c.sights, v) or _known(c, v)
    return ok != atom.neg


def _known(c: City, v: str) -> bool:
    return v in {fold(w) for w in split_list(KNOWN_FOR.get(c.name, ""))}


def answer(question: str, secret: int) -> OracleReply:
    """The embedded oracle's reply to ``question`` about city ``secret``."""
    p = parse(question)
    c = cities()[secret]
    if p.unlisted is not None:  # a guess of a place that is none of the cities: a wrong guess
        return OracleReply("No.", True, f"not on the list: {p.unlisted}")
    if p.either:
        return OracleReply(redact(_say_either(p, c, secret), c), True)
    if p.open_intent is not None:
        return OracleReply(redact(open_answer(p.open_intent, c), c), True)
    if not p.atoms:
        return OracleReply(NOT_SURE, False, p.reason)
    results = [holds(a, c, secret) for a in p.atoms]
    yes = any(results) if p.any_of else all(results)
    return OracleReply("Yes." if yes != p.negated else "No.", True)


def _say_either(p: Parsed, c: City, secret: int) -> str:
    """The answer to an either-or question: the alternative that holds, in the asker's words."""

    def true(q: Parsed) -> bool:
        results = [holds(a, c, secret) for a in q.atoms]
        return (any(results) if q.any_of else all(results)) != q.negated

    if len(p.either) == 1:  # "Is it a capital or not?"
        said, q = p.either[0]
        return f"It is {said}." if true(q) else f"It is not {said}."
    (sa, qa), (sb, qb) = p.either
    ta, tb = true(qa), true(qb)
    if ta and tb:
        return f"Both: it is {sa} and {sb}."
    if ta or tb:
        return f"It is {sa if ta else sb}."
    return f"Neither: it is not {sa}, nor {sb}."
