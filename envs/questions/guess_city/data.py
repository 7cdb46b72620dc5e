"""Guess My City knowledge: the cities (``assets/cities.txt``), the words that name
countries, continents, climates and weather, and the oracle's sentences about a city.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from envs.questions.text import fold

DEMONYMS = {
    "Japan": "japanese", "South Korea": "korean, korea", "China": "chinese", "Taiwan": "taiwanese",
    "Indonesia": "indonesian", "Philippines": "filipino, philippine", "Thailand": "thai",
    "Vietnam": "vietnamese", "Malaysia": "malaysian", "Singapore": "singaporean",
    "Myanmar": "burmese, burma", "India": "indian", "Pakistan": "pakistani",
    "Bangladesh": "bangladeshi", "Nepal": "nepalese, nepali", "Sri Lanka": "sri lankan",
    "Turkey": "turkish, turkiye", "Iran": "iranian, persian", "Iraq": "iraqi",
    "Saudi Arabia": "saudi", "United Arab Emirates": "emirati, uae, emirates", "Qatar": "qatari",
    "Israel": "israeli", "Jordan": "jordanian", "Uzbekistan": "uzbek", "Kazakhstan": "kazakh",
    "United Kingdom": "british, english, uk, britain, great britain, england",
    "France": "french", "Spain": "spanish", "Italy": "italian", "Germany": "german",
    "Russia": "russian", "Ukraine": "ukrainian", "Poland": "polish", "Austria": "austrian",
    "Netherlands": "dutch, holland", "Belgium": "belgian", "Greece": "greek",
    "Portugal": "portuguese", "Sweden": "swedish", "Norway": "norwegian", "Denmark": "danish",
    "Finland": "finnish", "Ireland": "irish", "Czech Republic": "czech", "Hungary": "hungarian",
    "Romania": "romanian", "Switzerland": "swiss", "Nigeria": "nigerian", "Egypt": "egyptian",
    "Democratic Republic of the Congo": "congolese", "Angola": "angolan",
    "South Africa": "south african", "Kenya": "kenyan", "Ethiopia": "ethiopian",
    "Tanzania": "tanzanian", "Sudan": "sudanese", "Ghana": "ghanaian", "Ivory Coast": "ivorian",
    "Morocco": "moroccan", "Algeria": "algerian",
    "United States": "american, america, usa, united states of america, states",
    "Canada": "canadian", "Mexico": "mexican", "Cuba": "cuban", "Brazil": "brazilian",
    "Argentina": "argentine, argentinian", "Peru": "peruvian", "Colombia": "colombian",
    "Chile": "chilean", "Venezuela": "venezuelan", "Ecuador": "ecuadorian",
    "Australia": "australian, aussie", "New Zealand": "kiwi",
}  # fmt: skip
CONTINENT_WORDS = {
    "Asia": "asian", "Europe": "european", "Africa": "african",
    "North America": "north american", "South America": "south american",
    "Oceania": "oceanian, pacific islands",
}  # fmt: skip
REGION_WORDS = {
    "Northern Europe": "scandinavia, scandinavian, nordic",
    "Middle East": "mideast, near east",
}
CLIMATES = {
    "tropical": "It is hot and humid all year, with a rainy season.",
    "arid": "It has a hot desert climate: very dry, with little rain.",
    "semi-arid": "It is fairly dry, with hot summers and little rain.",
    "mediterranean": "It has hot, dry summers and mild, wet winters.",
    "humid subtropical": "Summers are hot and humid, and winters are mild.",
    "oceanic": "It is mild and often rainy, without great heat or cold.",
    "continental": "Summers are warm, and winters are cold and snowy.",
    "highland": "It is mild all year because it is high up, with a rainy season.",
}
CLIMATE_WORDS = {
    "arid": "desert, desert climate",
    "humid subtropical": "subtropical",
    "oceanic": "maritime",
    "highland": "high altitude, mountain climate",
}
WEATHER_WORDS = {
    "hot": "heat, very warm", "warm": "", "mild": "temperate", "cool": "chilly",
    "cold": "freezing, cold winters", "humid": "muggy", "dry": "", "rainy": "rain, rainfall, wet",
    "snowy": "snow, snowfall",
}  # fmt: skip


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
        out.append(City(
            aliases[0], aliases, countries[0], countries, split_list(f["continent"]), f["region"],
            float(f["lat"]), float(f["lon"]), float(f["pop"]), split_list(f["coast"]),
            f.get("river", "-").strip(" -"), f["capital"] == "yes",
            split_list(f["lang"]), f["climate"], frozenset(split_list(f["weather"])),
            split_list(f["food"]), split_list(f["sights"]),
        ))  # fmt: skip
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
        return (
            f"It lies on the {_listing(c.coasts)}."
            if c.coasts
            else "It is inland, not on the coast."
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
    if intent == "name":
        return "I can't tell you its name; you have to guess it."
    return f"It is in {c.region}, and it is known for {c.sights[0]}."


def redact(text: str, c: City) -> str:
    """Replace the city's names in ``text`` with "my city" (the oracle never names it)."""
    for a in sorted(c.aliases, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(a)}(?!\w)", "my city", text, flags=re.IGNORECASE)
    return text


DRIVE_LEFT = frozenset(
    "Japan;Indonesia;Thailand;Malaysia;Singapore;India;Pakistan;Bangladesh;Nepal;Sri Lanka;"
    "United Kingdom;Ireland;South Africa;Kenya;Tanzania;Australia;New Zealand".split(";")
)
"""Countries where traffic keeps to the left (everywhere else of the base: the right)."""
DRIVE_LEFT_CITIES = frozenset({"Hong Kong"})
"""Cities that keep to the left in a country that keeps to the right."""
AREAS = {
    "New York": "New York State", "Los Angeles": "California", "San Francisco": "California",
    "Chicago": "Illinois", "Houston": "Texas", "Dallas": "Texas", "Miami": "Florida",
    "Boston": "Massachusetts, New England", "Seattle": "Washington State", "Atlanta": "Georgia",
    "Washington": "District of Columbia", "Toronto": "Ontario", "Montreal": "Quebec",
    "Vancouver": "British Columbia", "Sydney": "New South Wales", "Melbourne": "Victoria",
    "Brisbane": "Queensland", "Perth": "Western Australia", "London": "England",
    "Manchester": "England", "Barcelona": "Catalonia", "Munich": "Bavaria",
    "Milan": "Lombardy", "Naples": "Campania", "Rome": "Lazio", "Mumbai": "Maharashtra",
    "Chennai": "Tamil Nadu", "Bangalore": "Karnataka", "Kolkata": "West Bengal",
    "Hyderabad": "Telangana", "Ahmedabad": "Gujarat", "Lahore": "Punjab", "Karachi": "Sindh",
    "Sao Paulo": "Sao Paulo State", "Rio de Janeiro": "Rio de Janeiro State",
    "Guangzhou": "Guangdong", "Shenzhen": "Guangdong", "Chengdu": "Sichuan",
    "Hangzhou": "Zhejiang", "Nanjing": "Jiangsu", "Wuhan": "Hubei", "Xi'an": "Shaanxi",
    "Surabaya": "Java", "Jakarta": "Java", "Istanbul": "Anatolia, Thrace", "Cape Town": "Western Cape",
    "Johannesburg": "Gauteng", "Auckland": "North Island",
}  # fmt: skip
"""The city's state, province or part of its country (as people name them)."""
OTHER_PLACES = (
    "Scotland, Wales, Northern Ireland, North Korea, Mongolia, Cambodia, Laos, Afghanistan, Syria, "
    "Lebanon, Yemen, Oman, Kuwait, Bahrain, Libya, Tunisia, Senegal, Mali, Uganda, Rwanda, "
    "Zimbabwe, Zambia, Mozambique, Madagascar, Cameroon, Bolivia, Paraguay, Uruguay, Guatemala, "
    "Honduras, Panama, Costa Rica, Jamaica, Haiti, Puerto Rico, Iceland, Croatia, Serbia, "
    "Bulgaria, Slovakia, Slovenia, Estonia, Latvia, Lithuania, Belarus, Texas, California, "
    "Florida, Alaska, Hawaii, Siberia, Tibet"
)
"""Places that people may ask about (``Is it in Scotland?``): every area of :data:`AREAS` and
these, each true only of the cities whose area it is."""
NEAR = {
    "Munich": "alps, mountains", "Zurich": "alps, mountains, lake", "Milan": "alps",
    "Vienna": "alps", "Kathmandu": "himalayas, mountains", "Santiago": "andes, mountains",
    "Bogota": "andes, mountains", "Quito": "andes, mountains, equator",
    "Medellin": "andes, mountains", "Lima": "andes, desert", "Almaty": "mountains",
    "Tehran": "mountains", "Mexico City": "mountains, volcanoes", "Naples": "volcano, vesuvius",
    "Cape Town": "mountains", "Vancouver": "mountains", "Rio de Janeiro": "mountains",
    "Cairo": "pyramids, desert", "Riyadh": "desert", "Dubai": "desert", "Doha": "desert",
    "Chicago": "lake", "Toronto": "lake", "Geneva": "lake", "Addis Ababa": "mountains",
    "Nairobi": "savanna, national park", "Beijing": "great wall", "Xi'an": "terracotta army",
    "Boston": "harvard", "Busan": "mountains, beach", "Seoul": "mountains",
}  # fmt: skip
"""Natural features and sights near a city that its own facts do not name."""
