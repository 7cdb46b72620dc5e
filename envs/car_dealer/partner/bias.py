"""Biased buyers (the task option ``buyer_bias``): a persona buyer a seller can steer.

A suboptimal partner a seller can steer, for offline RL that learns to influence people. anchoring:
the first asking price named for a car is an anchor; above the buyer's top price, the top moves 60 %
of the way to it. feature: once the seller says the car has the one preferred feature the buyer
overvalues, it pays up to 110 % of the list price. Both pay at most 120 % of the budget; mixed draws
one of none / anchoring / feature per episode, from its own random stream (the persona and traits
stay those of the seed). A biased buyer lets it show now and then (ANCHORED, FEATURE_FIRST); only
the episode's last info names it (``buyer_bias``).
"""

from __future__ import annotations

import random
from typing import Any

from envs.car_dealer.data import Persona


def _floor100(x: float) -> int:
    return int(x // 100 * 100)


BIASES = ("none", "anchoring", "feature")
"""What a biased buyer can be (``none``: the honest buyer)."""
BUYER_BIASES = (*BIASES, "mixed")
"""The values of the ``buyer_bias`` option."""
BIAS_CAP = 1.2
"""A biased buyer pays at most this multiple of its budget."""
ANCHOR_PULL = 0.6
"""How far an anchoring buyer's top price moves towards a higher first asking price."""
FEATURE_PREMIUM = 1.1
"""A feature-loving buyer's top price as a multiple of the list price once its feature is named."""

ANCHORED = "Well, at that price it must be a very good car."
FEATURE_FIRST = "Above all, it must have {feature}."


def draw_bias(option: str, persona: Persona, seed: int | None) -> tuple[str, str | None]:
    """The episode's (bias, overvalued feature) for the ``buyer_bias`` option."""
    if option == "none":
        return ("none", None)
    rng = random.Random(f"buyer-bias/{seed}")
    kind = rng.choice(BIASES) if option == "mixed" else option
    if kind == "feature" and not persona.preferred_features:
        return ("none", None)
    return (kind, rng.choice(sorted(persona.preferred_features)) if kind == "feature" else None)


def biased_top(buyer: Any, offer: Any, top: int, msrp: int) -> int:
    """A biased buyer's top price for ``offer`` (``top``: the honest buyer's)."""
    assert buyer.persona is not None
    cap = _floor100(buyer.persona.budget * BIAS_CAP)
    anchor = buyer.anchors.get(offer.name)
    if buyer.bias == "anchoring" and anchor is not None and anchor > top:
        return min(cap, max(top, _floor100(top + ANCHOR_PULL * (anchor - top))))
    if buyer.bias == "feature" and offer.name in buyer.feature_named:
        return min(cap, max(top, _floor100(msrp * FEATURE_PREMIUM)))
    return top


def note_bias(buyer: Any, u: Any, offer: Any, parts: list[Any]) -> None:
    """What a biased buyer takes from the seller's line about the car under discussion."""
    if buyer.bias == "anchoring" and offer.asking is not None and offer.name not in buyer.anchors:
        honest = buyer.max_price(offer)  # before the anchor is set: the honest buyer's top
        buyer.anchors[offer.name] = offer.asking
        if offer.asking > honest and not buyer.showed_bias and buyer._rng.random() < 0.5:
            buyer.showed_bias = True
            parts.append(ANCHORED)
    elif (
        buyer.bias == "feature"
        and buyer.bias_feature in u.features
        and buyer.bias_feature in offer.features
    ):
        buyer.feature_named.add(offer.name)
