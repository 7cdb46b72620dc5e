"""Guess My City knowledge: the cities (``assets/cities.txt``), the words that name
countries, continents, climates, weather and places (``assets/words.json``), and the oracle's
sentences about a city.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from envs.questions.text import fold

_WORDS = json.loads(
    resources.files("envs.questions.guess_city").joinpath("assets/words.json").read_text("utf-8")
)
DEMONYMS: dict[str, str] = _WORDS["demonyms"]
"""Country -> the other words that name it (``"french"``), comma-separated."""
CONTINENT_WORDS: dict[str, str] = _WORDS["continent_words"]
REGION_WORDS: dict[str, str] = _WORDS["region_words"]
CLIMATES: dict[str, str] = _WORDS["climates"]
"""Climate band -> the oracle's sentence about it."""
CLIMATE_WORDS: dict[str, str] = _WORDS["climate_words"]
WEATHER_WORDS: dict[str, str] = _WORDS["weather_words"]
DRIVE_LEFT = frozenset(_WORDS["drive_left"])
"""Countries where traffic keeps to the left (everywhere else of the base: the right)."""
DRIVE_LEFT_CITIES = frozenset(_WORDS["drive_left_cities"])
"""Cities that keep to the left in a country that keeps to the right."""
AREAS: dict[str, str] = _WORDS["areas"]
"""The city's state, province or part of its country (as people name them)."""
OTHER_PLACES: str = _WORDS["other_places"]
"""Places that people may ask about (``Is it in Scotland?``): every area of :data:`AREAS` and
these, each true only of the cities whose area it is."""
NEAR: dict[str, str] = _WORDS["near"]
"""Natural features and sights near a city that its own facts do not name."""
CURRENCIES: dict[str, str] = {**_WORDS["currencies"], **_WORDS["currency_cities"]}
"""Country (or city with its own money) -> the names of the money used there, first the full one."""
ISLANDS = frozenset(_WORDS["islands"])
"""Cities that lie on an island (or islands)."""
RIVER_PORTS = frozenset(_WORDS["river_ports"])
"""Major ports, including ones on a river or estuary (every coastal city is a port too)."""
COAST_SIDE: dict[str, str] = _WORDS["coast_side"]
"""Which coast of its country (or continent) a city is on: ``west``, ``east``, ``north``, ``south``."""
OLD_CITIES = frozenset(_WORDS["old_cities"])
"""Cities more than about a thousand years old."""
KNOWN_FOR: dict[str, str] = _WORDS["known_for"]
"""What a city is known for besides its dishes and sights (``technology``, ``windy``)."""
FORMER_CAPITALS = frozenset(_WORDS["former_capitals"])
"""Cities that were once their country's capital (and are no longer)."""
SIDES: dict[str, str] = _WORDS["parts"]
"""Which part of its country a city is in (``north``, ``southeast``, ``center``, ``midwest``)."""
OLYMPICS: dict[str, frozenset[str]] = {
    season: frozenset(n.strip() for n in names.split(","))
    for season, names in _WORDS["olympics"].items()
}
"""Season (``summer``, ``winter``) -> the cities that have hosted those Olympic Games."""
SUNNY = frozenset({"arid", "semi-arid", "mediterranean", "tropical"})
"""Climate bands that count as sunny."""


def currency(c: City) -> str:
    return split_list(CURRENCIES.get(c.name) or CURRENCIES.get(c.country, "-"))[0]


@dataclass(frozen=True)
class City:
    name: str
    aliases: tuple[str, ...]
    country: str
    country_names: tuple[str, ...]
    continents: tuple[str, ...]
    region: str
    lat: float
    lon: float
    pop: float
    coasts: tuple[str, ...]
    river: str
    capital: bool
    langs: tuple[str, ...]
    climate: str
    weather: frozenset[str]
    foods: tuple[str, ...]
    sights: tuple[str, ...]

    @property
    def word(self) -> str:
        """LMRL's secret word: ``"city,country"`` in lower case (``"delhi,india"``)."""
        return f"{fold(self.name)},{fold(self.country)}"


def split_list(v: str, sep: str = ",") -> tuple[str, ...]:
    return tuple(x.strip() for x in v.split(sep) if x.strip() and x.strip() != "-")


def parse_cities(text: str) -> list[City]:
    """Parse the knowledge-base format (see the header of ``cities.txt``)."""
    out: list[City] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        names, *parts = line.split("|")
        f: dict[str, str] = {}
        for part in parts:
            if part.strip():
                key, _, val = part.partition(":")
                f[key.strip()] = val.strip()
        aliases = split_list(names, ";")
        countries = split_list(f["country"], ";")
        out.append(
            City(
                aliases[0],
                aliases,
                countries[0],
                countries,
                split_list(f["continent"]),
                f["region"],
                float(f["lat"]),
                float(f["lon"]),
                float(f["pop"]),
                split_list(f["coast"]),
                f.get("river", "-").strip(" -"),
                f["capital"] == "yes",
                split_list(f["lang"]),
                f["climate"],
                frozenset(split_list(f["weather"])),
                split_list(f["food"]),
                split_list(f["sights"]),
            )
        )
    return out


@cache
def cities() -> tuple[City, ...]:
    text = (
        resources.files("envs.questions.guess_city")
        .joinpath("assets/cities.txt")
        .read_text("utf-8")
    )
    return tuple(parse_cities(text))


def _listing(items: tuple[str, ...] | list[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def open_answer(intent: str, c: City) -> str:
    """One sentence about ``c`` for an open question of kind ``intent``."""
    if intent == "river":
        return (
            f"The {c.river} river runs through it."
            if c.river
            else "No major river runs through it."
        )
    if intent == "coast":
        sides = [s for s in split_list(COAST_SIDE.get(c.name, "")) if c.coasts]
        side = f", on the {' and '.join(sides)} coast" if sides else ""
        return (
            f"It lies on the {_listing(c.coasts)}{side}."
            if c.coasts
            else ("It is inland, not on the coast.")
        )
    if intent == "lang":
        return f"People there mainly speak {_listing(c.langs)}."
    if intent == "continent":
        if len(c.continents) > 1:
            return f"It lies in both {_listing(c.continents)}."
        return f"It is in {c.continents[0]}."
    if intent == "country":
        if any(fold(n) == fold(a) for n in c.country_names for a in c.aliases):
            return "It is a city-state, so naming its country would give it away."
        return f"It is in {c.country}."
    if intent == "hemi":
        ns = "northern" if c.lat > 0 else "southern"
        ew = "eastern" if c.lon > 0 else "western"
        return f"It is in the {ns} and {ew} hemispheres."
    if intent == "food":
        return f"It is known for {_listing(c.foods)}."
    if intent == "weather":
        return CLIMATES[c.climate]
    if intent == "pop":
        n = f"{c.pop:.0f}" if c.pop >= 10 else f"{c.pop:.1f}".rstrip("0").rstrip(".")
        return f"About {n} million people live in its metropolitan area."
    if intent == "sight":
        return f"It is known for {_listing(c.sights)}."
    if intent == "region":
        return f"It is in {c.region}."
    if intent == "capital":
        return (
            "It is the capital of its country." if c.capital else "It is not its country's capital."
        )
    if intent == "currency":
        return f"They pay with the {currency(c)}."
    if intent == "area":
        area = split_list(AREAS.get(c.name, ""))
        return f"It is in {area[0]}, in {c.country}." if area else f"It is in {c.region}."
    if intent == "name":
        return "I can't tell you its name; you have to guess it."
    return f"It is in {c.region}, and it is known for {c.sights[0]}."


def redact(text: str, c: City) -> str:
    """Replace the city's names in ``text`` with "my city" (the oracle never names it)."""
    for a in sorted(c.aliases, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(a)}(?!\w)", "my city", text, flags=re.IGNORECASE)
    return text
