"""The car under discussion, as the persona buyer (:mod:`envs.car_dealer.partner`) understands it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envs.car_dealer.data import Car


@dataclass
class Offer:
    """The car under discussion, as the buyer understands it."""

    name: str
    brand: str | None
    types: tuple[str, ...]
    features: set[str] = field(default_factory=set)
    msrp: int | None = None
    asking: int | None = None

    @classmethod
    def from_car(cls, car: Car) -> Offer:
        return cls(car.name, car.brand, car.types, set(car.features), car.price)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "brand": self.brand,
            "types": list(self.types),
            "features": sorted(self.features),
            "msrp": self.msrp,
            "asking": self.asking,
        }
