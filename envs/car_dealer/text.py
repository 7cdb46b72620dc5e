"""Reading Car Dealer utterances: prices, brands, types, features, cars and intents; and what a
chat model playing the seller is told (:data:`INSTRUCTIONS`).

Keyword and pattern matching only (no model). The persona buyer reads seller lines with
:func:`understand`; the scripted sellers read buyer lines with the same finders.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from envs.car_dealer.data import BRAND_NAMES, FEATURES, Car, Request, inventory

MAX_PARSE_CHARS = 2000
"""Only the first 2,000 characters of an utterance are read (a 100 kB line is still answered)."""

MAX_PRICE = 1_000_000_000


def clean(text: str) -> str:
    """Printable text on one line: control characters become spaces, runs of spaces collapse."""
    text = text[:MAX_PARSE_CHARS]
    if not text.isprintable():
        text = text.translate(_ASCII_SPACES)
        if not text.isprintable():
            text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    return " ".join(text.split())


_ASCII_SPACES = {i: " " for i in (9, 10, 11, 12, 13)}


# -- prices ----------------------------------------------------------------------------------
_NUM = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_PRICE_RE = re.compile(
    r"(?P<dollar>\$)\s*" + _NUM + r"(?:\s*(?P<m1>k|K|thousand|grand)\b)?"
    r"|\b" + _NUM + r"\s*(?P<m2>k|K|thousand|grand)\b"
    r"|\b" + _NUM + r"\s*(?P<cur>dollars|bucks|usd|USD)\b"
    r"|\b(?P<bare>\d{1,3}(?:,\d{3})+|\d{5,})\b"
)


def find_prices(text: str) -> list[int]:
    """Dollar amounts in order: ``$32,000``, ``32k``, ``$32.5k``, ``32000 dollars``, ``32,000``.

    Bare four-digit numbers (years like ``2022``) are not prices.
    """
    out = []
    for m in _PRICE_RE.finditer(text):
        num = next(g for g in (m.group(2), m.group(4), m.group(6), m.group("bare")) if g)
        mult = m.group("m1") or m.group("m2")
        if len(num) > 15:
            continue
        value = float(num.replace(",", ""))
        if mult:
            value *= 1000
        if 1 <= value <= MAX_PRICE:
            out.append(int(round(value)))
    return out


# -- names -----------------------------------------------------------------------------------
# fmt: off
_BRAND_ALIASES = {
    "volkswagen": "Volkswagen", "vw": "Volkswagen", "lexus": "Lexus", "ford": "Ford",
    "mazda": "Mazda", "hyundai": "Hyundai", "toyota": "Toyota", "mercedes-benz": "Mercedes-Benz",
    "mercedes": "Mercedes-Benz", "benz": "Mercedes-Benz", "bmw": "BMW", "audi": "Audi",
    "subaru": "Subaru", "honda": "Honda", "porsche": "Porsche", "tesla": "Tesla",
}
# fmt: on
assert set(_BRAND_ALIASES.values()) == set(BRAND_NAMES)

_TYPE_WORDS = {
    "SUV": ("suv", "suvs", "crossover", "crossovers"),
    "truck": ("truck", "trucks", "pickup", "pickups", "pick-up"),
    "electric": ("electric", "ev", "evs", "battery-powered"),
    "sedan": ("sedan", "sedans", "saloon"),
    "convertible": ("convertible", "convertibles", "cabriolet", "roadster", "drop-top"),
    "luxury": ("luxury", "premium", "high-end", "luxurious"),
}
# fmt: off
_FEATURE_WORDS = {
    "backup camera": ("backup camera", "back-up camera", "rear camera", "reverse camera",
                      "rearview camera", "rear-view camera", "backup cam"),
    "navigation system": ("navigation", "nav system", "gps", "sat nav"),
    "heated seats": ("heated seats", "heated seat", "seat heating", "heated front seats"),
    "leather seats": ("leather seats", "leather seat", "leather interior", "leather"),
    "third-row seating": ("third-row", "third row", "3rd row", "3rd-row", "seven seats",
                          "7 seats", "seven-seater", "7-seater"),
    "blind spot monitoring": ("blind spot", "blind-spot"),
    "sunroof": ("sunroof", "sun roof", "moonroof", "moon roof"),
    "Apple CarPlay": ("carplay", "car play"),
}
# fmt: on
assert set(_FEATURE_WORDS) == set(FEATURES)


def _words_re(words: tuple[str, ...] | list[str]) -> re.Pattern[str]:
    alts = sorted((re.escape(w) for w in words), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alts) + r")(?![\w-])", re.IGNORECASE)


_BRAND_RE = {b: _words_re([a for a, v in _BRAND_ALIASES.items() if v == b]) for b in BRAND_NAMES}
_TYPE_RE = {t: _words_re(ws) for t, ws in _TYPE_WORDS.items()}
_FEATURE_RE = {f: _words_re(ws) for f, ws in _FEATURE_WORDS.items()}


def _in_order(patterns: dict[str, re.Pattern[str]], text: str) -> list[str]:
    combined, names = _combined(id(patterns), patterns)
    out: list[str] = []
    for m in combined.finditer(text):
        name = names[m.lastgroup or ""]
        if name not in out:
            out.append(name)
    return out


_COMBINED: dict[int, tuple[re.Pattern[str], dict[str, str]]] = {}


def _combined(
    key: int, patterns: dict[str, re.Pattern[str]]
) -> tuple[re.Pattern[str], dict[str, str]]:
    """One alternation of several word patterns (one named group each): a single scan."""
    if key not in _COMBINED:
        names = {f"g{i}": name for i, name in enumerate(patterns)}
        alts = "|".join(f"(?P<g{i}>{pat.pattern})" for i, pat in enumerate(patterns.values()))
        _COMBINED[key] = (re.compile(alts, re.IGNORECASE), names)
    return _COMBINED[key]


def find_brands(text: str) -> list[str]:
    """Brands named in ``text`` (bare names: ``"Toyota"``), in order of appearance."""
    return _in_order(_BRAND_RE, text)


def find_types(text: str) -> list[str]:
    """LMRL car types named in ``text`` (``"SUV"``, ``"truck"``, ...), in order of appearance."""
    return _in_order(_TYPE_RE, text)


def find_features(text: str, negated: bool = False) -> list[str]:
    """Features named in ``text``; with ``negated`` only those said to be missing ("no sunroof")."""
    found = _in_order(_FEATURE_RE, text)
    neg = [f for f in found if _is_negated(text, _FEATURE_RE[f])]
    return neg if negated else [f for f in found if f not in neg]


_NEG_RE = re.compile(
    r"\b(?:no|without|lacks|doesn't have|does not have|not have|isn't|missing)\b[^.!?]*$", re.I
)


def _is_negated(text: str, pat: re.Pattern[str]) -> bool:
    m = pat.search(text)
    if not m:
        return False
    before = _CLAUSE_BREAK.split(text[max(0, m.start() - 40) : m.start()])[-1]
    return bool(_NEG_RE.search(before))


_CLAUSE_BREAK = re.compile(r"\bbut\b|\bhowever\b|\bwhile\b|[,;.!?]", re.IGNORECASE)


# Model names that are also common words match only when capitalised as a name.
# fmt: off
_COMMON_WORD_MODELS = {"Focus", "Fusion", "Pilot", "Legacy", "Accord", "Ascent", "Outback",
                       "Explorer", "Beetle", "Mustang", "Prologue", "Baja"}
# fmt: on


@lru_cache(maxsize=1)
def _model_patterns() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, tuple[str, str]]]:
    """Two alternations of all model names (longest first): case-sensitive for common words."""
    models = {c.model: c.brand for c in inventory()}
    by_len = sorted(models, key=len, reverse=True)

    def alternation(names: list[str], flags: int) -> re.Pattern[str]:
        body = "|".join(re.escape(n) for n in names)
        return re.compile(r"(?<![\w-])(?:" + body + r")(?![\w-])", flags)

    exact = alternation([m for m in by_len if m in _COMMON_WORD_MODELS], 0)
    loose = alternation([m for m in by_len if m not in _COMMON_WORD_MODELS], re.IGNORECASE)
    lookup = {m.lower(): (b, m) for m, b in models.items()}
    return exact, loose, lookup


def find_car(text: str) -> Car | None:
    """The inventory car named first in ``text`` (the longest model name wins; a year picks
    among cars of the same name)."""
    exact, loose, lookup = _model_patterns()
    hits = [m for pat in (exact, loose) for m in pat.finditer(text)]
    if not hits:
        return None
    first = min(hits, key=lambda m: (m.start(), -len(m.group())))
    brand, model = lookup[first.group().lower()]
    cars = [c for c in inventory() if c.brand == brand and c.model == model]
    years = [int(y) for y in re.findall(r"\b(19[5-9]\d|20[0-4]\d)\b", text)]
    for c in cars:
        if c.year in years:
            return c
    if years:  # a model year we don't stock: the same car as the seller named it
        return dataclasses.replace(cars[0], year=years[0])
    return cars[0]


# -- intents ---------------------------------------------------------------------------------
def _re(*alts: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alts) + r")\b", re.IGNORECASE)


# fmt: off
_GREETING = _re("hi", "hello", "hey", "welcome", "good (?:morning|afternoon|evening|day)",
                "greetings", "howdy", "nice to meet you")
_ASK_NEEDS = _re(r"what (?:kind|type|sort|brand|make|model)", r"looking for", r"what can i (?:do|help|get)",
                 r"how can i help", r"what do you (?:want|need|have in mind)", r"which (?:brand|make|type|model)",
                 r"in the market for", r"what brings you", r"preferences?", r"tell me (?:more )?about (?:what|your)")
_ASK_BUDGET = _re(r"budget", r"how much (?:can|do|would|are) you", r"price range", r"afford",
                  r"spend", r"willing to pay")
_ASK_FEATURES = _re(r"features?", r"must-haves?", r"options", r"what do you need in", r"equipped")
_CLOSING = _re(r"deal\s*\?", r"do we have a deal", r"(?:buy|take|purchase) (?:it|the car|this|that)",
               r"ready to (?:buy|sign|purchase|close)", r"sign (?:the )?papers", r"shall we",
               r"would you like (?:to buy|it)", r"interested in (?:buying|this|it)", r"sold\s*\?",
               r"wrap (?:this|it) up", r"close the deal", r"how does that sound", r"what do you say")
_AGREE = _re(r"yes", r"yeah", r"ok(?:ay)?", r"deal", r"agreed", r"accept(?:ed)?", r"sounds? good",
             r"you(?:'ve)? got (?:it|a deal)", r"it'?s yours", r"that works", r"fine", r"sure",
             r"let'?s do (?:it|that)", r"i can do that", r"alright")
_REFUSE = _re(r"can'?t go (?:any )?lower", r"cannot go (?:any )?lower", r"lowest", r"final (?:price|offer)",
              r"firm", r"no can do", r"not possible", r"can'?t do that", r"cannot do that",
              r"best (?:i can do|price)", r"won'?t go", r"can'?t accept", r"no deal")
_NEGATION_START = re.compile(r"^\s*(?:no|sorry|unfortunately|nope)\b", re.IGNORECASE)
_PITCH = _re(r"we have", r"i (?:have|recommend|suggest)", r"how about", r"check out", r"consider",
             r"comes with", r"it has", r"features?", r"great (?:car|choice|deal)", r"reliable",
             r"perfect for you", r"in stock", r"on the lot")
# fmt: on


@dataclass
class Understanding:
    """What the buyer made of one seller line."""

    text: str
    prices: list[int] = field(default_factory=list)
    brands: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    car: Car | None = None
    greeting: bool = False
    ask_needs: bool = False
    ask_budget: bool = False
    ask_features: bool = False
    closing: bool = False
    agree: bool = False
    refuse: bool = False
    pitch: bool = False

    @property
    def price(self) -> int | None:
        """The price the seller is asking now: the last one named."""
        return self.prices[-1] if self.prices else None

    @property
    def understood(self) -> bool:
        return bool(
            self.prices
            or self.brands
            or self.types
            or self.features
            or self.car
            or self.greeting
            or self.ask_needs
            or self.ask_budget
            or self.ask_features
            or self.closing
            or self.agree
            or self.refuse
            or self.pitch
        )


def understand(line: str) -> Understanding:
    """Read one seller line (any text; never raises)."""
    text = clean(line)
    u = Understanding(text)
    if not text:
        return u
    u.prices = find_prices(text)
    u.brands = find_brands(text)
    u.types = find_types(text)
    u.features = find_features(text)
    u.car = find_car(text)
    u.greeting = bool(_GREETING.search(text))
    u.ask_needs = bool(_ASK_NEEDS.search(text))
    u.ask_budget = "?" in text and bool(_ASK_BUDGET.search(text))
    u.ask_features = "?" in text and bool(_ASK_FEATURES.search(text)) and not u.features
    u.closing = bool(_CLOSING.search(text))
    u.refuse = bool(_REFUSE.search(text)) or bool(_NEGATION_START.search(text))
    u.agree = not u.refuse and not u.closing and bool(_AGREE.search(text))
    u.pitch = bool(_PITCH.search(text))
    return u


# -- requests ---------------------------------------------------------------------------------
_RULED_OUT = re.compile(
    r"\b(?:not|no|don't want|do not want|never|instead of|rather than|other than|except|besides|"
    r"anything but|not interested in|hate|can't stand|nothing(?: like)?)\b"
    r"[^.,;:!?]*?(?=[.,;:!?]|\b(?:but|i|i'd|i'm|we|want|prefer|instead|rather)\b|$)",
    re.IGNORECASE,
)
"""What a buyer rules out: from the negation to the end of its clause ("No I want a Tesla" keeps
"I want a Tesla")."""


def read_request(line: str, ignore: str = "") -> Request:
    """The request in a buyer line (``ignore``: a car name to skip, the one under discussion)."""
    text = clean(line)
    if ignore:
        text = text.replace(ignore, " ")
    wanted = _RULED_OUT.sub(" ", text)
    model = find_car(wanted)
    brands = find_brands(wanted)
    if model is not None and model.brand not in brands:
        brands.insert(0, model.brand)
    return Request(brands[:1], find_types(wanted)[:1], model, find_features(text))


INSTRUCTIONS = {
    "seller": (
        "You are a friendly car salesperson at a dealership, talking to a customer who has just "
        "walked in. Ask which brand, type of car and features they want and what their budget is, "
        "recommend a car and agree on a price, as high as they will accept. Reply with one short "
        "line; quote prices like $32,000."
    ),
}
"""What a chat model that was not trained on the task is told, by role (``TaskSpec.instructions``;
the buyer's side keeps the generic buyer rules of :mod:`envs.players.remote`, which give its Output
line)."""
