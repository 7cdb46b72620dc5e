"""Car Dealer knowledge: LMRL's buyer-persona distribution, our car inventory, the Output line.

The persona lists (``assets/personas.json``) are LMRL-Gym's, in LMRL's order, so
:func:`sample_persona` draws exactly what LMRL's ``CarDealerPolicyEnvironment.reset(seed)`` draws:
``choice(personalities)``, ``choice(brands)``, ``choice(types)``, ``k = randint(1, 4)``,
``sample(features, k)``, ``choice(budgets)`` from ``random.Random(seed)``. The inventory and the
buyer's reply templates are our own, hand-written package data.

What a buyer asks for (:class:`Request`, read by :func:`envs.car_dealer.text.read_request`;
:class:`Wishes`, all it asked for so far) and the inventory's answer to it (:func:`answer`: the
cars that are what was asked for, or, when there is none, the closest match and a sentence that
says what is not in stock; never a car that shares nothing with the request while a related one
is on the lot) serve the scripted sellers.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

ASSETS = Path(__file__).parent / "assets"


def _load(name: str) -> dict[str, Any]:
    with (ASSETS / name).open(encoding="utf-8") as f:
        return json.load(f)


_P = _load("personas.json")
PERSONALITIES: tuple[str, ...] = tuple(_P["personalities"])
BRANDS: tuple[str, ...] = tuple(_P["brands"])  # with LMRL's article: "a Toyota", "an Audi"
TYPES: tuple[str, ...] = tuple(_P["types"])
FEATURES: tuple[str, ...] = tuple(_P["features"])
BUDGETS: tuple[int, ...] = tuple(_P["budgets"])


def bare_brand(brand: str) -> str:
    """``"an Audi"`` -> ``"Audi"``."""
    for art in ("a ", "an "):
        if brand.startswith(art):
            return brand[len(art) :]
    return brand


BRAND_NAMES: tuple[str, ...] = tuple(bare_brand(b) for b in BRANDS)


@dataclass(frozen=True)
class Persona:
    """A buyer persona, LMRL's ``buyer_info``."""

    personality: str
    preferred_brands: str  # LMRL's key name, though it holds one brand ("a Toyota")
    preferred_type: str
    preferred_features: tuple[str, ...]
    budget: int

    @property
    def brand(self) -> str:
        return bare_brand(self.preferred_brands)

    def to_json(self) -> dict[str, Any]:
        """LMRL's ``buyer_info`` object."""
        return {
            "personality": self.personality,
            "preferred_brands": self.preferred_brands,
            "preferred_type": self.preferred_type,
            "preferred_features": list(self.preferred_features),
            "budget": self.budget,
        }

    @classmethod
    def from_json(cls, obj: Any) -> Persona:
        """Read LMRL's ``buyer_info`` (raises ``KeyError``/``TypeError``/``ValueError`` if bad)."""
        if not isinstance(obj, dict):
            raise TypeError("buyer_info must be an object")
        feats = obj["preferred_features"]
        if isinstance(feats, str):
            feats = [f.strip() for f in feats.split(",") if f.strip()]
        return cls(
            str(obj["personality"]),
            str(obj["preferred_brands"]),
            str(obj["preferred_type"]),
            tuple(str(f) for f in feats),
            int(obj["budget"]),
        )


def sample_persona(rng: random.Random) -> Persona:
    """Draw a persona in LMRL's order from ``rng`` (``random.Random(seed)``)."""
    personality = rng.choice(PERSONALITIES)
    brand = rng.choice(BRANDS)
    ctype = rng.choice(TYPES)
    k = rng.randint(1, 4)
    feats = tuple(rng.sample(FEATURES, k))
    budget = rng.choice(BUDGETS)
    return Persona(personality, brand, ctype, feats, budget)


def money(n: int | float) -> str:
    """``30000`` -> ``"$30,000"`` (LMRL's budget and Output formatting)."""
    return f"${int(round(n)):,}"


def persona_line(p: Persona) -> str:
    """The buyer simulator's view of its persona, byte-for-byte LMRL's."""
    return (
        f"Personality: {p.personality}. Prefers {p.preferred_brands} {p.preferred_type} with "
        f"{', '.join(p.preferred_features)}. Budget: {money(p.budget)}\n"
    )


_PERSONA_RE = re.compile(
    r"Personality: (?P<pers>[^.]*)\. Prefers (?P<brand>an? \S+(?: \S+)*?) (?P<type>luxury|sedan|"
    r"convertible|truck|electric|SUV) with (?P<feats>.*)\. Budget: \$(?P<budget>[0-9,]+)"
)


def parse_persona_line(line: str) -> Persona | None:
    """Inverse of :func:`persona_line` (None if ``line`` is not a persona line)."""
    m = _PERSONA_RE.search(line)
    if not m:
        return None
    feats = tuple(f for f in m.group("feats").split(", ") if f)
    return Persona(
        m.group("pers"),
        m.group("brand"),
        m.group("type"),
        feats,
        int(m.group("budget").replace(",", "")),
    )


# -- the Output line -------------------------------------------------------------------------
OUTPUT_RE = re.compile(
    r"Output: Decision=(Accept|Reject) MSRP=\$([1-9][0-9,]*)( Buy Price=\$([0-9][0-9,]*))?"
)
OUTPUT_PREFIX = "Output: Decision="


@dataclass(frozen=True)
class Decision:
    """A parsed Output line; ``span`` is where it was found in the buyer's line."""

    accept: bool
    msrp: int
    buy_price: int | None
    span: tuple[int, int]

    @property
    def car_bought(self) -> bool:
        return self.accept and self.buy_price is not None

    def to_json(self) -> dict[str, Any]:
        """LMRL's ``output`` object."""
        return {
            "car_bought": self.car_bought,
            "msrp": self.msrp,
            "buy_price": self.buy_price if self.accept else None,
        }


def parse_output(line: str) -> Decision | None:
    """Search ``line`` for LMRL's Output pattern (case-sensitive, anywhere in the line)."""
    m = OUTPUT_RE.search(line)
    if not m:
        return None
    price = int(m.group(4).replace(",", "")) if m.group(4) else None
    return Decision(m.group(1) == "Accept", int(m.group(2).replace(",", "")), price, m.span())


def output_text(accept: bool, msrp: int, buy_price: int | None = None) -> str:
    """LMRL's Output line (no newline): ``Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500``."""
    msrp = max(1, int(msrp))
    if accept:
        return f"{OUTPUT_PREFIX}Accept MSRP={money(msrp)} Buy Price={money(buy_price or 0)}"
    return f"{OUTPUT_PREFIX}Reject MSRP={money(msrp)}"


# -- inventory -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Car:
    """One car on the lot (``price`` is its list price, the MSRP in the Output line)."""

    year: int
    brand: str
    model: str
    types: tuple[str, ...]
    price: int
    features: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.year} {self.brand} {self.model}"

    def to_json(self) -> dict[str, Any]:
        return {
            "year": self.year,
            "brand": self.brand,
            "model": self.model,
            "types": list(self.types),
            "price": self.price,
            "features": list(self.features),
        }


@lru_cache(maxsize=1)
def inventory() -> tuple[Car, ...]:
    """The shipped inventory (``assets/inventory.json``)."""
    cars = _load("inventory.json")["cars"]
    return tuple(
        Car(c["year"], c["brand"], c["model"], tuple(c["types"]), c["price"], tuple(c["features"]))
        for c in cars
    )


@lru_cache(maxsize=1)
def phrases() -> dict[str, Any]:
    """The buyer's reply templates (``assets/phrases.json``)."""
    return _load("phrases.json")


def type_phrase(ctype: str) -> str:
    """How a buyer says a car type: ``"SUV"``, ``"electric car"``, ``"luxury car"``."""
    return f"{ctype} car" if ctype in ("luxury", "electric") else ctype


def join_words(items: list[str] | tuple[str, ...]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    items = list(items)
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


# -- what the buyer asks for, and the inventory's answer ---------------------------------------
@dataclass
class Request:
    """What one buyer line asks for (every field may be empty)."""

    brands: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    model: Car | None = None
    features: list[str] = field(default_factory=list)

    @property
    def names_a_car(self) -> bool:
        """It names a brand, a type or a model (features alone do not change the car)."""
        return bool(self.brands or self.types or self.model)

    def fits(self, car: Car) -> bool:
        """``car`` is what the line asks for (brand, type and model; features are a preference)."""
        if self.model is not None and (car.brand, car.model) != (
            self.model.brand,
            self.model.model,
        ):
            return False
        if self.brands and car.brand not in self.brands:
            return False
        return not self.types or any(t in car.types for t in self.types)


@dataclass
class Wishes:
    """What the buyer has asked for so far (the latest brand, type and model; every feature)."""

    brand: str | None = None
    ctype: str | None = None
    model: Car | None = None
    features: set[str] = field(default_factory=set)

    def add(self, r: Request) -> None:
        if r.model is not None:
            self.model = r.model
        elif r.brands and r.brands[0] != self.brand:
            self.model = None
        if r.brands:
            self.brand = r.brands[0]
        if r.types:
            self.ctype = r.types[0]
            if self.model is not None and self.ctype not in self.model.types:
                self.model = None
        elif r.model is not None and self.ctype not in r.model.types:
            self.ctype = r.model.types[0]  # a model asked for by name is its own type
        self.features |= set(r.features)

    @property
    def known(self) -> bool:
        return bool(self.brand or self.ctype or self.model)

    def fits(self, car: Car) -> bool:
        return Request(
            [self.brand] if self.brand else [], [self.ctype] if self.ctype else [], self.model
        ).fits(car)

    def match(self, car: Car) -> float:
        """Brand + type + share of wanted features (0..3), the persona buyer's valuation."""
        s = float(car.brand == self.brand) + float(self.ctype in car.types)
        if self.features:
            s += len(self.features & set(car.features)) / len(self.features)
        return s

    def what(self) -> str:
        """``"a Tesla truck"``, ``"the Tesla Model 3"``, ``"an electric car"``."""
        if self.model is not None:
            return f"the {self.model.brand} {self.model.model}"
        words = " ".join(
            x for x in (self.brand, type_phrase(self.ctype) if self.ctype else "car") if x
        )
        return ("an " if words[0].lower() in "aeiou" else "a ") + words


def answer(
    wishes: Wishes, offered: Iterable[str] = (), budget: int | None = None
) -> tuple[list[Car], str]:
    """The cars to offer for ``wishes`` and what to say first.

    The cars that fit the wishes and were not offered yet (a model asked for by name is offered
    again) with ``""``; if none fits, the closest related cars (the best :meth:`Wishes.match`,
    then the price nearest the budget) with a sentence saying what is not in stock (the seller
    then names the closest match). With no wishes
    known: every car not offered yet.
    """
    done = set(offered)
    fresh = [c for c in inventory() if c.name not in done]
    if wishes.model is not None:
        named = [c for c in inventory() if wishes.fits(c)]
        if named:
            return named, ""
    if not wishes.known:
        return fresh or list(inventory()), ""
    fitting = [c for c in fresh if wishes.fits(c)]
    if fitting:
        return fitting, ""
    pool = fresh or list(inventory())
    best = max(wishes.match(c) for c in pool)
    if best <= 0:
        return [], f"We don't have {wishes.what()} or anything like it in stock right now."
    closest = [c for c in pool if wishes.match(c) == best]
    if budget:
        closest.sort(key=lambda c: abs(c.price - budget))
    if any(wishes.fits(c) for c in inventory()):
        return closest, f"We have no other {wishes.what().split(' ', 1)[1]} in stock."
    return closest, f"We don't have {wishes.what()} in stock right now."
