"""Guess My City's lexicon: the words that name facts of a city (countries, continents,
languages, climates, seas, rivers, areas, driving side ...), and more everyday words for them."""

from __future__ import annotations

from functools import cache

from envs.questions.guess_city.data import (
    AREAS,
    CLIMATE_WORDS,
    CLIMATES,
    CONTINENT_WORDS,
    CURRENCIES,
    DEMONYMS,
    KNOWN_FOR,
    NEAR,
    OLYMPICS,
    OTHER_PLACES,
    REGION_WORDS,
    WEATHER_WORDS,
    cities,
    split_list,
)
from envs.questions.guess_city.text import COMMON_WORDS, STOP_CONTENT
from envs.questions.text import Atom, Lexicon, fold, tokens


def _add_words(lex: Lexicon, words: str, atom: Atom) -> None:
    for w in split_list(words):
        lex.add(w, atom)


@cache
def lexicon() -> Lexicon:
    lex = Lexicon()
    cs = cities()
    own_names = {fold(a) for c in cs for a in c.aliases}
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
            for tail in (" Ocean", " Sea"):
                short = body[: -len(tail)]
                if body.endswith(tail) and tokens(short) and tokens(short)[-1] not in STOP_CONTENT:
                    lex.add(short, Atom("coast", body))
        if c.river:
            lex.add(c.river + " river", Atom("river", c.river))
            lex.add("river " + c.river, Atom("river", c.river))
            if fold(c.river) not in own_names and fold(c.river) not in COMMON_WORDS:
                lex.add(c.river, Atom("river", c.river))  # "Does the Nile flow through it?"
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
    for w in ("biggest city", "largest city", "biggest", "largest", "most populous"):
        lex.add(w, Atom("pop", (">=", 15.0)))
    for w in (
        "biggest city in",
        "largest city in",
        "most populous city in",
        "biggest city of",
        "largest city of",
        "biggest in",
        "largest in",
    ):
        lex.add(w, Atom("largest", True), inflect=False)  # of its country: "in Canada" follows
    for w in ("city state", "citystate", "city country"):
        lex.add(w, Atom("citystate", True))
    for side in ("left", "right"):
        for w in (
            f"drive on {side}",
            f"drive on {side} side",
            f"{side} hand traffic",
            f"{side} side of road",
            f"{side} hand side",
            f"drive on {side} hand side",
        ):
            lex.add(w, Atom("drive", side))
    for place in {*split_list(OTHER_PLACES), *(a for v in AREAS.values() for a in split_list(v))}:
        lex.add(place, Atom("area", fold(place)))
        if place.endswith(" State"):
            lex.add(place[: -len(" State")] + " state", Atom("area", fold(place)))
    for w in {n for v in NEAR.values() for n in split_list(v)}:
        lex.add(w, Atom("near", w))
    _more_words(lex)
    add_more_words(lex)
    return lex


def _more_words(lex: Lexicon) -> None:
    """Ports, islands, which coast, money, two continents, old age, sunshine, what it is known for."""
    for w in (
        "port",
        "port city",
        "big port",
        "major port",
        "large port",
        "busy port",
        "seaport",
        "big port city",
        "major port city",
        "harbour",
        "harbor",
        "shipping",
        "harbour city",
    ):
        lex.add(w, Atom("port", True))
    for w in ("island", "islands", "island city", "on island"):
        lex.add(w, Atom("island", True))
    for side in ("west", "east", "north", "south"):
        for w in (f"{side} coast", f"{side}ern coast", f"{side} coast of", f"{side}ern shore"):
            lex.add(w, Atom("coast_side", side))
    for side in (
        "north",
        "south",
        "east",
        "west",
        "northeast",
        "northwest",
        "southeast",
        "southwest",
        "midwest",
    ):
        for w in (
            side,
            f"{side}ern",
            f"{side}ern part",
            f"{side} of country",
            f"{side}ern region",
            f"{side} of",
        ):
            lex.add(w, Atom("side", side))
    for w in ("central", "center of", "centre of", "middle of", "heart of", "interior"):
        lex.add(w, Atom("side", "center"))
    for w in (
        "former capital",
        "once capital",
        "used to be capital",
        "old capital",
        "was capital",
        "previous capital",
        "historic capital",
        "ancient capital",
        "once the capital",
        "used to be the capital",
        "was the capital",
        "formerly the capital",
    ):
        lex.add(w, Atom("former_capital", True))
    for w in (
        "was it capital",
        "was it the capital",
        "was it a capital",
        "ever capital",
        "ever the capital",
        "ever a capital",
        "ever been capital",
        "ever been the capital",
    ):
        lex.add(w, Atom("ever_capital", True))  # "Was it the capital of Russia?": now or once
    for names in CURRENCIES.values():
        for w in split_list(names):
            lex.add(w, Atom("currency", w))
    for w in (
        "two continents",
        "both continents",
        "transcontinental",
        "span continents",
        "two continent",
        "europe and asia",
        "asia and europe",
        "more than one continent",
    ):
        lex.add(w, Atom("continents2", True))
    for w in (
        "ancient",
        "ancient city",
        "old city",
        "very old",
        "historic",
        "historical",
        "thousands of years",
        "thousand years old",
        "long history",
    ):
        lex.add(w, Atom("old", True))
    for w in ("sunny", "sunshine", "lot of sun", "lots of sun", "sunny weather"):
        lex.add(w, Atom("sunny", True))
    for w in (
        "tech industry",
        "tech hub",
        "technology hub",
        "tech city",
        "high tech",
        "it hub",
        "tech companies",
        "technology industry",
        "software industry",
    ):
        lex.add(w, Atom("known", "technology"))
    for words in KNOWN_FOR.values():
        for w in split_list(words):
            t, skip = tokens(w), STOP_CONTENT | {"food", "cuisine", "industry"}
            m = lex.scan(t)
            if not set(t) <= skip and not (len(m) == 1 and m[0].end - m[0].start == len(t)):
                lex.add(w, Atom("known", fold(w)))


# -- more everyday words for facts the lexicon knows, and the Olympic Games hosted
# fmt: off
HEMISPHERE_WORDS = {
    "north": ("above equator", "northern half", "north half", "upper half", "top half of world",
              "summer in july", "summer in june", "summer in august", "winter in december",
              "winter in january", "winter at christmas"),
    "south": ("below equator", "under equator", "southern half", "south half", "lower half",
              "bottom half of world", "down under", "summer in december", "summer in january",
              "summer at christmas", "christmas in summer", "winter in july", "winter in june",
              "winter in august"),
}
"""Everyday ways of naming the north and south hemispheres (``Is it below the equator?``)."""
# fmt: on


def add_more_words(lex: Lexicon) -> None:
    """Add the words of this module to the Guess My City lexicon."""
    for side, words in HEMISPHERE_WORDS.items():
        for w in words:
            lex.add(w, Atom("hemi", side))
    for w in (
        "coastline",
        "on coastline",
        "shoreline",
        "seafront",
        "sea front",
        "oceanfront",
        "ocean front",
        "beachfront",
        "by ocean",
        "by sea",
        "coastal city",
    ):
        lex.add(w, Atom("coastal", True))
    for w in (
        "government",
        "seat of government",
        "government seat",
        "parliament",
        "national government",
        "country s government",
        "nation s capital",
        "country s capital",
        "national capital",
        "capital of country",
        "capital of nation",
    ):
        lex.add(w, Atom("capital", True))
    for w in (
        "s biggest city",
        "s largest city",
        "s most populous city",
        "s biggest",
        "s largest",
        "biggest city of",
        "largest city of",
    ):
        lex.add(w, Atom("largest", True), inflect=False)  # "Canada's biggest city"
    for w in (
        "also country",
        "country too",
        "its own country",
        "own country",
        "country of its own",
        "country and city",
        "city and country",
    ):
        lex.add(w, Atom("citystate", True))
    for w in (
        "high up",
        "high elevation",
        "high altitude",
        "elevated",
        "altitude",
        "up in mountains",
        "high above sea level",
    ):
        lex.add(w, Atom("climate", "highland"))
    for w in ("olympics", "olympic games", "olympic", "olympiad", "games"):
        lex.add(w, Atom("olympics", "any"))
    for season in OLYMPICS:
        for w in (
            f"{season} olympics",
            f"{season} olympic games",
            f"{season} games",
            f"{season} olympic",
        ):
            lex.add(w, Atom("olympics", season))
